"""Spark and aorc share encrypted ORC files: Spark writes with ``orc.encrypt``/``orc.mask``
(ORC Java's in-memory key provider, ``orc.key.provider=memory``, holding the same master key
as :class:`aorc.InMemoryKeys`) and aorc reads them with and without keys; Spark reads
aorc's encrypted files with the key (decrypted) and pyarrow without (masked)."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import aorc

pytestmark = pytest.mark.spark

#: A key name of its own: ORC Java's in-memory key store is one per JVM (the session's).
KEY = "pii_spark_test"
MASTER = bytes(range(7, 39))


def _keystore(spark: Any) -> None:
    jvm = spark._jvm
    conf = spark._jsc.hadoopConfiguration()
    conf.set("orc.key.provider", "memory")
    store = jvm.org.apache.orc.impl.CryptoUtils.getKeyProvider(
        conf, jvm.java.security.SecureRandom())
    if KEY not in list(store.getKeyNames()):
        store.addKey(KEY, 0, jvm.org.apache.orc.EncryptionAlgorithm.AES_CTR_256,
                     bytearray(MASTER))


def test_spark_and_aorc_share_encrypted_files(classic_spark: Any, tmp_path: Path) -> None:
    spark = classic_spark
    _keystore(spark)
    rows = [(i, f"ssn-{i:04d}", f"user{i}@example.org") for i in range(200)]
    df = spark.createDataFrame(rows, "id long, ssn string, email string").coalesce(1)
    out = tmp_path / "spark"
    (df.write.option("orc.encrypt", f"{KEY}:ssn,email").option("orc.mask", "sha256:email")
     .option("orc.key.provider", "memory").orc(str(out)))
    keys = aorc.InMemoryKeys({KEY: MASTER})
    got = aorc.sync.read_table(out, keys=keys).sort_by("id")
    assert got.to_pylist() == [{"id": i, "ssn": s, "email": e} for i, s, e in rows]
    masked = aorc.sync.read_table(out).sort_by("id")
    assert masked.column("ssn").null_count == 200
    assert masked.column("email").to_pylist() == [
        hashlib.sha256(e.encode()).hexdigest().upper() for _, _, e in rows]

    ours = tmp_path / "aorc.orc"
    t = pa.table({"id": pa.array(range(200), pa.int64()),
                  "ssn": [s for _, s, _ in rows], "email": [e for _, _, e in rows]})
    aorc.sync.write_table(t, ours, encrypt={KEY: ["ssn", "email"]}, masks="sha256:email",
                          keys=keys)
    back = spark.read.option("orc.key.provider", "memory").orc(str(ours)).orderBy("id")
    assert [tuple(r) for r in back.collect()] == rows
