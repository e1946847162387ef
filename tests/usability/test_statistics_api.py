"""Typed statistics for every type and lookup by dotted name (issue 13, item 5); ScanStats
arithmetic (item 6). Values are judged against the data (pyarrow.compute) and pyorc."""

from __future__ import annotations

import datetime
import decimal
import zoneinfo
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyorc
import pytest

import aorc

NS = np.array(["1969-07-20T20:17:40.123456789", "2024-02-29T12:00:00.000000001",
               "2200-04-11T23:47:16.854775807"], dtype="datetime64[ns]")


@pytest.fixture
def typed_file(tmp_path: Path) -> tuple[Path, pa.Table]:
    table = pa.table({
        "ts": pa.array(NS, pa.timestamp("ns")),
        "ts_ms": pa.array(NS.astype("datetime64[ms]"), pa.timestamp("ms")),
        "tz": pa.array(NS, pa.timestamp("ns", tz="Europe/Berlin")),
        "d": pa.array([datetime.date(1, 1, 1), datetime.date(2020, 5, 17), None]),
        "dec": pa.array([decimal.Decimal("-1.50"), decimal.Decimal("3.25"), None],
                        pa.decimal128(10, 2)),
        "i": pa.array([-5, 7, None], pa.int32()),
        "f": pa.array([0.5, -2.0, 8.0]),
        "b": pa.array([True, None, True]),
        "s": ["pear", "apple", "zoo"],
        "address": pa.array([{"city": "Oslo", "zip": 3}, {"city": "Lima", "zip": 1},
                             {"city": "Rome", "zip": 2}]),
    })
    path = tmp_path / "typed.orc"
    import asyncio
    asyncio.run(aorc.write_table(table, path))
    return path, table


async def test_typed_values_and_names(typed_file: tuple[Path, pa.Table]) -> None:
    path, table = typed_file
    async with aorc.open_reader(path) as reader:
        stats = reader.statistics
        names = reader.column_names()
    for name in ("ts", "ts_ms", "tz", "d", "dec", "i", "f", "s", "address.city",
                 "address.zip"):
        s = stats[name]
        assert s is stats[names.index(name)]
        column = table.column(name) if "." not in name else pc.struct_field(
            table.column("address"), name.split(".")[1])
        low, high = pc.min(column).as_py(), pc.max(column).as_py()
        if name.startswith("ts") or name == "tz":
            values = pc.cast(column, pa.int64()).to_numpy()
            unit = column.type.unit
            factor = {"ns": 1, "ms": 10**6}[unit]
            assert s.minimum_nanos == int(values.min()) * factor
            assert isinstance(s.minimum, datetime.datetime)
            expected_low = datetime.datetime(1970, 1, 1) + datetime.timedelta(
                microseconds=int(values.min()) * factor // 1000)
            if name == "tz":  # an instant: aware, in UTC
                assert s.minimum.tzinfo is not None
                assert s.minimum == expected_low.replace(tzinfo=datetime.UTC)
            else:
                assert s.minimum.tzinfo is None and s.minimum == expected_low
            assert s.maximum >= s.minimum
        else:
            assert (s.minimum, s.maximum) == (low, high), name
    assert stats["b"].true_count == 2
    with pytest.raises(aorc.SchemaError, match="'adress.city'.*address.city"):
        stats["adress.city"]


async def test_timestamp_statistics_agree_with_pyorc(typed_file: tuple[Path, pa.Table]) -> None:
    path, _ = typed_file
    async with aorc.open_reader(path) as reader:
        ours = reader.statistics["ts_ms"]
        column_id = reader.column_names().index("ts_ms")
    with path.open("rb") as f:
        theirs = pyorc.Reader(f, timezone=zoneinfo.ZoneInfo("UTC"))[column_id].statistics
    # (pyorc misreads the pre-1970 minimum's milliseconds, so only the maximum is compared)
    assert ours.maximum == theirs["maximum"].replace(tzinfo=None)
    assert ours.minimum == datetime.datetime(1969, 7, 20, 20, 17, 40, 123000)


async def test_stripe_statistics_by_name(typed_file: tuple[Path, pa.Table]) -> None:
    path, _ = typed_file
    async with aorc.open_reader(path) as reader:
        stripe = reader.stripes[0].statistics
    assert stripe is not None and stripe["address.city"].minimum == "Lima"


async def test_scan_stats_arithmetic(tmp_path: Path) -> None:
    path = tmp_path / "k.orc"
    await aorc.write_table(pa.table({"k": np.arange(30_000)}), path, row_index_stride=1000)
    async with aorc.open_reader(path) as reader:
        before = reader.scan_stats
        await reader.read(filters=[("k", "<", 1500)])
        middle = reader.scan_stats
        await reader.read(filters=[("k", ">=", 29_000)])
        after = reader.scan_stats
    first, second = middle - before, after - middle
    assert first.rows_returned == 1500 and second.rows_returned == 1000
    assert first.row_groups_read == 2 and second.row_groups_read == 1
    assert (first + second).rows_returned == (after - before).rows_returned == 2500
    assert (first + second) == after - before
    with pytest.raises(TypeError):
        _ = first + 1  # type: ignore[operator]
