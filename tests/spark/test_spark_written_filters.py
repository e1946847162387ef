"""aorc's filtered reads of files Spark (ORC Java) writes.

Spark writes a table of many types (dictionary and direct strings, decimals, dates in the
hybrid calendar, writer-zone timestamps, structs, arrays, nulls) with a row index every 1000
rows, bloom filters on two columns and small stripes. Random filters read through aorc must
give pyarrow's filtering of the whole file; and for equality on the bloom-filtered columns,
aorc must keep exactly the row groups ORC Java's own search-argument reader keeps.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from helpers.compare import assert_tables_equal
from helpers.oracle import column_of, filters_oracle
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import aorc

pytestmark = pytest.mark.spark

ROWS = 12_000
STRIDE = 1000
COLUMNS = {
    "id": "id",
    "i": "if(hash(id, 7) % 9 = 0, null, cast(hash(id) % 1000 as int))",
    "big": "10000000000 + cast(abs(hash(id, 1)) % 50000 as bigint)",
    "d": "cast(hash(id, 2) as double) / 1e6",
    "s": "if(hash(id, 8) % 7 = 0, null, concat('s', cast(abs(hash(id, 3)) % 300 as string)))",
    "u": "sha2(cast(id as string), 256)",
    "dec": "cast(cast(hash(id, 4) % 100000 as decimal(12, 0)) / 100 as decimal(12, 2))",
    "dt": "date_add(date'1500-01-01', cast(abs(hash(id, 5)) % 300000 as int))",
    "ts": "timestamp_seconds(cast(id * 997 as bigint) + 1500000000)",
    "b": "if(hash(id, 9) % 5 = 0, null, hash(id, 6) % 2 = 0)",
    "st": "if(id % 11 = 0, null, named_struct('x', cast(id % 13 as int), 'y', "
          "cast(hash(id, 10) % 50 as string)))",
    "arr": "if(id % 5 = 0, null, array(id, id + 1))",
}
FILTER_COLUMNS = ["id", "i", "big", "d", "s", "u", "dec", "dt", "ts", "b", "st.x", "st.y"]
ORDERED = ("<", "<=", ">", ">=")


def run(coro: Any) -> Any:
    return asyncio.run(coro)


@pytest.fixture(scope="module")
def spark_file(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, pa.Table]:
    """The file Spark writes, and aorc's read of all of it."""
    out = tmp_path_factory.mktemp("spark-filters") / "out"
    frame = spark.range(ROWS).selectExpr(*[f"{expr} as {name}" for name, expr in
                                           COLUMNS.items()])
    (frame.coalesce(1).write.option("orc.row.index.stride", str(STRIDE))
     .option("orc.bloom.filter.columns", "u,big").option("orc.stripe.size", "200000")
     .option("compression", "zlib").orc(str(out)))
    (path,) = sorted(out.glob("*.orc"))
    return path, run(aorc.read_table(path))


def _literal(data: st.DataObject, arr: pa.Array) -> Any:
    values = arr.drop_null()
    value = values[data.draw(st.integers(0, len(values) - 1))]
    return value if pa.types.is_timestamp(value.type) else value.as_py()


def _filters(data: st.DataObject, table: pa.Table) -> list[list[tuple[str, str, Any]]]:
    clauses = []
    for _ in range(data.draw(st.integers(1, 2))):
        clause = []
        for _ in range(data.draw(st.integers(1, 2))):
            name = data.draw(st.sampled_from(FILTER_COLUMNS))
            arr = column_of(table, name)
            ops = ["==", "!=", "in", "not in", "is null"] + (list(ORDERED) if name != "b"
                                                            else [])
            op = data.draw(st.sampled_from(ops))
            if op == "is null":
                clause.append((name, op, None))
            elif op in ("in", "not in"):
                items = [_literal(data, arr) for _ in range(data.draw(st.integers(1, 3)))]
                plain = [v.value if isinstance(v, pa.Scalar) else v for v in items]
                clause.append((name, op, pa.array(plain, arr.type)))
            else:
                clause.append((name, op, _literal(data, arr)))
        clauses.append(clause)
    return clauses


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_random_filters_on_spark_files(spark_file: tuple[Path, pa.Table],
                                       data: st.DataObject) -> None:
    path, full = spark_file
    filters = _filters(data, full)
    got = run(aorc.read_table(path, filters=filters))
    assert_tables_equal(got, full.filter(filters_oracle(filters)), what=str(filters))


def test_id_ranges_prune_and_decode(spark_file: tuple[Path, pa.Table]) -> None:
    """Sorted ids: row groups are skipped and the survivors decoded from their positions."""
    path, full = spark_file
    filters = [[("id", ">=", 2500), ("id", "<", 3700)], [("id", ">", 11_990)]]

    async def read() -> tuple[pa.Table, aorc.ScanStats]:
        async with aorc.open_reader(path) as reader:
            return await reader.read(filters=filters), reader.scan_stats

    got, stats = run(read())
    expected = full.filter(filters_oracle(filters))
    assert got.to_pylist() == expected.to_pylist()
    assert stats.row_groups_read == 3


def test_same_row_groups_as_orc_java(jvm_orc: Any, spark_file: tuple[Path, pa.Table]) -> None:
    """Equality on bloom-filtered columns: aorc decodes exactly the rows of the row groups ORC
    Java's reader keeps for the same search argument."""
    path, full = spark_file
    u = full.column("u").to_pylist()
    big = full.column("big").to_pylist()
    cases = [("u", u[5]), ("u", u[9876]), ("u", "not there"), ("big", big[17]),
             ("big", 10_000_000_000 + 123_456_789)]

    async def rows_read(column: str, value: Any) -> int:
        async with aorc.open_reader(path) as reader:
            await reader.read(filters=[(column, "==", value)])
            return reader.scan_stats.rows_read

    for column, value in cases:
        assert run(rows_read(column, value)) == jvm_orc.rows_selected(path, column, value), (
            column, value)
