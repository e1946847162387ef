"""A replayable event log and a crash-injecting pipeline for :class:`aorc.sink.RollingSink`.

:class:`EventLog` stands in for a Kafka topic: a few partitions (streams) of events whose
offsets increase (odd partitions have gaps, as after log compaction) and whose event times
cross hour boundaries, with a share of late events. :func:`run_with_crashes` feeds it to a
sink the way a consumer would: from the last committed position, in randomly interleaved
batches of random sizes (so each attempt batches differently), committing in the sink's
callback; planned crashes stop attempts at random points:

- ``"source"``: the consumer raises after a random number of batches;
- ``"commit"``: the commit callback raises (files complete on the store, commit lost);
- ``"cancel"``: the attempt is cancelled after a random delay (often during an upload);
- ``"store"``: an armed store fault (a refused multipart part) fails an upload.

:func:`check_sink_output` reads everything back with aorc and checks that every event is
present exactly once, in the right partition folder and file.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import re
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

import aorc
from aorc.errors import StoreError
from aorc.sink.rolling import RollingSink, SinkCommit

TOPIC = "events"
BASE_TIME = np.datetime64("2026-11-22T06:50:00", "ms")
FILE_NAME = re.compile(r"^(?P<topic>[^+/]+)\+(?P<partition>\d+)\+(?P<first>\d{20})\.orc$")


class InjectedCrash(Exception):
    """A crash planted by the test."""


def event_schema() -> pa.Schema:
    return pa.schema([("partition", pa.int32()), ("offset", pa.int64()),
                      ("ts", pa.timestamp("ms")), ("region", pa.string()),
                      ("amount", pa.float64()), ("payload", pa.binary())])


@dataclass
class EventLog:
    """The events of ``streams`` partitions, ``per_stream`` each (all kept in memory)."""

    streams: int
    per_stream: int
    seed: int = 0
    payload_bytes: tuple[int, ...] = (80, 16, 16, 16)  # per partition (cycled)
    tables: list[pa.Table] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.tables = [self._make(p) for p in range(self.streams)]

    def _make(self, p: int) -> pa.Table:
        rng = np.random.default_rng([self.seed, p])
        n = self.per_stream
        index = np.arange(n, dtype=np.int64)
        offsets = index * (1 + p % 2)  # odd partitions: gaps, as after compaction
        ts = BASE_TIME + (index * 4 + rng.integers(0, 1000, n)).astype("timedelta64[ms]")
        late = rng.random(n) < 0.05
        ts[late] -= np.timedelta64(70, "m")
        width = self.payload_bytes[p % len(self.payload_bytes)]
        payload = np.frombuffer(rng.bytes(width * n), dtype=f"S{width}")
        return pa.table({
            "partition": pa.array(np.full(n, p, np.int32)),
            "offset": pa.array(offsets),
            "ts": pa.array(ts),
            "region": pa.array(np.array(["eu", "us", "ap"])[rng.integers(0, 3, n)]),
            "amount": pa.array(np.round(rng.random(n) * 100, 2)),
            "payload": pa.array(payload.tolist(), pa.binary()),
        }, schema=event_schema())

    @property
    def total(self) -> int:
        return self.streams * self.per_stream

    def start_index(self, p: int, committed: int) -> int:
        """Index of the first event of partition ``p`` after offset ``committed``."""
        offsets = self.tables[p].column("offset").to_numpy()
        return int(np.searchsorted(offsets, committed, side="right"))

    def batches_from(self, committed: dict[int, int], rng: np.random.Generator,
                     sizes: tuple[int, int] = (2_000, 30_000)
                     ) -> Iterator[tuple[int, pa.RecordBatch, np.ndarray]]:
        """The events after the committed offsets, as (partition, batch, offsets), the
        partitions interleaved at random, in batches of random sizes."""
        pos = {p: self.start_index(p, committed[p]) for p in range(self.streams)}
        while True:
            live = [p for p in pos if pos[p] < self.per_stream]
            if not live:
                return
            p = int(rng.choice(live))
            n = int(rng.integers(*sizes))
            batch = self.tables[p].slice(pos[p], n).combine_chunks().to_batches()[0]
            pos[p] += batch.num_rows
            yield p, batch, batch.column("offset").to_numpy()

    def expected_keys(self) -> np.ndarray:
        """``partition << 40 | offset`` of every event, sorted."""
        keys = [(np.int64(p) << 40) | t.column("offset").to_numpy()
                for p, t in enumerate(self.tables)]
        return np.sort(np.concatenate(keys))


@dataclass
class Outcome:
    """What happened over the attempts."""

    attempts: int = 0
    crashes: list[str] = field(default_factory=list)
    commits: list[SinkCommit] = field(default_factory=list)
    peak_memory: int = 0
    cuts: dict[str, int] = field(default_factory=dict)


@dataclass
class CrashPlan:
    """One attempt's planned crash (``kind`` None: run to the end)."""

    kind: str | None
    at: float = 0.0


def plan_crashes(rng: np.random.Generator, kinds: list[str]) -> list[CrashPlan]:
    """Random crash points for the given kinds, then a final attempt without a crash."""
    plans = []
    for kind in kinds:
        at = {"source": rng.integers(2, 14), "commit": rng.integers(1, 4),
              "cancel": rng.uniform(0.2, 1.5), "store": rng.integers(1, 3)}[kind]
        plans.append(CrashPlan(kind, float(at)))
    return [*plans, CrashPlan(None)]


async def _attempt(log: EventLog, prefix: str, sink_options: dict[str, Any],
                   committed: dict[int, int], plan: CrashPlan, rng: np.random.Generator,
                   outcome: Outcome) -> None:
    seen = 0

    async def on_commit(c: SinkCommit) -> None:
        nonlocal seen
        seen += 1
        if plan.kind == "commit" and seen == int(plan.at):
            raise InjectedCrash(f"commit {seen}")
        assert c.offset > committed[c.partition]
        committed[c.partition] = c.offset
        outcome.commits.append(c)

    async def feed() -> None:
        sink = RollingSink(prefix, event_schema(), on_commit=on_commit, **sink_options)
        try:
            async with sink:
                for k, (p, batch, offsets) in enumerate(log.batches_from(committed, rng)):
                    if plan.kind == "source" and k == int(plan.at):
                        raise InjectedCrash(f"source batch {k}")
                    await sink.write(batch, topic=TOPIC, partition=p, offsets=offsets)
                    await asyncio.sleep(0)
        finally:
            outcome.peak_memory = max(outcome.peak_memory, sink.stats.peak_memory)
            for reason, count in sink.stats.cuts.items():
                outcome.cuts[reason] = outcome.cuts.get(reason, 0) + count

    if plan.kind == "cancel":
        await asyncio.wait_for(feed(), timeout=plan.at)
    else:
        await feed()


async def run_with_crashes(log: EventLog, prefix: str, sink_options: dict[str, Any],
                           plans: list[CrashPlan], rng: np.random.Generator,
                           arm_store_fault: Callable[[int], None] | None = None,
                           disarm: Callable[[], None] | None = None) -> Outcome:
    """Run attempts (one per plan) until one finishes, each restarting from the positions
    committed so far; returns what happened."""
    committed = {p: -1 for p in range(log.streams)}
    outcome = Outcome()
    for plan in plans:
        outcome.attempts += 1
        if plan.kind == "store":
            assert arm_store_fault is not None
            arm_store_fault(int(plan.at))
        try:
            await _attempt(log, prefix, sink_options, committed, plan, rng, outcome)
        except (InjectedCrash, TimeoutError, StoreError) as exc:
            outcome.crashes.append(f"{plan.kind}: {type(exc).__name__}: {exc}")
            continue
        finally:
            if disarm is not None:
                disarm()
        if plan.kind is None:
            return outcome
        outcome.crashes.append(f"{plan.kind}: planned crash not reached")
    raise AssertionError("the last attempt must run to the end")


# =========================================================================== checks

def list_objects(s3_client: Any, bucket: str, prefix: str = "") -> list[str]:
    keys: list[str] = []
    paginator = s3_client.get_paginator("list_objects_v2")
    for page in paginator.paginate(Bucket=bucket, Prefix=prefix):
        keys.extend(o["Key"] for o in page.get("Contents", []))
    return keys


def pending_uploads(s3_client: Any, bucket: str) -> list[dict[str, Any]]:
    uploads: list[dict[str, Any]] = s3_client.list_multipart_uploads(
        Bucket=bucket).get("Uploads", [])
    return uploads


def _hour_folder(ts: np.datetime64) -> str:
    value = ts.astype("datetime64[s]").astype(datetime.datetime)
    return f"dt={value:%Y-%m-%d}/hour={value:%H}"


async def _read_one(uri: str, storage_options: dict[str, Any] | None) -> tuple[str, pa.Table,
                                                                                dict[str, bytes]]:
    async with aorc.open_reader(uri, storage_options=storage_options) as reader:
        return uri, await reader.read(["partition", "offset", "ts"]), reader.metadata


async def check_sink_output(uris: list[str], root: str, log: EventLog,
                            storage_options: dict[str, Any] | None = None) -> np.ndarray:
    """Read every file with aorc and check names, folders, metadata and that every event
    is present exactly once. Returns the sorted keys found."""
    sem = asyncio.Semaphore(16)

    async def read(uri: str) -> tuple[str, pa.Table, dict[str, bytes]]:
        async with sem:
            return await _read_one(uri, storage_options)

    results = await asyncio.gather(*(read(u) for u in uris))
    keys = []
    for uri, table, meta in results:
        relative = uri[len(root):].lstrip("/")
        folder, _, name = relative.rpartition("/")
        match = FILE_NAME.match(name)
        assert match is not None, uri
        offsets = table.column("offset").to_numpy()
        partition = table.column("partition").to_numpy()
        assert table.num_rows > 0, uri
        assert (partition == int(match["partition"])).all(), uri
        assert offsets[0] == int(match["first"]) == int(meta["aorc.sink.first_offset"]), uri
        assert offsets[-1] == int(meta["aorc.sink.last_offset"]), uri
        assert (np.diff(offsets) > 0).all(), uri
        hours = {_hour_folder(t) for t in np.unique(
            table.column("ts").to_numpy().astype("datetime64[h]"))}
        assert hours == {folder}, (uri, hours)
        keys.append((partition.astype(np.int64) << 40) | offsets)
    found = np.sort(np.concatenate(keys)) if keys else np.zeros(0, np.int64)
    expected = log.expected_keys()
    duplicates = found[1:][found[1:] == found[:-1]]
    assert len(duplicates) == 0, f"{len(duplicates)} events stored twice"
    missing = np.setdiff1d(expected, found)
    assert len(missing) == 0, f"{len(missing)} events missing"
    assert len(found) == len(expected)
    return found


# =========================================================================== shared run

#: Credentials of the moto server started for :func:`million_events`.
MOTO_CREDENTIALS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing",
                    "region": "us-east-1"}
MiB = 1 << 20


@dataclass
class MillionRun:
    """The outcome of the shared million-event run with crashes (see :func:`million_events`).

    ``storage_options`` reach the moto server directly (not through the fault proxy).
    """

    log: EventLog
    outcome: Outcome
    bucket: str
    prefix: str
    storage_options: dict[str, Any]
    keys: list[str]
    pending_uploads: list[dict[str, Any]]
    operations: set[str]

    @property
    def uris(self) -> list[str]:
        return [f"s3://{self.bucket}/{k}" for k in self.keys]


def _fail_nth_part(proxy: Any, n: int) -> None:
    """Refuse the n-th part uploaded from now (the multipart upload must then be aborted)."""
    from helpers.s3proxy import Fault

    count = 0

    def rule(request: Any) -> Fault | None:
        nonlocal count
        if request.operation == "UploadPart":
            count += 1
            if count == n:
                return Fault(403, "AccessDenied")
        return None

    proxy.rules.append(rule)


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextlib.contextmanager
def moto_subprocess() -> Iterator[str]:
    """A moto S3 server in a process of its own (its state is not the shared in-process
    moto state that other tests reset); yields its endpoint."""
    import subprocess
    import urllib.request

    port = _free_port()
    endpoint = f"http://127.0.0.1:{port}"
    process = subprocess.Popen(
        [sys.executable, "-c", "from moto.server import main; main()", "-H", "127.0.0.1",
         "-p", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(300):
            try:
                with urllib.request.urlopen(f"{endpoint}/moto-api/", timeout=1):
                    break
            except OSError:
                time.sleep(0.05)
        else:
            raise RuntimeError("the moto server did not start")
        yield endpoint
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.fixture(scope="session")
def million_events() -> Iterator[MillionRun]:
    """One million events (4 partitions) written by RollingSink to a moto S3 server of its
    own (a subprocess: other tests reset the in-process one) through a fault-injecting proxy,
    with 8 crashes at random points (commit lost, consumer error, refused part upload,
    cancellation), each attempt restarting from the last committed positions. Shared by the
    sink tests (read back with aorc) and the Spark tests (read back with Spark)."""
    pytest.importorskip("moto.server", reason="moto[server] is not installed")
    import boto3

    from helpers.s3proxy import S3Proxy

    with moto_subprocess() as endpoint:
        proxy = S3Proxy(endpoint).start()
        client = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1",
                              aws_access_key_id="testing", aws_secret_access_key="testing")
        try:
            yield _million_run(client, proxy, endpoint)
        finally:
            client.close()
            proxy.stop()


def _million_run(client: Any, proxy: Any, endpoint: str) -> MillionRun:
    bucket = "aorc-million"
    client.create_bucket(Bucket=bucket)
    rng = np.random.default_rng(2026)
    log = EventLog(streams=4, per_stream=250_000, seed=1)
    options = {"storage_options": {"endpoint_url": proxy.url, "part_size": 5 * MiB,
                                   **MOTO_CREDENTIALS},
               "event_time": "ts", "max_rows": 90_000,
               "max_event_span": datetime.timedelta(minutes=8),
               "memory_budget": 20 * MiB, "compression": "lz4"}
    kinds = ["commit", "source", "store", "cancel", "commit", "store", "source", "cancel"]
    outcome = asyncio.run(run_with_crashes(
        log, f"s3://{bucket}/events", options, plan_crashes(rng, kinds), rng,
        arm_store_fault=lambda n: _fail_nth_part(proxy, n), disarm=proxy.rules.clear))
    return MillionRun(log, outcome, bucket, "events",
                      {"endpoint_url": endpoint, **MOTO_CREDENTIALS},
                      list_objects(client, bucket), pending_uploads(client, bucket),
                      {r.operation for r in proxy.log})
