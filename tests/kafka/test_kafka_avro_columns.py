"""The avro format's fast path (aorc.kafka.avro_columns and its Cython kernel) against
fastavro's own decoding and against aorc's per-record path: seeded random flat schemas (every
kind, nullable either way round) and values written by fastavro, then values the fast path
must hand back to the per-record path (cut short, bad header, another schema id, out of
range, not UTF-8), whose rows and dead letters must be exactly those of the per-record path.
No broker: the records are plain objects with aiokafka's attributes."""

from __future__ import annotations

import datetime
import io
import random
from collections.abc import Callable
from typing import Any

import fastavro
import pyarrow as pa
import pytest
from helpers.kafka_broker import FakeRecord as Record

from aorc.kafka.avro import AvroDecoder, arrow_schema
from aorc.kafka.avro_columns import flat_plan
from aorc.kafka.records import RecordDecoder, row_schema

UTC = datetime.UTC
HEADER = b"\x00\x00\x00\x00\x07"  # magic byte, schema id 7


class Registry:
    """The registry of one schema, id 7 (another id is unknown)."""

    def __init__(self, schema: dict[str, Any]) -> None:
        self.json = schema
        self.parsed = fastavro.parse_schema(schema)

    def schema(self, schema_id: int) -> Any:
        from aorc.errors import SchemaError
        if schema_id != 7:
            raise SchemaError(f"schema registry: no schema of id {schema_id}")
        return self.parsed

    def schema_json(self, schema_id: int) -> Any:
        self.schema(schema_id)
        return self.json


def _text(rng: random.Random) -> str:
    alphabet = "abcXYZ 09-_/é€日本\U0001f600"
    return "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 12)))


#: Per kind: its schema and a generator of values.
KINDS: dict[str, tuple[Any, Callable[[random.Random], Any]]] = {
    "null": ("null", lambda rng: None),
    "boolean": ("boolean", lambda rng: rng.random() < 0.5),
    "int": ("int", lambda rng: rng.randrange(-2**31, 2**31)),
    "long": ("long", lambda rng: rng.randrange(-2**63, 2**63)),
    "float": ("float", lambda rng: rng.uniform(-1e6, 1e6)),
    "double": ("double", lambda rng: rng.uniform(-1e300, 1e300)),
    "string": ("string", _text),
    "bytes": ("bytes", lambda rng: rng.randbytes(rng.randrange(0, 9))),
    "fixed": ({"type": "fixed", "name": "F{n}", "size": 3}, lambda rng: rng.randbytes(3)),
    "enum": ({"type": "enum", "name": "E{n}", "symbols": ["A", "B", "C"]},
             lambda rng: rng.choice("ABC")),
    "date": ({"type": "int", "logicalType": "date"},
             lambda rng: datetime.date(1950, 1, 1) + datetime.timedelta(rng.randrange(40000))),
    "timestamp-millis": ({"type": "long", "logicalType": "timestamp-millis"},
                         lambda rng: datetime.datetime(2026, 1, 1, tzinfo=UTC)
                         + datetime.timedelta(milliseconds=rng.randrange(-10**12, 10**12))),
    "timestamp-micros": ({"type": "long", "logicalType": "timestamp-micros"},
                         lambda rng: datetime.datetime(2026, 1, 1, tzinfo=UTC)
                         + datetime.timedelta(microseconds=rng.randrange(-10**15, 10**15))),
    "local-timestamp-millis": (
        {"type": "long", "logicalType": "local-timestamp-millis"},
        lambda rng: datetime.datetime(2026, 1, 1)
        + datetime.timedelta(milliseconds=rng.randrange(-10**12, 10**12))),
}


def _nullable(make: Callable[[random.Random], Any]) -> Callable[[random.Random], Any]:
    return lambda rng: None if rng.random() < 0.3 else make(rng)


def random_schema(rng: random.Random) -> tuple[dict[str, Any], list[Callable[..., Any]]]:
    """A flat record schema of 1..12 random fields, and each field's value generator."""
    fields, makers = [], []
    for n in range(rng.randrange(1, 13)):
        kind = rng.choice(sorted(KINDS))
        schema, make = KINDS[kind]
        if isinstance(schema, dict) and "name" in schema:
            schema = {**schema, "name": schema["name"].format(n=n)}
        nullable = kind != "null" and rng.random() < 0.4
        if nullable:
            schema = ["null", schema] if rng.random() < 0.5 else [schema, "null"]
            make = _nullable(make)
        fields.append({"name": f"f{n}_{kind.replace('-', '_')}", "type": schema})
        makers.append(make)
    return {"type": "record", "name": "R", "fields": fields}, makers


def encode(parsed: Any, row: dict[str, Any]) -> bytes:
    out = io.BytesIO()
    out.write(HEADER)
    fastavro.schemaless_writer(out, parsed, row)
    return out.getvalue()


def records(values: list[bytes | None]) -> list[Record]:
    return [Record("t", 1, 100 + i, 1_700_000_000_000 + i, None, v)
            for i, v in enumerate(values)]


def decoders(schema: dict[str, Any]) -> tuple[AvroDecoder, RecordDecoder]:
    avro = AvroDecoder(Registry(schema), schema)  # type: ignore[arg-type]
    return avro, RecordDecoder("avro", row_schema("avro", arrow_schema(schema)), avro)


def per_record(decoder: RecordDecoder, recs: list[Record]) -> Any:
    """aorc's per-record path (fastavro's reader per value, then the rows' columns)."""
    rows = decoder.avro.decode_many([r.value for r in recs])
    return decoder._rows(list(zip(recs, rows, strict=True)))


def plain(value: Any) -> Any:
    """A fastavro value as Arrow's to_pylist gives it (timestamps naive, in UTC)."""
    if isinstance(value, datetime.datetime) and value.tzinfo is not None:
        return value.astimezone(UTC).replace(tzinfo=None)
    return value


@pytest.mark.parametrize("seed", range(12))
def test_fast_path_matches_fastavro_and_the_per_record_path(seed: int) -> None:
    rng = random.Random(seed)
    schema, makers = random_schema(rng)
    assert flat_plan(schema) is not None
    parsed = fastavro.parse_schema(schema)
    rows = [{f["name"]: make(rng) for f, make in zip(schema["fields"], makers, strict=True)}
            for _ in range(rng.randrange(1, 300))]
    values = [encode(parsed, row) for row in rows]
    avro, decoder = decoders(schema)
    batch, offsets, dead = decoder.decode(records(values))
    assert avro.polls_at_once == 1  # the fast path decoded them
    assert not dead and offsets == [100 + i for i in range(len(rows))]
    # fastavro's own decoding of the same values
    expected = [fastavro.schemaless_reader(io.BytesIO(v[5:]), parsed, None) for v in values]
    for name in batch.schema.names[:-3]:
        got = batch.column(name).to_pylist()
        assert got == [plain(e[name]) for e in expected], name
    # aorc's per-record path
    slow, slow_offsets, slow_dead = per_record(decoder, records(values))
    assert batch.equals(slow) and slow_offsets == offsets and not slow_dead


EVENT = {"type": "record", "name": "Event", "fields": [
    {"name": "id", "type": "long"}, {"name": "n", "type": "int"},
    {"name": "ok", "type": "boolean"}, {"name": "name", "type": ["null", "string"]},
    {"name": "kind", "type": {"type": "enum", "name": "K", "symbols": ["A", "B"]}},
    {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}}]}
ROW = {"id": 5, "n": 6, "ok": True, "name": "x", "kind": "B", "at": 1_700_000_000_000}


def _zigzag(v: int) -> bytes:
    z, out = (v << 1) ^ (v >> 63), bytearray()
    while z > 0x7F:
        out.append(z & 0x7F | 0x80)
        z >>= 7
    return bytes([*out, z])


def _value(id_: int = 5, n: bytes = b"\x0c", ok: bytes = b"\x01", name: bytes = b"\x02\x02x",
           kind: bytes = b"\x02", at: int = 1_700_000_000_000) -> bytes:
    return HEADER + _zigzag(id_) + n + ok + name + kind + _zigzag(at)


#: Values the fast path hands back; the per-record path decides (a row or a dead letter).
ODD = {
    "cut short": _value()[:-2],
    "empty": b"",
    "no value": None,
    "not framed": b"\x01" + _value()[1:],
    "unknown id": b"\x00\x00\x00\x00\x63" + _value()[5:],
    "int over 32 bits": _value(n=_zigzag(2**31)),
    "boolean byte 2": _value(ok=b"\x02"),
    "union index 2": _value(name=b"\x04"),
    "enum index 2": _value(kind=b"\x04"),
    "not UTF-8": _value(name=b"\x02\x02\xff"),
    "a surrogate": _value(name=b"\x02\x06\xed\xa0\x80"),
    "overlong": _value(name=b"\x02\x04\xc0\xaf"),
    "past U+10FFFF": _value(name=b"\x02\x08\xf4\x90\x80\x80"),
    "year 9500": _value(at=237_000_000_000_000),
    "varint of 11 bytes": HEADER + b"\x80" * 10 + b"\x01" + _value()[6:],
}


def test_the_odd_values_fixture_is_right() -> None:
    parsed = fastavro.parse_schema(EVENT)
    assert encode(parsed, ROW) == _value()


@pytest.mark.parametrize("case", sorted(ODD))
def test_odd_values_go_the_per_record_way(case: str) -> None:
    """A poll with one odd value among good ones: rows and dead letters exactly those of
    the per-record path (fastavro's reasons), for the odd value in every position."""
    parsed = fastavro.parse_schema(EVENT)
    good = [encode(parsed, {**ROW, "id": i}) for i in range(4)]
    for where in range(5):
        values = [*good[:where], ODD[case], *good[where:]]
        avro, decoder = decoders(EVENT)
        assert avro.columns(values) is None
        batch, offsets, dead = decoder.decode(records(values))
        assert avro.polls_at_once == 0
        slow, slow_offsets, slow_dead = per_record(decoders(EVENT)[1], records(values))
        assert batch.equals(slow) and offsets == slow_offsets and dead == slow_dead
        assert batch.num_rows + len(dead) == len(values)
        if case in ("cut short", "not UTF-8", "a surrogate", "unknown id", "no value"):
            assert [d.offset for d in dead] == [100 + where]


def test_utf8_checks_agree_with_python() -> None:
    """Arrow's UTF-8 validation (the fast path's) refuses exactly what Python's strict
    decoding (fastavro's) refuses."""
    samples = [b"\xed\xa0\x80", b"\xed\xbf\xbf", b"\xc0\x80", b"\xe0\x80\x80",
               b"\xf0\x80\x80\x80", b"\xf4\x90\x80\x80", b"\xf8\x88\x80\x80\x80", b"\x80",
               b"\xc3", b"\xe2\x82", b"\xef\xbf\xbf", b"\xf4\x8f\xbf\xbf", b"\xee\x80\x80",
               b"\xc2\x80", b"\xdf\xbf", b"a\xe2\x82\xac", b"\xfe", b"\xff"]
    rng = random.Random(3)
    samples += [rng.randbytes(rng.randrange(1, 5)) for _ in range(2000)]
    for sample in samples:
        try:
            sample.decode()
            python = True
        except UnicodeDecodeError:
            python = False
        array = pa.Array.from_buffers(pa.string(), 1, [
            None, pa.py_buffer(pa.array([0, len(sample)], pa.int32()).buffers()[1]),
            pa.py_buffer(sample)])
        try:
            array.validate(full=True)
            arrow = True
        except pa.ArrowInvalid:
            arrow = False
        assert arrow == python, sample


def test_plans() -> None:
    assert flat_plan(EVENT) is not None
    for field_type in ({"type": "array", "items": "int"}, {"type": "map", "values": "int"},
                       ["null", "int", "string"], ["int", "string"],
                       {"type": "bytes", "logicalType": "decimal", "precision": 4},
                       {"type": "string", "logicalType": "uuid"},
                       {"type": "record", "name": "I", "fields": []}):
        schema = {"type": "record", "name": "R", "fields": [{"name": "a", "type": "int"},
                                                           {"name": "b", "type": field_type}]}
        assert flat_plan(schema) is None, field_type
    assert flat_plan({"type": "array", "items": "int"}) is None


def test_other_reader_schema_goes_the_per_record_way() -> None:
    """Values written with a schema other than the reader's (resolution) are not decoded
    at once."""
    parsed = fastavro.parse_schema(EVENT)
    reader = {**EVENT, "fields": [*EVENT["fields"], {"name": "z", "type": ["null", "int"],
                                                     "default": None}]}
    avro = AvroDecoder(Registry(EVENT), reader)  # type: ignore[arg-type]
    values: list[bytes | None] = [encode(parsed, ROW)]
    assert avro.columns(values) is None
    row = avro.decode_many(values)[0]
    assert isinstance(row, dict) and row["z"] is None and row["id"] == 5


def test_uuid_fields_read_as_their_strings() -> None:
    # fastavro reads a uuid logical type as uuid.UUID, which Arrow refused: every record of
    # such a schema became a dead letter.
    import uuid

    schema = {"type": "record", "name": "U", "fields": [
        {"name": "id", "type": {"type": "string", "logicalType": "uuid"}},
        {"name": "maybe", "type": ["null", {"type": "string", "logicalType": "uuid"}]},
        {"name": "many", "type": {"type": "array",
                                  "items": {"type": "string", "logicalType": "uuid"}}}]}
    rng = random.Random(7)
    ids = [uuid.UUID(int=rng.getrandbits(128)) for _ in range(5)]
    rows = [{"id": ids[i], "maybe": None if i % 2 else ids[-1 - i], "many": ids[:i]}
            for i in range(5)]
    parsed = fastavro.parse_schema(schema)
    values = [encode(parsed, row) for row in rows]
    avro, decoder = decoders(schema)
    batch, offsets, dead = decoder.decode(records(values))
    assert not dead and offsets == [100 + i for i in range(5)]
    assert batch.column("id").to_pylist() == [str(u) for u in ids]
    assert batch.column("maybe").to_pylist() == [str(ids[4]), None, str(ids[2]), None,
                                                 str(ids[0])]
    assert batch.column("many").to_pylist() == [[str(u) for u in ids[:i]] for i in range(5)]
    # aorc's per-record path (the one these values take) gives the same batch.
    slow, _, slow_dead = per_record(decoder, records(values))
    assert batch.equals(slow) and not slow_dead
