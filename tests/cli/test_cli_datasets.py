"""Issue 24 items 1 and 5: the CLI decides "file or prefix" as ``read_table`` does (the
README's ``aorc count s3://lake/events --filter 'country == DE'``), and its dataset commands
take ``--exclude-invalid-files`` and ``--path-glob-filter``. Against moto's S3 server; the
counts are checked against pyarrow.dataset over the same files."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.dataset as pads
import pyarrow.orc as pa_orc
import pytest
from helpers.cli import run

import aorc


def orc_bytes(table: pa.Table) -> bytes:
    out = io.BytesIO()
    pa_orc.write_table(table, out)
    return out.getvalue()


EVENTS = {
    "events/country=DE/a.orc": pa.table({"id": pa.array([1, 2, 3], pa.int64()),
                                         "amount": [50.0, 150.0, 250.0]}),
    "events/country=NO/b.orc": pa.table({"id": pa.array([4], pa.int64()),
                                         "amount": [500.0]}),
}


@pytest.fixture
def lake(s3_client: Any, s3_bucket: str) -> str:
    for key, table in EVENTS.items():
        s3_client.put_object(Bucket=s3_bucket, Key=key, Body=orc_bytes(table))
    s3_client.put_object(Bucket=s3_bucket, Key="events/notes.txt", Body=b"stray notes")
    return f"s3://{s3_bucket}/events"


@pytest.mark.parametrize("slash", ["", "/"])
def test_readme_count_example_with_or_without_slash(lake: str, slash: str) -> None:
    result = run("count", lake + slash, "--filter", "country == DE", "--filter", "amount > 100")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[:2] == ["rows: 2", "files: 1"]


@pytest.mark.parametrize("slash", ["", "/"])
def test_head_cat_meta_on_a_prefix(lake: str, slash: str) -> None:
    head = run("head", lake + slash, "-n", "10", "--filter", "country == NO")
    assert head.returncode == 0, head.stderr
    assert [json.loads(line) for line in head.stdout.splitlines()] == [
        {"id": 4, "amount": 500.0, "country": "NO"}]
    cat = run("cat", lake + slash, "--format", "csv", "--columns", "id,country")
    assert cat.returncode == 0, cat.stderr
    assert sorted(cat.stdout.splitlines()[1:]) == ['1,"DE"', '2,"DE"', '3,"DE"', '4,"NO"']
    meta = run("meta", lake + slash, "--json")
    assert meta.returncode == 0, meta.stderr
    info = json.loads(meta.stdout)
    assert (info["files"], info["rows"], info["partition_columns"]) == (2, 4, ["country"])


def test_a_file_is_still_a_file(lake: str) -> None:
    meta = run("meta", lake + "/country=NO/b.orc", "--json")
    assert meta.returncode == 0, meta.stderr
    assert json.loads(meta.stdout)["num_rows"] == 1
    count = run("count", lake + "/country=NO/b.orc")
    assert count.stdout.splitlines()[0] == "rows: 1"


def test_nothing_there_is_one_line_error(lake: str) -> None:
    result = run("head", lake + "-missing")
    assert result.returncode == 1
    assert result.stderr.startswith("aorc: error: ") and result.stderr.count("\n") == 1
    assert "NoSuchKey" in result.stderr or "no such" in result.stderr.lower()


def test_exclude_invalid_files_and_glob_flags(tmp_path: Path) -> None:
    for key, table in EVENTS.items():
        path = tmp_path / key
        path.parent.mkdir(parents=True, exist_ok=True)
        pa_orc.write_table(table, str(path))
    root = tmp_path / "events"
    pa_orc.write_table(pa.table({"id": pa.array([9], pa.int64()), "amount": [1.0]}),
                       str(root / "stray.orc"))
    (root / "country=DE" / "junk.orc").write_bytes(b"not an ORC file" * 8)
    failed = run("count", str(root))
    assert failed.returncode == 1 and "--exclude-invalid-files" in failed.stderr
    with pytest.warns(aorc.AorcWarning, match="stray.orc"), \
            pytest.warns(aorc.AorcWarning, match="junk.orc.*not an ORC file"):
        result = run("count", str(root), "--exclude-invalid-files")
    assert result.returncode == 0, result.stderr
    peer = pads.dataset([str(root / k.removeprefix("events/")) for k in EVENTS],
                        format="orc")
    assert result.stdout.splitlines()[0] == f"rows: {peer.count_rows()}"
    with pytest.warns(aorc.AorcWarning):
        head = run("head", str(root), "--exclude-invalid-files", "-n", "100")
    assert len(head.stdout.splitlines()) == 4
    glob = run("cat", str(root / "country=DE"), "--path-glob-filter", "a.*")
    assert glob.returncode == 0, glob.stderr
    assert len(glob.stdout.splitlines()) == 3
