"""The rows a dataset writer is given, as one async stream of record batches and a schema.

:func:`batch_stream` takes a pyarrow Table or RecordBatch, a pandas DataFrame, a
``pyarrow.RecordBatchReader``, or an iterable or async iterable of RecordBatches and Tables,
and returns a :class:`BatchStream`: the schema (of the first batch for iterables), the row
count when it is known, and an async iterator that pulls the input one batch at a time (a
generator is advanced only when the writer wants its next batch; a reader's batches are read
in a worker thread, since a reader may do I/O). Nothing is materialised: a dataset larger
than memory streams through.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from aorc.errors import SchemaError
from aorc.format.arrow import as_table

__all__ = ["BatchStream", "batch_stream"]

_KINDS = ("a pyarrow Table, RecordBatch or RecordBatchReader, a pandas DataFrame, or an "
          "iterable or async iterable of RecordBatches or Tables")


@dataclass
class BatchStream:
    """An input as a stream of record batches.

    Attributes:
        schema: the rows' schema (an empty schema for an empty iterable).
        batches: the batches, pulled one at a time.
        num_rows: the row count, when known before streaming (Tables, RecordBatches).
    """

    schema: pa.Schema
    batches: AsyncIterator[pa.RecordBatch]
    num_rows: int | None = None
    _source: Any = None

    async def aclose(self) -> None:
        """Close the input (a generator's ``finally`` runs) when the writer stops early."""
        for target in (self.batches, self._source):
            closer = getattr(target, "aclose", None)
            if closer is not None:
                await closer()
            elif hasattr(target, "close") and inspect.isgenerator(target):
                target.close()


def _pieces(item: Any) -> list[pa.RecordBatch]:
    if isinstance(item, pa.RecordBatch):
        return [item]
    if isinstance(item, pa.Table):
        return list(item.to_batches())
    raise SchemaError(f"an input stream must yield pyarrow RecordBatches or Tables, got "
                      f"{type(item).__name__}")


async def _from_iterator(first: list[pa.RecordBatch], rest: Iterator[Any]
                         ) -> AsyncIterator[pa.RecordBatch]:
    for batch in first:
        yield batch
    for item in rest:
        for batch in _pieces(item):
            yield batch


async def _from_async(first: list[pa.RecordBatch], rest: AsyncIterator[Any]
                      ) -> AsyncIterator[pa.RecordBatch]:
    for batch in first:
        yield batch
    async for item in rest:
        for batch in _pieces(item):
            yield batch


async def _from_reader(reader: pa.RecordBatchReader) -> AsyncIterator[pa.RecordBatch]:
    def pull() -> pa.RecordBatch | None:
        try:
            batch: pa.RecordBatch = reader.read_next_batch()
        except StopIteration:
            return None
        return batch

    while (batch := await asyncio.to_thread(pull)) is not None:
        yield batch


async def _from_list(batches: list[pa.RecordBatch]) -> AsyncIterator[pa.RecordBatch]:
    for batch in batches:
        yield batch


def _first_of(items: Iterator[Any]) -> tuple[pa.Schema, list[pa.RecordBatch]]:
    for item in items:
        pieces = _pieces(item)
        schema = item.schema
        return schema, pieces
    return pa.schema([]), []


async def batch_stream(data: Any) -> BatchStream:
    """``data`` as a :class:`BatchStream` (see the module docstring).

    An iterable's first item is pulled at once (it gives the schema); the rest when the
    consumer asks for them.

    Raises:
        SchemaError: ``data`` is none of the accepted kinds, or an iterable yields
            something other than RecordBatches and Tables.
    """
    if isinstance(data, (pa.Table, pa.RecordBatch)):
        return BatchStream(data.schema, _from_list(_pieces(data)), data.num_rows)
    if isinstance(data, pa.RecordBatchReader):
        return BatchStream(data.schema, _from_reader(data), None, data)
    if type(data).__module__.startswith("pandas") and type(data).__name__ == "DataFrame":
        table = as_table(data)
        return BatchStream(table.schema, _from_list(_pieces(table)), table.num_rows)
    if isinstance(data, AsyncIterable):
        items = aiter(data)
        try:
            item = await anext(items)
        except StopAsyncIteration:
            return BatchStream(pa.schema([]), _from_list([]), 0, items)
        return BatchStream(item.schema if hasattr(item, "schema") else pa.schema([]),
                           _from_async(_pieces(item), items), None, items)
    if isinstance(data, Iterable) and not isinstance(data, (str, bytes, dict)):
        it = iter(data)
        schema, first = _first_of(it)
        return BatchStream(schema, _from_iterator(first, it), None, it)
    raise SchemaError(f"cannot write {type(data).__name__}: expected {_KINDS}")
