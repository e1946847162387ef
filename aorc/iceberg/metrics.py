"""Iceberg column metrics of ORC data files (pyiceberg's ``DataFileStatistics``).

Files aorc writes: :class:`MetricsCollector` sees every batch written (in the file's Arrow
form, :func:`aorc.iceberg.schema.to_file_batches`) and counts, per Iceberg field id:

- ``value_counts``: values including nulls (Iceberg's count; ORC's ``numberOfValues`` leaves
  nulls out); a struct's field counts a row whose struct is null as a null value, a list
  element or map key/value counts elements;
- ``null_value_counts`` and, for ``float``/``double``, ``nan_value_counts``;
- ``lower_bounds``/``upper_bounds`` of primitive fields outside lists and maps (as Iceberg
  Java's ORC metrics), NaN left out, strings and binaries truncated as the table property
  ``write.metadata.metrics.default`` (``truncate(16)``) or ``write.metadata.metrics.column.
  <name>`` say (``none``, ``counts``, ``truncate(N)``, ``full``): a truncated upper bound is
  incremented, and dropped when it cannot be;

and :meth:`MetricsCollector.statistics` adds ``column_sizes`` (the ORC statistics'
``bytesOnDisk`` of each field's column) and ``split_offsets`` (the stripes' offsets).

Files written elsewhere (:func:`footer_statistics`, for ``add_files``): from the ORC footer
alone, as Iceberg Java's ``OrcMetrics`` computes them for imported files: counts and bounds of
the fields outside lists and maps, nulls counted as the file's rows minus ``numberOfValues``,
float bounds with NaN replaced by infinities, no NaN counts and no binary bounds.
"""

from __future__ import annotations

import datetime
import decimal
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import pyarrow as pa
import pyarrow.compute as pc
from pyiceberg import types as ice
from pyiceberg.conversions import to_bytes
from pyiceberg.io.fileformat import DataFileStatistics
from pyiceberg.io.pyarrow import MetricModeTypes, MetricsMode, match_metrics_mode
from pyiceberg.schema import Schema
from pyiceberg.utils.truncate import (
    truncate_upper_bound_binary_string,
    truncate_upper_bound_text_string,
)

from aorc.errors import SchemaError
from aorc.format.statistics import ColumnStatistics
from aorc.format.types import OrcType, TypeKind
from aorc.iceberg.arrays import map_entries

__all__ = [
    "DEFAULT_METRICS_MODE",
    "Bounds",
    "FieldPlan",
    "MetricsCollector",
    "footer_bounds",
    "footer_statistics",
    "metrics_plan",
    "table_columns",
]

#: ``write.metadata.metrics.default`` when the table does not set it (as Iceberg).
DEFAULT_METRICS_MODE = "truncate(16)"
_DEFAULT_KEY = "write.metadata.metrics.default"
_COLUMN_KEY = "write.metadata.metrics.column."
_TRUNCATABLE = (ice.StringType, ice.BinaryType)
_FLOATS = (ice.FloatType, ice.DoubleType)
_EPOCH_DAY = datetime.date(1970, 1, 1)


@dataclass(frozen=True)
class FieldPlan:
    """What is collected for one primitive field.

    Attributes:
        field_id: the Iceberg field id.
        iceberg_type: its type.
        mode: its metrics mode (none, counts, truncate(N), full).
        bounds: whether bounds are kept (a field outside lists and maps, mode truncate/full).
    """

    field_id: int
    iceberg_type: ice.PrimitiveType
    mode: MetricsMode
    bounds: bool


def _mode_for(schema: Schema, field_id: int, properties: Mapping[str, str],
              iceberg_type: ice.IcebergType) -> MetricsMode:
    name = schema.find_column_name(field_id)
    text = properties.get(_DEFAULT_KEY, DEFAULT_METRICS_MODE)
    if name is not None:
        text = properties.get(_COLUMN_KEY + name, text)
    try:
        mode = match_metrics_mode(text)
    except ValueError as exc:
        raise SchemaError(f"bad metrics mode {text!r} for column {name!r}: {exc}") from exc
    if mode.type == MetricModeTypes.TRUNCATE and not isinstance(iceberg_type, _TRUNCATABLE):
        mode = MetricsMode(MetricModeTypes.FULL)
    return mode


def metrics_plan(schema: Schema, properties: Mapping[str, str]) -> dict[int, FieldPlan]:
    """The metrics collected per primitive field id (see the module docstring)."""
    plans: dict[int, FieldPlan] = {}

    def visit(f: ice.NestedField, repeated: bool) -> None:
        t = f.field_type
        if isinstance(t, ice.StructType):
            for child in t.fields:
                visit(child, repeated)
        elif isinstance(t, ice.ListType):
            visit(t.element_field, True)
        elif isinstance(t, ice.MapType):
            visit(t.key_field, True)
            visit(t.value_field, True)
        else:
            assert isinstance(t, ice.PrimitiveType)
            mode = _mode_for(schema, f.field_id, properties, t)
            keep = not repeated and mode.type in (MetricModeTypes.TRUNCATE,
                                                  MetricModeTypes.FULL)
            plans[f.field_id] = FieldPlan(f.field_id, t, mode, keep)

    for f in schema.fields:
        visit(f, False)
    return plans


class Bounds:
    """A field's smallest and largest values in Iceberg's internal representation (what
    pyiceberg's ``DataFileStatistics`` reads: ``current_min``/``current_max``, and their
    serialized, truncated forms)."""

    def __init__(self, iceberg_type: ice.PrimitiveType, mode: MetricsMode) -> None:
        self.iceberg_type = iceberg_type
        self.trunc_length = mode.length if mode.type == MetricModeTypes.TRUNCATE else None
        self.current_min: Any = None
        self.current_max: Any = None

    def update(self, low: Any, high: Any) -> None:
        """Widen the bounds to include ``low`` and ``high`` (``None`` ignored)."""
        if low is not None and (self.current_min is None or low < self.current_min):
            self.current_min = low
        if high is not None and (self.current_max is None or high > self.current_max):
            self.current_max = high

    def min_as_bytes(self) -> bytes | None:
        """The lower bound, serialized (truncated: a prefix)."""
        value = self.current_min
        if value is None:
            return None
        if self.trunc_length is not None:
            value = value[: self.trunc_length]
        return to_bytes(self.iceberg_type, value)

    def max_as_bytes(self) -> bytes | None:
        """The upper bound, serialized (truncated: a prefix incremented; None when no prefix
        of the allowed length can be incremented)."""
        value = self.current_max
        if value is None:
            return None
        if self.trunc_length is not None:
            if isinstance(value, str):
                value = truncate_upper_bound_text_string(value, self.trunc_length)
            else:
                value = truncate_upper_bound_binary_string(value, self.trunc_length)
            if value is None:
                return None
        return to_bytes(self.iceberg_type, value)


@dataclass
class _Counts:
    values: int = 0
    nulls: int = 0
    nans: int = 0


@dataclass
class MetricsCollector:
    """Collects the metrics of one data file from the batches written to it.

    Args:
        schema: the table's schema (the file's columns are its fields).
        properties: the table's properties (metrics modes).
    """

    schema: Schema
    properties: Mapping[str, str]
    record_count: int = 0
    plan: dict[int, FieldPlan] = field(init=False)
    _counts: dict[int, _Counts] = field(init=False)
    _bounds: dict[int, Bounds] = field(init=False)

    def __post_init__(self) -> None:
        self.plan = metrics_plan(self.schema, self.properties)
        self._counts = {fid: _Counts() for fid, p in self.plan.items()
                        if p.mode.type != MetricModeTypes.NONE}
        self._bounds = {fid: Bounds(p.iceberg_type, p.mode) for fid, p in self.plan.items()
                        if p.bounds}

    def add(self, batch: pa.RecordBatch) -> None:
        """Count a batch of the file's rows (in :func:`aorc.iceberg.schema.file_schema`
        form)."""
        self.record_count += batch.num_rows
        for f, col in zip(self.schema.fields, batch.columns, strict=True):
            self._visit(f, col)

    def _visit(self, f: ice.NestedField, arr: pa.Array) -> None:
        t = f.field_type
        if isinstance(t, ice.StructType):
            for child, values in zip(t.fields, arr.flatten(), strict=True):
                self._visit(child, values)
        elif isinstance(t, ice.ListType):
            self._visit(t.element_field, arr.flatten())
        elif isinstance(t, ice.MapType):
            keys, values = map_entries(arr)
            self._visit(t.key_field, keys)
            self._visit(t.value_field, values)
        else:
            self._leaf(f.field_id, t, arr)

    def _leaf(self, fid: int, t: ice.IcebergType, arr: pa.Array) -> None:
        counts = self._counts.get(fid)
        if counts is None:
            return
        counts.values += len(arr)
        counts.nulls += arr.null_count
        if isinstance(t, _FLOATS) and len(arr) > arr.null_count:
            counts.nans += int(pc.sum(pc.is_nan(arr)).as_py() or 0)
        bounds = self._bounds.get(fid)
        if bounds is not None and len(arr) > arr.null_count:
            low, high = _min_max(t, arr)
            bounds.update(low, high)

    def statistics(self, column_sizes: Mapping[int, int], split_offsets: Sequence[int]
                   ) -> DataFileStatistics:
        """pyiceberg's statistics of the file.

        Args:
            column_sizes: bytes on disk per Iceberg field id.
            split_offsets: the byte offsets of the file's stripes.
        """
        floats = {fid for fid, p in self.plan.items() if isinstance(p.iceberg_type, _FLOATS)}
        return DataFileStatistics(
            record_count=self.record_count,
            column_sizes=dict(column_sizes),
            value_counts={fid: c.values for fid, c in self._counts.items()},
            null_value_counts={fid: c.nulls for fid, c in self._counts.items()},
            nan_value_counts={fid: c.nans for fid, c in self._counts.items() if fid in floats},
            column_aggregates=cast(Any, {fid: b for fid, b in self._bounds.items()
                                         if b.current_min is not None}),
            split_offsets=sorted(split_offsets),
        )


def _min_max(t: ice.IcebergType, arr: pa.Array) -> tuple[Any, Any]:
    """The smallest and largest non-null (non-NaN) values, in Iceberg's representation."""
    if pa.types.is_date(arr.type):
        arr = arr.cast(pa.int32())
    elif pa.types.is_timestamp(arr.type):
        arr = arr.cast(pa.int64())
    result = pc.min_max(arr)
    low, high = result["min"].as_py(), result["max"].as_py()
    if isinstance(t, _FLOATS) and low is not None and low != low:  # all NaN
        return None, None
    return low, high


# =========================================================================== imported files

def table_columns(schema: Schema, root: OrcType, ids: Mapping[int, int]
                  ) -> Iterator[tuple[OrcType, int, ice.NestedField]]:
    """The columns of an ORC file that are fields of the table: ``(node, field id, field)``
    for each node of ``root`` that ``ids`` maps to a field ``schema`` still has.

    Args:
        schema: the table's schema.
        root: the file's ORC type tree.
        ids: ORC column id -> Iceberg field id.
    """
    for node in root.walk():
        fid = ids.get(node.column_id)
        if fid is None:
            continue
        try:
            f = schema.find_field(fid)
        except ValueError:
            continue  # a column the table dropped
        yield node, fid, f


def footer_statistics(schema: Schema, properties: Mapping[str, str], root: OrcType,
                      ids: Mapping[int, int], statistics: Sequence[ColumnStatistics],
                      num_rows: int, split_offsets: Sequence[int]) -> DataFileStatistics:
    """The metrics of a file written elsewhere, from its footer (see the module docstring).

    Args:
        schema: the table's schema.
        properties: the table's properties (metrics modes).
        root: the file's ORC type tree.
        ids: ORC column id -> Iceberg field id (from attributes or the name mapping).
        statistics: the file's column statistics (by ORC column id).
        num_rows: the file's rows.
        split_offsets: the stripes' offsets.
    """
    outside = _outside_containers(root)
    sizes: dict[int, int] = {}
    values: dict[int, int] = {}
    nulls: dict[int, int] = {}
    bounds: dict[int, Bounds] = {}
    for node, fid, f in table_columns(schema, root, ids):
        stats = statistics[node.column_id]
        if stats.bytes_on_disk is not None:
            sizes[fid] = stats.bytes_on_disk
        mode = _mode_for(schema, fid, properties, f.field_type)
        if mode.type == MetricModeTypes.NONE or node.column_id not in outside:
            continue
        null = num_rows - stats.num_values if stats.has_null else 0
        nulls[fid], values[fid] = null, stats.num_values + null
        t = f.field_type
        if mode.type == MetricModeTypes.COUNTS or not isinstance(t, ice.PrimitiveType) or \
                not stats.num_values:
            continue
        low, high = footer_bounds(t, node, stats)
        if low is not None or high is not None:
            b = Bounds(t, mode)
            b.current_min, b.current_max = low, high
            bounds[fid] = b
    return DataFileStatistics(record_count=num_rows, column_sizes=sizes, value_counts=values,
                              null_value_counts=nulls, nan_value_counts={},
                              column_aggregates=cast(Any, bounds),
                              split_offsets=sorted(split_offsets))


def _outside_containers(root: OrcType) -> set[int]:
    """Column ids of the nodes not inside a list or map (the root's subtree of structs)."""
    out: set[int] = set()

    def visit(node: OrcType) -> None:
        out.add(node.column_id)
        if node.kind == TypeKind.STRUCT:
            for child in node.children:
                visit(child)

    visit(root)
    return out


def footer_bounds(t: ice.PrimitiveType, node: OrcType, stats: ColumnStatistics
                  ) -> tuple[Any, Any]:
    """A column's smallest and largest values by its ORC statistics, in Iceberg's
    representation of ``t`` (None when the statistics do not say)."""
    kind = node.kind
    if isinstance(t, ice.BooleanType) and stats.true_count is not None:
        return stats.false_count == 0, bool(stats.true_count)
    if isinstance(t, (ice.IntegerType, ice.LongType, ice.TimeType)) and kind in (
            TypeKind.BYTE, TypeKind.SHORT, TypeKind.INT, TypeKind.LONG):
        return stats.minimum, stats.maximum
    if isinstance(t, _FLOATS) and kind in (TypeKind.FLOAT, TypeKind.DOUBLE):
        low, high = stats.minimum, stats.maximum
        low = float("-inf") if low is None or low != low else low
        high = float("inf") if high is None or high != high else high
        return low, high
    if isinstance(t, ice.StringType) and stats.minimum is not None:
        return stats.minimum, stats.maximum
    if isinstance(t, ice.DecimalType) and isinstance(stats.minimum, decimal.Decimal) and \
            isinstance(stats.maximum, decimal.Decimal):
        q = decimal.Decimal(1).scaleb(-t.scale)
        return stats.minimum.quantize(q), stats.maximum.quantize(q)
    if isinstance(t, ice.DateType) and isinstance(stats.minimum, datetime.date) and \
            isinstance(stats.maximum, datetime.date):
        return ((stats.minimum - _EPOCH_DAY).days, (stats.maximum - _EPOCH_DAY).days)
    if isinstance(t, (ice.TimestampType, ice.TimestamptzType, ice.TimestampNanoType,
                      ice.TimestamptzNanoType)) and stats.timestamp_utc and \
            stats.minimum_nanos is not None and stats.maximum_nanos is not None:
        nanos = isinstance(t, (ice.TimestampNanoType, ice.TimestamptzNanoType))
        if nanos:
            return stats.minimum_nanos, stats.maximum_nanos
        return stats.minimum_nanos // 1000, -(-stats.maximum_nanos // 1000)
    return None, None
