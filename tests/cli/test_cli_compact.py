"""``aorc compact``: merges a dataset's small files (partition filters, writer options),
prints what it did; pyarrow.dataset reads the same rows after it; errors are one line."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.dataset as pads
from helpers.cli import assert_one_line_error, run

import aorc


def _dataset(root: Path) -> pa.Table:
    table = pa.table({"id": list(range(600)), "k": [f"p{i % 2}" for i in range(600)],
                      "v": [float(i) for i in range(600)]})
    aorc.sync.write_dataset(table, root, partition_cols=["k"], max_rows_per_file=50)
    return table


def _peer(root: Path) -> list[dict[str, object]]:
    return pads.dataset(root, format="orc", partitioning="hive").to_table().select(
        ["id", "v"]).sort_by("id").to_pylist()


def test_compact_merges_and_reports(tmp_path: Path) -> None:
    root = tmp_path / "ds"
    table = _dataset(root)
    before = _peer(root)
    assert before == table.select(["id", "v"]).to_pylist()
    result = run("compact", str(root), "--target-size", "1M", "--filter", "k == p1",
                 "--no-progress")
    assert result.returncode == 0, result.stderr
    assert "merged: 6 files into 1 (stripe copy: 1, re-encoded: 0)" in result.stdout
    assert "k=p1" in result.stdout and "k=p0" not in result.stdout
    assert len(list((root / "k=p1").glob("*.orc"))) == 1
    assert len(list((root / "k=p0").glob("*.orc"))) == 6
    assert _peer(root) == before
    result = run("compact", str(root), "--compression", "zlib", "--no-progress")
    assert result.returncode == 0, result.stderr
    assert "merged: 6 files into 1" in result.stdout
    assert _peer(root) == before


def test_compact_errors_are_one_line(tmp_path: Path) -> None:
    root = tmp_path / "ds"
    _dataset(root)
    assert_one_line_error(run("compact", str(root), "--filter", "v > 3"), "partition")
    assert_one_line_error(run("compact", str(tmp_path / "missing")))
