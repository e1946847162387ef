"""aorc.spark in a local Spark session: aorc.spark.write judged by spark.read.orc (ORC Java),
Spark-written files read through aorc.spark.read (and the ``aorc`` Python data source)
judged by spark.read.orc, with filters; the sink's million-event output read by Spark from
S3; and the example pipeline."""

from __future__ import annotations

import asyncio
import importlib.util
import pathlib
import sys
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.orc as po
import pytest
from helpers.sink_stream import MillionRun
from spark_tables import to_arrow

import aorc.spark
from aorc.spark.compat import (
    ARROW_BATCH_BYTES,
    NO_BYTE_BOUND,
    default_parallelism,
    has_data_sources,
    has_filter_pushdown,
    is_connect,
    unbounded_arrow_batch_bytes,
)

pytestmark = pytest.mark.spark

ROOT = pathlib.Path(__file__).resolve().parents[2]
MiB = 1 << 20
CREDENTIALS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing",
               "region": "us-east-1"}

RICH = """
    select id, cast(id % 7 as int) as k, cast(id % 100 as smallint) as sm,
           cast(id % 100 as tinyint) as tiny, id % 3 = 0 as flag,
           cast(id / 7 as float) as f, id / 3 as dbl,
           case when id % 10 = 0 then null else concat('s', id) end as s,
           cast(concat('b', id) as binary) as bin,
           date_add(date'1969-12-25', cast(id % 400 as int)) as d,
           timestamp'2026-11-22 07:00:00' + make_interval(0, 0, 0, 0, 0, 0, id * 1.5) as ts,
           cast(id / 9 as decimal(14, 4)) as dec,
           case when id % 5 = 0 then null else array(id, id + 1) end as arr,
           map(concat('k', id % 3), id) as m,
           named_struct('x', id, 'y', concat('y', id)) as st
    from range({n})
"""


def rows(df: Any) -> list[tuple[Any, ...]]:
    return sorted((tuple(r) for r in df.collect()), key=lambda r: r[0])


def rich(spark: Any, n: int, partitions: int) -> Any:
    return spark.sql(RICH.format(n=n)).repartition(partitions)


# =========================================================================== write

def test_write_then_spark_read_orc(spark: Any, tmp_path: pathlib.Path) -> None:
    df = rich(spark, 8000, 3)
    uris = aorc.spark.write(df, str(tmp_path / "out"), compression="zlib", stripe_size=32 * 1024)
    assert len(uris) == 3 and all(pathlib.Path(u).is_file() for u in uris)
    assert all(u.endswith(".orc") for u in uris)
    assert sum(po.ORCFile(u).nrows for u in uris) == 8000
    assert any(po.ORCFile(u).nstripes > 1 for u in uris)
    back = spark.read.orc(str(tmp_path / "out"))
    assert back.schema.simpleString() == df.schema.simpleString()
    assert rows(back) == rows(df)


def test_write_with_options_object(spark: Any, tmp_path: pathlib.Path) -> None:
    df = rich(spark, 3000, 2)
    opts = aorc.WriteOptions(compression="lz4", row_index_stride=1000, metadata={"k": "v"})
    uris = aorc.spark.write(df, str(tmp_path / "out"), opts, use_threads=2)
    assert len(uris) == 2
    for u in uris:
        f = po.ORCFile(u)
        assert (f.compression, f.row_index_stride, f.metadata) == ("LZ4", 1000, {b"k": b"v"})
    assert rows(spark.read.orc(str(tmp_path / "out"))) == rows(df)
    with pytest.raises(aorc.SchemaError, match=r"aorc.spark.write\(\) got an unexpected"):
        aorc.spark.write(df, str(tmp_path / "bad"), opts, compresion="zstd")


def _has_batch_bytes_setting(spark: Any) -> bool:
    try:
        spark.conf.get(ARROW_BATCH_BYTES)
    except Exception:  # noqa: BLE001 - Spark 3.5 has no such setting
        return False
    return True


def test_write_lifts_the_batch_byte_bound_for_its_job_only(spark: Any,
                                                            tmp_path: pathlib.Path) -> None:
    """Spark 4 checks the bytes of every Arrow batch after each row: aorc.spark.write lifts
    the bound for its job (unless the user set one), and the session's setting is as before
    afterwards, also when the write fails."""
    exists = _has_batch_bytes_setting(spark)
    assert spark.conf.get(ARROW_BATCH_BYTES, None) is None
    with unbounded_arrow_batch_bytes(spark):
        assert spark.conf.get(ARROW_BATCH_BYTES, None) == (NO_BYTE_BOUND if exists else None)
    assert spark.conf.get(ARROW_BATCH_BYTES, None) is None
    with pytest.raises(RuntimeError, match="inside"), unbounded_arrow_batch_bytes(spark):
        raise RuntimeError("inside")
    assert spark.conf.get(ARROW_BATCH_BYTES, None) is None
    if not exists:
        return
    df = rich(spark, 3000, 2)
    spark.conf.set(ARROW_BATCH_BYTES, "4k")  # the user's bound is kept: batches of ~4 KB
    try:
        with unbounded_arrow_batch_bytes(spark):
            assert spark.conf.get(ARROW_BATCH_BYTES) == "4k"
        aorc.spark.write(df, str(tmp_path / "small"), compression="zstd")
        assert spark.conf.get(ARROW_BATCH_BYTES) == "4k"
    finally:
        spark.conf.unset(ARROW_BATCH_BYTES)
    aorc.spark.write(df, str(tmp_path / "unbounded"), compression="zstd")
    assert spark.conf.get(ARROW_BATCH_BYTES, None) is None
    for folder in ("small", "unbounded"):
        assert rows(spark.read.orc(str(tmp_path / folder))) == rows(df)


def test_write_empty_partitions_write_no_files(spark: Any, tmp_path: pathlib.Path) -> None:
    df = spark.range(10).repartition(4).where("id < 2")
    uris = aorc.spark.write(df, str(tmp_path / "few"))
    assert 1 <= len(uris) <= 2
    assert sorted(r[0] for r in spark.read.orc(str(tmp_path / "few")).collect()) == [0, 1]


def test_write_to_s3_with_multipart_then_read(spark: Any, s3_client: Any, s3_bucket: str,
                                              s3_env: str) -> None:
    options = {"endpoint_url": s3_env, "part_size": 5 * MiB, **CREDENTIALS}
    df = spark.sql("select id, sha2(cast(id as string), 256) as h from range(160000)"
                   ).repartition(1)
    uris = aorc.spark.write(df, f"s3://{s3_bucket}/spark", storage_options=options,
                            compression="none")
    assert len(uris) == 1
    size = s3_client.head_object(Bucket=s3_bucket, Key=uris[0].split("/", 3)[3])["ContentLength"]
    assert size > 5 * MiB  # so it went up as a multipart upload
    assert s3_client.list_multipart_uploads(Bucket=s3_bucket).get("Uploads", []) == []
    back = aorc.spark.read(spark, f"s3://{s3_bucket}/spark", storage_options=options,
                           filters=[("id", "<", 1000)])
    assert rows(back) == rows(df.where("id < 1000"))


# =========================================================================== read

@pytest.fixture(scope="module")
def spark_files(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Any]:
    path = str(tmp_path_factory.mktemp("spark-orc") / "t")
    df = rich(spark, 16_000, 2)
    df.write.option("orc.stripe.size", "65536").option("compression", "snappy").orc(path)
    return path, spark.read.orc(path)


def test_spark_written_files_read_through_aorc(spark: Any,
                                               spark_files: tuple[str, Any]) -> None:
    path, reference = spark_files
    files = [p for p in pathlib.Path(path).iterdir() if p.suffix == ".orc"]
    assert all(po.ORCFile(str(p)).nstripes > 1 for p in files)
    df = aorc.spark.read(spark, path, split_bytes=256 * 1024)
    from pyspark.sql import functions as F  # noqa: N812

    tasks = df.select(F.spark_partition_id()).distinct().count()
    assert tasks > len(files)  # stripes split across tasks
    assert df.schema.simpleString() == reference.schema.simpleString()
    assert rows(df) == rows(reference)


def test_small_files_make_one_task_per_core(spark: Any, tmp_path: pathlib.Path) -> None:
    """6 small files on 2 cores: 2 tasks of 3 files (as Spark packs files), not 6."""
    from pyspark.sql import functions as F  # noqa: N812

    folder = tmp_path / "small"
    folder.mkdir()
    for i in range(6):
        table = pa.table({"id": pa.array(range(i * 100, (i + 1) * 100), pa.int64())})
        asyncio.run(aorc.write_table(table, str(folder / f"f{i}.orc")))
    _, splits = asyncio.run(aorc.spark.plan_read(str(folder)))
    cores = default_parallelism(spark)
    assert cores == 2  # as the fixture sets it
    frames = [(aorc.spark.read(spark, str(folder)), cores)]
    if has_data_sources():
        aorc.spark.register(spark)  # over Connect the source packs for the server's CPUs
        frames.append((spark.read.format("aorc").load(str(folder)),
                       None if is_connect(spark) else cores))
    for df, packed_for in frames:
        per_task = df.groupBy(F.spark_partition_id()).count().collect()
        expected = [100 * len(p) for p in aorc.spark.pack_splits(splits, packed_for)]
        assert sorted(r[1] for r in per_task) == sorted(expected)
        assert sorted(r[0] for r in df.collect()) == list(range(600))
    assert [len(p) for p in aorc.spark.pack_splits(splits, 2)] == [3, 3]


@pytest.mark.parametrize("filters, where", [
    ([("id", ">=", 1000), ("id", "<", 3000)], "id >= 1000 and id < 3000"),
    ([[("k", "==", 1)], [("s", "==", "s77")]], "k = 1 or s = 's77'"),
    ([("s", "is null")], "s is null"),
    ([("d", ">", "1970-06-01")], "d > date'1970-06-01'"),
    ([("dec", "in", ["0.1111", "100.0000"])], "dec in (0.1111, 100.0000)"),
])
def test_filters_match_spark(spark: Any, spark_files: tuple[str, Any], filters: Any,
                             where: str) -> None:
    import datetime
    import decimal

    path, reference = spark_files
    fixed: Any = filters
    if where.startswith("d >"):
        fixed = [("d", ">", datetime.date(1970, 6, 1))]
    if where.startswith("dec"):
        fixed = [("dec", "in", [decimal.Decimal("0.1111"), decimal.Decimal("100.0000")])]
    df = aorc.spark.read(spark, path, filters=fixed)
    expected = rows(reference.where(where))
    assert expected and rows(df) == expected


def test_columns_and_stripe_pruning(spark: Any, spark_files: tuple[str, Any]) -> None:
    path, reference = spark_files
    df = aorc.spark.read(spark, path, columns=["s", "id"], filters=[("id", "<", 100)])
    assert df.columns == ["s", "id"]
    assert sorted(map(tuple, df.collect()), key=lambda r: r[1]) == sorted(
        map(tuple, reference.where("id < 100").select("s", "id").collect()), key=lambda r: r[1])
    _, all_splits = asyncio.run(aorc.spark.plan_read(path, split_bytes=1))
    _, few = asyncio.run(aorc.spark.plan_read(path, filters=[("id", "<", 100)], split_bytes=1))
    assert 0 < len(few) < len(all_splits)  # stripes ruled out by their statistics


def test_hive_partitions(spark: Any, tmp_path: pathlib.Path) -> None:
    path = str(tmp_path / "parts")
    spark.range(5000).selectExpr("id", "cast(id % 4 as int) as k", "concat('v', id) as v") \
        .write.partitionBy("k").orc(path)
    reference = spark.read.orc(path)
    df = aorc.spark.read(spark, path)
    assert sorted(df.columns) == sorted(reference.columns)
    assert rows(df.select(*reference.columns)) == rows(reference)
    schema, splits = asyncio.run(aorc.spark.plan_read(path, filters=[("k", "==", 3)]))
    assert splits and all(s.partition == (("k", 3),) and "k=3" in s.uri for s in splits)
    filtered = aorc.spark.read(spark, path, filters=[("k", "==", 3), ("id", "<", 100)])
    assert rows(filtered.select(*reference.columns)) == rows(
        reference.where("k = 3 and id < 100"))
    picked = aorc.spark.read(spark, path, columns=["k", "id"], filters=[("k", ">", 1)])
    assert picked.columns == ["k", "id"]
    assert sorted(map(tuple, picked.collect())) == sorted(
        map(tuple, reference.where("k > 1").select("k", "id").collect()))


@pytest.mark.skipif(has_data_sources(), reason="this PySpark has Python data sources")
def test_register_needs_python_data_sources(spark: Any) -> None:
    with pytest.raises(aorc.UnsupportedFeatureError, match="PySpark 4.0 or later"):
        aorc.spark.register(spark)


def _physical_plan(query: Any, capsys: pytest.CaptureFixture[str]) -> str:
    """The physical plan as ``explain()`` prints it (classic and Spark Connect alike)."""
    capsys.readouterr()
    query.explain()
    return capsys.readouterr().out


@pytest.mark.skipif(not has_data_sources(), reason="Python data sources need PySpark 4.0+")
def test_python_data_source(spark: Any, spark_files: tuple[str, Any],
                            capsys: pytest.CaptureFixture[str]) -> None:
    path, reference = spark_files
    assert aorc.spark.register(spark)
    assert spark.read.format("aorc").load(path).schema.simpleString() == \
        reference.schema.simpleString()
    some = spark.read.format("aorc").option("columns", "id,s,ts,arr") \
        .option("filters", '[["id", "<", 5000]]').option("splitBytes", 65536).load(path)
    assert rows(some) == rows(reference.where("id < 5000").select("id", "s", "ts", "arr"))
    # filters that rule out every stripe: Spark reads its stand-in partition, no rows
    none = spark.read.format("aorc").option("filters", '[["id", "<", 0]]').load(path)
    assert none.schema == reference.schema
    assert none.collect() == [] and reference.where("id < 0").count() == 0
    if not has_filter_pushdown():
        return  # PySpark 4.0: no filters reach Python data sources
    key = "spark.sql.python.filterPushdown.enabled"
    spark.conf.set(key, "true")
    try:
        assert aorc.spark.register(spark)
        query = spark.read.format("aorc").load(path).where("k = 3 and id > 12000")
        plan = _physical_plan(query, capsys)
        nodes = [line.lstrip(" +-*:(0123456789)") for line in plan.splitlines()]
        assert not any(n.startswith("Filter") for n in nodes), plan  # both went to aorc
        assert rows(query) == rows(reference.where("k = 3 and id > 12000"))
        assert spark.read.format("aorc").load(path).where("id < 0").collect() == []
        # a condition aorc cannot take (a function of a column) stays with Spark
        mixed = spark.read.format("aorc").load(path).where("k = 3 and id % 2 = 0")
        plan = _physical_plan(mixed, capsys)
        assert any(n.startswith("Filter") for n in
                   (line.lstrip(" +-*:(0123456789)") for line in plan.splitlines())), plan
        assert rows(mixed) == rows(reference.where("k = 3 and id % 2 = 0"))
    finally:
        spark.conf.set(key, "false")
        aorc.spark.register(spark)


def test_unknown_path_and_mixed_schemas(spark: Any, tmp_path: pathlib.Path) -> None:
    with pytest.raises(aorc.ObjectNotFoundError):
        aorc.spark.read(spark, str(tmp_path / "absent"))
    po.write_table(pa.table({"a": [1]}), str(tmp_path / "one.orc"))
    po.write_table(pa.table({"b": ["x"]}), str(tmp_path / "two.orc"))
    with pytest.raises(aorc.SchemaError, match="different schemas"):
        aorc.spark.read(spark, str(tmp_path))


# =========================================================================== sink + example

def test_sink_output_read_by_spark(spark: Any, million_events: MillionRun) -> None:
    run = million_events
    df = aorc.spark.read(spark, f"s3://{run.bucket}/events", columns=["partition", "offset"],
                         storage_options=run.storage_options)
    assert df.columns == ["partition", "offset", "dt", "hour"]
    table = to_arrow(df)
    keys = (table.column("partition").to_numpy().astype(np.int64) << 40) | table.column(
        "offset").to_numpy()
    keys.sort()
    assert len(keys) == run.log.total
    assert np.array_equal(keys, run.log.expected_keys())  # every event exactly once
    hours = sorted({r[0] for r in df.select("hour").distinct().collect()})
    assert hours == [5, 6, 7]


def test_example_spark_pipeline(spark: Any, capsys: pytest.CaptureFixture[str]) -> None:
    spec = importlib.util.spec_from_file_location("spark_pipeline",
                                                  ROOT / "examples" / "spark_pipeline.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["spark_pipeline"] = module
    try:
        spec.loader.exec_module(module)
        result = module.main(["--events", "60000"], spark=spark)
        expected = module.expected(module.make_events(60000))
    finally:
        del sys.modules["spark_pipeline"]
    assert [r[:4] for r in result] == [e[:4] for e in expected]
    assert all(abs(r[4] - e[4]) < 0.015 for r, e in zip(result, expected, strict=True))
    out = capsys.readouterr().out
    assert "committed purchases/0" in out and "revenue" in out
