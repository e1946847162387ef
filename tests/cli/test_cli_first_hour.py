"""Issue 33 items 2, 3 and 8: ``aorc convert`` on a folder or prefix (decided as
``read_table`` decides), JSON lines that pyarrow's JSON reader (and ``aorc convert``) read
back with NaN and infinities, and the CLI's details (one timestamp spelling per format,
decimal zero, help for every option, ``count --filter`` operators). Checked against
pyarrow.dataset, pyarrow.json and pyarrow.csv; S3 on moto's server."""

from __future__ import annotations

import argparse
import io
import json
import math
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.dataset as pads
import pyarrow.json as pa_json
import pyarrow.orc as pa_orc
import pyarrow.parquet as pq
import pytest
from helpers.cli import run

from aorc.cli.main import _parser

EVENTS = {
    "events/country=DE/a.orc": pa.table({"id": pa.array([1, 2, 3], pa.int64()),
                                         "amount": [50.0, 150.0, 250.0]}),
    "events/country=NO/b.orc": pa.table({"id": pa.array([4], pa.int64()),
                                         "amount": [500.0]}),
}


def _orc_bytes(table: pa.Table) -> bytes:
    out = io.BytesIO()
    pa_orc.write_table(table, out)
    return out.getvalue()


def _rows(table: pa.Table) -> list[tuple[Any, ...]]:
    return sorted(zip(*(table.column(n).to_pylist() for n in ("id", "amount", "country")),
                      strict=True))


@pytest.fixture
def lake(s3_client: Any, s3_bucket: str) -> str:
    for key, table in EVENTS.items():
        s3_client.put_object(Bucket=s3_bucket, Key=key, Body=_orc_bytes(table))
    return f"s3://{s3_bucket}/events"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    for key, table in EVENTS.items():
        path = tmp_path / key
        path.parent.mkdir(parents=True, exist_ok=True)
        pa_orc.write_table(table, str(path))
    return tmp_path / "events"


# ------------------------------------------------------------------ item 2: convert a dataset

@pytest.mark.parametrize("how", [[], ["--from", "orc"], ["/"]])
def test_convert_a_prefix(lake: str, tmp_path: Path, how: list[str]) -> None:
    src = lake + ("/" if how == ["/"] else "")
    flags = [] if how == ["/"] else how
    out = tmp_path / "all.parquet"
    result = run("convert", src, str(out), *flags)
    assert result.returncode == 0, result.stderr
    got = pq.read_table(out)
    assert _rows(got) == [(1, 50.0, "DE"), (2, 150.0, "DE"), (3, 250.0, "DE"),
                          (4, 500.0, "NO")]


@pytest.mark.parametrize("flags", [[], ["--from", "orc"]])
def test_convert_a_local_folder(folder: Path, tmp_path: Path, flags: list[str]) -> None:
    out = tmp_path / "all.orc"
    result = run("convert", str(folder), str(out), *flags)
    assert result.returncode == 0, result.stderr
    peer = pads.dataset(str(folder), format="orc", partitioning="hive").to_table()
    got = pa_orc.read_table(str(out))
    assert _rows(got) == _rows(peer.set_column(
        2, "country", peer.column("country").cast(pa.string())))


def test_convert_an_unknown_extension_still_says_so(tmp_path: Path) -> None:
    src = tmp_path / "data.xyz"
    src.write_text("a,b\n1,2\n")
    result = run("convert", str(src), str(tmp_path / "out.orc"))
    assert result.returncode == 1
    assert "cannot tell the format" in result.stderr and "--from" in result.stderr


# ------------------------------------------------------------------ item 3: JSON lines round trip

def _nan_file(tmp_path: Path) -> Path:
    path = tmp_path / "b.orc"
    pa_orc.write_table(pa.table({
        "a": pa.array([float("nan"), 1.5, float("inf"), float("-inf"), None]),
        "l": pa.array([[float("nan"), 1.0], [], [float("-inf")], None, [2.0]],
                      pa.list_(pa.float64())),
    }), str(path))
    return path


def _same_floats(got: list[Any], want: list[Any]) -> bool:
    def same(x: Any, y: Any) -> bool:
        if isinstance(x, list) and isinstance(y, list):
            return len(x) == len(y) and all(same(a, b) for a, b in zip(x, y, strict=True))
        if isinstance(x, float) and isinstance(y, float) and math.isnan(x):
            return math.isnan(y)
        return type(x) is type(y) and x == y
    return same(got, want)


def test_jsonl_non_finite_floats_read_back_by_pyarrow(tmp_path: Path) -> None:
    src = _nan_file(tmp_path)
    cat = run("cat", str(src), "--format", "jsonl")
    assert cat.returncode == 0, cat.stderr
    assert '"nan"' not in cat.stdout and "NaN" in cat.stdout and "-Infinity" in cat.stdout
    lines = tmp_path / "b.jsonl"
    lines.write_text(cat.stdout)
    peer = pa_json.read_json(str(lines))  # pyarrow's JSON reader is the judge
    want = pa_orc.read_table(str(src))
    assert peer.schema.field("a").type == pa.float64()
    assert _same_floats(peer.column("a").to_pylist(), want.column("a").to_pylist())
    assert _same_floats(peer.column("l").to_pylist(), want.column("l").to_pylist())
    back = run("convert", str(lines), str(tmp_path / "x.orc"))
    assert back.returncode == 0, back.stderr
    assert _same_floats(pa_orc.read_table(str(tmp_path / "x.orc")).column("a").to_pylist(),
                        want.column("a").to_pylist())


def test_jsonl_type_error_keeps_a_hint_with_schema(tmp_path: Path) -> None:
    lines = tmp_path / "q.jsonl"
    lines.write_text('{"a": "nan"}\n{"a": 1.0}\n')
    bare = run("convert", str(lines), str(tmp_path / "x.orc"))
    assert bare.returncode == 1 and "--schema" in bare.stderr
    given = run("convert", str(lines), str(tmp_path / "y.orc"), "--schema", "struct<a:double>")
    assert given.returncode == 1
    assert "--schema" in given.stderr and "NaN, Infinity and -Infinity" in given.stderr


# ------------------------------------------------------------------ item 8: CLI details

def _mixed(tmp_path: Path) -> Path:
    import datetime
    import decimal

    path = tmp_path / "m.orc"
    when = datetime.datetime(2024, 3, 10, 6, 30, tzinfo=datetime.UTC)
    pa_orc.write_table(pa.table({
        "ts": pa.array([when, when + datetime.timedelta(microseconds=5)],
                       pa.timestamp("ns", "UTC")),
        "d": pa.array([decimal.Decimal(0), decimal.Decimal("1.5")], pa.decimal128(20, 9)),
        "d2": pa.array([decimal.Decimal(0), decimal.Decimal("-2.25")], pa.decimal128(10, 2)),
    }), str(path))
    return path


def test_one_timestamp_and_decimal_spelling_per_format(tmp_path: Path) -> None:
    src = _mixed(tmp_path)
    jsonl = run("cat", str(src), "--format", "jsonl")
    csv = run("cat", str(src), "--format", "csv")
    assert jsonl.returncode == 0 and csv.returncode == 0, jsonl.stderr + csv.stderr
    rows = [json.loads(line) for line in jsonl.stdout.splitlines()]
    # Polars' write_ndjson spells these the same: isoformat, plain-notation decimals
    assert [r["ts"] for r in rows] == ["2024-03-10T06:30:00+00:00",
                                       "2024-03-10T06:30:00.000005+00:00"]
    assert [r["d"] for r in rows] == ["0.000000000", "1.500000000"]
    assert [r["d2"] for r in rows] == ["0.00", "-2.25"]
    body = csv.stdout.splitlines()[1:]
    assert body == ['"2024-03-10T06:30:00+00:00","0.000000000","0.00"',
                    '"2024-03-10T06:30:00.000005+00:00","1.500000000","-2.25"']
    head = run("head", str(src))
    assert [json.loads(line) for line in head.stdout.splitlines()] == rows
    assert "0E-9" not in jsonl.stdout + csv.stdout + head.stdout


def _options(parser: argparse.ArgumentParser, path: str = "aorc"
             ) -> list[tuple[str, argparse.Action]]:
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found += _options(sub, f"{path} {name}")
        elif not isinstance(action, argparse._HelpAction | argparse._VersionAction):
            found.append((f"{path} {'/'.join(action.option_strings) or action.dest}", action))
    return found


def test_every_cli_option_has_help() -> None:
    options = _options(_parser())
    assert len(options) > 40
    missing = [where for where, action in options
               if not action.help or action.help == argparse.SUPPRESS]
    assert not missing, missing


@pytest.mark.parametrize("command", ["head", "cat", "count"])
def test_filter_help_lists_the_operators(command: str) -> None:
    text = run(command, "--help").stdout
    flat = " ".join(text.split())
    for op in ("==", "!=", "<=", ">=", "not in", "is null", "is not null"):
        assert op in flat, (command, op)
