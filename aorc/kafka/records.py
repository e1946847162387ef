"""Kafka records to Arrow rows: the formats (``json``, ``raw``) and the dead letters.

Sans-I/O: :class:`RecordDecoder` turns the records of one partition (anything with aiokafka's
``ConsumerRecord`` attributes: ``topic``, ``partition``, ``offset``, ``timestamp``, ``key``,
``value``) into a record batch of the rows' schema plus the :class:`DeadLetter` of every
record that could not become a row, with the reason. Nothing is ever dropped silently.

Rows carry the message's fields and three Kafka columns: ``kafka_partition`` (int32),
``kafka_offset`` (int64) and ``kafka_time`` (the message timestamp, ms).

- ``json``: each value is a JSON object; the fields named by the ORC schema are kept (others
  ignored, missing ones null). A value that is not JSON, not an object, or whose fields do not
  fit their types is a dead letter. A batch of well-formed values is parsed by Arrow's JSON
  reader in one go; only when that fails is each record parsed on its own to find the bad
  ones.
- ``raw``: the key and value bytes as ``key`` and ``value`` binary columns; never a dead
  letter.
"""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.json as pa_json

from aorc.errors import SchemaError
from aorc.format.types import parse_type_string, to_arrow_schema

__all__ = [
    "DEAD_LETTER_SCHEMA",
    "FORMATS",
    "KAFKA_COLUMNS",
    "DeadLetter",
    "RecordDecoder",
    "dead_letter",
    "dead_letter_batch",
    "fixed_width_array",
    "row_schema",
]

#: The columns every row gets besides the message's own.
KAFKA_COLUMNS: tuple[tuple[str, pa.DataType], ...] = (
    ("kafka_partition", pa.int32()), ("kafka_offset", pa.int64()),
    ("kafka_time", pa.timestamp("ms")))
#: The formats of message values.
FORMATS = ("json", "raw", "avro")
#: The rows of a dead-letter file.
DEAD_LETTER_SCHEMA = pa.schema([
    ("topic", pa.string()), ("partition", pa.int32()), ("offset", pa.int64()),
    ("timestamp", pa.timestamp("ms")), ("key", pa.binary()), ("value", pa.binary()),
    ("reason", pa.string())])

_KAFKA_NAMES = frozenset(name for name, _ in KAFKA_COLUMNS)


@dataclass(frozen=True)
class DeadLetter:
    """A record that could not become a row.

    Attributes:
        topic: its topic.
        partition: its partition.
        offset: its offset.
        timestamp: its timestamp (ms since the epoch).
        key: its key bytes (or None).
        value: its value bytes (or None).
        reason: why it is a dead letter.
    """

    topic: str
    partition: int
    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    reason: str


def row_schema(fmt: str, schema: str | pa.Schema | None = None) -> pa.Schema:
    """The rows' Arrow schema of a format: the message fields plus the Kafka columns.

    Args:
        fmt: ``"json"`` or ``"raw"``.
        schema: the message fields (an ORC type string ``struct<...>`` or an Arrow schema);
            required for ``json`` and ``avro`` (see :func:`aorc.kafka.avro.arrow_schema`),
            not taken by ``raw``.

    Returns:
        The schema of the rows written.

    Raises:
        SchemaError: an unknown format, a missing or bad schema, or fields named like the
            Kafka columns.
    """
    if fmt not in FORMATS:
        raise SchemaError(f"unknown Kafka value format {fmt!r}; one of {', '.join(FORMATS)}")
    if fmt == "raw":
        if schema is not None:
            raise SchemaError("the raw format has a fixed schema (key, value): leave out "
                              "schema")
        fields = [pa.field("key", pa.binary()), pa.field("value", pa.binary())]
    elif schema is None:
        raise SchemaError(f"the {fmt} format needs the schema of the fields kept, e.g. "
                          "'struct<user:string,amount:double>'")
    else:
        fields = list(to_arrow_schema(parse_type_string(schema)) if isinstance(schema, str)
                      else schema)
    clash = sorted(f.name for f in fields if f.name in _KAFKA_NAMES)
    if clash:
        raise SchemaError(f"fields {clash} clash with the Kafka columns")
    return pa.schema(fields + [pa.field(n, t) for n, t in KAFKA_COLUMNS])


class RecordDecoder:
    """Turns the records of one partition into rows and dead letters.

    Args:
        fmt: ``"json"``, ``"raw"`` or ``"avro"``.
        schema: the rows' schema (from :func:`row_schema`).
        avro: the Avro decoder (an :class:`aorc.kafka.avro.AvroDecoder`) of ``"avro"``.
    """

    def __init__(self, fmt: str, schema: pa.Schema, avro: Any = None) -> None:
        if fmt not in FORMATS:
            raise SchemaError(f"unknown Kafka value format {fmt!r}")
        if (fmt == "avro") != (avro is not None):
            raise SchemaError("the avro format (and only it) takes an Avro decoder")
        self.avro = avro
        self.format = fmt
        self.schema = schema
        self._fields = pa.schema([f for f in schema if f.name not in _KAFKA_NAMES])
        self._parse = pa_json.ParseOptions(explicit_schema=self._fields,
                                           unexpected_field_behavior="ignore")

    def decode(self, records: Sequence[Any]
               ) -> tuple[pa.RecordBatch, list[int], list[DeadLetter]]:
        """The rows of some records of one partition, their offsets and the dead letters.

        Args:
            records: consumer records of one partition, in offset order.

        Returns:
            ``(batch, offsets, dead_letters)``: one row per record that fits, in order.
        """
        if self.format == "raw":
            keys = [r.key for r in records]
            values = [r.value for r in records]
            return (self._with_kafka([pa.array(keys, pa.binary()),
                                      pa.array(values, pa.binary())], records),
                    [r.offset for r in records], [])
        if self.format == "avro":
            values = [r.value for r in records]
            columns = self.avro.columns(values)  # all at once: the usual case
            if columns is not None:
                return self._with_kafka(columns, records), [r.offset for r in records], []
            rows = self.avro.decode_many(values)
            return self._rows([(r, row) for r, row in zip(records, rows, strict=True)])
        batch = self._fast_json(records)
        if batch is not None:
            return batch, [r.offset for r in records], []
        return self._slow_json(records)

    def _with_kafka(self, columns: list[pa.Array], records: Sequence[Any]) -> pa.RecordBatch:
        n = len(records)
        parts = np.fromiter((r.partition for r in records), np.int32, n)
        offs = np.fromiter((r.offset for r in records), np.int64, n)
        times = np.fromiter((r.timestamp for r in records), np.int64, n)
        return pa.RecordBatch.from_arrays(
            [*columns, fixed_width_array(parts, pa.int32()),
             fixed_width_array(offs, pa.int64()),
             fixed_width_array(times, pa.timestamp("ms"))], schema=self.schema)

    def _fast_json(self, records: Sequence[Any]) -> pa.RecordBatch | None:
        """All records parsed by Arrow at once, or None when any needs a closer look."""
        values = [r.value for r in records]
        if not values or any(not v or b"\n" in v or b"\r" in v for v in values):
            return None
        try:
            table = pa_json.read_json(io.BytesIO(b"\n".join(values)),
                                      parse_options=self._parse)
        except (pa.ArrowException, ValueError, TypeError):
            return None
        if table.num_rows != len(records):
            return None
        table = table.select(self._fields.names)
        columns = [c.combine_chunks() if c.num_chunks != 1 else c.chunk(0)
                   for c in table.columns]
        return self._with_kafka(columns, records)

    def _slow_json(self, records: Sequence[Any]
                   ) -> tuple[pa.RecordBatch, list[int], list[DeadLetter]]:
        parsed: list[tuple[Any, dict[str, Any] | str]] = []
        for record in records:
            try:
                value = json.loads(record.value) if record.value is not None else None
            except (ValueError, TypeError) as exc:
                parsed.append((record, f"not JSON: {exc}"))
                continue
            parsed.append((record, value if isinstance(value, dict) else
                           f"not a JSON object but {type(value).__name__}"))
        return self._rows(parsed)

    def _rows(self, parsed: Sequence[tuple[Any, dict[str, Any] | str]]
              ) -> tuple[pa.RecordBatch, list[int], list[DeadLetter]]:
        """Rows of decoded values (dicts; a text is why a record has none): the batch of
        those that fit the schema, their offsets and the dead letters."""
        good: list[tuple[Any, dict[str, Any]]] = []
        dead: list[DeadLetter] = []
        for record, value in parsed:  # (the schema's keys are taken, others ignored,
            if isinstance(value, str):  # missing ones null)
                dead.append(dead_letter(record, value))
            else:
                good.append((record, value))
        try:  # column by column: a twentieth of from_pylist's time
            rows = pa.RecordBatch.from_arrays(
                [pa.array([row.get(f.name) for _, row in good], f.type)
                 for f in self._fields], schema=self._fields)
        except (pa.ArrowException, TypeError, ValueError, OverflowError):
            fits = []
            for record, row in good:  # find the rows that do not fit
                try:
                    pa.RecordBatch.from_pylist([row], schema=self._fields)
                except (pa.ArrowException, TypeError, ValueError, OverflowError) as exc:
                    dead.append(dead_letter(record, f"does not fit the schema: {exc}"))
                    continue
                fits.append((record, row))
            good = fits
            rows = pa.RecordBatch.from_pylist([row for _, row in good], schema=self._fields)
        dead.sort(key=lambda d: d.offset)
        return (self._with_kafka(list(rows.columns), [r for r, _ in good]),
                [r.offset for r, _ in good], dead)


def fixed_width_array(values: np.ndarray[Any, Any], atype: pa.DataType,
                      valid: np.ndarray[Any, Any] | None = None) -> pa.Array:
    """An Arrow array of a fixed-width type over a numpy array's bytes (and a numpy array
    of 0/1 per value: present or null). Not ``pa.array``: its first call imports pandas when
    installed (pyarrow looks for pandas objects), 35 MiB of resident memory a consumer
    process need not hold.

    Args:
        values: one value per row, of ``atype``'s width (booleans: one byte each, 0 or 1).
        atype: the Arrow type.
        valid: None when every value is present.
    """
    n = len(values)
    bitmap, nulls = None, 0
    if valid is not None:
        nulls = n - int(np.count_nonzero(valid))
        if nulls:
            bitmap = pa.py_buffer(np.packbits(valid.view(np.uint8), bitorder="little"))
    if pa.types.is_boolean(atype):
        values = np.packbits(values.view(np.uint8), bitorder="little")
    return pa.Array.from_buffers(atype, n, [bitmap, pa.py_buffer(np.ascontiguousarray(values))],
                                 nulls)


def dead_letter(record: Any, reason: str) -> DeadLetter:
    """The dead letter of a consumer record."""
    return DeadLetter(record.topic, record.partition, record.offset, record.timestamp,
                      record.key, record.value, reason[:500])


def dead_letter_batch(letters: Sequence[DeadLetter]) -> pa.RecordBatch:
    """Dead letters as rows of :data:`DEAD_LETTER_SCHEMA`."""
    return pa.RecordBatch.from_pydict({
        "topic": [d.topic for d in letters], "partition": [d.partition for d in letters],
        "offset": [d.offset for d in letters],
        "timestamp": pa.array([d.timestamp for d in letters], pa.int64()).cast(
            pa.timestamp("ms")),
        "key": [d.key for d in letters], "value": [d.value for d in letters],
        "reason": [d.reason for d in letters]}, schema=DEAD_LETTER_SCHEMA)
