"""Issue 24 item 11: filter values given as text are parsed for data columns as for
partition columns (timestamps with or without zone, dates, decimals, numbers, booleans), in
Python and in the CLI alike, and a text that does not parse says which formats the column
takes. Oracle: pyarrow.compute on the same rows with the typed value."""

from __future__ import annotations

import datetime
import decimal
import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.orc as pa_orc
import pytest
from helpers.cli import run

import aorc
import aorc.sync
from aorc.filters.literals import accepted_formats, parse_text

UTC = datetime.UTC
N = 40


def _table() -> pa.Table:
    base = datetime.datetime(2024, 1, 1)
    return pa.table({
        "i": pa.array(range(N), pa.int32()),
        "d": pa.array([datetime.date(2024, 1, 1) + datetime.timedelta(days=k)
                       for k in range(N)]),
        "ts": pa.array([base + datetime.timedelta(hours=k, microseconds=k)
                        for k in range(N)], pa.timestamp("ns")),
        "tz": pa.array([(base + datetime.timedelta(hours=k)).replace(tzinfo=UTC)
                        for k in range(N)], pa.timestamp("ns", "UTC")),
        "dec": pa.array([decimal.Decimal(k) / 4 for k in range(N)], pa.decimal128(10, 2)),
        "f": pa.array([k / 3 for k in range(N)], pa.float64()),
        "b": pa.array([k % 3 == 0 for k in range(N)]),
    })


@pytest.fixture(scope="module")
def orc_file(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, pa.Table]:
    path = tmp_path_factory.mktemp("text") / "t.orc"
    table = _table()
    pa_orc.write_table(table, str(path), row_index_stride=1000)
    return path, table


# (column, op, text, the typed value the text means)
CASES: list[tuple[str, str, str, Any]] = [
    ("d", ">=", "2024-01-20", datetime.date(2024, 1, 20)),
    ("d", "in", "2024-01-03", datetime.date(2024, 1, 3)),
    ("ts", "<", "2024-01-01 05:00:00", datetime.datetime(2024, 1, 1, 5)),
    ("ts", "<=", "2024-01-01T05:00:00.000005", datetime.datetime(2024, 1, 1, 5, 0, 0, 5)),
    ("ts", "==", "2024-01-01 03:00:00.000003000",
     datetime.datetime(2024, 1, 1, 3, 0, 0, 3)),
    ("ts", ">", "2024-01-02", datetime.datetime(2024, 1, 2)),
    ("ts", ">", "2024-01-01 10:30", datetime.datetime(2024, 1, 1, 10, 30)),
    ("tz", ">=", "2024-01-01T12:00:00+02:00", datetime.datetime(2024, 1, 1, 10, tzinfo=UTC)),
    ("tz", "<", "2024-01-01T12:00:00Z", datetime.datetime(2024, 1, 1, 12, tzinfo=UTC)),
    ("tz", "<", "2024-01-01 12:00:00-0130",
     datetime.datetime(2024, 1, 1, 13, 30, tzinfo=UTC)),
    ("dec", ">", "3.25", decimal.Decimal("3.25")),
    ("dec", "<=", "1e1", decimal.Decimal(10)),
    ("i", "<", "2.5", 2.5),
    ("i", "!=", "7", 7),
    ("f", ">=", "1.5e1", 15.0),
    ("b", "==", "TRUE", True),
]


def _oracle(table: pa.Table, column: str, op: str, value: Any) -> list[int]:
    field = pc.field(column)
    if op == "in":
        expr = field.isin(pa.array([value], table.schema.field(column).type))
    else:
        scalar = pa.scalar(value, table.schema.field(column).type) \
            if not isinstance(value, float) or column == "f" else pa.scalar(value)
        expr = {"==": field == scalar, "!=": field != scalar, "<": field < scalar,
                "<=": field <= scalar, ">": field > scalar, ">=": field >= scalar}[op]
    return table.filter(expr).column("i").to_pylist()


@pytest.mark.parametrize(("column", "op", "text", "value"), CASES)
def test_text_means_the_typed_value(orc_file: tuple[Path, pa.Table], column: str,
                                          op: str, text: str, value: Any) -> None:
    path, table = orc_file
    want = _oracle(table, column, op, value)
    arg_text: Any = [text] if op == "in" else text
    arg_value: Any = [value] if op == "in" else value
    by_text = aorc.sync.read_table(path, columns=["i"], filters=[(column, op, arg_text)])
    by_value = aorc.sync.read_table(path, columns=["i"], filters=[(column, op, arg_value)])
    assert by_text.column("i").to_pylist() == by_value.column("i").to_pylist() == want
    cli_text = f"{column} {op} ({text})" if op == "in" else f"{column} {op} '{text}'"
    result = run("cat", str(path), "--columns", "i", "--filter", cli_text)
    assert result.returncode == 0, result.stderr
    assert [json.loads(line)["i"] for line in result.stdout.splitlines()] == want


async def test_partition_and_data_columns_take_the_same_texts(tmp_path: Path) -> None:
    """The same texts filter a date data column and a date partition column alike."""
    for k in range(3):
        day = datetime.date(2024, 1, 1) + datetime.timedelta(days=k)
        folder = tmp_path / f"day={day}"
        folder.mkdir()
        pa_orc.write_table(pa.table({"d": [day], "ts": pa.array(
            [datetime.datetime.combine(day, datetime.time(6))], pa.timestamp("us"))}),
            str(folder / "f.orc"))
    data = await aorc.read_dataset(tmp_path, filters=[("d", ">=", "2024-01-02")])
    part = await aorc.read_dataset(tmp_path, filters=[("day", ">=", "2024-01-02")])
    assert data.column("d").to_pylist() == part.column("d").to_pylist() == [
        datetime.date(2024, 1, 2), datetime.date(2024, 1, 3)]
    for column in ("d", "day"):
        with pytest.raises(aorc.SchemaError, match="yyyy-MM-dd"):
            await aorc.read_dataset(tmp_path, filters=[(column, "==", "2024-01-02 10:00")])
    got = await aorc.read_dataset(tmp_path, filters=[("ts", "<", "2024-01-02T06:00:00.5")])
    assert got.column("d").to_pylist() == [datetime.date(2024, 1, 1),
                                           datetime.date(2024, 1, 2)]
    with pytest.raises(aorc.SchemaError, match="partition columns.*yyyy-MM-dd"):
        await aorc.read_dataset(tmp_path, filters=[("day", "==", "yesterday")])


@pytest.mark.parametrize(("column", "text", "needle"), [
    ("d", "2024/01/02", "a date yyyy-MM-dd"),
    ("d", "2024-02-30", "a date yyyy-MM-dd"),
    ("ts", "noon", "optionally followed by a zone"),
    ("tz", "2024-01-01 25:00", "HH:mm"),
    ("dec", "1,5", "a decimal number"),
    ("i", "seven", "an integer"),
    ("f", "1_000", "NaN or Infinity"),
    ("b", "yes", "true or false"),
])
def test_bad_text_names_accepted_formats(orc_file: tuple[Path, pa.Table], column: str,
                                         text: str, needle: str) -> None:
    path, _ = orc_file
    with pytest.raises(aorc.SchemaError, match=needle) as info:
        aorc.sync.read_table(path, filters=[(column, "==", text)])
    assert repr(text) in str(info.value) and repr(column) in str(info.value)
    result = run("cat", str(path), "--filter", f"{column} == '{text}'")
    assert result.returncode == 1 and needle in result.stderr


async def test_zoned_text_on_a_timestamp_without_zone_is_refused(
        orc_file: tuple[Path, pa.Table]) -> None:
    path, _ = orc_file
    with pytest.raises(aorc.SchemaError, match="aware"):
        await aorc.read_table(path, filters=[("ts", "<", "2024-01-01T05:00:00Z")])


def test_parse_text_values() -> None:
    assert parse_text("2024-01-01 10:00:00.123456789", pa.timestamp("ns")) == pa.scalar(
        1704103200123456789, pa.timestamp("ns"))
    assert parse_text("9999-12-31 23:59:59.999999", pa.timestamp("us")) == \
        datetime.datetime(9999, 12, 31, 23, 59, 59, 999999)
    assert parse_text(" 12.50 ", pa.decimal128(5, 2)) == decimal.Decimal("12.50")
    assert parse_text("-Infinity", pa.float32()) == float("-inf")
    assert parse_text("abc", pa.binary()) == b"abc"
    assert parse_text("anything", pa.string()) == "anything"
    assert "yyyy-MM-dd" in accepted_formats(pa.dictionary(pa.int32(), pa.date32()))
