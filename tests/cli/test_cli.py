"""The ``aorc`` command, run as ``python -m aorc`` in a subprocess."""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pyarrow as pa
import pyarrow.orc as po
import pyorc
import pytest
from helpers.cli import assert_one_line_error, run, run_subprocess
from helpers.corpus import CORPUS_ABSENT, corpus_root, read_expected

CORPUS = corpus_root()
needs_corpus = pytest.mark.skipif(CORPUS is None, reason=CORPUS_ABSENT)


@pytest.fixture(scope="module")
def arrow_file(tmp_path_factory: pytest.TempPathFactory) -> tuple[pathlib.Path, pa.Table]:
    rng = np.random.default_rng(5)
    n = 30_000
    table = pa.table({
        "id": pa.array(np.arange(n)),
        "name": pa.array([f"n{i % 97}" for i in range(n)]),
        "score": pa.array(rng.random(n)),
        "flag": pa.array(rng.random(n) > 0.5),
    })
    path = tmp_path_factory.mktemp("cli") / "table.orc"
    po.write_table(table, str(path), stripe_size=64 * 1024, compression="zlib",
                   bloom_filter_columns=[1, 2])
    return path, table


def test_meta_text(arrow_file: tuple[pathlib.Path, pa.Table]) -> None:
    path, table = arrow_file
    result = run("meta", str(path))
    assert result.returncode == 0, result.stderr
    out = result.stdout
    ref = po.ORCFile(str(path))
    assert f"rows: {table.num_rows}" in out
    assert f"stripes: {ref.nstripes}" in out
    assert "compression: zlib" in out
    assert "schema: struct<id:bigint,name:string,score:double,flag:boolean>" in out
    assert "writer: C++" in out


def test_meta_json_matches_peers(arrow_file: tuple[pathlib.Path, pa.Table]) -> None:
    path, table = arrow_file
    result = run_subprocess("meta", str(path), "--json")
    assert result.returncode == 0, result.stderr
    info = json.loads(result.stdout)
    ref = po.ORCFile(str(path))
    assert info["num_rows"] == ref.nrows == table.num_rows
    assert info["num_stripes"] == ref.nstripes > 1
    assert info["compression"] == ref.compression.lower()
    assert info["compression_block_size"] == ref.compression_size
    assert info["file_version"] == ref.file_version
    assert info["row_index_stride"] == ref.row_index_stride
    assert [f["name"] for f in info["schema"]["arrow"]] == ref.schema.names
    with open(path, "rb") as f:
        reader = pyorc.Reader(f)
        stripes = [reader.read_stripe(i) for i in range(reader.num_of_stripes)]
        expected = [(s.bytes_offset, s.bytes_length, len(s), set(s.bloom_filter_columns),
                     s.writer_timezone) for s in stripes]
        del reader, stripes
    got = [(s["offset"], s["index_length"] + s["data_length"] + s["footer_length"],
            s["num_rows"], set(s["bloom_filter_columns"]), s["writer_timezone"])
           for s in info["stripes"]]
    assert got == expected
    assert {b["column"] for b in info["bloom_filter_columns"]} == expected[0][3]
    stats = {s["name"]: s for s in info["statistics"]}
    assert stats["id"]["minimum"] == 0 and stats["id"]["maximum"] == table.num_rows - 1
    assert all(len(s["encodings"]) == 5 for s in info["stripes"])


def test_head_json_lines(arrow_file: tuple[pathlib.Path, pa.Table]) -> None:
    path, table = arrow_file
    result = run("head", str(path), "-n", "7", "--columns", "score,id")
    assert result.returncode == 0, result.stderr
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert rows == table.select(["id", "score"]).slice(0, 7).to_pylist()


def test_head_more_rows_than_a_stripe(arrow_file: tuple[pathlib.Path, pa.Table]) -> None:
    path, table = arrow_file
    result = run("head", str(path), "-n", "20000")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 20000
    assert json.loads(lines[-1]) == table.slice(19999, 1).to_pylist()[0]


@needs_corpus
def test_head_conformance_file_matches_expected() -> None:
    assert CORPUS is not None
    name = "TestOrcFile.testStripeLevelStats"
    result = run("head", str(CORPUS / "files" / f"{name}.orc"), "-n", "5")
    assert result.returncode == 0, result.stderr
    expected = read_expected(CORPUS / "expected" / f"{name}.jsn.gz")[:5]
    assert [json.loads(line) for line in result.stdout.splitlines()] == [
        json.loads(line) for line in expected]


@needs_corpus
def test_meta_conformance_files() -> None:
    assert CORPUS is not None
    path = CORPUS / "files" / "TestOrcFile.testStripeLevelStats.orc"
    info = json.loads(run("meta", str(path), "--json").stdout)
    assert info["num_stripes"] == 3
    assert info["writer"]["name"] == "Java"
    assert info["writer"]["writer_version_name"] == "HIVE-8732"
    assert all(s["writer_timezone"] == "US/Pacific" for s in info["stripes"])
    assert all(s["statistics"] is not None for s in info["stripes"])
    # a file whose tail exceeds the first read, with user metadata
    path = CORPUS / "files" / "TestOrcFile.metaData.orc"
    result = run("meta", str(path))
    assert result.returncode == 0, result.stderr
    assert "  big: 40000 bytes" in result.stdout


def test_not_an_orc_file(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "junk.orc"
    path.write_bytes(b"this is not an ORC file at all" * 10)
    assert_one_line_error(run("meta", str(path)), "junk.orc")
    assert_one_line_error(run("head", str(path)), "junk.orc")


def test_missing_file(tmp_path: pathlib.Path) -> None:
    assert_one_line_error(run("meta", str(tmp_path / "absent.orc")), "absent.orc")


def test_unknown_column(arrow_file: tuple[pathlib.Path, pa.Table]) -> None:
    path, _ = arrow_file
    assert_one_line_error(run("head", str(path), "--columns", "nope"), "nope")


@needs_corpus
@pytest.mark.parametrize("command", ["meta", "head"])
def test_corrupt_stripe_footer(command: str) -> None:
    assert CORPUS is not None
    path = CORPUS / "files" / "corrupt" / "stripe_footer_bad_column_encodings.orc"
    assert_one_line_error(run(command, str(path)), "stripe 0")


def test_corrupt_file_in_a_subprocess_has_no_traceback(
        arrow_file: tuple[pathlib.Path, pa.Table], tmp_path: pathlib.Path) -> None:
    path, _ = arrow_file
    data = bytearray(path.read_bytes())
    data[-300:-30] = b"\x00" * 270  # wreck the footer
    bad = tmp_path / "wrecked.orc"
    bad.write_bytes(bytes(data))
    assert_one_line_error(run_subprocess("head", str(bad)), "wrecked.orc")


def test_usage_error_exit_code() -> None:
    result = run("frobnicate")
    assert result.returncode == 2  # argparse's status for usage errors (failures give 1)
    assert result.stderr.count("\n") == 1 and "usage:" not in result.stderr  # one line
    assert "invalid choice" in result.stderr and "aorc --help" in result.stderr
