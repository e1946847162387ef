"""Running the ``aorc`` command from tests: in this process or in a fresh interpreter."""

from __future__ import annotations

import contextlib
import io
import os
import pathlib
import subprocess
import sys

from aorc.cli.main import main

ROOT = pathlib.Path(__file__).resolve().parents[2]


def run_subprocess(*args: str) -> subprocess.CompletedProcess[str]:
    """``python -m aorc ARGS`` in a fresh interpreter."""
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "aorc", *args], capture_output=True,
                          text=True, env=env, timeout=120, check=False)


def run(*args: str) -> subprocess.CompletedProcess[str]:
    """``aorc ARGS`` in this process (much faster than a subprocess), same result shape."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(args))
        except SystemExit as exc:  # argparse usage errors
            code = int(exc.code or 0)
    return subprocess.CompletedProcess(["aorc", *args], code, out.getvalue(), err.getvalue())


def assert_one_line_error(result: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("aorc: error: ")
    for needle in needles:
        assert needle in lines[0]
