"""Hive transactional (ACID) tables read as one Arrow table: :func:`open_acid_table`,
:func:`read_acid_table` and :class:`AcidTable`.

A read lists the table once (:mod:`aorc.dataset.acid.listing`), keeps the folders Hive's
reader keeps (:mod:`aorc.dataset.acid.layout`), prunes partitions with the filters' terms
on partition columns, loads each partition's delete events, then reads its base, deltas or
original files (at most ``max_open_files`` at a time), pushing the filters' terms on data
columns down into each file (stripes, row groups and bloom filters are skipped as in any
read), dropping deleted and invisible rows (:mod:`aorc.dataset.acid.rows`) and bringing
each file's rows into the table's schema.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
from collections.abc import AsyncGenerator, Mapping, Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from aorc.dataset.acid.drop import dropped, filter_columns
from aorc.dataset.acid.files import open_data_store
from aorc.dataset.acid.layout import AcidFile, WriteIdList, bucket_key
from aorc.dataset.acid.listing import Partition, list_table
from aorc.dataset.acid.rows import (
    ROW_ID,
    ROW_ID_TYPE,
    DeleteSet,
    flatten_events,
    insert_mask,
    is_acid_schema,
    synthetic_row_ids,
)
from aorc.dataset.partitioning import (
    filter_value,
    infer_partition_schema,
    partition_table,
    surviving_rows,
    term_expression,
)
from aorc.dataset.plan import DatasetFilter, dataset_filter
from aorc.errors import SchemaError
from aorc.io import IOStats
from aorc.io.base import gather_or_cancel, map_bounded
from aorc.read.export import BatchStream, blocking_reader, export_stream, home_loop
from aorc.read.reader import OrcReader, open_reader
from aorc.threads import shared_pool

__all__ = ["AcidTable", "open_acid_table", "read_acid_table"]

#: Hive's internal column names, which ORC Java's SchemaEvolution maps by position.
_INTERNAL_NAME = re.compile(r"_col\d+")
#: Rows per batch decoded by :meth:`AcidTable.read` (each file's batches are concatenated).
_READ_BATCH_ROWS = 1 << 20
#: Rows from which a chunk's deletes are applied on the decode pool, off the event loop.
_POOL_ROWS = 1 << 16
_EVENT_COLUMNS = ["operation", "originalTransaction", "bucket", "rowId", "currentTransaction"]


class AcidTable:
    """A Hive transactional table (full ACID or insert-only) read as one table, with
    deletes applied. Create it with :func:`open_acid_table`.

    It has the reading API of :class:`aorc.Dataset`: :attr:`schema`, :meth:`read`
    (:meth:`to_table`), :meth:`iter_batches` (:meth:`to_batches`), :meth:`count_rows` and
    the Arrow stream export (``__arrow_c_stream__``).

    Attributes:
        partitions: the partitions and the files a read takes from each (see
            :class:`aorc.dataset.acid.listing.Partition`).
        partition_schema: the partition columns and their types.
        valid_write_ids: the write-id list the table was opened with, if any.
    """

    def __init__(self, root: str, partitions: list[Partition], data_schema: pa.Schema,
                 partition_schema: pa.Schema, ids: WriteIdList | None, *,
                 row_id: bool, columns: Sequence[str] | None, filters: Any,
                 storage_options: Mapping[str, Any] | None, timestamp_unit: str,
                 max_open_files: int, io: IOStats, bucket_v1: bool = True) -> None:
        self.root = root
        self._bucket_v1 = bucket_v1
        self.partitions = partitions
        self.partition_schema = partition_schema
        self.valid_write_ids = ids
        self._data_schema = data_schema
        self._row_id = row_id
        self._columns = list(columns) if columns is not None else None
        self._filters = filters
        self._storage_options = storage_options
        self._timestamp_unit = timestamp_unit
        self._max_open = max_open_files
        self._io = io
        self._loop = home_loop()
        #: at most ``max_open_files`` files open at once, over every partition
        self._slots = asyncio.Semaphore(max_open_files)
        paths = [p.path for p in partitions]
        self._part_rows = (partition_table([p.values for p in partitions], partition_schema,
                                           paths) if len(partition_schema) else None)

    # ------------------------------------------------------------------ information
    @property
    def schema(self) -> pa.Schema:
        """The table's columns (``ROW__ID`` first when asked for), then the partition
        columns."""
        extra = [pa.field(ROW_ID, ROW_ID_TYPE)] if self._row_id else []
        return pa.schema([*extra, *self._data_schema, *self.partition_schema])

    @property
    def data_schema(self) -> pa.Schema:
        """The table's own columns (no ``ROW__ID``, no partition columns)."""
        return self._data_schema

    @property
    def row_id(self) -> bool:
        """Whether reads add the ``ROW__ID`` column."""
        return self._row_id

    @property
    def bucket_v1(self) -> bool:
        """Whether the table's events carry Hive 3's ``BucketCodec`` V1 bucket properties
        (original files' rows are then given such a property too)."""
        return self._bucket_v1

    def check(self, columns: Sequence[str] | None, filters: Any) -> None:
        """Check columns and filters as a read would, without reading.

        Args:
            columns: as for :meth:`read` (``None``: those given to :func:`open_acid_table`).
            filters: as for :meth:`read` (``None``: those given to :func:`open_acid_table`).

        Raises:
            SchemaError: unknown columns or malformed filters.
        """
        self._plan(columns, filters)

    @property
    def files(self) -> list[str]:
        """The data and delete delta files a read takes, partition by partition."""
        return [f.path for p in self.partitions for f in [*p.data, *p.deletes]]

    @property
    def io_stats(self) -> IOStats:
        """Requests and bytes of the listing and the reads so far."""
        return self._io

    # ------------------------------------------------------------------ reading
    async def read(self, columns: Sequence[str] | None = None, filters: Any = None
                   ) -> pa.Table:
        """Read the matching rows into one table.

        Args:
            columns: top-level column names (table, partition or ``ROW__ID`` columns);
                ``None``: the columns given to :func:`open_acid_table`, else all.
            filters: list-form filters or a :class:`pyarrow.compute.Expression` on table
                and partition columns, as for :meth:`aorc.Dataset.read`; ``None``: those
                given to :func:`open_acid_table`. Partition terms prune partitions, data
                terms are pushed down into every file.

        Returns:
            The visible rows that match (deletes and invalid writes left out), with the
            columns asked for in that order; an empty table of those columns when none
            match.

        Raises:
            SchemaError: unknown columns or malformed filters.
            CorruptFileError: a file is damaged (the message names it).
            UnsupportedFeatureError: update events of a pre-split-update table.
        """
        names, where, out = self._plan(columns, filters)
        parts = self._partitions(where)
        tables = await gather_or_cancel([self._read_partition(p, names, where, out)
                                         for p in parts])
        flat = [t for group in tables for t in group]
        return pa.concat_tables(flat) if flat else out.empty_table()

    async def to_table(self, columns: Sequence[str] | None = None,
                       filter: Any = None) -> pa.Table:  # noqa: A002
        """:meth:`read` by :meth:`pyarrow.dataset.Dataset.to_table`'s name.

        Args:
            columns: as for :meth:`read`.
            filter: the ``filters`` of :meth:`read`.

        Returns:
            The table :meth:`read` returns.

        Raises:
            SchemaError: unknown columns or malformed filters (as :meth:`read`).
            CorruptFileError: a file is damaged (as :meth:`read`).
        """
        return await self.read(columns, filter)

    async def count_rows(self, filters: Any = None) -> int:
        """The number of matching rows (deletes applied).

        Args:
            filters: as for :meth:`read`.

        Returns:
            The number of rows :meth:`read` would return with these filters.

        Raises:
            SchemaError: malformed filters (as :meth:`read`).
            CorruptFileError: a file is damaged (as :meth:`read`).
        """
        return int((await self.read(self.schema.names[:1], filters)).num_rows)

    def iter_batches(self, columns: Sequence[str] | None = None, filters: Any = None,
                     batch_size: int = 65536) -> BatchStream:
        """Stream the matching rows as record batches, partition by partition and file by
        file (each partition's delete events are loaded first).

        Args:
            columns: as for :meth:`read`.
            filters: as for :meth:`read`.
            batch_size: the largest number of rows per batch.

        Returns:
            A :class:`~aorc.read.export.BatchStream` of the matching rows (no empty
            batches): an async iterator that is also an Arrow stream. Nothing is read
            before it is iterated; a damaged file then raises ``CorruptFileError``.

        Raises:
            SchemaError: unknown columns, malformed filters or a bad ``batch_size``.
        """
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise SchemaError(f"batch_size must be a positive integer, got {batch_size!r}")
        names, where, out = self._plan(columns, filters)
        return BatchStream(self._stream(names, where, out, batch_size), out, self._loop,
                           "the ACID table")

    def to_batches(self, columns: Sequence[str] | None = None, filter: Any = None,  # noqa: A002
                   batch_size: int = 65536) -> BatchStream:
        """:meth:`iter_batches` by :meth:`pyarrow.dataset.Dataset.to_batches`'s name.

        Args:
            columns: as for :meth:`read`.
            filter: the ``filters`` of :meth:`read`.
            batch_size: the largest number of rows per batch.

        Returns:
            The stream :meth:`iter_batches` returns.

        Raises:
            SchemaError: unknown columns, malformed filters or a bad ``batch_size``.
        """
        return self.iter_batches(columns, filter, batch_size)

    def __arrow_c_stream__(self, requested_schema: object | None = None) -> object:
        """Every row (the columns and filters given to :func:`open_acid_table`) as an
        Arrow C stream, read when the consumer pulls (see :meth:`aorc.Dataset.__arrow_c_stream__`).
        """
        schema = self._plan(None, None)[2]
        return export_stream(blocking_reader(schema, self.iter_batches, self._loop,
                                             "the ACID table"), requested_schema)

    # ------------------------------------------------------------------ planning
    def _plan(self, columns: Sequence[str] | None, filters: Any
              ) -> tuple[list[str], DatasetFilter, pa.Schema]:
        columns = self._columns if columns is None else columns
        filters = self._filters if filters is None else filters
        schema = self.schema
        if columns is None:
            names = schema.names
        elif isinstance(columns, str):
            raise SchemaError("columns must be a list of names, not a string")
        else:
            names = list(columns)
        for name in names:
            if name not in schema.names:
                raise SchemaError(f"no column {name!r} in the ACID table (columns: "
                                  f"{', '.join(schema.names)})")
        where = dataset_filter(filters)
        for name in where.names:
            if name not in schema.names:
                raise SchemaError(f"filters: no column {name!r} in the ACID table (columns: "
                                  f"{', '.join(schema.names)})")
        return names, where, pa.schema([schema.field(n) for n in names])

    def _partitions(self, where: DatasetFilter) -> list[tuple[int, Partition]]:
        parts = list(enumerate(self.partitions))
        if where.clauses is None or self._part_rows is None:
            return parts
        keys = set(self.partition_schema.names)
        keep: set[int] = set()
        for conj in where.clauses:
            terms = [t for t in conj if t[0] in keys]
            keep |= surviving_rows(self._part_rows, terms) if terms else set(range(len(parts)))
        return [(i, p) for i, p in parts if i in keep]

    def _row_mapping(self, file_names: Sequence[str]) -> dict[str, str]:
        """The table's column names to a file's (or its ``row`` struct's): by name, or by
        position for files of Hive 1 and 2 whose columns are ``_col0, _col1, ...`` (as ORC
        Java's schema evolution maps them)."""
        positional = (bool(file_names)
                      and all(_INTERNAL_NAME.fullmatch(n) for n in file_names)
                      and not set(file_names) & set(self._data_schema.names))
        if positional:
            return dict(zip(self._data_schema.names, file_names, strict=False))
        return {n: n for n in file_names}

    def _pushdown(self, where: DatasetFilter, prefix: str, mapping: Mapping[str, str]) -> Any:
        """The filters' terms on data columns, for a file whose columns sit under
        ``prefix`` and are named by ``mapping`` (``None`` when some conjunction has no
        term on a column of the file)."""
        if where.clauses is None:
            return None
        out = []
        for conj in where.clauses:
            terms = [(prefix + mapping[c], op, v) for c, op, v in conj if c in mapping]
            if not terms:
                return None
            out.append(terms)
        return out

    def _row_filter(self, where: DatasetFilter, schema: pa.Schema) -> pc.Expression | None:
        if where.expression is not None:
            return where.expression
        if where.clauses is None:
            return None
        expr = None
        for conj in where.clauses:
            part = None
            for c, op, v in conj:
                term = term_expression(c, op, filter_value(v, schema.field(c).type))
                part = term if part is None else part & term
            if part is not None:
                expr = part if expr is None else expr | part
        return expr

    # ------------------------------------------------------------------ partitions
    async def _deletes(self, part: Partition) -> DeleteSet:
        async def one(f: AcidFile) -> pa.Array:
            async with self._open(part, f) as reader:
                if reader is None:
                    return pa.array([], pa.binary(24))
                table = await reader.read(_EVENT_COLUMNS)
                return DeleteSet.events(table, self.valid_write_ids, f.path)

        return DeleteSet(await map_bounded(part.deletes, one, self._max_open))

    async def _read_partition(self, indexed: tuple[int, Partition], names: list[str],
                              where: DatasetFilter, out: pa.Schema) -> list[pa.Table]:
        i, part = indexed
        deletes = await self._deletes(part)
        first_rows = await self._original_offsets(part, deletes)
        return await map_bounded(
            part.data, lambda f: self._read_file(i, part, f, names, where, out, deletes,
                                                 first_rows), self._max_open)

    async def _stream(self, names: list[str], where: DatasetFilter, out: pa.Schema,
                      batch_size: int) -> AsyncGenerator[pa.RecordBatch, None]:
        for i, part in self._partitions(where):
            deletes = await self._deletes(part)
            first_rows = await self._original_offsets(part, deletes)
            for f in part.data:
                async for table in self._file_chunks(i, part, f, names, where, deletes,
                                                     first_rows, batch_size):
                    for batch in table.to_batches(max_chunksize=batch_size):
                        if batch.num_rows:
                            yield batch

    async def _original_offsets(self, part: Partition, deletes: DeleteSet) -> dict[str, int]:
        """The first synthetic row id of each original file: the rows of the bucket's
        original files before it, in name order (Hive 3's numbering)."""
        originals = [f for f in part.data if f.folder is None]
        if not originals or (not len(deletes) and not self._row_id):
            return {}

        async def rows(f: AcidFile) -> int:
            async with self._open(part, f) as reader:
                return 0 if reader is None else reader.num_rows

        counts = await map_bounded(originals, rows, self._max_open)
        offsets: dict[str, int] = {}
        seen: dict[int | None, int] = {}
        for f, n in sorted(zip(originals, counts, strict=True), key=lambda x: x[0].path):
            offsets[f.path] = seen.get(f.bucket, 0)
            seen[f.bucket] = offsets[f.path] + n
        return offsets

    # ------------------------------------------------------------------ files
    @contextlib.asynccontextmanager
    async def _open(self, part: Partition, f: AcidFile) -> AsyncGenerator[OrcReader | None]:
        async with self._slots:
            store = await open_data_store(f, part.flush_lengths.get(f.path),
                                          self._storage_options, self._io)
            if store is None:
                yield None
                return
            try:
                async with open_reader(store, timestamp_unit=self._timestamp_unit) as reader:
                    yield reader
            finally:
                self._io.requests += store.stats.requests
                self._io.bytes += store.stats.bytes
                await store.close()

    async def _read_file(self, index: int, part: Partition, f: AcidFile, names: list[str],
                         where: DatasetFilter, out: pa.Schema, deletes: DeleteSet,
                         first_rows: dict[str, int]) -> pa.Table:
        """All the rows a file gives (see :meth:`_file_chunks`)."""
        chunks = [c async for c in self._file_chunks(index, part, f, names, where, deletes,
                                                     first_rows, _READ_BATCH_ROWS)]
        return pa.concat_tables(chunks) if chunks else out.empty_table()

    async def _file_chunks(self, index: int, part: Partition, f: AcidFile, names: list[str],
                           where: DatasetFilter, deletes: DeleteSet,
                           first_rows: dict[str, int], batch_size: int
                           ) -> AsyncGenerator[pa.Table, None]:
        """The rows of one file, batch by batch as its reader decodes them: deleted and
        invisible rows dropped, in the table's schema, filtered exactly."""
        schema = self.schema
        wanted = [n for n in self._data_schema.names if n in names or n in where.names]
        keep = [n for n in schema.names if n in names or n in where.names]
        expr = self._row_filter(where, schema)
        async with self._open(part, f) as reader:
            if reader is None:
                return
            if is_acid_schema(reader.schema):
                chunks = self._event_chunks(reader, f, wanted, where, deletes, names,
                                            batch_size)
            else:
                chunks = self._plain_chunks(reader, f, wanted, where, deletes, names,
                                            first_rows, batch_size)
            async for rows in chunks:
                rows = self._conform(rows, index, keep)
                if expr is not None and rows.num_rows:
                    rows = rows.filter(expr)
                yield rows.select(names)

    async def _event_chunks(self, reader: OrcReader, f: AcidFile, wanted: list[str],
                            where: DatasetFilter, deletes: DeleteSet, names: list[str],
                            batch_size: int) -> AsyncGenerator[pa.Table, None]:
        """The table's rows of a full-ACID file's insert events."""
        mapping = self._row_mapping(reader.schema.field("row").type.names)
        present = [n for n in wanted if n in mapping]
        needed = self._event_columns(reader, deletes, ROW_ID in names)
        if not needed and not present:
            needed = ["operation"]  # a column to count the rows by
        source = self._single_source(reader)
        by_row_id = "rowId" in needed and source is not None and ROW_ID not in names
        if by_row_id:  # every row has the same write id and bucket: only row ids differ
            needed = [c for c in needed if c not in ("originalTransaction", "bucket")]
        row_id = ROW_ID in names
        fields = [mapping[n] for n in present]
        out_names = [*([ROW_ID] if row_id else []), *present]
        ids = self.valid_write_ids

        def rows_of(box: list[pa.Table]) -> pa.Table:
            # the mask on the event columns, then the row struct's fields taken out (no
            # copy) and only they filtered: filtering the struct itself costs several
            # times its decoding. The decoded table is held only through ``box``, so that
            # each column is freed as soon as its filtered copy is made
            table = box.pop()
            if by_row_id:
                assert source is not None
                mask = insert_mask(table, ids, None, f.path)
                gone = deletes.deleted_rows(*source, table.column("rowId"))
                if mask is not None:
                    hidden = dropped(mask)
                    gone = hidden if gone is None else np.union1d(gone, hidden)
            else:
                mask = insert_mask(table, ids, deletes if "rowId" in needed else None,
                                   f.path)
                gone = None if mask is None else dropped(mask)
            flat = flatten_events(table, fields, row_id).rename_columns(out_names)
            del table
            if gone is None or not len(gone):
                return flat
            schema, columns = flat.schema, flat.columns
            del flat
            return filter_columns(columns, schema, gone)

        loop = asyncio.get_running_loop()
        async for table in _chunks(reader, [*needed, *(f"row.{c}" for c in fields)],
                                   batch_size, self._pushdown(where, "row.", mapping),
                                   by_stripe=any(c != "operation" for c in needed)):
            box, big = [table], table.num_rows >= _POOL_ROWS
            del table
            if big:  # off the event loop, beside other decodes
                yield await loop.run_in_executor(shared_pool(), rows_of, box)
            else:
                yield rows_of(box)

    @staticmethod
    def _single_source(reader: OrcReader) -> tuple[int, int] | None:
        """``(write id, bucket key)`` when every row of the file has the same ones (a
        delta's file, by its statistics), else ``None``."""
        stats = reader.statistics
        w, b = stats["originalTransaction"], stats["bucket"]
        lo, hi = getattr(w, "minimum", None), getattr(w, "maximum", None)
        blo, bhi = getattr(b, "minimum", None), getattr(b, "maximum", None)
        if isinstance(lo, int) and lo == hi and isinstance(blo, int) and blo == bhi:
            return lo, bucket_key(blo)
        return None

    def _event_columns(self, reader: OrcReader, deletes: DeleteSet, row_id: bool
                       ) -> list[str]:
        """The event columns a file's read needs, by its statistics: the key only when
        some delete event may name one of its rows, ``operation`` unless the file holds
        only inserts, ``currentTransaction`` for the ROW__ID or a write-id list."""
        stats = reader.statistics

        def bounds(name: str) -> tuple[int, int] | None:
            s = stats[name]
            lo, hi = getattr(s, "minimum", None), getattr(s, "maximum", None)
            return (int(lo), int(hi)) if isinstance(lo, int) and isinstance(hi, int) else None

        needed = []
        if row_id or bounds("operation") != (0, 0):
            needed.append("operation")
        wids, buckets = bounds("originalTransaction"), bounds("bucket")
        if row_id or (len(deletes) and (wids is None or buckets is None or deletes.touches(
                wids, (bucket_key(buckets[0]) if buckets[0] == buckets[1] else 0,
                       bucket_key(buckets[1]) if buckets[0] == buckets[1] else 1 << 62)))):
            needed += ["originalTransaction", "bucket", "rowId"]
        ids, current = self.valid_write_ids, bounds("currentTransaction")
        if row_id or (ids is not None and (
                current is None or current[1] > ids.high_watermark
                or any(current[0] <= i <= current[1] for i in ids.invalid_ids()))):
            needed.append("currentTransaction")  # some rows may be invisible
        return needed

    async def _plain_chunks(self, reader: OrcReader, f: AcidFile, wanted: list[str],
                            where: DatasetFilter, deletes: DeleteSet, names: list[str],
                            first_rows: dict[str, int], batch_size: int
                            ) -> AsyncGenerator[pa.Table, None]:
        """The rows of an original file or of an insert-only table's file (matched to the
        table's columns by name, or by position for Hive 1's ``_col0, _col1, ...``)."""
        file_names = reader.schema.names
        mapping = self._row_mapping(file_names)
        present = [n for n in wanted if n in mapping]
        synthetic = f.folder is None and (len(deletes) > 0 or ROW_ID in names)
        filters = None if synthetic else self._pushdown(where, "", mapping)
        bucket = f.bucket or 0
        first = first_rows.get(f.path, 0)
        columns = [mapping[n] for n in present] or file_names[:1]
        async for chunk in _chunks(reader, columns, batch_size, filters, by_stripe=synthetic):
            n = chunk.num_rows
            table = (chunk.rename_columns(present) if present
                     else pa.table({"__aorc_rows": pa.nulls(n)}))  # counts the rows
            if synthetic:  # write id 0, the file's bucket, numbered rows: by row id
                gone = deletes.deleted_rows(0, bucket * 4096,
                                            pa.array(np.arange(first, first + n,
                                                               dtype=np.int64)))
                if ROW_ID in names:
                    table = table.add_column(0, pa.field(ROW_ID, ROW_ID_TYPE),
                                             synthetic_row_ids(bucket, first, n,
                                                               self._stored_bucket(bucket)))
                if gone is not None:
                    schema, columns = table.schema, table.columns
                    del table, chunk
                    table = filter_columns(columns, schema, gone)
                first += n
            elif ROW_ID in names:
                table = table.add_column(0, pa.field(ROW_ID, ROW_ID_TYPE),
                                         pa.nulls(n, ROW_ID_TYPE))
            yield table

    def _stored_bucket(self, bucket: int) -> int:
        """The bucket property Hive gives an original file's rows: Hive 3's BucketCodec V1
        value (statement 0) when the table's events use it, else the bucket id."""
        return ((1 << 29) | (bucket << 16)) if self._bucket_v1 else bucket

    def _conform(self, rows: pa.Table, index: int, names: list[str]) -> pa.Table:
        """``rows`` with the columns ``names`` of the table's schema: cast, missing data
        columns as nulls, partition columns from the partition's folder values."""
        schema = self.schema
        columns = []
        for name in names:
            field = schema.field(name)
            if name in rows.column_names:
                col = rows.column(name)
                columns.append(col if col.type == field.type else col.cast(field.type))
            elif name in self.partition_schema.names and self._part_rows is not None:
                value = self._part_rows.column(name)[index]
                columns.append(pa.chunked_array([pa.repeat(value, rows.num_rows)],
                                                field.type))
            else:
                columns.append(pa.chunked_array([pa.nulls(rows.num_rows, field.type)]))
        return pa.Table.from_arrays(columns, schema=pa.schema([schema.field(n)
                                                               for n in names]))


async def _chunks(reader: OrcReader, columns: list[str], batch_size: int, filters: Any,
                  by_stripe: bool = False) -> AsyncGenerator[pa.Table, None]:
    """A file's rows as tables of at most ``batch_size`` rows; a whole read (the batch size
    of :meth:`AcidTable.read`) decodes the file's stripes in parallel in one table, or
    ``by_stripe`` one stripe after the other (each stripe's parts in parallel), so that the
    caller drops a stripe's deleted rows before the next one is decoded: the read then holds
    one stripe's decoded columns besides the rows kept, not a whole file's."""
    if batch_size >= _READ_BATCH_ROWS:
        if by_stripe and reader.num_stripes > 1:
            for i in range(reader.num_stripes):
                yield await reader.read(columns, filters=filters, stripes=[i])
            return
        yield await reader.read(columns, filters=filters)
        return
    async for batch in reader.iter_batches(columns, batch_size, filters=filters):
        yield pa.Table.from_batches([batch])


async def _table_schema(partitions: list[Partition], storage_options: Mapping[str, Any] | None,
                        timestamp_unit: str, io: IOStats) -> tuple[pa.Schema, bool]:
    """The table's columns from its newest data file (the last delta of the last partition,
    else a base or original file), and whether its events use Hive 3's bucket codec."""
    for part in reversed(partitions):
        for f in reversed(part.data):
            store = await open_data_store(f, part.flush_lengths.get(f.path), storage_options,
                                          io)
            if store is None:
                continue
            try:
                async with open_reader(store, timestamp_unit=timestamp_unit) as reader:
                    schema = reader.schema
                    if is_acid_schema(schema):
                        row = schema.field("row").type
                        # the bucket property's version: from the column's statistics
                        # (no read), else from the first row
                        lowest = getattr(reader.statistics["bucket"], "minimum", None)
                        if isinstance(lowest, int):
                            v1 = (lowest >> 29) == 1
                        else:
                            first = await reader.read(["bucket"], stripes=[0]) \
                                if reader.num_rows else None
                            v1 = bool(first is None or not first.num_rows or
                                      (first.column(0)[0].as_py() >> 29) == 1)
                        return pa.schema([row.field(i) for i in range(row.num_fields)]), v1
                    return pa.schema(list(schema)), True
            finally:
                await store.close()
    raise SchemaError("the ACID table has no data files to take its columns from; give "
                      "schema=")


def _check(timestamp_unit: str, max_open_files: int) -> None:
    if timestamp_unit not in ("s", "ms", "us", "ns"):
        raise SchemaError(f"timestamp_unit must be 's', 'ms', 'us' or 'ns', got "
                          f"{timestamp_unit!r}")
    if isinstance(max_open_files, bool) or not isinstance(max_open_files, int) \
            or max_open_files < 1:
        raise SchemaError(f"max_open_files must be a positive integer, got {max_open_files!r}")


async def open_acid_table(uri: str | os.PathLike[str], *,
                          valid_write_ids: str | WriteIdList | None = None,
                          columns: Sequence[str] | None = None, filters: Any = None,
                          schema: pa.Schema | None = None, row_id: bool = False,
                          partitioning: pa.Schema | None = None,
                          timestamp_unit: str = "ns",
                          storage_options: Mapping[str, Any] | None = None,
                          max_open_files: int = 16) -> AcidTable:
    """Open a Hive transactional table: its folder (local, ``s3://``, any store).

    The folders a reader sees are chosen as Hive's ``AcidUtils.getAcidState`` chooses them:
    in each partition the newest valid ``base_N``, the ``delta_*`` and ``delete_delta_*``
    folders above it (compacted deltas before those they cover; every statement of a
    transaction), and the original files when there is no base. Full-ACID tables' rows
    come out of the ``row`` struct of their events with deletes applied; insert-only tables'
    files are read as they are.

    Args:
        uri: the table's (or one partition's) folder.
        valid_write_ids: Hive's valid write-id list for the table, in Hive's string form
            (``"db.table:HWM:MINOPEN:OPEN:ABORTED"``; Hive 2's ``"HWM:MINOPEN:OPEN:ABORTED"``
            transaction list too), or a :class:`~aorc.dataset.acid.layout.WriteIdList`:
            folders and rows of open or aborted writes are left out. ``None`` takes every
            folder as committed: a write still running or aborted (and not yet cleaned)
            is then read too.
        columns: the default columns of reads (``None``: all).
        filters: the default filters of reads.
        schema: the table's columns (``None``: those of the newest data file).
        row_id: add the ``ROW__ID`` column (``struct<writeid, bucketid, rowid,
            currentwriteid>``, Hive's virtual column plus the event's write id).
        partitioning: the partition columns' types (``None``: inferred as Spark does).
        timestamp_unit: ``"s"``, ``"ms"``, ``"us"`` or ``"ns"``.
        storage_options: store settings (see :func:`aorc.open_store`).
        max_open_files: files read at once.

    Returns:
        The :class:`AcidTable`, listed and with its schema known; no rows are read yet.

    Raises:
        ObjectNotFoundError: nothing exists at ``uri``.
        SchemaError: a bad option or write-id list; a partition whose bases are all newer
            than the write-id list allows; unknown ``columns`` or malformed ``filters``;
            no ``schema`` given for a table with no data files.
    """
    _check(timestamp_unit, max_open_files)
    ids = (WriteIdList.parse(valid_write_ids) if isinstance(valid_write_ids, str)
           else valid_write_ids)
    if ids is not None and not isinstance(ids, WriteIdList):
        raise SchemaError(f"valid_write_ids must be Hive's string form, got {ids!r}")
    io = IOStats()
    root = os.fspath(uri)
    partitions = await list_table(root, ids, storage_options, io)
    part_schema = infer_partition_schema([p.values for p in partitions],
                                         [p.path for p in partitions], partitioning)
    v1 = True
    if schema is None:
        schema, v1 = await _table_schema(partitions, storage_options, timestamp_unit, io)
    data_schema = pa.schema([f for f in schema if f.name not in part_schema.names])
    table = AcidTable(root, partitions, data_schema, part_schema, ids, row_id=row_id,
                      columns=columns, filters=filters, storage_options=storage_options,
                      timestamp_unit=timestamp_unit, max_open_files=max_open_files, io=io,
                      bucket_v1=v1)
    if columns is not None or filters is not None:
        table._plan(columns, filters)  # check them now
    return table


async def read_acid_table(uri: str | os.PathLike[str], *,
                          valid_write_ids: str | WriteIdList | None = None,
                          columns: Sequence[str] | None = None, filters: Any = None,
                          schema: pa.Schema | None = None, row_id: bool = False,
                          partitioning: pa.Schema | None = None,
                          timestamp_unit: str = "ns",
                          storage_options: Mapping[str, Any] | None = None,
                          max_open_files: int = 16) -> pa.Table:
    """Read a Hive transactional table into one table, deletes applied; the arguments are
    those of :func:`open_acid_table`.

    Args:
        uri: as for :func:`open_acid_table`.
        valid_write_ids: as for :func:`open_acid_table`.
        columns: the columns to read (``None``: all).
        filters: the filters of the read (see :meth:`AcidTable.read`).
        schema: as for :func:`open_acid_table`.
        row_id: as for :func:`open_acid_table`.
        partitioning: as for :func:`open_acid_table`.
        timestamp_unit: as for :func:`open_acid_table`.
        storage_options: as for :func:`open_acid_table`.
        max_open_files: as for :func:`open_acid_table`.

    Returns:
        The table's visible rows that match (see :meth:`AcidTable.read`).

    Raises:
        ObjectNotFoundError: nothing exists at ``uri``.
        SchemaError: as :func:`open_acid_table`.
        CorruptFileError: a file is damaged (the message names it).
        UnsupportedFeatureError: update events of a pre-split-update table.
    """
    table = await open_acid_table(uri, valid_write_ids=valid_write_ids, columns=columns,
                                  filters=filters, schema=schema, row_id=row_id,
                                  partitioning=partitioning, timestamp_unit=timestamp_unit,
                                  storage_options=storage_options,
                                  max_open_files=max_open_files)
    return await table.read()

