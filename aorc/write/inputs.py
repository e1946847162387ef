"""What the writers take: every kind of Arrow data, normalised to a stream of record batches.

Every writer -- :func:`aorc.write_table`, :meth:`aorc.OrcWriter.write`,
:func:`aorc.write_dataset`, :meth:`aorc.sink.RollingSink.write`, :func:`aorc.iceberg.append`
and their :mod:`aorc.sync` twins -- reads its data through :class:`RecordInput`, which takes:

- a pyarrow ``Table`` or ``RecordBatch``, or a pandas ``DataFrame`` (its index left out;
  converted with the writer's ``schema=`` when one is given, as
  ``pyarrow.Table.from_pandas(df, schema=...)`` does: a column pyarrow cannot infer, such as
  dicts with varying keys, needs it);
- a ``pyarrow.RecordBatchReader``, or any object exporting the Arrow PyCapsule stream
  interface, ``__arrow_c_stream__`` (Polars DataFrames, DuckDB relations, nanoarrow
  streams, aorc's own readers): read as a stream, batch by batch;
- any object exporting ``__arrow_c_array__`` (a struct array: one record batch);
- an iterable or an async iterable of record batches or tables (or of any of the objects
  above): read item by item.

In-memory data (the first kind, and lists or tuples) is converted at once
(:attr:`RecordInput.batches`); streams are read batch by batch as the writer asks for them,
so a stream never needs to fit in memory. Synchronous streams (readers, capsule streams,
generators) are pulled in worker threads, so that a slow producer (a DuckDB query, a
generator reading a socket, :mod:`aorc.sync`'s own readers) never blocks the event loop.

Anything else raises :class:`~aorc.errors.InputTypeError` (a ``TypeError``) naming what is
accepted; data of the wrong schema raises :class:`~aorc.errors.SchemaError` at the writer.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Iterable, Iterator, Mapping
from types import TracebackType
from typing import Any

import pyarrow as pa

from aorc.errors import InputTypeError, SchemaError

__all__ = [
    "ACCEPTED",
    "RecordInput",
    "collect_batches",
    "from_pandas",
    "item_batches",
    "iter_record_batches",
    "record_input",
]

#: What a writer accepts, as the errors say it.
ACCEPTED = ("a pyarrow Table, RecordBatch or RecordBatchReader, a pandas DataFrame, an object "
            "exporting the Arrow PyCapsule interface (__arrow_c_stream__ or "
            "__arrow_c_array__: Polars DataFrames, DuckDB relations, nanoarrow, ...), or an "
            "iterable or async iterable of record batches or tables")

_END = object()


def _is_pandas_frame(data: object) -> bool:
    kind = type(data)
    return kind.__module__.startswith("pandas") and kind.__name__ == "DataFrame"


def _type_name(data: object) -> str:
    kind = type(data)
    module = kind.__module__.split(".")[0]
    return kind.__qualname__ if module == "builtins" else f"{module}.{kind.__qualname__}"


def _refused(data: object, where: str = "") -> InputTypeError:
    return InputTypeError(f"cannot write {where}a value of type {_type_name(data)}: a writer "
                          f"takes {ACCEPTED}")


def _from_c_array(data: Any) -> pa.RecordBatch:
    try:
        return pa.record_batch(data)
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError) as exc:
        raise InputTypeError(f"cannot write a {type(data).__qualname__}: its Arrow array "
                             f"(__arrow_c_array__) is not a struct array of columns ({exc})"
                             ) from exc


def _open_stream(data: Any) -> pa.RecordBatchReader:
    if isinstance(data, pa.RecordBatchReader):
        return data
    try:
        return pa.RecordBatchReader.from_stream(data)
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError) as exc:
        raise InputTypeError(f"cannot write a {type(data).__qualname__}: its Arrow stream "
                             f"(__arrow_c_stream__) is not a stream of record batches ({exc})"
                             ) from exc


def _table_batches(table: pa.Table) -> list[pa.RecordBatch]:
    """A table's batches (one empty batch for an empty table: it keeps the schema)."""
    return list(table.to_batches()) or [pa.RecordBatch.from_pylist([], schema=table.schema)]


_FAILED_COLUMN = re.compile(r"Conversion failed for column (.+?) with type (\S+)")


def from_pandas(frame: Any, schema: pa.Schema | None = None) -> pa.Table:
    """A pandas DataFrame as a table (its index left out), with ``schema``'s types when given.

    Raises:
        SchemaError: a column pyarrow cannot convert (the message names it and the fix).
    """
    try:
        return pa.Table.from_pandas(frame, schema=schema, preserve_index=False)
    except KeyError as exc:  # a column of the schema the frame does not have
        raise SchemaError(f"cannot write the pandas DataFrame: it has no column {exc} of the "
                          f"schema (its columns: {', '.join(map(str, frame.columns))})"
                          ) from exc
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError) as exc:
        raise SchemaError(_pandas_message(exc, schema)) from exc


def _pandas_message(exc: pa.ArrowException, schema: pa.Schema | None) -> str:
    args = [str(a) for a in exc.args] if isinstance(exc.args[0], str) else [str(exc)]
    found = next((m for a in args if (m := _FAILED_COLUMN.search(a))), None)
    reason = next((a for a in args if not _FAILED_COLUMN.search(a)), args[0]).strip("(),' ")
    where = (f"the pandas column {found.group(1)!r} (dtype {found.group(2)})" if found
             else "a pandas column")
    if schema is not None and found is not None and found.group(1) in schema.names:
        fix = (f"its values do not fit the type schema= gives it, "
               f"{schema.field(found.group(1)).type}")
    else:
        fix = ("pass schema= (a pyarrow.Schema) to the writer to give its Arrow type, e.g. "
               "pa.map_(pa.string(), pa.int64()) for a map column (lists of (key, value) "
               "pairs, or dicts) or pa.list_(...) for lists, or convert the column first")
    return f"cannot convert {where} to Arrow: {reason}; {fix}"


def _memory_batches(data: object, schema: pa.Schema | None = None
                    ) -> list[pa.RecordBatch] | None:
    """The batches of an in-memory object, or None for other kinds (a pandas DataFrame
    converted with ``schema``'s types when given)."""
    if isinstance(data, pa.RecordBatch):
        return [data]
    if isinstance(data, pa.Table):
        return _table_batches(data)
    if _is_pandas_frame(data):
        return _table_batches(from_pandas(data, schema))
    if not hasattr(data, "__arrow_c_stream__") and hasattr(data, "__arrow_c_array__"):
        return [_from_c_array(data)]
    return None


def item_batches(item: object, where: str = "", schema: pa.Schema | None = None
                 ) -> list[pa.RecordBatch]:
    """The batches of one item of an iterable: a batch, a table, a pandas DataFrame (with
    ``schema``'s types when given) or an object exporting the Arrow PyCapsule interface (a
    stream is read whole).

    Raises:
        InputTypeError: any other object.
        SchemaError: a pandas column pyarrow cannot convert.
    """
    batches = _memory_batches(item, schema)
    if batches is not None:
        return batches
    if hasattr(item, "__arrow_c_stream__"):
        return list(_open_stream(item))
    raise _refused(item, where)


def _schema_of(batches: list[pa.RecordBatch], data: object) -> pa.Schema | None:
    if isinstance(data, pa.Table):
        return data.schema
    return batches[0].schema if batches else None


class RecordInput:
    """A writer's data, classified (see the module docstring); get one from
    :func:`record_input`.

    In-memory data has :attr:`batches` at once. A stream is read with ``async with input:
    async for batch in input: ...``: entering opens it (the capsule stream is imported, the
    first item of an iterable read) so that :attr:`schema` is known, leaving it closes the
    readers this object opened (not the caller's own iterators).

    Args:
        data: the data.
        schema: the writer's schema: pandas DataFrames are converted with its types.

    Attributes:
        batches: every batch, for in-memory data; None for a stream.
        schema: the rows' schema, when known (for a stream, once entered; None for an empty
            iterable, which has none).
    """

    def __init__(self, data: Any, schema: pa.Schema | None = None) -> None:
        self._data = data
        self._given = schema
        self._opened: pa.RecordBatchReader | None = None
        self._sync: Iterator[Any] | None = None
        self._async: AsyncIterator[Any] | None = None
        self._pending: list[pa.RecordBatch] = []
        self._items = 0
        self.batches = self._classify(data)
        self.schema: pa.Schema | None = (_schema_of(self.batches, data)
                                         if self.batches is not None else None)
        if isinstance(data, pa.RecordBatchReader):
            self.schema = data.schema

    def _classify(self, data: Any) -> list[pa.RecordBatch] | None:
        batches = _memory_batches(data, self._given)
        if batches is not None or isinstance(data, pa.RecordBatchReader):
            return batches
        if isinstance(data, (str, bytes, bytearray, memoryview, Mapping)):
            raise _refused(data)
        if hasattr(data, "__aiter__"):
            return None
        if hasattr(data, "__arrow_c_stream__"):
            return None
        if isinstance(data, (list, tuple)):
            return [b for i, item in enumerate(data)
                    for b in item_batches(item, f"item {i} of the {type(data).__name__}: ",
                                          self._given)]
        if isinstance(data, Iterable):
            return None
        raise _refused(data)

    @property
    def is_stream(self) -> bool:
        """Whether the data is read batch by batch (not in memory)."""
        return self.batches is None

    async def __aenter__(self) -> RecordInput:
        if self.batches is not None or self._sync is not None or self._async is not None:
            return self
        data = self._data
        if hasattr(data, "__aiter__"):
            self._async = aiter(data)
        elif hasattr(data, "__arrow_c_stream__"):
            reader = await asyncio.to_thread(_open_stream, data)
            if reader is not data:
                self._opened = reader
            self.schema = reader.schema
            self._sync = iter(reader)
            return self
        else:
            self._sync = iter(data)
        first = await self._next_item()
        while first is not None and not first:  # items holding no batch (empty streams)
            first = await self._next_item()
        if first is not None:
            self._pending = first
            self.schema = first[0].schema
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc: BaseException | None, tb: TracebackType | None) -> None:
        opened, self._opened = self._opened, None
        if opened is not None:
            await asyncio.to_thread(opened.close)

    async def _next_item(self) -> list[pa.RecordBatch] | None:
        """The batches of the next item (pulled in a worker thread for a synchronous
        stream), or None at the end."""
        where = f"item {self._items} of the {type(self._data).__name__}: "
        self._items += 1
        if self._async is not None:
            try:
                item = await anext(self._async)
            except StopAsyncIteration:
                return None
            if isinstance(item, pa.RecordBatch):
                return [item]
            return await asyncio.to_thread(item_batches, item, where, self._given)
        assert self._sync is not None
        return await asyncio.to_thread(self._pull, self._sync, where, self._given)

    @staticmethod
    def _pull(source: Iterator[Any], where: str, schema: pa.Schema | None
              ) -> list[pa.RecordBatch] | None:
        item = next(source, _END)
        if item is _END:
            return None
        if isinstance(item, pa.RecordBatch):
            return [item]
        return item_batches(item, where, schema)

    async def __aiter__(self) -> AsyncIterator[pa.RecordBatch]:
        """The batches, one at a time (a stream must be entered first)."""
        if self.batches is not None:
            for batch in self.batches:
                yield batch
            return
        if self._sync is None and self._async is None:
            raise RuntimeError("enter the RecordInput (async with) before iterating a stream")
        pending, self._pending = self._pending, []
        for batch in pending:
            yield batch
        while (item := await self._next_item()) is not None:
            for batch in item:
                yield batch


def record_input(data: Any, schema: pa.Schema | None = None) -> RecordInput:
    """``data`` classified as what a writer takes (see the module docstring); pandas
    DataFrames are converted with ``schema``'s types when given.

    Raises:
        InputTypeError: ``data`` is of no accepted kind (str, dict, int, ...), or an item of
            a list of it is not.
        SchemaError: a pandas column pyarrow cannot convert (named, with the fix).
    """
    return data if isinstance(data, RecordInput) else RecordInput(data, schema)


async def collect_batches(data: Any) -> tuple[pa.Schema | None, list[pa.RecordBatch]]:
    """Every batch of ``data`` in memory, and their schema (None for an empty iterable): for
    the writers that need all rows at once (a sink's offsets, an Iceberg append's
    partitions).

    Raises:
        InputTypeError: as :func:`record_input`, or for an item of a stream.
    """
    rows = record_input(data)
    if rows.batches is not None:
        return rows.schema, rows.batches
    async with rows:
        batches = [batch async for batch in rows]
    return rows.schema, batches


def iter_record_batches(data: Any) -> Iterator[pa.RecordBatch]:
    """The batches of ``data``, read synchronously in this thread (for code running in a
    worker thread): anything :class:`RecordInput` takes but async iterables.

    Raises:
        InputTypeError: as :func:`record_input`; an async iterable.
    """
    rows = record_input(data)
    if rows.batches is not None:
        yield from rows.batches
        return
    if hasattr(data, "__aiter__"):
        raise InputTypeError(f"cannot read an async iterable ({type(data).__qualname__}) "
                             "here: pass it to an async writer")
    if hasattr(data, "__arrow_c_stream__"):
        reader = _open_stream(data)
        try:
            yield from reader
        finally:
            if reader is not data:
                reader.close()
        return
    for i, item in enumerate(data):
        yield from item_batches(item, f"item {i} of the {type(data).__name__}: ")
