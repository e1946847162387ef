"""The Hive 2.3 ACID oracle: one JVM per session (see helpers/hive_acid.py)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator

import pytest
from helpers.hive_acid import HiveAcid, compile_helper, hive_jars


@pytest.fixture(scope="session")
def hive() -> Iterator[HiveAcid]:
    """Hive 2.3's OrcRecordUpdater and ACID reader, from PySpark's jars."""
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
