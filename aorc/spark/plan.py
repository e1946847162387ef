"""Planning a Spark read, without Spark: which files, which stripes, which tasks (splits,
stripe grouping and task packing are shared with the other engines: :mod:`aorc.dataset.splits`).

:func:`list_files` lists the files under files, folders and prefixes; Hive ``key=value``
folders below a root become partition columns (:func:`partition_columns`, typed by
:mod:`aorc.dataset.partitioning` as datasets type them); :func:`plan_read` checks that the files
share a schema, resolves filters on partition columns (skipping files), prunes stripes by
their statistics and groups the rest into :class:`Split` s of about ``split_bytes``;
:func:`pack_splits` packs splits into tasks as Spark packs files. :mod:`aorc.spark.reader`
and :mod:`aorc.spark.source` run the plan in Spark tasks.
"""

from __future__ import annotations

import asyncio
import datetime
import os
from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from aorc.dataset.partitioning import (
    filter_value,
    infer_partition_schema,
    normalize_filters,
    partition_table,
    partition_values,
)
from aorc.dataset.splits import (
    DEFAULT_SPLIT_BYTES,
    OPEN_COST_BYTES,
    Split,
    balance_splits,
    pack_splits,
    stripe_groups,
)
from aorc.errors import SchemaError, UnsupportedFeatureError
from aorc.format.projection import select_columns
from aorc.format.types import parse_type_string
from aorc.io import registry
from aorc.keys import KeyProvider
from aorc.read.reader import open_reader
from aorc.spark.compat import session_zone, tzinfo, with_ntz

__all__ = [
    "DEFAULT_SPLIT_BYTES",
    "OPEN_COST_BYTES",
    "Filters",
    "Split",
    "balance_splits",
    "list_files",
    "pack_splits",
    "partition_columns",
    "plan_read",
    "read_schema",
]

Filters = Any  # pyarrow-style filters: list of tuples, or list of lists of tuples


# =========================================================================== listing

async def list_files(uris: str | Sequence[str],
                     storage_options: Mapping[str, Any] | None = None
                     ) -> list[tuple[str, str]]:
    """The files under each URI (a file, a local folder, an ``s3://`` prefix), skipping
    hidden names (``.x``, ``_x``), as (root, file) pairs.

    Raises:
        ObjectNotFoundError: a URI names nothing.

    Args:
        uris: one URI or several.
        storage_options: the store's settings.

    Returns:
        ``(root, file)`` pairs.
    """
    roots = [uris] if isinstance(uris, str) else list(uris)
    out: list[tuple[str, str]] = []
    for root in roots:
        root = os.fspath(root)
        files = await registry.list_files(root, storage_options)
        out.extend((root, f.path) for f in files)
    return out


def partition_columns(files: Sequence[tuple[str, str]], time_zone: str | None = None
                      ) -> tuple[pa.Schema, list[dict[str, Any]]]:
    """The Hive partition columns of (root, file) pairs and each file's typed values, as
    datasets infer them (:mod:`aorc.dataset.partitioning`, Spark's rules); timestamps are the
    folders' wall clocks in ``time_zone`` (Spark's session time zone, as
    :func:`aorc.spark.compat.session_zone` reads it), typed ``timestamp("us", zone)`` as
    Spark's TimestampType (``None``: left as wall clocks, ``timestamp("us")``).

    Raises:
        SchemaError: files at different partition depths or keys.
    """
    raw = [partition_values(root, uri) for root, uri in files]
    paths = [uri for _, uri in files]
    schema = infer_partition_schema(raw, paths)
    if not len(schema):
        return schema, [{} for _ in raw]
    typed = partition_table(raw, schema, paths).to_pylist()
    if time_zone is None:
        return schema, typed
    for i, field in enumerate(schema):
        if pa.types.is_timestamp(field.type):
            t = pa.timestamp("us", session_zone(time_zone))
            schema = schema.set(i, field.with_type(t))
            for row in typed:
                row[field.name] = _in_zone(row[field.name], t)
    return schema, typed


def _in_zone(wall: datetime.datetime | None, t: pa.DataType) -> datetime.datetime | None:
    """A wall clock in the zone of timestamp type ``t``, as an aware datetime: the instant
    Spark's session zone gives it (java.time: the earlier of repeated times, skipped times
    moved on by the gap, as ``fold=0`` does)."""
    return None if wall is None else wall.replace(tzinfo=tzinfo(t.tz))


# =========================================================================== planning

def _leaf_on_partition(leaf: tuple[Any, ...], values: Mapping[str, Any],
                       t: pa.DataType) -> bool:
    name, op = leaf[0], str(leaf[1])  # normalised: (column, canonical op, value)
    value = values[name]
    arg = _filter_value(leaf[2], t)
    if op == "is null":
        return value is None
    if op == "is not null":
        return value is not None
    if value is None:
        return bool(op == "in" and None in arg or op == "not in" and None not in arg)
    compare = {"==": value == arg, "!=": value != arg}
    if op in compare:
        return bool(compare[op])
    if op in ("in", "not in"):
        return (value in arg) == (op == "in")
    return bool({"<": value < arg, "<=": value <= arg, ">": value > arg,
                 ">=": value >= arg}[op])


def _filter_value(arg: Any, t: pa.DataType) -> Any:
    """A filter's value for a partition column of type ``t``: texts (JSON filters) are
    parsed as the folders are, so ``("dt", "==", "2024-01-01")`` matches a date column, and
    wall clocks (naive datetimes, texts) on a timestamp column are read in its zone."""
    if isinstance(arg, (list, tuple, set, frozenset)):
        return [_filter_value(a, t) for a in arg]
    arg = filter_value(arg, t)
    if (isinstance(arg, datetime.datetime) and arg.tzinfo is None
            and pa.types.is_timestamp(t) and t.tz):
        return _in_zone(arg, t)
    return arg


def _expression_without_partitions(expression: pc.Expression,
                                   values: Mapping[str, Any]) -> pc.Expression:
    """A pyarrow expression filter, checked to read no partition column (which the files
    do not hold); it then applies to every file as it is."""
    from aorc.filters.expression import split_expression

    used = [n for n in split_expression(expression).names if n in values]
    if used:
        raise SchemaError(f"a pyarrow expression filter cannot use the partition columns "
                          f"{used}; give list filters (column, op, value) for them")
    return expression


def _resolve_filters(filters: Filters, values: Mapping[str, Any],
                     part_schema: pa.Schema) -> tuple[bool, Any]:
    """Evaluate the leaves on partition columns: (can the file match, remaining filters)."""
    if isinstance(filters, pc.Expression):
        return True, _expression_without_partitions(filters, values)
    clauses = normalize_filters(filters or None) or []
    if not clauses:
        return True, None
    left = []
    for clause in clauses:
        rest = []
        matched = True
        for leaf in clause:
            if leaf[0] in values:
                if not _leaf_on_partition(tuple(leaf), values,
                                          part_schema.field(leaf[0]).type):
                    matched = False
                    break
            else:
                rest.append(tuple(leaf))
        if matched:
            if not rest:
                return True, None  # one clause holds for every row
            left.append(rest)
    return bool(left), left or None


async def plan_read(uris: str | Sequence[str], columns: Sequence[str] | None = None,
                    filters: Filters = None, *,
                    storage_options: Mapping[str, Any] | None = None,
                    split_bytes: int = DEFAULT_SPLIT_BYTES,
                    time_zone: str | None = "UTC",
                    keys: KeyProvider | None = None) -> tuple[pa.Schema, list[Split]]:
    """List the files, check that they share a schema, prune stripes (and files, by their
    partition values) with ``filters`` and group stripes into splits.

    ``time_zone``: the zone of timestamp partition folders (Spark's session time zone; see
    :func:`partition_columns`).

    Returns:
        The Arrow schema of the rows (aorc's types, partition columns last) and the splits.

    Raises:
        SchemaError: files with different schemas or partition folders, unknown columns,
            bad filters.

    Args:
        uris: files, folders or prefixes.
        columns: the columns to read (all by default).
        filters: aorc filters (list form).
        storage_options: the store's settings.
        split_bytes: the target size of a split.
        time_zone: the zone of timestamp partition folders.
        keys: the key provider of encrypted columns: stripes are pruned with the decrypted
            statistics of the columns whose key it holds, the masked ones otherwise.
    """
    files = await list_files(uris, storage_options)
    part_schema, typed_values = partition_columns(files, time_zone)
    columns = _data_columns(columns, part_schema)
    sem = asyncio.Semaphore(16)

    async def plan_file(uri: str, typed: dict[str, Any]) -> tuple[pa.Schema, list[Split]]:
        ok, rest = _resolve_filters(filters, typed, part_schema)
        async with sem, open_reader(uri, storage_options=storage_options,
                                    keys=keys) as reader:
            schema = with_ntz(reader.schema, reader.orc_schema)
            if not ok:
                return schema, []
            select_columns(parse_type_string(reader.orc_type), columns)
            groups = stripe_groups(reader, rest, split_bytes)
            etag = reader.etag
        part = tuple((k, typed[k]) for k in part_schema.names)
        return schema, [Split(uri, g, part, rest, sizes, etag, rows)
                                   for g, sizes, rows in groups]

    planned = await asyncio.gather(*(plan_file(uri, t) for (_, uri), t
                                     in zip(files, typed_values, strict=True)))
    schemas = {str(s) for s, _ in planned}
    if len(schemas) > 1:
        raise SchemaError(f"the files have different schemas: {sorted(schemas)[:2]}")
    return _with_partitions(_projected(planned[0][0], columns), part_schema), \
        [s for _, splits in planned for s in splits]


async def read_schema(uris: str | Sequence[str], columns: Sequence[str] | None = None, *,
                      storage_options: Mapping[str, Any] | None = None,
                      time_zone: str | None = "UTC") -> pa.Schema:
    """The schema :func:`plan_read` gives, from the listing and the first file only.

    Args:
        uris: files, folders or prefixes.
        columns: the columns to read (all by default).
        storage_options: the store's settings.
        time_zone: the zone of timestamp partition folders.

    Returns:
        The Arrow schema of the rows.
    """
    files = await list_files(uris, storage_options)
    part_schema, _ = partition_columns(files, time_zone)
    columns = _data_columns(columns, part_schema)
    async with open_reader(files[0][1], storage_options=storage_options) as reader:
        schema = _projected(with_ntz(reader.schema, reader.orc_schema), columns)
    return _with_partitions(schema, part_schema)


def _with_partitions(schema: pa.Schema, part_schema: pa.Schema) -> pa.Schema:
    for field in part_schema:
        schema = schema.append(field)
    return schema


def _data_columns(columns: Sequence[str] | None, part_schema: pa.Schema) -> list[str] | None:
    """The asked columns that are in the files (not partition columns)."""
    if columns is None:
        return None
    return [c for c in columns if c not in part_schema.names]


def _projected(schema: pa.Schema, columns: Sequence[str] | None) -> pa.Schema:
    if columns is None:
        return schema
    if any("." in c for c in columns):
        raise UnsupportedFeatureError("aorc.spark.read selects top-level columns only; "
                                      "select nested fields in Spark")
    return pa.schema([f for f in schema if f.name in set(columns)])
