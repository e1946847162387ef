"""aorc.iceberg.add_files: existing ORC files (written by pyarrow/ORC C++ without ids, and by
aorc with ids) join a table in one snapshot, with partitions inferred from their bounds and
a name mapping created for id-less files; pyiceberg's scan reads them back; what does not fit
is refused."""

from __future__ import annotations

import asyncio
import pathlib
from typing import Any

import pyarrow as pa
import pyarrow.orc as po
import pytest
from helpers.iceberg import rows
from pyiceberg.partitioning import PartitionField, PartitionSpec  # noqa: I001
from pyiceberg.schema import Schema
from pyiceberg.transforms import DayTransform, IdentityTransform
from pyiceberg.types import DateType, DoubleType, LongType, NestedField, StringType

import aorc
import aorc.iceberg
from aorc.errors import ObjectNotFoundError, SchemaError
from aorc.iceberg.schema import file_schema, to_file_batches

SCHEMA = Schema(NestedField(1, "id", LongType()), NestedField(2, "region", StringType()),
                NestedField(3, "day", DateType()), NestedField(4, "amount", DoubleType()))
SPEC = PartitionSpec(PartitionField(2, 1000, IdentityTransform(), "region"),
                     PartitionField(3, 1001, DayTransform(), "day_day"))


def part(k: int, region: str, day: int) -> pa.Table:
    import datetime

    d = datetime.date(2026, 11, 1) + datetime.timedelta(days=day)
    return pa.table({"id": pa.array(range(k * 100, k * 100 + 100), pa.int64()),
                     "region": [region] * 100, "day": pa.array([d] * 100, pa.date32()),
                     "amount": pa.array([float(i) for i in range(100)])})


def test_files_from_other_writers_join_in_one_snapshot(catalog: Any,
                                                       tmp_path: pathlib.Path) -> None:
    table = catalog.create_table("db.t", SCHEMA, partition_spec=SPEC)
    tables = [part(0, "eu", 0), part(1, "us", 0), part(2, "eu", 3)]
    paths = []
    for k, t in enumerate(tables[:2]):  # ORC C++, no ids
        paths.append(str(tmp_path / f"c{k}.orc"))
        po.write_table(t, paths[-1])
    schema = table.schema()

    async def write_aorc(t: pa.Table, path: str) -> None:  # aorc, with ids
        async with aorc.open_writer(path, file_schema(schema)) as w:
            for b in to_file_batches(schema, t):
                await w.write(b)

    paths.append(f"file://{tmp_path}/a2.orc")
    asyncio.run(write_aorc(tables[2], str(tmp_path / "a2.orc")))
    snapshot = asyncio.run(aorc.iceberg.add_files(table, paths))
    assert snapshot.summary["added-data-files"] == "3"
    assert "schema.name-mapping.default" in table.metadata.properties
    files = sorted((t.file.file_path, str(t.file.partition), t.file.record_count)
                    for t in table.scan().plan_files())
    assert [f[2] for f in files] == [100, 100, 100]
    assert {f[1] for f in files} == {"Record[eu, 20758]", "Record[us, 20758]",
                                     "Record[eu, 20761]"}  # (days since 1970)
    everything = pa.concat_tables(tables)
    assert rows(table.scan().to_arrow(), "id") == rows(everything, "id")
    assert rows(asyncio.run(aorc.iceberg.read_table(table)), "id") == rows(everything, "id")
    only = table.scan(row_filter="region = 'us'").to_arrow()
    assert only.column("id").to_pylist() == list(range(100, 200))
    with pytest.raises(SchemaError, match="already in the table"):
        asyncio.run(aorc.iceberg.add_files(table, paths[:1]))


def test_refused(catalog: Any, tmp_path: pathlib.Path) -> None:
    table = catalog.create_table("db.t", SCHEMA, partition_spec=SPEC)
    mixed = pa.concat_tables([part(0, "eu", 0), part(1, "us", 0)])
    po.write_table(mixed, str(tmp_path / "mixed.orc"))
    with pytest.raises(SchemaError, match="several partitions of 'region'"):
        asyncio.run(aorc.iceberg.add_files(table, [str(tmp_path / "mixed.orc")]))
    wrong = part(0, "eu", 0).set_column(3, "amount", pa.array(["x"] * 100))
    po.write_table(wrong, str(tmp_path / "wrong.orc"))
    with pytest.raises(SchemaError, match="'amount' is ORC string"):
        asyncio.run(aorc.iceberg.add_files(table, [str(tmp_path / "wrong.orc")]))
    with pytest.raises(ObjectNotFoundError):
        asyncio.run(aorc.iceberg.add_files(table, [str(tmp_path / "missing.orc")]))
    with pytest.raises(SchemaError, match="not a string"):
        asyncio.run(aorc.iceberg.add_files(table, str(tmp_path / "x.orc")))  # type: ignore[arg-type]
    assert table.current_snapshot() is None
