"""aorc.iceberg.append / write_data_files: every type, partition fan-out by every transform
(partitions as pyiceberg computes them), target file sizes, write.orc.* properties, commit
conflicts retried on a refreshed table, a moto-S3 warehouse, and a failed write that leaves
no file and no commit."""

from __future__ import annotations

import asyncio

import pyarrow as pa
import pytest
from helpers.iceberg import all_types_schema, core_schema, rows, table_data
from helpers.s3proxy import Fault, ProxyRequest
from pyiceberg.partitioning import PartitionField, PartitionSpec  # noqa: I001
from pyiceberg.transforms import (
    BucketTransform,
    DayTransform,
    IdentityTransform,
    TruncateTransform,
    YearTransform,
)

import aorc
import aorc.iceberg
from aorc.errors import SchemaError, StoreError
from aorc.iceberg.schema import output_schema


def test_every_type_round_trips(catalog: object) -> None:
    table = catalog.create_table("db.t", all_types_schema())  # type: ignore[attr-defined]
    data = table_data(table.schema(), 1_500, seed=11)
    snapshot = asyncio.run(aorc.iceberg.append(table, data,
                                               snapshot_properties={"job": "test"}))
    assert snapshot.summary["job"] == "test"
    assert snapshot.summary["added-records"] == "1500"
    back = asyncio.run(aorc.iceberg.read_table(table))
    assert back.schema == output_schema(table.schema())  # (string, list: as ORC reads)
    assert rows(back, "l") == rows(data, "l")
    # pyiceberg's own scan (pyarrow's ORC reader) of the columns it can read: it maps ORC
    # bigint/binary to long/binary whatever iceberg.long-type / binary-type say, so time,
    # uuid and fixed columns fail in pyiceberg 0.12 ("Cannot promote")
    core = [f.name for f in core_schema().fields]
    theirs = table.scan(selected_fields=tuple(core)).to_arrow()
    assert rows(theirs, "l", null_maps_empty=True) == rows(data.select(core), "l",
                                                           null_maps_empty=True)


def await_read(table: object) -> pa.Table:
    return asyncio.run(aorc.iceberg.read_table(table))  # type: ignore[arg-type]


SPECS = [
    [("s", IdentityTransform())],
    [("ts", DayTransform()), ("s", TruncateTransform(1))],
    [("tz", YearTransform()), ("l", BucketTransform(4))],
    [("dt", IdentityTransform()), ("i", TruncateTransform(10**9))],
]


@pytest.mark.parametrize("fields", SPECS, ids=lambda f: "+".join(str(t) for _, t in f))
def test_partitions_are_pyicebergs(catalog: object, fields: list[tuple[str, object]]) -> None:
    schema = core_schema()
    spec = PartitionSpec(*[PartitionField(schema.find_field(name).field_id, 1000 + k, t,
                                          f"p{k}") for k, (name, t) in enumerate(fields)])
    ours = catalog.create_table("db.ours", schema, partition_spec=spec)  # type: ignore[attr-defined]
    theirs = catalog.create_table("db.theirs", schema, partition_spec=spec)  # type: ignore[attr-defined]
    data = table_data(schema, 1_000, seed=5)
    asyncio.run(aorc.iceberg.append(ours, data))
    theirs.append(data)  # pyiceberg's own Parquet path computes the partitions too
    mine = sorted((str(t.file.partition), t.file.record_count)
                  for t in ours.scan().plan_files())
    oracle = sorted((str(t.file.partition), t.file.record_count)
                    for t in theirs.scan().plan_files())
    assert mine == oracle
    assert rows(ours.scan().to_arrow(), "l", null_maps_empty=True) == \
        rows(data, "l", null_maps_empty=True)
    assert rows(await_read(ours), "l") == rows(data, "l")


def test_target_file_size_and_orc_properties(catalog: object) -> None:
    table = catalog.create_table("db.t", core_schema(), properties={  # type: ignore[attr-defined]
        "write.target-file-size-bytes": str(64 * 1024),
        "write.orc.compression-codec": "snappy",
        "write.orc.stripe-size-bytes": str(32 * 1024),
        "write.orc.bloom.filter.columns": "s,st.y",
        "write.orc.bloom.filter.fpp": "0.02"})
    data = table_data(core_schema(), 6_000, seed=2)
    asyncio.run(aorc.iceberg.append(table, data))
    files = [t.file for t in table.scan().plan_files()]
    assert len(files) > 2 and sum(f.record_count for f in files) == 6_000

    async def inspect(path: str) -> tuple[str, int, list[str]]:
        async with aorc.open_reader(path) as reader:
            footer = await reader.read_stripe_footer(0)
            names = reader.column_names()
            return reader.compression, reader.num_stripes, \
                [names[c] for c in footer.bloom_filter_columns]

    compression, stripes, bloom = asyncio.run(inspect(files[0].file_path))
    assert compression == "snappy" and stripes > 1 and bloom == ["s", "st.y"]
    bad = catalog.create_table("db.bad", core_schema(), properties={  # type: ignore[attr-defined]
        "write.orc.compression-codec": "brotli"})
    with pytest.raises(SchemaError):
        asyncio.run(aorc.iceberg.append(bad, data.slice(0, 10)))
    assert bad.current_snapshot() is None


def test_conflicting_writers_are_retried_on_a_refreshed_table(catalog: object) -> None:
    """Two writers load the table at the same version; the second commits after the first:
    its first commit attempt fails (stale metadata) and is retried on the refreshed table."""
    first = catalog.create_table("db.t", core_schema())  # type: ignore[attr-defined]
    second = catalog.load_table("db.t")  # type: ignore[attr-defined]
    a, b = table_data(core_schema(), 100, seed=1), table_data(core_schema(), 50, seed=2)
    asyncio.run(aorc.iceberg.append(first, a))
    stale = second.metadata
    snapshot = asyncio.run(aorc.iceberg.append(second, b))
    assert stale.current_snapshot_id is None  # the second writer started from the old state
    assert snapshot.parent_snapshot_id == first.current_snapshot().snapshot_id
    fresh = catalog.load_table("db.t")  # type: ignore[attr-defined]
    assert len(fresh.metadata.snapshots) == 2
    assert rows(fresh.scan().to_arrow(), "l", null_maps_empty=True) == \
        rows(pa.concat_tables([a, b]), "l", null_maps_empty=True)


def test_data_forms(catalog: object) -> None:
    table = catalog.create_table("db.t", core_schema())  # type: ignore[attr-defined]
    data = table_data(core_schema(), 300, seed=4)
    batches = data.to_batches(max_chunksize=70)
    asyncio.run(aorc.iceberg.append(table, batches))
    asyncio.run(aorc.iceberg.append(table, pa.RecordBatchReader.from_batches(data.schema,
                                                                             batches)))
    asyncio.run(aorc.iceberg.append(table, data.select(["l", "s"])))  # optional ones null
    back = asyncio.run(aorc.iceberg.read_table(table, columns=["l", "s", "i"]))
    assert back.num_rows == 900
    assert back.column("i").null_count == data.column("i").null_count * 2 + 300


async def test_s3_warehouse(s3_catalog: object) -> None:
    table = s3_catalog.create_table("db.t", core_schema(), partition_spec=PartitionSpec(  # type: ignore[attr-defined]
        PartitionField(8, 1000, DayTransform(), "ts_day")))
    data = table_data(core_schema(), 800, seed=9)
    await aorc.iceberg.append(table, data)
    assert all(t.file.file_path.startswith("s3://") for t in table.scan().plan_files())
    assert rows(table.scan().to_arrow(), "l", null_maps_empty=True) == \
        rows(data, "l", null_maps_empty=True)
    assert rows(await aorc.iceberg.read_table(table), "l") == rows(data, "l")


async def test_failed_write_leaves_no_file_and_no_commit(s3_catalog: object, s3_proxy: object,
                                                         s3_client: object, s3_bucket: str
                                                         ) -> None:
    table = s3_catalog.create_table("db.t", core_schema(), partition_spec=PartitionSpec(  # type: ignore[attr-defined]
        PartitionField(10, 1000, IdentityTransform(), "s")))
    seen: list[str] = []

    def refuse_third_put(req: ProxyRequest) -> Fault | None:  # in the proxy's thread
        if req.operation == "PutObject":
            seen.append(req.path)
            if len(seen) == 3:
                return Fault(403, "AccessDenied")
        return None

    s3_proxy.rules.append(refuse_third_put)  # type: ignore[attr-defined]
    data = table_data(core_schema(), 500, seed=3)
    with pytest.raises(StoreError):
        await aorc.iceberg.append(table, data, max_concurrency=1,
                                  storage_options={"endpoint_url": s3_proxy.url})  # type: ignore[attr-defined]
    assert len(seen) == 3
    assert table.current_snapshot() is None
    keys = [o["Key"] for o in s3_client.list_objects_v2(  # type: ignore[attr-defined]
        Bucket=s3_bucket).get("Contents", [])]
    assert not [k for k in keys if "/data/" in k]
