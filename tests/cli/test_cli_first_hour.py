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
