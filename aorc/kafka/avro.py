"""Avro values in the Confluent wire format, with a schema registry (``pip install fastavro``).

A value is a zero byte, the writer schema's id (4 bytes, big-endian) in the registry and the
Avro binary encoding. :class:`SchemaRegistry` fetches schemas by id over the Confluent REST
API (``GET /schemas/ids/{id}``, ``GET /subjects/{subject}/versions/latest``) and caches them;
:class:`AvroDecoder` resolves each record from its writer schema to the *reader* schema (the
subject's latest version when the consumer starts, or the one given), so records written with
older or newer compatible versions land in one set of columns (fields a version lacks take
their defaults). :func:`arrow_type` derives the ORC (Arrow) columns from the reader schema:
records become structs, arrays lists, maps maps, ``["null", X]`` a nullable X, enums strings,
``decimal`` decimals, ``date`` dates, ``timestamp-millis``/``-micros`` timestamps.
"""

from __future__ import annotations

import io
import json
import struct
import threading
import urllib.parse
import urllib.request
from collections.abc import Sequence
from typing import Any

import pyarrow as pa

from aorc.errors import SchemaError

__all__ = ["AvroDecoder", "SchemaRegistry", "arrow_schema", "arrow_type"]

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
            if found is None:
                import fastavro
                text = self._get(f"/schemas/ids/{schema_id}")["schema"]
                found = self._by_id[schema_id] = fastavro.parse_schema(json.loads(text))
            return found

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
        self.reader = fastavro.parse_schema(reader)
        self._read = fastavro.schemaless_reader
        self.writer_ids: set[int] = set()

    def decode(self, value: bytes | None) -> dict[str, Any]:
        """One value's row.

        Raises:
            SchemaError: not in the wire format, an unknown id, or not readable with the
                reader schema.
        """
        if value is None or len(value) < 5 or value[0] != 0:
            raise SchemaError("not Avro in the Confluent wire format (magic byte 0, schema id)")
        (schema_id,) = struct.unpack(">I", value[1:5])
        writer = self.registry.schema(schema_id)
        self.writer_ids.add(schema_id)
        try:
            row = self._read(io.BytesIO(value[5:]), writer, self.reader)
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
