"""The rows a dataset writer is given, as one async stream of record batches and a schema.

:func:`batch_stream` takes anything a writer takes (:mod:`aorc.write.inputs`: pyarrow
Tables, RecordBatches and readers, pandas, objects exporting the Arrow PyCapsule interface,
iterables and async iterables of batches) and returns a :class:`BatchStream`: the schema
(of the first batch for iterables), the row count when it is known, and an async iterator
that pulls the input one batch at a time (a generator is advanced only when the writer wants
its next batch; synchronous streams are read in a worker thread). Nothing is materialised: a
dataset larger than memory streams through.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from aorc.write.inputs import RecordInput, record_input

__all__ = ["BatchStream", "batch_stream"]


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
    _input: RecordInput | None = None

    async def aclose(self) -> None:
        """Close the input (a generator's ``finally`` runs) when the writer stops early."""
        for target in (self.batches, self._source):
            closer = getattr(target, "aclose", None)
            if closer is not None:
                await closer()
            elif hasattr(target, "close") and inspect.isgenerator(target):
                target.close()
        if self._input is not None:
            await self._input.__aexit__(None, None, None)


async def _from_list(batches: list[pa.RecordBatch]) -> AsyncIterator[pa.RecordBatch]:
    for batch in batches:
        yield batch


async def _from_input(rows: RecordInput) -> AsyncIterator[pa.RecordBatch]:
    async for batch in rows:
        yield batch


async def batch_stream(data: Any, schema: pa.Schema | None = None) -> BatchStream:
    """``data`` as a :class:`BatchStream` (see the module docstring).

    An iterable's first item is pulled at once (it gives the schema); the rest when the
    consumer asks for them.

    Args:
        data: the rows.
        schema: the writer's schema: pandas DataFrames are converted with its types.

    Raises:
        InputTypeError: ``data`` is none of the accepted kinds, or an iterable yields
            something else.
        SchemaError: a pandas column pyarrow cannot convert.
    """
    rows = record_input(data, schema)
    if rows.batches is not None:
        batches = [b for b in rows.batches if b.num_rows]
        schema = rows.schema if rows.schema is not None else pa.schema([])
        return BatchStream(schema, _from_list(batches), sum(b.num_rows for b in batches))
    await rows.__aenter__()
    schema = rows.schema if rows.schema is not None else pa.schema([])
    source = data if inspect.isgenerator(data) or hasattr(data, "aclose") else None
    return BatchStream(schema, _from_input(rows), None, source, rows)
