"""The tables of the speed benchmarks (issue 14), built from seeded random generators.

Each builder takes a row count and returns an Arrow table; :data:`TABLES` names them with
their default row counts. ``events`` is :func:`bench_read.build_table`'s mixed table.
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal

import numpy as np
import pyarrow as pa

__all__ = ["TABLES", "numeric_table", "nested_table", "strings_table", "temporal_table"]


def numeric_table(rows: int, seed: int = 1, width: int = 200) -> pa.Table:
    """``width`` numeric columns (int32, int64, float64, float32 in turn), 5% nulls."""
    rng = np.random.default_rng(seed)
    columns: dict[str, pa.Array] = {}
    for i in range(width):
        mask = rng.random(rows) < 0.05
        kind = i % 4
        if kind == 0:
            values: pa.Array = pa.array(rng.integers(-1000, 1000, rows, dtype=np.int32),
                                        mask=mask)
        elif kind == 1:
            values = pa.array(np.cumsum(rng.integers(0, 50, rows)), pa.int64(), mask=mask)
        elif kind == 2:
            values = pa.array(rng.standard_normal(rows), mask=mask)
        else:
            values = pa.array(rng.standard_normal(rows).astype(np.float32), mask=mask)
        columns[f"c{i:03d}"] = values
    return pa.table(columns)


def strings_table(rows: int, seed: int = 2) -> pa.Table:
    """Low-cardinality (dictionary), random (direct) and URL-like strings."""
    rng = np.random.default_rng(seed)
    words = np.array([f"word-{i:04d}" for i in range(500)], dtype=object)
    hosts = np.array([f"https://host{i}.example.com" for i in range(50)], dtype=object)
    paths = rng.integers(0, 10**9, rows)
    urls = [f"{h}/items/{p}?ref={p % 97}" for h, p in
            zip(hosts[rng.integers(0, 50, rows)], paths, strict=True)]
    direct = [f"{v:x}" * (1 + v % 3) for v in rng.integers(0, 2**40, rows)]
    return pa.table({
        "dict": pa.array(words[rng.integers(0, 500, rows)].tolist(),
                         mask=rng.random(rows) < 0.1),
        "direct": pa.array(direct),
        "url": pa.array(urls),
    })


def nested_table(rows: int, seed: int = 3) -> pa.Table:
    """A list of int64, a struct of (int32, string, double) and a map string -> int32."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(0, 6, rows)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    items = pa.array(rng.integers(0, 10**6, int(offsets[-1])))
    lists = pa.ListArray.from_arrays(pa.array(offsets), items)
    struct = pa.StructArray.from_arrays(
        [pa.array(rng.integers(0, 100, rows, dtype=np.int32)),
         pa.array([f"s{v}" for v in rng.integers(0, 1000, rows)]),
         pa.array(rng.standard_normal(rows))], names=["a", "b", "c"])
    map_lengths = rng.integers(0, 4, rows)
    map_offsets = np.concatenate([[0], np.cumsum(map_lengths)]).astype(np.int32)
    n = int(map_offsets[-1])
    keys = pa.array([f"k{v}" for v in rng.integers(0, 20, n)])
    maps = pa.MapArray.from_arrays(pa.array(map_offsets), keys,
                                   pa.array(rng.integers(0, 1000, n, dtype=np.int32)))
    return pa.table({"list": lists, "struct": struct, "map": maps})


def temporal_table(rows: int, seed: int = 4) -> pa.Table:
    """Timestamps (ns), dates, decimal(18, 4), decimal(38, 6) and booleans."""
    rng = np.random.default_rng(seed)
    seconds = rng.integers(946_684_800, 1_893_456_000, rows)
    small = rng.integers(-10**12, 10**12, rows)
    big = [Decimal(int(v)).scaleb(-6) for v in rng.integers(-10**15, 10**15, rows)]
    return pa.table({
        "ts": pa.array(seconds * 10**9 + rng.integers(0, 10**9, rows), pa.timestamp("ns")),
        "date": pa.array((seconds // 86400).astype(np.int32), pa.date32()),
        "dec18": pa.array([Decimal(int(v)).scaleb(-4) for v in small], pa.decimal128(18, 4)),
        "dec38": pa.array(big, pa.decimal128(38, 6)),
        "flag": pa.array(rng.random(rows) < 0.3, mask=rng.random(rows) < 0.05),
    })


#: name -> (builder, default rows, codec) of the benchmark tables besides ``events``.
TABLES: dict[str, tuple[Callable[[int], pa.Table], int, str]] = {
    "numeric200": (numeric_table, 250_000, "zstd"),
    "strings": (strings_table, 1_000_000, "zstd"),
    "nested": (nested_table, 250_000, "zstd"),
    "temporal": (temporal_table, 1_000_000, "zstd"),
}
