"""aorc.sink.memory: upload parts spooled to disk (files read back equal by pyarrow, the
spool folder removed on close and after a crash), stripes shrunk before files are cut for
memory, and the RSS promise (budget + 100 MiB) with 1,000 open files on moto's S3."""

from __future__ import annotations

import json
import os
import pathlib
import signal
import subprocess
import sys
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.orc as po
import pytest
from helpers.children import talking_children
from helpers.sink_stream import list_objects, pending_uploads

from aorc.errors import SchemaError
from aorc.io.spool import LOCK_NAME, SPOOL_PREFIX
from aorc.sink import RollingSink, SinkCommit
from aorc.sink import memory as sink_memory
from aorc.sink.files import STRIPE_FLOOR

MiB = 1 << 20
ROOT = pathlib.Path(__file__).resolve().parents[2]


def wide_table(n: int, keys: int, seed: int, width: int = 48) -> pa.Table:
    rng = np.random.default_rng(seed)
    return pa.table({
        "offset": pa.array(np.arange(n, dtype=np.int64)),
        "key": pa.array(rng.integers(0, keys, n).astype(np.int16)),
        "payload": pa.array(np.frombuffer(rng.bytes(width * n), f"S{width}").tolist(),
                            pa.binary()),
    })


def spool_folders(root: pathlib.Path) -> list[str]:
    return sorted(p.name for p in root.iterdir() if p.name.startswith(SPOOL_PREFIX))


def read_back(uris: list[str], read: Any) -> pa.Table:
    tables = [read(u) for u in uris]
    return pa.concat_tables(tables).sort_by("offset")


def test_bad_options() -> None:
    schema = pa.schema([("a", pa.int64())])
    with pytest.raises(SchemaError, match="buffer must be"):
        RollingSink("x", schema, buffer="ram")
    with pytest.raises(SchemaError, match="max_spool_bytes"):
        RollingSink("x", schema, max_spool_bytes=-1)


# =========================================================================== spooling

async def test_parts_wait_on_disk_and_files_read_back_equal(
        s3_client: Any, s3_bucket: str, moto_endpoint: str, tmp_path: pathlib.Path) -> None:
    """Files of several parts on moto's S3 with the default buffer: the parts waited in the
    spool folder (none in memory), pyarrow.orc reads the files equal to the input, and the
    folder is gone after close."""
    spool_dir = tmp_path / "spool"
    table = wide_table(240_000, keys=2, seed=5, width=64)  # ~8 MiB per folder
    commits: list[SinkCommit] = []

    async def on_commit(c: SinkCommit) -> None:
        commits.append(c)

    sink = RollingSink(f"s3://{s3_bucket}/spooled", table.schema, partition_by=["key"],
                       max_bytes=None, stripe_size=1 * MiB, compression="none",
                       storage_options={"endpoint_url": moto_endpoint}, spool_dir=spool_dir,
                       on_commit=on_commit, max_age=None)
    held = []
    async with sink:
        for start in range(0, table.num_rows, 20_000):
            await sink.write(table.slice(start, 20_000), topic="t", partition=0,
                             offsets=start)
            held.append(max((int(f.writer._out.buffered_memory)  # noqa: SLF001
                            for s in sink._streams.values()  # noqa: SLF001
                            for f in s.files.values() if f.writer is not None
                            and f.writer._out is not None), default=0))  # noqa: SLF001
        assert len(spool_folders(spool_dir)) == 1
    assert max(held) == 0  # the bytes waiting for a part were on disk
    assert sink.stats.peak_spool_bytes >= 4 * MiB
    assert spool_folders(spool_dir) == []  # removed on close
    assert pending_uploads(s3_client, s3_bucket) == []
    uris = [f.uri for c in commits for f in c.files]
    assert len(uris) == 2 and all(f.num_bytes > 5 * MiB for c in commits for f in c.files)
    assert sorted(list_objects(s3_client, s3_bucket, "spooled/")) == sorted(
        u.removeprefix(f"s3://{s3_bucket}/") for u in uris)

    def read(uri: str) -> pa.Table:
        body = s3_client.get_object(Bucket=s3_bucket, Key=uri.removeprefix(
            f"s3://{s3_bucket}/"))["Body"].read()
        part = po.ORCFile(pa.BufferReader(body)).read()
        key = int(uri.split("key=")[1].split("/")[0])
        return part.add_column(1, "key", pa.array(np.full(part.num_rows, key, np.int16)))

    assert read_back(uris, read).equals(table.sort_by("offset"))


#: A child that writes to S3 through a sink spooling under argv[2] and waits to be killed
#: (SIGKILL: no clean-up) once it has written argv[3] batches (so parts are spooled).
CRASH_CHILD = """
import asyncio, os, sys
import numpy as np, pyarrow as pa
from aorc.sink.rolling import RollingSink

async def main():
    n = 20_000
    rng = np.random.default_rng(3)
    schema = pa.schema([("offset", pa.int64()), ("payload", pa.binary())])
    sink = RollingSink(sys.argv[1], schema, max_bytes=None, stripe_size=1 << 20,
                       compression="none", spool_dir=sys.argv[2], max_age=None,
                       storage_options={"endpoint_url": os.environ["ENDPOINT"]})
    async with sink:
        for k in range(int(sys.argv[3])):
            payload = np.frombuffer(rng.bytes(64 * n), "S64").tolist()
            batch = pa.record_batch([pa.array(np.arange(k * n, (k + 1) * n)),
                                     pa.array(payload, pa.binary())], schema=schema)
            await sink.write(batch, topic="t", partition=0, offsets=k * n)
        print(sink.stats.peak_spool_bytes, flush=True)
        sys.stdin.read()

asyncio.run(main())
"""


async def test_a_crashed_sinks_spool_is_removed_by_the_next_sink(
        s3_bucket: str, moto_endpoint: str, tmp_path: pathlib.Path) -> None:
    """Two children spool parts; one is killed after 4 batches (event: it says so). A new
    sink on the same spool_dir removes the dead child's folder, not the live one's."""
    spool_dir = tmp_path / "spool"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "ENDPOINT": moto_endpoint}
    commands = [[sys.executable, "-c", CRASH_CHILD, f"s3://{s3_bucket}/crash{i}",
                 str(spool_dir), "4"] for i in range(2)]
    with talking_children(commands, env) as children:
        spooled = [int(c.stdout.readline() or 0) for c in children]  # type: ignore[union-attr]
        assert min(spooled) > 0, spooled
        before = spool_folders(spool_dir)
        assert len(before) == 2
        children[0].send_signal(signal.SIGKILL)
        children[0].wait()
        dead = next(f for f in before if f"-{children[0].pid}-" in f)
        assert (spool_dir / dead / LOCK_NAME).exists()  # left behind by the kill
        table = wide_table(30_000, keys=1, seed=9)
        async with RollingSink(f"s3://{s3_bucket}/next", table.schema, max_bytes=None,
                               stripe_size=1 * MiB, compression="none",
                               storage_options={"endpoint_url": moto_endpoint},
                               spool_dir=spool_dir, max_age=None) as sink:
            await sink.write(table, topic="t", partition=0, offsets=0)
            await sink.flush()  # the first file on S3 opens the spool
            now = spool_folders(spool_dir)
            assert dead not in now and len(now) == 2, now  # the live child's and ours
        assert spool_folders(spool_dir) == [f for f in before if f != dead]


# =========================================================================== stripes first

async def write_in_slices(sink: RollingSink, table: pa.Table) -> None:
    """``table`` in slices of 10,000 rows, alternating between two streams of one topic."""
    for start in range(0, table.num_rows, 10_000):
        await sink.write(table.slice(start, 10_000), topic="t",
                         partition=start // 10_000 % 2, offsets=start)


async def test_stripes_shrink_before_files_are_cut(tmp_path: pathlib.Path) -> None:
    """100 open files whose 1 MiB stripes would need ~100 MiB under a 16 MiB budget: the
    stripes shrink (ratio budget share / requested), no file is cut for memory, the budget
    holds, and pyarrow reads back the input."""
    table = wide_table(400_000, keys=50, seed=1)
    async with RollingSink(tmp_path, table.schema, partition_by=["key"],
                           memory_budget=16 * MiB, max_bytes=16 * MiB, compression="none",
                           storage_options={"fsync": False}, max_age=None) as sink:
        await write_in_slices(sink, table)
    stats = sink.stats
    assert stats.peak_open_files == 100
    assert stats.stripes_shrunk > 100, stats
    assert stats.files_cut_for_memory == 0 and set(stats.cuts) == {"close"}, stats
    assert stats.peak_memory <= 16 * MiB
    files = sorted(p for p in tmp_path.rglob("*.orc") if not p.name.startswith("."))
    assert len(files) == 100
    stripes = [po.ORCFile(str(p)).nstripes for p in files]
    assert min(stripes) >= 2  # unshrunk, each file (~200 kB of rows) would be one stripe

    def read(path: str) -> pa.Table:
        part = po.ORCFile(path).read()
        key = int(path.split("key=")[1].split("/")[0])
        return part.add_column(1, "key", pa.array(np.full(part.num_rows, key, np.int16)))

    assert read_back([str(p) for p in files], read).equals(table)


async def test_files_are_cut_for_memory_only_when_stripes_are_at_the_floor(
        tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Under a budget too small even for floor-sized stripes, files are cut for memory, and
    at every such cut no open stripe could have been shrunk any more."""
    checked = []
    cut = RollingSink._cut  # noqa: SLF001

    def watched(self: RollingSink, stream: Any, reason: str) -> None:
        if reason == "memory":
            checked.append(sink_memory.shrink_candidate(self._streams.values()))  # noqa: SLF001
        cut(self, stream, reason)

    monkeypatch.setattr(RollingSink, "_cut", watched)
    table = wide_table(200_000, keys=50, seed=2)
    async with RollingSink(tmp_path, table.schema, partition_by=["key"],
                           memory_budget=3 * MiB, max_bytes=16 * MiB, compression="none",
                           storage_options={"fsync": False}, max_age=None) as sink:
        await write_in_slices(sink, table)
    stats = sink.stats
    assert stats.stripes_shrunk > 0 and stats.files_cut_for_memory > 0, stats
    assert checked and checked == [None] * len(checked)  # nothing left to shrink
    assert stats.cuts["memory"] == len(checked) <= stats.files_cut_for_memory
    assert STRIPE_FLOOR * 100 > 3 * MiB  # (why the floor cannot fit: the test's premise)


# =========================================================================== RSS

@pytest.mark.slow
def test_rss_with_1000_open_files_on_s3(s3_bucket: str, s3_client: Any, moto_endpoint: str,
                                        tmp_path: pathlib.Path) -> None:
    """2 streams x 500 partition values = 1,000 open files on moto's S3 under a 32 MiB budget
    (parts spooled to disk): the peak RSS growth stays within budget + 100 MiB, and no
    multipart upload is left."""
    command = [sys.executable, str(ROOT / "tests" / "helpers" / "sink_memory_run.py"),
               "--rows", "600000", "--prefix", f"s3://{s3_bucket}/wide", "--budget", "32",
               "--max-bytes", "24", "--keys", "500", "--endpoint", moto_endpoint,
               "--spool-dir", str(tmp_path / "spool")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests")])}
    done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=ROOT,
                          timeout=1800, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout)
    print({k: v for k, v in result.items() if k not in ("uris", "file_sizes")})
    assert result["rows_written"] == result["rows"]
    assert result["peak_open_files"] == 1000
    assert result["stripes_shrunk"] > 0 and result["peak_spool_bytes"] > 0
    assert result["peak_memory"] <= result["budget"]
    assert result["peak_rss_growth"] <= result["budget"] + 100 * MiB, result
    assert pending_uploads(s3_client, s3_bucket) == []
    assert not list((tmp_path / "spool").iterdir())
