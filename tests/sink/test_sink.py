"""RollingSink: rolling, partitioning, naming, commits, crashes and memory.

The roll decisions are checked against a reference model written here record by record
(:func:`reference_files`), the output against pyarrow.orc and against the events generated;
the crash tests run against moto's S3 server with faults injected by a proxy.
"""

from __future__ import annotations

import asyncio
import datetime
import os
import pathlib
import threading
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.orc as po
import pytest
from helpers.s3proxy import Hold, ProxyRequest, Record
from helpers.sink_stream import (
    TOPIC,
    WRITE_OPERATIONS,
    MillionRun,
    check_sink_output,
    list_objects,
    pending_uploads,
)

from aorc import read_table
from aorc.errors import AorcError, OldOffsetsError, SchemaError
from aorc.io.output import LocalOutput
from aorc.sink import RollingSink, SinkCommit, file_name, partition_segment, rolling
from aorc.sink import files as sink_files

MiB = 1 << 20


def local_files(root: pathlib.Path) -> list[pathlib.Path]:
    return sorted(p for p in root.rglob("*") if p.is_file())


def table_of(n: int, seed: int = 0, start_offset: int = 0) -> pa.Table:
    rng = np.random.default_rng(seed)
    ts = np.datetime64("2026-11-22T06:00:00", "ms") + (np.arange(n) * 500).astype(
        "timedelta64[ms]")
    words = np.array(["", "a", "bb", "ccc", "dddddddd", "e" * 30])
    return pa.table({
        "offset": pa.array(np.arange(start_offset, start_offset + n, dtype=np.int64)),
        "ts": pa.array(ts),
        "key": pa.array(rng.choice(["x", "y", "z"], n)),
        "text": pa.array(words[rng.integers(0, len(words), n)]),
    })


# =========================================================================== reference model

def reference_files(table: pa.Table, folder_of: Any, *, max_rows: int | None = None,
                    max_bytes: int | None = None, span_ms: int | None = None,
                    ) -> set[tuple[str, int, int, int]]:
    """(folder, first offset, last offset, rows) of the files a single stream must give,
    computed one record at a time: all files of the stream are cut before a record that would
    take its file past a limit."""
    rows = table.to_pylist()
    open_files: dict[str, list[Any]] = {}  # folder -> [first, last, rows, bytes, tmin, tmax]
    done = set()

    def size(r: dict[str, Any]) -> int:  # int64 + timestamp + 2 strings with offsets
        return 8 + 8 + len(r["key"]) + 4 + len(r["text"]) + 4

    def cut() -> None:
        for folder, (first, last, n, _, _, _) in open_files.items():
            done.add((folder, first, last, n))
        open_files.clear()

    for r in rows:
        folder = folder_of(r)
        t = int(r["ts"].timestamp() * 1000)
        f = open_files.get(folder)
        if f is not None:
            too_many = max_rows is not None and f[2] + 1 > max_rows
            too_big = max_bytes is not None and f[3] + size(r) > max_bytes
            too_wide = span_ms is not None and max(f[5], t) - min(f[4], t) >= span_ms
            if too_many or too_big or too_wide:
                cut()
                f = None
        if f is None:
            f = open_files[folder] = [r["offset"], r["offset"], 0, 0, t, t]
        f[1] = r["offset"]
        f[2] += 1
        f[3] += size(r)
        f[4], f[5] = min(f[4], t), max(f[5], t)
    cut()
    return done


def files_found(root: pathlib.Path) -> set[tuple[str, int, int, int]]:
    out = set()
    for path in local_files(root):
        f = po.ORCFile(str(path))
        meta = f.metadata
        folder = str(path.parent.relative_to(root)) if path.parent != root else ""
        out.add((folder, int(meta[b"aorc.sink.first_offset"]),
                 int(meta[b"aorc.sink.last_offset"]), f.nrows))
    return out


async def write_in_batches(sink: RollingSink, table: pa.Table, sizes: list[int],
                           partition: int = 0) -> None:
    start = 0
    i = 0
    while start < table.num_rows:
        n = sizes[i % len(sizes)]
        part = table.slice(start, n)
        await sink.write(part, topic=TOPIC, partition=partition, offsets="offset")
        start += n
        i += 1


# =========================================================================== rolling

def hour_and_key(r: dict[str, Any]) -> str:
    return f"key={r['key']}/dt={r['ts']:%Y-%m-%d}/hour={r['ts']:%H}"


@pytest.mark.parametrize("limits", [
    {"max_rows": 350, "max_bytes": None},
    {"max_rows": None, "max_bytes": None, "max_event_span": datetime.timedelta(minutes=3)},
    {"max_rows": None, "max_bytes": None, "max_event_span": datetime.timedelta(minutes=7)},
    {"max_rows": 450, "max_bytes": None, "max_event_span": datetime.timedelta(minutes=11)},
])
@pytest.mark.parametrize("sizes", [[10_000], [1, 7, 333, 50]])
@pytest.mark.parametrize("copies", ["loop", "threads"])
async def test_cuts_match_reference_model(tmp_path: pathlib.Path, limits: dict[str, Any],
                                          sizes: list[int], copies: str,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    # Rows are copied to their files on the event loop below LIGHT_CELLS, else on threads.
    monkeypatch.setattr(rolling, "LIGHT_CELLS", 1 << 62 if copies == "loop" else 0)
    table = table_of(6000, seed=3)
    async with RollingSink(tmp_path, table.schema, partition_by=["key"], event_time="ts",
                           drop_partition_columns=False, storage_options={"fsync": False},
                           **limits) as sink:
        await write_in_batches(sink, table, sizes)
    span = limits.get("max_event_span")
    expected = reference_files(table, hour_and_key, max_rows=limits["max_rows"],
                               max_bytes=limits["max_bytes"],
                               span_ms=int(span.total_seconds() * 1000) if span else None)
    assert files_found(tmp_path) == expected
    assert len(expected) > 6  # several cuts happened
    back = pa.concat_tables([po.read_table(str(p)) for p in local_files(tmp_path)])
    assert back.sort_by("offset").equals(table.cast(back.schema))


async def test_replay_with_other_batches_rewrites_identical_files(
        tmp_path: pathlib.Path) -> None:
    table = table_of(5000, seed=4)
    options = dict(event_time="ts", max_rows=400, compression="zlib")
    with pytest.MonkeyPatch.context() as patch:  # the rows copied on threads (LIGHT_CELLS)
        patch.setattr(rolling, "LIGHT_CELLS", 0)
        async with RollingSink(tmp_path / "a", table.schema, **options) as sink:
            await write_in_batches(sink, table, [5000])
    async with RollingSink(tmp_path / "b", table.schema, **options) as sink:
        await write_in_batches(sink, table, [3, 1000, 17])
    a, b = local_files(tmp_path / "a"), local_files(tmp_path / "b")
    assert [p.relative_to(tmp_path / "a") for p in a] == [p.relative_to(tmp_path / "b")
                                                        for p in b]
    assert all(x.read_bytes() == y.read_bytes() for x, y in zip(a, b, strict=True))


# =========================================================================== naming

def test_partition_segments_escape_like_hive() -> None:
    assert partition_segment("country", "DE") == "country=DE"
    assert partition_segment("p", "a/b=c:d%") == "p=a%2Fb%3Dc%3Ad%25"
    assert partition_segment("p", None) == "p=__HIVE_DEFAULT_PARTITION__"
    assert partition_segment("flag", True) == "flag=true"
    assert partition_segment("day", datetime.date(2026, 11, 22)) == "day=2026-11-22"
    assert file_name("orders", 3, 42) == "orders+3+00000000000000000042.orc"
    assert file_name("a+b", 0, 0).startswith("a%2Bb+0+")


async def test_partition_folders_and_dropped_columns(tmp_path: pathlib.Path) -> None:
    table = pa.table({"offset": pa.array([0, 1, 2, 3], pa.int64()),
                      "country": pa.array(["DE", "a/b", None, "DE"]),
                      "day": pa.array([datetime.date(2026, 11, 22)] * 4),
                      "v": pa.array([1.5, 2.5, 3.5, 4.5])})
    async with RollingSink(tmp_path, table.schema, partition_by=["country"],
                           event_time="day", time_partitioning="dt=%Y%m%d") as sink:
        await sink.write(table, topic="t", partition=7, offsets="offset")
    found = {str(p.relative_to(tmp_path)): po.read_table(str(p)) for p in local_files(tmp_path)}
    assert set(found) == {
        "country=DE/dt=20261122/t+7+00000000000000000000.orc",
        "country=a%2Fb/dt=20261122/t+7+00000000000000000001.orc",
        "country=__HIVE_DEFAULT_PARTITION__/dt=20261122/t+7+00000000000000000002.orc",
    }
    de = found["country=DE/dt=20261122/t+7+00000000000000000000.orc"]
    assert de.column_names == ["offset", "day", "v"]
    assert de.column("v").to_pylist() == [1.5, 4.5]


# =========================================================================== commits

async def test_commit_comes_after_the_files_are_complete(tmp_path: pathlib.Path) -> None:
    table = table_of(6000, seed=5)
    commits: list[SinkCommit] = []
    future_files: list[set[str]] = []

    async def on_commit(c: SinkCommit) -> None:
        for f in c.files:  # complete and readable when the callback runs
            assert po.ORCFile(f.uri).nrows == f.num_rows
            assert os.path.getsize(f.uri) == f.num_bytes
        future_files.append({str(p) for p in local_files(tmp_path)  # (open: temporary)
                             if not p.name.startswith(".")} - {
            f.uri for c2 in [*commits, c] for f in c2.files})
        await asyncio.sleep(0.05)  # slow commit: the next cut must wait for it
        commits.append(c)

    async with RollingSink(tmp_path, table.schema, event_time="ts", max_rows=500,
                           on_commit=on_commit) as sink:
        await write_in_batches(sink, table, [2000])
    assert all(not extra for extra in future_files)  # no later cut completed a file early
    offsets = [c.offset for c in commits]
    assert offsets == sorted(offsets) and offsets[-1] == 5999
    firsts = sorted(f.first_offset for c in commits for f in c.files)
    assert firsts[0] == 0 and sum(f.num_rows for c in commits for f in c.files) == 6000
    for c in commits:  # each commit covers everything up to its offset
        assert max(f.last_offset for f in c.files) == c.offset
    assert {c.reason for c in commits} == {"rows", "close"}


async def test_a_cut_reports_its_first_failure_not_a_later_one() -> None:
    """The files of a cut are finished together; the error raised is the one that came
    first, not one a sibling raised while it was being cancelled (which
    ``aorc.io.base.gather_or_cancel`` would report, being earlier in request order)."""
    never = asyncio.Event()

    async def fails_when_cancelled() -> None:
        try:
            await never.wait()
        except asyncio.CancelledError:
            raise RuntimeError("raised while cancelled") from None

    async def fails() -> None:
        await asyncio.sleep(0)
        raise ValueError("the first failure")

    with pytest.raises(ValueError, match="the first failure"):
        await sink_files.all_or_cancel([fails_when_cancelled(), fails()])
    await sink_files.all_or_cancel([])  # a cut with no files


async def test_failing_commit_breaks_the_sink(tmp_path: pathlib.Path) -> None:
    table = table_of(3000)

    called = asyncio.Event()

    async def on_commit(c: SinkCommit) -> None:
        called.set()
        raise RuntimeError("broker down")

    sink = RollingSink(tmp_path, table.schema, max_rows=100, on_commit=on_commit)
    with pytest.raises(RuntimeError, match="broker down"):
        async with sink:
            await sink.write(table.slice(0, 500), topic="t", partition=0, offsets=0)
            await called.wait()  # the first cut's commit failed
            for k in range(1, 50):  # the failure surfaces within a few loop iterations
                await sink.write(table.slice(0, 500), topic="t", partition=0,
                                 offsets=k * 500)
                await asyncio.sleep(0)
    with pytest.raises((RuntimeError, AorcError)):
        await sink.write(table.slice(0, 1), topic="t", partition=0, offsets=10**9)


async def test_max_age_cuts_a_quiet_stream(tmp_path: pathlib.Path) -> None:
    table = table_of(10)
    commits: list[SinkCommit] = []
    committed = asyncio.Event()

    async def on_commit(c: SinkCommit) -> None:
        commits.append(c)
        committed.set()

    async with RollingSink(tmp_path, table.schema, max_age=0.2, on_commit=on_commit) as sink:
        await sink.write(table, topic="t", partition=0, offsets="offset")
        await committed.wait()  # however long the machine takes (pytest-timeout bounds it)
        assert [c.reason for c in commits] == ["age"]
        assert commits[0].offset == 9
    assert len(commits) == 1  # nothing left to flush on close


async def test_flush_and_discard(tmp_path: pathlib.Path) -> None:
    table = table_of(100)
    commits: list[SinkCommit] = []

    async def on_commit(c: SinkCommit) -> None:
        commits.append(c)

    async with RollingSink(tmp_path, table.schema, on_commit=on_commit) as sink:
        await sink.write(table.slice(0, 50), topic="t", partition=0, offsets="offset")
        await sink.write(table.slice(50), topic="t", partition=1, offsets="offset")
        await sink.flush([("t", 0)])
        assert [(c.partition, c.offset, c.reason) for c in commits] == [(0, 49, "flush")]
        await sink.discard([("t", 1)])
    assert len(commits) == 1
    assert [p.name for p in local_files(tmp_path)] == ["t+0+00000000000000000000.orc"]


async def test_offsets_are_checked(tmp_path: pathlib.Path) -> None:
    table = table_of(10)
    async with RollingSink(tmp_path, table.schema) as sink:
        with pytest.raises(SchemaError, match="strictly increasing"):
            await sink.write(table, topic="t", partition=0, offsets=[0, 1, 2, 2, 3, 4, 5, 6,
                                                                     7, 8])
        with pytest.raises(SchemaError, match="3 offsets for 10 rows"):
            await sink.write(table, topic="t", partition=0, offsets=[0, 1, 2])
        await sink.write(table, topic="t", partition=0, offsets=100)
        with pytest.raises(OldOffsetsError, match='on_old_offsets="skip"'):
            await sink.write(table, topic="t", partition=0, offsets=105)
        with pytest.raises(SchemaError, match="differ"):
            await sink.write(table.select(["ts"]), topic="t", partition=0, offsets=500)
        await sink.write(table, topic="t", partition=0, offsets=110)  # still usable
    assert sum(po.ORCFile(str(p)).nrows for p in local_files(tmp_path)) == 20


def test_bad_options() -> None:
    schema = table_of(1).schema
    with pytest.raises(SchemaError, match="no column 'nope'"):
        RollingSink("x", schema, partition_by=["nope"])
    with pytest.raises(SchemaError, match="timestamp or a date"):
        RollingSink("x", schema, event_time="key")
    with pytest.raises(SchemaError, match="max_rows"):
        RollingSink("x", schema, max_rows=0)
    with pytest.raises(SchemaError, match="compresion"):
        RollingSink("x", schema, compresion="zstd")
    with pytest.raises(SchemaError, match="time_partitioning"):
        RollingSink("x", schema, event_time="ts", time_partitioning="%Y/%m")


# =========================================================================== failures

@pytest.mark.parametrize("where", ["local", "s3"])
async def test_cancellation_leaves_no_partial_file(
        where: str, tmp_path: pathlib.Path, request: pytest.FixtureRequest,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Cancel while a file is being written -- locally, right after the first bytes went
    to a temporary file; on S3, while the test proxy holds the first write request -- then
    let the write go on: no partial file may be left, nor a pending multipart upload."""
    table = table_of(200_000, seed=9)
    loop = asyncio.get_running_loop()
    reached: asyncio.Future[str] = loop.create_future()
    local_gate = asyncio.Event()
    s3_gate = threading.Event()
    held: list[Record] = []
    if where == "local":
        prefix, options = str(tmp_path), {"fsync": False}
        original = LocalOutput.write

        async def write_then_wait(self: LocalOutput, data: bytes | bytearray | memoryview
                                  ) -> None:
            await original(self, data)
            if not reached.done():  # a temporary file with some bytes exists now
                reached.set_result(self.temp_path)
                await local_gate.wait()

        monkeypatch.setattr(LocalOutput, "write", write_then_wait)
    else:
        proxy = request.getfixturevalue("s3_proxy")
        bucket = request.getfixturevalue("s3_bucket")
        prefix, options = f"s3://{bucket}/out", {"endpoint_url": proxy.url}

        def hold_first_write(req: ProxyRequest) -> Hold | None:  # in the proxy's thread
            if held or req.operation not in WRITE_OPERATIONS:
                return None
            held.append(proxy.log[-1])  # logged before the rules are asked
            loop.call_soon_threadsafe(reached.set_result, req.operation)
            return Hold(s3_gate)

        proxy.rules.append(hold_first_write)

    async def run() -> None:
        async with RollingSink(prefix, table.schema, max_rows=20_000,
                               storage_options=options) as sink:
            await write_in_batches(sink, table, [25_000])
            await asyncio.Event().wait()  # until cancelled

    task = asyncio.create_task(run())
    await asyncio.wait({task, reached}, return_when=asyncio.FIRST_COMPLETED)
    assert reached.done() and not task.done()  # a write is in flight
    if where == "local":
        assert os.path.exists(reached.result())  # a partial temporary file
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    local_gate.set()
    s3_gate.set()
    if where == "local":
        found = {str(p): p.read_bytes() for p in local_files(tmp_path)}
        assert not os.path.exists(reached.result())
    else:
        while not held[0].end:  # the held request goes on to the store (it may succeed)
            await asyncio.sleep(0.01)
        client = request.getfixturevalue("s3_client")
        assert pending_uploads(client, bucket) == []
        found = {k: client.get_object(Bucket=bucket, Key=k)["Body"].read()
                 for k in list_objects(client, bucket)}
    for name, data in found.items():  # only complete files (a late PutObject's is complete)
        assert name.endswith(".orc") and not os.path.basename(name).startswith("."), name
        assert po.ORCFile(pa.BufferReader(data)).nrows > 0


# =========================================================================== S3

async def test_million_events_with_crashes_exactly_once_on_s3(
        million_events: MillionRun) -> None:
    """See helpers/sink_stream.py: 1,000,000 events, 8 crashes triggered by events (batches
    handed over, commits, write requests seen by the proxy), restarts from the last commit;
    here every file is read back with aorc (Spark reads them in tests/spark)."""
    run = million_events
    outcome = run.outcome
    assert outcome.attempts == 9 and len(outcome.crashes) == 8, outcome.crashes
    assert not [c for c in outcome.crashes if "not reached" in c], outcome.crashes
    kinds = [c.split(":")[0] for c in outcome.crashes]
    assert kinds == ["commit", "source", "store", "cancel", "commit", "store", "source",
                     "cancel"], outcome.crashes
    for crash in outcome.crashes:  # each happened the way it was planned
        if crash.startswith("store"):
            assert crash.split(" ")[2] in WRITE_OPERATIONS, crash
        if crash.startswith("cancel"):
            assert "in flight" in crash and crash.split(" ")[-4] in WRITE_OPERATIONS, crash
    assert outcome.peak_memory <= 20 * MiB
    assert {"rows", "event_time", "close"} <= set(outcome.cuts), outcome.cuts
    # the 20 MiB budget is short: stripes were shrunk (files are cut for memory only when
    # stripes are at their floor; parts wait in the spool, not in memory)
    assert outcome.stripes_shrunk > 0, outcome
    assert {"PutObject", "CreateMultipartUpload", "UploadPart"} <= run.operations
    assert run.pending_uploads == []
    assert run.keys and all(k.startswith("events/dt=2026-11-22/hour=0") and k.endswith(".orc")
                            for k in run.keys)
    await check_sink_output(run.uris, f"s3://{run.bucket}/events", run.log,
                            storage_options=run.storage_options)
    last = {p: t.column("offset").to_numpy()[-1] for p, t in enumerate(run.log.tables)}
    final = {c.partition: c.offset for c in outcome.commits}
    assert final == last  # the last commits cover every event


@pytest.mark.parametrize("where", ["local", "s3"])
async def test_memory_budget_with_1000_open_partitions(
        where: str, tmp_path: pathlib.Path, request: pytest.FixtureRequest) -> None:
    """10 streams x 100 folders = 1000 open files under a 4 MiB budget: streams holding the
    oldest rows are cut early; at the end the sink is aborted, so the store holds exactly the
    committed rows."""
    if where == "s3":
        bucket = request.getfixturevalue("s3_bucket")
        client = request.getfixturevalue("s3_client")
        prefix, options = f"s3://{bucket}/wide", {}
    else:
        prefix, options = str(tmp_path), {"fsync": False}
    streams, keys, budget, batch = 10, 100, 4 * MiB, 2000
    rng = np.random.default_rng(11)
    n = 100_000  # about 1.3 times the budget in Arrow bytes
    table = pa.table({"offset": pa.array(np.arange(n, dtype=np.int64)),
                      "key": pa.array(rng.integers(0, keys, n).astype(np.int32)),
                      "text": pa.array(np.frombuffer(rng.bytes(40 * n), "S40").tolist(),
                                       pa.binary())})
    commits: list[SinkCommit] = []

    async def on_commit(c: SinkCommit) -> None:
        commits.append(c)

    base = pa.total_allocated_bytes()
    arrow_peak = open_peak = 0
    sink = RollingSink(prefix, table.schema, partition_by=["key"], memory_budget=budget,
                       max_open_uploads=16, compression="none", storage_options=options,
                       on_commit=on_commit)
    async with sink:
        for k, start in enumerate(range(0, n, batch)):
            await sink.write(table.slice(start, batch), topic="t", partition=k % streams,
                             offsets=start)
            arrow_peak = max(arrow_peak, pa.total_allocated_bytes() - base)
            open_peak = max(open_peak, sink.open_files)
            assert sink.memory_in_use <= budget
        while sink.memory_in_use > sink._open_bytes:  # let the last evictions finish
            await asyncio.sleep(0.01)
        await sink.abort()
    assert open_peak == streams * keys
    assert sink.stats.peak_memory <= budget
    assert sink.stats.cuts.get("memory", 0) >= 3 and set(sink.stats.cuts) == {"memory"}
    assert arrow_peak <= budget + 1 * MiB, arrow_peak  # what Arrow really allocated
    expected = set()
    for c in commits:
        rows = table.slice(0, 0)
        for k, start in enumerate(range(0, n, batch)):
            if k % streams == c.partition:
                rows = pa.concat_tables([rows, table.slice(start, batch)])
        offsets = rows.column("offset").to_numpy()
        expected |= set(offsets[offsets <= c.offset].tolist())
    uris = [f.uri for c in commits for f in c.files]
    if where == "s3":
        assert pending_uploads(client, bucket) == []
        assert sorted(f"s3://{bucket}/{k}" for k in list_objects(client, bucket)) == sorted(uris)
    else:
        assert sorted(str(p) for p in local_files(tmp_path)) == sorted(uris)
    back = [await read_table(u, columns=["offset"]) for u in uris]
    found = pa.concat_tables(back).column("offset").to_pylist()
    assert len(found) == len(set(found)) and set(found) == expected
