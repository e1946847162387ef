"""Issue 24 items 2 and 7: aorc.spark where a new user first runs it. Spark Connect on
PySpark 4.0 (whose analyzer refuses an aggregate over ``spark_partition_id()``), and a
session whose Python workers run another interpreter than the driver's (a virtualenv without
``PYSPARK_PYTHON``): an error that names the fix instead of a failing job."""

from __future__ import annotations

import pathlib
import subprocess
import sys
import venv
from typing import Any

import pyarrow as pa
import pytest

import aorc
import aorc.spark
import aorc.sync
from aorc.spark.compat import check_worker_python, default_parallelism, server_parallelism

pytestmark = pytest.mark.spark


def test_server_parallelism_counts_the_range_partitions(spark: Any) -> None:
    """The job default_parallelism runs over Spark Connect when spark.default.parallelism
    is not set (on 4.0 it raised AGGREGATE_FUNCTION_WITH_NONDETERMINISTIC_EXPRESSION)."""
    assert server_parallelism(spark) == 2  # local[2]
    assert default_parallelism(spark) == 2


def test_write_and_read_through_the_session(spark: Any, tmp_path: pathlib.Path) -> None:
    df = spark.range(0, 1000).selectExpr("id", "cast(id % 7 as int) as k")
    aorc.spark.write(df, str(tmp_path / "out"))
    back = aorc.spark.read(spark, str(tmp_path / "out"))
    assert back.count() == 1000 and sorted(r["id"] for r in back.collect()) == list(range(1000))


@pytest.fixture(scope="module")
def bare_python(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A virtualenv's interpreter without pyarrow or aorc (as ``python3`` from the PATH is
    for a virtualenv that is not activated)."""
    folder = tmp_path_factory.mktemp("bare-venv")
    venv.EnvBuilder(with_pip=False, system_site_packages=False).create(folder)
    python = folder / "bin" / "python"
    done = subprocess.run([str(python), "-c", "import pyarrow"], capture_output=True,
                          check=False)
    assert done.returncode != 0  # the premise: it cannot import pyarrow
    return str(python)


def test_workers_that_cannot_import_aorc_get_an_error_naming_the_fix(
        classic_spark: Any, bare_python: str, tmp_path: pathlib.Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    aorc.sync.write_table(pa.table({"id": [1, 2, 3]}), tmp_path / "in" / "a.orc")
    df = classic_spark.range(0, 10)
    monkeypatch.setattr(classic_spark.sparkContext, "pythonExec", bare_python)
    for attempt in (lambda: aorc.spark.read(classic_spark, str(tmp_path / "in")),
                    lambda: aorc.spark.write(df, str(tmp_path / "out"))):
        with pytest.raises(aorc.AorcError) as info:
            attempt()
        message = str(info.value)
        assert f"PYSPARK_PYTHON={sys.executable}" in message
        assert "No module named 'pyarrow'" in message and bare_python in message
    assert not (tmp_path / "out").exists()


def test_the_drivers_own_interpreter_is_not_checked(classic_spark: Any,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(classic_spark.sparkContext, "pythonExec", sys.executable)
    check_worker_python(classic_spark)  # no subprocess, no error
