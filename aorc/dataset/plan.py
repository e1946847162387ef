"""Planning a dataset read: which files, which columns, and what is left of the filter for
each file (no I/O).

A dataset's ``filters=`` are list-form filters or a :class:`pyarrow.compute.Expression`, on
data and partition columns alike. :func:`dataset_filter` turns either into a
:class:`DatasetFilter`: list-form clauses (exact for list filters; for an expression, the
clauses it implies, see :mod:`aorc.filters.expression`) that prune files by their partition
values and push down into each file, and for an expression the expression itself, evaluated
on the rows once they are in the dataset's schema (so it may mix partition and data
columns and use any function). :func:`prune` keeps the files whose partition values leave
some conjunction possible.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from aorc.dataset.discovery import DatasetFile
from aorc.dataset.partitioning import Clauses, normalize_filters, surviving_rows
from aorc.errors import SchemaError

__all__ = [
    "DatasetFilter",
    "FilePlan",
    "ReadPlan",
    "concat_files",
    "dataset_filter",
    "finish_runs",
    "has_path",
    "plan_columns",
    "prune",
]

#: A file to read and the filter left for its data columns (``None``: all its rows).
FilePlan = tuple[DatasetFile, Clauses | None]


@dataclass(frozen=True)
class DatasetFilter:
    """A dataset read's filter.

    Attributes:
        clauses: list-form filters (OR of ANDs) that every matching row satisfies: the
            filters themselves, or the ones an expression implies (``None``: nothing to
            prune or push down with).
        expression: an expression filter, evaluated on the rows in the dataset's schema
            (``None`` for list filters, which ``clauses`` apply exactly).
        names: the top-level columns the filter reads.
    """

    clauses: Clauses | None
    expression: pc.Expression | None
    names: tuple[str, ...]


def dataset_filter(filters: object) -> DatasetFilter:
    """The :class:`DatasetFilter` of ``filters=`` (list form, an expression or ``None``).

    Raises:
        SchemaError: malformed filters.
    """
    if isinstance(filters, pc.Expression):
        # imported here: it loads pyarrow.dataset (about 50 MB), which only expressions need
        from aorc.filters.expression import split_expression

        parts = split_expression(filters)
        clauses = normalize_filters(parts.implied) if parts.implied else None
        tops = dict.fromkeys(n.split(".")[0] for n in parts.names)
        return DatasetFilter(clauses, filters, tuple(tops))
    clauses = normalize_filters(filters)
    tops = dict.fromkeys(name.split(".")[0] for conj in clauses or [] for name, _, _ in conj)
    return DatasetFilter(clauses, None, tuple(tops))


@dataclass
class ReadPlan:
    """A read's files, each with the filter left for its data columns.

    Attributes:
        files: the files to read.
        data_schema: the data columns each file gives (those asked for and those an
            expression filter reads), in the dataset's types.
        row_schema: the rows built from a file before the expression filter applies: the
            columns asked for, then the other columns the expression reads.
        out_schema: the rows returned.
        expression: the expression filter, if any.
    """

    files: list[FilePlan]
    data_schema: pa.Schema
    row_schema: pa.Schema
    out_schema: pa.Schema
    expression: pc.Expression | None = None

    def finish(self, rows: pa.Table) -> pa.Table:
        """``rows`` (in :attr:`row_schema`) filtered by the expression, in
        :attr:`out_schema`."""
        if self.expression is not None and rows.num_rows:
            from aorc.filters.expression import expression_mask

            batches = [b.filter(expression_mask(self.expression, b))
                       for b in rows.to_batches()]
            rows = pa.Table.from_batches(batches, schema=rows.schema)
        elif self.expression is not None:
            rows = self.row_schema.empty_table()
        if rows.schema.names != self.out_schema.names:
            rows = rows.select(self.out_schema.names)
        return rows


def plan_columns(schema: pa.Schema, partition_names: Sequence[str],
                 columns: Sequence[str] | None, where: DatasetFilter
                 ) -> tuple[pa.Schema, pa.Schema, pa.Schema]:
    """The data, row and output schemas of a read of ``columns`` (see :class:`ReadPlan`).

    Raises:
        SchemaError: an unknown column, or ``columns`` given as a string.
    """
    if columns is None:
        names = schema.names
    else:
        if isinstance(columns, str):
            raise SchemaError("columns must be a list of names, not a string")
        names = list(columns)
        for name in names:
            if name not in schema.names:
                raise SchemaError(f"no column {name!r} in the dataset (columns: "
                                  f"{', '.join(schema.names)})")
    for name in where.names:
        if name not in schema.names:
            raise SchemaError(f"filters: no column {name!r} in the dataset (columns: "
                              f"{', '.join(schema.names)})")
    out = pa.schema([schema.field(n) for n in names])
    extra = [n for n in where.names if n not in names] if where.expression is not None else []
    rows = pa.schema([*out, *(schema.field(n) for n in extra)])
    data = pa.schema([f for f in rows if f.name not in partition_names])
    return data, rows, out


def prune(files: Sequence[DatasetFile], partition_schema: pa.Schema, clauses: Clauses
          ) -> list[FilePlan]:
    """Each file whose partition values leave some conjunction possible, with the data
    terms of those conjunctions (``None`` when a conjunction holds for all its rows)."""
    parts = set(partition_schema.names)
    table = (pa.Table.from_pylist([f.partition for f in files], schema=partition_schema)
             if parts else None)
    alive: list[set[int] | None] = []
    for conj in clauses:
        terms = [t for t in conj if t[0] in parts]
        alive.append(surviving_rows(table, terms) if terms else None)
    out: list[FilePlan] = []
    for i, f in enumerate(files):
        left: Clauses = []
        whole = False
        for conj, ok in zip(clauses, alive, strict=True):
            if ok is not None and i not in ok:
                continue
            data_terms = [t for t in conj if t[0] not in parts]
            if not data_terms:
                whole = True
                break
            left.append(data_terms)
        if whole:
            out.append((f, None))
        elif left:
            out.append((f, left))
    return out


def concat_files(tables: list[pa.Table], schema: pa.Schema) -> pa.Table:
    """The files' tables as one (``schema`` when there are none); a read of no column
    keeps its row count, which ``pa.concat_tables`` drops for tables without columns."""
    tables = [t for t in tables if t.num_rows]
    if not tables:
        return schema.empty_table()
    if not tables[0].num_columns:
        return pa.table({"n": pa.nulls(sum(t.num_rows for t in tables))}).select([])
    return pa.concat_tables(tables)


def finish_runs(found: Sequence[tuple[DatasetFile, pa.Schema, pa.Table]], parts: Sequence[str],
                finish: Callable[[pa.Table, DatasetFile], pa.Table]) -> list[pa.Table]:
    """Each file's table ``finish``-ed (brought into the read's schema), a run of
    consecutive files whose tables share one schema and whose values of the partition
    columns ``parts`` are equal finished as one table: the files of a dataset of many small
    files then pay one conform and one set of partition columns per run, not per file.
    (A run's conform fails where its first file's does: their columns are the same.)"""
    out: list[pa.Table] = []
    i = 0
    while i < len(found):
        f, _, table = found[i]
        j = i + 1
        if table.num_columns:  # a table of no columns keeps no row count when concatenated
            values = [f.partition.get(n) for n in parts]
            while (j < len(found) and found[j][2].schema.equals(table.schema)
                   and [found[j][0].partition.get(n) for n in parts] == values):
                j += 1
        run = table if j == i + 1 else pa.concat_tables([t for _, _, t in found[i:j]])
        out.append(finish(run, f))
        i = j
    return out


def has_path(field_: pa.Field, rest: str) -> bool:
    """Whether the struct column ``field_`` has the dotted field path ``rest``."""
    t = field_.type
    for part in rest.split("."):
        if not pa.types.is_struct(t) or t.get_field_index(part) < 0:
            return False
        t = t.field(part).type
    return True
