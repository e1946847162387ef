"""``aorc convert`` to and from formats other than ORC (``aorc.cli.export``): every output
read back by pyarrow's own readers (Parquet, CSV, JSON, IPC) equals the ORC source as
pyarrow.orc reads it; every input pyarrow writes (Parquet, CSV, JSON lines, Arrow IPC file
and stream) converted to ORC equals what pyarrow reads from it; unknown extensions and ORC-only
flags are usage errors that write nothing; S3 output through moto."""

from __future__ import annotations

import datetime
import decimal
import json
import os
import pathlib
import re
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.csv as pa_csv
import pyarrow.feather as feather
import pyarrow.json as pa_json
import pyarrow.orc as po
import pyarrow.parquet as pq
import pytest
from helpers.cli import run

from aorc.cli.export import OUTPUT_FORMATS, output_format
from aorc.errors import SchemaError

N = 2500


def _flat(n: int = N, seed: int = 7) -> pa.Table:
    rng = np.random.default_rng(seed)
    valid = rng.random(n) > 0.1
    texts = ["plain", 'quote " and , comma', "new\nline", "é 漢 😀", "back\\slash", ""]
    return pa.table({
        "id": pa.array(np.arange(n, dtype=np.int64)),
        "f": pa.array(rng.standard_normal(n) * 1e3, mask=~valid),
        "s": pa.array([texts[i % len(texts)] if valid[i] else None for i in range(n)]),
        "b": pa.array(rng.random(n) < 0.5, mask=~valid),
        "ts": pa.array(rng.integers(946_684_800, 1_893_456_000, n) * 10**9
                       + rng.integers(0, 10**9, n), pa.timestamp("ns")),
        "day": pa.array([datetime.date(2026, 1, 1) + datetime.timedelta(days=i % 400)
                         for i in range(n)]),
        "dec": pa.array([decimal.Decimal(int(v)).scaleb(-3) for v in
                         rng.integers(-10**9, 10**9, n)], pa.decimal128(12, 3)),
    })


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> tuple[pathlib.Path, pa.Table]:
    """An ORC file of flat and nested columns, and the table pyarrow.orc reads from it."""
    table = _flat().append_column(
        "l", pa.array([None if i % 9 == 0 else [i, -i] for i in range(N)],
                      pa.list_(pa.int64())))
    path = tmp_path_factory.mktemp("export") / "src.orc"
    po.write_table(table, str(path), stripe_size=64 * 1024)
    return path, po.read_table(str(path))


def _convert(*args: str) -> tuple[int, int]:
    """Run ``aorc convert ARGS``; the rows and bytes it printed."""
    result = run("convert", *args)
    assert result.returncode == 0, result.stderr
    match = re.fullmatch(r"wrote (\d+) rows, (\d+) bytes to \S+ \((\w+)\)\n", result.stdout)
    assert match, result.stdout
    return int(match[1]), int(match[2])


def _printed_matches(out: pathlib.Path, printed: tuple[int, int], rows: int) -> None:
    assert printed == (rows, os.path.getsize(out))
    assert not [p for p in out.parent.iterdir() if ".aorc-tmp-" in p.name]


@pytest.mark.parametrize("name", ["out.parquet", "out.pq", "out.arrow", "out.feather",
                                  "out.ipc"])
def test_orc_to_parquet_and_arrow_file(source: tuple[pathlib.Path, pa.Table],
                                       tmp_path: pathlib.Path, name: str) -> None:
    src, expected = source
    out = tmp_path / name
    _printed_matches(out, _convert(str(src), str(out)), N)
    got = (pq.read_table(out) if output_format(name) == "parquet"
           else feather.read_table(out))
    assert got.equals(expected)


def test_orc_to_arrow_stream(source: tuple[pathlib.Path, pa.Table],
                             tmp_path: pathlib.Path) -> None:
    src, expected = source
    out = tmp_path / "out.arrows"
    _printed_matches(out, _convert(str(src), str(out)), N)
    with pa.ipc.open_stream(pa.memory_map(str(out))) as reader:
        assert reader.read_all().equals(expected)


def _csv_back(path: pathlib.Path, schema: pa.Schema, delimiter: str = ",") -> pa.Table:
    return pa_csv.read_csv(path, parse_options=pa_csv.ParseOptions(delimiter=delimiter),
                           convert_options=pa_csv.ConvertOptions(
                               column_types=dict(zip(schema.names, schema.types, strict=True)),
                               strings_can_be_null=True, quoted_strings_can_be_null=False))


@pytest.mark.parametrize(("name", "delimiter"), [("out.csv", ","), ("out.tsv", "\t")])
def test_orc_to_csv(source: tuple[pathlib.Path, pa.Table], tmp_path: pathlib.Path,
                    name: str, delimiter: str) -> None:
    src, expected = source
    out = tmp_path / name
    _printed_matches(out, _convert(str(src), str(out)), N)
    flat = expected.drop_columns(["l"])
    got = _csv_back(out, flat.schema.append(pa.field("l", pa.string())), delimiter)
    assert got.drop_columns(["l"]).equals(flat)
    # a nested column is JSON text, as `aorc cat --format csv` prints it
    assert [None if v is None else json.loads(v) for v in got["l"].to_pylist()] == \
        expected["l"].to_pylist()


def test_orc_to_json_lines(source: tuple[pathlib.Path, pa.Table],
                           tmp_path: pathlib.Path) -> None:
    src, expected = source
    out = tmp_path / "out.jsonl"
    _printed_matches(out, _convert(str(src), str(out)), N)
    # pyarrow's JSON reader parses what it can type exactly: numbers, text, ISO timestamps
    exact = expected.select(["id", "f", "s", "b", "ts", "l"])
    got = pa_json.read_json(out, parse_options=pa_json.ParseOptions(
        explicit_schema=exact.schema, unexpected_field_behavior="ignore"))
    assert got.equals(exact)
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [row["day"] for row in lines] == [d.isoformat() for d in expected["day"].to_pylist()]
    assert [decimal.Decimal(row["dec"]) for row in lines] == expected["dec"].to_pylist()
    # the same text as `aorc cat`
    assert run("cat", str(src)).stdout == out.read_text()


def _inputs(table: pa.Table, folder: pathlib.Path) -> dict[str, pathlib.Path]:
    paths = {name: folder / name for name in
             ("in.parquet", "in.feather", "in.arrows", "in.csv", "in.jsonl")}
    pq.write_table(table, paths["in.parquet"])
    feather.write_feather(table, paths["in.feather"])
    with pa.ipc.new_stream(str(paths["in.arrows"]), table.schema) as writer:
        writer.write_table(table, max_chunksize=700)
    pa_csv.write_csv(table, paths["in.csv"])
    with open(paths["in.jsonl"], "w") as f:
        for row in table.drop_columns(["ts", "dec"]).to_pylist():
            f.write(json.dumps(row, default=str) + "\n")
    return paths


def test_every_input_to_orc(tmp_path: pathlib.Path) -> None:
    table = _flat(1200)
    for name, path in _inputs(table, tmp_path).items():
        out = tmp_path / (name + ".orc")
        rows, size = _convert(str(path), str(out))
        assert (rows, size) == (table.num_rows, os.path.getsize(out)), name
        got = po.read_table(str(out))
        if name in ("in.csv", "in.jsonl"):  # the types pyarrow infers from the text
            expected = (pa_csv.read_csv(path) if name == "in.csv" else pa_json.read_json(path))
        else:
            expected = table
        assert got.equals(expected.cast(got.schema)), name


def test_to_overrides_the_extension(source: tuple[pathlib.Path, pa.Table],
                                    tmp_path: pathlib.Path) -> None:
    src, expected = source
    out = tmp_path / "data.bin"
    _convert(str(src), str(out), "--to", "parquet")
    assert pq.read_table(out).equals(expected)
    orc_named = tmp_path / "really-parquet.orc"
    _convert(str(src), str(orc_named), "--to", "parquet")
    assert orc_named.read_bytes()[:4] == b"PAR1"
    _convert(str(tmp_path / "data.bin"), str(tmp_path / "back.orc"), "--from", "parquet")
    assert po.read_table(str(tmp_path / "back.orc")).equals(expected)


@pytest.mark.parametrize("args", [
    ["{src}", "{d}/out.xlsx"],
    ["{src}", "{d}/out"],
    ["{src}", "{d}/out.csv.gz"],
    ["{src}", "{d}/out.csv", "--stripe-size", "1M"],
    ["{src}", "{d}/out.jsonl", "--compression", "zstd"],
    ["{src}", "{d}/out.parquet", "--bloom-filter-columns", "id"],
    ["{src}", "{d}/out.arrow", "--compression", "snappy"],
    ["{src}", "{d}/out.parquet", "--to", "xlsx"],
])
def test_usage_errors_write_nothing(source: tuple[pathlib.Path, pa.Table],
                                    tmp_path: pathlib.Path, args: list[str]) -> None:
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    result = run("convert", *[a.format(src=source[0], d=out_dir) for a in args])
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.startswith("aorc convert: error: ")
    assert result.stderr.endswith("(see 'aorc convert --help')\n")
    assert result.stderr.count("\n") == 1
    assert list(out_dir.iterdir()) == []


def test_output_format_names_the_known_extensions() -> None:
    with pytest.raises(SchemaError, match=r"\.xlsx.*--to"):
        output_format("a/b.xlsx")
    with pytest.raises(SchemaError, match="unknown output format"):
        output_format("a/b.orc", "xlsx")
    assert output_format("s3://b/k.PARQUET") == "parquet"
    assert output_format("x.orc", "jsonl") == "jsonl"
    assert set(OUTPUT_FORMATS) == {"orc", "parquet", "csv", "jsonl", "arrow", "arrows"}


def test_parquet_and_arrow_compression(source: tuple[pathlib.Path, pa.Table],
                                       tmp_path: pathlib.Path) -> None:
    src, expected = source
    out = tmp_path / "z.parquet"
    _convert(str(src), str(out), "--compression", "zlib", "--compression-level", "7")
    meta = pq.ParquetFile(out).metadata
    assert meta.row_group(0).column(0).compression == "GZIP"
    assert pq.read_table(out).equals(expected)
    ipc = tmp_path / "z.arrow"
    _convert(str(src), str(ipc), "--compression", "lz4")
    assert feather.read_table(ipc).equals(expected)


def test_a_failed_conversion_leaves_nothing(tmp_path: pathlib.Path) -> None:
    src = tmp_path / "bad.csv"
    src.write_text("a,b\n" + "1,2\n" * 400_000 + "x,y\n")  # a type change in a later block
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    result = run("convert", str(src), str(out_dir / "out.parquet"))
    assert result.returncode == 1
    assert list(out_dir.iterdir()) == []


def test_s3_outputs(s3_client: Any, s3_bucket: str, source: tuple[pathlib.Path, pa.Table],
                    tmp_path: pathlib.Path) -> None:
    src, expected = source
    for key in ("out/data.parquet", "out/data.jsonl"):
        rows, size = _convert(str(src), f"s3://{s3_bucket}/{key}")
        local = tmp_path / key.rsplit("/", 1)[-1]
        s3_client.download_file(s3_bucket, key, str(local))
        assert (rows, size) == (N, os.path.getsize(local))
        if key.endswith(".parquet"):
            assert pq.read_table(local).equals(expected)
        else:
            assert local.read_text() == run("cat", str(src)).stdout
    # and back from S3 (a Parquet input is copied to a temporary file first)
    _convert(f"s3://{s3_bucket}/out/data.parquet", str(tmp_path / "back.orc"))
    assert po.read_table(str(tmp_path / "back.orc")).equals(expected)
    assert s3_client.list_multipart_uploads(Bucket=s3_bucket).get("Uploads", []) == []
