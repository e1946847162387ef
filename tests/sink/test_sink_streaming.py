"""RollingSink v2: files streamed stripe by stripe, max_bytes in ORC bytes, bounded process
memory, the max_age default driven by an injected clock, on_old_offsets.

Memory is measured in a subprocess (tests/helpers/sink_memory_run.py) as the growth of the
process's peak RSS. The workload's row count is ``AORC_SINK_MEMORY_ROWS`` (default 4,000,000
for a local folder; the S3 run uses half of it with max_bytes halved too, unless
``AORC_SINK_MEMORY_FULL_S3=1``).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import pathlib
import subprocess
import sys
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.orc as po
import pytest
from helpers.sink_stream import list_objects, pending_uploads

from aorc import read_table
from aorc.errors import OldOffsetsError, SchemaError
from aorc.sink import RollingSink, SinkCommit
from aorc.sink.rolling import DEFAULT_MAX_AGE, DEFAULT_MAX_BYTES

MiB = 1 << 20
ROOT = pathlib.Path(__file__).resolve().parents[2]
ROWS = int(os.environ.get("AORC_SINK_MEMORY_ROWS", "4000000"))


def noisy_table(n: int, seed: int, start: int = 0) -> pa.Table:
    """Poorly compressible rows in 3 partition folders."""
    rng = np.random.default_rng(seed)
    return pa.table({
        "offset": pa.array(np.arange(start, start + n, dtype=np.int64)),
        "key": pa.array(rng.integers(0, 3, n).astype(np.int8)),
        "payload": pa.array(np.frombuffer(rng.bytes(64 * n), "S64").tolist(), pa.binary()),
    })


def visible_files(root: pathlib.Path) -> list[pathlib.Path]:
    return sorted(p for p in root.rglob("*.orc") if p.is_file() and not p.name.startswith("."))


async def write_batches(sink: RollingSink, table: pa.Table, size: int, partition: int = 0
                        ) -> None:
    for start in range(0, table.num_rows, size):
        await sink.write(table.slice(start, size), topic="t", partition=partition,
                         offsets="offset")


# =========================================================================== max_bytes

async def test_files_reach_max_bytes_and_replays_are_identical(tmp_path: pathlib.Path
                                                               ) -> None:
    """Cuts by encoded size: files end within a stripe or two below max_bytes, never above
    it (plus the tail allowance), and a replay in other batches writes the same bytes."""
    table = noisy_table(120_000, seed=1)
    max_bytes = 1 * MiB
    commits: list[SinkCommit] = []

    async def on_commit(c: SinkCommit) -> None:
        commits.append(c)

    options: dict[str, Any] = dict(partition_by=["key"], max_bytes=max_bytes,
                                   stripe_size=128 << 10, compression="zstd",
                                   storage_options={"fsync": False})
    async with RollingSink(tmp_path / "a", table.schema, on_commit=on_commit,
                           **options) as sink:
        await write_batches(sink, table, 50_000)
    async with RollingSink(tmp_path / "b", table.schema, **options) as sink:
        start, sizes = 0, itertools.cycle([7, 1000, 33_333, 3])
        while start < table.num_rows:
            size = next(sizes)
            await sink.write(table.slice(start, size), topic="t", partition=0,
                             offsets="offset")
            start += size
    a, b = visible_files(tmp_path / "a"), visible_files(tmp_path / "b")
    assert [p.relative_to(tmp_path / "a") for p in a] == [p.relative_to(tmp_path / "b")
                                                        for p in b]
    assert all(x.read_bytes() == y.read_bytes() for x, y in zip(a, b, strict=True))
    by_bytes = [f for c in commits if c.reason == "bytes" for f in c.files]
    assert len(by_bytes) >= 6
    for f in by_bytes:
        assert 0.75 * max_bytes <= f.num_bytes <= max_bytes, f
        orc = po.ORCFile(f.uri)
        assert orc.nstripes >= 4 and orc.nrows == f.num_rows  # streamed stripe by stripe
    back = pa.concat_tables([po.read_table(str(p)) for p in a])
    assert sorted(back.column("offset").to_pylist()) == list(range(table.num_rows))


async def test_open_files_stream_to_temporary_files(tmp_path: pathlib.Path) -> None:
    """While a file is open its stripes are already on disk (a hidden temporary file); the
    rows in memory are only the current stripe's."""
    table = noisy_table(60_000, seed=2)
    async with RollingSink(tmp_path, table.schema, partition_by=["key"], max_bytes=64 * MiB,
                           stripe_size=256 << 10,
                           compression="none", storage_options={"fsync": False}) as sink:
        await write_batches(sink, table, 10_000)
        temps = [p for p in tmp_path.rglob("*") if p.is_file()]
        assert temps and all(p.name.startswith(".") for p in temps)
        assert sum(p.stat().st_size for p in temps) > 3 * MiB  # most of ~4.3 MiB written
        assert sink.memory_in_use < 1 * MiB  # the rows of one partial stripe per file
        assert visible_files(tmp_path) == []
    files = visible_files(tmp_path)
    assert len(files) == 3 and not [p for p in tmp_path.rglob(".*") if p.is_file()]
    assert sum(po.ORCFile(str(p)).nrows for p in files) == table.num_rows


def test_defaults() -> None:
    sink = RollingSink("x", noisy_table(1, 0).schema)
    assert sink.max_bytes == DEFAULT_MAX_BYTES == 128 * MiB
    assert sink.max_age == DEFAULT_MAX_AGE == 300.0
    with pytest.raises(SchemaError, match="on_old_offsets"):
        RollingSink("x", noisy_table(1, 0).schema, on_old_offsets="ignore")


# =========================================================================== memory

def run_memory_workload(prefix: str, rows: int, max_bytes_mib: int,
                        endpoint: str | None = None) -> dict[str, Any]:
    command = [sys.executable, str(ROOT / "tests" / "helpers" / "sink_memory_run.py"),
               "--rows", str(rows), "--prefix", prefix, "--budget", "64",
               "--max-bytes", str(max_bytes_mib)]
    if endpoint:
        command += ["--endpoint", endpoint]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests")])}
    done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=ROOT,
                          timeout=1800, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, Any] = json.loads(done.stdout)
    print({k: v for k, v in result.items() if k != "uris"})
    return result


def check_memory_result(result: dict[str, Any]) -> None:
    assert result["rows_written"] == result["rows"]
    assert result["cuts"].get("memory", 0) == 0, result["cuts"]
    by_bytes = result["bytes_cut_files"]
    assert len(by_bytes) >= 8  # every open file was cut by size at least once
    assert min(by_bytes) >= 0.75 * result["max_bytes"], by_bytes
    assert max(result["file_sizes"]) <= result["max_bytes"]
    assert result["peak_memory"] <= result["budget"]
    assert result["peak_rss_growth"] <= result["budget"] + 100 * MiB, result


def test_memory_and_file_sizes_local(tmp_path: pathlib.Path) -> None:
    """2 streams x 4 folders, memory_budget 64 MiB, max_bytes 24 MiB, poorly compressible
    rows, zstd (issue 12's workload) into a local folder."""
    result = run_memory_workload(str(tmp_path / "out"), ROWS, 24)
    check_memory_result(result)
    back = [po.ORCFile(u).nrows for u in result["uris"]]
    assert sum(back) == ROWS


def test_memory_and_file_sizes_s3(s3_bucket: str, s3_client: Any, moto_endpoint: str
                                  ) -> None:
    """The same workload on moto's S3 (half the rows and half max_bytes unless
    AORC_SINK_MEMORY_FULL_S3=1): multipart uploads streamed, none left pending."""
    full = os.environ.get("AORC_SINK_MEMORY_FULL_S3") == "1"
    rows, max_mib = (ROWS, 24) if full else (ROWS // 2, 12)
    result = run_memory_workload(f"s3://{s3_bucket}/out", rows, max_mib, moto_endpoint)
    check_memory_result(result)
    assert pending_uploads(s3_client, s3_bucket) == []
    keys = list_objects(s3_client, s3_bucket, "out/")
    assert sorted(f"s3://{s3_bucket}/{k}" for k in keys) == sorted(result["uris"])
    sizes = [s3_client.head_object(Bucket=s3_bucket, Key=k)["ContentLength"] for k in keys]
    assert sorted(sizes) == result["file_sizes"]


# =========================================================================== max_age

class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def test_quiet_stream_commits_by_default_max_age(tmp_path: pathlib.Path) -> None:
    """20 messages then silence: with the default max_age the sink's own timer commits them
    once the (injected) clock passed 5 minutes -- no close, no further write."""
    table = noisy_table(20, seed=3)
    clock = FakeClock()
    committed = asyncio.Event()
    commits: list[SinkCommit] = []

    async def on_commit(c: SinkCommit) -> None:
        commits.append(c)
        committed.set()

    async with RollingSink(tmp_path, table.schema, clock=clock, on_commit=on_commit) as sink:
        await sink.write(table, topic="t", partition=0, offsets="offset")
        clock.now += DEFAULT_MAX_AGE - 1
        for _ in range(3):  # the timer runs (yielding to it) but nothing is old enough
            await asyncio.sleep(0)
        assert not commits and sink.open_files == 1
        clock.now += 1
        await committed.wait()  # the timer's next tick cuts
        assert [(c.reason, c.offset) for c in commits] == [("age", 19)]
        assert len(visible_files(tmp_path)) == 1
    assert len(commits) == 1  # nothing left for close


async def test_max_age_is_checked_on_every_write(tmp_path: pathlib.Path) -> None:
    """A write (to any stream) cuts the streams whose open files reached max_age."""
    table = noisy_table(30, seed=4)
    clock = FakeClock()
    commits: list[SinkCommit] = []

    async def on_commit(c: SinkCommit) -> None:
        commits.append(c)

    async with RollingSink(tmp_path, table.schema, clock=clock, max_age=60.0,
                           on_commit=on_commit) as sink:
        await sink.write(table.slice(0, 10), topic="t", partition=0, offsets="offset")
        clock.now += 30
        await sink.write(table.slice(10, 10), topic="t", partition=1, offsets="offset")
        clock.now += 30  # partition 0 is 60 s old, partition 1 only 30 s
        await sink.write(table.slice(20, 10), topic="t", partition=2, offsets="offset")
        await sink.flush([("t", 0)])  # waits for the age cut's commit
        assert [(c.partition, c.reason) for c in commits] == [(0, "age")]
    assert sorted((c.partition, c.reason) for c in commits) == [
        (0, "age"), (1, "close"), (2, "close")]


# =========================================================================== replays

async def test_on_old_offsets_skip_drops_replayed_rows(tmp_path: pathlib.Path) -> None:
    table = noisy_table(1000, seed=5)
    async with RollingSink(tmp_path, table.schema, on_old_offsets="skip",
                           max_rows=300) as sink:
        await sink.write(table.slice(0, 600), topic="t", partition=0, offsets="offset")
        await sink.write(table.slice(400, 400), topic="t", partition=0, offsets="offset")
        await sink.write(table.slice(100, 100), topic="t", partition=0, offsets="offset")
        await sink.write(table.slice(800), topic="t", partition=0, offsets="offset")
        assert sink.stats.rows_skipped == 200 + 100
        assert sink.position("t", 0) == 999
    back = pa.concat_tables([po.read_table(str(p)) for p in visible_files(tmp_path)])
    assert sorted(back.column("offset").to_pylist()) == list(range(1000))
    assert back.sort_by("offset").column("payload").to_pylist() == \
        table.column("payload").to_pylist()


async def test_on_old_offsets_raise_is_the_default(tmp_path: pathlib.Path) -> None:
    table = noisy_table(10, seed=6)
    async with RollingSink(tmp_path, table.schema) as sink:
        await sink.write(table, topic="t", partition=0, offsets="offset")
        with pytest.raises(OldOffsetsError, match="at or below 9") as info:
            await sink.write(table.slice(5), topic="t", partition=0, offsets="offset")
        assert not isinstance(info.value, SchemaError)  # issue 24: a replay, not a bad schema
        assert 'on_old_offsets="skip"' in str(info.value)
        assert sink.stats.rows_skipped == 0 and sink.stats.rows_received == 10
    assert (await read_table(str(visible_files(tmp_path)[0]))).num_rows == 10


# =========================================================================== store faults

# Aborting cancels part uploads mid-request: the proxy's thread may then drop a connection
# it had not closed, and moto's server may fail a part whose upload was just aborted (in
# their threads, not in aorc).
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
async def test_refused_part_of_an_open_file_breaks_the_sink(
        s3_bucket: str, s3_client: Any, s3_proxy: Any) -> None:
    """A part of an open (streaming) file is refused: the write that sent it raises, the
    sink is broken, and leaving the block aborts every upload (nothing visible, nothing
    pending) -- while the files committed before stay."""
    from helpers.s3proxy import Fault

    refused: list[str] = []

    def refuse_second_part(request: Any) -> Fault | None:
        if request.operation == "UploadPart" and "partNumber=2" in request.target:
            refused.append(request.target)
            return Fault(403, "AccessDenied")
        return None

    table = noisy_table(400_000, seed=7)
    commits: list[SinkCommit] = []

    async def on_commit(c: SinkCommit) -> None:
        commits.append(c)

    sink = RollingSink(f"s3://{s3_bucket}/faulty", table.schema, max_rows=None,
                       max_bytes=64 * MiB, compression="none", on_commit=on_commit,
                       storage_options={"endpoint_url": s3_proxy.url, "max_attempts": 1})
    with pytest.raises(Exception) as caught:
        async with sink:
            for start in (0, 20_000):
                await sink.write(table.slice(start, 20_000), topic="t", partition=0,
                                 offsets="offset")
                await sink.flush()
            assert len(commits) == 2  # two files of 20,000 rows committed
            s3_proxy.rules.append(refuse_second_part)
            await write_batches(sink, table.slice(40_000), 10_000)  # ~27 MiB: 5 parts
    assert refused, "the planned fault was never reached"
    assert "AccessDenied" in str(caught.value) or "denied" in str(caught.value).lower()
    assert pending_uploads(s3_client, s3_bucket) == []
    keys = list_objects(s3_client, s3_bucket, "faulty/")
    assert sorted(f"s3://{s3_bucket}/{k}" for k in keys) == sorted(
        f.uri for c in commits for f in c.files)
