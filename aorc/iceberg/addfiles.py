"""Registering existing ORC files in an Iceberg table (``add_files``), without rewriting them.

Each file's tail is read (one request for most files): its columns are matched to the
table's by ``iceberg.id`` or, for files written without ids (Hive, Spark, pyarrow, ...), by
the table's name mapping -- which is created from the current schema when the table has none
(``schema.name-mapping.default``, as pyiceberg's own ``add_files`` does). The metrics come
from the footer (:func:`aorc.iceberg.metrics.footer_statistics`), the partition from the
bounds of the source columns (every row of a file must fall into one partition). All files
are added in one snapshot.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

from pyiceberg import types as ice
from pyiceberg.expressions import AlwaysTrue
from pyiceberg.manifest import DataFile
from pyiceberg.partitioning import PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.table import Table
from pyiceberg.table.name_mapping import NameMapping, create_mapping_from_schema
from pyiceberg.table.snapshots import Snapshot
from pyiceberg.typedef import Record

from aorc.errors import SchemaError
from aorc.format.types import OrcType, TypeKind
from aorc.iceberg import config
from aorc.iceberg.metrics import footer_bounds, footer_statistics, table_columns
from aorc.iceberg.read import plan_tasks
from aorc.iceberg.schema import field_ids
from aorc.iceberg.write import WrittenFile, commit, data_file
from aorc.read.reader import OrcReader, open_reader

__all__ = ["NAME_MAPPING_PROPERTY", "add_files", "describe_file"]

NAME_MAPPING_PROPERTY = "schema.name-mapping.default"
_FILES_AT_ONCE = 16


#: Iceberg types and the ORC kinds a file may hold them in (as Iceberg Java reads them).
_KINDS: list[tuple[type | tuple[type, ...], frozenset[TypeKind]]] = [
    (ice.BooleanType, frozenset({TypeKind.BOOLEAN})),
    (ice.IntegerType, frozenset({TypeKind.BYTE, TypeKind.SHORT, TypeKind.INT})),
    (ice.LongType, frozenset({TypeKind.BYTE, TypeKind.SHORT, TypeKind.INT, TypeKind.LONG})),
    (ice.TimeType, frozenset({TypeKind.LONG})),
    (ice.FloatType, frozenset({TypeKind.FLOAT})),
    (ice.DoubleType, frozenset({TypeKind.FLOAT, TypeKind.DOUBLE})),
    (ice.DecimalType, frozenset({TypeKind.DECIMAL})),
    (ice.DateType, frozenset({TypeKind.DATE})),
    ((ice.TimestampType, ice.TimestampNanoType), frozenset({TypeKind.TIMESTAMP})),
    ((ice.TimestamptzType, ice.TimestamptzNanoType), frozenset({TypeKind.TIMESTAMP_INSTANT})),
    (ice.StringType, frozenset({TypeKind.STRING, TypeKind.VARCHAR, TypeKind.CHAR})),
    ((ice.BinaryType, ice.UUIDType, ice.FixedType), frozenset({TypeKind.BINARY})),
    (ice.StructType, frozenset({TypeKind.STRUCT})),
    (ice.ListType, frozenset({TypeKind.LIST})),
    (ice.MapType, frozenset({TypeKind.MAP})),
]


def _compatible(node: OrcType, t: Any) -> bool:
    """Whether an ORC column can be read as the Iceberg type."""
    for cls, kinds in _KINDS:
        if isinstance(t, cls):
            if isinstance(t, ice.DecimalType):
                return node.kind in kinds and (node.scale or 0) == t.scale and \
                    (node.precision or 38) <= t.precision
            return node.kind in kinds
    return False


def _check_types(schema: Schema, root: OrcType, ids: Mapping[int, int], path: str) -> None:
    for node, fid, f in table_columns(schema, root, ids):
        if not _compatible(node, f.field_type):
            raise SchemaError(f"{path}: column {schema.find_column_name(fid)!r} is ORC "
                              f"{node.kind.name.lower()}, the table says {f.field_type}")


def _partition(spec: PartitionSpec, schema: Schema, root: OrcType, ids: Mapping[int, int],
               reader: OrcReader, path: str) -> Record:
    nodes = {fid: node for node in root.walk()
             if (fid := ids.get(node.column_id)) is not None}
    values: list[Any] = []
    for pf in spec.fields:
        node = nodes.get(pf.source_id)
        source = schema.find_field(pf.source_id)
        if node is None or not isinstance(source.field_type, ice.PrimitiveType):
            raise SchemaError(f"{path}: the file has no column for partition field "
                              f"{pf.name!r} (source {source.name!r})")
        stats = reader.statistics[node.column_id]
        if not stats.num_values:
            values.append(None)
            continue
        low, high = footer_bounds(source.field_type, node, stats)
        if low is None or high is None:
            raise SchemaError(f"{path}: no statistics of {source.name!r} to place the file "
                              f"in partition {pf.name!r}")
        transform = pf.transform.transform(source.field_type)
        lo, hi = transform(low), transform(high)
        nulls = stats.has_null and reader.num_rows > stats.num_values
        if lo != hi or nulls:
            also = " and null" if nulls else ""
            raise SchemaError(f"{path}: its rows fall into several partitions of "
                              f"{pf.name!r} ({lo!r} .. {hi!r}{also}); a file added to a "
                              "table must hold one partition")
        values.append(lo)
    return Record(*values)


async def describe_file(table: Table, uri: str, mapping: NameMapping | None,
                        storage_options: Mapping[str, Any]) -> WrittenFile:
    """What an existing ORC file is to ``table``: its size, metrics and partition."""
    meta = table.metadata
    schema = meta.schema()
    async with open_reader(config.store_path(uri), storage_options=storage_options) as reader:
        root = reader.orc_schema
        ids = field_ids(root, mapping, uri).ids
        if not any(fid in {f.field_id for f in schema.fields} for fid in ids.values()):
            raise SchemaError(f"{uri}: none of its columns maps to the table's columns")
        _check_types(schema, root, ids, uri)
        stats = footer_statistics(schema, meta.properties, root, ids, reader.statistics,
                                  reader.num_rows, [s.offset for s in reader.stripes])
        partition = _partition(meta.spec(), schema, root, ids, reader, uri)
        return WrittenFile(uri, reader.file_length, stats, partition)


async def add_files(table: Table, uris: Sequence[str], *,
                    snapshot_properties: Mapping[str, str] | None = None,
                    storage_options: Mapping[str, Any] | None = None,
                    check_duplicates: bool = True) -> Snapshot:
    """Add existing ORC files to an Iceberg table, in one snapshot.

    Args:
        table: a pyiceberg table.
        uris: the files (local paths, ``file://`` or ``s3://`` URLs, ...), each holding the
            rows of one partition of the table's spec.
        snapshot_properties: extra entries for the snapshot's summary.
        storage_options: settings of the files' store (default: from the table's FileIO).
        check_duplicates: refuse files the table references already (lists its files).

    Returns:
        The committed snapshot.

    Raises:
        SchemaError: a file whose columns do not fit the table, that spans partitions, or is
            in the table already.
        ObjectNotFoundError: a missing file.
    """
    if isinstance(uris, str):
        raise SchemaError("uris must be a list of paths or URLs, not a string")
    uris = list(uris)
    if len(set(uris)) != len(uris):
        raise SchemaError("the same file is given twice")
    meta = table.metadata
    mapping = meta.name_mapping()
    new_mapping = mapping is None
    if mapping is None:
        mapping = create_mapping_from_schema(meta.schema())
    store = config.storage_options(meta.location, table.io.properties, storage_options)
    if check_duplicates:
        tasks = await asyncio.to_thread(plan_tasks, meta, table.io, AlwaysTrue(), None)
        present = sorted({t.file.file_path for t in tasks} & set(uris))
        if present:
            raise SchemaError(f"files already in the table: {present}")
    semaphore = asyncio.Semaphore(_FILES_AT_ONCE)

    async def one(uri: str) -> WrittenFile:
        async with semaphore:
            return await describe_file(table, uri, mapping, store)

    described = await asyncio.gather(*(one(u) for u in uris))
    files: list[DataFile] = [data_file(table, w) for w in described]
    mapping_json = mapping.model_dump_json()

    def stage(tx: Any, props: dict[str, str]) -> None:
        if new_mapping and NAME_MAPPING_PROPERTY not in tx.table_metadata.properties:
            tx.set_properties(**{NAME_MAPPING_PROPERTY: mapping_json})
        with tx.update_snapshot(snapshot_properties=props).fast_append() as fast:
            for f in files:
                fast.append_data_file(f)

    return await commit(table, stage, snapshot_properties=snapshot_properties)
