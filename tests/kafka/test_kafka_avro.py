"""aorc.kafka's avro format against the real broker: values serialized by confluent-kafka's
AvroSerializer (the real Confluent wire format) through a schema-registry server
(tests/helpers/schema_registry.py), two compatible schema versions, records, arrays, maps,
nullable unions, enums, decimals, dates and timestamps; read back by pyarrow.orc and compared
with the values produced, every offset exactly once (rows or dead letters)."""

from __future__ import annotations

import asyncio
import datetime
import decimal
import json
import pathlib
from collections import Counter
from typing import Any

import pyarrow as pa
import pytest
from helpers.kafka_broker import (
    GROUP_OPTIONS,
    Broker,
    consume_to_ends,
    create_topic,
    stored_once,
    topic_name,
    wait_consumed,
)
from helpers.schema_registry import RegistryServer

from aorc.errors import SchemaError
from aorc.kafka import KafkaToOrc
from aorc.kafka.avro import arrow_schema

V1: dict[str, Any] = {"type": "record", "name": "Event", "fields": [
    {"name": "id", "type": "long"},
    {"name": "name", "type": "string"},
    {"name": "tags", "type": {"type": "array", "items": "string"}},
    {"name": "attrs", "type": {"type": "map", "values": "long"}},
    {"name": "kind", "type": {"type": "enum", "name": "Kind", "symbols": ["A", "B"]}},
    {"name": "amount", "type": {"type": "bytes", "logicalType": "decimal", "precision": 10,
                                "scale": 2}},
    {"name": "day", "type": {"type": "int", "logicalType": "date"}},
    {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
    {"name": "at_us", "type": {"type": "long", "logicalType": "timestamp-micros"}},
    {"name": "note", "type": ["null", "string"], "default": None},
    {"name": "inner", "type": {"type": "record", "name": "Inner",
                               "fields": [{"name": "x", "type": "int"}]}},
]}
V2 = {**V1, "fields": [*V1["fields"], {"name": "extra", "type": ["null", "string"],
                                       "default": None}]}
UTC = datetime.UTC


def event(i: int, v2: bool) -> dict[str, Any]:
    out = {"id": i, "name": f"n{i}", "tags": [f"t{j}" for j in range(i % 3)],
           "attrs": {f"k{j}": j * i for j in range(i % 2 + 1)}, "kind": "AB"[i % 2],
           "amount": decimal.Decimal(i) / 4 + decimal.Decimal("0.01"),
           "day": datetime.date(2026, 11, 1) + datetime.timedelta(days=i % 20),
           "at": datetime.datetime(2026, 11, 28, 21, 0, tzinfo=UTC)
           + datetime.timedelta(milliseconds=i * 37),
           "at_us": datetime.datetime(2026, 11, 28, 21, 0, tzinfo=UTC)
           + datetime.timedelta(microseconds=i * 37),
           "note": None if i % 4 == 0 else f"note {i}", "inner": {"x": i * 2}}
    if v2:
        out["extra"] = f"extra {i}"
    return out


def test_arrow_types_of_avro() -> None:
    schema = arrow_schema(json.dumps(V2))
    assert schema.field("tags").type == pa.list_(pa.string())
    assert schema.field("attrs").type == pa.map_(pa.string(), pa.int64())
    assert schema.field("kind").type == pa.string()
    assert schema.field("amount").type == pa.decimal128(10, 2)
    assert schema.field("day").type == pa.date32()
    assert schema.field("at").type == pa.timestamp("ms")
    assert schema.field("at_us").type == pa.timestamp("us")
    assert schema.field("note").type == pa.string()
    assert schema.field("inner").type == pa.struct([("x", pa.int32())])
    with pytest.raises(SchemaError, match="unions of null and one type"):
        arrow_schema({"type": "record", "name": "r",
                      "fields": [{"name": "u", "type": ["int", "string"]}]})


async def test_avro_with_registry_and_schema_evolution(
        kafka_broker: Broker, schema_registry: RegistryServer, tmp_path: pathlib.Path) -> None:
    from aiokafka import AIOKafkaProducer
    from confluent_kafka.schema_registry import SchemaRegistryClient
    from confluent_kafka.schema_registry.avro import AvroSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    topic, group = topic_name(), topic_name("g")
    await create_topic(kafka_broker.bootstrap, topic)
    client = SchemaRegistryClient({"url": schema_registry.url})
    context = SerializationContext(topic, MessageField.VALUE)
    values: list[tuple[bytes, dict[str, Any] | None]] = []
    for version, schema in ((1, V1), (2, V2)):
        serialize = AvroSerializer(client, json.dumps(schema))
        for i in range(150 * (version - 1), 150 * version):
            values.append((serialize(event(i, version == 2), context), event(i, version == 2)))
    values.insert(40, (b"not avro", None))
    values.insert(200, (b"\x00\x00\x00\x00\x63garbage", None))  # an unknown schema id
    producer = AIOKafkaProducer(bootstrap_servers=kafka_broker.bootstrap,
                                enable_idempotence=False)
    await producer.start()
    sent: dict[tuple[int, int], dict[str, Any] | None] = {}
    try:
        for i, (value, original) in enumerate(values):
            meta = await producer.send_and_wait(topic, value, partition=i % 3)
            sent[(meta.partition, meta.offset)] = original
    finally:
        await producer.stop()
    assert len(schema_registry.subjects[f"{topic}-value"]) == 2
    ends = {p: max(o for q, o in sent if q == p) + 1 for p in range(3)}
    async with KafkaToOrc(bootstrap_servers=kafka_broker.bootstrap, topics=[topic],
                          group=group, dest=str(tmp_path / "data"), format="avro",
                          schema_registry=schema_registry.url, max_rows=60, poll_ms=200,
                          dead_letter=str(tmp_path / "dead"),
                          consumer_options=dict(GROUP_OPTIONS)) as pipe:
        await consume_to_ends(pipe, ends)
    assert pipe.decoder.avro.writer_ids == {1, 2}
    by_id = [r for r in schema_registry.requests if r.startswith("GET /schemas/ids/")]
    assert sorted(by_id) == ["GET /schemas/ids/1", "GET /schemas/ids/2",
                             "GET /schemas/ids/99"]  # each fetched once (cached)
    rows, dead = stored_once(sent, tmp_path / "data", tmp_path / "dead")
    assert {(r["partition"], r["offset"]) for r in dead} == {
        k for k, v in sent.items() if v is None}
    for r in rows:
        want = dict(sent[(r["kafka_partition"], r["kafka_offset"])] or {})
        want.setdefault("extra", None)  # v1 records read with v2: the default
        got = {k: r[k] for k in want}
        got["attrs"] = dict(got["attrs"])
        got["at"] = got["at"].replace(tzinfo=UTC)
        got["at_us"] = got["at_us"].replace(tzinfo=UTC)
        assert got == want


async def test_new_schema_version_rolls_the_files(
        kafka_broker: Broker, schema_registry: RegistryServer, tmp_path: pathlib.Path) -> None:
    """The consumer starts on v1 (the only version); v2 (a new nullable field) appears in the
    middle, then late v1 records: the files open when the first v2 record comes are cut and
    committed, later files have the new column, and aorc.read_dataset reads both (nulls for
    the old rows, the v2 default for the late v1 ones)."""
    import pyarrow.orc as po
    from aiokafka import AIOKafkaProducer
    from confluent_kafka.schema_registry import SchemaRegistryClient
    from confluent_kafka.schema_registry.avro import AvroSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    import aorc

    topic, group = topic_name(), topic_name("g")
    await create_topic(kafka_broker.bootstrap, topic)
    client = SchemaRegistryClient({"url": schema_registry.url})
    context = SerializationContext(topic, MessageField.VALUE)
    v1 = AvroSerializer(client, json.dumps(V1))
    sent: dict[tuple[int, int], dict[str, Any]] = {}
    version: dict[tuple[int, int], int] = {}
    producer = AIOKafkaProducer(bootstrap_servers=kafka_broker.bootstrap,
                                enable_idempotence=False)

    async def send(first: int, count: int, serialize: AvroSerializer, v2: bool) -> None:
        for i in range(first, first + count):
            meta = await producer.send_and_wait(topic, serialize(event(i, v2), context),
                                                partition=i % 3)
            sent[(meta.partition, meta.offset)] = event(i, v2)
            version[(meta.partition, meta.offset)] = 2 if v2 else 1

    def ends() -> dict[int, int]:
        return {p: max(o for q, o in sent if q == p) + 1 for p in range(3)}

    await producer.start()
    try:
        await send(0, 200, v1, False)
        assert len(schema_registry.subjects[f"{topic}-value"]) == 1
        async with KafkaToOrc(bootstrap_servers=kafka_broker.bootstrap, topics=[topic],
                              group=group, dest=str(tmp_path / "data"), format="avro",
                              schema_registry=schema_registry.url, max_rows=50, poll_ms=200,
                              consumer_options=dict(GROUP_OPTIONS)) as pipe:
            task = asyncio.create_task(pipe.run())
            await asyncio.wait_for(wait_consumed(pipe, ends()), 60)
            assert "extra" not in pipe.schema.names and pipe.sink.open_files > 0
            open_streams = sum(1 for s in pipe.sink._streams.values() if s.files)
            await send(200, 150, AvroSerializer(client, json.dumps(V2)), True)
            assert len(schema_registry.subjects[f"{topic}-value"]) == 2
            await send(350, 60, v1, False)  # a late producer still on v1
            await asyncio.wait_for(wait_consumed(pipe, ends()), 60)
            pipe.stop()
            await task
    finally:
        await producer.stop()
    assert pipe.schema_changes == 1 and pipe.health()["schema_changes"] == 1
    assert pipe.sink.stats.cuts.get("schema") == open_streams >= 1
    # every (partition, offset) once; v1 files before v2 files in each partition
    seen: Counter[tuple[int, int]] = Counter()
    last_old = dict.fromkeys(range(3), -1)
    first_new = dict.fromkeys(range(3), 1 << 62)
    for path in sorted((tmp_path / "data").rglob("*.orc")):
        table = po.ORCFile(str(path)).read()
        new = "extra" in table.schema.names
        for r in table.to_pylist():
            key = (r["kafka_partition"], r["kafka_offset"])
            seen[key] += 1
            p = key[0]
            if new:
                first_new[p] = min(first_new[p], key[1])
                assert r["extra"] == sent[key].get("extra")  # None: a late v1 record
            else:
                last_old[p] = max(last_old[p], key[1])
                assert version[key] == 1
    assert set(seen) == set(sent) and max(seen.values()) == 1
    assert all(last_old[p] < first_new[p] for p in range(3)), (last_old, first_new)
    assert all(last_old[p] >= 0 and first_new[p] < 1 << 62 for p in range(3))
    # the dataset reads old and new files with schema evolution
    table = await aorc.read_dataset(str(tmp_path / "data"))
    assert "extra" in table.schema.names and table.num_rows == len(sent)
    got = {(r["kafka_partition"], r["kafka_offset"]): r["extra"]
           for r in table.select(["kafka_partition", "kafka_offset", "extra"]).to_pylist()}
    assert got == {k: v.get("extra") for k, v in sent.items()}
    assert sum(v is not None for v in got.values()) == 150


FLAT: dict[str, Any] = {"type": "record", "name": "Flat", "fields": [
    {"name": "id", "type": "long"}, {"name": "name", "type": "string"},
    {"name": "score", "type": ["null", "double"]},
    {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}}]}


async def test_flat_schema_at_once_with_dead_letters(
        kafka_broker: Broker, schema_registry: RegistryServer, tmp_path: pathlib.Path) -> None:
    """A flat schema's polls are decoded at once (aorc.kafka.avro_columns); the polls holding
    a value that is cut short or not UTF-8 are decoded one by one: those values are dead
    letters with fastavro's reason, every other record a row equal to what was produced,
    every offset once."""
    from aiokafka import AIOKafkaProducer
    from confluent_kafka.schema_registry import SchemaRegistryClient
    from confluent_kafka.schema_registry.avro import AvroSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    topic, group = topic_name(), topic_name("g")
    await create_topic(kafka_broker.bootstrap, topic)
    serialize = AvroSerializer(SchemaRegistryClient({"url": schema_registry.url}),
                               json.dumps(FLAT))
    context = SerializationContext(topic, MessageField.VALUE)
    at = datetime.datetime(2026, 11, 29, tzinfo=UTC)
    values: list[tuple[bytes, dict[str, Any] | None]] = []
    for i in range(900):
        row = {"id": i, "name": f"név {i}", "score": None if i % 5 == 0 else i / 8,
               "at": at + datetime.timedelta(milliseconds=i)}
        values.append((serialize(row, context), row))
    good = values[0][0]
    values.insert(300, (good[:-3], None))  # cut short
    values.insert(700, (good[:7] + b"\xff\xfe" + good[9:], None))  # not UTF-8
    producer = AIOKafkaProducer(bootstrap_servers=kafka_broker.bootstrap,
                                enable_idempotence=False, linger_ms=5)
    await producer.start()
    sent: dict[tuple[int, int], dict[str, Any] | None] = {}
    try:
        sends = [await producer.send(topic, value, partition=i % 3)
                 for i, (value, _) in enumerate(values)]
        for (_, original), meta in zip(values, await asyncio.gather(*sends), strict=True):
            sent[(meta.partition, meta.offset)] = original
    finally:
        await producer.stop()
    ends = {p: max(o for q, o in sent if q == p) + 1 for p in range(3)}
    async with KafkaToOrc(bootstrap_servers=kafka_broker.bootstrap, topics=[topic],
                          group=group, dest=str(tmp_path / "data"), format="avro",
                          schema_registry=schema_registry.url, max_rows=200, poll_ms=200,
                          max_records=50, dead_letter=str(tmp_path / "dead"),
                          consumer_options=dict(GROUP_OPTIONS)) as pipe:
        await consume_to_ends(pipe, ends)
    avro = pipe.decoder.avro
    assert avro.polls_at_once >= 10  # the fast path ran, and not for the two odd polls
    rows, dead = stored_once(sent, tmp_path / "data", tmp_path / "dead")
    assert {(r["partition"], r["offset"]) for r in dead} == {
        k for k, v in sent.items() if v is None}
    for r in dead:  # the reasons of the per-record path
        assert r["reason"] == avro.decode_many([r["value"]])[0]
    assert any("utf-8" in r["reason"].lower() for r in dead)
    for r in rows:
        want = sent[(r["kafka_partition"], r["kafka_offset"])]
        assert want is not None
        assert {**{k: r[k] for k in want}, "at": r["at"].replace(tzinfo=UTC)} == want
