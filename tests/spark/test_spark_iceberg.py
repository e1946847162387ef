"""ORC Java (spark.read.orc) reads the data files aorc writes for Iceberg tables: the ORC
appendix's attributes on every node do not disturb it, and every value reads back. Files with
timestamptz (ORC ``timestamp with local time zone``) are read on Spark 4.2 and later only
(``read_orc`` skips on older lines); the others on every line the suite runs."""

from __future__ import annotations

import asyncio
import pathlib
from typing import Any

import pyarrow as pa
import pytest
from spark_tables import read_orc, to_arrow

pytestmark = pytest.mark.spark
pytest.importorskip("pyiceberg")

import aorc.iceberg  # noqa: E402
from aorc.iceberg.config import store_path  # noqa: E402
from aorc.iceberg.schema import to_file_batches  # noqa: E402


def _tables(tmp_path: pathlib.Path, with_tz: bool) -> tuple[Any, pa.Table]:
    from helpers.iceberg import all_types_schema, table_data
    from helpers.iceberg_fixtures import local_catalog
    from pyiceberg.schema import Schema

    catalog = local_catalog(tmp_path / "iceberg")
    schema = all_types_schema()
    if not with_tz:
        schema = Schema(*[f for f in schema.fields if f.name != "tz"])
    table = catalog.create_table("db.t", schema)
    data = table_data(table.schema(), 3_000, seed=21)
    asyncio.run(aorc.iceberg.append(table, data))
    return table, pa.Table.from_batches(to_file_batches(table.schema(), data))


def nan_free(values: list[Any]) -> list[Any]:
    from helpers.iceberg import nan_free as free

    return list(free(values))


def _micros(col: pa.ChunkedArray) -> list[Any]:
    if pa.types.is_timestamp(col.type):
        return col.cast(pa.timestamp("us", col.type.tz)).cast(pa.int64()).to_pylist()
    return col.to_pylist()


@pytest.mark.parametrize("with_tz", [False, True], ids=["no-timestamptz", "timestamptz"])
def test_spark_reads_aorcs_iceberg_data_files(spark: Any, tmp_path: pathlib.Path,
                                              with_tz: bool) -> None:
    table, expected = _tables(tmp_path, with_tz)
    [task] = list(table.scan().plan_files())
    path = store_path(task.file.file_path)
    df = read_orc(spark, path)
    got = to_arrow(df)
    assert got.column_names == expected.column_names
    assert got.num_rows == expected.num_rows
    order = "l"
    got, expected = got.sort_by(order), expected.sort_by(order)
    for name in expected.column_names:
        assert nan_free(_micros(got.column(name))) == nan_free(_micros(expected.column(name))), \
            name


def test_files_orc_java_wrote_join_a_table_by_name_mapping(spark: Any,
                                                            tmp_path: pathlib.Path) -> None:
    """ORC files Spark (ORC Java) wrote, without Iceberg ids, added with add_files: read by
    the name mapping, with aorc and with pyiceberg, after a column rename."""
    from helpers.iceberg import rows
    from helpers.iceberg_fixtures import local_catalog
    from pyiceberg.schema import Schema
    from pyiceberg.types import DoubleType, LongType, NestedField, StringType, StructType

    df = spark.createDataFrame(
        [(i, f"n{i % 7}", float(i) / 4, (i * 2, f"s{i}")) for i in range(2_000)],
        "id long, name string, score double, info struct<a:long,b:string>")
    out = tmp_path / "spark"
    df.coalesce(2).write.orc(str(out))
    paths = sorted(str(p) for p in out.glob("*.orc"))
    assert len(paths) == 2
    catalog = local_catalog(tmp_path / "iceberg")
    table = catalog.create_table("db.t", Schema(
        NestedField(1, "id", LongType()), NestedField(2, "name", StringType()),
        NestedField(3, "score", DoubleType()),
        NestedField(4, "info", StructType(NestedField(5, "a", LongType()),
                                          NestedField(6, "b", StringType())))))
    asyncio.run(aorc.iceberg.add_files(table, paths))
    with table.update_schema() as u:
        u.rename_column("name", "label")
    ours = asyncio.run(aorc.iceberg.read_table(table))
    assert ours.num_rows == 2_000
    assert rows(ours, "id") == rows(table.scan().to_arrow(), "id")
    assert ours.sort_by("id").column("label").to_pylist()[:3] == ["n0", "n1", "n2"]
    stats = {t.file.file_path: t.file for t in table.scan().plan_files()}
    assert sum(f.record_count for f in stats.values()) == 2_000
    assert all(f.value_counts[1] == f.record_count for f in stats.values())
