"""Polars scans of Iceberg tables whose data files are ORC: pyiceberg plans, aorc.iceberg reads.

Needs the ``iceberg`` extra besides Polars. :func:`aorc.polars.scan_orc` hands a pyiceberg
``Table`` here. Polars' predicate is translated as for files (:mod:`aorc.polars.predicate`)
and given to :func:`aorc.iceberg.iter_batches` as list-form filters, which prune manifests,
data files and, inside each file, stripes and row groups; terms Iceberg's expressions cannot
hold exactly as Polars means them (timestamps at nanoseconds, ``not in``, a set holding null)
are left out. Polars then filters every batch with the whole predicate.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np
import polars as pl
from polars.io.plugins import register_io_source

from aorc.iceberg import iter_batches
from aorc.iceberg.schema import output_schema
from aorc.polars.predicate import Clauses, to_filters
from aorc.polars.stream import combine_filters, frames, polars_schema, read_columns

__all__ = ["is_iceberg_table", "scan_iceberg"]


def is_iceberg_table(source: object) -> bool:
    """Whether ``source`` is a pyiceberg table (without importing pyiceberg)."""
    kind = type(source)
    return kind.__module__.startswith("pyiceberg.") and kind.__name__ == "Table"


def for_iceberg(clauses: Clauses | None) -> Clauses | None:
    """``clauses`` without the terms an Iceberg expression cannot hold as Polars means them
    (dropping a term of an AND keeps a superset of the rows; an emptied AND is "true")."""
    if clauses is None:
        return None
    kept: Clauses = []
    for clause in clauses:
        terms = [t for t in clause if _iceberg_term(t)]
        if not terms:
            return None
        kept.append(terms)
    return kept


def _iceberg_term(term: tuple[Any, ...]) -> bool:
    op = term[1]
    if op == "not in":
        return False
    if op == "in":
        return all(v is not None and not isinstance(v, np.datetime64) for v in term[2])
    return len(term) < 3 or not isinstance(term[2], np.datetime64)


def scan_iceberg(table: Any, *, filters: Any = None, snapshot_id: int | None = None,
                 storage_options: Mapping[str, Any] | None = None) -> pl.LazyFrame:
    """A LazyFrame reading an Iceberg table with ORC data files.

    Args:
        table: a pyiceberg ``Table``.
        filters: rows to keep besides the query's predicate: a pyiceberg expression, its
            string form or aorc's list form (see :func:`aorc.iceberg.read_table`).
        snapshot_id: read this snapshot instead of the current one.
        storage_options: settings of the table's store (default: from its FileIO).

    Raises:
        UnsupportedFeatureError: a column of a type Polars lacks.
    """
    schema = polars_schema(output_schema(table.schema()))

    def source(with_columns: list[str] | None, predicate: pl.Expr | None,
               n_rows: int | None, batch_size: int | None) -> Iterator[pl.DataFrame]:
        if n_rows is not None and n_rows <= 0:
            return
        implied = to_filters(predicate, schema) if predicate is not None else None
        batches = iter_batches(table, columns=read_columns(with_columns, predicate),
                               filters=combine_filters(filters, for_iceberg(implied)),
                               snapshot_id=snapshot_id, storage_options=storage_options)
        yield from frames(batches, with_columns, predicate, n_rows)

    return register_io_source(source, schema=schema)
