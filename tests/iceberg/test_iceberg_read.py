"""aorc.iceberg.read_table / iter_batches against pyiceberg's own scan: schema evolution
(add, rename, drop, widen, nested), filters in every form, time travel, limits; position
and equality delete files; pushdown seen in the S3 request log (pruned partitions' files
and filtered stripes are never fetched)."""

from __future__ import annotations

import asyncio
import datetime
import json
import pathlib
import urllib.parse
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from helpers.iceberg import commit_delete_files, core_schema, delete_file, rows, table_data
from pyiceberg.expressions import And, EqualTo, GreaterThanOrEqual, In, IsNull  # noqa: I001
from pyiceberg.manifest import DataFileContent, FileFormat
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.transforms import DayTransform, IdentityTransform
from pyiceberg.types import (
    DecimalType,
    DoubleType,
    IntegerType,
    LongType,
    NestedField,
    StringType,
    StructType,
)

import aorc
import aorc.iceberg
from aorc.errors import SchemaError
from aorc.iceberg.schema import file_schema, to_file_batches


def read(table: Any, **kw: Any) -> pa.Table:
    return asyncio.run(aorc.iceberg.read_table(table, **kw))


def test_schema_evolution_reads_by_field_id(catalog: Any) -> None:
    table = catalog.create_table("db.t", core_schema())
    first = table_data(table.schema(), 400, seed=1)
    asyncio.run(aorc.iceberg.append(table, first))
    with table.update_schema() as u:
        u.rename_column("s", "name")
        u.delete_column("b")
        u.update_column("i", LongType())
        u.update_column("f", DoubleType())
        u.update_column("dec", DecimalType(14, 2))
        u.add_column("added", StringType())
        u.add_column(("st", "z"), IntegerType())
        u.rename_column("st.y", "why")
    second = table.scan().to_arrow().slice(0, 0)  # (the new schema's Arrow types)
    later = table_data(core_schema(), 200, seed=2).rename_columns(
        {"s": "name"}).drop_columns(["b"]).append_column("added", pa.array(["x"] * 200))
    later = later.set_column(later.schema.get_field_index("st"), "st", pa.array(
        [None if v is None else {"x": v["x"], "why": v["y"], "z": 7}
         for v in later.column("st").to_pylist()], second.schema.field("st").type))
    asyncio.run(aorc.iceberg.append(table, later))
    ours = read(table)
    theirs = table.scan().to_arrow()
    # pyiceberg gives the column missing from the old file as large_string, the others as
    # the ORC files read (string): aorc gives every string column the same type
    assert theirs.schema.field("added").type == pa.large_string()
    theirs = theirs.cast(ours.schema)
    assert rows(ours, "l", null_maps_empty=True) == rows(theirs, "l", null_maps_empty=True)
    assert ours.column("added").null_count == 400
    old = {r["l"]: r for r in first.to_pylist()}
    for r in ours.to_pylist():
        if r["l"] in old:
            assert r["name"] == old[r["l"]]["s"] and r["i"] == old[r["l"]]["i"]
            assert r["st"] is None or r["st"]["z"] is None


FILTERS = [
    [("s", "==", "ab")],
    [[("i", ">", 0), ("s", "in", ["a", "ab"])], [("d", "is null")]],
    "l >= 0 and dt < '2026-06-01'",
    And(GreaterThanOrEqual("ts", "2026-11-21T00:00:00"), In("s", {"", "été"})),
    IsNull("st.x"),
    EqualTo("tz", "2026-11-20T06:00:00+00:00"),
]


@pytest.mark.parametrize("filters", FILTERS, ids=range(len(FILTERS)))
def test_filters_match_pyiceberg(catalog: Any, filters: Any) -> None:
    table = catalog.create_table("db.t", core_schema(), partition_spec=PartitionSpec(
        PartitionField(8, 1000, DayTransform(), "ts_day")))
    for seed in (1, 2):
        asyncio.run(aorc.iceberg.append(table, table_data(core_schema(), 700, seed=seed),
                                        stripe_size=16 * 1024, row_index_stride=1000))
    ours = read(table, filters=filters, columns=["l", "s", "ts"])
    expr = aorc.iceberg.filters.iceberg_filter(filters)
    theirs = table.scan(row_filter=expr, selected_fields=("l", "s", "ts")).to_arrow()
    assert rows(ours, "l") == rows(theirs, "l")
    batches = asyncio.run(_collect(aorc.iceberg.iter_batches(table, filters=filters,
                                                             columns=["l"])))
    assert sorted(v for b in batches for v in b.column("l").to_pylist()) == \
        sorted(theirs.column("l").to_pylist())


async def _collect(source: Any) -> list[pa.RecordBatch]:
    return [b async for b in source]


def test_time_travel_scans_and_limits(catalog: Any) -> None:
    table = catalog.create_table("db.t", core_schema())
    a = table_data(core_schema(), 100, seed=1)
    first = asyncio.run(aorc.iceberg.append(table, a))
    asyncio.run(aorc.iceberg.append(table, table_data(core_schema(), 50, seed=2)))
    assert read(table).num_rows == 150
    assert rows(read(table, snapshot_id=first.snapshot_id), "l") == rows(a, "l")
    scan = table.scan(row_filter="i > 0", selected_fields=("l", "i"), limit=7)
    got = read(scan)
    assert got.num_rows == 7 and pc.all(pc.greater(got.column("i"), 0)).as_py()
    with pytest.raises(SchemaError, match="no snapshot"):
        read(table, snapshot_id=12345)
    with pytest.raises(SchemaError, match="bad Iceberg filter"):
        read(table, filters="l >>> 3")


def _orc_bytes(table: pa.Table) -> bytes:
    return aorc.sync.run(_write_bytes(table))


async def _write_bytes(table: pa.Table) -> bytes:
    from aorc.io.output import MemoryOutput

    out = MemoryOutput()
    await aorc.write_table(table, out)
    return out.getvalue()


def _position_deletes_parquet(path: pathlib.Path, pairs: list[tuple[str, int]]) -> int:
    schema = pa.schema([pa.field("file_path", pa.string(), False,
                                 {b"PARQUET:field_id": b"2147483546"}),
                        pa.field("pos", pa.int64(), False,
                                 {b"PARQUET:field_id": b"2147483545"})])
    pq.write_table(pa.table({"file_path": [p for p, _ in pairs],
                             "pos": [k for _, k in pairs]}, schema=schema), path)
    return len(pairs)


@pytest.mark.parametrize("fmt", ["parquet", "orc"])
def test_position_deletes(catalog: Any, tmp_path: pathlib.Path, fmt: str) -> None:
    table = catalog.create_table("db.t", core_schema(), partition_spec=PartitionSpec(
        PartitionField(10, 1000, IdentityTransform(), "s")))
    asyncio.run(aorc.iceberg.append(table, table_data(core_schema(), 900, seed=3),
                                    stripe_size=8 * 1024))
    tasks = list(table.scan().plan_files())
    f = max((t.file for t in tasks), key=lambda d: d.record_count)
    pairs = [(f.file_path, k) for k in range(0, f.record_count, 3)] + [("elsewhere", 1)]
    path = tmp_path / f"deletes.{fmt}"
    if fmt == "parquet":
        _position_deletes_parquet(path, pairs)
        file_format = FileFormat.PARQUET
    else:
        ids = {"file_path": "2147483546", "pos": "2147483545"}
        schema = pa.schema([pa.field(n, t, metadata={b"ORC:attributes": json.dumps(
            {"iceberg.id": ids[n], "iceberg.required": "true"}).encode()})
            for n, t in (("file_path", pa.string()), ("pos", pa.int64()))])
        path.write_bytes(_orc_bytes(pa.table({"file_path": [p for p, _ in pairs],
                                              "pos": [k for _, k in pairs]}, schema=schema)))
        file_format = FileFormat.ORC
    commit_delete_files(table, [delete_file(table, f"file://{path}",
                                            DataFileContent.POSITION_DELETES, len(pairs),
                                            path.stat().st_size, file_format, f.partition)])
    theirs = table.scan().to_arrow()
    assert theirs.num_rows == 900 - len(range(0, f.record_count, 3))
    assert rows(read(table), "l", null_maps_empty=True) == \
        rows(theirs, "l", null_maps_empty=True)
    filtered = read(table, filters=[("i", ">", 0)], columns=["l"])
    assert sorted(filtered.column("l").to_pylist()) == sorted(
        table.scan(row_filter="i > 0", selected_fields=("l",)).to_arrow()
        .column("l").to_pylist())


def test_equality_deletes(catalog: Any, tmp_path: pathlib.Path) -> None:
    """Iceberg Java writes equality deletes (pyiceberg cannot read them): rows whose (i, s)
    equal a delete row's -- a null matching a null -- are gone, and only from data files
    committed before the delete."""
    table = catalog.create_table("db.t", core_schema())
    data = table_data(core_schema(), 600, seed=4)
    asyncio.run(aorc.iceberg.append(table, data))
    schema = table.schema()
    keys = data.select(["i", "s"]).slice(0, 40).to_pylist() + [{"i": None, "s": None}]
    delete_schema = Schema(schema.find_field("i"), schema.find_field("s"))
    [batch] = to_file_batches(delete_schema, pa.Table.from_pylist(keys, schema=pa.schema(
        [("i", pa.int32()), ("s", pa.string())])))
    path = tmp_path / "eq.orc"

    async def write() -> None:
        async with aorc.open_writer(path, file_schema(delete_schema)) as w:
            await w.write(batch)

    asyncio.run(write())
    commit_delete_files(table, [delete_file(table, f"file://{path}",
                                            DataFileContent.EQUALITY_DELETES, len(keys),
                                            path.stat().st_size, FileFormat.ORC, None,
                                            equality_ids=[2, 10])])
    later = table_data(core_schema(), 30, seed=4)  # same keys, committed after the delete
    asyncio.run(aorc.iceberg.append(table, later))
    deleted = {(k["i"], k["s"]) for k in keys}
    expected = [r for r in data.to_pylist() if (r["i"], r["s"]) not in deleted]
    got = read(table, columns=["l"])
    assert sorted(got.column("l").to_pylist()) == sorted(
        [r["l"] for r in expected] + later.column("l").to_pylist())
    assert len(expected) < 600 - 40  # (duplicates of keys and the null pair went too)


async def test_pushdown_fetches_only_what_can_match(s3_catalog: Any, s3_proxy: Any) -> None:
    """A day-partitioned table on S3: a filter on one day and one id range fetches only that
    day's files (the others are pruned by the plan) and, inside them, not the stripes the
    statistics rule out (the proxy's request log says which bytes were read)."""
    schema = Schema(NestedField(1, "id", LongType(), required=True),
                    NestedField(2, "ts", core_schema().find_field("ts").field_type),
                    NestedField(3, "payload", StringType()))
    table = s3_catalog.create_table("db.t", schema, partition_spec=PartitionSpec(
        PartitionField(2, 1000, DayTransform(), "ts_day")))
    n = 40_000
    day0 = datetime.datetime(2026, 11, 20)
    data = pa.table({"id": pa.array(range(n), pa.int64()),
                     "ts": pa.array([day0 + datetime.timedelta(days=k % 4, seconds=k)
                                     for k in range(n)], pa.timestamp("us")),
                     "payload": pa.array([f"p{k:09d}" * 8 for k in range(n)])})
    await aorc.iceberg.append(table, data, stripe_size=64 * 1024, compression="none")
    files = {t.file.file_path: t.file for t in table.scan().plan_files()}
    day2 = [p for p in files if "ts_day=2026-11-22" in p]
    assert len(files) == 4 and len(day2) == 1
    s3_proxy.log.clear()
    got = await aorc.iceberg.read_table(
        table, storage_options={"endpoint_url": s3_proxy.url},
        filters=[("ts", ">=", datetime.datetime(2026, 11, 22)),
                 ("ts", "<", datetime.datetime(2026, 11, 23)),
                 ("id", ">=", 30_000), ("id", "<", 30_400)])
    assert sorted(got.column("id").to_pylist()) == [k for k in range(30_000, 30_400)
                                                    if k % 4 == 2]
    gets = [r for r in s3_proxy.log if r.operation == "GetObject"]
    key = day2[0].split("/", 3)[3]
    assert gets and all(urllib.parse.unquote(r.target.split("?")[0]).endswith(key)
                        for r in gets)  # one file only: the other days are never opened
    size = files[day2[0]].file_size_in_bytes
    async with aorc.open_reader(day2[0], storage_options={}) as reader:  # (not proxied)
        stripes = reader.stripes
        id_col = reader.column_names().index("id")
        tail_start = stripes[-1].offset + stripes[-1].length
        wanted = [s for s in stripes if s.statistics[id_col].maximum >= 30_000
                  and s.statistics[id_col].minimum < 30_400]
    assert 0 < len(wanted) < len(stripes) / 4
    for r in gets:  # every read is the tail (the last 16 KiB, read first) or a stripe whose
        start, end = _range(r.headers.get("range", ""), size)  # statistics may match
        assert end == size or start >= tail_start or any(
            s.offset <= start and end <= s.offset + s.length for s in wanted), (start, end)
    fetched = sum(e - s for s, e in (_range(r.headers.get("range", ""), size) for r in gets))
    assert fetched < size / 4, (fetched, size)


def _range(header: str, size: int) -> tuple[int, int]:
    """[start, end) of a Range header ("bytes=a-b" or a suffix "bytes=-n")."""
    start, _, end = header.removeprefix("bytes=").partition("-")
    if not start:
        return size - int(end), size
    return int(start), int(end) + 1


def test_files_without_ids_read_through_the_name_mapping(catalog: Any,
                                                         tmp_path: pathlib.Path) -> None:
    schema = Schema(NestedField(1, "id", LongType()), NestedField(2, "name", StringType()),
                    NestedField(3, "info", StructType(NestedField(4, "score", DoubleType()))))
    table = catalog.create_table("db.t", schema)
    plain = pa.table({"id": [1, 2, 3], "name": ["a", "b", None],
                      "info": [{"score": 1.5}, None, {"score": -2.0}]})
    path = tmp_path / "plain.orc"
    import pyarrow.orc as po

    po.write_table(plain, str(path))  # ORC C++: no Iceberg ids
    asyncio.run(aorc.iceberg.add_files(table, [str(path)]))
    with table.update_schema() as u:  # pyiceberg updates the name mapping with the schema
        u.rename_column("name", "label")
    got = read(table)
    assert got.column("label").to_pylist() == ["a", "b", None]
    assert got.column("info").to_pylist() == plain.column("info").to_pylist()
    assert rows(got, "id") == rows(table.scan().to_arrow(), "id")


def test_unsupported_data_files_are_refused(catalog: Any) -> None:
    table = catalog.create_table("db.t", core_schema())
    table.append(table_data(core_schema(), 10, seed=1))  # pyiceberg: Parquet
    with pytest.raises(aorc.UnsupportedFeatureError, match="PARQUET"):
        read(table)
