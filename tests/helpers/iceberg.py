"""Iceberg test helpers: pyiceberg's SQL catalog on SQLite (local or moto-S3 warehouse),
seeded tables of every Iceberg type, delete files committed the way Iceberg Java commits
them, and metrics recomputed from the data with plain Python (the oracle of
:mod:`aorc.iceberg.metrics`).

The fixtures ``catalog`` (local warehouse) and ``s3_catalog`` (moto) are in
:mod:`helpers.iceberg_fixtures` (a plugin of ``tests/conftest.py``).
"""

from __future__ import annotations

import datetime
import decimal
import math
import struct
import uuid
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

pyiceberg = pytest.importorskip("pyiceberg")

from pyiceberg.manifest import (  # noqa: E402
    DataFile,
    DataFileContent,
    FileFormat,
    ManifestContent,
    ManifestEntry,
    ManifestEntryStatus,
    ManifestWriterV2,
)
from pyiceberg.schema import Schema  # noqa: E402
from pyiceberg.table import Table  # noqa: E402
from pyiceberg.types import (  # noqa: E402
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    FloatType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    StructType,
    TimestampType,
    TimestamptzType,
    TimeType,
    UUIDType,
)

from helpers.iceberg_fixtures import CATALOG_NAME, MOTO, local_catalog  # noqa: E402,F401

# =========================================================================== schemas

def core_schema() -> Schema:
    """Every type pyiceberg's own ORC reader can read back (no time, uuid, fixed)."""
    return Schema(
        NestedField(1, "b", BooleanType()),
        NestedField(2, "i", IntegerType()),
        NestedField(3, "l", LongType(), required=True),
        NestedField(4, "f", FloatType()),
        NestedField(5, "d", DoubleType()),
        NestedField(6, "dec", DecimalType(10, 2)),
        NestedField(7, "dt", DateType()),
        NestedField(8, "ts", TimestampType()),
        NestedField(9, "tz", TimestamptzType()),
        NestedField(10, "s", StringType()),
        NestedField(11, "bin", BinaryType()),
        NestedField(12, "st", StructType(NestedField(13, "x", IntegerType()),
                                         NestedField(14, "y", StringType()))),
        NestedField(15, "lst", ListType(16, LongType(), element_required=False)),
        NestedField(17, "mp", MapType(18, StringType(), 19, StructType(
            NestedField(20, "a", DoubleType())), value_required=False)),
    )


def all_types_schema() -> Schema:
    """Every Iceberg v2 type, nested ones included."""
    fields = list(core_schema().fields)
    fields += [NestedField(21, "tm", TimeType()), NestedField(22, "u", UUIDType()),
               NestedField(23, "fx", FixedType(4))]
    return Schema(*fields)


def _maybe(rng: np.random.Generator, values: list[Any], share: float = 0.15) -> list[Any]:
    return [None if rng.random() < share else v for v in values]


def table_data(schema: Schema, n: int, seed: int) -> pa.Table:
    """``n`` seeded rows of a schema from :func:`all_types_schema` (a subset of its
    fields), with nulls, NaN and strings of every length, in pyiceberg's Arrow types."""
    from pyiceberg.io.pyarrow import schema_to_pyarrow

    rng = np.random.default_rng(seed)
    words = ["", "a", "ab", "été", "zzzzzzzzzzzzzzzzzzzzzzzzz", "日本語のテキスト" * 3,
             "b" * 40]
    base = datetime.datetime(2026, 11, 20)
    cols: dict[str, list[Any]] = {
        "b": _maybe(rng, [bool(x) for x in rng.integers(0, 2, n)]),
        "i": _maybe(rng, [int(x) for x in rng.integers(-2**31, 2**31 - 1, n)]),
        "l": [int(x) for x in rng.integers(-2**62, 2**62, n)],
        "f": _maybe(rng, [float(np.float32(x)) for x in rng.normal(0, 100, n)]),
        "d": _maybe(rng, [float("nan") if rng.random() < 0.1 else float(x)
                          for x in rng.normal(0, 1e6, n)]),
        "dec": _maybe(rng, [decimal.Decimal(int(x)).scaleb(-2)
                            for x in rng.integers(-10**9, 10**9, n)]),
        "dt": _maybe(rng, [datetime.date(2026, 1, 1) + datetime.timedelta(days=int(x))
                           for x in rng.integers(-800, 800, n)]),
        "ts": _maybe(rng, [base + datetime.timedelta(microseconds=int(x))
                           for x in rng.integers(0, 3 * 86_400 * 10**6, n)]),
        "tz": _maybe(rng, [(base + datetime.timedelta(microseconds=int(x))).replace(
            tzinfo=datetime.UTC) for x in rng.integers(-10**12, 10**12, n)]),
        "s": _maybe(rng, [words[int(x)] for x in rng.integers(0, len(words), n)]),
        "bin": _maybe(rng, [rng.bytes(int(x)) for x in rng.integers(0, 30, n)]),
        "st": _maybe(rng, [{"x": None if rng.random() < 0.2 else int(x),
                            "y": words[int(x) % len(words)]}
                           for x in rng.integers(0, 1000, n)]),
        "lst": _maybe(rng, [_maybe(rng, [int(v) for v in rng.integers(0, 99, int(k))])
                            for k in rng.integers(0, 4, n)]),
        "mp": _maybe(rng, [[(f"k{j}", None if rng.random() < 0.2 else {"a": float(j)})
                            for j in range(int(k))] for k in rng.integers(0, 3, n)]),
        "tm": _maybe(rng, [datetime.time(int(h), int(m), 0, int(us))
                           for h, m, us in zip(rng.integers(0, 24, n), rng.integers(0, 60, n),
                                               rng.integers(0, 10**6, n), strict=True)]),
        "u": _maybe(rng, [uuid.UUID(bytes=rng.bytes(16)).bytes for _ in range(n)]),
        "fx": _maybe(rng, [rng.bytes(4) for _ in range(n)]),
    }
    arrow = schema_to_pyarrow(schema, include_field_ids=False)
    arrays = []
    for field in arrow:
        values = cols[field.name]
        if isinstance(field.type, pa.ExtensionType):
            storage = pa.array(values, field.type.storage_type)
            arrays.append(pa.ExtensionArray.from_storage(field.type, storage))
        else:
            arrays.append(pa.array(values, field.type))
    return pa.Table.from_arrays(arrays, schema=arrow)


# =========================================================================== deletes

class _DeleteManifestWriter(ManifestWriterV2):
    def content(self) -> ManifestContent:
        return ManifestContent.DELETES


def commit_delete_files(table: Table, delete_files: list[DataFile]) -> None:
    """Commit delete files (position or equality) in one snapshot, in a delete manifest, as
    Iceberg Java's row-delta commits them (pyiceberg 0.12 cannot write delete files)."""
    from pyiceberg.table.update.snapshot import _FastAppendFiles

    class RowDelta(_FastAppendFiles):
        def _process_manifests(self, manifests: list[Any]) -> list[Any]:
            writer = _DeleteManifestWriter(self._transaction.table_metadata.spec(),
                                           self.schema(), self.new_manifest_output(),
                                           self._snapshot_id, self._compression)
            with writer:
                for f in delete_files:
                    writer.add(ManifestEntry.from_args(
                        status=ManifestEntryStatus.ADDED, snapshot_id=self._snapshot_id,
                        sequence_number=None, file_sequence_number=None, data_file=f))
            return [*manifests, writer.to_manifest_file()]

    with table.transaction() as tx:
        from pyiceberg.table.snapshots import Operation

        with RowDelta(operation=Operation.OVERWRITE, transaction=tx,
                      io=table.io) as delta:
            assert delta is not None


def delete_file(table: Table, path: str, content: DataFileContent, rows: int, size: int,
                fmt: FileFormat, partition: Any, equality_ids: list[int] | None = None
                ) -> DataFile:
    """The DataFile entry of a delete file."""
    return DataFile.from_args(
        _table_format_version=table.metadata.format_version, content=content,
        file_path=path, file_format=fmt, partition=partition, record_count=rows,
        file_size_in_bytes=size, spec_id=table.metadata.default_spec_id,
        equality_ids=equality_ids, sort_order_id=None, key_metadata=None, column_sizes={},
        value_counts={}, null_value_counts={}, nan_value_counts={}, lower_bounds={},
        upper_bounds={}, split_offsets=None)


# =========================================================================== metrics oracle

def _flatten(value: Any, t: Any, fid_path: list[tuple[int, Any, bool]],
             repeated: bool, out: dict[int, list[tuple[Any, bool]]]) -> None:
    """Collect every primitive value of a field (Python values), with whether it sits in a
    list or map."""
    if isinstance(t, StructType):
        for f in t.fields:
            child = None if value is None else value.get(f.name)
            _flatten(child, f.field_type, fid_path + [(f.field_id, f.field_type, repeated)],
                     repeated, out)
    elif isinstance(t, ListType):
        for item in value or []:
            _flatten(item, t.element_type,
                     fid_path + [(t.element_id, t.element_type, True)], True, out)
    elif isinstance(t, MapType):
        for k, v in value or []:
            _flatten(k, t.key_type, fid_path + [(t.key_id, t.key_type, True)], True, out)
            _flatten(v, t.value_type, fid_path + [(t.value_id, t.value_type, True)], True,
                     out)
    else:
        fid = fid_path[-1][0]
        out.setdefault(fid, []).append((value, repeated))


def recompute_metrics(schema: Schema, table: pa.Table, truncate: int | None = 16
                      ) -> dict[str, dict[int, Any]]:
    """Iceberg metrics of rows, computed value by value in Python: counts of every primitive
    field, bounds (Python values, strings/binary truncated) of those outside lists and maps,
    NaN excluded."""
    values: dict[int, list[tuple[Any, bool]]] = {}
    for row in table.to_pylist():
        for f in schema.fields:
            _flatten(row.get(f.name), f.field_type, [(f.field_id, f.field_type, False)],
                     False, values)
    from pyiceberg.schema import index_by_id

    types = {fid: f.field_type for fid, f in index_by_id(schema).items()}
    counts, nulls, nans, lower, upper = {}, {}, {}, {}, {}
    for fid, items in values.items():
        t = types[fid]
        counts[fid] = len(items)
        nulls[fid] = sum(v is None for v, _ in items)
        if isinstance(t, (FloatType, DoubleType)):
            nans[fid] = sum(v is not None and math.isnan(v) for v, _ in items)
        present = [v for v, rep in items if v is not None and not rep
                   and not (isinstance(v, float) and math.isnan(v))]
        if present and not any(rep for _, rep in items):
            lo, hi = min(present, key=_order), max(present, key=_order)
            if truncate is not None and isinstance(t, (StringType, BinaryType)):
                lo = lo[:truncate]
                hi = _increment(hi, truncate)
            lower[fid], upper[fid] = lo, hi
    return {"value_counts": counts, "null_value_counts": nulls, "nan_value_counts": nans,
            "lower_bounds": lower, "upper_bounds": upper}


def _order(v: Any) -> Any:
    if isinstance(v, datetime.datetime) and v.tzinfo is not None:
        return v.astimezone(datetime.UTC).replace(tzinfo=None)
    if isinstance(v, str):
        return v.encode("utf-8")
    return v


def _increment(value: Any, n: int) -> Any:
    """The smallest value above every value with ``value``'s first ``n`` characters (bytes),
    or None (written independently of pyiceberg's truncation helpers)."""
    if len(value) <= n:
        return value
    prefix = list(value[:n])
    while prefix:
        last = prefix.pop()
        if isinstance(value, str):
            code = ord(last) + 1
            if 0xD800 <= code <= 0xDFFF:
                code = 0xE000
            if code <= 0x10FFFF:
                return "".join(prefix) + chr(code)
        elif last < 255:
            return bytes(prefix) + bytes([last + 1])
    return None


def decode_bound(t: Any, raw: bytes) -> Any:
    """A serialized bound as a Python value comparable with :func:`recompute_metrics`'s."""
    if isinstance(t, (StringType,)):
        return raw.decode("utf-8")
    if isinstance(t, (BinaryType, FixedType, UUIDType)):
        return bytes(raw)
    if isinstance(t, BooleanType):
        return raw != b"\x00"
    if isinstance(t, IntegerType):
        return struct.unpack("<i", raw)[0]
    if isinstance(t, (LongType, TimeType)):
        return struct.unpack("<q", raw)[0]
    if isinstance(t, FloatType):
        return struct.unpack("<f", raw)[0]
    if isinstance(t, DoubleType):
        return struct.unpack("<d", raw)[0]
    if isinstance(t, DateType):
        return datetime.date(1970, 1, 1) + datetime.timedelta(days=struct.unpack("<i", raw)[0])
    if isinstance(t, TimestampType):
        return datetime.datetime(1970, 1, 1) + datetime.timedelta(
            microseconds=struct.unpack("<q", raw)[0])
    if isinstance(t, TimestamptzType):
        return datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC) + datetime.timedelta(
            microseconds=struct.unpack("<q", raw)[0])
    if isinstance(t, DecimalType):
        return decimal.Decimal(int.from_bytes(raw, "big", signed=True)).scaleb(-t.scale)
    raise AssertionError(f"no decoder for {t}")


def python_bound(t: Any, v: Any) -> Any:
    """A recomputed bound in :func:`decode_bound`'s form."""
    if isinstance(t, TimeType) and isinstance(v, datetime.time):
        return ((v.hour * 60 + v.minute) * 60 + v.second) * 10**6 + v.microsecond
    if isinstance(t, FloatType):
        return float(np.float32(v))
    if isinstance(v, uuid.UUID):
        return v.bytes
    return v


def nan_free(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return "NaN"
    if isinstance(value, list):
        return [nan_free(v) for v in value]
    if isinstance(value, tuple):
        return tuple(nan_free(v) for v in value)
    if isinstance(value, dict):
        return {k: nan_free(v) for k, v in value.items()}
    return value


def rows(table: pa.Table, key: str | None = None, *, null_maps_empty: bool = False
         ) -> list[Any]:
    """A table's rows as Python values (NaN comparable), sorted by ``key``.

    ``null_maps_empty``: null values of top-level map columns read as empty maps, as
    pyiceberg 0.12's projection gives them when the map's values are structs (its
    ``ArrowProjectionVisitor.map`` rebuilds the array without its validity, on write and on
    read): for comparisons with pyiceberg's scan."""
    if key is not None:
        table = table.sort_by(key)
    out = nan_free(table.to_pylist())
    if null_maps_empty:
        maps = [f.name for f in table.schema if pa.types.is_map(f.type)]
        for row in out:
            for name in maps:
                if row[name] is None:
                    row[name] = []
    return out
