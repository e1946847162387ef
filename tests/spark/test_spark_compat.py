"""aorc.spark.compat without Spark: Spark's ORC typing of timestamps (written with type
attributes, read back as Spark's Arrow types), and aorc.spark's split balancing. The same
files are judged by Spark's own reader in tests/spark/test_spark_types.py."""

from __future__ import annotations

import asyncio
import datetime
import os
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.orc as po
import pytest
from helpers.s3proxy import S3Proxy

import aorc
import aorc.spark
import aorc.spark.reader
from aorc.errors import ObjectChangedError
from aorc.format.types import TypeKind
from aorc.spark.compat import CATALYST_TYPE, NTZ, orc_schema, storage_schema, with_ntz
from aorc.spark.plan import Split, balance_splits
from aorc.spark.writer import _stored

UTC = datetime.UTC
SPARK_SCHEMA = pa.schema([  # as PySpark hands a DataFrame to mapInArrow
    ("id", pa.int64()),
    ("ts", pa.timestamp("us", "UTC")),
    ("ntz", pa.timestamp("us")),
    ("st", pa.struct([pa.field("n", pa.timestamp("us"), False), pa.field("x", pa.int32())])),
    ("m", pa.map_(pa.string(), pa.timestamp("us"))),
])


def _batch() -> pa.RecordBatch:
    wall = datetime.datetime(1969, 12, 31, 23, 59, 59, 999999)
    return pa.RecordBatch.from_pylist([
        {"id": 1, "ts": datetime.datetime(2026, 1, 2, 3, 4, 5, 6, tzinfo=UTC), "ntz": wall,
         "st": {"n": wall, "x": 7}, "m": [("a", wall)]},
        {"id": 2, "ts": None, "ntz": None, "st": None, "m": None},
    ], schema=SPARK_SCHEMA)


def test_orc_schema_types_timestamps_as_spark_does() -> None:
    root = orc_schema(SPARK_SCHEMA)
    kinds = {name: child for name, child in zip(root.field_names, root.children, strict=True)}
    assert kinds["id"].attributes == ()
    assert kinds["ts"].kind == TypeKind.TIMESTAMP
    assert kinds["ts"].attributes == ((CATALYST_TYPE, "timestamp"),)
    assert kinds["ntz"].kind == TypeKind.LONG
    assert kinds["ntz"].attributes == ((CATALYST_TYPE, "timestamp_ntz"),)
    assert kinds["st"].children[0].attributes == ((CATALYST_TYPE, "timestamp_ntz"),)
    assert kinds["m"].children[1].attributes == ((CATALYST_TYPE, "timestamp_ntz"),)


def test_written_attributes_read_back_as_spark_types(tmp_path: Path) -> None:
    path = str(tmp_path / "t.orc")
    storage = storage_schema(SPARK_SCHEMA)

    async def write_and_read() -> tuple[pa.Schema, pa.Table]:
        async with aorc.open_writer(path, storage) as writer:
            await writer.write(_stored(_batch(), storage))
        async with aorc.open_reader(path) as reader:
            return with_ntz(reader.schema, reader.orc_schema), await reader.read()

    schema, table = asyncio.run(write_and_read())
    assert schema.field("ntz").type == NTZ
    assert schema.field("st").type.field("n").type == NTZ
    assert schema.field("m").type.item_type == NTZ
    assert pa.types.is_timestamp(schema.field("ts").type)
    # 1969-12-31 23:59:59.999999, stored as Spark stores a TimestampNTZType (bigint -1 us),
    # reads as a naive timestamp in aorc's own reader too
    wall = datetime.datetime(1969, 12, 31, 23, 59, 59, 999999)
    assert table.schema.field("ntz").type == NTZ
    assert table.column("ntz").to_pylist() == [wall, None]
    assert table.column("st").to_pylist()[0] == {"n": wall, "x": 7}
    assert po.ORCFile(path).read().column("ntz").to_pylist() == [-1, None]  # as stored
    peer = po.ORCFile(path).read()  # pyarrow.orc: ts is the UTC wall clock
    assert peer.column("ts")[0].as_py().replace(tzinfo=None) == datetime.datetime(
        2026, 1, 2, 3, 4, 5, 6)


def test_balanced_splits_cut_wide_splits_for_every_core() -> None:
    splits = [Split("a", (0, 1, 2, 3)), Split("b", (0,))]
    out = balance_splits(splits, 4)
    assert [(s.uri, s.stripes) for s in out] == [
        ("a", (0,)), ("a", (1,)), ("a", (2, 3)), ("b", (0,))]
    assert balance_splits([Split("c", (5,))], 8) == [Split("c", (5,))]
    sized = balance_splits([Split("d", (0, 1, 2), sizes=(10, 20, 30))], 2)
    assert [(s.stripes, s.sizes, s.nbytes) for s in sized] == [((0,), (10,), 10),
                                                                ((1, 2), (20, 30), 50)]


def test_pack_splits_packs_small_reads_into_a_task_per_core() -> None:
    from aorc.spark.plan import DEFAULT_SPLIT_BYTES, OPEN_COST_BYTES, pack_splits

    mib = 1 << 20

    def files(n: int, size: int) -> list[Split]:
        return [Split(f"f{i}", (0,), sizes=(size,)) for i in range(n)]

    def shape(packs: list[list[Split]]) -> list[list[str]]:
        return [[s.uri for s in p] for p in packs]

    # the benchmark's 4 files of ~15 MiB on 2 cores: 2 tasks, as Spark packs them
    assert shape(pack_splits(files(4, 15 * mib), 2)) == [["f0", "f1"], ["f2", "f3"]]
    # 3 equal files on 2 cores do not fit 2 tasks (Spark makes 3 too)
    assert shape(pack_splits(files(3, 15 * mib), 2)) == [["f0"], ["f1"], ["f2"]]
    # large reads: tasks of about split_bytes, whatever the cores
    big = pack_splits(files(10, DEFAULT_SPLIT_BYTES - OPEN_COST_BYTES), 2)
    assert shape(big) == [[f"f{i}"] for i in range(10)]
    tiny = pack_splits(files(100, 1000), 4)  # 100 tiny files on 4 cores
    assert [len(p) for p in tiny] == [25, 25, 25, 25]
    assert [s for p in tiny for s in p] == files(100, 1000)  # the order is kept
    assert pack_splits([], 2) == []
    assert len(pack_splits(files(64, 1000), None)) == max(1, min(64, os.cpu_count() or 1))


def test_task_threads_fill_the_cores_without_oversubscribing() -> None:
    from aorc.spark.reader import task_threads

    assert task_threads(2, 4) == 1  # Spark runs one task per core: one thread each
    assert task_threads(2, 2) == 1
    assert task_threads(2, 1) == 2  # a lone split may use both cores
    assert task_threads(8, 3) == 2
    assert task_threads(8, 0) == 8
    assert task_threads(None, 10**6) == 1  # unknown cores: this machine's CPUs


class _Conf:
    """A session's ``spark.conf`` as a Connect server that forbids some settings answers."""

    def __init__(self, settable: bool) -> None:
        self.values: dict[str, str] = {}
        self.settable = settable

    def get(self, key: str, *default: str | None) -> str | None:
        return self.values.get(key, *default) if default else self.values.get(key, "64m")

    def set(self, key: str, value: str) -> None:
        if not self.settable:
            raise RuntimeError("CONFIG_NOT_AVAILABLE")
        self.values[key] = value

    def unset(self, key: str) -> None:
        del self.values[key]


def test_unbounded_arrow_batch_bytes_gives_up_when_the_session_refuses() -> None:
    from types import SimpleNamespace

    from aorc.spark.compat import ARROW_BATCH_BYTES, NO_BYTE_BOUND, unbounded_arrow_batch_bytes

    for settable in (True, False):
        conf = _Conf(settable)
        with unbounded_arrow_batch_bytes(SimpleNamespace(conf=conf)):
            assert conf.values == ({ARROW_BATCH_BYTES: NO_BYTE_BOUND} if settable else {})
        assert conf.values == {}


async def test_a_split_reads_the_version_it_was_planned_on(s3_client: Any, s3_bucket: str,
                                                           s3_proxy: S3Proxy) -> None:
    """On S3 a split carries the ETag its file had when planned: its task reads that version
    (every request pinned with If-Match) or fails with ObjectChangedError, never a replaced
    file's stripes under the old plan."""
    def upload(table: pa.Table) -> str:
        out = pa.BufferOutputStream()
        po.write_table(table, out)
        etag: str = s3_client.put_object(Bucket=s3_bucket, Key="t/f.orc",
                                         Body=out.getvalue().to_pybytes())["ETag"]
        return etag

    table = pa.table({"id": pa.array(range(1000), pa.int64())})
    etag = upload(table)
    options = {"endpoint_url": s3_proxy.url}
    schema, splits = await aorc.spark.plan_read(f"s3://{s3_bucket}/t/", storage_options=options)
    assert [s.etag for s in splits] == [etag]
    s3_proxy.log.clear()
    got = [b async for b in aorc.spark.reader.read_split(splits[0], None, schema, options)]
    assert pa.Table.from_batches(got).column("id").to_pylist() == list(range(1000))
    assert s3_proxy.log and all(r.headers.get("if-match") == etag for r in s3_proxy.log)
    upload(pa.table({"id": pa.array(range(5000, 7000), pa.int64())}))  # replaced after planning
    with pytest.raises(ObjectChangedError, match="replaced"):
        [b async for b in aorc.spark.reader.read_split(splits[0], None, schema, options)]
