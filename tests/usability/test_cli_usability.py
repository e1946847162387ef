"""CLI items of issue 13: CSV nulls (9), --filter for head and cat (10), short usage errors
(11). CSV parsing is judged by pyarrow.csv with the same options, the output by pyarrow.orc,
filtered rows by pyarrow.compute on the original table."""

from __future__ import annotations

import contextlib
import datetime
import io
import json
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pcsv
import pyarrow.orc as po
import pytest

import aorc
from aorc.cli.main import main
from aorc.filters.text import filters_from_text, parse_filter_text

CSV = "id,name,amount,day\n1,,5.5,2024-01-02\n2,null,,2024-01-03\n,x,NA,\n4,NULL,7,2024-02-01\n"


def run(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(args))
        except SystemExit as exc:
            code = int(exc.code or 0)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize(("flags", "options"), [
    ([], pcsv.ConvertOptions()),
    (["--strings-can-be-null"], pcsv.ConvertOptions(strings_can_be_null=True)),
    (["--strings-can-be-null", "--null-values=null,"],
     pcsv.ConvertOptions(strings_can_be_null=True, null_values=["null", ""])),
    (["--null-values=NULL"], pcsv.ConvertOptions(null_values=["NULL", ""])),
])
def test_csv_nulls_as_pyarrow_csv(tmp_path: Path, flags: list[str],
                                  options: pcsv.ConvertOptions) -> None:
    src = tmp_path / "in.csv"
    src.write_text(CSV)
    code, _, err = run("convert", str(src), str(tmp_path / "o.orc"), "--no-progress", *flags)
    assert code == 0, err
    expected = pcsv.read_csv(src, convert_options=options)
    got = po.read_table(tmp_path / "o.orc")
    assert got.to_pylist() == expected.to_pylist()
    assert got.column("id").null_count == 1  # empty fields of non-string columns: null
    if pa.types.is_floating(got.schema.field("amount").type):
        assert got.column("amount").null_count >= 1


def test_csv_default_keeps_text(tmp_path: Path) -> None:
    src = tmp_path / "in.csv"
    src.write_text(CSV)
    assert run("convert", str(src), str(tmp_path / "o.orc"), "--no-progress")[0] == 0
    assert po.read_table(tmp_path / "o.orc").column("name").to_pylist() == ["", "null", "x",
                                                                            "NULL"]
    assert run("convert", str(src), str(tmp_path / "p.orc"), "--no-progress",
               "--strings-can-be-null")[0] == 0
    assert po.read_table(tmp_path / "p.orc").column("name").to_pylist() == [None, None, "x",
                                                                            None]


def test_type_error_hint_with_and_without_schema(tmp_path: Path) -> None:
    """Without --schema the hint says to give one; with it (issue 33 item 3) that a value
    does not have the type it gives."""
    src = tmp_path / "in.csv"
    src.write_text("a\n" + "1\n" * 700_000 + "x\n")  # the type changes after the first block
    code, _, err = run("convert", str(src), str(tmp_path / "o.orc"), "--no-progress")
    assert code == 1 and "--schema" in err
    code, _, err = run("convert", str(src), str(tmp_path / "o.orc"), "--no-progress",
                       "--schema", "struct<a:int>")
    assert code == 1 and "'x'" in err and "does not have the type --schema gives" in err
    assert "use --schema" not in err
    assert not (tmp_path / "o.orc").exists()


# --------------------------------------------------------------------------- --filter

@pytest.fixture
def people(tmp_path: Path) -> tuple[Path, pa.Table]:
    table = pa.table({
        "id": list(range(100)),
        "name": [f"p{i % 7}" for i in range(100)],
        "amount": [None if i % 9 == 0 else i * 1.5 for i in range(100)],
        "day": pa.array([f"2024-01-{1 + i % 28:02d}" for i in range(100)]).cast(pa.date32()),
        "address": [{"city": ["Oslo", "Rome"][i % 2]} for i in range(100)],
    })
    path = tmp_path / "p.orc"
    aorc.sync.write_table(table, path)
    return path, table


CASES = [
    (["id >= 90"], pc.field("id") >= 90),
    (["amount is null"], pc.field("amount").is_null()),
    (["name in ('p1', p2)", "id < 50"],
     pc.field("name").isin(["p1", "p2"]) & (pc.field("id") < 50)),
    (["day >= 2024-01-27"], pc.field("day") >= pa.scalar(datetime.date(2024, 1, 27))),
    (["address.city == Rome", "amount > 100"],
     (pc.field("address", "city") == "Rome") & (pc.field("amount") > 100)),
    (["name not in [p0]"], ~pc.field("name").isin(["p0"])),
]


@pytest.mark.parametrize(("texts", "expression"), CASES, ids=str)
def test_cat_and_head_filter(people: tuple[Path, pa.Table], texts: list[str],
                             expression: pc.Expression) -> None:
    path, table = people
    flags = [x for t in texts for x in ("--filter", t)]
    expected = table.filter(expression)
    code, out, err = run("cat", str(path), "--columns", "id", *flags)
    assert code == 0, err
    assert [json.loads(line)["id"] for line in out.splitlines()] == expected["id"].to_pylist()
    code, out, _ = run("head", str(path), "-n", "3", "--columns", "id", *flags)
    assert [json.loads(line)["id"] for line in out.splitlines()] == \
        expected["id"].to_pylist()[:3]


@pytest.mark.parametrize(("text", "needle"), [
    ("id >> 3", "'id >> 3'"), ("id > abc", "'abc'"), ("idd == 1", "id, name, amount"),
    ("amount == null", "is null"), ("id", "column op value"),
])
def test_bad_filter_text_is_one_line_failure(people: tuple[Path, pa.Table], text: str,
                                             needle: str) -> None:
    path, _ = people
    code, out, err = run("cat", str(path), "--filter", text)
    assert code == 1 and out == ""
    assert err.count("\n") == 1 and needle in err, err


def test_parser_is_reusable() -> None:
    assert parse_filter_text("a.b is not null") == ("a.b", "is not null", None)
    assert parse_filter_text("x = 'a b'") == ("x", "=", ("a b", True))
    schema = pa.schema([("x", pa.int32()), ("ok", pa.bool_())])
    assert filters_from_text(["x in (1, 2)", "ok == false"], schema) == [
        ("x", "in", [1, 2]), ("ok", "==", False)]
    assert filters_from_text([], schema) is None


# --------------------------------------------------------------------------- usage errors

@pytest.mark.parametrize("args", [["head"], ["cat", "x.orc", "--bogus"], ["head", "x", "-n", "z"],
                                  []])
def test_usage_errors_are_one_line_exit_2(args: list[str]) -> None:
    done = subprocess.run([sys.executable, "-m", "aorc", *args], capture_output=True,
                          text=True, check=False, timeout=60)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "--help" in done.stderr and "usage:" not in \
        done.stderr
