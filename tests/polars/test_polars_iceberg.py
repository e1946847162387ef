"""aorc.polars.iceberg: scan_orc over an Iceberg table with ORC data files, against
pyiceberg's own scan filtered by Polars."""

from __future__ import annotations

import asyncio
import datetime
from typing import Any

import numpy as np
import polars as pl
import pytest

pytest.importorskip("pyiceberg")

from helpers.iceberg import core_schema, table_data  # noqa: E402
from pyiceberg.partitioning import PartitionField, PartitionSpec  # noqa: E402
from pyiceberg.schema import Schema  # noqa: E402
from pyiceberg.transforms import DayTransform  # noqa: E402

import aorc.iceberg  # noqa: E402
from aorc.polars import scan_orc  # noqa: E402
from aorc.polars.iceberg import for_iceberg  # noqa: E402

FIELDS = ("b", "i", "l", "d", "dec", "dt", "ts", "s")


@pytest.fixture
def table(catalog: Any) -> Any:
    schema = Schema(*[f for f in core_schema().fields if f.name in FIELDS])
    created = catalog.create_table("db.t", schema, partition_spec=PartitionSpec(
        PartitionField(8, 1000, DayTransform(), "ts_day")))
    for seed in (1, 2):
        asyncio.run(aorc.iceberg.append(created, table_data(schema, 600, seed=seed),
                                        stripe_size=16 * 1024, row_index_stride=1000))
    return created


def _theirs(table: Any) -> pl.DataFrame:
    frame = pl.from_arrow(table.scan().to_arrow())
    assert isinstance(frame, pl.DataFrame)
    return frame.sort("l")


@pytest.mark.parametrize("predicate", [
    pl.col("i") > 0,
    (pl.col("s").is_in(["a", "bb", ""]) | pl.col("dec").is_null()) & (pl.col("d") < 0.5),
    ~pl.col("i").is_in([1, 2, 3]),
    pl.col("ts") >= datetime.datetime(2000, 1, 1),
    pl.col("dt").is_between(datetime.date(1990, 1, 1), datetime.date(2030, 1, 1)),
    (pl.col("l") % 3 == 0) & pl.col("b"),
])
def test_scans_match_pyiceberg_filtered_by_polars(table: Any, predicate: Any) -> None:
    theirs = _theirs(table)
    ours = scan_orc(table).filter(predicate).collect().sort("l")
    assert ours.columns == theirs.columns
    expected = theirs.filter(predicate)
    assert ours.height == expected.height
    assert ours.equals(expected.cast(dict(ours.schema)))  # type: ignore[arg-type]


def test_projection_head_and_filters(table: Any) -> None:
    theirs = _theirs(table)
    ours = scan_orc(table, filters=[("i", "is not null")]).select("l", "s").collect().sort("l")
    assert ours.equals(theirs.filter(pl.col("i").is_not_null()).select("l", "s"))
    assert scan_orc(table).head(7).collect().height == 7


def test_terms_iceberg_cannot_hold_as_polars_means_them_are_left_out() -> None:
    stamp = np.datetime64(5, "ns")
    assert for_iceberg([[("a", ">", 1), ("t", "<", stamp)]]) == [[("a", ">", 1)]]
    assert for_iceberg([[("a", "not in", [1])], [("b", "==", 2)]]) is None
    assert for_iceberg([[("a", "in", [1, None]), ("b", "is null")]]) == [[("b", "is null")]]
    assert for_iceberg(None) is None
