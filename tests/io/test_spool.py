"""aorc.io.spool: part buffers on disk (segments, read back a part at a time, bounded), the
spool folder's life (removed on close; a killed owner's folder removed by the next spool, a
live one's kept), and S3 uploads through a spooling buffer."""

from __future__ import annotations

import hashlib
import os
import pathlib
import signal
import sys
from typing import Any

import pytest
from helpers.children import talking_children
from helpers.s3proxy import S3Proxy

from aorc.errors import SchemaError, StoreError
from aorc.io import open_output
from aorc.io.spool import (
    LOCK_NAME,
    SPOOL_PREFIX,
    DiskPartBuffer,
    MemoryPartBuffer,
    Spool,
    remove_stale_spools,
)

MiB = 1 << 20
ROOT = pathlib.Path(__file__).resolve().parents[2]


def payload(n: int, seed: int = 1) -> bytes:
    out = bytearray()
    counter = 0
    while len(out) < n:
        out += hashlib.sha256(f"{seed}:{counter}".encode()).digest() * 512
        counter += 1
    return bytes(out[:n])


def spool_files(spool: Spool) -> list[str]:
    return sorted(n for n in os.listdir(spool.path) if n != LOCK_NAME)


async def test_disk_buffer_returns_the_bytes_in_order_and_frees_segments(
        tmp_path: pathlib.Path) -> None:
    spool = Spool.open(tmp_path, max_bytes=64 * MiB)
    assert os.stat(spool.path).st_mode & 0o777 == 0o700  # other users cannot read the bytes
    buffer = spool.buffer(segment_size=100_000)
    data = payload(1_000_000)
    cuts = [0, 1, 70_000, 70_001, 250_000, 640_000, 999_999, 1_000_000]
    for a, b in zip(cuts, cuts[1:], strict=False):
        await buffer.write(data[a:b])
    assert buffer.buffered == len(data) and buffer.memory == 0
    assert spool.used == len(data) and len(spool_files(spool)) == 10  # 100 kB segments
    got = [await buffer.take(n) for n in (150_000, 350_000, 1, 499_999)]
    assert b"".join(got) == data
    assert buffer.buffered == 0 and spool.used == 0
    assert spool_files(spool) == []  # every full segment was removed once taken
    spool.close()
    assert not os.path.exists(spool.path)


async def test_a_full_spool_keeps_writes_in_memory_in_order(tmp_path: pathlib.Path) -> None:
    spool = Spool.open(tmp_path, max_bytes=250_000)
    buffer = spool.buffer(segment_size=100_000)
    data = payload(600_000, seed=2)
    for start in range(0, len(data), 120_000):
        await buffer.write(data[start:start + 120_000])
    assert spool.used == 240_000 and buffer.memory == 360_000  # 2 writes fit, 3 did not
    assert spool.overflow_bytes == 360_000
    first = await buffer.take(300_000)  # from disk, then from memory
    assert first == data[:300_000] and spool.used == 0 and buffer.memory == 300_000
    await buffer.write(payload(50_000, seed=3))  # room again: to disk, after the memory
    assert spool.used == 50_000
    rest = await buffer.take(buffer.buffered)
    assert rest == data[300_000:] + payload(50_000, seed=3)
    buffer.clear()
    spool.close()


async def test_clear_removes_segments_and_memory_buffer_round_trip(
        tmp_path: pathlib.Path) -> None:
    spool = Spool.open(tmp_path)
    buffer = spool.buffer(segment_size=1000)
    await buffer.write(payload(5500))
    assert len(spool_files(spool)) == 6
    buffer.clear()
    assert spool_files(spool) == [] and spool.used == 0
    with pytest.raises(StoreError, match="cleared"):
        await buffer.write(b"x")
    spool.close()
    memory = MemoryPartBuffer()
    await memory.write(b"abc")
    await memory.write(b"defg")
    assert memory.memory == memory.buffered == 7
    assert await memory.take(5) == b"abcde" and await memory.take(2) == b"fg"


def test_bad_limits() -> None:
    with pytest.raises(SchemaError, match="max_spool_bytes"):
        Spool.open(max_bytes=0)


# =========================================================================== folders

#: A child that opens a spool under argv[1], writes a segment, says its folder, then waits
#: for the parent to SIGKILL it (no clean-up runs).
CHILD = """
import asyncio, sys
from aorc.io.spool import Spool
spool = Spool.open(sys.argv[1])
asyncio.run(spool.buffer(1 << 20).write(b"x" * 1000))
print(spool.path, flush=True)
sys.stdin.read()
"""


def test_spool_of_a_killed_process_is_removed_by_the_next_one(tmp_path: pathlib.Path) -> None:
    """Event-driven: the child says its folder once it has spooled bytes; it is killed
    then (SIGKILL: no clean-up). A new spool removes the dead folder, not a live one's (its
    own process's, nor another live process's)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with talking_children([[sys.executable, "-c", CHILD, str(tmp_path)]] * 2, env) as children:
        folders = [c.stdout.readline().strip() for c in children]  # type: ignore[union-attr]
        assert all(os.path.isdir(f) and os.listdir(f) for f in folders), folders
        live_here = Spool.open(tmp_path)
        children[0].send_signal(signal.SIGKILL)
        children[0].wait()
        assert os.path.isdir(folders[0])  # left behind by the killed child
        spool = Spool.open(tmp_path)
        assert spool.removed == [folders[0]]
        assert not os.path.exists(folders[0])
        assert os.path.isdir(folders[1]) and os.path.isdir(live_here.path)  # live: kept
        assert remove_stale_spools(str(tmp_path)) == []
        spool.close()
        live_here.close()
        assert sorted(os.listdir(tmp_path)) == [os.path.basename(folders[1])]


def test_unrelated_folders_are_left_alone(tmp_path: pathlib.Path) -> None:
    (tmp_path / "keep-me").mkdir()
    (tmp_path / f"{SPOOL_PREFIX}notapid-0123456789ab").mkdir()
    spool = Spool.open(tmp_path)
    assert spool.removed == []
    spool.close()
    assert sorted(os.listdir(tmp_path)) == [f"{SPOOL_PREFIX}notapid-0123456789ab", "keep-me"]


# =========================================================================== uploads

async def test_s3_upload_through_a_spool_sends_the_same_bytes(
        s3_client: Any, s3_bucket: str, s3_proxy: S3Proxy, tmp_path: pathlib.Path) -> None:
    """A multipart upload whose parts wait on disk: the object is the bytes written, the
    output holds no part in memory between writes, and the spool is empty afterwards."""
    spool = Spool.open(tmp_path)
    out = open_output(f"s3://{s3_bucket}/spooled.bin",
                      {"endpoint_url": s3_proxy.url, "part_size": 5 * MiB})
    out.use_part_buffer(spool.buffer(5 * MiB))  # type: ignore[attr-defined]
    data = payload(13 * MiB + 12345, seed=4)
    held = []
    for start in range(0, len(data), 3 * MiB):
        await out.write(data[start:start + 3 * MiB])
        held.append(out.buffered_memory)  # type: ignore[attr-defined]
    assert out.buffered_bytes > 0  # type: ignore[attr-defined]
    await out.complete()
    assert max(held) == 0
    assert len(s3_proxy.records("UploadPart")) == 3
    body = s3_client.get_object(Bucket=s3_bucket, Key="spooled.bin")["Body"].read()
    assert body == data
    assert spool_files(spool) == [] and spool.used == 0
    with pytest.raises(StoreError, match="before the first write"):
        out.use_part_buffer(MemoryPartBuffer())  # type: ignore[attr-defined]
    spool.close()


async def test_aborted_spooled_upload_leaves_no_segments(
        s3_bucket: str, s3_proxy: S3Proxy, tmp_path: pathlib.Path) -> None:
    spool = Spool.open(tmp_path)
    out = open_output(f"s3://{s3_bucket}/gone.bin",
                      {"endpoint_url": s3_proxy.url, "part_size": 5 * MiB})
    buffer = spool.buffer(5 * MiB)
    out.use_part_buffer(buffer)  # type: ignore[attr-defined]
    await out.write(payload(7 * MiB))
    assert isinstance(buffer, DiskPartBuffer) and spool_files(spool)
    await out.abort()
    assert spool_files(spool) == [] and spool.used == 0
    spool.close()
