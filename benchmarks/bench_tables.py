"""The benchmark tables of issue 14, shared by the read and write benchmarks.

Every table is built from a seeded generator, so two runs (and two scripts) see the same
rows. :data:`TABLES` maps a table's name to (default rows, builder, aorc codec).

| name | rows | content |
|---|---|---|
| ``events`` | 2M | the mixed table of :func:`build_table` (zstd) |
| ``numeric200`` | 250k | 200 numeric columns: int32, int64, float32, float64 in turn |
| ``strings`` | 1M | dictionary (100 values), direct (UUID-like), URLs |
| ``nested`` | 250k | list<int64>, struct<a:int32,b:string>, map<string,double> |
| ``temporal`` | 1M | timestamp, date, decimal(18,4), boolean |
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

sys.path.insert(0, str(Path(__file__).resolve().parent))

__all__ = ["TABLES", "build", "build_table", "pyorc_rows", "pyorc_schema"]

LOW_CARDINALITY = 100
NULL_RATE = 0.10


def _uuid_strings(rng: np.random.Generator, n: int) -> pa.Array:
    """n random UUID-like strings (36 characters), built without a Python loop."""
    hex_digits = np.frombuffer(b"0123456789abcdef", np.uint8)
    raw = rng.integers(0, 256, (n, 16), dtype=np.uint8)
    nibbles = np.empty((n, 32), np.uint8)
    nibbles[:, 0::2] = hex_digits[raw >> 4]
    nibbles[:, 1::2] = hex_digits[raw & 15]
    text = np.full((n, 36), ord("-"), np.uint8)
    for start, stop, at in ((0, 8, 0), (8, 12, 9), (12, 16, 14), (16, 20, 19), (20, 32, 24)):
        text[:, at : at + stop - start] = nibbles[:, start:stop]
    offsets = pa.py_buffer((np.arange(n + 1, dtype=np.int32) * 36).tobytes())
    return pa.StringArray.from_buffers(n, offsets, pa.py_buffer(text.tobytes()))


def _with_nulls(rng: np.random.Generator, values: np.ndarray, t: pa.DataType) -> pa.Array:
    return pa.array(values, t, mask=rng.random(len(values)) < NULL_RATE)


def build_table(rows: int, seed: int = 0) -> pa.Table:
    """The benchmark table: ``rows`` rows of mixed column types.

    Args:
        rows: the number of rows.
        seed: the random seed.

    Returns:
        The table.
    """
    rng = np.random.default_rng(seed)
    words = pa.array([f"category-{i:03d}-{'x' * (i % 7)}" for i in range(LOW_CARDINALITY)])
    categories = pa.DictionaryArray.from_arrays(
        pa.array(
            rng.integers(0, LOW_CARDINALITY, rows, dtype=np.int32),
            mask=rng.random(rows) < NULL_RATE,
        ),
        words,
    ).dictionary_decode()
    seconds = rng.integers(946_684_800, 1_893_456_000, rows)  # 2000 .. 2030
    columns: dict[str, pa.Array] = {
        "id": pa.array(np.arange(rows, dtype=np.int64)),
        "small_int": pa.array(rng.integers(0, 1000, rows, dtype=np.int32)),
        "rand_int32": pa.array(rng.integers(-(2**31), 2**31, rows, dtype=np.int32)),
        "rand_int64": _with_nulls(rng, rng.integers(-(2**63), 2**63 - 1, rows), pa.int64()),
        "ts": _with_nulls(
            rng, seconds * 10**9 + rng.integers(0, 1000, rows) * 10**6, pa.timestamp("ns")
        ),
        "category": categories,
        "uuid": _uuid_strings(rng, rows),
        "value": _with_nulls(rng, rng.standard_normal(rows) * 1000, pa.float64()),
        "flag": pa.array(rng.random(rows) < 0.3),
    }
    return pa.table(columns)


def _numeric200(rows: int, seed: int = 0) -> pa.Table:
    """200 numeric columns (int32, int64, float32, float64 in turn), 5% nulls in every 4th."""
    rng = np.random.default_rng(seed)
    columns: dict[str, pa.Array] = {}
    for i in range(200):
        kind = i % 4
        if kind == 0:
            values: np.ndarray = rng.integers(0, 10_000, rows, dtype=np.int32)
        elif kind == 1:
            values = np.cumsum(rng.integers(0, 100, rows, dtype=np.int64))
        elif kind == 2:
            values = rng.standard_normal(rows).astype(np.float32)
        else:
            values = rng.standard_normal(rows) * 1e6
        mask = rng.random(rows) < 0.05 if i % 4 == 3 else None
        columns[f"c{i:03d}"] = pa.array(values, mask=mask)
    return pa.table(columns)


def _urls(rng: np.random.Generator, n: int) -> pa.Array:
    hosts = np.array([f"https://www.example-{i}.com/" for i in range(50)], dtype=object)
    paths = np.array(["products/", "search?q=", "blog/2024/", "user/", "cart/item-"],
                     dtype=object)
    ids = rng.integers(0, 10_000_000, n).astype(str).astype(object)
    urls = hosts[rng.integers(0, len(hosts), n)] + paths[rng.integers(0, len(paths), n)] + ids
    return pa.array(urls, pa.string())


def _strings(rows: int, seed: int = 0) -> pa.Table:
    """Dictionary-encoded, directly encoded and URL strings."""
    rng = np.random.default_rng(seed)
    words = pa.array([f"word-{i:03d}" for i in range(100)])
    dictionary = pa.DictionaryArray.from_arrays(
        pa.array(rng.integers(0, 100, rows, dtype=np.int32), mask=rng.random(rows) < 0.1),
        words).dictionary_decode()
    return pa.table({"category": dictionary, "uuid": _uuid_strings(rng, rows),
                     "url": _urls(rng, rows)})


def _nested(rows: int, seed: int = 0) -> pa.Table:
    """A list, a struct and a map column (0..7 entries per list and map)."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(0, 8, rows)
    offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int32)
    total = int(offsets[-1])
    items = pa.ListArray.from_arrays(pa.array(offsets), pa.array(rng.integers(0, 1 << 40, total)))
    words = np.array([f"key-{i}" for i in range(20)], dtype=object)
    struct = pa.StructArray.from_arrays(
        [pa.array(rng.integers(0, 1000, rows, dtype=np.int32)),
         pa.array(words[rng.integers(0, 20, rows)], pa.string())], names=["a", "b"])
    map_lengths = rng.integers(0, 8, rows)
    map_offsets = np.concatenate(([0], np.cumsum(map_lengths))).astype(np.int32)
    map_total = int(map_offsets[-1])
    attrs = pa.MapArray.from_arrays(
        pa.array(map_offsets), pa.array(words[rng.integers(0, 20, map_total)], pa.string()),
        pa.array(rng.standard_normal(map_total)))
    return pa.table({"items": items, "pair": struct, "attrs": attrs})


def _temporal(rows: int, seed: int = 0) -> pa.Table:
    """Timestamps (microseconds), dates, decimal(18, 4) and booleans, 10% nulls."""
    rng = np.random.default_rng(seed)
    seconds = rng.integers(946_684_800, 1_893_456_000, rows)
    ts = _with_nulls(rng, seconds * 10**6 + rng.integers(0, 10**6, rows), pa.timestamp("us"))
    days = _with_nulls(rng, rng.integers(0, 20_000, rows).astype(np.int32), pa.date32())
    units = rng.integers(-(10**12), 10**12, rows)
    whole = pa.array(units, pa.int64()).cast(pa.decimal128(19, 0))
    dec = pa.Array.from_buffers(pa.decimal128(18, 4), rows, whole.buffers())  # units of 1e-4
    flags = pa.array(rng.random(rows) < 0.5, mask=rng.random(rows) < 0.1)
    return pa.table({"ts": ts, "day": days, "amount": dec, "flag": flags})


#: name -> (default rows, builder(rows, seed), codec).
TABLES: dict[str, tuple[int, Callable[[int, int], pa.Table], str]] = {
    "events": (2_000_000, build_table, "zstd"),
    "numeric200": (250_000, _numeric200, "zstd"),
    "strings": (1_000_000, _strings, "zstd"),
    "nested": (250_000, _nested, "zstd"),
    "temporal": (1_000_000, _temporal, "zstd"),
}


def build(name: str, scale: float = 1.0, seed: int = 0) -> pa.Table:
    """Table ``name`` with its default rows times ``scale``."""
    rows, builder, _ = TABLES[name]
    return builder(max(1, int(rows * scale)), seed)


def pyorc_schema(table: pa.Table) -> str:
    """The ORC type string of ``table`` (as aorc maps Arrow types)."""
    from aorc.format.types import from_arrow_schema, type_string

    return str(type_string(from_arrow_schema(table.schema)))


def pyorc_rows(table: pa.Table) -> list[tuple[Any, ...]]:
    """The rows of ``table`` as pyorc writes them (maps as dicts, structs as tuples)."""
    columns = []
    for field, column in zip(table.schema, table.columns, strict=True):
        values = column.to_pylist()
        if pa.types.is_map(field.type):
            values = [None if v is None else dict(v) for v in values]
        elif pa.types.is_struct(field.type):
            values = [None if v is None else tuple(v.values()) for v in values]
        columns.append(values)
    return list(zip(*columns, strict=True))
