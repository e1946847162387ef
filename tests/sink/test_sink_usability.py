"""Issue 24 item 13: what RollingSink's counters mean (received, written, committed,
pending), and when files close with minute-level event-time folders (the README's note).
Timing comes from events and an injected clock, never from sleeping."""

from __future__ import annotations

import asyncio
import datetime
import pathlib

import pyarrow as pa
import pyarrow.orc as po

from aorc.sink import RollingSink, SinkCommit

UTC = datetime.UTC


def table(n: int, start: int = 0) -> pa.Table:
    return pa.table({"offset": pa.array(range(start, start + n), pa.int64()),
                     "v": pa.array([f"v{i}" for i in range(start, start + n)])})


async def test_counts_say_what_is_committed_and_pending(tmp_path: pathlib.Path) -> None:
    entered, release = asyncio.Event(), asyncio.Event()
    commits: list[SinkCommit] = []

    async def on_commit(c: SinkCommit) -> None:
        entered.set()
        await release.wait()  # the consumer's commit is slow: held until released
        commits.append(c)

    t = table(25)
    async with RollingSink(tmp_path, t.schema, max_rows=10, time_partitioning=None,
                           on_commit=on_commit) as sink:
        await sink.write(t, topic="t", partition=0, offsets="offset")
        assert sink.stats.rows_received == 25 and sink.stats.rows_pending == 25
        await entered.wait()  # the first cut's file is complete, its commit not returned
        assert sink.stats.rows_written >= 10 and sink.stats.files_written >= 1
        assert sink.stats.rows_committed == 0 and sink.stats.commits == 0
        assert sink.stats.rows_pending == 25
        release.set()
        await sink.flush()
        assert (sink.stats.rows_committed, sink.stats.files_committed) == (25, 3)
        assert sink.stats.rows_pending == 0 and sink.stats.commits == 3
        assert sink.stats.rows_written == 25
    assert sum(c.files[0].num_rows for c in commits) == 25


async def test_skipped_replays_are_not_pending(tmp_path: pathlib.Path) -> None:
    t = table(20)
    async with RollingSink(tmp_path, t.schema, time_partitioning=None,
                           on_old_offsets="skip") as sink:
        await sink.write(t, topic="t", partition=0, offsets="offset")
        await sink.write(table(10, 15), topic="t", partition=0, offsets="offset")
        assert (sink.stats.rows_received, sink.stats.rows_skipped) == (25, 5)
    assert sink.stats.rows_pending == 0 and sink.stats.rows_committed == 25


class FakeClock:
    def __init__(self) -> None:
        self.now = 5000.0

    def __call__(self) -> float:
        return self.now


async def test_minute_folders_close_at_max_age_not_when_the_minute_ends(
        tmp_path: pathlib.Path) -> None:
    """The README's note: with minute folders, a stream keeps one open file per minute it
    saw, and they all close at the stream's next cut -- max_age (or max_rows, max_bytes,
    memory, flush, close), not when their minute is over."""
    clock = FakeClock()
    commits: list[SinkCommit] = []
    committed = asyncio.Event()

    async def on_commit(c: SinkCommit) -> None:
        commits.append(c)
        committed.set()

    def minute(m: int, offset: int) -> pa.Table:
        ts = datetime.datetime(2026, 11, 22, 7, m, 30, tzinfo=UTC)
        return pa.table({"offset": pa.array([offset], pa.int64()),
                         "ts": pa.array([ts], pa.timestamp("us", "UTC"))})

    async with RollingSink(tmp_path, minute(0, 0).schema, event_time="ts",
                           time_partitioning="dt=%Y-%m-%d/hour=%H/minute=%M", max_age=60.0,
                           clock=clock, on_commit=on_commit) as sink:
        for m in range(3):
            await sink.write(minute(m, m), topic="t", partition=0, offsets="offset")
            clock.now += 20  # event time moves on a minute, the clock 20 s
        for _ in range(3):
            await asyncio.sleep(0)  # the age timer runs; nothing is 60 s old yet
        assert not commits and sink.open_files == 3 and sink.stats.rows_pending == 3
        assert not list(tmp_path.rglob("*.orc"))  # nothing visible yet
        clock.now += 1  # the oldest file is 61 s old: the next write cuts the stream
        await sink.write(minute(3, 3), topic="t", partition=0, offsets="offset")
        await committed.wait()
        assert [(c.reason, c.offset, len(c.files)) for c in commits] == [("age", 2, 3)]
        assert sink.open_files == 1
    folders = sorted(p.parent.name for p in tmp_path.rglob("*.orc"))
    assert folders == ["minute=00", "minute=01", "minute=02", "minute=03"]
    assert sum(po.read_table(str(p)).num_rows for p in tmp_path.rglob("*.orc")) == 4
