"""Spark and ORC Java fixtures: one local SparkSession for every test under ``tests/spark``.

The tests here judge the files aorc writes with the reference implementation: Spark reads
them (``spark.read.orc``) and ORC Java, reached through PySpark's JVM, reads their statistics,
row indexes and bloom filters. They are marked ``spark`` and skip cleanly when PySpark or Java
is missing (``pytest -m "not spark"`` leaves them out).

The writer under test is aorc (``aorc.write_table``); setting
``AORC_TEST_REFERENCE_WRITER=pyarrow`` writes with ``pyarrow.orc.write_table`` instead, which
is only for checking the harness itself against a known writer (see :func:`writer_name`).

``AORC_TEST_SPARK_CONNECT=1`` (as ``nox -s spark-connect`` sets) makes the session a Spark
Connect client of a local Connect server (``SparkSession.builder.remote("local[2]")``, needs
``pyspark[connect]``'s dependencies); tests that need the JVM (ORC Java, RDDs) skip then.

Session settings: ``local[2]``, no UI, session time zone UTC and a JVM default time zone of
UTC (ORC Java converts timestamps through the JVM's zone), two shuffle partitions, 2 GiB of
driver memory, everything bound to 127.0.0.1, log level ERROR.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import shutil
import sys
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.orc as pa_orc
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from spark_java_orc import JavaOrc  # noqa: E402

WRITER_ENV = "AORC_TEST_REFERENCE_WRITER"
CONNECT_ENV = "AORC_TEST_SPARK_CONNECT"
ROOT = Path(__file__).resolve().parents[2]
_WRITERS = ("aorc", "pyarrow")
_PYARROW_CODECS = {"none": "uncompressed"}

_LOG4J = """\
rootLogger.level = error
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{HH:mm:ss} %p %c{1}: %m%n
"""

WriteOrc = Callable[..., None]


def writer_name() -> str:
    """``"aorc"`` (the default) or ``"pyarrow"``, from ``AORC_TEST_REFERENCE_WRITER``."""
    name = os.environ.get(WRITER_ENV, "").strip().lower() or "aorc"
    if name not in _WRITERS:
        raise ValueError(f"{WRITER_ENV}={name!r}: expected one of {_WRITERS}")
    return name


def use_connect() -> bool:
    """Whether the tests run through Spark Connect (``AORC_TEST_SPARK_CONNECT=1``)."""
    return os.environ.get(CONNECT_ENV, "").strip().lower() in ("1", "true", "yes")


def _java_available() -> bool:
    java_home = os.environ.get("JAVA_HOME")
    if java_home and (Path(java_home) / "bin" / "java").exists():
        return True
    return shutil.which("java") is not None


@pytest.fixture(scope="session")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A local SparkSession shared by every Spark test; skips without PySpark or Java."""
    if importlib.util.find_spec("pyspark") is None:
        pytest.skip("pyspark is not installed")
    if not _java_available():
        pytest.skip("no Java runtime (java on PATH or JAVA_HOME)")
    from pyspark.sql import SparkSession

    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"
    if use_connect():  # the server's Python workers must import this tree's aorc
        paths = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
        if str(ROOT) not in paths:
            os.environ["PYTHONPATH"] = os.pathsep.join([str(ROOT), *paths])
    conf_dir = tmp_path_factory.mktemp("spark-conf")
    log4j = conf_dir / "log4j2.properties"
    log4j.write_text(_LOG4J)
    java_options = f"-Duser.timezone=UTC -Dlog4j2.configurationFile={log4j.as_uri()}"
    builder = (SparkSession.builder.remote("local[2]") if use_connect()
               else SparkSession.builder.master("local[2]"))
    session = (
        builder
        .appName("aorc-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .config("spark.driver.memory", "2g")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.driver.extraJavaOptions", java_options)
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .config("spark.ui.showConsoleProgress", "false")
    )
    with warnings.catch_warnings():  # Connect: the server's static settings are set once
        warnings.filterwarnings("ignore", "Failed to set spark", UserWarning)
        session = session.getOrCreate()
    if not use_connect():
        session.sparkContext.setLogLevel("ERROR")
    try:
        yield session
    finally:
        session.stop()


@pytest.fixture(scope="session")
def jvm_orc(spark: Any) -> JavaOrc:
    """ORC Java (the orc-core bundled with PySpark) driven through the session's JVM."""
    if use_connect():
        pytest.skip("ORC Java is reached through the JVM, which Spark Connect clients lack")
    return JavaOrc(spark)


def _pyarrow_options(table: pa.Table, options: dict[str, Any]) -> dict[str, Any]:
    """aorc's write options in pyarrow.orc.write_table's terms (harness checks only)."""
    out = dict(options)
    codec = str(out.pop("compression", "zstd")).lower()
    out["compression"] = _PYARROW_CODECS.get(codec, codec)
    if "bloom_filter_columns" in out:
        names = table.column_names
        out["bloom_filter_columns"] = [names.index(n) for n in out["bloom_filter_columns"]]
    out.pop("metadata", None)
    out.pop("compression_block_size", None)  # ORC C++ wants multiples of its memory block
    if out.get("row_index_stride") == 0:
        pytest.skip("pyarrow.orc.write_table always writes a row index")
    timezone = out.pop("timezone", "UTC")
    if timezone != "UTC":
        pytest.skip("pyarrow.orc.write_table cannot choose the writer time zone")
    return out


def write_with(name: str, table: pa.Table, path: str | Path, **options: Any) -> None:
    """Write ``table`` to ``path`` with the writer ``name`` ("aorc" or "pyarrow").

    Args:
        name: the writer.
        table: the data.
        path: a local path.
        **options: aorc's write options (compression, compression_block_size, stripe_size,
            row_index_stride, dictionary_key_size_threshold, bloom_filter_columns (names),
            bloom_filter_fpp, metadata, timezone).
    """
    if name == "pyarrow":
        pa_orc.write_table(table, str(path), **_pyarrow_options(table, options))
        return
    import aorc

    write_table = getattr(aorc, "write_table", None)
    if write_table is None:
        pytest.skip("aorc.write_table does not exist yet")
    asyncio.run(write_table(table, str(path), **options))


@pytest.fixture(scope="session")
def classic_spark(spark: Any) -> Any:
    """The session, for tests that need the JVM or RDDs; skips under Spark Connect."""
    if use_connect():
        pytest.skip("needs a classic session (JVM / RDD), not Spark Connect")
    return spark


@pytest.fixture(scope="session")
def write_orc() -> WriteOrc:
    """``write_orc(table, path, **options)`` with the writer under test (see module doc)."""
    name = writer_name()

    def write(table: pa.Table, path: str | Path, **options: Any) -> None:
        write_with(name, table, path, **options)

    return write


@pytest.fixture(scope="session")
def writer_under_test() -> str:
    """The name of the writer under test: "aorc" or "pyarrow"."""
    return writer_name()



#: Warnings PySpark itself raises on some supported versions (3.5 compares versions with
#: distutils' LooseVersion, leaves py4j sockets to the garbage collector); they say nothing
#: about aorc.
_PYSPARK_WARNINGS = (
    "ignore:unclosed <socket.socket:ResourceWarning",
    "ignore:Exception ignored in. <socket.socket:pytest.PytestUnraisableExceptionWarning",
    "ignore:distutils Version classes are deprecated:DeprecationWarning",
    "ignore:is_datetime64tz_dtype is deprecated:DeprecationWarning",
    "ignore:is_categorical_dtype is deprecated:DeprecationWarning",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).resolve().parent
    for item in items:
        if here in Path(str(item.fspath)).resolve().parents:
            for spec in _PYSPARK_WARNINGS:
                item.add_marker(pytest.mark.filterwarnings(spec))
