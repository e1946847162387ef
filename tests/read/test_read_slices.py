"""Streaming decodes a stripe in row slices (issue 20, item 3): the slices are right.

``iter_batches`` decodes a stripe of more rows than ``batch_size`` slice by slice, every
column decoder reading its streams on from where the previous slice stopped. Random tables of
every type ORC stores (nulls at every level, nested lists/maps/structs, dictionary and direct
strings, timestamps, decimals of both widths, RLE v1 and v2) are streamed in batches whose
boundaries fall in the middle of runs, literal groups, present bytes and list elements, and
compared with pyarrow.orc and with aorc's whole read (which decodes whole stripes).
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.orc as pa_orc
import pytest
from helpers.compare import assert_tables_equal
from helpers.long_stripe import expected_columns, long_stripe_file
from helpers.random_tables import random_table

import aorc
from aorc.format.codec import _encode, rle
from aorc.read import pushdown
from aorc.read import slices as aorc_slices

ROWS = 30_000


@pytest.fixture(autouse=True)
def small_slices(monkeypatch: pytest.MonkeyPatch) -> None:
    """Slices of one batch, however small (streams decode at least 65,536 rows at a time)."""
    monkeypatch.setattr(aorc_slices, "MIN_SLICE_ROWS", 1)


@functools.cache
def _table(seed: int) -> pa.Table:
    return random_table(seed, ROWS)


async def _stream(path: Path | bytes, batch_size: int, **options: Any) -> list[pa.RecordBatch]:
    reader_options = {k: options.pop(k) for k in ("timestamp_unit", "read_dictionary")
                      if k in options}
    async with aorc.open_reader(path, **reader_options) as reader:
        return [b async for b in reader.iter_batches(batch_size=batch_size, **options)]


async def _whole(path: Path | bytes, **options: Any) -> pa.Table:
    async with aorc.open_reader(path, **options) as reader:
        return await reader.read()


def _joined(batches: list[pa.RecordBatch], batch_size: int) -> pa.Table:
    assert batches
    assert all(0 < b.num_rows <= batch_size for b in batches)
    return pa.Table.from_batches(batches)


@pytest.mark.parametrize(("codec", "version", "dictionary", "seed"), [
    ("zstd", "0.12", 1.0, 0),
    ("uncompressed", "0.12", 0.0, 1),
    ("zlib", "0.11", 1.0, 2),
])
@pytest.mark.parametrize("threads", [1, 2])
async def test_pyarrow_written_stripes_stream_in_slices(
        tmp_path: Path, codec: str, version: str, dictionary: float, seed: int,
        threads: int) -> None:
    table = _table(seed)
    path = tmp_path / "t.orc"
    pa_orc.write_table(table, path, compression=codec, file_version=version,
                       dictionary_key_size_threshold=dictionary, row_index_stride=5000)
    assert pa_orc.ORCFile(path).nstripes == 1  # one stripe of 30,000 rows
    batches = await _stream(path, 3919, use_threads=threads)  # boundaries inside runs
    assert len(batches) == -(-ROWS // 3919)
    got = _joined(batches, 3919)
    assert_tables_equal(got, pa_orc.read_table(path), what="vs pyarrow.orc")
    assert_tables_equal(got, table, what="vs the written table")


@pytest.mark.parametrize("batch_size", [1, 997, 40_000])
async def test_aorc_written_stripes_stream_in_slices(tmp_path: Path, batch_size: int) -> None:
    table = _table(3) if batch_size > 1 else _table(3).slice(0, 400)
    path = tmp_path / "t.orc"
    await aorc.write_table(table, path, stripe_size=1 << 20, row_index_stride=1000)
    got = _joined(await _stream(path, batch_size), batch_size)
    assert_tables_equal(got, await _whole(path), what="vs the whole read")
    assert got.num_rows == table.num_rows


async def test_a_union_streams_in_slices(tmp_path: Path) -> None:
    n = 20_000
    types = pa.array([i % 3 for i in range(n)], pa.int8())
    offsets = pa.array([i // 3 for i in range(n)], pa.int32())
    children = [pa.array([i if i % 7 else None for i in range(n)], pa.int64()),
                pa.array([f"s{i}" for i in range(n)]),
                pa.array([i % 2 == 0 for i in range(n)])]
    union = pa.UnionArray.from_dense(types, offsets, children, ["a", "b", "c"])
    table = pa.table({"u": union, "i": pa.array(range(n))})
    path = tmp_path / "u.orc"
    await aorc.write_table(table, path)
    got = _joined(await _stream(path, 333), 333)
    assert_tables_equal(got, await _whole(path), what="vs the whole read")


@pytest.mark.parametrize("options", [
    {"read_dictionary": ["str", "str_dict", "struct.b"]},
    {"timestamp_unit": "us"},
    {"columns": ["nested", "i32", "struct.b"]},
])
async def test_reader_options_apply_to_slices(tmp_path: Path, options: dict[str, Any]) -> None:
    table = _table(4)
    path = tmp_path / "t.orc"
    pa_orc.write_table(table, path, dictionary_key_size_threshold=1.0)
    reader_options = {k: v for k, v in options.items() if k != "columns"}
    got = _joined(await _stream(path, 4999, **dict(options)), 4999)
    async with aorc.open_reader(path, **reader_options) as reader:
        expected = await reader.read(columns=options.get("columns"))
    assert got.schema == expected.schema
    if "read_dictionary" in options:  # each batch has its own dictionary: compare values
        async with aorc.open_reader(path) as reader:
            plain = await reader.read()
        assert_tables_equal(got.cast(plain.schema), plain, what="vs the whole read")
    else:
        assert_tables_equal(got, expected, what="vs the whole read")


@pytest.mark.parametrize("minimum", [1, 65536])
async def test_a_long_stripe_streams_in_slices(monkeypatch: pytest.MonkeyPatch,
                                               minimum: int) -> None:
    # Slices of one batch, or of 65,536 rows cut into batches.
    monkeypatch.setattr(aorc_slices, "MIN_SLICE_ROWS", minimum)
    data = long_stripe_file(100_003)
    batches = await _stream(data, 4096)
    assert [b.num_rows for b in batches[-2:]] == [4096, 100_003 % 4096]
    got = _joined(batches, 4096)
    expected = pa_orc.read_table(pa.BufferReader(data))
    assert got.equals(expected)
    want = expected_columns(0, 100_003)
    assert got.column("a").to_numpy().tolist() == want["a"].tolist()
    assert got.column("b").is_valid().to_numpy(zero_copy_only=False).tolist() == \
        want["b_valid"].tolist()


@pytest.mark.parametrize(("columns", "filters"), [
    (None, [("i32", ">", 0)]),
    (["i64", "struct", "nested"], [("i32", ">", 0), ("str_dict", "!=", "a")]),
    (["i32"], [("f64", "<", 0.5)]),
])
@pytest.mark.parametrize("threads", [1, 2])
async def test_a_filtered_stripe_read_whole_streams_in_slices(
        tmp_path: Path, columns: list[str] | None, filters: Any, threads: int) -> None:
    # No row index: the stripe is read whole and decoded in slices, filter columns and
    # selected columns each moving on slice by slice.
    table = _table(6)
    path = tmp_path / "t.orc"
    await aorc.write_table(table, path, row_index_stride=0)
    async with aorc.open_reader(path) as reader:
        assert reader.row_index_stride == 0
        batches = [b async for b in reader.iter_batches(
            columns, batch_size=2999, filters=filters, use_threads=threads)]
        whole = await reader.read(columns, filters=filters)
        stats = reader.scan_stats
    got = pa.Table.from_batches(batches, schema=whole.schema)
    assert 0 < got.num_rows < ROWS
    assert_tables_equal(got, whole, what="vs the whole filtered read")
    assert stats.rows_read == 2 * ROWS and stats.rows_returned == 2 * got.num_rows


async def test_a_filtered_long_stripe_streams_in_slices() -> None:
    data = long_stripe_file(200_001)
    async with aorc.open_reader(data) as reader:
        got = pa.Table.from_batches([b async for b in reader.iter_batches(
            ["a"], batch_size=4096, filters=[("a", ">=", 150_000)])])
    assert got.column("a").to_pylist() == list(range(150_000, 200_001))


async def test_a_stream_too_short_for_its_rows_is_corrupt_in_slices() -> None:
    # Column a's stream ends after 300,000 of 1,000,000 rows: the batches before come out,
    # then a CorruptFileError naming the stripe and the column (no stray IndexError).
    data = long_stripe_file(1_000_000, a_rows=300_000)
    got = 0
    with pytest.raises(aorc.CorruptFileError, match=r"stripe 0.*column 1 .*DATA"):
        async with aorc.open_reader(data) as reader:
            async for batch in reader.iter_batches(batch_size=65536):
                got += batch.num_rows
    assert 0 < got <= 300_000
    with pytest.raises(aorc.CorruptFileError, match=r"stripe 0.*column 1 "):
        await _whole(data)


@pytest.mark.parametrize("columns", [None, ["i8", "nested", "struct"]])
async def test_runs_of_row_groups_stream_in_slices(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, columns: list[str] | None) -> None:
    # Some row groups pruned: each run of surviving row groups is decoded in slices, its
    # positioned streams from the run's first row group.
    table = _table(5).append_column("k", pa.array(range(ROWS)))
    path = tmp_path / "t.orc"
    pa_orc.write_table(table, path, row_index_stride=1000)
    filters = [("k", "in", [5, 1500, 1501, 7777, 20_000, 21_999, 29_999]), ("i32", "!=", 3)]
    segments: list[tuple[int, int]] = []

    class Segments(pushdown._SegmentStreams):
        def __init__(self, *args: Any) -> None:
            segments.append(args[-2:])
            super().__init__(*args)

    prepared: list[int] = []
    prepare = pushdown.FilteredSlices.prepare

    def spy(self: pushdown.FilteredSlices, rows: int) -> Any:
        prepared.append(rows)
        return prepare(self, rows)

    async with aorc.open_reader(path) as reader:
        with monkeypatch.context() as patch:
            patch.setattr(pushdown, "_SegmentStreams", Segments)
            patch.setattr(pushdown.FilteredSlices, "prepare", spy)
            slices = [b async for b in reader.iter_batches(columns, batch_size=333,
                                                           filters=filters)]
        stats = reader.scan_stats
        whole = await reader.read(columns, filters=filters)
    assert 0 < stats.row_groups_read < stats.row_groups_total
    assert segments == [(0, 2), (7, 8), (20, 22), (29, 30)]  # runs, each in slices:
    assert len(prepared) == 7 + 4 + 7 + 4  # 2,000 and 1,000 rows in slices of 333
    got = pa.Table.from_batches(slices, schema=whole.schema)
    assert_tables_equal(got, whole, what="vs the whole filtered read")
    keys = table.filter(pc.is_in(table["k"], pa.array([5, 1500, 1501, 7777, 20_000, 21_999,
                                                       29_999])))
    assert got.num_rows == keys.filter(pc.not_equal(keys["i32"], 3)).num_rows > 0


@pytest.mark.parametrize("kind", ["v1", "v2", "byte", "bool", "varint128"])
def test_resumable_kernels_continue_where_they_stopped(kind: str) -> None:
    # Pieces of every size from 1 to 700 rows, one after the other, give the whole stream.
    rng = np.random.default_rng(11)
    n = 20_000
    shapes = [rng.integers(-5, 5, n), np.repeat(rng.integers(-(2**40), 2**40, 40), 500),
              np.arange(n) * 3, rng.integers(0, 2, n)]
    values = np.concatenate([shape[rng.permutation(n)][: n // 4] if i % 2 else shape[: n // 4]
                             for i, shape in enumerate(shapes)]).astype(np.int64)
    if kind == "v1":
        data = _encode.write_int_rle_v1(values, True)
    elif kind == "v2":
        data = rle.write_int_rle_v2(values, True)
    elif kind == "byte":
        values = values.astype(np.int8)
        data = _encode.write_byte_rle(values)
    elif kind == "bool":
        values = (values & 1).astype(np.bool_)
        data = _encode.write_bool_rle(values)
    else:
        words = np.stack([values.view(np.uint64), (values >> 63).view(np.uint64)], axis=1)
        data = _encode.write_varint128(words)
    offset, skip, at, pieces = 0, 0, 0, []
    while at < len(values):
        size = int(min(rng.integers(1, 700), len(values) - at))
        if kind in ("v1", "v2"):
            got, offset, skip = rle.decode_ints_from(data, size, True, int(kind[1]), offset,
                                                     skip)
        elif kind == "byte":
            got, offset, skip = rle.read_byte_rle_from(data, size, offset, skip)
        elif kind == "bool":
            got, offset, skip = rle.read_bool_rle_from(data, size, offset, skip)
        else:
            got, offset = rle.read_varint128_from(data, size, offset)
        pieces.append(got)
        at += size
    joined = np.concatenate(pieces)
    if kind == "varint128":
        assert np.array_equal(joined, words)
    else:
        assert np.array_equal(joined, values)
