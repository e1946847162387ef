"""One suite, every object store: S3 (moto; its reads and listings through aiobotocore and
through obstore, ``engine="obstore"``), GCS (gcp-storage-emulator) and Azure (Azurite), each
behind the test proxy, held to the same promises (as object_store runs one integration
suite against every backend):

* opening costs the fewest requests the store allows (S3, GCS: one suffix-range GET; Azure,
  which has no suffix ranges: a HEAD and a ranged GET, or one GET when a listing gave the
  size);
* ranged reads are coalesced (``max_merge_distance``/``max_gap_ratio``), concurrent
  (``max_concurrency``) and every one of them pinned to the version opened; a replaced object
  fails with ObjectChangedError, never mixed bytes;
* writes stream: a small file is one request; a large one is sent in parts while the writer
  goes on, within the memory budget, and made visible by one final request; an error or a
  cancellation leaves nothing visible and no upload pending;
* ``overwrite=False`` creates only; transient failures are retried and counted; errors are
  the StoreError subclasses.

Every count and header is asserted from the proxy's request log; objects are put and checked
with each store's own peer (boto3, the emulator's API, azure-storage-blob), not with aorc.

GCS: gcp-storage-emulator lacks generations, preconditions, suffix ranges, pagination and
session cancellation; the thin layer of ``helpers/gcs_front.py`` adds them in front of it,
so those guarantees are tested against that layer's model of GCS (the bytes are the
emulator's).
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest
from helpers.s3proxy import Fault, Hold
from helpers.store_harness import Backend, hold_until, make_backend

from aorc.errors import (
    AccessDeniedError,
    CorruptFileError,
    ObjectChangedError,
    ObjectExistsError,
    ObjectNotFoundError,
    RetriesExhaustedError,
    SchemaError,
    StoreError,
)
from aorc.io import IOStats, open_output, open_store, plan_ranges, registry

pytestmark = pytest.mark.timeout(300)

DATA = bytes((i * 7919) % 251 for i in range(300_000))
TAIL = 16 * 1024
PART = 5 * 1024 * 1024  # S3's smallest part; a multiple of GCS's 256 KiB


@pytest.fixture(params=["s3", "s3-obstore", "gs", "az"])
def backend(request: pytest.FixtureRequest) -> Backend:
    return make_backend(request.param, request)


def payload(n: int, seed: int = 1) -> bytes:
    import hashlib
    out = bytearray()
    counter = 0
    while len(out) < n:
        out += hashlib.sha256(f"{seed}:{counter}".encode()).digest() * 2048
        counter += 1
    return bytes(out[:n])


# =========================================================================== opening

async def test_open_costs_the_fewest_requests(backend: Backend) -> None:
    version = backend.put("big.bin", DATA)
    async with open_store(backend.url("big.bin"), backend.options) as store:
        tail, size = await store.read_tail(TAIL)
        assert (tail, size) == (DATA[-TAIL:], len(DATA))
        assert store.etag == version  # type: ignore[attr-defined]
        requests = store.stats.requests
    log = [(backend.kind(r), backend.byte_range(r)) for r in backend.proxy.log]
    if backend.name == "az":  # no suffix ranges: the size first
        assert log == [("head", None), ("get", f"bytes={len(DATA) - TAIL}-{len(DATA) - 1}")]
    else:
        assert log == [("get", f"bytes=-{TAIL}")]  # no HEAD, no size lookup
    assert requests == len(log)

    backend.proxy.log.clear()  # a size known from a listing: one request everywhere
    store = registry.open_input(backend.url("big.bin"), backend.options, size=len(DATA))
    async with store:
        assert await store.read_tail(TAIL) == (DATA[-TAIL:], len(DATA))
    assert [backend.kind(r) for r in backend.proxy.log] == ["get"]


async def test_a_stale_listed_size_is_corrected(backend: Backend) -> None:
    """The size a listing gave is only a hint: the response's Content-Range decides."""
    backend.put("grown.bin", DATA)
    store = registry.open_input(backend.url("grown.bin"), backend.options, size=1000)
    async with store:
        assert await store.read_tail(TAIL) == (DATA[-TAIL:], len(DATA))


async def test_small_and_empty_objects(backend: Backend) -> None:
    backend.put("small.bin", DATA[:1000])
    backend.put("empty.bin", b"")
    async with open_store(backend.url("small.bin"), backend.options) as store:
        assert await store.read_tail(TAIL) == (DATA[:1000], 1000)
        assert await store.read_range(10, 20) == DATA[10:30]
        with pytest.raises(CorruptFileError, match="shorter"):
            await store.read_range(990, 20)
        with pytest.raises(CorruptFileError, match="shorter"):
            await store.read_range(5000, 20)  # wholly beyond the end
    async with open_store(backend.url("empty.bin"), backend.options) as store:
        assert await store.read_tail(TAIL) == (b"", 0)


async def test_missing_object(backend: Backend) -> None:
    with pytest.raises(ObjectNotFoundError, match="no such object"):
        async with open_store(backend.url("nope.orc"), backend.options) as store:
            await store.read_tail(TAIL)


# =========================================================================== ranged reads

async def test_ranges_are_coalesced_pinned_and_concurrent(backend: Backend) -> None:
    version = backend.put("big.bin", DATA)
    ranges = [(0, 100), (150, 50), (100_000, 1000), (101_500, 10), (250_000, 40_000)]
    options = {**backend.options, "max_merge_distance": 1000, "max_concurrency": 2,
               "max_request_size": 40_000}
    expected = plan_ranges(ranges, max_merge_distance=1000, max_request_size=40_000).requests
    assert len(expected) == 3
    async with open_store(backend.url("big.bin"), options) as store:
        await store.read_tail(TAIL)
        opened = len(backend.proxy.log)
        # held until two are in flight together: a client sending one at a time never
        # releases the hold, and the bound (a hang guard) turns that into a failure
        rule, gate = hold_until(2, "get", backend)
        backend.proxy.rules.append(rule)
        try:
            got = await asyncio.wait_for(store.read_ranges(ranges), 120)
        finally:
            gate.set()
        assert got == [DATA[o:o + n] for o, n in ranges]
    reads = backend.proxy.log[opened:]
    assert sorted(backend.byte_range(r) or "" for r in reads) == sorted(
        f"bytes={o}-{o + n - 1}" for o, n in expected)
    assert all(backend.pin(r) == version for r in reads)
    events = sorted([(r.start, 1) for r in reads] + [(r.end, -1) for r in reads])
    level = peak = 0
    for _, step in events:
        level += step
        peak = max(peak, level)
    assert peak == 2  # really two at once, never more than max_concurrency


async def test_gap_ratio_splits_sparse_ranges(backend: Backend) -> None:
    backend.put("big.bin", DATA)
    ranges = [(0, 10), (50_000, 10)]
    async with open_store(backend.url("big.bin"),
                          {**backend.options, "max_merge_distance": 1 << 20}) as store:
        await store.read_tail(TAIL)
        backend.proxy.log.clear()
        assert await store.read_ranges(ranges) == [DATA[0:10], DATA[50_000:50_010]]
    assert len(backend.records("get")) == 2  # the 50 KB gap is more than the 20 bytes


async def test_replaced_object_fails_instead_of_mixing(backend: Backend) -> None:
    backend.put("obj.bin", DATA)
    async with open_store(backend.url("obj.bin"), backend.options) as store:
        await store.read_tail(TAIL)
        assert await store.read_range(0, 10) == DATA[:10]
        backend.put("obj.bin", DATA[::-1])
        with pytest.raises(ObjectChangedError, match="replaced"):
            await store.read_range(0, 10)


async def test_if_match_pins_the_first_read_too(backend: Backend) -> None:
    version = backend.put("obj.bin", DATA)
    url = backend.url("obj.bin")
    async with open_store(url, {**backend.options, "if_match": version}) as store:
        assert await store.read_tail(TAIL) == (DATA[-TAIL:], len(DATA))
        assert await store.read_range(0, 10) == DATA[:10]
    assert backend.proxy.log and all(backend.pin(r) == version for r in backend.proxy.log)
    backend.put("obj.bin", DATA[::-1])
    with pytest.raises(ObjectChangedError):
        async with open_store(url, {**backend.options, "if_match": version}) as store:
            await store.read_tail(TAIL)
    with pytest.raises(SchemaError, match="does not apply to writes"):
        open_output(url, {**backend.options, "if_match": version})


# =========================================================================== failures

async def test_transient_failures_are_retried_and_counted(backend: Backend) -> None:
    backend.put("obj.bin", DATA)
    backend.proxy.rules.append(
        fail_first_kind(backend, "get", 2, Fault(503, "ServiceUnavailable")))
    async with open_store(backend.url("obj.bin"), backend.options) as store:
        assert await store.read_tail(TAIL) == (DATA[-TAIL:], len(DATA))
        assert store.stats.retries == 2


async def test_retries_exhausted(backend: Backend) -> None:
    backend.put("obj.bin", DATA)
    backend.proxy.rules.append(lambda r: Fault(500, "InternalError")
                               if backend.kind(r) in ("get", "head") else None)
    options = {**backend.options, "max_attempts": 3}
    with pytest.raises(RetriesExhaustedError, match="after 3 attempt"):
        async with open_store(backend.url("obj.bin"), options) as store:
            await store.read_tail(TAIL)
    assert len(backend.proxy.log) == 3


async def test_access_denied(backend: Backend) -> None:
    backend.put("obj.bin", DATA)
    backend.proxy.rules.append(lambda r: Fault(403, "AccessDenied"))
    with pytest.raises(AccessDeniedError, match="access denied"):
        async with open_store(backend.url("obj.bin"), backend.options) as store:
            await store.read_tail(TAIL)
    assert len(backend.proxy.log) == 1  # a refusal is not retried


def fail_first_kind(backend: Backend, kind: str, times: int, fault: Fault) -> Any:
    count = 0

    def rule(request: Any) -> Fault | None:
        nonlocal count
        if backend.kind(request) == kind and count < times:
            count += 1
            return fault
        return None

    return rule


# =========================================================================== writing

async def test_small_file_is_one_request(backend: Backend) -> None:
    out = open_output(backend.url("small.bin"), backend.options)
    await out.write(DATA[:1000])
    await out.write(DATA[1000:5000])
    await out.complete()
    assert backend.get("small.bin") == DATA[:5000]
    assert [backend.kind(r) for r in backend.proxy.log] == ["put"]


async def test_large_file_streams_in_parts(backend: Backend) -> None:
    """Parts go out while the writer goes on: write() returns while the first part is still
    held by the proxy (in flight), and nothing is visible until the final request."""
    data = payload(3 * PART + 12345)
    gate = threading.Event()
    backend.proxy.rules.append(lambda r: Hold(gate) if backend.kind(r) == "part" else None)
    out = open_output(backend.url("big.bin"), {**backend.options, "part_size": PART,
                                               "memory_budget": 3 * PART})
    try:
        await out.write(data[:PART + 1])  # part 1 is cut and sent; write returns meanwhile
        while not backend.records("part"):
            await asyncio.sleep(0.01)  # polls a condition (the request reached the proxy)
        assert not backend.records("part")[0].end  # still held, so still in flight
        assert out.in_flight_bytes == PART  # type: ignore[attr-defined]
        assert backend.get("big.bin") is None
    finally:
        gate.set()
    for start in range(PART + 1, len(data), 3 * 1024 * 1024):
        await out.write(data[start:start + 3 * 1024 * 1024])
    assert backend.get("big.bin") is None  # parts, but no object yet
    await out.complete()
    assert backend.get("big.bin") == data
    kinds = [backend.kind(r) for r in backend.proxy.log]
    assert kinds.count("part") == 4 and out.stats.parts == 4  # type: ignore[attr-defined]
    if backend.name == "gs":  # a resumable upload: the last chunk says the size
        assert kinds == ["create"] + ["part"] * 4
    else:
        assert kinds[0] == ("create" if backend.name == "s3" else "part")
        assert kinds[-1] == "complete"
    assert backend.pending_uploads() == 0


async def test_write_waits_within_the_memory_budget(backend: Backend) -> None:
    data = payload(6 * PART)
    budget = 2 * PART
    out = open_output(backend.url("big.bin"), {**backend.options, "part_size": PART,
                                               "max_concurrency": 4, "memory_budget": budget})
    held = []
    for start in range(0, len(data), 1024 * 1024):
        await out.write(data[start:start + 1024 * 1024])
        held.append(out.buffered_bytes + out.in_flight_bytes)  # type: ignore[attr-defined]
    await out.complete()
    assert max(held) <= budget
    assert backend.get("big.bin") == data


@pytest.mark.parametrize("size", [1000, 2 * PART + 1])
async def test_abort_leaves_nothing(backend: Backend, size: int) -> None:
    out = open_output(backend.url("gone.bin"), {**backend.options, "part_size": PART})
    await out.write(payload(size))
    while size > PART and not backend.records("part"):
        await asyncio.sleep(0.01)  # until a part is on its way
    await out.abort()
    await out.abort()  # harmless
    assert backend.get("gone.bin") is None and backend.names() == []
    assert not backend.records("complete") and not backend.records("put")
    assert backend.pending_uploads() == 0
    if size > PART and backend.name != "az":  # the upload itself is dropped
        assert backend.records("abort")
    with pytest.raises(StoreError, match="aborted"):
        await out.write(b"x")


async def test_cancelled_writer_leaves_nothing(backend: Backend) -> None:
    """A writer cancelled while a part is held in flight; the abort it runs (as aorc's
    writers do) leaves no object and no pending upload."""
    gate = threading.Event()
    loop = asyncio.get_running_loop()
    reached = asyncio.Event()

    def hold_parts(request: Any) -> Hold | None:  # in the proxy's thread
        if backend.kind(request) != "part":
            return None
        loop.call_soon_threadsafe(reached.set)
        return Hold(gate)

    backend.proxy.rules.append(hold_parts)
    out = open_output(backend.url("cut.bin"), {**backend.options, "part_size": PART,
                                               "max_concurrency": 1})

    async def produce() -> None:
        try:
            for _ in range(10):
                await out.write(payload(PART))
        except asyncio.CancelledError:
            await out.abort()
            raise

    task = asyncio.create_task(produce())
    try:
        waiting = asyncio.ensure_future(reached.wait())
        await asyncio.wait({task, waiting}, return_when=asyncio.FIRST_COMPLETED)
        assert reached.is_set() and not task.done()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    finally:
        gate.set()
    assert backend.get("cut.bin") is None and backend.names() == []
    assert backend.pending_uploads() == 0
    assert not backend.records("complete")


@pytest.mark.parametrize("size", [1000, 2 * PART + 1])
async def test_create_only(backend: Backend, size: int) -> None:
    data = payload(size)
    options = {**backend.options, "part_size": PART, "overwrite": False}
    out = open_output(backend.url("new.bin"), options)
    await out.write(data)
    await out.complete()
    assert backend.get("new.bin") == data
    finals = [r for r in backend.proxy.log if backend.kind(r) in ("put", "complete", "create")]
    assert finals and all(backend.create_only(r) for r in finals
                          if backend.kind(r) != "create" or backend.name == "gs")
    out = open_output(backend.url("new.bin"), options)
    with pytest.raises(ObjectExistsError, match="already exists"):
        await out.write(payload(size, seed=2))  # GCS checks when the upload starts,
        await out.complete()  # the others when it is completed
    await out.abort()
    assert backend.get("new.bin") == data  # untouched
    assert backend.pending_uploads() == 0


async def test_part_failures_are_retried(backend: Backend) -> None:
    backend.proxy.rules.append(fail_first_kind(backend, "part", 2, Fault(503, "SlowDown")))
    data = payload(2 * PART + 77)
    out = open_output(backend.url("big.bin"), {**backend.options, "part_size": PART})
    await out.write(data)
    await out.complete()
    assert backend.get("big.bin") == data
    assert out.stats.retries == 2 and out.stats.parts == 3  # type: ignore[attr-defined]


async def test_a_refused_part_aborts_everything(backend: Backend) -> None:
    backend.proxy.rules.append(lambda r: Fault(403, "AccessDenied")
                               if backend.kind(r) == "part" else None)
    out = open_output(backend.url("big.bin"), {**backend.options, "part_size": PART})
    with pytest.raises(AccessDeniedError):
        await out.write(payload(PART + 1))
        await out.complete()
    await out.abort()
    assert backend.names() == [] and backend.pending_uploads() == 0


# =========================================================================== listing

async def test_listing_is_paginated(backend: Backend, monkeypatch: pytest.MonkeyPatch) -> None:
    import aorc.io.azure.store
    import aorc.io.gcs.store
    import aorc.io.s3.scheme
    for module in (aorc.io.s3.scheme, aorc.io.gcs.store):
        monkeypatch.setattr(module, "LIST_PAGE_SIZE", 2)
    monkeypatch.setattr(aorc.io.azure.store, "AZURE_PAGE_SIZE", 2)
    for key in ("d/a=1/x.orc", "d/a=1/y.orc", "d/a=2/z.orc", "d/_SUCCESS", "d/.hidden/q.orc",
                "d/empty.orc", "dx/not-under-d.orc"):
        backend.put(key, b"" if key.endswith("empty.orc") else DATA[:100])
    stats = IOStats()
    found = await registry.list_files(backend.url("d/"), backend.options, stats)
    assert [(f.path, f.size) for f in found] == [
        (backend.url("d/a=1/x.orc"), 100), (backend.url("d/a=1/y.orc"), 100),
        (backend.url("d/a=2/z.orc"), 100)]
    assert len(backend.records("list")) == stats.requests
    if backend.options.get("engine") != "obstore":  # obstore asks for 1,000 keys a page
        assert stats.requests == 3  # 6 names, 2 a page
    single = await registry.list_files(backend.url("d/a=2/z.orc"), backend.options)
    assert [(f.path, f.size) for f in single] == [(backend.url("d/a=2/z.orc"), 100)]
    with pytest.raises(ObjectNotFoundError, match="no files"):
        await registry.list_files(backend.url("nothing/"), backend.options)


async def test_delete(backend: Backend) -> None:
    backend.put("a.bin", b"x")
    await registry.delete(backend.url("a.bin"), backend.options)
    await registry.delete(backend.url("a.bin"), backend.options)  # gone already: fine
    assert backend.names() == []


async def test_one_level_listing(backend: Backend, monkeypatch: pytest.MonkeyPatch) -> None:
    """list_level: the files and the sub-prefixes directly under a prefix, with one
    delimiter listing (paginated), hidden and empty names skipped; a missing prefix is
    empty."""
    import aorc.io.azure.store
    import aorc.io.gcs.store
    import aorc.io.s3.scheme
    for module in (aorc.io.s3.scheme, aorc.io.gcs.store):
        monkeypatch.setattr(module, "LIST_PAGE_SIZE", 2)
    monkeypatch.setattr(aorc.io.azure.store, "AZURE_PAGE_SIZE", 2)
    for key in ("t/dt=1/a.orc", "t/dt=1/b.orc", "t/dt=2/c.orc", "t/dt=3/x/d.orc", "t/top.orc",
                "t/_SUCCESS", "t/_tmp/e.orc", "t/.hidden/f.orc", "t/empty.orc", "u/dt=9/g.orc"):
        backend.put(key, b"" if key.endswith("empty.orc") else DATA[:10])
    stats = IOStats()
    level = await registry.list_level(backend.url("t/"), backend.options, stats)
    assert level.folders == [backend.url(f"t/dt={i}/") for i in (1, 2, 3)]
    assert [(f.path, f.size) for f in level.files] == [(backend.url("t/top.orc"), 10)]
    assert len(backend.records("list")) == stats.requests >= 1
    inner = await registry.list_level(backend.url("t/dt=1"), backend.options)
    assert inner.folders == [] and [f.path for f in inner.files] == [
        backend.url("t/dt=1/a.orc"), backend.url("t/dt=1/b.orc")]
    assert await registry.list_level(backend.url("t/dt=7/"), backend.options) == \
        registry.Level([], [])


async def test_one_level_listing_local_and_memory(tmp_path: Any) -> None:
    for name in ("dt=1/a.orc", "dt=2/b.orc", "top.orc", "_SUCCESS", ".x/c.orc"):
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"abc")
    level = await registry.list_level(str(tmp_path))
    assert level.folders == [f"{tmp_path}/dt=1/", f"{tmp_path}/dt=2/"]
    assert [f.path for f in level.files] == [f"{tmp_path}/top.orc"]
    memory = registry.scheme_for("memory://x")
    memory.files.update({"memory://lv/dt=1/a": b"1", "memory://lv/b": b"22"})  # type: ignore[attr-defined]
    level = await registry.list_level("memory://lv")
    assert level.folders == ["memory://lv/dt=1/"]
    assert [(f.path, f.size) for f in level.files] == [("memory://lv/b", 2)]


async def test_spooled_parts_upload_the_same_bytes(backend: Backend, tmp_path: Path) -> None:
    """With a spooling part buffer (aorc.io.spool) the object is the bytes written, sent in
    the same parts, while the output holds none of its waiting bytes in memory."""
    from aorc.io.spool import Spool

    spool = Spool.open(tmp_path)
    data = payload(2 * PART + 4321, seed=5)
    out = open_output(backend.url("spooled.bin"), {**backend.options, "part_size": PART})
    out.use_part_buffer(spool.buffer(PART))  # type: ignore[attr-defined]
    held = []
    for start in range(0, len(data), 2 * 1024 * 1024):
        await out.write(data[start:start + 2 * 1024 * 1024])
        held.append(out.buffered_memory)  # type: ignore[attr-defined]
    assert spool.peak > 0 and max(held) == 0
    await out.complete()
    assert backend.get("spooled.bin") == data
    assert out.stats.parts == 3  # type: ignore[attr-defined]
    assert spool.used == 0
    assert sorted(p.name for p in Path(spool.path).iterdir()) == ["owner.lock"]
    spool.close()
    assert backend.pending_uploads() == 0
