"""A poll's Avro values decoded into Arrow columns at once (the ``avro`` format's fast path).

When a record schema is flat -- fields of ``null``, ``boolean``, ``int``, ``long``,
``float``, ``double``, ``string``, ``bytes``, ``fixed``, ``enum``, ``date``,
``timestamp-millis``/``-micros`` (``local-`` too), each possibly in a union with ``null`` --
:class:`FlatColumns` decodes a list of Confluent-framed values written with it into the
columns of :func:`aorc.kafka.avro.arrow_schema` by a Cython kernel (:mod:`aorc.kafka._avro`)
that releases the GIL: no Python object per record or per value. It gives the same columns
as fastavro's ``schemaless_reader`` of each value turned into Arrow; when a value is
anything else (another schema id, not framed, cut short, or anything fastavro might read
differently: see the kernel) or a string is not UTF-8, it gives None and the caller decodes
the values one by one, which finds the dead letters and their reasons.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from aorc.kafka import _avro
from aorc.kafka.records import fixed_width_array

__all__ = ["FlatColumns", "flat_plan"]

_PRIMITIVE_KINDS = {
    "null": _avro.KIND_NULL, "boolean": _avro.KIND_BOOLEAN, "int": _avro.KIND_INT,
    "long": _avro.KIND_LONG, "float": _avro.KIND_FLOAT, "double": _avro.KIND_DOUBLE,
    "string": _avro.KIND_STRING, "bytes": _avro.KIND_BYTES}
_LOGICAL_KINDS = {
    ("date", "int"): _avro.KIND_DATE,
    ("timestamp-millis", "long"): _avro.KIND_TIMESTAMP_MILLIS,
    ("local-timestamp-millis", "long"): _avro.KIND_TIMESTAMP_MILLIS,
    ("timestamp-micros", "long"): _avro.KIND_TIMESTAMP_MICROS,
    ("local-timestamp-micros", "long"): _avro.KIND_TIMESTAMP_MICROS}

#: A field of the kernel: kind, the null branch's index (-1: no union), size, enum symbols.
FieldPlan = tuple[int, int, int, list[str] | None]


def _kind(schema: Any) -> tuple[int, int, list[str] | None] | None:
    """A field type's kernel kind, size and enum symbols; None when the kernel can't."""
    if isinstance(schema, str):
        return (_PRIMITIVE_KINDS[schema], 0, None) if schema in _PRIMITIVE_KINDS else None
    if not isinstance(schema, dict):
        return None
    kind, logical = schema.get("type"), schema.get("logicalType")
    if logical is not None:
        found = _LOGICAL_KINDS.get((str(logical), str(kind)))
        return None if found is None else (found, 0, None)
    if kind == "enum":
        symbols = list(schema["symbols"])
        return _avro.KIND_ENUM, len(symbols), symbols
    if kind == "fixed":
        return _avro.KIND_FIXED, int(schema["size"]), None
    return _kind(kind) if isinstance(kind, str) and kind in _PRIMITIVE_KINDS else None


def flat_plan(schema: Any) -> list[FieldPlan] | None:
    """The kernel's plan of a record schema (parsed JSON), or None when it is not flat.

    Args:
        schema: an Avro record schema.

    Returns:
        Per field ``(kind, null index, size, enum symbols)``, or None.
    """
    if not isinstance(schema, dict) or schema.get("type") != "record":
        return None
    plan: list[FieldPlan] = []
    for field in schema.get("fields", []):
        ftype, null_index = field.get("type"), -1
        if isinstance(ftype, list):
            if len(ftype) != 2 or "null" not in ftype or ftype[0] == ftype[1]:
                return None
            null_index = ftype.index("null")
            ftype = ftype[1 - null_index]
        found = _kind(ftype)
        if found is None:
            return None
        plan.append((found[0], null_index, found[1], found[2]))
    return plan


class FlatColumns:
    """Decodes the values of one flat record schema (a plan of :func:`flat_plan`) into
    Arrow columns.

    Args:
        fields: the columns (:func:`aorc.kafka.avro.arrow_schema` of the record schema the
            values were written with and are read with).
        plan: the schema's plan.
        schema_id: its id in the registry.
    """

    def __init__(self, fields: Sequence[pa.Field], plan: list[FieldPlan],
                 schema_id: int) -> None:
        self.plan = plan
        self.header = b"\x00" + schema_id.to_bytes(4, "big")
        self.fields = list(fields)
        self._kinds = [p[0] for p in plan]
        self._nulls = [p[1] for p in plan]
        self._sizes = [p[2] for p in plan]
        self._symbols = [None if p[3] is None else _strings(p[3]) for p in plan]

    def decode(self, values: Sequence[bytes | None]) -> list[pa.Array] | None:
        """The columns of ``values``, or None when one must be decoded on its own."""
        failed, columns = _avro.decode_columns(list(values), self.header, self._kinds,
                                               self._nulls, self._sizes)
        if columns is None:
            return None
        n = len(values)
        out = []
        for field, symbols, (valid, vals, offsets, data, high) in zip(
                self.fields, self._symbols, columns, strict=True):
            array = self._array(field.type, n, symbols, valid, vals, offsets, data)
            if high:  # a byte >= 0x80: fastavro would refuse what is not UTF-8
                try:
                    array.validate(full=True)
                except pa.ArrowInvalid:
                    return None
            out.append(array)
        return out

    @staticmethod
    def _array(atype: pa.DataType, n: int, symbols: pa.Array | None, valid: Any, vals: Any,
               offsets: Any, data: Any) -> pa.Array:
        if pa.types.is_null(atype):
            return pa.nulls(n)
        if data is not None:
            bitmap = None
            nulls = 0 if valid is None else n - int(np.count_nonzero(valid))
            if nulls:
                bitmap = pa.py_buffer(np.packbits(valid, bitorder="little"))
            return pa.Array.from_buffers(
                atype, n, [bitmap, pa.py_buffer(offsets), pa.py_buffer(data)], nulls)
        if symbols is not None:
            return symbols.take(fixed_width_array(vals, pa.int32(), valid))
        return fixed_width_array(vals, atype, valid)


def _strings(texts: Sequence[str]) -> pa.Array:
    """A string array of ``texts`` (not by ``pa.array``: see
    :func:`~aorc.kafka.records.fixed_width_array`)."""
    encoded = [t.encode() for t in texts]
    offsets = np.zeros(len(encoded) + 1, np.int32)
    np.cumsum([len(e) for e in encoded], out=offsets[1:])
    return pa.Array.from_buffers(pa.string(), len(encoded), [
        None, pa.py_buffer(offsets), pa.py_buffer(b"".join(encoded))])
