"""Issue 33 item 9 (the demo's part): ``examples/demo.py`` says where it wrote its file, that
a temporary one is deleted, and how to keep it (``--out``, also in ``--help``); with
``--out`` the file stays and pyarrow.orc reads it. Run in this process (``runpy``)."""

from __future__ import annotations

import pathlib
import runpy

import pyarrow.orc as pa_orc
import pytest

DEMO = pathlib.Path(__file__).resolve().parents[2] / "examples" / "demo.py"


def _demo(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
          cwd: pathlib.Path, *args: str) -> str:
    monkeypatch.chdir(cwd)
    monkeypatch.setattr("sys.argv", [str(DEMO), *args])
    try:
        runpy.run_path(str(DEMO), run_name="__main__")
    except SystemExit as exc:
        assert exc.code in (0, None)
    return capsys.readouterr().out


def test_help_names_out(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch,
                        capsys: pytest.CaptureFixture[str]) -> None:
    flat = " ".join(_demo(monkeypatch, capsys, tmp_path, "--help").split())
    assert "--out" in flat and "temporary folder" in flat and "keep" in flat


def test_default_run_says_where_and_how_to_keep(tmp_path: pathlib.Path,
                                                monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    out = _demo(monkeypatch, capsys, tmp_path, "--rows", "500")
    wrote = next(line for line in out.splitlines() if line.startswith("wrote "))
    path = pathlib.Path(wrote.split()[1])
    assert path.name == "demo.orc" and not path.exists()  # temporary, and said so
    assert "--out PATH" in out
    assert list(tmp_path.iterdir()) == []


def test_out_keeps_the_file(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch,
                            capsys: pytest.CaptureFixture[str]) -> None:
    out = _demo(monkeypatch, capsys, tmp_path, "--rows", "500", "--out", "data.orc")
    assert "wrote data.orc" in out and "aorc meta data.orc" in out
    assert pa_orc.read_table(str(tmp_path / "data.orc")).num_rows == 500
