"""Datasets against Spark: aorc reads what ``spark.read.option("mergeSchema", "true").orc``
reads (rows, partition columns and their types, nulls for added columns), for datasets
written by Spark (``partitionBy``, two appends, the second adding a column), by
``RollingSink`` and by ``aorc.write_dataset``, on local disk and on moto S3; Spark and
pyarrow.dataset read what ``write_dataset`` wrote."""

from __future__ import annotations

import datetime
import os
import urllib.parse
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.dataset as pads
import pytest

import aorc

pytestmark = [pytest.mark.spark]

_SPARK_TYPES = {"bigint": pa.int64(), "int": pa.int32(), "string": pa.string(),
                "double": pa.float64(), "date": pa.date32(), "smallint": pa.int16()}


def spark_rows(df: Any) -> list[dict[str, Any]]:
    return sorted((r.asDict() for r in df.collect()), key=lambda r: r["id"])


def spark_arrow_schema(df: Any) -> pa.Schema:
    return pa.schema([(f.name, _SPARK_TYPES[f.dataType.simpleString()])
                      for f in df.schema.fields])


def aorc_rows(table: pa.Table) -> list[dict[str, Any]]:
    return sorted(table.to_pylist(), key=lambda r: r["id"])


def spark_merged(spark: Any, path: str | Path) -> Any:
    return spark.read.option("mergeSchema", "true").orc(str(path))


@pytest.fixture(scope="module")
def spark_dataset(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two Spark appends into ``partitionBy("country", "day")``; the second adds ``score``;
    a null country (``__HIVE_DEFAULT_PARTITION__``) and one needing escapes."""
    root = tmp_path_factory.mktemp("spark-ds") / "events"
    countries = ["DE", "FR", None, "a/b=c"]
    first = [(i, f"n{i}", countries[i % 4], 1 + i % 3) for i in range(60)]
    spark.createDataFrame(first, "id long, name string, country string, day int") \
        .write.partitionBy("country", "day").mode("append").orc(str(root))
    second = [(100 + i, f"m{i}", countries[i % 2], 1 + i % 2, i / 4) for i in range(40)]
    spark.createDataFrame(second, "id long, name string, country string, day int, "
                                  "score double") \
        .write.partitionBy("country", "day").mode("append").orc(str(root))
    return root


async def test_spark_written_dataset_local(spark: Any, spark_dataset: Path) -> None:
    expected = spark_merged(spark, spark_dataset)
    dataset = await aorc.open_dataset(spark_dataset)
    assert dataset.schema == spark_arrow_schema(expected)
    table = await dataset.read()
    assert table.schema == spark_arrow_schema(expected)
    assert aorc_rows(table) == spark_rows(expected)
    assert any(r["score"] is None for r in aorc_rows(table))
    assert any(r["country"] is None for r in aorc_rows(table))
    assert any(r["country"] == "a/b=c" for r in aorc_rows(table))
    assert await dataset.count_rows() == expected.count()


@pytest.mark.parametrize("filters,spark_filter", [
    ([("country", "==", "DE")], "country = 'DE'"),
    ([("day", ">=", 2), ("score", ">", 3.0)], "day >= 2 AND score > 3.0"),
    ([[("country", "is null")], [("id", "<", 5)]], "country IS NULL OR id < 5"),
    ([("score", "is null"), ("country", "in", ["FR", "a/b=c"])],
     "score IS NULL AND country IN ('FR', 'a/b=c')"),
])
async def test_spark_written_dataset_filters(spark: Any, spark_dataset: Path, filters: Any,
                                             spark_filter: str) -> None:
    expected = spark_merged(spark, spark_dataset).filter(spark_filter)
    dataset = await aorc.open_dataset(spark_dataset)
    table = await dataset.read(filters=filters)
    assert aorc_rows(table) == spark_rows(expected)
    assert await dataset.count_rows(filters) == expected.count()
    streamed = [b async for b in dataset.iter_batches(filters=filters, batch_size=7)]
    assert sum(b.num_rows for b in streamed) == expected.count()
    assert max(b.num_rows for b in streamed) <= 7


def _upload(client: Any, bucket: str, root: Path, prefix: str) -> None:
    for folder, _, files in os.walk(root):
        for name in files:
            path = Path(folder) / name
            key = f"{prefix}/{path.relative_to(root).as_posix()}"
            client.put_object(Bucket=bucket, Key=key, Body=path.read_bytes())


async def test_spark_written_dataset_on_s3(spark: Any, spark_dataset: Path, s3_client: Any,
                                           s3_bucket: str, s3_proxy: Any) -> None:
    _upload(s3_client, s3_bucket, spark_dataset, "lake/events")
    options = {"endpoint_url": s3_proxy.url}
    expected = spark_merged(spark, spark_dataset)
    for url in (f"s3://{s3_bucket}/lake/events", f"s3://{s3_bucket}/lake/events/"):
        table = await aorc.read_table(url, storage_options=options)
        assert table.schema == spark_arrow_schema(expected)
        assert aorc_rows(table) == spark_rows(expected)

    # With schema_from="all" the schema comes from every file's footer, as Spark's
    # mergeSchema (with "score", null in the surviving files); by default only the
    # surviving files' (no "score"); with schema= only the surviving files are opened.
    filters = [("country", "==", "FR"), ("day", "==", 1)]
    want = expected.filter("country = 'FR' AND day = 1")
    table = await aorc.read_dataset(f"s3://{s3_bucket}/lake/events", filters=filters,
                                    storage_options=options, schema_from="all")
    assert table.schema == spark_arrow_schema(expected)
    assert aorc_rows(table) == spark_rows(want)
    table = await aorc.read_dataset(f"s3://{s3_bucket}/lake/events", filters=filters,
                                    storage_options=options)
    assert table.column_names == ["id", "name", "country", "day"]
    assert aorc_rows(table) == spark_rows(want.drop("score"))
    s3_proxy.log.clear()
    table = await aorc.read_dataset(f"s3://{s3_bucket}/lake/events", filters=filters,
                                    storage_options=options,
                                    schema=spark_arrow_schema(expected))
    assert aorc_rows(table) == spark_rows(want)
    gets = [urllib.parse.unquote(r.target) for r in s3_proxy.log
            if r.operation == "GetObject"]
    assert gets and all("/country=FR/day=1/" in g for g in gets), gets
    surviving = [k for k in _keys(s3_client, s3_bucket) if "/country=FR/day=1/" in k
                 and k.endswith(".orc")]
    assert sorted({g.split("?")[0].split(f"/{s3_bucket}/", 1)[1] for g in gets}) == \
        sorted(surviving)
    # only the partitions the filter can match are listed, level by level
    lists = [urllib.parse.parse_qs(urllib.parse.urlsplit(r.target).query)
             for r in s3_proxy.log if r.operation == "GET bucket"]
    assert [q["prefix"][0] for q in lists] == [
        "lake/events/", "lake/events/country=FR/", "lake/events/country=FR/day=1/"]
    assert all(q["delimiter"] == ["/"] for q in lists)


def _keys(client: Any, bucket: str) -> list[str]:
    return [o["Key"] for o in client.list_objects_v2(Bucket=bucket)["Contents"]]


async def test_write_dataset_read_by_spark_and_pyarrow(spark: Any, tmp_path: Path) -> None:
    table = pa.table({
        "id": pa.array(range(500), pa.int64()),
        "name": [f"n{i}" for i in range(500)],
        "score": pa.array([i / 3 for i in range(500)], pa.float64()),
        "country": [["DE", "FR", "x y%z"][i % 3] for i in range(500)],
        "day": pa.array([1 + i % 4 for i in range(500)], pa.int32()),
    })
    root = tmp_path / "out"
    written = await aorc.write_dataset(table.slice(0, 300), root,
                                       partition_cols=["country", "day"], max_rows_per_file=40)
    written += await aorc.write_dataset(table.slice(300), root,
                                        partition_cols=["country", "day"])
    assert len(set(written)) == len(written) and all(os.path.exists(p) for p in written)
    expected = sorted(table.to_pylist(), key=lambda r: r["id"])
    got = spark_merged(spark, root)
    assert spark_rows(got) == expected
    assert spark_arrow_schema(got) == table.schema
    part = pads.partitioning(pa.schema([("country", pa.string()), ("day", pa.int32())]),
                             flavor="hive")
    by_pyarrow = pads.dataset(str(root), format="orc", partitioning=part).to_table()
    assert sorted(by_pyarrow.to_pylist(), key=lambda r: r["id"]) == expected
    assert aorc_rows(await aorc.read_dataset(root)) == expected


async def test_rolling_sink_dataset_matches_spark(spark: Any, tmp_path: Path) -> None:
    schema = pa.schema([("id", pa.int64()), ("country", pa.string()),
                        ("ts", pa.timestamp("us")), ("v", pa.int16())])
    root = tmp_path / "sink"
    base = datetime.datetime(2026, 11, 22, 10)
    rows = [{"id": i, "country": ["DE", "FR"][i % 2],
             "ts": base + datetime.timedelta(minutes=17 * i), "v": i % 100} for i in range(300)]
    async with aorc.RollingSink(root, schema, partition_by=["country"], event_time="ts",
                                max_rows=50) as sink:
        await sink.write(pa.Table.from_pylist(rows, schema), topic="t", partition=0,
                         offsets=list(range(300)))
    expected = spark_merged(spark, root).drop("ts")
    table = (await aorc.read_dataset(root)).drop_columns(["ts"])
    assert [f.name for f in table.schema] == expected.columns
    assert table.schema == spark_arrow_schema(expected)
    assert aorc_rows(table) == spark_rows(expected)
    filt = [("country", "==", "FR"), ("hour", ">", 12), ("v", "<", 50)]
    got = await aorc.read_dataset(root, filters=filt, columns=["id", "dt", "hour"])
    want = expected.filter("country = 'FR' AND hour > 12 AND v < 50").select("id", "dt", "hour")
    assert aorc_rows(got) == spark_rows(want)


def _download(client: Any, bucket: str, prefix: str, root: Path) -> None:
    for item in client.list_objects_v2(Bucket=bucket, Prefix=prefix + "/")["Contents"]:
        path = root / item["Key"][len(prefix) + 1:]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(client.get_object(Bucket=bucket, Key=item["Key"])["Body"].read())


async def test_sink_and_write_dataset_on_s3_match_spark(spark: Any, s3_client: Any,
                                                        s3_bucket: str, tmp_path: Path) -> None:
    """RollingSink and write_dataset write to moto S3; aorc reads the prefixes, Spark reads
    a local copy of the same objects (this Spark has no S3 connector)."""
    schema = pa.schema([("id", pa.int64()), ("country", pa.string()), ("v", pa.int32())])
    rows = pa.Table.from_pylist([{"id": i, "country": ["DE", "FR", "NL"][i % 3], "v": i % 7}
                                 for i in range(400)], schema)
    sink_url = f"s3://{s3_bucket}/sink"
    async with aorc.RollingSink(sink_url, schema, partition_by=["country"], max_rows=60,
                                time_partitioning=None) as sink:
        await sink.write(rows, topic="t", partition=0, offsets=list(range(400)))
    await aorc.write_dataset(rows.slice(0, 200), f"s3://{s3_bucket}/ds",
                             partition_cols=["country"], max_rows_per_file=50)
    await aorc.write_dataset(rows.slice(200).append_column("extra", pa.array(
        [float(i) for i in range(200)])), f"s3://{s3_bucket}/ds", partition_cols=["country"])
    for prefix in ("sink", "ds"):
        local = tmp_path / prefix
        _download(s3_client, s3_bucket, prefix, local)
        expected = spark_merged(spark, local)
        table = await aorc.read_dataset(f"s3://{s3_bucket}/{prefix}")
        assert table.schema == spark_arrow_schema(expected)
        assert aorc_rows(table) == spark_rows(expected)
        filt = [("country", "!=", "FR"), ("v", ">=", 3)]
        got = await (await aorc.open_dataset(f"s3://{s3_bucket}/{prefix}")).read(filters=filt)
        assert aorc_rows(got) == spark_rows(expected.filter("country != 'FR' AND v >= 3"))
