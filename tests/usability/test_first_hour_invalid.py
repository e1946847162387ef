"""Issue 33 item 1: a dataset read with ``exclude_invalid_files`` warns about every file it
skips (naming the file and why) and counts them in its ``scan_stats``; sync, async and
``aorc count --exclude-invalid-files``. The rows are checked against pyarrow.dataset over the
valid file."""

from __future__ import annotations

import warnings
from pathlib import Path

import pyarrow as pa
import pyarrow.dataset as pads
import pyarrow.orc as pa_orc
import pytest
from helpers.cli import run

import aorc
import aorc.sync


def _folder(tmp_path: Path) -> Path:
    root = tmp_path / "lake"
    root.mkdir()
    table = pa.table({"id": pa.array(range(1000), pa.int64()),
                      "x": pa.array([i * 0.5 for i in range(1000)])})
    pa_orc.write_table(table, str(root / "a.orc"))
    (root / "x.orc").write_text("id,x\n1,2.0\n")  # a text file with an ORC name
    whole = (root / "a.orc").read_bytes()
    (root / "cut.orc").write_bytes(whole[: len(whole) // 2])  # an upload cut short
    return root


def _skips(caught: list[warnings.WarningMessage]) -> list[str]:
    # Every warning names the caller's line, never aorc's (the skips are found on worker
    # threads; aorc.errors.deferred_warnings issues them from the caller's thread).
    ours = [w for w in caught if issubclass(w.category, aorc.AorcWarning)]
    inside = str(Path(aorc.__file__).parent)
    assert not [w.filename for w in ours if w.filename.startswith(inside)], \
        [(w.filename, w.lineno) for w in ours]
    return [str(w.message) for w in ours]


def _check(messages: list[str], root: Path) -> None:
    text = "\n".join(messages)
    for name in ("x.orc", "cut.orc"):
        assert sum(name in m for m in messages) == 1, text
    assert "a.orc" not in text.replace("x.orc", "").replace("cut.orc", "")
    cut = next(m for m in messages if "cut.orc" in m)
    assert "truncated" in cut or "cut short" in cut, cut
    assert "not an ORC file" in next(m for m in messages if "x.orc" in m)


def _peer_rows(root: Path) -> int:
    return int(pads.dataset([str(root / "a.orc")], format="orc").count_rows())


async def test_async_read_dataset_warns_per_skipped_file(tmp_path: Path) -> None:
    root = _folder(tmp_path)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        table = await aorc.read_dataset(root, exclude_invalid_files=True)
    assert table.num_rows == _peer_rows(root)
    _check(_skips(caught), root)


async def test_open_dataset_counts_skipped_files(tmp_path: Path) -> None:
    root = _folder(tmp_path)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ds = await aorc.open_dataset(root, exclude_invalid_files=True)
        table = await ds.read()
    assert table.num_rows == _peer_rows(root)
    assert ds.scan_stats.files_skipped == 2
    _check(_skips(caught), root)


def test_sync_read_dataset_warns(tmp_path: Path) -> None:
    root = _folder(tmp_path)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        table = aorc.sync.read_dataset(root, exclude_invalid_files=True)
    assert table.num_rows == _peer_rows(root)
    _check(_skips(caught), root)


def test_cli_count_warns_and_counts(tmp_path: Path) -> None:
    root = _folder(tmp_path)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = run("count", str(root), "--exclude-invalid-files")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == f"rows: {_peer_rows(root)}"
    assert "skipped: 2" in lines, result.stdout
    _check(_skips(caught), root)


def test_without_the_flag_the_error_names_the_option(tmp_path: Path) -> None:
    root = _folder(tmp_path)
    with pytest.raises(aorc.CorruptFileError, match="exclude_invalid_files"):
        aorc.sync.read_dataset(root)
