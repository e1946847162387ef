"""The examples: kafka_to_orc.py driven by a fake consumer (no broker needed) against moto's
S3 server, including a crash and a restart from the committed offsets; its command line
without aiokafka. (examples/spark_pipeline.py runs in tests/spark/test_aorc_spark.py, which
has the Spark session.)"""

from __future__ import annotations

import asyncio
import datetime
import importlib.util
import json
import pathlib
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import pytest

from aorc import read_table
from aorc.sink.rolling import RollingSink

ROOT = pathlib.Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def kafka_example() -> Iterator[ModuleType]:
    spec = importlib.util.spec_from_file_location("kafka_to_orc",
                                                  ROOT / "examples" / "kafka_to_orc.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["kafka_to_orc"] = module
    spec.loader.exec_module(module)
    yield module
    del sys.modules["kafka_to_orc"]


@dataclass(frozen=True)
class TP:
    topic: str
    partition: int


@dataclass(frozen=True)
class Record:
    topic: str
    partition: int
    offset: int
    timestamp: int  # ms
    value: bytes


class FakeConsumer:
    """``getmany`` over an in-memory log from the committed offsets, ``commit`` storing
    them; it can crash on a given poll."""

    def __init__(self, log: dict[TP, list[Record]], committed: dict[TP, int],
                 crash_on_poll: int | None = None) -> None:
        self.log = log
        self.committed = committed
        self.position = {tp: committed.get(tp, 0) for tp in log}
        self.crash_on_poll = crash_on_poll
        self.polls = 0

    async def getmany(self, timeout_ms: int, max_records: int) -> dict[TP, list[Record]]:
        self.polls += 1
        if self.polls == self.crash_on_poll:
            raise ConnectionError("broker went away")
        await asyncio.sleep(0)
        out = {}
        for tp, records in self.log.items():
            start = self.position[tp]
            chunk = [r for r in records if r.offset >= start][: max_records // 2]
            if chunk:
                out[tp] = chunk
                self.position[tp] = chunk[-1].offset + 1
        return out

    async def commit(self, offsets: dict[TP, int]) -> None:
        for tp, offset in offsets.items():
            assert offset > self.committed.get(tp, 0)
            self.committed[tp] = offset


def make_log(n: int) -> dict[TP, list[Record]]:
    start = int(datetime.datetime(2026, 11, 22, 6, 40, tzinfo=datetime.UTC).timestamp() * 1000)
    log: dict[TP, list[Record]] = {}
    for p in range(3):
        tp = TP("clicks", p)
        records = []
        for i in range(n):
            value: Any = {"user": f"u{i % 17}", "amount": i / 4, "extra": "ignored"}
            if i % 97 == 5:
                value = "not an object"
            body = b"{broken" if i % 89 == 3 else json.dumps(value).encode()
            records.append(Record("clicks", p, i * 2, start + i * 700, body))
        log[tp] = records
    return log


def expected_rows(log: dict[TP, list[Record]]) -> set[tuple[int, int, str, float]]:
    out = set()
    for tp, records in log.items():
        for r in records:
            try:
                value = json.loads(r.value)
            except ValueError:
                continue
            if isinstance(value, dict):
                out.add((tp.partition, r.offset, value["user"], value["amount"]))
    return out


async def test_kafka_consumer_with_crash_exactly_once(kafka_example: ModuleType,
                                                      s3_bucket: str, s3_client: Any) -> None:
    ex = kafka_example
    log = make_log(4000)
    schema = ex.row_schema("struct<user:string,amount:double>")
    committed: dict[TP, int] = {}
    dest = f"s3://{s3_bucket}/clicks"
    for crash in (7, 5, None):
        consumer = FakeConsumer(log, committed, crash_on_poll=crash)
        sink = RollingSink(dest, schema, event_time="kafka_time", max_rows=700,
                           on_commit=ex.offset_committer(consumer, TP))
        try:
            async with sink:
                await ex.consume(consumer, sink, schema, idle_polls=2, poll_ms=1,
                                 max_records=500)
        except ConnectionError:
            assert crash is not None
            continue
        assert crash is None
    assert committed == {tp: records[-1].offset + 1 for tp, records in log.items()}
    keys = []
    paginator = s3_client.get_paginator("list_objects_v2")
    for page in paginator.paginate(Bucket=s3_bucket):
        keys.extend(o["Key"] for o in page.get("Contents", []))
    assert keys and all(k.startswith("clicks/dt=2026-11-22/hour=0") for k in keys)
    found = []
    for key in keys:
        table = await read_table(f"s3://{s3_bucket}/{key}")
        found.extend(zip(table.column("kafka_partition").to_pylist(),
                         table.column("kafka_offset").to_pylist(),
                         table.column("user").to_pylist(),
                         table.column("amount").to_pylist(), strict=True))
    assert len(found) == len(set(found))  # nothing twice
    assert set(found) == expected_rows(log)  # nothing lost, bad messages skipped


def test_records_to_batch_skips_rows_that_do_not_fit(kafka_example: ModuleType) -> None:
    schema = kafka_example.row_schema("struct<n:int,s:string>")
    records = [Record("t", 0, i, 0, json.dumps(v).encode()) for i, v in enumerate(
        [{"n": 1, "s": "a"}, {"n": "not a number", "s": "b"}, {"n": 3}, [1, 2]])]
    batch, offsets = kafka_example.records_to_batch(records, schema)
    assert offsets == [0, 2]
    assert batch.column("n").to_pylist() == [1, 3]
    assert batch.column("s").to_pylist() == ["a", None]
    assert batch.column("kafka_offset").to_pylist() == [0, 2]


def test_command_line_without_aiokafka(kafka_example: ModuleType,
                                       monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(sys.modules, "aiokafka", None)  # import fails
    code = kafka_example.main(["--bootstrap-servers", "127.0.0.1:1", "--topic", "t",
                               "--group", "g", "--dest", "s3://b/p"])
    assert code == 2
    err = capsys.readouterr().err
    assert "needs aiokafka" in err and "Traceback" not in err
    with pytest.raises(SystemExit) as exc:
        kafka_example.main(["--help"])
    assert exc.value.code == 0
    assert "--bootstrap-servers" in capsys.readouterr().out
