"""HTTP(S) URLs, read-only: one suffix-range GET to open, pinned by the server's validator,
a server that ignores Range downloads once, presigned S3 URLs (moto), no listing, no writes;
files written by pyarrow, compared with pyarrow.orc."""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pyarrow.orc as po
import pytest
from helpers.http_server import HttpFile, HttpFiles

import aorc
from aorc.errors import (
    ObjectChangedError,
    ObjectNotFoundError,
    SchemaError,
    StoreError,
    UnsupportedFeatureError,
)
from aorc.io import open_output, open_store, registry

TABLE = pa.table({"id": pa.array(range(60_000), pa.int64()),
                  "word": pa.array([f"w{i % 313}" for i in range(60_000)])})


def orc_bytes(table: pa.Table = TABLE) -> bytes:
    sink = io.BytesIO()
    po.write_table(table, sink, stripe_size=64 * 1024)
    return sink.getvalue()


@pytest.fixture(scope="module")
def server() -> Iterator[HttpFiles]:
    files = HttpFiles().start()
    try:
        yield files
    finally:
        files.stop()


@pytest.fixture
def files(server: HttpFiles) -> HttpFiles:
    server.files.clear()
    server.log.clear()
    return server


async def test_read_is_one_suffix_get_then_pinned_ranges(files: HttpFiles) -> None:
    files.files["/data/t.orc"] = HttpFile(orc_bytes())
    url = f"{files.url}/data/t.orc"
    got = await aorc.read_table(url, columns=["word"], filters=[("id", "<", 1000)])
    assert got.equals(TABLE.filter(pa.compute.field("id") < 1000).select(["word"]))
    first = files.log[0]
    assert first[0] == "GET" and first[2]["range"] == "bytes=-16384"
    assert all(method == "GET" for method, _, _ in files.log)  # no HEAD
    etag = files.files["/data/t.orc"].etag
    assert all(headers.get("if-match") == etag for _, _, headers in files.log[1:])


@pytest.mark.parametrize("validator", ["strong", "weak", "date"])
async def test_a_replaced_file_is_never_mixed(files: HttpFiles, validator: str) -> None:
    files.files["/t.orc"] = HttpFile(orc_bytes(), validator=validator)
    async with open_store(f"{files.url}/t.orc") as store:
        tail, size = await store.read_tail(1000)
        files.files["/t.orc"] = HttpFile(orc_bytes(TABLE.slice(0, 59_000)),
                                         validator=validator, version=2)
        with pytest.raises(ObjectChangedError, match="replaced"):
            await store.read_range(0, 100)


async def test_no_validator_reads_unpinned(files: HttpFiles) -> None:
    files.files["/t.orc"] = HttpFile(orc_bytes(), validator=None)
    assert (await aorc.read_table(f"{files.url}/t.orc")).equals(TABLE)
    assert not any("if-match" in h for _, _, h in files.log)


async def test_a_server_ignoring_range_is_downloaded_once(
        files: HttpFiles, caplog: pytest.LogCaptureFixture) -> None:
    data = orc_bytes()
    files.files["/t.orc"] = HttpFile(data, ranges=False)
    with caplog.at_level(logging.WARNING, logger="aorc.io.remote"), \
            pytest.warns(aorc.AorcWarning, match="ignores Range"):
        got = await aorc.read_table(f"{files.url}/t.orc")
    assert got.equals(TABLE)
    assert len(files.log) == 1  # the whole file came once; every range was served from it
    assert "ignores Range" in caplog.text and str(len(data)) in caplog.text
    files.log.clear()
    with pytest.raises(StoreError, match="max_unranged_bytes=1000"):
        await aorc.read_table(f"{files.url}/t.orc", storage_options={"max_unranged_bytes": 1000})
    assert len(files.log) == 1


async def test_a_server_ignoring_range_is_reported_once_per_object(files: HttpFiles) -> None:
    """An AorcWarning per object (not per read) and IOStats.unranged tell the user that the
    server sent whole objects; a server that honours Range gives neither."""
    data = orc_bytes()
    files.files["/once/t.orc"] = HttpFile(data, ranges=False)
    files.files["/once/u.orc"] = HttpFile(data, ranges=False)
    files.files["/once/ok.orc"] = HttpFile(data)
    with pytest.warns(aorc.AorcWarning) as caught:
        async with aorc.open_reader(f"{files.url}/once/t.orc") as reader:
            for _ in range(3):
                assert (await reader.read()).equals(TABLE)
            assert reader.io_stats.unranged == 1 and reader.io_stats.requests == 1
    assert len(caught) == 1 and str(len(data)) in str(caught[0].message)
    with pytest.warns(aorc.AorcWarning) as caught:
        dataset = await aorc.open_dataset([f"{files.url}/once/{n}.orc"
                                           for n in ("t", "u", "ok")])
        await dataset.read()
    assert len(caught) == 1 and "/once/u.orc:" in str(caught[0].message)  # t.orc was told
    assert dataset.io_stats.unranged >= 2
    async with aorc.open_reader(f"{files.url}/once/ok.orc") as reader:  # no warning (errors)
        await reader.read()
        assert reader.io_stats.unranged == 0


async def test_list_of_urls_is_a_dataset_and_folders_are_refused(files: HttpFiles) -> None:
    files.files["/a.orc"] = HttpFile(orc_bytes(TABLE.slice(0, 100)))
    files.files["/b.orc"] = HttpFile(orc_bytes(TABLE.slice(100, 50)))
    got = await aorc.read_dataset([f"{files.url}/a.orc", f"{files.url}/b.orc"])
    assert got.equals(TABLE.slice(0, 150))
    with pytest.raises(UnsupportedFeatureError, match="no listing"):
        await aorc.read_dataset(f"{files.url}/folder/")
    with pytest.raises(UnsupportedFeatureError, match="read-only"):
        open_output(f"{files.url}/x.orc")
    with pytest.raises(UnsupportedFeatureError, match="read-only"):
        await registry.delete(f"{files.url}/a.orc")
    with pytest.raises(ObjectNotFoundError):
        await aorc.read_table(f"{files.url}/missing.orc?token=s3cr3t")


async def test_headers_are_sent_and_never_shown(files: HttpFiles) -> None:
    files.files["/t.orc"] = HttpFile(orc_bytes())
    secret = "Bearer sk-live-0123456789"
    options = {"headers": {"Authorization": secret}}
    await aorc.read_table(f"{files.url}/t.orc", storage_options=options)
    assert all(h.get("authorization") == secret for _, _, h in files.log)
    store = open_store(f"{files.url}/t.orc?sig=abcdef", options)
    assert secret not in repr(store) and "abcdef" not in repr(store)
    assert secret not in repr(store.config)  # type: ignore[attr-defined]
    with pytest.raises(ObjectNotFoundError) as info:
        await aorc.read_table(f"{files.url}/nope.orc?sig=abcdef", storage_options=options)
    assert "abcdef" not in str(info.value) and secret not in str(info.value)
    with pytest.raises(SchemaError, match="headers"):
        open_store(f"{files.url}/t.orc", {"headers": {"X": 1}})


async def test_presigned_s3_url(s3_client: Any, s3_bucket: str) -> None:
    """A presigned GET URL of moto's S3 (a real peer of the HTTP store): read with ranges,
    pinned to S3's ETag."""
    s3_client.put_object(Bucket=s3_bucket, Key="t.orc", Body=orc_bytes())
    url = s3_client.generate_presigned_url("get_object",
                                           Params={"Bucket": s3_bucket, "Key": "t.orc"},
                                           ExpiresIn=600)
    assert url.startswith("http://") and "Signature=" in url or "X-Amz-Signature=" in url
    async with aorc.open_reader(url) as reader:
        got = await reader.read(columns=["id"])
        assert reader.etag == s3_client.head_object(Bucket=s3_bucket, Key="t.orc")["ETag"]
        assert "Signature" not in repr(reader) and "?" not in str(reader.io_stats)
    assert got.equals(TABLE.select(["id"]))
