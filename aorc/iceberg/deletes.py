"""Row-level deletes (Iceberg v2): position delete files and equality delete files.

- A position delete file lists ``(file_path, pos)`` pairs: row ``pos`` (0-based, in file
  order) of data file ``file_path`` is deleted. :class:`DeleteReader` reads each delete file
  once per scan (ORC files with aorc, Parquet files with pyarrow through the table's FileIO)
  and hands out the sorted positions of one data file.
- An equality delete file holds rows of some columns (its ``equality_ids``): a data row
  whose values on those columns equal a delete row's is deleted, a null equalling a null.
  :func:`apply_equality_deletes` removes them (an anti-join on null-aware keys).

Which delete files apply to which data file (partition and sequence numbers) is decided by
the scan's plan (:mod:`aorc.iceberg.read`). Deletion vectors (Puffin files, v3) are refused.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pyiceberg.io import FileIO
from pyiceberg.manifest import DataFile, FileFormat
from pyiceberg.schema import Schema

from aorc.errors import SchemaError, UnsupportedFeatureError
from aorc.iceberg.config import store_path
from aorc.iceberg.project import project_batch
from aorc.iceberg.schema import FileIds, arrow_type, field_ids
from aorc.read.reader import open_reader

__all__ = ["DeleteReader", "apply_equality_deletes"]

_FILE_PATH = "file_path"
_POS = "pos"


class DeleteReader:
    """Reads the delete files of one scan, each at most once.

    Args:
        io: the table's FileIO (for Parquet delete files).
        schema: the table's schema (the columns of equality deletes).
        storage_options: aorc's settings of the table's store.
    """

    def __init__(self, io: FileIO, schema: Schema, storage_options: Mapping[str, Any]) -> None:
        self._io = io
        self._schema = schema
        self._storage = dict(storage_options)
        self._positions: dict[str, asyncio.Task[dict[str, np.ndarray]]] = {}
        self._equality: dict[str, asyncio.Task[pa.Table]] = {}

    async def positions(self, delete_files: Sequence[DataFile], data_path: str) -> np.ndarray:
        """The sorted, unique row positions of ``data_path`` the delete files delete."""
        found = []
        for f in delete_files:
            task = self._positions.get(f.file_path)
            if task is None:
                task = self._positions[f.file_path] = asyncio.ensure_future(
                    self._read_positions(f))
            by_path = await asyncio.shield(task)
            if data_path in by_path:
                found.append(by_path[data_path])
        if not found:
            return np.zeros(0, np.int64)
        return np.unique(np.concatenate(found))

    async def _read_positions(self, f: DataFile) -> dict[str, np.ndarray]:
        table = await self._read_file(f, [_FILE_PATH, _POS])
        if _FILE_PATH not in table.column_names or _POS not in table.column_names:
            raise SchemaError(f"{f.file_path}: a position delete file needs columns "
                              f"'file_path' and 'pos', has {table.column_names}")
        paths = table.column(_FILE_PATH).combine_chunks()
        pos = table.column(_POS).to_numpy().astype(np.int64)
        encoded = pc.dictionary_encode(paths)
        codes = encoded.indices.to_numpy(zero_copy_only=False)
        out = {}
        for k, name in enumerate(encoded.dictionary.to_pylist()):
            out[name] = pos[codes == k]
        return out

    async def equality(self, f: DataFile) -> pa.Table:
        """The rows of an equality delete file, in the table's types (its equality
        columns)."""
        task = self._equality.get(f.file_path)
        if task is None:
            task = self._equality[f.file_path] = asyncio.ensure_future(self._read_equality(f))
        return await asyncio.shield(task)

    async def _read_equality(self, f: DataFile) -> pa.Table:
        ids = list(f.equality_ids or [])
        if not ids:
            raise SchemaError(f"{f.file_path}: an equality delete file without equality ids")
        try:
            wanted = self._schema.select(*[self._schema.find_column_name(i) or "" for i in ids])
        except ValueError as exc:
            raise SchemaError(f"{f.file_path}: equality ids {ids} are not all in the table's "
                              f"schema") from exc
        if f.file_format == FileFormat.ORC:
            return await self._read_orc(f.file_path, wanted)
        table = await self._read_file(f, None)
        arrays = []
        for field in wanted.fields:
            column = _parquet_column(table, field.field_id, field.name)
            arrays.append(column.cast(arrow_type(field.field_type)))
        return pa.table(arrays, names=[field.name for field in wanted.fields])

    async def _read_orc(self, path: str, wanted: Schema) -> pa.Table:
        async with open_reader(store_path(path), storage_options=self._storage,
                               timestamp_unit="us") as reader:
            root = reader.orc_schema
            file_ids: FileIds = field_ids(root, None, path)
            batches = [project_batch(wanted.as_struct(), b, root, file_ids, path)
                       async for b in reader.iter_batches()]
        if not batches:
            return pa.table({f.name: pa.array([], arrow_type(f.field_type))
                             for f in wanted.fields})
        return pa.Table.from_batches(batches)

    async def _read_file(self, f: DataFile, columns: list[str] | None) -> pa.Table:
        if f.file_format == FileFormat.ORC:
            async with open_reader(store_path(f.file_path),
                                   storage_options=self._storage) as reader:
                names = [c for c in (columns or reader.schema.names)
                         if c in reader.schema.names]
                return await reader.read(names)
        if f.file_format == FileFormat.PARQUET:
            def read() -> pa.Table:
                with self._io.new_input(f.file_path).open() as stream:
                    return pq.read_table(stream, columns=columns)
            return await asyncio.to_thread(read)
        raise UnsupportedFeatureError(f"{f.file_path}: delete files in {f.file_format} "
                                      "(deletion vectors, Avro) are not supported")


def _parquet_column(table: pa.Table, field_id: int, name: str) -> pa.ChunkedArray:
    for i, field in enumerate(table.schema):
        meta = field.metadata or {}
        if meta.get(b"PARQUET:field_id") == str(field_id).encode():
            return table.column(i)
    if name in table.column_names:
        return table.column(name)
    raise SchemaError(f"an equality delete file has no column for field {name!r} "
                      f"(id {field_id})")


def _keys(column: pa.ChunkedArray | pa.Array) -> list[pa.Array]:
    """Null-aware join keys of a column: (is null, value with nulls filled)."""
    arr = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    if isinstance(arr, pa.ExtensionArray):
        arr = arr.storage
    t = arr.type
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        fill = pa.scalar("", t)
    elif pa.types.is_binary(t) or pa.types.is_large_binary(t):
        fill = pa.scalar(b"", t)
    elif pa.types.is_fixed_size_binary(t):
        fill = pa.scalar(bytes(t.byte_width), t)
    elif pa.types.is_boolean(t):
        fill = pa.scalar(False)
    elif pa.types.is_decimal(t):
        fill = pa.scalar(0, pa.int64()).cast(t)
    else:
        fill = pa.scalar(0, pa.int64()).cast(t)
    return [arr.is_null(), arr.fill_null(fill)]


def apply_equality_deletes(table: pa.Table, deletes: Sequence[tuple[list[str], pa.Table]]
                           ) -> pa.Table:
    """``table`` without the rows an equality delete matches: each delete is (the columns it
    compares, its rows with those columns)."""
    for names, rows in deletes:
        if not rows.num_rows or not table.num_rows:
            continue
        missing = [n for n in names if n not in table.column_names]
        if missing:
            raise SchemaError(f"equality delete columns {missing} are not in the rows read")
        left, right = {}, {}
        for k, name in enumerate(names):
            lnull, lvalue = _keys(table.column(name))
            rnull, rvalue = _keys(rows.column(name))
            left[f"n{k}"], left[f"v{k}"] = lnull, lvalue
            right[f"n{k}"], right[f"v{k}"] = rnull, rvalue
        row_ids = pa.array(np.arange(table.num_rows, dtype=np.int64))
        probe = pa.table({**left, "__row": row_ids})
        build = pa.table(right).group_by(list(right)).aggregate([])
        kept = probe.join(build, keys=list(right), join_type="left anti")
        keep = np.sort(kept.column("__row").to_numpy())
        if len(keep) != table.num_rows:
            table = table.take(pa.array(keep, pa.int64()))
    return table
