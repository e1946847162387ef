"""examples/iceberg_events.py runs end to end (append, stream, filtered read checked against
pyiceberg, compaction) -- the README's Iceberg example."""

from __future__ import annotations

import importlib.util
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


async def test_iceberg_example_runs(tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
                                    ) -> None:
    spec = importlib.util.spec_from_file_location("iceberg_events",
                                                  ROOT / "examples" / "iceberg_events.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    await module.main(tmp_path)
    out = capsys.readouterr().out
    assert "every row once: 30000" in out
    assert "by stripe copy" in out
