"""The examples: kafka_to_orc.py (a thin user of aorc.kafka) against the real broker into
moto's S3 server; its command line without aiokafka. (examples/spark_pipeline.py runs in
tests/spark/test_aorc_spark.py, which has the Spark session.)"""

from __future__ import annotations

import asyncio
import datetime
import importlib.util
import json
import pathlib
import sys
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import pytest

from aorc import read_table

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


async def test_kafka_example_to_s3_exactly_once(kafka_example: ModuleType,
                                                 kafka_broker: Any, s3_bucket: str,
                                                 s3_client: Any, s3_env: str) -> None:
    """The example against the real broker (tests/helpers/kafka_broker.py) into moto's S3:
    every record once, as a row or a dead letter."""
    from helpers.kafka_broker import create_topic, produce, topic_name
    topic = topic_name()
    await create_topic(kafka_broker.bootstrap, topic)
    values = [(i % 3, b"{broken" if i % 89 == 3 else json.dumps(
        {"user": f"u{i % 17}", "amount": i / 4, "extra": "ignored"}).encode())
        for i in range(900)]
    sent = await produce(kafka_broker.bootstrap, topic, values,
                         timestamp_ms=int(datetime.datetime(
                             2026, 11, 22, 6, 40, tzinfo=datetime.UTC).timestamp() * 1000))
    argv = ["--bootstrap-servers", kafka_broker.bootstrap, "--topic", topic, "--group", "g",
            "--dest", f"s3://{s3_bucket}/clicks", "--dead-letter", f"s3://{s3_bucket}/dead",
            "--schema", "struct<user:string,amount:double>", "--max-rows", "200",
            "--endpoint-url", s3_env, "--exit-when-idle", "6",
            "--consumer-option", "session_timeout_ms=2000",
            "--consumer-option", "heartbeat_interval_ms=500"]
    code = await asyncio.to_thread(kafka_example.main, argv)
    assert code == 0
    keys = []
    paginator = s3_client.get_paginator("list_objects_v2")
    for page in paginator.paginate(Bucket=s3_bucket):
        keys.extend(o["Key"] for o in page.get("Contents", []))
    data = [k for k in keys if k.startswith("clicks/")]
    assert data and all(k.startswith("clicks/dt=2026-11-22/hour=06/") for k in data)
    found = []
    for key in keys:
        table = await read_table(f"s3://{s3_bucket}/{key}")
        if key.startswith("clicks/"):
            found.extend(zip(table.column("kafka_partition").to_pylist(),
                             table.column("kafka_offset").to_pylist(), strict=True))
            for p, o, user in zip(table.column("kafka_partition").to_pylist(),
                                  table.column("kafka_offset").to_pylist(),
                                  table.column("user").to_pylist(), strict=True):
                assert json.loads(sent[(p, o)])["user"] == user
        else:
            found.extend(zip(table.column("partition").to_pylist(),
                             table.column("offset").to_pylist(), strict=True))
    assert len(found) == len(set(found))  # nothing twice
    assert set(found) == set(sent)  # nothing lost


def test_command_line_without_aiokafka(kafka_example: ModuleType,
                                       monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(sys.modules, "aiokafka", None)  # import fails
    monkeypatch.setitem(sys.modules, "aorc.kafka", None)
    code = kafka_example.main(["--bootstrap-servers", "127.0.0.1:1", "--topic", "t",
                               "--group", "g", "--dest", "s3://b/p"])
    assert code == 2
    err = capsys.readouterr().err
    assert "needs aiokafka" in err and "Traceback" not in err
    with pytest.raises(SystemExit) as exc:
        kafka_example.main(["--help"])
    assert exc.value.code == 0
    assert "--bootstrap-servers" in capsys.readouterr().out
