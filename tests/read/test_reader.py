"""The async read driver: requests, batching, projection, prefetch, responsiveness, errors."""

from __future__ import annotations

import asyncio
import contextlib
import pathlib
import threading
import warnings
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.orc as po
import pyorc
import pytest
from helpers.corpus import CORPUS_ABSENT, corpus_root

import aorc
import aorc.read.plan
import aorc.read.reader
from aorc.errors import CorruptFileError, ObjectNotFoundError, SchemaError, StoreError
from aorc.format.projection import select_columns
from aorc.format.types import parse_type_string
from aorc.io import MemoryStore

CORPUS = corpus_root()
needs_corpus = pytest.mark.skipif(CORPUS is None, reason=CORPUS_ABSENT)


def corpus_file(name: str) -> pathlib.Path:
    assert CORPUS is not None
    return CORPUS / "files" / name


def _strings(prefix: str, numbers: np.ndarray) -> pa.Array:
    return pc.binary_join_element_wise(prefix, pa.array(numbers).cast(pa.string()), "")


def flat_table(n: int, seed: int = 0) -> pa.Table:
    """Primitive columns with nulls."""
    rng = np.random.default_rng(seed)
    valid = rng.random(n) > 0.1
    return pa.table({
        "i": pa.array(rng.integers(-10**6, 10**6, n), pa.int64(), mask=~valid),
        "f": pa.array(rng.random(n), pa.float64()),
        "s": pc.if_else(valid, _strings("v", rng.integers(0, 500, n)), None),
        "b": pa.array(rng.random(n) > 0.5, pa.bool_()),
        "small": pa.array(rng.integers(-100, 100, n), pa.int8()),
    })


def write(path: pathlib.Path, table: pa.Table, **kwargs: object) -> pathlib.Path:
    po.write_table(table, str(path), **kwargs)
    return path


@pytest.fixture(scope="module")
def multi_stripe(tmp_path_factory: pytest.TempPathFactory) -> tuple[pathlib.Path, pa.Table]:
    table = flat_table(200_000)
    path = write(tmp_path_factory.mktemp("multi") / "multi.orc", table,
                 stripe_size=256 * 1024, compression="zlib")
    assert po.ORCFile(str(path)).nstripes >= 3
    return path, table


@pytest.fixture(scope="module")
def heavy_file(tmp_path_factory: pytest.TempPathFactory) -> tuple[pathlib.Path, pa.Table]:
    """One stripe of 1M rows of zstd-compressed integers and strings (about 17 MB):
    decoding it on the event loop would block it for a few hundred milliseconds."""
    rng = np.random.default_rng(3)
    n = 1_000_000
    table = pa.table({
        "i": rng.integers(-10**12, 10**12, n),
        "j": np.cumsum(rng.integers(0, 5, n)),
        "s": _strings("str", rng.integers(0, 200_000, n)),
        "f": rng.random(n),
    })
    path = write(tmp_path_factory.mktemp("heavy") / "heavy.orc", table, compression="zstd")
    return path, table


@pytest.fixture(scope="module")
def big_file(tmp_path_factory: pytest.TempPathFactory) -> tuple[pathlib.Path, pa.Table]:
    """About 24 MB of incompressible doubles in stripes of several MB."""
    rng = np.random.default_rng(1)
    n = 1_000_000
    table = pa.table({"x": rng.random(n), "y": rng.random(n), "z": rng.random(n)})
    path = write(tmp_path_factory.mktemp("big") / "big.orc", table, stripe_size=8 * 1024 * 1024)
    return path, table


# --------------------------------------------------------------------------- opening

async def test_open_small_tail_is_one_request(multi_stripe: tuple[pathlib.Path, pa.Table]
                                              ) -> None:
    path, table = multi_stripe
    async with aorc.open_reader(path) as reader:
        assert reader.io_stats.requests == 1
        assert reader.num_rows == table.num_rows
        assert reader.schema == po.ORCFile(str(path)).schema
        assert reader.etag is None  # an S3 reader's is its object's (tests/spark, test_s3)


async def test_open_large_tail_is_two_requests(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "meta.orc"
    big = np.random.default_rng(2).bytes(40000)  # incompressible: the tail exceeds 16 KiB
    with open(path, "wb") as f:
        writer = pyorc.Writer(f, "struct<a:int>")
        writer.set_user_metadata(big=big, small=b"yz")
        writer.writerows([(i,) for i in range(10)])
        writer.close()
    assert path.stat().st_size > aorc.read.reader.TAIL_READ_SIZE
    async with aorc.open_reader(path) as reader:
        assert reader.io_stats.requests == 2
        assert reader.metadata == {"big": big, "small": b"yz"}
        table = await reader.read()
        assert reader.io_stats.requests == 3  # the only stripe, in one request
    assert table.column("a").to_pylist() == list(range(10))


@needs_corpus
async def test_open_corpus_metadata_file_is_two_requests() -> None:
    path = corpus_file("TestOrcFile.metaData.orc")
    async with aorc.open_reader(path) as reader:
        assert reader.io_stats.requests == 2
        with open(path, "rb") as f:
            expected = pyorc.Reader(f).user_metadata
        assert reader.metadata == {k: bytes(v) for k, v in expected.items()}


async def test_small_file_is_read_with_one_request(tmp_path: pathlib.Path) -> None:
    table = flat_table(300)
    path = write(tmp_path / "small.orc", table)
    assert path.stat().st_size < aorc.read.reader.TAIL_READ_SIZE
    async with aorc.open_reader(path) as reader:
        got = await reader.read()
        assert reader.io_stats.requests == 1
        assert reader.io_stats.bytes == path.stat().st_size
    assert got.equals(po.read_table(str(path)))


async def test_missing_file(tmp_path: pathlib.Path) -> None:
    with pytest.raises(ObjectNotFoundError):
        async with aorc.open_reader(tmp_path / "nope.orc"):
            pass


async def test_await_form_and_bytes_source(multi_stripe: tuple[pathlib.Path, pa.Table]) -> None:
    path, table = multi_stripe
    reader = await aorc.open_reader(path.read_bytes())
    try:
        assert reader.path == "<memory>"
        assert (await reader.read()).equals(po.read_table(str(path)))
    finally:
        await reader.close()
    with pytest.raises(StoreError):
        await reader.read()


async def test_file_properties_match_pyarrow_and_pyorc(
        multi_stripe: tuple[pathlib.Path, pa.Table]) -> None:
    path, table = multi_stripe
    ref = po.ORCFile(str(path))
    with open(path, "rb") as f:
        ref_orc = pyorc.Reader(f)
        ref_stripes = [ref_orc.read_stripe(i) for i in range(ref.nstripes)]
        ref_rows = [len(s) for s in ref_stripes]
        ref_spans = [(s.bytes_offset, s.bytes_length) for s in ref_stripes]
        ref_type = str(ref_orc.schema)
        del ref_orc, ref_stripes
    async with aorc.open_reader(str(path)) as reader:
        assert reader.num_stripes == ref.nstripes
        assert reader.compression == ref.compression.lower()
        assert reader.compression_block_size == ref.compression_size
        assert reader.file_version == ref.file_version
        assert reader.row_index_stride == ref.row_index_stride
        assert reader.file_length == ref.file_length == path.stat().st_size
        assert reader.writer.name == "C++" and reader.writer.code == 1
        assert reader.writer.software_version is not None
        assert ref.software_version == f"ORC C++ {reader.writer.software_version}"
        assert reader.writer.writer_version_name == "original"
        assert reader.orc_type == ref_type
        stripes = reader.stripes
        assert [s.num_rows for s in stripes] == ref_rows
        assert [(s.offset, s.length) for s in stripes] == ref_spans
        stats = reader.statistics
        assert len(stats) == 6
        low, high = pc.min_max(table.column("i")).values()
        assert (stats[1].minimum, stats[1].maximum) == (low.as_py(), high.as_py())
        assert stats[0].num_values == table.num_rows
        first = stripes[0].statistics
        assert first is not None
        assert first[1].num_values == pc.count(table.column("i")[:stripes[0].num_rows]).as_py()
        assert reader.column_names() == ["", "i", "f", "s", "b", "small"]


# --------------------------------------------------------------------------- reading

async def test_read_matches_pyarrow(multi_stripe: tuple[pathlib.Path, pa.Table]) -> None:
    path, table = multi_stripe
    got = await aorc.read_table(path)
    assert got.equals(po.read_table(str(path)))
    assert got.equals(table)


async def test_iter_batches_bounded(multi_stripe: tuple[pathlib.Path, pa.Table]) -> None:
    path, table = multi_stripe
    async with aorc.open_reader(path) as reader:
        stripe_rows = [s.num_rows for s in reader.stripes]
        batches = [b async for b in reader.iter_batches(batch_size=7000)]
    assert all(0 < b.num_rows <= 7000 for b in batches)
    assert sum(b.num_rows for b in batches) == table.num_rows
    # Batches never span stripes: every stripe boundary is a batch boundary.
    bounds = set(np.cumsum([b.num_rows for b in batches]).tolist())
    assert set(np.cumsum(stripe_rows).tolist()) <= bounds
    assert pa.Table.from_batches(batches).equals(table)


async def test_projection_reads_fewer_bytes(big_file: tuple[pathlib.Path, pa.Table]) -> None:
    path, table = big_file
    async with aorc.open_reader(path) as reader:
        assert reader.num_stripes >= 2
        before = reader.io_stats.snapshot()
        full = await reader.read()
        full_bytes = (reader.io_stats - before).bytes
        before = reader.io_stats.snapshot()
        part = await reader.read(columns=["y"])
        part_bytes = (reader.io_stats - before).bytes
    assert full.equals(table)
    assert part.column_names == ["y"]
    assert part.column("y").equals(table.column("y"))
    assert part_bytes < full_bytes / 2


async def test_projection_order_and_unknown_column(
        multi_stripe: tuple[pathlib.Path, pa.Table]) -> None:
    path, table = multi_stripe
    async with aorc.open_reader(path) as reader:
        got = await reader.read(columns=["s", "i"])
        assert got.column_names == ["s", "i"]  # as asked, as pyarrow.parquet (issue 13)
        assert got.equals(po.read_table(str(path), columns=["s", "i"]).select(["s", "i"]))
        with pytest.raises(SchemaError, match="nope"):
            reader.iter_batches(columns=["nope"])  # raised before iterating
        with pytest.raises(SchemaError):
            reader.iter_batches(batch_size=0)


async def test_nested_projection(tmp_path: pathlib.Path) -> None:
    table = pa.table({
        "id": pa.array(range(1000)),
        "st": pa.array([{"a": i, "b": str(i)} for i in range(1000)]),
    })
    path = write(tmp_path / "nested.orc", table)
    got = await aorc.read_table(path, columns=["st.b"])
    assert got.column_names == ["st"]
    assert got.column("st").type == pa.struct([pa.field("b", pa.string())])
    assert got.column("st").combine_chunks().field("b").to_pylist() == [
        str(i) for i in range(1000)]


async def test_empty_file_gives_empty_table_with_schema(tmp_path: pathlib.Path) -> None:
    table = flat_table(0)
    path = write(tmp_path / "empty.orc", table)
    ref = po.read_table(str(path))
    got = await aorc.read_table(path)
    assert got.num_rows == 0
    assert got.schema == ref.schema
    got = await aorc.read_table(path, columns=["s"])
    assert got.schema == ref.select(["s"]).schema


@needs_corpus
async def test_non_struct_root_matches_pyorc() -> None:
    path = corpus_file("TestOrcFile.testWithoutCompressionBlockSize.orc")
    with open(path, "rb") as f:
        expected = list(pyorc.Reader(f))
    got = await aorc.read_table(path)
    assert got.column_names == ["_col0"]
    assert got.column(0).to_pylist() == expected


async def test_column_names_are_selectable(tmp_path: pathlib.Path) -> None:
    table = pa.table({
        "a": pa.array([[{"x": 1, "y": "p"}], [], None]),
        "m": pa.array([[("k", 1.5)], None, []], pa.map_(pa.string(), pa.float64())),
        "b": pa.array([1, 2, 3], pa.int16()),
    })
    path = write(tmp_path / "names.orc", table)
    async with aorc.open_reader(path) as reader:
        names = reader.column_names()
        assert names == ["", "a", "a.item", "a.item.x", "a.item.y", "m", "m.key", "m.value",
                         "b"]
        for column_id, name in enumerate(names[1:], start=1):
            assert column_id in select_columns(parse_type_string(reader.orc_type), [name])
            got = await reader.read(columns=[name])
            assert got.num_rows == 3


async def test_stripe_footer_streams_tile_the_stripe(
        multi_stripe: tuple[pathlib.Path, pa.Table]) -> None:
    path, _ = multi_stripe
    async with aorc.open_reader(path) as reader:
        for stripe in reader.stripes:
            footer = await reader.read_stripe_footer(stripe.index)
            assert len(footer.encodings) == 6
            offset = stripe.offset
            for stream in footer.streams:
                assert stream.offset == offset
                offset += stream.length
            assert offset == stripe.offset + stripe.index_length + stripe.data_length
            assert {s.kind for s in footer.streams} >= {"ROW_INDEX", "DATA"}
        with pytest.raises(SchemaError):
            await reader.read_stripe_footer(reader.num_stripes)


# --------------------------------------------------------------------------- pipelining

class RecordingStore(MemoryStore):
    """A memory store that logs every request and, with ``hold``, holds each one after the
    first until :attr:`release` is set (a request in flight for as long as the test wants,
    whatever the machine's speed)."""

    def __init__(self, data: bytes, hold: bool = False) -> None:
        super().__init__(data, path="<recording>")
        self.log: list[tuple[int, int]] = []
        self.hold = hold
        self.release = asyncio.Event()
        self.in_flight = 0

    async def _fetch(self, offset: int, length: int) -> bytes:
        self.log.append((offset, length))
        self.in_flight += 1
        try:
            if self.hold and len(self.log) > 1:
                await self.release.wait()
            return await super()._fetch(offset, length)
        finally:
            self.in_flight -= 1


async def settle(reader: aorc.OrcReader) -> None:
    """Wait until every background task of ``reader`` (prefetches, and any they start) has
    ended: whatever it fetches ahead without being asked is in the store's log then."""
    while pending := [t for t in reader._tasks if not t.done()]:
        await asyncio.wait(pending)


@pytest.mark.parametrize("columns", [None, ["i", "b"]])
async def test_prefetch_is_bounded(multi_stripe: tuple[pathlib.Path, pa.Table],
                                   monkeypatch: pytest.MonkeyPatch,
                                   columns: list[str] | None) -> None:
    monkeypatch.setattr(aorc.read.reader, "GROUP_BYTES", 1)  # one stripe per group
    monkeypatch.setattr(aorc.read.reader, "WHOLE_READ_BYTES", 0)
    path, table = multi_stripe
    store = RecordingStore(path.read_bytes())
    async with aorc.open_reader(store) as reader:
        stripes = reader.stripes
        async with contextlib.aclosing(reader.iter_batches(columns, 10**9)) as batches:
            first = await anext(batches)
            await settle(reader)  # let any prefetch run to its end
            assert first.num_rows == stripes[0].num_rows
            touched = {i for o, n in store.log for i, s in enumerate(stripes)
                       if o < s.offset + s.index_length + s.data_length
                       and o + n > s.offset + s.index_length}
            assert touched == {0, 1}  # the current stripe and one ahead
    assert not store.closed  # a store passed in is the caller's to close
    await store.close()


async def test_early_break_cancels_prefetch(multi_stripe: tuple[pathlib.Path, pa.Table],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(aorc.read.reader, "GROUP_BYTES", 1)
    monkeypatch.setattr(aorc.read.reader, "WHOLE_READ_BYTES", 0)
    path, _ = multi_stripe
    store = RecordingStore(path.read_bytes(), hold=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        async with aorc.open_reader(store) as reader:
            async for _ in reader.iter_batches():
                assert store.in_flight == 1  # the next stripe is being fetched
                break
        assert store.in_flight == 0  # closing the reader cancelled it
        await store.close()


async def test_closing_the_iterator_cancels_prefetch(
        multi_stripe: tuple[pathlib.Path, pa.Table], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(aorc.read.reader, "GROUP_BYTES", 1)
    monkeypatch.setattr(aorc.read.reader, "WHOLE_READ_BYTES", 0)
    path, _ = multi_stripe
    store = RecordingStore(path.read_bytes(), hold=True)
    async with aorc.open_reader(store) as reader:
        async with contextlib.aclosing(reader.iter_batches()) as batches:
            await anext(batches)
            assert store.in_flight == 1  # the next stripe is being fetched
        assert store.in_flight == 0  # closing the iterator cancelled it; the reader is open
        store.release.set()
        assert (await reader.read(["i"], stripes=[0])).num_rows == reader.stripes[0].num_rows
    await store.close()


async def test_event_loop_stays_responsive(heavy_file: tuple[pathlib.Path, pa.Table],
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Each stripe is decoded in a worker thread while the event loop keeps running: a
    decode step only starts once the loop has run a callback the step scheduled (counted
    in events, not milliseconds). Decoding on the loop's thread, or a loop blocked while a
    worker decodes, fails the test."""
    path, table = heavy_file
    assert path.stat().st_size > 5_000_000
    loop = asyncio.get_running_loop()
    loop_thread = threading.get_ident()
    original = aorc.read.plan.decode_level  # one column of one stripe (a decode step)
    steps: list[str] = []

    def decode(*args: Any) -> Any:
        if threading.get_ident() == loop_thread:
            steps.append("decoded on the event loop's thread")
            return original(*args)
        answered = threading.Event()
        loop.call_soon_threadsafe(answered.set)  # runs only if the loop is not blocked
        # (the bound only turns a blocked loop into a failure instead of a hang)
        steps.append("loop ran during decode" if answered.wait(120) else "loop blocked")
        return original(*args)

    monkeypatch.setattr(aorc.read.plan, "decode_level", decode)
    got = await aorc.read_table(path)
    assert got.equals(table)
    assert steps and set(steps) == {"loop ran during decode"}, steps


# --------------------------------------------------------------------------- errors

async def test_corrupt_stripe_error_names_file_and_stripe(
        multi_stripe: tuple[pathlib.Path, pa.Table], tmp_path: pathlib.Path) -> None:
    path, _ = multi_stripe
    data = bytearray(path.read_bytes())
    async with aorc.open_reader(path) as reader:
        s = reader.stripes[1]
    start = s.offset + s.index_length
    data[start:start + s.data_length] = b"\xff" * s.data_length
    bad = tmp_path / "bad.orc"
    bad.write_bytes(bytes(data))
    async with aorc.open_reader(bad) as reader:
        batches = reader.iter_batches()
        first = await anext(batches)  # stripe 0 is intact
        assert first.num_rows == reader.stripes[0].num_rows
        with pytest.raises(CorruptFileError) as info:
            async for _ in batches:
                pass
    message = str(info.value)
    assert str(bad) in message and "stripe 1" in message


async def test_corrupt_footer_is_reported_in_stripe_order(
        multi_stripe: tuple[pathlib.Path, pa.Table], tmp_path: pathlib.Path) -> None:
    path, table = multi_stripe
    data = bytearray(path.read_bytes())
    async with aorc.open_reader(path) as reader:
        stripes = reader.stripes
    s = stripes[2]
    footer = s.offset + s.index_length + s.data_length
    data[footer:footer + s.footer_length] = b"\xff" * s.footer_length
    bad = tmp_path / "bad_footer.orc"
    bad.write_bytes(bytes(data))
    rows = 0
    with pytest.raises(CorruptFileError, match="stripe 2") as info:
        async with aorc.open_reader(bad) as reader:
            async for batch in reader.iter_batches():
                rows += batch.num_rows
    assert rows == stripes[0].num_rows + stripes[1].num_rows  # earlier stripes delivered
    assert "bad_footer.orc" in str(info.value)


async def test_stray_decoder_exceptions_become_corrupt_file_errors(
        multi_stripe: tuple[pathlib.Path, pa.Table], monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: object) -> pa.RecordBatch:
        raise IndexError("index 7 is out of bounds")

    monkeypatch.setattr(aorc.read.plan, "decode_level", broken)  # the stripe decoder
    path, _ = multi_stripe
    with pytest.raises(CorruptFileError, match=r"stripe 0: IndexError") as info:
        await aorc.read_table(path)
    assert isinstance(info.value.__cause__, IndexError)
    assert str(path) in str(info.value)


async def test_truncated_file(multi_stripe: tuple[pathlib.Path, pa.Table],
                              tmp_path: pathlib.Path) -> None:
    path, _ = multi_stripe
    data = path.read_bytes()
    bad = tmp_path / "cut.orc"
    bad.write_bytes(data[:100] + data[-20_000:])
    with pytest.raises(CorruptFileError, match="cut.orc"):
        await aorc.read_table(bad)
