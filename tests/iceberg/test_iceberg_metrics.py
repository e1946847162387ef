"""Iceberg metrics of the ORC files aorc writes equal those recomputed value by value from
the data (helpers/iceberg.py: Iceberg counts include nulls, NaN kept out of bounds, strings
and binaries truncated as write.metadata.metrics.* say); footer metrics of files written
elsewhere follow Iceberg Java's OrcMetrics; column sizes and split offsets come from the
file itself."""

from __future__ import annotations

import asyncio
import pathlib

import pyarrow as pa
import pyarrow.orc as po
import pytest
from helpers.iceberg import (
    all_types_schema,
    decode_bound,
    python_bound,
    recompute_metrics,
    table_data,
)
from pyiceberg.schema import Schema, index_by_id  # noqa: I001
from pyiceberg.table.name_mapping import create_mapping_from_schema
from pyiceberg.types import DoubleType, LongType, NestedField, StringType

import aorc
import aorc.iceberg
from aorc.iceberg.config import store_path
from aorc.iceberg.metrics import footer_statistics
from aorc.iceberg.schema import field_ids


def _check(schema: Schema, f: object, expected: dict[str, dict[int, object]]) -> None:
    types = {fid: fld.field_type for fid, fld in index_by_id(schema).items()}
    for name in ("value_counts", "null_value_counts", "nan_value_counts"):
        assert dict(getattr(f, name)) == expected[name], name
    for name in ("lower_bounds", "upper_bounds"):
        got = {fid: decode_bound(types[fid], raw) for fid, raw in getattr(f, name).items()}
        want = {fid: python_bound(types[fid], v) for fid, v in expected[name].items()
                if v is not None}
        assert got == want, name


@pytest.mark.parametrize("mode", [None, "full", "truncate(4)"])
def test_metrics_equal_recomputed(catalog: object, mode: str | None) -> None:
    schema = all_types_schema()
    props = {} if mode is None else {"write.metadata.metrics.default": mode}
    table = catalog.create_table("db.t", schema, properties=props)  # type: ignore[attr-defined]
    schema = table.schema()
    data = table_data(schema, 2_000, seed=7)
    asyncio.run(aorc.iceberg.append(table, data))
    [task] = list(table.scan().plan_files())
    f = task.file
    truncate = {None: 16, "full": None, "truncate(4)": 4}[mode]
    _check(schema, f, recompute_metrics(schema, data, truncate))
    assert f.record_count == 2_000
    # sizes and offsets: the file's own
    with aorc.sync.open_reader(store_path(f.file_path)) as reader:
        assert f.split_offsets == [s.offset for s in reader.stripes]
        ids = field_ids(reader.orc_schema, None).ids
        assert dict(f.column_sizes) == {fid: reader.statistics[cid].bytes_on_disk
                                        for cid, fid in ids.items()}
        assert f.file_size_in_bytes == reader.file_length


def test_per_column_modes(catalog: object) -> None:
    schema = Schema(NestedField(1, "a", StringType()), NestedField(2, "b", StringType()),
                    NestedField(3, "c", LongType()), NestedField(4, "d", DoubleType()))
    table = catalog.create_table("db.t", schema, properties={  # type: ignore[attr-defined]
        "write.metadata.metrics.default": "counts",
        "write.metadata.metrics.column.a": "truncate(2)",
        "write.metadata.metrics.column.c": "full",
        "write.metadata.metrics.column.d": "none"})
    data = pa.table({"a": ["banana", "apple", None], "b": ["x", "y", "z"], "c": [5, 1, 9],
                     "d": [1.0, float("nan"), None]})
    asyncio.run(aorc.iceberg.append(table, data))
    [task] = list(table.scan().plan_files())
    f = task.file
    assert dict(f.value_counts) == {1: 3, 2: 3, 3: 3}
    assert dict(f.null_value_counts) == {1: 1, 2: 0, 3: 0}
    assert dict(f.nan_value_counts) == {}
    assert dict(f.lower_bounds) == {1: b"ap", 3: (1).to_bytes(8, "little")}
    assert dict(f.upper_bounds) == {1: b"bb", 3: (9).to_bytes(8, "little")}


def test_footer_metrics_follow_iceberg_java(tmp_path: pathlib.Path) -> None:
    """A file pyarrow (ORC C++) wrote, without ids: Java's OrcMetrics rules over its footer."""
    schema = Schema(NestedField(1, "x", LongType()), NestedField(2, "s", StringType()),
                    NestedField(3, "d", DoubleType()))
    data = pa.table({"x": [3, None, 7, 1], "s": ["b", "a", None, "c" * 30],
                     "d": [2.0, float("nan"), 1.5, None]})
    path = tmp_path / "plain.orc"
    po.write_table(data, str(path))

    async def stats() -> object:
        async with aorc.open_reader(path) as reader:
            ids = field_ids(reader.orc_schema, create_mapping_from_schema(schema)).ids
            return footer_statistics(schema, {}, reader.orc_schema, ids, reader.statistics,
                                     reader.num_rows, [s.offset for s in reader.stripes])

    result = asyncio.run(stats())
    d = result.to_serialized_dict()  # type: ignore[attr-defined]
    assert d["record_count"] == 4
    assert d["value_counts"] == {1: 4, 2: 4, 3: 4}
    assert d["null_value_counts"] == {1: 1, 2: 1, 3: 1}
    assert d["nan_value_counts"] == {}
    assert d["lower_bounds"][1] == (1).to_bytes(8, "little")
    assert d["upper_bounds"][1] == (7).to_bytes(8, "little")
    assert d["lower_bounds"][2] == b"a"
    assert d["upper_bounds"][2] == b"c" * 15 + b"d"  # truncate(16), incremented
    assert d["column_sizes"] == {}  # (ORC C++ records no bytesOnDisk)
