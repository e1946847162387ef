"""Avro values in the Confluent wire format, with a schema registry (``pip install fastavro``).

A value is a zero byte, the writer schema's id (4 bytes, big-endian) in the registry and the
Avro binary encoding. :class:`SchemaRegistry` fetches schemas by id over the Confluent REST
API (``GET /schemas/ids/{id}``, ``GET /subjects/{subject}/versions/latest``) and caches them;
:class:`AvroDecoder` resolves each record from its writer schema to the *reader* schema (the
subject's latest version when the consumer starts, or the one given), so records written with
older or newer compatible versions land in one set of columns (fields a version lacks take
their defaults). A writer schema seen for the first time that adds top-level fields (with
defaults: a compatible new version) widens the reader schema (:meth:`AvroDecoder.evolved`):
the consumer then rolls its files, and the new files have the new columns (a dataset reads
old and new files with schema evolution: the old rows read nulls in the new columns).
:func:`arrow_type` derives the ORC (Arrow) columns from the reader schema:
records become structs, arrays lists, maps maps, ``["null", X]`` a nullable X, enums strings,
``decimal`` decimals, ``date`` dates, ``timestamp-millis``/``-micros`` timestamps.
"""

from __future__ import annotations

import io
import json
import logging
import struct
import threading
import urllib.parse
import urllib.request
from collections.abc import Sequence
from typing import Any

import pyarrow as pa

from aorc.errors import SchemaError
from aorc.kafka.avro_columns import FlatColumns, flat_plan

__all__ = ["AvroDecoder", "SchemaRegistry", "arrow_schema", "arrow_type", "widen"]

logger = logging.getLogger("aorc.kafka")

_PRIMITIVES: dict[str, pa.DataType] = {
    "boolean": pa.bool_(), "int": pa.int32(), "long": pa.int64(), "float": pa.float32(),
    "double": pa.float64(), "bytes": pa.binary(), "string": pa.string(), "null": pa.null()}


def arrow_type(schema: Any) -> pa.DataType:
    """The Arrow type of an Avro schema (parsed JSON).

    Raises:
        SchemaError: a union of more than null and one type, or an unknown type.
    """
    if isinstance(schema, list):
        rest = [s for s in schema if s != "null"]
        if len(rest) != 1:
            raise SchemaError(f"Avro union {schema}: only unions of null and one type map "
                              f"to ORC columns")
        return arrow_type(rest[0])
    if isinstance(schema, str):
        if schema in _PRIMITIVES:
            return _PRIMITIVES[schema]
        raise SchemaError(f"Avro type {schema!r}: named types must be inline")
    logical, kind = schema.get("logicalType"), schema.get("type")
    if logical == "decimal" and kind in ("bytes", "fixed"):
        return pa.decimal128(int(schema["precision"]), int(schema.get("scale", 0)))
    if logical == "date" and kind == "int":
        return pa.date32()
    if logical in ("timestamp-millis", "local-timestamp-millis") and kind == "long":
        return pa.timestamp("ms")
    if logical in ("timestamp-micros", "local-timestamp-micros") and kind == "long":
        return pa.timestamp("us")
    if logical == "uuid" and kind == "string":
        return pa.string()
    if kind == "record":
        return pa.struct([pa.field(f["name"], arrow_type(f["type"]))
                          for f in schema["fields"]])
    if kind == "array":
        return pa.list_(arrow_type(schema["items"]))
    if kind == "map":
        return pa.map_(pa.string(), arrow_type(schema["values"]))
    if kind == "enum":
        return pa.string()
    if kind == "fixed":
        return pa.binary()
    return arrow_type(kind)


def arrow_schema(schema: Any) -> pa.Schema:
    """The columns of an Avro record schema (parsed JSON or text)."""
    if isinstance(schema, str):
        schema = json.loads(schema)
    if not isinstance(schema, dict) or schema.get("type") != "record":
        raise SchemaError("an Avro value schema must be a record")
    return pa.schema(list(arrow_type(schema)))


def widen(reader: Any, writer: Any) -> Any:
    """The reader schema with the top-level fields of ``writer`` it lacks appended (a new
    compatible version's fields); ``reader`` itself when there are none. A new field without
    a default is left out (records of older versions could not be read with it).

    Args:
        reader: the reader record schema (parsed JSON).
        writer: a writer record schema (parsed JSON).

    Returns:
        The widened reader schema (a new object) or ``reader``.
    """
    if not isinstance(writer, dict) or writer.get("type") != "record":
        return reader
    names = {f["name"] for f in reader["fields"]}
    added = []
    for f in writer["fields"]:
        if f["name"] in names:
            continue
        if "default" not in f:
            logger.warning("Avro field %r of %s has no default: not added to the columns "
                           "(records of older versions could not be read)", f["name"],
                           writer.get("name"))
            continue
        added.append(f)
    return {**reader, "fields": [*reader["fields"], *added]} if added else reader


def _plain_uuids(schema: Any) -> Any:
    """``schema`` (parsed JSON) without its ``uuid`` logical types: fastavro reads them as
    ``uuid.UUID`` objects, which Arrow does not take (every record of such a schema became a
    dead letter); read as the strings they are stored as, they are the ORC column's values."""
    if isinstance(schema, list):
        return [_plain_uuids(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    return {k: _plain_uuids(v) for k, v in schema.items()
            if not (k == "logicalType" and v == "uuid")}


class SchemaRegistry:
    """A client of the Confluent schema-registry REST API, with a cache of schemas by id.

    Args:
        url: the registry's base URL.
        timeout: seconds per request.
    """

    def __init__(self, url: str, timeout: float = 10.0) -> None:
        self.url = url.rstrip("/")
        self.timeout = timeout
        self._by_id: dict[int, Any] = {}
        self._json: dict[int, Any] = {}
        self._missing: set[int] = set()  # ids the registry does not know
        self._lock = threading.Lock()

    def _get(self, path: str) -> Any:
        request = urllib.request.Request(self.url + path, headers={
            "Accept": "application/vnd.schemaregistry.v1+json"})
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                return json.loads(response.read())
        except OSError as exc:
            raise SchemaError(f"schema registry {path}: {exc}") from exc

    def schema(self, schema_id: int) -> Any:
        """The parsed (fastavro) schema of an id, fetched once."""
        with self._lock:
            found = self._by_id.get(schema_id)
            if schema_id in self._missing:
                raise SchemaError(f"schema registry: no schema of id {schema_id}")
            if found is None:
                import fastavro
                try:
                    text = self._get(f"/schemas/ids/{schema_id}")["schema"]
                except SchemaError as exc:
                    if getattr(exc.__cause__, "code", None) == 404:  # ids never change
                        self._missing.add(schema_id)
                    raise
                self._json[schema_id] = json.loads(text)
                found = self._by_id[schema_id] = fastavro.parse_schema(json.loads(text))
            return found

    def schema_json(self, schema_id: int) -> Any:
        """The schema (parsed JSON, as registered) of an id, fetched once."""
        self.schema(schema_id)
        return self._json[schema_id]

    def latest(self, subject: str) -> Any:
        """The latest schema (parsed JSON) of a subject."""
        quoted = urllib.parse.quote(subject, safe="")
        return json.loads(self._get(f"/subjects/{quoted}/versions/latest")["schema"])


class AvroDecoder:
    """Confluent-framed Avro values to Python rows of the reader schema.

    Args:
        registry: where writer schemas are found.
        reader: the reader schema (parsed JSON).
    """

    def __init__(self, registry: SchemaRegistry, reader: Any) -> None:
        import fastavro
        self.registry = registry
        self.reader_json = reader
        self.reader = fastavro.parse_schema(_plain_uuids(reader))
        self._parse = fastavro.parse_schema
        self._read = fastavro.schemaless_reader
        self.writer_ids: set[int] = set()
        self._looked_at: set[int] = set()
        self._writers: dict[int, tuple[Any, Any]] = {}  # id: (writer, reader or None)
        self._flat: dict[int, FlatColumns | None] = {}  # id: the fast path, or None
        self.polls_at_once = 0  # values decoded by columns() (counted in polls)

    def evolved(self, values: Sequence[bytes | None]) -> Any | None:
        """The reader schema widened (:func:`widen`) by the writer schemas of ``values``
        not seen before, or None when they add no column. Unknown ids are left to
        :meth:`decode` (dead letters).

        Args:
            values: Confluent-framed values.
        """
        ids = {int.from_bytes(v[1:5], "big") for v in values
               if v is not None and len(v) >= 5 and v[0] == 0}
        reader = self.reader_json
        for schema_id in sorted(ids - self._looked_at):
            self._looked_at.add(schema_id)
            try:
                writer = self.registry.schema_json(schema_id)
            except SchemaError:
                continue
            reader = widen(reader, writer)
        return None if reader is self.reader_json else reader

    def use(self, reader: Any) -> None:
        """Read with ``reader`` (parsed JSON) from now on."""
        self.reader = self._parse(_plain_uuids(reader))
        self.reader_json = reader
        self._writers.clear()
        self._flat.clear()

    def columns(self, values: Sequence[bytes | None]) -> list[pa.Array] | None:
        """The reader schema's columns of ``values`` decoded at once
        (:class:`~aorc.kafka.avro_columns.FlatColumns`: a flat schema, every value written
        with the reader schema itself and well-formed), or None: decode them one by one
        (:meth:`decode_many`) to find the dead letters.

        Args:
            values: Confluent-framed values.
        """
        first = values[0] if values else None
        if first is None or len(first) < 5 or first[0] != 0:
            return None
        schema_id = int.from_bytes(first[1:5], "big")
        if schema_id not in self._flat:
            self._flat[schema_id] = self._flat_columns(schema_id)
        flat = self._flat[schema_id]
        columns = None if flat is None else flat.decode(values)
        self.polls_at_once += columns is not None
        return columns

    def _flat_columns(self, schema_id: int) -> FlatColumns | None:
        try:
            plain = self.registry.schema_json(schema_id) == self.reader_json
        except SchemaError:
            return None
        plan = flat_plan(self.reader_json) if plain else None
        if plan is None:
            return None
        self.writer_ids.add(schema_id)
        return FlatColumns(list(arrow_type(self.reader_json)), plan, schema_id)

    def decode(self, value: bytes | None) -> dict[str, Any]:
        """One value's row.

        Raises:
            SchemaError: not in the wire format, an unknown id, or not readable with the
                reader schema.
        """
        if value is None or len(value) < 5 or value[0] != 0:
            raise SchemaError("not Avro in the Confluent wire format (magic byte 0, schema id)")
        (schema_id,) = struct.unpack(">I", value[1:5])
        found = self._writers.get(schema_id)
        if found is None:  # the writer schema, and None when it is the reader's (no
            writer = self.registry.schema(schema_id)  # resolution: faster)
            plain = self.registry.schema_json(schema_id) == self.reader_json
            # fastavro converts logical types by the reader schema (the writer's when there
            # is none): the reader's, without its uuid conversion (see _plain_uuids)
            found = self._writers[schema_id] = ((self.reader, None) if plain
                                                else (writer, self.reader))
            self.writer_ids.add(schema_id)
        try:
            row = self._read(io.BytesIO(value[5:]), *found)
        except Exception as exc:  # fastavro raises many kinds on bad bytes
            raise SchemaError(f"Avro (schema id {schema_id}) does not decode: {exc}") from exc
        if not isinstance(row, dict):
            raise SchemaError("the Avro value is not a record")
        return row

    def decode_many(self, values: Sequence[bytes | None]) -> list[dict[str, Any] | str]:
        """Each value's row, or the reason it has none."""
        out: list[dict[str, Any] | str] = []
        for value in values:
            try:
                out.append(self.decode(value))
            except SchemaError as exc:
                out.append(str(exc))
        return out
