"""One fault suite for every store (issue 34): S3 (moto), GCS (the emulator behind its front),
Azure (Azurite) and HTTP (the test file server), each behind the test proxy, which injects
seeded faults (:class:`helpers.s3proxy.FaultPlan`): 503 SlowDown, 500 InternalError, a
connection closed before the store sees the request, an answer lost after the request took
effect, a GET body cut in half after its head promised all of it.

The promise: every operation's result is exact (compared with pyarrow.orc reading the bytes
the store's own peer fetches), or an :mod:`aorc.errors` exception is raised and nothing
partial is left (no object, no open upload). At a 10% fault rate every operation succeeds;
during a 100% burst longer than the retry budget a write fails with RetriesExhaustedError
and leaves nothing. Time is simulated (:class:`helpers.store_harness.FakeClock`): a retry
budget of 20 s and a 30 s burst cost no waiting; every planned fault is asserted to have
happened.
"""

from __future__ import annotations

import io
import sys
from collections.abc import Iterator
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.orc as po
import pytest
from helpers.http_server import HttpFile, HttpFiles
from helpers.s3proxy import CutBody, FaultPlan, Lost, S3Proxy
from helpers.store_harness import Backend, FakeClock, make_backend

import aorc
from aorc.errors import RetriesExhaustedError
from aorc.io import open_store, transport

pytestmark = pytest.mark.timeout(300)

STORES = ["s3", "gs", "az", "http"]
WRITABLE = ["s3", "gs", "az"]
#: Small parts where the store allows them (S3's smallest part is 5 MiB).
PART_SIZE = {"s3": 5 << 20, "gs": 256 << 10, "az": 256 << 10}
#: Rows of a file of at least two parts (about 8 bytes a row).
BIG_ROWS = {"s3": 1_400_000, "gs": 60_000, "az": 60_000}


def table(rows: int, seed: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    return pa.table({"id": pa.array(np.arange(rows, dtype=np.int64)),
                     "v": pa.array(rng.integers(0, 1 << 62, rows, dtype=np.int64)),
                     "k": pa.array(rng.integers(0, 4, rows).astype(np.int32))})


def orc_bytes(t: pa.Table) -> bytes:
    sink = io.BytesIO()
    po.write_table(t, sink, stripe_size=64 << 10, compression="uncompressed")
    return sink.getvalue()


def orc_read(data: bytes | None) -> pa.Table:
    assert data is not None
    return po.ORCFile(pa.BufferReader(data)).read()


@pytest.fixture
def clock() -> Iterator[FakeClock]:
    fake = FakeClock()
    previous = transport.set_clock(fake)  # type: ignore[arg-type]
    try:
        yield fake
    finally:
        transport.set_clock(previous)


@pytest.fixture(scope="module")
def http_files() -> Iterator[tuple[HttpFiles, S3Proxy]]:
    files = HttpFiles().start()
    proxy = S3Proxy(files.url).start()
    try:
        yield files, proxy
    finally:
        proxy.stop()
        files.stop()


class HttpBackend:
    """The HTTP file server behind the proxy, with the few Backend methods reads need."""

    name = "http"

    def __init__(self, files: HttpFiles, proxy: S3Proxy) -> None:
        self.files, self.proxy = files, proxy
        self.root = proxy.url
        self.options: dict[str, Any] = {"retry_base_delay": 0.0}

    def url(self, key: str) -> str:
        return f"{self.root}/{key}"

    def put(self, key: str, data: bytes) -> str:
        self.files.files[f"/{key}"] = HttpFile(data)
        return self.files.files[f"/{key}"].etag

    def get(self, key: str) -> bytes | None:
        found = self.files.files.get(f"/{key}")
        return None if found is None else found.data


@pytest.fixture(params=STORES)
def store(request: pytest.FixtureRequest, clock: FakeClock) -> Backend | HttpBackend:
    if request.param == "http":
        files, proxy = request.getfixturevalue("http_files")
        files.files.clear()
        proxy.reset()
        return HttpBackend(files, proxy)
    return make_backend(request.param, request)


@pytest.fixture(params=WRITABLE)
def writable(request: pytest.FixtureRequest, clock: FakeClock) -> Backend:
    return make_backend(request.param, request)


def faults(backend: Backend | HttpBackend, rate: float, seed: int, **kw: Any) -> FaultPlan:
    plan = FaultPlan(rate, seed, **kw)
    backend.proxy.rules.append(plan)
    return plan


def write_stats() -> Any:
    """The statistics of the last write_dataset call (its module's record, wherever the
    layout puts it)."""
    return sys.modules[aorc.write_dataset.__module__]._LAST_STATS[0]  # noqa: SLF001


def nothing_left(backend: Backend, prefix: str) -> None:
    assert [n for n in backend.names() if n.startswith(prefix)] == []
    assert backend.pending_uploads() == 0


# =========================================================================== reads

async def test_reads_at_ten_percent(store: Backend | HttpBackend) -> None:
    """Whole, column, filtered and dataset reads all succeed, exact, at a 10% fault rate;
    every fault is retried and counted."""
    parts = [table(30_000, seed) for seed in range(3)]
    for i, part in enumerate(parts):
        store.put(f"ds/f{i}.orc", orc_bytes(part))
    whole = orc_read(store.get("ds/f0.orc"))
    plan = faults(store, 0.10, seed=34)
    options = store.options
    url = store.url("ds/f0.orc")
    assert (await aorc.read_table(url, storage_options=options)).equals(whole)
    assert (await aorc.read_table(url, columns=["v"], storage_options=options)).equals(
        whole.select(["v"]))
    filtered = await aorc.read_table(url, filters=[("k", "==", 2)], storage_options=options)
    assert filtered.equals(whole.filter(pa.compute.equal(whole["k"], 2)))
    for _ in range(3):  # every fault met by one reader is one retry it counts
        before = plan.total
        store.proxy.log.clear()
        async with aorc.open_reader(url, storage_options=options) as reader:
            assert (await reader.read()).equals(whole)
            assert reader.io_stats.retries == plan.total - before, [
                (r.method, r.target[-40:], r.status, r.injected) for r in store.proxy.log]
    sources = ([store.url(f"ds/f{i}.orc") for i in range(3)] if store.name == "http"
               else store.url("ds/"))
    got = await aorc.read_dataset(sources, storage_options=options)
    assert got.sort_by("v").equals(pa.concat_tables(parts).sort_by("v"))
    assert plan.total > 0, "no fault was injected"


async def test_a_cut_body_is_resumed_pinned(store: Backend | HttpBackend) -> None:
    """A ranged GET whose body breaks off half-way is resumed for the missing bytes only,
    pinned to the version first seen, and counted as a retry."""
    data = bytes((i * 7919) % 251 for i in range(400_000))
    version = store.put("cut.bin", data)
    cut = {"n": 0}

    def rule(request: Any) -> CutBody | None:
        if request.method == "GET" and ("range" in request.headers
                                        or "x-ms-range" in request.headers) \
                and "comp=list" not in request.target and cut["n"] < 1:
            cut["n"] += 1
            return CutBody()
        return None

    async with open_store(store.url("cut.bin"), store.options) as opened:
        await opened.read_tail(1000)
        store.proxy.log.clear()
        store.proxy.rules.append(rule)
        assert await opened.read_range(1000, 300_000) == data[1000:301_000]
        assert opened.stats.retries == 1
    gets = [r for r in store.proxy.log if r.method == "GET"]
    assert len(gets) == 2 and gets[0].injected
    ranges = [r.headers.get("range") or r.headers.get("x-ms-range") for r in gets]
    first = int(ranges[1].removeprefix("bytes=").split("-")[0])
    assert 1000 < first < 301_000 and ranges[1].endswith("-300999")  # only the rest
    if store.name in ("s3", "az", "http"):
        assert gets[1].headers.get("if-match") == version
    elif store.name == "gs":
        assert f"ifGenerationMatch={version}" in gets[1].target


# =========================================================================== writes

async def test_writes_at_ten_percent(writable: Backend) -> None:
    """A one-request write, a multipart write and write_dataset succeed, exact, at 10%;
    no upload is left open."""
    plan = faults(writable, 0.10, seed=7)
    options = {**writable.options, "part_size": PART_SIZE[writable.name]}
    small = table(5_000, 1)
    await aorc.write_table(small, writable.url("w/small.orc"), storage_options=options)
    big = table(BIG_ROWS[writable.name], 2)
    async with aorc.open_writer(writable.url("w/big.orc"), big.schema,
                                storage_options=options, compression="none") as writer:
        await writer.write(big)
    assert writer.io_stats is not None and writer.io_stats.parts >= 2
    assert orc_read(writable.get("w/small.orc")).equals(small)
    assert orc_read(writable.get("w/big.orc")).equals(big)
    data = table(20_000, 3)
    before = plan.total
    await aorc.write_dataset(data, writable.url("wd"), partition_cols=["k"],
                             storage_options=options)
    assert write_stats().retries == plan.total - before
    back = await aorc.read_dataset(writable.url("wd/"), storage_options=writable.options)
    assert back.select(["id", "v"]).sort_by("id").equals(data.select(["id", "v"]))
    assert writable.pending_uploads() == 0
    assert plan.total > 0


async def test_multipart_writes_at_thirty_percent(writable: Backend) -> None:
    """At 30%, multipart writes still succeed, exact (a lost chunk answer, a dropped
    connection or a 500 on any part, creation or completion is repeated)."""
    plan = faults(writable, 0.30, seed=30)
    options = {**writable.options, "part_size": PART_SIZE[writable.name]}
    for i in range(2):
        big = table(BIG_ROWS[writable.name], 20 + i)
        async with aorc.open_writer(writable.url(f"w30/{i}.orc"), big.schema,
                                    storage_options=options, compression="none") as writer:
            await writer.write(big)
        assert orc_read(writable.get(f"w30/{i}.orc")).equals(big)
        assert writer.io_stats is not None and writer.io_stats.parts >= 2
    assert writable.pending_uploads() == 0
    assert plan.total > 0


async def test_the_sink_and_compaction_at_ten_percent(writable: Backend) -> None:
    """The rolling sink commits exact files and compaction merges them, at 10%."""
    plan = faults(writable, 0.10, seed=11)
    data = table(12_000, 4)
    committed: list[Any] = []

    async def on_commit(commit: Any) -> None:
        committed.append(commit)

    sink = aorc.RollingSink(writable.url("sink"), data.schema, partition_by=["k"],
                            max_rows=1_000, max_age=None, on_commit=on_commit,
                            storage_options=writable.options)
    async with sink:
        for start in range(0, data.num_rows, 3_000):
            await sink.write(data.slice(start, 3_000), topic="t", partition=0,
                             offsets=start)
    assert sink.stats.rows_committed == data.num_rows
    assert sink.stats.retries == plan.total > 0, (sink.stats, plan.injected)
    result = await aorc.compact(writable.url("sink/"), target_size=64 << 20, min_size=1 << 20,
                                storage_options=writable.options)
    assert result is not None
    back = await aorc.read_dataset(writable.url("sink/"), storage_options=writable.options)
    assert back.select(["id", "v"]).sort_by("id").equals(data.select(["id", "v"]))
    assert writable.pending_uploads() == 0
    assert plan.total > 0


async def test_a_long_burst_fails_a_write_cleanly(writable: Backend, clock: FakeClock) -> None:
    """100% 503s for 30 (simulated) seconds: the multipart write retries for its budget,
    raises RetriesExhaustedError, and leaves no object and no open upload."""
    big = table(BIG_ROWS[writable.name], 5)
    options = {**writable.options, "part_size": PART_SIZE[writable.name],
               "retry_base_delay": 0.1}  # the default backoff, in simulated time
    writer = aorc.open_writer(writable.url("burst/f.orc"), big.schema,
                              storage_options=options, compression="none")
    await writer.__aenter__()
    await writer.write(big.slice(0, big.num_rows // 2))
    plan = faults(writable, 0.0, seed=1, burst=lambda: clock.now < 30.0)
    start = clock.now
    with pytest.raises(RetriesExhaustedError):
        try:
            await writer.write(big.slice(big.num_rows // 2))
        finally:
            await writer.__aexit__(*sys.exc_info())
    assert clock.now - start >= transport.DEFAULT_RETRY_BUDGET
    assert plan.injected.get("503", 0) > 3
    nothing_left(writable, "burst/")


async def test_a_five_second_burst_is_waited_through(writable: Backend,
                                                     clock: FakeClock) -> None:
    """100% 503s for 5 (simulated) seconds while a multipart write runs: it succeeds."""
    big = table(BIG_ROWS[writable.name], 6)
    options = {**writable.options, "part_size": PART_SIZE[writable.name],
               "retry_base_delay": 0.1}
    plan = faults(writable, 0.0, seed=1, burst=lambda: clock.now < 5.0)
    async with aorc.open_writer(writable.url("b5/f.orc"), big.schema,
                                storage_options=options, compression="none") as writer:
        await writer.write(big)
    assert orc_read(writable.get("b5/f.orc")).equals(big)
    assert writer.io_stats is not None and writer.io_stats.retries >= plan.injected["503"] > 0
    assert writable.pending_uploads() == 0


async def test_s3_lost_complete_answer_is_resolved_by_etag(request: pytest.FixtureRequest,
                                                          clock: FakeClock) -> None:
    """CompleteMultipartUpload takes effect but its answer is lost; the repetition hears
    NoSuchUpload; the write checks the object's ETag and succeeds."""
    backend = make_backend("s3", request)
    lost = {"n": 0}

    def rule(r: Any) -> Lost | None:
        if r.operation == "CompleteMultipartUpload" and lost["n"] == 0:
            lost["n"] += 1
            return Lost()
        return None

    backend.proxy.rules.append(rule)
    big = table(BIG_ROWS["s3"], 8)
    async with aorc.open_writer(backend.url("lost/f.orc"), big.schema,
                                storage_options={**backend.options, "part_size": 5 << 20},
                                compression="none") as writer:
        await writer.write(big)
    assert lost["n"] == 1
    completes = backend.records("complete")
    assert len(completes) >= 2 and completes[0].injected
    assert orc_read(backend.get("lost/f.orc")).equals(big)
    assert backend.pending_uploads() == 0
