"""Extra test environments for ``tests/spark``: the oldest and newest supported PySpark,
and Spark Connect under the newest and the oldest line that has it (see README, "Spark").

Each session makes (and with ``-r`` / ``reuse_venv`` keeps) a virtualenv holding aorc's
runtime and test dependencies and one PySpark, then runs ``pytest tests/spark`` against this
source tree. aorc itself is imported from the tree (its Cython kernels must be built in
place first, as ``pip install -e .`` or ``python setup.py build_ext --inplace`` does), so no
environment compiles anything::

    nox -s spark-3.5                    # what .ci/run runs after the main test command,
    flock /tmp/aorc-spark-connect.lock nox -s spark-connect spark-connect-4.0   # and this
    nox -s spark-4.0 spark-4.1 spark-4.2 spark-4.3   # the other supported lines

Spark Connect's local server binds the fixed port 15002, so runs that start one are
serialised by that ``flock`` on a shared machine. ``nox -s build`` checks the packaging:
sdist and wheel build, and the wheel (with its compiled kernels) installs into a clean
virtualenv and imports. ``nox -s polars-1`` runs ``tests/polars`` under Polars 1.x (the
main environment has Polars 2). ``nox -s fuzz -- --seconds N`` fuzzes the reader for longer
than the main test run's two minutes (see ``tests/fuzz/cli.py``). ``nox -s docs`` builds the
documentation site with warnings as errors and loads it in headless Chromium
(``tests/docs/test_doc_site.py``; Debian's ``chromium`` and ``chromium-driver``).
``nox -s engines`` runs ``tests/engines`` (Ray, Dask and Daft, which the main environment
does not hold).
"""

from __future__ import annotations

import os
import re
import shutil
import tomllib
from pathlib import Path

import nox
from nox.command import CommandFailed

ROOT = Path(__file__).resolve().parent
nox.options.reuse_venv = "yes"
nox.options.sessions = ["spark-3.5", "spark-connect", "spark-connect-4.0"]

#: The newest patch of each supported PySpark line (tested with Java 17).
PYSPARK = {"3.5": "3.5.9", "4.0": "4.0.5", "4.1": "4.1.4", "4.2": "4.2.1", "4.3": "4.3.0"}
NEWEST = "4.3"
#: The oldest line with Spark Connect that aorc supports (Python data sources, 4.0).
OLDEST_CONNECT = "4.0"


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
    # the oracles tests/spark needs (CI=true fails the run when one is missing; the others,
    # Kafka's or Polars', are the main test run's)
    env = {"PYTHONPATH": str(ROOT), "AORC_TEST_SPARK_CONNECT": "1" if connect else "0",
           "AORC_TEST_ORACLES": "corpus,java,pyspark,hive"}
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


def _make_connect_session(name: str, line: str) -> None:
    @nox.session(name=name, reuse_venv=True)
    def connect(session: nox.Session) -> None:
        """tests/spark through a local Spark Connect server (under the flock: see above)."""
        session.install(*_requirements("test", "spark-connect"), f"pyspark=={PYSPARK[line]}")
        _run_spark_tests(session, connect=True)


_make_connect_session("spark-connect", NEWEST)
_make_connect_session(f"spark-connect-{OLDEST_CONNECT}", OLDEST_CONNECT)


@nox.session(name="polars-1", reuse_venv=True)
def polars_1(session: nox.Session) -> None:
    """tests/polars under the newest Polars 1.x (the main environment has Polars 2)."""
    session.install(*_requirements("test"), "polars>=1,<2")
    args = session.posargs or ["-q", "-p", "no:cacheprovider", "tests/polars"]
    # tests/polars needs no Spark: CI=true checks only the oracles this run uses.
    session.run("python", "-m", "pytest", *args,
                env={"PYTHONPATH": str(ROOT), "AORC_TEST_ORACLES": "corpus,java,lzo,polars"})


@nox.session(name="engines", reuse_venv=True)
def engines(session: nox.Session) -> None:
    """tests/engines: aorc.ray, aorc.dask and aorc.daft on small local clusters (Ray with 2
    CPUs, a Dask LocalCluster of 2 worker processes, Daft's native runner), in their own
    environment: the engines pin pyarrow, pandas and protobuf ranges of their own."""
    session.install(*_requirements("test", "ray", "dask", "daft"))
    # with the engines' docstrings, which the main environment cannot import
    args = session.posargs or ["-q", "-p", "no:cacheprovider", "tests/engines",
                               "tests/test_docstrings.py"]
    # CI=true fails the run when an engine is missing (instead of skipping its tests)
    session.run("python", "-m", "pytest", *args,
                env={"PYTHONPATH": str(ROOT), "AORC_TEST_ORACLES": "ray,dask,daft"})


@nox.session(name="fuzz", reuse_venv=True)
def fuzz(session: nox.Session) -> None:
    """Long fuzzing runs (``tests/fuzz/cli.py``): the seeded mutation fuzzer over every base
    file, then atheris's coverage-guided fuzzer (installed here when PyPI has a wheel of it
    for this Python; skipped otherwise). Arguments go to the script, e.g.
    ``nox -s fuzz -- --seconds 3600`` or ``-- --count 100000 --engine mutation --seed 7``;
    ten minutes by default. Findings are saved with their replay commands."""
    session.install(*_requirements(), "pytest")
    try:
        session.install("--only-binary", "atheris", "atheris")
    except CommandFailed:
        session.warn("atheris does not install for this Python: mutation fuzzer only")
    session.run("python", str(ROOT / "tests" / "fuzz" / "cli.py"), *session.posargs,
                env={"PYTHONPATH": str(ROOT)})


@nox.session(name="build", reuse_venv=True)
def build(session: nox.Session) -> None:
    """Packaging: sdist and wheel (python -m build), then the wheel in a clean virtualenv."""
    session.install("build")
    work = Path(session.create_tmp()).resolve()
    dist, clean = work / "dist", work / "clean"
    for folder in (dist, clean):
        shutil.rmtree(folder, ignore_errors=True)
    # sdist first, then the wheel built from the unpacked sdist (build's default), so a file
    # missing from the sdist fails here
    session.run("python", "-m", "build", "--outdir", str(dist), str(ROOT))
    session.run("python", str(ROOT / "scripts" / "check_dist.py"), str(dist))
    session.run("python", "-m", "venv", str(clean))
    python = str(clean / "bin" / "python")
    wheel = next(dist.glob("*.whl"))
    session.run(python, "-m", "pip", "install", "--quiet", str(wheel), "mypy",
                external=True)
    with session.chdir(work):  # outside the source tree: only the installed aorc imports
        session.run(python, str(ROOT / "scripts" / "check_dist.py"), "--installed",
                    external=True)
    # The README's editable install for type checking: setuptools' strict mode (its default
    # editable install is an import hook, which mypy cannot follow).
    session.run(python, "-m", "pip", "install", "--quiet", "--no-deps", "-e", str(ROOT),
                "--config-settings", "editable_mode=strict", external=True)
    with session.chdir(work):
        session.run(python, str(ROOT / "scripts" / "check_dist.py"), "--mypy", external=True)


@nox.session(name="docs", reuse_venv=True)
def docs(session: nox.Session) -> None:
    """The docs site: ``mkdocs build --strict`` (a broken link or anchor, an unresolved API
    reference, a docstring griffe cannot parse or a public name without one fails), then the
    built site served on 127.0.0.1 and loaded in headless Chromium
    (``tests/docs/test_doc_site.py``; with ``CI=true`` a missing Chromium fails). aorc is
    imported from the tree (for the CLI help), so its runtime dependencies are installed too.
    The site goes to ``site/`` and the front page's screenshot to ``site-screenshot.png``."""
    session.install(*_requirements("docs"))
    site = ROOT / "site"
    env = {"PYTHONPATH": str(ROOT), "NO_MKDOCS_2_WARNING": "1"}
    session.run("python", "-m", "mkdocs", "build", "--strict", "--config-file",
                str(ROOT / "mkdocs.yml"), "--site-dir", str(site), env=env)
    # the site's test alone, without tests/conftest.py (it needs the test extra)
    session.run("python", "-m", "pytest", "-q", "-p", "no:cacheprovider", "--noconftest",
                "-c", os.devnull, "--rootdir", str(ROOT), *session.posargs,
                str(ROOT / "tests" / "docs" / "test_doc_site.py"),
                env={**env, "AORC_DOCS_SITE": str(site),
                     "AORC_DOCS_SCREENSHOT": str(ROOT / "site-screenshot.png")})
