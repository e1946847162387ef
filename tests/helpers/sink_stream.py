"""A replayable event log and a crash-injecting pipeline for :class:`aorc.sink.RollingSink`.

:class:`EventLog` stands in for a Kafka topic: a few partitions (streams) of events whose
offsets increase (odd partitions have gaps, as after log compaction) and whose event times
cross hour boundaries, with a share of late events. :func:`run_with_crashes` feeds it to a
sink the way a consumer would: from the last committed position, in randomly interleaved
batches of random sizes (so each attempt batches differently), committing in the sink's
callback; planned crashes stop attempts at seeded random points, all counted in events (never
in time, so an attempt gets equally far on a fast or a loaded machine):

- ``"source"``: the consumer raises after a number of batches;
- ``"commit"``: the n-th commit callback raises (files complete on the store, commit lost);
- ``"cancel"``: after a number of batches the test proxy holds the next write request; the
  attempt is cancelled while it is held (an upload in flight), then the request goes on;
- ``"store"``: the proxy refuses (403) the n-th write request of the attempt, whatever its
  kind (PutObject, CreateMultipartUpload, UploadPart, CompleteMultipartUpload).

Each planned crash must happen (:class:`Outcome` says how each did).

:func:`check_sink_output` reads everything back with aorc and checks that every event is
present exactly once, in the right partition folder and file.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import re
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

import aorc
from aorc.errors import StoreError
from aorc.sink import RollingSink, SinkCommit

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
    """What happened over the attempts (``crashes``: one line per planned crash, saying
    how it happened; "not reached" when an attempt ended without its crash)."""

    attempts: int = 0
    crashes: list[str] = field(default_factory=list)
    commits: list[SinkCommit] = field(default_factory=list)
    peak_memory: int = 0
    cuts: dict[str, int] = field(default_factory=dict)
    stripes_shrunk: int = 0


#: The S3 requests that write (a store fault counts all of them, so it is always reached:
#: small files go up as one PutObject, large ones as a multipart upload).
WRITE_OPERATIONS = frozenset({"PutObject", "CreateMultipartUpload", "UploadPart",
                              "CompleteMultipartUpload"})


@dataclass(frozen=True)
class CrashPlan:
    """One attempt's planned crash (``kind`` None: run to the end).

    ``at`` counts events, never time: for "source" the batches handed to the sink before the
    consumer raises, for "commit" the commit callback that raises, for "store" the write
    request (of any kind, from the attempt's start) that the proxy refuses, for "cancel" the
    batches handed to the sink before the proxy holds the next write request -- the attempt
    is cancelled while that request is held, then the request is let through.
    """

    kind: str | None
    at: int = 0


def plan_crashes(rng: np.random.Generator, kinds: list[str]) -> list[CrashPlan]:
    """Random crash points for the given kinds, then a final attempt without a crash."""
    ranges = {"source": (2, 14), "commit": (1, 4), "cancel": (1, 12), "store": (1, 12)}
    plans = [CrashPlan(kind, int(rng.integers(*ranges[kind]))) for kind in kinds]
    return [*plans, CrashPlan(None)]


class FaultPoint:
    """A proxy rule acting on the ``at``-th write request from now: refused with 403
    (``hold=False``), or held until :meth:`release` (``hold=True``); ``reached`` is set (in
    the test's event loop) when that request arrives."""

    def __init__(self, proxy: Any, at: int, *, hold: bool) -> None:
        from helpers.s3proxy import Fault, Hold

        self.loop = asyncio.get_running_loop()
        self.reached: asyncio.Future[str] = self.loop.create_future()
        self.gate = threading.Event()
        self.record: Any = None
        self.seen = 0
        self.armed = not hold  # a hold is armed by the test when its batch count is reached
        self._proxy, self._at, self._hold = proxy, at, hold
        self._action = Hold(self.gate) if hold else Fault(403, "AccessDenied")
        proxy.rules.append(self.rule)

    def rule(self, request: Any) -> Any:  # runs in the proxy's thread
        if not self.armed or request.operation not in WRITE_OPERATIONS:
            return None
        self.seen += 1
        if self.seen != self._at:
            return None
        self.record = self._proxy.log[-1]  # the proxy logs a request before asking the rules
        self.loop.call_soon_threadsafe(self._mark, request.operation)
        return self._action

    def _mark(self, operation: str) -> None:
        if not self.reached.done():
            self.reached.set_result(operation)

    async def release(self) -> None:
        """Remove the rule; let a held request through and wait until the proxy has
        served it (the store may well carry out a request whose client gave up; it must
        happen before the next attempt starts, as it would in a real restart)."""
        with contextlib.suppress(ValueError):
            self._proxy.rules.remove(self.rule)
        self.gate.set()
        while self._hold and self.record is not None and not self.record.end:
            await asyncio.sleep(0.01)  # polls a condition: the outcome does not depend on it


async def _attempt(log: EventLog, prefix: str, sink_options: dict[str, Any],
                   committed: dict[int, int], plan: CrashPlan, rng: np.random.Generator,
                   outcome: Outcome, proxy: Any) -> str | None:
    """One attempt from the committed positions. Returns how the planned crash happened
    (None: the attempt ran to its end), or raises the crash's exception."""
    seen = 0
    fault = (FaultPoint(proxy, plan.at, hold=False) if plan.kind == "store" else
             FaultPoint(proxy, 1, hold=True) if plan.kind == "cancel" else None)

    async def on_commit(c: SinkCommit) -> None:
        nonlocal seen
        seen += 1
        if plan.kind == "commit" and seen == plan.at:
            raise InjectedCrash(f"commit {seen}")
        assert c.offset > committed[c.partition]
        committed[c.partition] = c.offset
        outcome.commits.append(c)

    async def feed() -> None:
        sink = RollingSink(prefix, event_schema(), on_commit=on_commit, **sink_options)
        try:
            async with sink:
                for k, (p, batch, offsets) in enumerate(log.batches_from(committed, rng)):
                    if plan.kind == "source" and k == plan.at:
                        raise InjectedCrash(f"source batch {k}")
                    if plan.kind == "cancel" and k == plan.at and fault is not None:
                        fault.armed = True  # hold the next write request from here on
                    await sink.write(batch, topic=TOPIC, partition=p, offsets=offsets)
                    await asyncio.sleep(0)
        finally:
            outcome.peak_memory = max(outcome.peak_memory, sink.stats.peak_memory)
            for reason, count in sink.stats.cuts.items():
                outcome.cuts[reason] = outcome.cuts.get(reason, 0) + count
            outcome.stripes_shrunk += sink.stats.stripes_shrunk

    try:
        if plan.kind != "cancel":
            try:
                await feed()
            except StoreError:
                if fault is not None and fault.reached.done():
                    return f"refused {fault.reached.result()} (write request {plan.at})"
                raise
            return None
        return await _cancel_when_held(asyncio.ensure_future(feed()), fault, plan)
    finally:
        if fault is not None:
            await fault.release()


async def _cancel_when_held(task: asyncio.Future[None], fault: FaultPoint | None,
                            plan: CrashPlan) -> str | None:
    """Cancel ``task`` once the proxy holds the armed write request (or return when the
    task ends first: the planned crash was not reached)."""
    assert fault is not None
    await asyncio.wait({task, fault.reached}, return_when=asyncio.FIRST_COMPLETED)
    if not fault.reached.done():
        await task
        return None
    operation = fault.reached.result()
    assert not fault.gate.is_set()  # the request is still held: an upload is in flight
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        if not task.cancelled():
            raise
        return f"cancelled after {plan.at} batches while {operation} was in flight"
    raise AssertionError("the attempt ended although the write it waited for was held")


async def run_with_crashes(log: EventLog, prefix: str, sink_options: dict[str, Any],
                           plans: list[CrashPlan], seed: int, proxy: Any = None) -> Outcome:
    """Run attempts (one per plan) until one finishes, each restarting from the positions
    committed so far; returns what happened.

    Attempt ``k`` batches the events with a generator of its own, seeded ``[seed, k]``, so
    a crash never shifts the batches of later attempts. ``proxy`` (the
    :class:`~helpers.s3proxy.S3Proxy` between the sink and the store) is needed for the
    "store" and "cancel" crashes.
    """
    committed = {p: -1 for p in range(log.streams)}
    outcome = Outcome()
    for k, plan in enumerate(plans):
        outcome.attempts += 1
        rng = np.random.default_rng([seed, k])
        if plan.kind in ("store", "cancel"):
            assert proxy is not None, plan
        try:
            how = await _attempt(log, prefix, sink_options, committed, plan, rng, outcome,
                                 proxy)
        except (InjectedCrash, StoreError) as exc:
            if plan.kind in ("store", "cancel"):
                raise  # an unplanned failure: these crashes say how they happened
            outcome.crashes.append(f"{plan.kind}: {type(exc).__name__}: {exc}")
            continue
        if how is not None:
            outcome.crashes.append(f"{plan.kind}: {how}")
            continue
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


#: The moto server's process: it binds a free port itself (port 0, so no other process can
#: take the port between its choice and its use), prints it, and serves until its standard
#: input closes.
_MOTO_CHILD = """
import logging, sys
from moto.server import ThreadedMotoServer
logging.getLogger("werkzeug").setLevel(logging.ERROR)
server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
server.start()
print(server.get_host_and_port()[1], flush=True)
sys.stdin.read()
server.stop()
"""


@contextlib.contextmanager
def moto_subprocess() -> Iterator[str]:
    """A moto S3 server in a process of its own (its state is not the shared in-process
    moto state that other tests reset); yields its endpoint once it listens, however long
    the machine takes to start it (pytest-timeout bounds the wait)."""
    import subprocess

    process = subprocess.Popen([sys.executable, "-c", _MOTO_CHILD], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert process.stdin is not None and process.stdout is not None
    try:
        line = process.stdout.readline()  # the port, once the server listens on it
        if not line.strip().isdigit():
            raise RuntimeError(f"the moto server did not start (exit code {process.poll()}, "
                               f"said {line!r})")
        yield f"http://127.0.0.1:{int(line)}"
    finally:
        process.stdin.close()  # the server stops
        try:
            process.wait(timeout=60)  # (a hang guard: it stops at once)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        process.stdout.close()


@pytest.fixture(scope="session")
def million_events() -> Iterator[MillionRun]:
    """One million events (4 partitions) written by RollingSink to a moto S3 server of its
    own (a subprocess: other tests reset the in-process one) through a fault-injecting proxy,
    with 8 crashes at seeded points counted in events (commit lost, consumer error, refused
    write request, cancellation during a held upload), each attempt restarting from the last
    committed positions. Shared by the sink tests (read back with aorc) and the Spark tests
    (read back with Spark)."""
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
    log = EventLog(streams=4, per_stream=250_000, seed=1)
    options = {"storage_options": {"endpoint_url": proxy.url, "part_size": 5 * MiB,
                                   **MOTO_CREDENTIALS},
               "event_time": "ts", "max_rows": 90_000,
               "max_event_span": datetime.timedelta(minutes=8),
               "memory_budget": 20 * MiB, "compression": "lz4"}
    kinds = ["commit", "source", "store", "cancel", "commit", "store", "source", "cancel"]
    plans = plan_crashes(np.random.default_rng([2026, 0]), kinds)  # not the batches' rng
    outcome = asyncio.run(run_with_crashes(log, f"s3://{bucket}/events", options, plans,
                                           seed=2026, proxy=proxy))
    assert len(outcome.crashes) == len(kinds), outcome.crashes
    return MillionRun(log, outcome, bucket, "events",
                      {"endpoint_url": endpoint, **MOTO_CREDENTIALS},
                      list_objects(client, bucket), pending_uploads(client, bucket),
                      {r.operation for r in proxy.log})
