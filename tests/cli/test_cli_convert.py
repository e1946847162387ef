"""``aorc cat`` and ``aorc convert`` (and the storage options of every command), locally and
on moto's S3 server. Outputs are checked with pyarrow (its CSV, JSON, Parquet and ORC
readers) and pyorc, never against aorc alone."""

from __future__ import annotations

import datetime
import decimal
import gzip
import io
import json
import pathlib
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.csv as pa_csv
import pyarrow.json as pa_json
import pyarrow.orc as po
import pyarrow.parquet as pq
import pyorc
import pytest
from helpers.cli import assert_one_line_error, run, run_subprocess

from aorc.cli.convert import Progress, detect_format


def orc_table(path: pathlib.Path | str) -> pa.Table:
    return po.read_table(str(path))


@pytest.fixture
def csv_file(tmp_path: pathlib.Path) -> pathlib.Path:
    rng = np.random.default_rng(1)
    n = 5000
    lines = ["id,name,score,flag,day"]
    for i in range(n):
        name = f'"n, {i % 13}"' if i % 7 == 0 else f"n{i % 13}"
        score = "" if i % 11 == 0 else f"{rng.random() * 100:.3f}"
        lines.append(f"{i},{name},{score},{'true' if i % 2 else 'false'},2026-11-{1 + i % 28:02d}")
    path = tmp_path / "data.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_detect_format() -> None:
    assert detect_format("a/b.CSV") == "csv"
    assert detect_format("s3://b/x.jsonl.gz") == "jsonl"
    assert detect_format("x.parquet") == "parquet"
    assert detect_format("x.orc") == "orc"


# =========================================================================== convert

def test_convert_csv(csv_file: pathlib.Path, tmp_path: pathlib.Path) -> None:
    out = tmp_path / "out.orc"
    result = run("convert", str(csv_file), str(out), "--compression", "zlib",
                 "--stripe-size", "64k", "--row-index-stride", "1000",
                 "--bloom-filter-columns", "name", "--metadata", "source=test")
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""  # no progress bar when stderr is not a terminal
    expected = pa_csv.read_csv(csv_file)
    assert orc_table(out).equals(expected.cast(orc_table(out).schema))
    f = po.ORCFile(str(out))
    assert f.compression == "ZLIB" and f.row_index_stride == 1000
    assert f.metadata == {b"source": b"test"}
    with open(out, "rb") as handle:
        reader = pyorc.Reader(handle)
        assert reader.num_of_stripes > 1
        stripe = reader.read_stripe(0)
        assert 2 in stripe.bloom_filter_columns
        del stripe, reader


def test_convert_compression_level(csv_file: pathlib.Path, tmp_path: pathlib.Path) -> None:
    sizes = {}
    for level in ("1", "19"):
        out = tmp_path / f"out{level}.orc"
        result = run("convert", str(csv_file), str(out), "--compression-level", level)
        assert result.returncode == 0, result.stderr
        assert orc_table(out).num_rows == pa_csv.read_csv(csv_file).num_rows
        sizes[level] = out.stat().st_size
    assert sizes["19"] < sizes["1"]  # the level reached the codec
    bad = run("convert", str(csv_file), str(tmp_path / "bad.orc"), "--compression", "zlib",
              "--compression-level", "42")
    assert bad.returncode == 1 and "compression_level" in bad.stderr


def test_convert_csv_with_schema_and_delimiter(tmp_path: pathlib.Path) -> None:
    src = tmp_path / "d.txt"
    src.write_text("id;name;price\n1;apple;1.50\n2;pear;\n3;fig;10.25\n")
    out = tmp_path / "d.orc"
    result = run("convert", str(src), str(out), "--from", "csv", "--delimiter", ";",
                 "--schema", "struct<id:int,name:varchar(8),price:decimal(6,2)>")
    assert result.returncode == 0, result.stderr
    with open(out, "rb") as handle:
        reader = pyorc.Reader(handle)
        assert str(reader.schema) == "struct<id:int,name:varchar(8),price:decimal(6,2)>"
        assert list(reader) == [(1, "apple", decimal.Decimal("1.50")), (2, "pear", None),
                                (3, "fig", decimal.Decimal("10.25"))]


def test_convert_json_lines_nested_and_compressed(tmp_path: pathlib.Path) -> None:
    import gzip
    rows = [{"a": i, "b": [i, i + 1] if i % 3 else None, "c": {"x": f"v{i}", "y": i / 2},
             "d": None} for i in range(3000)]
    src = tmp_path / "rows.jsonl.gz"
    with gzip.open(src, "wt") as f:
        f.writelines(json.dumps(r) + "\n" for r in rows)
    out = tmp_path / "rows.orc"
    result = run("convert", str(src), str(out))
    assert result.returncode == 0, result.stderr
    expected = pa_json.read_json(src)
    got = orc_table(out)
    assert got.column_names == ["a", "b", "c", "d"]
    assert got.drop_columns(["d"]).equals(expected.drop_columns(["d"]))
    assert got.column("d").null_count == 3000  # an all-null column becomes strings


def test_convert_parquet(tmp_path: pathlib.Path) -> None:
    n = 20_000
    table = pa.table({
        "u8": pa.array(np.arange(n) % 250, pa.uint8()),
        "u32": pa.array(np.arange(n) * 1000, pa.uint32()),
        "ts": pa.array(np.arange(n) * 10**9, pa.timestamp("ns")),
        "dec": pa.array([decimal.Decimal(i) / 100 for i in range(n)], pa.decimal128(12, 2)),
        "tags": pa.array([[str(i)] * (i % 3) for i in range(n)], pa.list_(pa.string())),
        "cat": pa.array([f"c{i % 5}" for i in range(n)]).dictionary_encode(),
    })
    src = tmp_path / "t.parquet"
    pq.write_table(table, src, row_group_size=4000)
    out = tmp_path / "t.orc"
    result = run("convert", str(src), str(out))
    assert result.returncode == 0, result.stderr
    got = orc_table(out)
    assert got.schema.field("u8").type == pa.int16()  # widened: ORC has no unsigned types
    assert got.schema.field("u32").type == pa.int64()
    assert got.column("u32").to_pylist() == table.column("u32").to_pylist()
    for name in ("u8", "ts", "dec", "tags"):
        assert got.column(name).to_pylist() == table.column(name).to_pylist(), name
    assert got.column("cat").to_pylist() == table.column("cat").to_pylist()


def test_convert_orc_to_orc(tmp_path: pathlib.Path) -> None:
    table = pa.table({"a": np.arange(100_000), "b": np.arange(100_000) * 0.5})
    src = tmp_path / "in.orc"
    po.write_table(table, str(src), compression="snappy")
    out = tmp_path / "out.orc"
    result = run("convert", str(src), str(out), "--compression", "lz4")
    assert result.returncode == 0, result.stderr
    assert po.ORCFile(str(out)).compression == "LZ4"
    assert orc_table(out).equals(table)


def test_progress_bar(csv_file: pathlib.Path, tmp_path: pathlib.Path) -> None:
    result = run("convert", str(csv_file), str(tmp_path / "p.orc"), "--progress")
    assert result.returncode == 0, result.stderr
    assert "converting" in result.stderr and "100.0%" in result.stderr
    assert result.stderr.endswith("\n")


def test_progress_draws_only_on_a_terminal() -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    tty, pipe = Tty(), io.StringIO()
    for stream in (tty, pipe):
        bar = Progress("work", 1000, "rows", stream=stream)
        bar.update(250)
        bar.update(750)
        bar.close()
    assert pipe.getvalue() == ""
    assert "work [#######" in tty.getvalue() and "25.0%" in tty.getvalue()
    assert "100.0%" in tty.getvalue() and tty.getvalue().endswith("\n")


# =========================================================================== cat

@pytest.fixture(scope="module")
def typed_orc(tmp_path_factory: pytest.TempPathFactory) -> tuple[pathlib.Path, pa.Table]:
    n = 3000
    table = pa.table({
        "id": pa.array(np.arange(n)),
        "s": pa.array([None if i % 10 == 0 else f"s{i}, \"q\"" for i in range(n)]),
        "f": pa.array(np.arange(n) / 8),
        "d": pa.array([datetime.date(2026, 1, 1) + datetime.timedelta(days=i % 300)
                       for i in range(n)]),
        "l": pa.array([[i, i] for i in range(n)], pa.list_(pa.int64())),
        "bin": pa.array([bytes([i % 256]) * 3 for i in range(n)]),
    })
    path = tmp_path_factory.mktemp("cat") / "typed.orc"
    po.write_table(table, str(path), stripe_size=32 * 1024)
    return path, table


def test_cat_json_lines(typed_orc: tuple[pathlib.Path, pa.Table]) -> None:
    path, table = typed_orc
    result = run("cat", str(path), "--columns", "id,s,f,l")
    assert result.returncode == 0, result.stderr
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert rows == table.select(["id", "s", "f", "l"]).to_pylist()


def test_cat_csv(typed_orc: tuple[pathlib.Path, pa.Table]) -> None:
    path, table = typed_orc
    result = run("cat", str(path), "--format", "csv")
    assert result.returncode == 0, result.stderr
    options = pa_csv.ConvertOptions(column_types={"l": pa.string(), "bin": pa.string()},
                                    strings_can_be_null=True)  # (no empty strings here)
    back = pa_csv.read_csv(io.BytesIO(result.stdout.encode()), convert_options=options)
    assert back.num_rows == table.num_rows
    for name in ("id", "s", "f", "d"):
        assert back.column(name).to_pylist() == table.column(name).to_pylist(), name
    assert [json.loads(v) for v in back.column("l").to_pylist()] == table.column(
        "l").to_pylist()
    import base64
    assert [base64.b64decode(v) for v in back.column("bin").to_pylist()] == table.column(
        "bin").to_pylist()


def test_cat_csv_empty_file_prints_the_header(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "empty.orc"
    po.write_table(pa.table({"a": pa.array([], pa.int32()), "b": pa.array([], pa.string())}),
                   str(path))
    result = run("cat", str(path), "--format", "csv", "--columns", "b")
    assert result.returncode == 0, result.stderr
    assert result.stdout == '"b"\n'


# =========================================================================== S3

def test_s3_convert_cat_meta_head(s3_client: Any, s3_bucket: str, csv_file: pathlib.Path,
                                  monkeypatch: pytest.MonkeyPatch, s3_env: str) -> None:
    s3_client.upload_file(str(csv_file), s3_bucket, "in/data.csv")
    out = f"s3://{s3_bucket}/out/data.orc"
    result = run("convert", f"s3://{s3_bucket}/in/data.csv", out, "--stripe-size", "32k")
    assert result.returncode == 0, result.stderr
    local = csv_file.parent / "fetched.orc"
    s3_client.download_file(s3_bucket, "out/data.orc", str(local))
    expected = pa_csv.read_csv(csv_file)
    assert orc_table(local).equals(expected.cast(orc_table(local).schema))
    # the endpoint from the command line instead of the environment
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")
    flags = ["--endpoint-url", s3_env, "-S", "max_attempts=1"]
    cat = run("cat", out, *flags, "--columns", "id,name")
    assert cat.returncode == 0, cat.stderr
    assert [json.loads(line) for line in cat.stdout.splitlines()] == expected.select(
        ["id", "name"]).to_pylist()
    meta = run("meta", out, "--json", *flags)
    assert meta.returncode == 0, meta.stderr
    assert json.loads(meta.stdout)["num_rows"] == expected.num_rows
    head = run("head", out, "-n", "3", *flags)
    assert [json.loads(x)["id"] for x in head.stdout.splitlines()] == [0, 1, 2]
    again = run("convert", out, f"s3://{s3_bucket}/out/copy.orc", *flags)
    assert again.returncode == 0, again.stderr
    down = run("convert", out, str(csv_file.parent / "down.orc"), *flags)  # S3 to local
    assert down.returncode == 0, down.stderr
    assert orc_table(csv_file.parent / "down.orc").equals(orc_table(local))
    assert s3_client.list_multipart_uploads(Bucket=s3_bucket).get("Uploads", []) == []


def test_s3_errors_are_one_line(s3_client: Any, s3_bucket: str, csv_file: pathlib.Path) -> None:
    assert_one_line_error(run("cat", f"s3://{s3_bucket}/absent.orc"), "absent.orc")
    assert_one_line_error(run("convert", f"s3://{s3_bucket}/absent.csv", "x.orc"),
                          "absent.csv")
    assert_one_line_error(run("convert", str(csv_file), "s3://no-such-bucket-aorc/x.orc"),
                          "no-such-bucket-aorc")
    s3_client.put_object(Bucket=s3_bucket, Key="junk.orc", Body=b"not orc at all" * 20)
    assert_one_line_error(run("meta", f"s3://{s3_bucket}/junk.orc"), "junk.orc")


# =========================================================================== bad input

@pytest.mark.parametrize("ext", ["csv", "csv.gz"])
def test_csv_round_trip_keeps_nan_and_one_column_nulls(tmp_path: pathlib.Path,
                                                       ext: str) -> None:
    """ORC -> CSV -> ORC keeps every row of a one-column file: a null is written as an empty
    line (pyarrow.csv would skip it) and NaN as ``nan`` (pyarrow.csv would read it as null)."""
    values = [1.5, float("nan"), None, float("inf"), None, -0.0]
    src = tmp_path / "a.orc"
    po.write_table(pa.table({"a": pa.array(values, pa.float64())}), str(src))
    text = tmp_path / "a.csv"
    assert run("convert", str(src), str(text)).returncode == 0
    if ext == "csv.gz":  # (a compressed input: the column count is probed through gzip)
        text = tmp_path / "a.csv.gz"
        text.write_bytes(gzip.compress((tmp_path / "a.csv").read_bytes()))
    back = tmp_path / "b.orc"
    result = run("convert", str(text), str(back))
    assert result.returncode == 0, result.stderr
    got = orc_table(back).column("a").to_pylist()
    assert len(got) == len(values)
    assert [("nan" if v != v else v) for v in got] == [
        ("nan" if v is not None and v != v else v) for v in values]
    # pyarrow.csv's own reading of the same text loses the nulls' rows and the NaN
    if ext == "csv":
        assert pa_csv.read_csv(text).num_rows < len(values)


def test_blank_lines_of_a_wide_csv_are_not_rows(tmp_path: pathlib.Path) -> None:
    src = tmp_path / "w.csv"
    src.write_text("a,b\n1,x\n\n2,y\n\n")
    out = tmp_path / "w.orc"
    assert run("convert", str(src), str(out)).returncode == 0
    assert orc_table(out).to_pylist() == [{"a": 1, "b": "x"}, {"a": 2, "b": "y"}]


def test_bad_csv_leaves_no_output(tmp_path: pathlib.Path) -> None:
    src = tmp_path / "bad.csv"
    src.write_text("a,b\n1,2\n3,4,5\n")
    out = tmp_path / "bad.orc"
    assert_one_line_error(run("convert", str(src), str(out)), "bad.csv", "Expected 2 columns")
    assert list(tmp_path.iterdir()) == [src]


def test_type_change_in_a_later_block_suggests_a_schema(tmp_path: pathlib.Path) -> None:
    src = tmp_path / "late.csv"
    src.write_text("a\n" + "1\n" * 1_000_000 + "oops\n")
    out = tmp_path / "late.orc"
    assert_one_line_error(run("convert", str(src), str(out)), "late.csv", "--schema")
    assert not out.exists()
    fixed = run("convert", str(src), str(out), "--schema", "struct<a:string>")
    assert fixed.returncode == 0, fixed.stderr
    assert orc_table(out).num_rows == 1_000_001


@pytest.mark.parametrize("args, needle", [
    (["convert", "{d}/absent.csv", "{d}/o.orc"], "absent.csv"),
    (["convert", "{d}/x.unknown", "{d}/o.orc"], "--from"),
    (["convert", "{d}/ok.csv", "{d}/o.orc", "--schema", "struct<a:nonsense>"], "nonsense"),
    (["convert", "{d}/ok.csv", "{d}/o.orc", "--metadata", "novalue"], "KEY=VALUE"),
    (["convert", "{d}/ok.csv", "{d}/o.orc", "--bloom-filter-columns", "zz"], "zz"),
    (["convert", "{d}/ok.csv", "{d}/ok.csv/o.orc"], "ok.csv/o.orc"),  # parent is a file
    (["convert", "{d}/junk.parquet", "{d}/o.orc"], "junk.parquet"),
    (["convert", "{d}/junk.orc", "{d}/o.orc"], "junk.orc"),
    (["convert", "{d}/t.jsonl", "{d}/o.orc"], "t.jsonl"),
    (["cat", "{d}/junk.orc", "--format", "csv"], "junk.orc"),
    (["cat", "{d}/ok.csv"], "ok.csv"),
    (["convert", "{d}/ok.csv", "{d}/o.orc", "-S", "fsync=3"], "fsync"),
])
def test_bad_input_gives_one_line_errors(tmp_path: pathlib.Path, args: list[str],
                                         needle: str) -> None:
    (tmp_path / "ok.csv").write_text("a,b\n1,2\n")
    (tmp_path / "junk.parquet").write_bytes(b"PAR1 this is not parquet")
    (tmp_path / "junk.orc").write_bytes(b"not an orc file" * 50)
    (tmp_path / "t.jsonl").write_text('{"a": 1}\n{"a": [1, 2\n')
    argv = [a.format(d=tmp_path) for a in args]
    assert_one_line_error(run(*argv), needle)
    assert not (tmp_path / "o.orc").exists()


def test_subprocess_error_has_no_traceback(tmp_path: pathlib.Path) -> None:
    src = tmp_path / "bad.csv"
    src.write_text("a,b\n1,2,3\n")
    assert_one_line_error(run_subprocess("convert", str(src), str(tmp_path / "o.orc")),
                          "bad.csv")


@pytest.mark.parametrize("unit", ["s", "ms", "us", "ns"])
@pytest.mark.parametrize("tz", [None, "UTC"])
def test_timestamps_print_as_isoformat(unit: str, tz: str | None) -> None:
    from aorc.cli.values import timestamp_texts as _timestamp_texts

    rng = np.random.default_rng(3)
    limit = {"s": 6 * 10**10, "ms": 6 * 10**13, "us": 6 * 10**16, "ns": 9 * 10**18}[unit]
    values = rng.integers(-limit, limit, 3000)
    values[:500] = values[:500] // 10**6 * 10**6  # whole seconds / milliseconds too
    arr = pa.concat_arrays([pa.array(values, pa.timestamp(unit, tz)),
                            pa.array([None], pa.timestamp(unit, tz))])
    expected = [None if v is None else v.isoformat() for v in arr.to_pylist()]
    assert _timestamp_texts(arr) == expected


def test_cat_progress_bar(typed_orc: tuple[pathlib.Path, pa.Table]) -> None:
    path, table = typed_orc
    result = run("cat", str(path), "--progress", "--columns", "id")
    assert result.returncode == 0, result.stderr
    assert len(result.stdout.splitlines()) == table.num_rows
    assert "reading" in result.stderr and "100.0%" in result.stderr
