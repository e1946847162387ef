"""aorc.kafka's records to rows (json, raw, dead letters) and its durable-offset tracking,
without a broker (and a member that lost its group); the rows are compared with Python's json
module's reading."""

from __future__ import annotations

import json
import pathlib

import pyarrow as pa
import pytest
from helpers.kafka_broker import FakeRecord as Record

from aorc.errors import SchemaError
from aorc.kafka.progress import PartitionProgress
from aorc.kafka.records import RecordDecoder, dead_letter_batch, row_schema


def records(values: list[bytes | None]) -> list[Record]:
    return [Record("t", 1, 10 + 2 * i, 1_700_000_000_000 + i, b"k%d" % i, v)
            for i, v in enumerate(values)]


def test_json_fast_path_matches_json_module() -> None:
    schema = row_schema("json", "struct<n:int,s:string,x:double,l:array<int>>")
    values = [json.dumps({"n": i, "s": f"v{i}", "x": i / 3, "l": [i, i + 1], "extra": 1})
              for i in range(50)] + ['{"n": null}']
    batch, offsets, dead = RecordDecoder("json", schema).decode(
        records([v.encode() for v in values]))
    assert not dead and offsets == [10 + 2 * i for i in range(51)]
    expected = [json.loads(v) for v in values]
    assert batch.column("n").to_pylist() == [e.get("n") for e in expected]
    assert batch.column("s").to_pylist() == [e.get("s") for e in expected]
    assert batch.column("l").to_pylist() == [e.get("l") for e in expected]
    assert batch.column("kafka_offset").to_pylist() == offsets
    assert batch.column("kafka_partition").to_pylist() == [1] * 51
    assert batch.schema == schema


@pytest.mark.parametrize("bad, reason", [
    (b"{broken", "not JSON"), (b"[1, 2]", "not a JSON object"),
    (b'{"n": "x"}', "does not fit"), (None, "not a JSON object"),
    (b"", "not JSON"), (b'{"n": 99999999999}', "does not fit")])
def test_json_dead_letters(bad: bytes | None, reason: str) -> None:
    schema = row_schema("json", "struct<n:int>")
    recs = records([b'{"n": 1}', bad, b'{"n": 3}'])
    batch, offsets, dead = RecordDecoder("json", schema).decode(recs)
    assert batch.column("n").to_pylist() == [1, 3]
    assert offsets == [10, 14]
    assert [(d.offset, d.value) for d in dead] == [(12, bad)]
    assert reason in dead[0].reason
    rows = dead_letter_batch(dead).to_pylist()
    assert rows[0]["offset"] == 12 and rows[0]["key"] == b"k1" and rows[0]["topic"] == "t"


def test_json_values_with_newlines_take_the_slow_path() -> None:
    schema = row_schema("json", "struct<s:string>")
    batch, offsets, dead = RecordDecoder("json", schema).decode(
        records([b'{\n"s": "a"}', b'{"s": "b\\nc"}']))
    assert batch.column("s").to_pylist() == ["a", "b\nc"] and not dead


def test_raw_keeps_keys_and_values() -> None:
    schema = row_schema("raw")
    batch, offsets, dead = RecordDecoder("raw", schema).decode(records([b"\x00\xff", None]))
    assert batch.column("value").to_pylist() == [b"\x00\xff", None]
    assert batch.column("key").to_pylist() == [b"k0", b"k1"]
    assert not dead


def test_bad_schemas() -> None:
    with pytest.raises(SchemaError, match="needs the schema"):
        row_schema("json")
    with pytest.raises(SchemaError, match="unknown"):
        row_schema("xml", "struct<a:int>")
    with pytest.raises(SchemaError, match="clash"):
        row_schema("json", "struct<kafka_offset:int>")
    with pytest.raises(SchemaError, match="fixed schema"):
        row_schema("raw", "struct<a:int>")
    assert row_schema("json", pa.schema([("a", pa.int8())])).names[0] == "a"


def test_progress_commits_only_what_is_durable() -> None:
    p = PartitionProgress("t", 0)
    assert p.commit_offset() is None
    p.handed("rows", 0, 9)
    p.handed("dead", 5, 5)
    p.consumed_to(9)
    assert p.commit_offset() is None  # nothing durable: the group resumes at 0 anyway
    p.durable("dead", 5, spans=False)  # the dead letter is durable, the rows are not
    assert p.commit_offset() is None
    p.handed("rows", 10, 19)
    p.consumed_to(19)
    p.durable("rows", 14)  # a cut inside a write
    assert p.commit_offset() == 15
    p.did_commit(15)
    p.durable("rows", 19)
    assert p.commit_offset() == 20 and not p.pending
    p.did_commit(20)
    assert p.commit_offset() is None and p.last_commit is not None


def test_progress_never_commits_inside_a_complete_file() -> None:
    """The crash case found against the broker: rows 0..200 in a complete file, a dead letter
    at 67 not durable yet: committing 67 would make a replay write rows 68.. again in a file
    named +68."""
    p = PartitionProgress("t", 0)
    p.handed("rows", 0, 200)
    p.handed("dead", 67, 67)
    p.consumed_to(200)
    p.durable("rows", 200)
    assert p.commit_offset() is None
    p.durable("dead", 67, spans=False)
    assert p.commit_offset() == 201


async def test_a_member_that_lost_its_group_writes_nothing(tmp_path: pathlib.Path) -> None:
    """The revoke of a member whose session expired: the probe commit is refused, so its open
    files are dropped (the new owner writes those records), nothing is completed."""
    aiokafka = pytest.importorskip("aiokafka")
    from aorc.kafka import KafkaToOrc

    class LostGroup:
        commits = 0

        async def commit(self, offsets: dict[object, int]) -> None:
            self.commits += 1
            raise aiokafka.errors.CommitFailedError("the group has already rebalanced")

        def highwater(self, tp: object) -> None:
            return None

    pipe = KafkaToOrc(bootstrap_servers="127.0.0.1:1", topics=["t"], group="g",
                      dest=str(tmp_path / "data"), schema="struct<n:int>", max_rows=1000)
    consumer = LostGroup()
    pipe.consumer, pipe._tp, pipe._kafka_errors = consumer, aiokafka.TopicPartition, \
        aiokafka.errors
    async with pipe.sink:
        await pipe._handle("t", 0, [Record("t", 0, i, 1_700_000_000_000, None,
                                           json.dumps({"n": i}).encode()) for i in range(10)])
        pipe._progress[("t", 0)].did_commit(0)  # what the probe commits again
        await pipe._revoked([aiokafka.TopicPartition("t", 0)])
    assert consumer.commits == 1 and pipe.lost_partitions == 1 and pipe.rebalances == 1
    assert not pipe._progress and pipe.sink.stats.files_written == 0
    assert not list(tmp_path.rglob("*.orc"))


@pytest.mark.parametrize(("max_bytes", "sink_options", "target"), [
    (128 << 20, None, 4 << 20),   # the consumer's default: 4 MiB stripes
    (16 << 20, None, 1 << 20),    # max_bytes / 16 when smaller
    (128 << 20, {"stripe_size": 8 << 20}, 8 << 20)])  # sink_options decide
async def test_consumer_stripe_size(tmp_path: pathlib.Path, max_bytes: int,
                                    sink_options: dict[str, int] | None,
                                    target: int) -> None:
    from aorc.kafka import KafkaToOrc
    pipe = KafkaToOrc(bootstrap_servers="127.0.0.1:9", topics=["t"], group="g",
                      dest=str(tmp_path), schema="struct<a:int>", max_bytes=max_bytes,
                      sink_options=sink_options)
    assert pipe.sink._stripe_target == target
