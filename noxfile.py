"""Extra test environments for ``tests/spark``: the oldest and newest supported PySpark,
and Spark Connect under the newest (see README, "Spark").

Each session makes (and with ``-r`` / ``reuse_venv`` keeps) a virtualenv holding aorc's
runtime and test dependencies and one PySpark, then runs ``pytest tests/spark`` against this
source tree. aorc itself is imported from the tree (its Cython kernels must be built in
place first, as ``pip install -e .`` or ``python setup.py build_ext --inplace`` does), so no
environment compiles anything::

    nox -s spark-3.5 spark-connect      # what .ci/run runs after the main test command
    nox -s spark-4.0 spark-4.1 spark-4.2 spark-4.3   # the other supported lines
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import nox

ROOT = Path(__file__).resolve().parent
nox.options.reuse_venv = "yes"
nox.options.sessions = ["spark-3.5", "spark-connect"]

#: The newest patch of each supported PySpark line (tested with Java 17).
PYSPARK = {"3.5": "3.5.9", "4.0": "4.0.5", "4.1": "4.1.4", "4.2": "4.2.1", "4.3": "4.3.0"}
NEWEST = "4.3"


def _requirements(*extras: str) -> list[str]:
    """aorc's dependencies and the given extras from pyproject.toml, without PySpark, aorc
    itself (imported from the source tree) and what tests/spark does not use (linters, the
    proto compiler, Polars, DuckDB)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = list(project["dependencies"])
    for extra in extras:
        wanted += project["optional-dependencies"][extra]
    skipped = r"^(pyspark|aorc|grpcio-tools|ruff|mypy|import-linter|nox|polars|duckdb)\b"
    return [r for r in wanted if not re.match(skipped, r, re.IGNORECASE)]


def _run_spark_tests(session: nox.Session, *, connect: bool) -> None:
    env = {"PYTHONPATH": str(ROOT), "AORC_TEST_SPARK_CONNECT": "1" if connect else "0"}
    args = session.posargs or ["-q", "-p", "no:cacheprovider", "tests/spark"]
    session.run("python", "-m", "pytest", *args, env=env)


def _make_spark_session(line: str) -> None:
    @nox.session(name=f"spark-{line}", reuse_venv=True)
    def spark(session: nox.Session) -> None:
        """tests/spark in a classic local session under one PySpark line."""
        session.install(*_requirements("test"), f"pyspark=={PYSPARK[line]}")
        _run_spark_tests(session, connect=False)


for _line in PYSPARK:
    _make_spark_session(_line)


@nox.session(name="spark-connect", reuse_venv=True)
def spark_connect(session: nox.Session) -> None:
    """tests/spark through a local Spark Connect server, under the newest PySpark."""
    session.install(*_requirements("test", "spark-connect"), f"pyspark=={PYSPARK[NEWEST]}")
    _run_spark_tests(session, connect=True)

