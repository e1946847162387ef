"""What every Polars IO source of aorc shares: the Polars schema of an Arrow schema, the
columns to read, the filters to push down, and the frames of a stream of record batches
(driven on :mod:`aorc.sync`'s event loop, closed when Polars stops early)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import polars as pl
import pyarrow as pa

from aorc.errors import UnsupportedFeatureError
from aorc.polars.predicate import Clauses
from aorc.sync import run

__all__ = ["combine_filters", "frames", "polars_schema", "read_columns"]


def combine_filters(own: Any, implied: Clauses | None) -> Any:
    """Filters given by the caller (list form or a pyarrow expression) and those implied by
    a Polars predicate, together (an expression prunes alone: Polars filters the rest)."""
    if implied is None:
        return own
    if own is None:
        return implied
    if isinstance(own, list):
        return _and(_as_clauses(own), implied)
    return own


def read_columns(with_columns: list[str] | None, predicate: pl.Expr | None) -> list[str] | None:
    """The columns to read: those Polars projects, and those its predicate uses."""
    if with_columns is None:
        return None
    read = list(with_columns)
    if predicate is not None:
        read += [c for c in dict.fromkeys(predicate.meta.root_names()) if c not in read]
    return read


def frames(source: AsyncIterator[pa.RecordBatch], columns: list[str] | None,
           predicate: pl.Expr | None, n_rows: int | None) -> Iterator[pl.DataFrame]:
    """Polars frames of ``source``'s batches (run on :mod:`aorc.sync`'s loop), filtered by
    ``predicate``, projected to ``columns`` and cut at ``n_rows``; ``source`` is closed
    when the frames end or their consumer stops early."""
    left = n_rows
    try:
        while left is None or left > 0:
            try:
                batch = run(_next(source))
            except StopAsyncIteration:
                return
            frame = _frame(batch)
            if predicate is not None:
                frame = frame.filter(predicate)
            if columns is not None and frame.columns != columns:
                frame = frame.select(columns)
            if left is not None:
                frame = frame.head(left)
                left -= frame.height
            yield frame
    finally:
        close = getattr(source, "aclose", None)
        if close is not None:
            run(close())


async def _next(source: AsyncIterator[pa.RecordBatch]) -> pa.RecordBatch:
    return await anext(source)


def _frame(batch: pa.RecordBatch) -> pl.DataFrame:
    frame = pl.from_arrow(batch)
    assert isinstance(frame, pl.DataFrame)
    return frame


def _as_clauses(filters: list[Any]) -> Clauses:
    if filters and isinstance(filters[0], tuple):
        return [list(filters)]
    return [list(clause) for clause in filters]


def _and(a: Clauses, b: Clauses) -> Clauses:
    return [x + y for x in a for y in b]


def polars_schema(schema: pa.Schema) -> pl.Schema:
    """The Polars schema of data read with Arrow ``schema``.

    Raises:
        UnsupportedFeatureError: a column of a type Polars has no equivalent of (a union).
    """
    columns: dict[str, Any] = {}
    for field in schema:
        try:
            frame = pl.from_arrow(pa.schema([field]).empty_table())
        except Exception as exc:
            raise UnsupportedFeatureError(
                f"column {field.name!r}: Polars has no type for Arrow {field.type} "
                f"(select the other columns with aorc.read_table)") from exc
        assert isinstance(frame, pl.DataFrame)
        columns.update(frame.schema)
    return pl.Schema(columns)
