"""Spark and aorc share encrypted ORC files: Spark writes with ``orc.encrypt``/``orc.mask``
(ORC Java's in-memory key provider, ``orc.key.provider=memory``, holding the same master key
as :class:`aorc.InMemoryKeys`) and aorc reads them with and without keys; Spark reads
aorc's encrypted files with the key (decrypted) and pyarrow without (masked)."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.orc as pa_orc
import pytest

import aorc
import aorc.spark
from aorc.errors import SchemaError
from aorc.spark.compat import has_data_sources

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


def _spark_writes(spark: Any, out: Path, n: int, **options: Any
                  ) -> tuple[list[tuple[int, str, str]], Any]:
    """Spark writes ``n`` rows (id, ssn, email) to ``out`` with ssn and email encrypted under
    :data:`KEY` (ORC Java's in-memory key provider) and email masked with sha256, plus the
    writer ``options``; the rows and their one-partition DataFrame."""
    _keystore(spark)
    rows = [(i, f"ssn-{i:04d}", f"user{i}@example.org") for i in range(n)]
    df = spark.createDataFrame(rows, "id long, ssn string, email string").coalesce(1)
    writer = (df.write.option("orc.encrypt", f"{KEY}:ssn,email")
              .option("orc.mask", "sha256:email").option("orc.key.provider", "memory"))
    for name, value in options.items():
        writer = writer.option(name, value)
    writer.orc(str(out))
    return rows, df


def test_spark_and_aorc_share_encrypted_files(classic_spark: Any, tmp_path: Path) -> None:
    spark = classic_spark
    out = tmp_path / "spark"
    rows, _ = _spark_writes(spark, out, 200)
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


def test_aorc_spark_reads_and_writes_with_keys(classic_spark: Any, tmp_path: Path) -> None:
    """``aorc.spark.read(keys=)`` decrypts what Spark wrote with ``orc.encrypt`` (filters
    pruned with the decrypted statistics); without keys it reads the masks.
    ``aorc.spark.write(encrypt=, masks=, keys=)`` writes files Spark reads with the key
    (decrypted) and pyarrow without (masked)."""
    spark = classic_spark
    theirs = tmp_path / "spark"
    rows, df = _spark_writes(spark, theirs, 300, **{"orc.stripe.size": 4096,
                                                    "orc.row.index.stride": 1000})
    keys = aorc.InMemoryKeys({KEY: MASTER})
    got = aorc.spark.read(spark, str(theirs), keys=keys).orderBy("id").collect()
    assert [tuple(r) for r in got] == rows
    one = aorc.spark.read(spark, str(theirs), filters=[("ssn", "==", "ssn-0123")],
                          keys=keys).collect()
    assert [tuple(r) for r in one] == [rows[123]]
    # without keys: the masked copy, and the same filter finds nothing (ssn is nullified)
    masked = aorc.spark.read(spark, str(theirs)).orderBy("id").collect()
    assert [tuple(r) for r in masked] == [
        (i, None, hashlib.sha256(e.encode()).hexdigest().upper()) for i, _, e in rows]
    assert aorc.spark.read(spark, str(theirs), filters=[("ssn", "==", "ssn-0123")]).count() == 0

    ours = tmp_path / "aorc"
    with pytest.raises(SchemaError, match="keys="):
        aorc.spark.write(df, str(ours), encrypt=f"{KEY}:ssn")
    uris = aorc.spark.write(df.repartition(2), str(ours), encrypt={KEY: ["ssn", "email"]},
                            masks="sha256:email", keys=keys)
    assert len(uris) == 2
    back = spark.read.option("orc.key.provider", "memory").orc(str(ours)).orderBy("id")
    assert [tuple(r) for r in back.collect()] == rows
    clear = pa.concat_tables([pa_orc.read_table(u.removeprefix("file://")) for u in uris])
    assert sorted(clear.to_pylist(), key=lambda r: r["id"]) == [
        {"id": i, "ssn": None, "email": hashlib.sha256(e.encode()).hexdigest().upper()}
        for i, _, e in rows]
    assert not any(b"ssn-0" in Path(u.removeprefix("file://")).read_bytes() for u in uris)


@pytest.mark.skipif(not has_data_sources(), reason="Python data sources need PySpark 4.0+")
def test_data_source_reads_with_a_keys_file(classic_spark: Any, tmp_path: Path) -> None:
    """``spark.read.format("aorc").option("keysFile", path)`` decrypts what Spark wrote with
    ``orc.encrypt`` (a filter on the encrypted column prunes with its decrypted statistics);
    without it the source reads the masks; a key given as an option is refused without
    being repeated."""
    spark = classic_spark
    theirs = tmp_path / "spark"
    rows, _ = _spark_writes(spark, theirs, 300)
    keyfile = tmp_path / "keys.txt"
    keyfile.write_text(f"# Spark's test key\n{KEY}={MASTER.hex()}\n")
    assert aorc.spark.register(spark)
    got = spark.read.format("aorc").option("keysFile", str(keyfile)).load(str(theirs))
    assert sorted(tuple(r) for r in got.collect()) == rows
    one = (spark.read.format("aorc").option("keysFile", str(keyfile))
           .option("filters", '[["ssn", "==", "ssn-0123"]]').load(str(theirs)))
    assert [tuple(r) for r in one.collect()] == [rows[123]]
    masked = spark.read.format("aorc").load(str(theirs)).collect()
    assert sorted(tuple(r) for r in masked) == [
        (i, None, hashlib.sha256(e.encode()).hexdigest().upper()) for i, _, e in rows]
    with pytest.raises(Exception, match="keysFile") as info:
        spark.read.format("aorc").option("key", f"{KEY}={MASTER.hex()}") \
            .load(str(theirs)).collect()
    assert MASTER.hex() not in str(info.value)
