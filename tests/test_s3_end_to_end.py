"""aorc's reader and writer on s3:// URLs against moto's HTTP server: round trips of
multi-stripe files, request counts, projected reads, abort on exceptions and cancellation,
concurrent overwrites, injected server errors."""

from __future__ import annotations

import asyncio
import io
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.orc as po
import pyorc
import pytest
from helpers.s3proxy import S3Proxy, fail_every

import aorc
import aorc.read.reader
from aorc.errors import ObjectChangedError
from aorc.io import open_output
from aorc.io.s3.config import DEFAULT_S3_REQUEST_SIZE
from aorc.io.s3.store import S3Output
from aorc.write.writer import open_writer, write_table

MiB = 1024 * 1024
PART = 5 * MiB


def table(rows: int, payload_bytes: int = 24, seed: int = 0) -> pa.Table:
    """An id column and an incompressible binary payload column."""
    rng = np.random.default_rng(seed)
    raw = rng.integers(0, 256, rows * payload_bytes, dtype=np.uint8).tobytes()
    offsets = np.arange(rows + 1, dtype=np.int32) * payload_bytes
    payload = pa.BinaryArray.from_buffers(pa.binary(), rows,
                                          [None, pa.py_buffer(offsets), pa.py_buffer(raw)])
    return pa.table({"id": pa.array(np.arange(rows, dtype=np.int64)),
                     "small": pa.array(rng.integers(0, 100, rows, dtype=np.int32)),
                     "payload": payload})


def orc_bytes(t: pa.Table, **options: Any) -> bytes:
    out = io.BytesIO()
    po.write_table(t, out, **options)
    return out.getvalue()


def download(client: Any, bucket: str, key: str) -> bytes:
    data: bytes = client.get_object(Bucket=bucket, Key=key)["Body"].read()
    return data


def nothing_left(client: Any, bucket: str) -> None:
    assert client.list_objects_v2(Bucket=bucket).get("KeyCount", 0) == 0
    assert client.list_multipart_uploads(Bucket=bucket).get("Uploads", []) == []


def pyorc_stripes(data: bytes) -> list[tuple[int, int]]:
    """(offset, length) of each stripe, as pyorc (the C++ ORC library) reports them."""
    reader = pyorc.Reader(io.BytesIO(data))
    return [(reader.read_stripe(i).bytes_offset, reader.read_stripe(i).bytes_length)
            for i in range(reader.num_of_stripes)]


def expected_requests(stripes: list[tuple[int, int]]) -> int:
    """Requests of a full read: consecutive stripes are grouped up to GROUP_BYTES, and each
    group is read as one range, split into pieces of at most S3's max_request_size."""
    groups: list[list[int]] = []  # [start, end)
    for offset, length in stripes:
        if groups and offset + length - groups[-1][0] <= aorc.read.reader.GROUP_BYTES:
            groups[-1][1] = offset + length
        else:
            groups.append([offset, offset + length])
    cap = DEFAULT_S3_REQUEST_SIZE
    return sum(-(-(end - start) // cap) for start, end in groups)


def group_rows(stripes: list[tuple[int, int]], data: bytes) -> list[int]:
    """Rows per group of stripes, grouped as the reader does (up to GROUP_BYTES)."""
    reader = pyorc.Reader(io.BytesIO(data))
    rows: list[int] = []
    start = 0
    for index, (offset, length) in enumerate(stripes):
        count = len(reader.read_stripe(index))
        if rows and offset + length - start <= aorc.read.reader.GROUP_BYTES:
            rows[-1] += count
        else:
            rows.append(count)
            start = offset
    return rows


def seen(proxy: S3Proxy, operation: str) -> asyncio.Event:
    """An event set (on the running loop) when the proxy receives its first ``operation``
    request: wait for it instead of polling against a deadline."""
    loop = asyncio.get_running_loop()
    event = asyncio.Event()

    def notice(request: Any) -> None:  # in the proxy's thread; answers nothing
        if request.operation == operation:
            loop.call_soon_threadsafe(event.set)

    proxy.rules.append(notice)
    return event


async def test_round_trip_of_a_multipart_file_written_by_aorc(
        s3_client: Any, s3_bucket: str, s3_proxy: S3Proxy) -> None:
    t = table(300_000)
    url = f"s3://{s3_bucket}/dir/data.orc"
    sink = open_output(url, {"endpoint_url": s3_proxy.url, "part_size": PART})
    assert isinstance(sink, S3Output)
    await write_table(t, sink, stripe_size=MiB, compression="zstd")
    data = download(s3_client, s3_bucket, "dir/data.orc")
    assert len(data) > PART and len(pyorc_stripes(data)) >= 4
    assert sink.stats.parts == len(s3_proxy.records("UploadPart")) >= 2
    assert len(s3_proxy.records("CompleteMultipartUpload")) == 1
    assert sink.stats.bytes == len(data) == sink.bytes_written
    assert po.read_table(io.BytesIO(data)).equals(t)  # a peer reads what aorc wrote
    assert (await aorc.read_table(url)).equals(t)
    assert (await aorc.read_table(url, columns=["small"])).equals(t.select(["small"]))


async def test_request_counts_of_open_and_full_read(s3_client: Any, s3_bucket: str,
                                                    s3_proxy: S3Proxy) -> None:
    t = table(200_000)
    data = orc_bytes(t, stripe_size=1 * MiB)
    s3_client.put_object(Bucket=s3_bucket, Key="f.orc", Body=data)
    stripes = pyorc_stripes(data)
    assert len(stripes) >= 4
    async with aorc.open_reader(f"s3://{s3_bucket}/f.orc",
                                storage_options={"endpoint_url": s3_proxy.url}) as reader:
        assert reader.io_stats.requests == 1  # the tail fits in 16 KiB: one request
        assert [(r.operation, r.headers.get("range")) for r in s3_proxy.log] == [
            ("GetObject", "bytes=-16384")]
        etag = s3_client.head_object(Bucket=s3_bucket, Key="f.orc")["ETag"]
        got = await reader.read()
        assert got.equals(po.read_table(io.BytesIO(data)))
        assert reader.io_stats.requests == 1 + expected_requests(stripes)
        reads = s3_proxy.log[1:]
        assert len(reads) == reader.io_stats.requests - 1
        assert all(r.operation == "GetObject" and r.headers["if-match"] == etag for r in reads)
        wire = 16384 + sum(int(b) - int(a) + 1 for a, b in
                           (r.headers["range"][6:].split("-") for r in reads))
        assert reader.io_stats.bytes == wire


async def test_a_long_tail_takes_a_second_request(s3_client: Any, s3_bucket: str,
                                                 s3_proxy: S3Proxy) -> None:
    t = table(1000)
    blob = np.random.default_rng(5).bytes(40_000)  # incompressible: the tail is > 16 KiB
    await write_table(t, f"s3://{s3_bucket}/meta.orc", metadata={"blob": blob})
    etag = s3_client.head_object(Bucket=s3_bucket, Key="meta.orc")["ETag"]
    async with aorc.open_reader(f"s3://{s3_bucket}/meta.orc",
                                storage_options={"endpoint_url": s3_proxy.url}) as reader:
        assert reader.metadata["blob"] == blob
        assert reader.io_stats.requests == 2
        first, second = s3_proxy.log
        assert (first.headers["range"], first.headers.get("if-match")) == ("bytes=-16384",
                                                                            None)
        assert second.headers["range"].startswith("bytes=-")  # the whole tail, no HEAD
        assert second.headers["if-match"] == etag
        assert (await reader.read()).equals(t)


async def test_projected_read_fetches_little_more_than_its_columns(
        s3_client: Any, s3_bucket: str) -> None:
    t = table(300_000, payload_bytes=64)
    data = orc_bytes(t, stripe_size=4 * MiB, compression="uncompressed")
    s3_client.put_object(Bucket=s3_bucket, Key="f.orc", Body=data)
    async with aorc.open_reader(f"s3://{s3_bucket}/f.orc") as reader:
        assert reader.num_stripes >= 3
        footers = [await reader.read_stripe_footer(i) for i in range(reader.num_stripes)]
        small = reader.column_names().index("small")
        wanted = sum(s.length for f in footers for s in f.streams
                     if s.column == small and s.kind in ("PRESENT", "DATA", "LENGTH",
                                                         "SECONDARY", "DICTIONARY_DATA"))
        footer_bytes = sum(s.footer_length for s in reader.stripes)
        before = reader.io_stats.snapshot()
        got = await reader.read(columns=["small"])
        fetched = (reader.io_stats - before).bytes
    assert got.equals(t.select(["small"]))
    assert wanted <= fetched <= wanted + footer_bytes + 4096
    assert fetched < len(data) / 20


async def test_exception_inside_open_writer_leaves_nothing(
        s3_client: Any, s3_bucket: str, s3_proxy: S3Proxy) -> None:
    t = table(100_000)
    upload_part = seen(s3_proxy, "UploadPart")
    with pytest.raises(RuntimeError, match="boom"):
        async with open_writer(f"s3://{s3_bucket}/out.orc", t.schema, stripe_size=MiB,
                               storage_options={"endpoint_url": s3_proxy.url,
                                                "part_size": PART}) as writer:
            for i in range(10):
                await writer.write(table(100_000, seed=i))
            # A multipart upload is under way (however long the machine takes: pytest-timeout
            # bounds the wait).
            await upload_part.wait()
            raise RuntimeError("boom")
    nothing_left(s3_client, s3_bucket)
    assert s3_proxy.records("AbortMultipartUpload")


async def test_cancelled_writer_leaves_nothing(s3_client: Any, s3_bucket: str,
                                               s3_proxy: S3Proxy) -> None:
    started = asyncio.Event()

    async def produce() -> None:
        async with open_writer(f"s3://{s3_bucket}/out.orc", table(1).schema, stripe_size=MiB,
                               storage_options={"endpoint_url": s3_proxy.url,
                                                "part_size": PART}) as writer:
            for i in range(1000):
                await writer.write(table(50_000, seed=i))
                if s3_proxy.records("UploadPart"):
                    started.set()

    task = asyncio.create_task(produce())
    waiting = asyncio.ensure_future(started.wait())  # however long the machine takes
    await asyncio.wait({task, waiting}, return_when=asyncio.FIRST_COMPLETED)
    assert started.is_set() and not task.done()  # writing, with a part uploaded
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    nothing_left(s3_client, s3_bucket)
    assert s3_proxy.records("AbortMultipartUpload")


async def test_overwrite_during_a_read_is_detected(s3_client: Any, s3_bucket: str,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(aorc.read.reader, "GROUP_BYTES", 64 * 1024)  # many groups, fetched lazily
    t = table(100_000)
    data = orc_bytes(t, stripe_size=256 * 1024)
    s3_client.put_object(Bucket=s3_bucket, Key="f.orc", Body=data)
    groups = group_rows(pyorc_stripes(data), data)
    assert len(groups) >= 4
    batches = []
    with pytest.raises(ObjectChangedError, match="replaced"):
        async with aorc.open_reader(f"s3://{s3_bucket}/f.orc") as reader:
            async for batch in reader.iter_batches():
                batches.append(batch)
                if len(batches) == 1:
                    s3_client.put_object(Bucket=s3_bucket, Key="f.orc",
                                         Body=orc_bytes(table(100_000, seed=9)))
    rows = sum(len(b) for b in batches)
    # The group being read and the one prefetched were fetched before the change at most;
    # every row delivered is the old file's.
    assert 0 < rows <= groups[0] + groups[1]
    assert pa.Table.from_batches(batches).equals(t.slice(0, rows))


async def test_injected_server_errors_are_retried_without_loss(
        s3_client: Any, s3_bucket: str, s3_proxy: S3Proxy, fast_retries: list[float]) -> None:
    for operation in ("GetObject", "UploadPart", "CreateMultipartUpload",
                      "CompleteMultipartUpload"):
        s3_proxy.rules.append(fail_every(operation, 2, 503, "ServiceUnavailable"))
    s3_proxy.rules.append(fail_every("GetObject", 3, 500, "InternalError"))
    options = {"endpoint_url": s3_proxy.url, "part_size": PART, "max_attempts": 5}
    t = table(300_000)
    url = f"s3://{s3_bucket}/data.orc"
    sink = open_output(url, options)
    await write_table(t, sink, stripe_size=MiB)
    assert sink.stats.retries >= 3 and sink.stats.parts >= 2  # type: ignore[attr-defined]
    async with aorc.open_reader(url, storage_options=options) as reader:
        got = await reader.read()
        assert reader.io_stats.retries >= 2
    assert got.equals(t)
    injected = [r for r in s3_proxy.log if r.injected]
    assert {r.status for r in injected} == {500, 503}


@pytest.mark.parametrize("form", ["path", "uri"])
async def test_local_paths_and_file_uris(tmp_path: Any, form: str) -> None:
    t = table(1000)
    target = tmp_path / "x.orc"
    dest = str(target) if form == "path" else target.as_uri()
    await write_table(t, dest)
    assert (await aorc.read_table(dest)).equals(t)


async def test_writer_reports_upload_io_stats(s3_bucket: str) -> None:
    """The writer exposes its S3 sink's counters: one PUT for a small file."""
    import pyarrow as pa

    import aorc

    table = pa.table({"x": pa.array(range(1000))})
    async with aorc.open_writer(f"s3://{s3_bucket}/small.orc", table.schema) as w:
        await w.write(table)
    assert w.io_stats is not None and w.io_stats.requests >= 1 and w.io_stats.parts == 0
    assert w.io_stats.bytes == w.bytes_written
    assert (await aorc.read_table(f"s3://{s3_bucket}/small.orc")).equals(table)
