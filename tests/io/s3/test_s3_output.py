"""S3Output against moto's HTTP server: single PUT, streaming multipart with overlapping part
uploads and backpressure, checksums, abort on errors and cancellation, retries."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import threading
import zlib
from typing import Any

import pytest
from helpers.s3proxy import Delay, Fault, Hold, Record, S3Proxy, fail_first

from aorc.errors import AccessDeniedError, RetriesExhaustedError, SchemaError, StoreError
from aorc.io import open_output
from aorc.io.output import Output
from aorc.io.s3.config import MIN_PART_SIZE, S3Config
from aorc.io.s3.store import S3Output

MiB = 1024 * 1024
PART = MIN_PART_SIZE  # the smallest part S3 accepts keeps the tests light


def payload(n: int, seed: int = 1) -> bytes:
    """n pseudo-random bytes (a counter's SHA-256 stream: fast and reproducible)."""
    out = bytearray()
    counter = 0
    while len(out) < n:
        out += hashlib.sha256(f"{seed}:{counter}".encode()).digest() * 2048
        counter += 1
    return bytes(out[:n])


def sink_for(proxy: S3Proxy, bucket: str, key: str = "out.bin", **options: Any) -> S3Output:
    sink = open_output(f"s3://{bucket}/{key}",
                     {"endpoint_url": proxy.url, "part_size": PART, **options})
    assert isinstance(sink, S3Output)
    return sink


def crc32_b64(data: bytes) -> str:
    return base64.b64encode(zlib.crc32(data).to_bytes(4, "big")).decode()


def nothing_left(client: Any, bucket: str) -> None:
    assert client.list_objects_v2(Bucket=bucket).get("KeyCount", 0) == 0
    assert client.list_multipart_uploads(Bucket=bucket).get("Uploads", []) == []


def peak_overlap(records: list[Record]) -> int:
    events = sorted([(r.start, 1) for r in records] + [(r.end, -1) for r in records])
    level = peak = 0
    for _, step in events:
        level += step
        peak = max(peak, level)
    return peak


def test_open_sink_dispatch_and_options() -> None:
    sink = open_output("s3://bkt/a/b.orc", {"part_size": 6 * MiB, "max_concurrency": 2})
    assert isinstance(sink, S3Output) and isinstance(sink, Output)
    assert (sink.bucket, sink.key, sink.path) == ("bkt", "a/b.orc", "s3://bkt/a/b.orc")
    assert sink.config.part_size == 6 * MiB and sink.config.store.max_concurrency == 2
    with pytest.raises(SchemaError, match="part_size"):
        open_output("s3://bkt/k", {"part_size": 4 * MiB})
    with pytest.raises(SchemaError, match="fsync"):
        open_output("s3://bkt/k", {"fsync": True})


def test_part_size_grows_to_fit_10000_parts() -> None:
    sink = S3Output("bkt", "k", S3Config.from_options({}))
    sizes = [sink.part_size(n) for n in (1, 1000, 1001, 2001, 9001, 10_000)]
    assert sizes == [8 * MiB, 8 * MiB, 16 * MiB, 32 * MiB, 4096 * MiB, 4096 * MiB]
    capacity = sum(sink.part_size(n) for n in range(1, 10_001))
    assert capacity > 5 * 1024**4  # S3's largest object (5 TiB) fits
    big = S3Output("bkt", "k", S3Config.from_options({"part_size": 1024 * MiB}))
    assert big.part_size(5000) == 5 * 1024 * MiB  # S3's largest part


async def test_small_file_is_one_put_with_checksum(s3_client: Any, s3_bucket: str,
                                                   s3_proxy: S3Proxy) -> None:
    data = payload(PART)  # exactly one part: still a single PUT
    sink = sink_for(s3_proxy, s3_bucket)
    for start in range(0, len(data), 1_000_000):
        await sink.write(memoryview(data)[start:start + 1_000_000])
    assert s3_proxy.log == []  # nothing is sent before complete
    await sink.complete()
    assert [r.operation for r in s3_proxy.log] == ["PutObject"]
    assert s3_proxy.log[0].headers["x-amz-checksum-crc32"] == crc32_b64(data)
    got = s3_client.get_object(Bucket=s3_bucket, Key="out.bin")["Body"].read()
    assert got == data
    assert (sink.stats.requests, sink.stats.bytes, sink.stats.parts) == (1, len(data), 0)
    with pytest.raises(StoreError, match="already complete"):
        await sink.write(b"more")


async def test_empty_file(s3_client: Any, s3_bucket: str, s3_proxy: S3Proxy) -> None:
    sink = sink_for(s3_proxy, s3_bucket)
    await sink.complete()
    assert s3_client.get_object(Bucket=s3_bucket, Key="out.bin")["Body"].read() == b""


async def test_multipart_upload(s3_client: Any, s3_bucket: str, s3_proxy: S3Proxy) -> None:
    data = payload(3 * PART + 12345)
    sink = sink_for(s3_proxy, s3_bucket)
    for start in range(0, len(data), 3 * MiB):  # writes that do not align with parts
        await sink.write(data[start:start + 3 * MiB])
    await sink.complete()
    assert s3_client.get_object(Bucket=s3_bucket, Key="out.bin")["Body"].read() == data
    ops = [r.operation for r in s3_proxy.log]
    assert ops[0] == "CreateMultipartUpload" and ops[-1] == "CompleteMultipartUpload"
    parts = s3_proxy.records("UploadPart")
    assert len(parts) == 4 and sink.stats.parts == 4 and sink.stats.requests == 6
    assert sink.stats.bytes == len(data)
    by_number = {int(r.target.split("partNumber=")[1].split("&")[0]): r for r in parts}
    for number, record in by_number.items():
        chunk = data[(number - 1) * PART:number * PART]
        assert int(record.headers["content-length"]) == len(chunk)
        assert record.headers["x-amz-checksum-crc32"] == crc32_b64(chunk)
    nothing_pending = s3_client.list_multipart_uploads(Bucket=s3_bucket).get("Uploads", [])
    assert nothing_pending == []


async def test_part_uploads_overlap_with_writing(s3_client: Any, s3_bucket: str,
                                                 s3_proxy: S3Proxy) -> None:
    """Parts upload in the background: write() returns while they are in flight, several
    are in flight at once, never more than max_concurrency; a write that finds every slot
    busy waits for one."""
    gate = threading.Event()
    s3_proxy.rules.append(lambda r: Hold(gate) if r.operation == "UploadPart" else None)
    data = payload(6 * PART)
    sink = sink_for(s3_proxy, s3_bucket, max_concurrency=3, memory_budget=10 * PART)
    try:
        for number in range(4):  # writes 2-4 cut parts 1-3 and return at once
            await sink.write(data[number * PART:(number + 1) * PART])
        while len(s3_proxy.records("UploadPart")) < 3:
            await asyncio.sleep(0.01)
        assert len(sink._inflight) == 3 and sink.in_flight_bytes == 3 * PART
        assert not any(task.done() for task in sink._inflight)
        fifth = asyncio.create_task(sink.write(data[4 * PART:5 * PART]))
        await asyncio.sleep(0.2)
        assert not fifth.done()  # every slot is busy: it waits
        assert len(s3_proxy.records("UploadPart")) == 3
    finally:
        gate.set()
    await fifth
    await sink.write(data[5 * PART:])
    await sink.complete()
    parts = s3_proxy.records("UploadPart")
    assert len(parts) == 6
    assert peak_overlap(parts) == 3
    assert s3_client.get_object(Bucket=s3_bucket, Key="out.bin")["Body"].read() == data


async def test_write_waits_when_the_memory_budget_is_full(s3_bucket: str,
                                                          s3_proxy: S3Proxy) -> None:
    s3_proxy.rules.append(lambda r: Delay(0.2) if r.operation == "UploadPart" else None)
    budget = 2 * PART
    sink = sink_for(s3_proxy, s3_bucket, max_concurrency=4, memory_budget=budget)
    data = payload(6 * PART)
    held = []
    for start in range(0, len(data), MiB):
        await sink.write(data[start:start + MiB])
        held.append(sink.buffered_bytes + sink.in_flight_bytes)
    await sink.complete()
    assert max(held) <= budget
    assert peak_overlap(s3_proxy.records("UploadPart")) <= 2  # the budget holds two parts


async def test_abort_leaves_nothing(s3_client: Any, s3_bucket: str, s3_proxy: S3Proxy) -> None:
    sink = sink_for(s3_proxy, s3_bucket)
    await sink.write(payload(2 * PART + 1))
    await asyncio.sleep(0)  # let the uploads start
    assert s3_client.list_multipart_uploads(Bucket=s3_bucket).get("Uploads")
    await sink.abort()
    await sink.abort()  # harmless
    nothing_left(s3_client, s3_bucket)
    assert s3_proxy.records("AbortMultipartUpload")
    with pytest.raises(StoreError, match="aborted"):
        await sink.write(b"x")


async def test_cancelled_writer_then_abort(s3_client: Any, s3_bucket: str,
                                           s3_proxy: S3Proxy) -> None:
    """A task cancelled while waiting for upload slots; abort (as the writer does on
    cancellation) removes the upload, even though part uploads were in flight. The first
    part's request is held by the proxy until the end, so it is in flight when the task is
    cancelled whatever the machine's speed."""
    gate = threading.Event()
    held: list[Record] = []
    loop = asyncio.get_running_loop()
    reached = asyncio.Event()

    def hold_first_part(r: Any) -> Hold | None:  # in the proxy's thread
        if r.operation != "UploadPart":
            return None
        if not held:
            held.append(s3_proxy.log[-1])  # logged before the rules are asked
            loop.call_soon_threadsafe(reached.set)
        return Hold(gate)

    s3_proxy.rules.append(hold_first_part)
    sink = sink_for(s3_proxy, s3_bucket, max_concurrency=1)

    async def produce() -> None:
        try:
            for _ in range(10):
                await sink.write(payload(PART))
        except asyncio.CancelledError:
            await sink.abort()
            raise

    task = asyncio.create_task(produce())
    try:
        waiting = asyncio.ensure_future(reached.wait())
        await asyncio.wait({task, waiting}, return_when=asyncio.FIRST_COMPLETED)
        assert reached.is_set() and not task.done()  # part 1 is held: the writer waits
        assert len(sink._inflight) == 1 and not any(t.done() for t in sink._inflight)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    finally:
        gate.set()
    while not held[0].end:  # the held request goes on to moto (and finds no upload)
        await asyncio.sleep(0.01)  # polls a condition: the outcome does not depend on it
    assert len(s3_proxy.records("UploadPart")) == 1  # no part was sent after the cancel
    nothing_left(s3_client, s3_bucket)


async def test_failed_part_aborts_on_complete(s3_client: Any, s3_bucket: str,
                                              s3_proxy: S3Proxy, fast_retries: list[float]
                                              ) -> None:
    s3_proxy.rules.append(
        lambda r: Fault(500, "InternalError") if r.operation == "UploadPart"
        and "partNumber=2&" in r.target + "&" else None)
    sink = sink_for(s3_proxy, s3_bucket, max_attempts=2, retry_budget=0)  # count only
    await sink.write(payload(2 * PART + 10))
    with pytest.raises(RetriesExhaustedError, match="upload part 2") as info:
        await sink.complete()
    assert info.value.__cause__ is not None
    nothing_left(s3_client, s3_bucket)
    assert sink.abort_error is None


async def test_part_retries_keep_the_data(s3_client: Any, s3_bucket: str, s3_proxy: S3Proxy,
                                          fast_retries: list[float]) -> None:
    s3_proxy.rules.append(fail_first("UploadPart", 2, 503, "ServiceUnavailable"))
    s3_proxy.rules.append(fail_first("CompleteMultipartUpload", 1, 500, "InternalError"))
    data = payload(2 * PART + 77)
    sink = sink_for(s3_proxy, s3_bucket)
    await sink.write(data)
    await sink.complete()
    assert s3_client.get_object(Bucket=s3_bucket, Key="out.bin")["Body"].read() == data
    assert sink.stats.retries == 3 and sink.stats.parts == 3


async def test_no_checksum_option(s3_client: Any, s3_bucket: str, s3_proxy: S3Proxy) -> None:
    sink = sink_for(s3_proxy, s3_bucket, checksum_algorithm=None)
    await sink.write(b"abc")
    await sink.complete()
    assert not [h for h in s3_proxy.log[0].headers if h.startswith("x-amz-checksum-")]
    assert s3_client.get_object(Bucket=s3_bucket, Key="out.bin")["Body"].read() == b"abc"


async def test_a_failed_part_surfaces_in_a_later_write(s3_client: Any, s3_bucket: str,
                                                       s3_proxy: S3Proxy) -> None:
    s3_proxy.rules.append(lambda r: Fault(403, "AccessDenied") if r.operation == "UploadPart"
                          else None)
    sink = sink_for(s3_proxy, s3_bucket)
    await sink.write(payload(PART + 1))  # part 1 starts uploading, and fails
    while not sink._inflight or not all(t.done() for t in sink._inflight):
        await asyncio.sleep(0.01)  # until the part's upload task has ended (with its error)
    with pytest.raises(AccessDeniedError, match="upload part 1"):
        await sink.write(b"more")
    with pytest.raises(StoreError, match="earlier write failed"):
        await sink.write(b"more")
    with pytest.raises(StoreError, match="earlier write failed"):
        await sink.complete()
    await sink.abort()
    nothing_left(s3_client, s3_bucket)
