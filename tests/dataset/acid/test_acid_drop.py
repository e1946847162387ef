"""Dropping rows out of columns (:mod:`aorc.dataset.acid.drop`) against Arrow's own filter
kernel, for every kind of column: the run-by-run kernels (fixed-width values, strings and
binaries with 32- and 64-bit offsets, sliced arrays) and Arrow's filter for the rest (nulls,
booleans, nested and dictionary columns)."""

from __future__ import annotations

import datetime
import decimal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from aorc.dataset.acid import _drop
from aorc.dataset.acid.drop import drop_rows, dropped, filter_columns

N = 3000


def columns() -> dict[str, pa.Array]:
    rng = np.random.default_rng(3)
    words = [f"w{'x' * int(i % 13)}{i}" for i in rng.integers(0, 10_000, N)]
    return {
        "int8": pa.array(rng.integers(-100, 100, N), pa.int8()),
        "uint16": pa.array(rng.integers(0, 60_000, N), pa.uint16()),
        "int32": pa.array(rng.integers(-2**31, 2**31, N), pa.int32()),
        "int64": pa.array(rng.integers(-2**62, 2**62, N)),
        "float32": pa.array(rng.standard_normal(N), pa.float32()),
        "float64": pa.array(rng.standard_normal(N)),
        "timestamp": pa.array(rng.integers(0, 2**60, N), pa.timestamp("ns")),
        "date": pa.array([datetime.date(2000, 1, 1) + datetime.timedelta(int(d))
                          for d in rng.integers(0, 9000, N)]),
        "decimal": pa.array([decimal.Decimal(int(v)) / 100 for v in rng.integers(-10**9,
                                                                                10**9, N)],
                            pa.decimal128(12, 2)),
        "fixed": pa.array([bytes([i % 256] * 5) for i in range(N)], pa.binary(5)),
        "string": pa.array(words),
        "empty strings": pa.array([""] * N),
        "large_string": pa.array(words, pa.large_string()),
        "binary": pa.array([w.encode() for w in words], pa.binary()),
        "large_binary": pa.array([w.encode() for w in words], pa.large_binary()),
        "nulls": pa.array([None if i % 7 == 0 else i for i in range(N)], pa.int64()),
        "string nulls": pa.array([None if i % 5 == 0 else w for i, w in enumerate(words)]),
        "bool": pa.array(rng.integers(0, 2, N).astype(bool)),
        "list": pa.array([[i, i + 1] for i in range(N)]),
        "struct": pa.array([{"a": i, "b": str(i)} for i in range(N)]),
        "dictionary": pa.array(words).dictionary_encode(),
    }


def chunked(arr: pa.Array) -> pa.ChunkedArray:
    """Three chunks, two of them slices (non-zero offsets) of a larger array."""
    big = pa.concat_arrays([arr, arr])
    return pa.chunked_array([big.slice(17, 1000), arr.slice(1000, 1200), big.slice(N + 2200,
                                                                                 800)])


@pytest.mark.parametrize("name", list(columns()))
@pytest.mark.parametrize("share", [0.0, 0.01, 0.5, 1.0])
def test_drop_rows_matches_arrow_filter(name: str, share: float) -> None:
    rng = np.random.default_rng(int(share * 100))
    column = chunked(columns()[name])
    n = len(column)
    gone = np.sort(rng.choice(n, int(n * share), replace=False)).astype(np.int64)
    if 0 < share < 1:  # a chunk that loses no row is kept as it is
        gone = gone[(gone < 1000) | (gone >= 2200)]
    keep = np.ones(n, dtype=bool)
    keep[gone] = False
    want = pc.filter(column, pa.array(keep))
    got = drop_rows(column, gone)
    assert got.type == column.type
    assert got.to_pylist() == want.to_pylist()
    for part in got.chunks:
        part.validate(full=True)
    if 0 < share < 1:
        assert got.chunk(1) is column.chunk(1) or got.chunk(1).equals(column.chunk(1))


def test_filter_columns_and_dropped_positions() -> None:
    cols = columns()
    mask = pa.array([None if i % 11 == 0 else bool(i % 3) for i in range(N)])
    gone = dropped(pa.chunked_array([mask.slice(0, 100), mask.slice(100)]))
    assert gone.tolist() == [i for i in range(N) if i % 11 == 0 or i % 3 == 0]
    names = ["int64", "string", "nulls", "struct"]
    given = [pa.chunked_array([cols[n]]) for n in names]
    schema = pa.schema([(n, cols[n].type) for n in names])
    table = filter_columns(given, schema, gone)
    assert given == []  # let go
    want = pa.table([cols[n] for n in names], schema=schema).filter(mask)
    assert table.to_pylist() == want.to_pylist()


def test_kernels_refuse_bad_positions() -> None:
    src = np.arange(10, dtype=np.int64).view(np.uint8)
    with pytest.raises(ValueError, match="sorted"):
        _drop.drop_fixed(src, np.empty(64, np.uint8), 8, np.array([5, 2], np.int64))
    with pytest.raises(ValueError, match="sorted"):
        _drop.drop_fixed(src, np.empty(72, np.uint8), 8, np.array([10], np.int64))
    with pytest.raises(ValueError, match="fit"):
        _drop.drop_fixed(src, np.empty(8, np.uint8), 8, np.array([1], np.int64))
    offsets = np.array([0, 2, 4, 6], np.int32)
    with pytest.raises(ValueError, match="sorted"):
        _drop.binary_kept_bytes(offsets, np.array([1, 1], np.int64))
    with pytest.raises(ValueError, match="past the data"):
        _drop.drop_binary(offsets, np.zeros(3, np.uint8), np.empty(3, np.int32),
                          np.empty(4, np.uint8), np.array([0], np.int64))
    descending = np.array([0, 6, 4, 2], np.int32)  # damaged offsets: refused, not read
    with pytest.raises(ValueError, match="fit|ascending"):
        _drop.drop_binary(descending, np.zeros(6, np.uint8), np.empty(3, np.int32),
                          np.empty(8, np.uint8), np.array([0], np.int64))
