"""aorc.polars.predicate: what maps, what is dropped, and -- over seeded random predicates --
that the translation never drops a row Polars keeps and scans stay exact."""

from __future__ import annotations

import datetime
import decimal
import random
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pyarrow as pa
import pytest

import aorc.sync
from aorc.polars import scan_orc
from aorc.polars.predicate import to_filters

SCHEMA = pl.Schema({"i": pl.Int64(), "s32": pl.Int32(), "f": pl.Float64(), "s": pl.String(),
                    "b": pl.Boolean(), "d": pl.Date(), "t": pl.Datetime("ns"),
                    "tz": pl.Datetime("ns", "UTC"), "m": pl.Decimal(10, 2),
                    "l": pl.List(pl.Int64())})


@pytest.mark.parametrize(("expr", "expected"), [
    (pl.col("i") > 3, [[("i", ">", 3)]]),
    (pl.lit(3) > pl.col("i"), [[("i", "<", 3)]]),
    ((pl.col("i") >= 1) & (pl.col("s") == "x"), [[("i", ">=", 1), ("s", "==", "x")]]),
    ((pl.col("i") < 1) | pl.col("s").is_null(), [[("i", "<", 1)], [("s", "is null")]]),
    (~((pl.col("i") < 1) | pl.col("s").is_null()),
     [[("i", ">=", 1), ("s", "is not null")]]),
    (~(pl.col("i") == 5), [[("i", "!=", 5)]]),
    (pl.col("s").is_in(["a", "b"]), [[("s", "in", ["a", "b"])]]),
    (pl.col("s").is_in(["a", None], nulls_equal=True), [[("s", "in", ["a", None])]]),
    (~pl.col("s").is_in(["a", None]), [[("s", "not in", ["a"])]]),
    (pl.col("i").is_between(2, 5), [[("i", ">=", 2), ("i", "<=", 5)]]),
    (pl.col("i").is_between(2, 5, closed="left"), [[("i", ">=", 2), ("i", "<", 5)]]),
    (~pl.col("i").is_between(2, 5), [[("i", "<", 2)], [("i", ">", 5)]]),
    (pl.col("s32") > 2.5, [[("s32", ">", 2.5)]]),
    (pl.col("f") < 0.5, [[("f", "<", 0.5)]]),
    (pl.col("b") == True, [[("b", "==", True)]]),  # noqa: E712
    (pl.col("d") >= datetime.date(2024, 1, 2), [[("d", ">=", datetime.date(2024, 1, 2))]]),
    (pl.col("m") == decimal.Decimal("1.25"), [[("m", "==", decimal.Decimal("1.25"))]]),
    (pl.col("t") < pl.lit(datetime.datetime(2024, 1, 1)).cast(pl.Datetime("ns")),
     [[("t", "<", np.datetime64(1704067200 * 10**9, "ns"))]]),
    # what maps of an AND is kept; the rest is left to Polars
    ((pl.col("i") > 3) & (pl.col("i") * 2 > 9), [[("i", ">", 3)]]),
])
def test_what_maps(expr: Any, expected: list[list[tuple[Any, ...]]]) -> None:
    assert to_filters(expr, SCHEMA) == expected


@pytest.mark.parametrize("expr", [
    pl.col("i") * 2 > 9,
    (pl.col("i") > 3) | (pl.col("i") * 2 > 9),  # an OR with an unmapped side
    pl.col("f") > 0.5,  # Polars: NaN > 0.5; aorc: NaN compares false
    ~(pl.col("f") < 0.5),
    pl.col("f") == float("nan"),
    pl.col("f").is_in([1.0, float("nan")]),
    pl.col("s").str.contains("x"),
    pl.col("i") == pl.col("s32"),
    pl.col("i") == pl.lit(None, dtype=pl.Int64),
    pl.col("i") == "3",
    pl.col("s") > 3,
    pl.col("tz") < datetime.datetime(2024, 1, 1),  # naive literal, zoned column
    pl.col("l").list.len() > 1,
    pl.col("i").cast(pl.Int8) > 3,  # a narrowing cast changes values
    pl.col("i").cast(pl.Float64) > 3.5,  # int64 -> float64 rounds
    pl.col("nope") > 3,
])
def test_what_does_not_map(expr: Any) -> None:
    assert to_filters(expr, SCHEMA) is None


# --------------------------------------------------------------------------- random

ROWS = 3000


def _table(seed: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    nulls = rng.random(ROWS) < 0.15
    f = rng.normal(size=ROWS)
    f[rng.random(ROWS) < 0.05] = np.nan
    f[rng.random(ROWS) < 0.03] = 0.0
    base = np.datetime64("2024-01-01T00:00:00", "ns")
    return pa.table({
        "row": pa.array(np.arange(ROWS)),
        "i": pa.array(rng.integers(-20, 20, ROWS), mask=nulls),
        "s32": pa.array(rng.integers(-5, 5, ROWS).astype(np.int32)),
        "f": pa.array(f, mask=rng.random(ROWS) < 0.1),
        "s": pa.array([f"k{v}" for v in rng.integers(0, 12, ROWS)],
                      mask=rng.random(ROWS) < 0.1),
        "b": pa.array(rng.random(ROWS) < 0.5, mask=rng.random(ROWS) < 0.1),
        "d": pa.array(np.datetime64("2024-01-01") + rng.integers(0, 30, ROWS),
                      pa.date32()),
        "t": pa.array(base + rng.integers(0, 10**6, ROWS) * 1001, pa.timestamp("ns")),
    })


def _literal(rng: random.Random, column: str) -> Any:
    choices: dict[str, list[Any]] = {
        "i": [-21, -20, -3, 0, 2, 19, 20, 2.5, -0.5],
        "s32": [-5, 0, 4, 3.5],
        "f": [-1.0, 0.0, 0.5, 3, float("nan"), float("inf")],
        "s": ["k0", "k1", "k11", "k5", "a", "z", ""],
        "b": [True, False],
        "d": [datetime.date(2024, 1, d) for d in (1, 5, 15, 30)],
        "t": [datetime.datetime(2024, 1, 1, 0, 0, 0, us) for us in (0, 500, 1000)],
    }
    return rng.choice(choices[column])


def _leaf(rng: random.Random) -> Any:
    column = rng.choice(["i", "s32", "f", "s", "b", "d", "t"])
    col = pl.col(column)
    kind = rng.randrange(8)
    if kind == 0:
        return col.is_null() if rng.random() < 0.5 else col.is_not_null()
    if kind == 1:
        values = [_literal(rng, column) for _ in range(rng.randrange(0, 4))]
        if column in ("i", "s32"):
            values = [int(v) for v in values]
        if column == "f":
            values = [float(v) for v in values]
        if rng.random() < 0.2:
            values.append(None)
        return col.is_in(pl.Series(values, dtype=SCHEMA[column]).implode(),
                         nulls_equal=rng.random() < 0.5)
    if kind == 2 and column not in ("b", "s"):
        low, high = sorted([_literal(rng, column), _literal(rng, column)],
                           key=lambda v: (v != v, v))
        return col.is_between(low, high, closed=rng.choice(["both", "left", "right", "none"]))
    if kind == 3 and column in ("i", "s32"):
        return (col * 2 + 1) % 3 == 1  # no ORC predicate
    if kind == 4 and column == "s32":
        return col.cast(pl.Int64) >= _literal(rng, column)
    op = rng.choice(["==", "!=", "<", "<=", ">", ">="])
    value = _literal(rng, column)
    left, right = (col, pl.lit(value)) if rng.random() < 0.7 else (pl.lit(value), col)
    return {"==": left == right, "!=": left != right, "<": left < right,
            "<=": left <= right, ">": left > right, ">=": left >= right}[op]


def _predicate(rng: random.Random, depth: int = 0) -> Any:
    if depth >= 3 or rng.random() < 0.35:
        return _leaf(rng)
    kind = rng.randrange(3)
    if kind == 0:
        return ~_predicate(rng, depth + 1)
    a, b = _predicate(rng, depth + 1), _predicate(rng, depth + 1)
    return a & b if kind == 1 else a | b


@pytest.mark.parametrize("seed", range(4))
def test_random_predicates_are_exact_and_never_prune_a_matching_row(
        tmp_path: Path, seed: int) -> None:
    table = _table(seed)
    path = tmp_path / "r.orc"
    aorc.sync.write_table(table, path, stripe_size=8192, row_index_stride=1000,
                          bloom_filter_columns=["i", "s"])
    eager = pl.from_arrow(table)
    assert isinstance(eager, pl.DataFrame)
    lazy = scan_orc(path)
    schema = lazy.collect_schema()
    rng = random.Random(seed)
    mapped = 0
    for _ in range(60):
        predicate = _predicate(rng)
        try:
            expected = eager.filter(predicate)
        except pl.exceptions.PolarsError:
            continue  # a predicate Polars itself rejects (types)
        got = lazy.filter(predicate).collect()
        assert got.equals(expected), predicate
        filters = to_filters(predicate, schema)
        if filters is None:
            continue
        mapped += 1
        kept = aorc.sync.read_table(path, columns=["row"], filters=filters)["row"].to_pylist()
        missing = set(expected["row"].to_list()) - set(kept)
        assert not missing, (predicate, filters, sorted(missing)[:5])
    assert mapped >= 20
