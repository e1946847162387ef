"""Issue 24 item 8: char and varchar as Hive and Spark tables treat them. aorc writes what ORC
Java writes (varchar values truncated to n characters, char values truncated or padded with
spaces to n), and a string literal compared with a ``char(n)`` column is padded as Spark pads
it for a table declared ``char(n)``: the same filter selects the same rows in aorc and in
Spark SQL over aorc's file."""

from __future__ import annotations

import pathlib
from typing import Any

import pyarrow as pa
import pytest

import aorc
import aorc.sync

pytestmark = pytest.mark.spark

VALUES = ["ab", "abcdefgh", "b", None, "ab  ", "", "abcde", "zz"]


def _write_typed(path: pathlib.Path) -> None:
    async def go() -> None:
        schema = "struct<id:bigint,h:char(5),v:varchar(5)>"
        async with aorc.open_writer(path, schema, bloom_filter_columns=["h"]) as writer:
            await writer.write(pa.table({"id": pa.array(range(len(VALUES)), pa.int64()),
                                         "h": VALUES, "v": VALUES}))
    aorc.sync.run(go())


@pytest.fixture
def char_table(spark: Any, tmp_path: pathlib.Path) -> Any:
    folder = tmp_path / "chars"
    folder.mkdir()
    _write_typed(folder / "part-0.orc")
    name = f"aorc_char_{abs(hash(str(folder))) % 10**8}"
    spark.sql(f"create table {name} (id bigint, h char(5), v varchar(5)) using orc "
              f"location '{folder.as_posix()}'")
    yield name, folder / "part-0.orc"
    spark.sql(f"drop table if exists {name}")


def test_values_truncated_and_padded_as_orc_java_writes_them(spark: Any, char_table: Any
                                                              ) -> None:
    name, path = char_table
    spark_rows = [(r["id"], r["h"], r["v"]) for r in spark.sql(
        f"select id, h, v from {name} order by id").collect()]
    ours = aorc.sync.read_table(path).to_pylist()
    assert [(r["id"], r["h"], r["v"]) for r in ours] == spark_rows
    assert spark_rows[1][1:] == ("abcde", "abcde")  # 'abcdefgh' truncated
    assert spark_rows[0][1:] == ("ab   ", "ab")  # char padded, varchar not


@pytest.mark.parametrize(("sql", "filters"), [
    ("h = 'ab'", [("h", "==", "ab")]),
    ("h = 'ab   '", [("h", "==", "ab   ")]),
    ("h = ''", [("h", "==", "")]),
    ("h != 'ab'", [("h", "!=", "ab")]),
    ("h in ('b', 'zz')", [("h", "in", ["b", "zz"])]),
    # aorc's ``not in`` keeps nulls, as pyarrow's ``~isin`` does (SQL drops them)
    ("h not in ('b', 'zz') or h is null", [("h", "not in", ["b", "zz"])]),
    ("h < 'b'", [("h", "<", "b")]),
    ("h >= 'ab'", [("h", ">=", "ab")]),
    ("h = 'abcdefgh'", [("h", "==", "abcdefgh")]),
    ("v = 'ab'", [("v", "==", "ab")]),
])
def test_char_filters_select_what_spark_selects(spark: Any, char_table: Any, sql: str,
                                                filters: list[Any]) -> None:
    name, path = char_table
    want = sorted(r["id"] for r in spark.sql(f"select id from {name} where {sql}").collect())
    got = aorc.sync.read_table(path, columns=["id"], filters=filters)
    assert sorted(got.column("id").to_pylist()) == want, sql
    assert want or sql == "h = 'abcdefgh'"
