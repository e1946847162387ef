"""Local and memory stores, open_store, and the shared concurrency logic."""

from __future__ import annotations

import asyncio
import gc
import os
import pathlib
import threading
import warnings

import pytest

from aorc.errors import (
    AccessDeniedError,
    CorruptFileError,
    ObjectNotFoundError,
    SchemaError,
    StoreError,
    UnsupportedFeatureError,
)
from aorc.io import BaseStore, LocalStore, MemoryStore, Store, StoreOptions, open_store

DATA = bytes(i * 31 % 256 for i in range(100_000))


@pytest.fixture
def data_file(tmp_path: pathlib.Path) -> pathlib.Path:
    path = tmp_path / "data.bin"
    path.write_bytes(DATA)
    return path


async def test_tail_is_one_request(data_file: pathlib.Path) -> None:
    async with open_store(data_file) as store:
        tail, size = await store.read_tail(16 * 1024)
        assert size == len(DATA)
        assert tail == DATA[-16 * 1024:]
        assert store.stats.requests == 1
        assert store.stats.bytes == 16 * 1024


async def test_tail_longer_than_file_returns_whole_file(data_file: pathlib.Path) -> None:
    async with open_store(str(data_file)) as store:
        assert await store.read_tail(10**9) == (DATA, len(DATA))
        assert await store.read_tail(0) == (b"", len(DATA))


async def test_read_range_and_past_end(data_file: pathlib.Path) -> None:
    async with open_store(data_file) as store:
        assert await store.read_range(1000, 123) == DATA[1000:1123]
        assert await store.read_range(5, 0) == b""
        with pytest.raises(CorruptFileError, match="shorter"):
            await store.read_range(len(DATA) - 10, 20)
        with pytest.raises(ValueError):
            await store.read_range(-1, 5)


async def test_read_ranges_coalesces(data_file: pathlib.Path) -> None:
    ranges = [(90_000, 100), (0, 10), (50, 10), (40_000, 5)]
    opts = {"max_merge_distance": 1000, "max_gap_ratio": 2.0}
    async with open_store(data_file, opts) as store:
        got = await store.read_ranges(ranges)
        assert got == [DATA[o:o + n] for o, n in ranges]
        assert store.stats.requests == 3  # [0, 60) merged
        assert store.stats.bytes == 60 + 5 + 100


async def test_read_ranges_never_read_more_gap_than_data_by_default(
        data_file: pathlib.Path) -> None:
    ranges = [(0, 10), (50, 10), (100, 30)]  # gaps 40 > 20 useful bytes, then 40 <= 50
    async with open_store(data_file, {"max_merge_distance": 1000}) as store:
        got = await store.read_ranges(ranges)
        assert got == [DATA[o:o + n] for o, n in ranges]
        assert store.stats.requests == 2  # [0, 10), then [50, 130)
        assert store.stats.bytes == 10 + 80


async def test_local_ranges_are_not_split_unless_asked(tmp_path: pathlib.Path) -> None:
    # Stripes are often longer than the 64 MiB default piece: on a local disk one pread
    # serves the whole range (pieces would only be joined again, a copy in the event loop).
    path = tmp_path / "big.bin"
    size = 70 << 20
    with open(path, "wb") as f:
        f.truncate(size)
        f.seek(size - 1)
        f.write(b"\x01")
    async with open_store(path) as store:
        [whole] = await store.read_ranges([(0, size)])
        assert len(whole) == size and whole[-1] == 1
        assert store.stats.requests == 1
    async with open_store(path, {"max_request_size": 32 << 20}) as store:
        [whole] = await store.read_ranges([(0, size)])
        assert len(whole) == size and whole[-1] == 1
        assert store.stats.requests == 3


async def test_a_long_read_is_filled_in_pieces_by_several_threads(
        tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import aorc.io.local as local

    monkeypatch.setattr(local, "PIECE_BYTES", 64 << 10)
    data = os.urandom(1 << 20) + b"end"
    path = tmp_path / "long.bin"
    path.write_bytes(data)
    calls: list[tuple[int, int, int]] = []
    real = local._split.pread_into

    def pread_into(fd: int, target: bytes, start: int, length: int, offset: int) -> int:
        calls.append((start, length, offset))
        return real(fd, target, start, length, offset)

    monkeypatch.setattr(local._split, "pread_into", pread_into)
    async with open_store(path) as store:
        got = await store.read_range(5, len(data) - 5)
        assert isinstance(got, bytes) and got == data[5:]
        assert store.stats.requests == 1
        assert len(calls) == local.MAX_PIECES
        assert sorted(c[0] for c in calls) == [c[2] - 5 for c in sorted(calls)]
        assert sum(c[1] for c in calls) == len(data) - 5
        # The file ends inside the last piece: the read is short, which the store reports.
        with pytest.raises(CorruptFileError, match="shorter than its metadata"):
            await store.read_range(len(data) - (200 << 10), 400 << 10)


async def test_a_short_read_fills_a_buffer_made_in_the_calling_thread(
        tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import aorc.io.local as local

    data = os.urandom(100_000)
    path = tmp_path / "short.bin"
    path.write_bytes(data)
    made: list[int] = []
    real = local._split.new_bytes

    def new_bytes(length: int) -> bytes:
        made.append(threading.get_ident())
        return real(length)

    monkeypatch.setattr(local._split, "new_bytes", new_bytes)
    async with open_store(path) as store:
        assert await store.read_range(7, 50_000) == data[7:50_007]
        # The file ends inside the range: the read is short, which the store reports.
        with pytest.raises(CorruptFileError, match="shorter than its metadata"):
            await store.read_range(90_000, 20_000)
    assert made == [threading.get_ident()] * 2


def test_pread_into_refuses_a_slice_outside_its_target() -> None:
    from aorc.io import _pread

    target = _pread.new_bytes(10)
    with pytest.raises(ValueError, match="outside"):
        _pread.pread_into(0, target, 5, 6, 0)
    with pytest.raises(OSError):
        _pread.pread_into(-1, target, 0, 4, 0)


@pytest.mark.parametrize("kind", ["str", "pathlike", "uri"])
async def test_missing_file(tmp_path: pathlib.Path, kind: str) -> None:
    path = tmp_path / "missing.orc"
    source = {"str": str(path), "pathlike": path, "uri": path.as_uri()}[kind]
    store = open_store(source)
    with pytest.raises(ObjectNotFoundError, match="missing.orc") as info:
        await store.read_tail(100)
    assert isinstance(info.value, FileNotFoundError)
    assert isinstance(info.value.__cause__, FileNotFoundError)
    await store.close()


async def test_directory_is_a_store_error(tmp_path: pathlib.Path) -> None:
    with pytest.raises(StoreError, match="directory"):
        async with open_store(tmp_path):
            pass


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0,
                    reason="needs file permissions that apply to this user")
async def test_permission_denied(data_file: pathlib.Path) -> None:
    data_file.chmod(0)
    with pytest.raises(AccessDeniedError) as info:
        async with open_store(data_file):
            pass
    assert isinstance(info.value, PermissionError)


async def test_file_uri(data_file: pathlib.Path) -> None:
    async with open_store(data_file.as_uri()) as store:
        assert isinstance(store, LocalStore)
        assert await store.read_range(0, 4) == DATA[:4]


def test_open_store_rejections() -> None:
    with pytest.raises(UnsupportedFeatureError, match="'ftp'.*supported: abfs://.*gs://.*"
                                                      "s3://.*register_scheme"):
        open_store("ftp://user:secret@host/key.orc?sig=123")
    with pytest.raises(SchemaError, match="bogus"):
        open_store("x.orc", {"bogus": 1})
    with pytest.raises(SchemaError, match="max_concurrency"):
        open_store("x.orc", {"max_concurrency": 0})
    with pytest.raises(SchemaError):
        open_store(12345)  # type: ignore[arg-type]
    with pytest.raises(UnsupportedFeatureError):
        open_store("x.orc", mode="w")


async def test_memory_store_and_passthrough() -> None:
    store = open_store(memoryview(DATA))
    assert isinstance(store, MemoryStore)
    assert isinstance(store, Store)
    assert open_store(store) is store
    assert await store.read_tail(3) == (DATA[-3:], len(DATA))
    assert await store.read_ranges([(5, 3), (0, 2)]) == [DATA[5:8], DATA[:2]]
    await store.close()
    with pytest.raises(StoreError, match="closed"):
        await store.read_range(0, 1)
    await store.close()  # twice is fine


class SlowStore(BaseStore):
    """A store whose requests take a while, recording how many run at once."""

    def __init__(self, data: bytes, options: StoreOptions, fail_at: int | None = None) -> None:
        super().__init__("<slow>", options)
        self.data = data
        self.in_flight = 0
        self.max_in_flight = 0
        self.cancelled = 0
        self.fail_at = fail_at

    async def _fetch(self, offset: int, length: int) -> bytes:
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            await asyncio.sleep(0.05 if offset != self.fail_at else 0.01)
            if offset == self.fail_at:
                raise StoreError("injected failure")
            return self.data[offset:offset + length]
        except asyncio.CancelledError:
            self.cancelled += 1
            raise
        finally:
            self.in_flight -= 1


async def test_read_ranges_concurrency_is_bounded() -> None:
    # 1,200 bytes asked for: more than one request's 1,000, so not a burst (test_burst.py)
    store = SlowStore(DATA, StoreOptions(max_merge_distance=0, max_concurrency=3,
                                         max_request_size=1000))
    ranges = [(i * 5000, 100) for i in range(12)]
    got = await store.read_ranges(ranges)
    assert got == [DATA[o:o + n] for o, n in ranges]
    assert store.max_in_flight == 3
    assert store.stats.requests == 12


class FailingStore(BaseStore):
    """Requests stay in flight until cancelled, except the one at ``fail_at``: it fails
    once ``together`` requests are in flight (counted in requests, not in seconds: with
    sleeps, a stalled event loop let them all finish before the failure was seen)."""

    def __init__(self, data: bytes, options: StoreOptions, fail_at: int,
                 together: int) -> None:
        super().__init__("<failing>", options)
        self.data = data
        self.fail_at = fail_at
        self.together = together
        self.full = asyncio.Event()
        self.in_flight = 0
        self.cancelled = 0

    async def _fetch(self, offset: int, length: int) -> bytes:
        self.in_flight += 1
        if self.in_flight == self.together:
            self.full.set()
        try:
            if offset == self.fail_at:
                await self.full.wait()
                raise StoreError("injected failure")
            await asyncio.Event().wait()  # until cancelled
            raise AssertionError("not reached")
        except asyncio.CancelledError:
            self.cancelled += 1
            raise
        finally:
            self.in_flight -= 1


async def test_read_ranges_failure_cancels_the_rest() -> None:
    store = FailingStore(DATA, StoreOptions(max_merge_distance=0, max_concurrency=4),
                         fail_at=10_000, together=4)
    ranges = [(i * 5000, 100) for i in range(8)]
    with pytest.raises(StoreError, match="injected"):  # the error itself, not a group
        # The others never finish by themselves: the call returns only if the failure
        # cancels them (the bound is a hang guard).
        await asyncio.wait_for(store.read_ranges(ranges), 120)
    assert store.full.is_set() and store.in_flight == 0
    # The three held with the failing one were cancelled (so may be the four waiting for
    # a slot, if the slot they get comes with the cancellation: asyncio's business).
    assert store.cancelled >= 3


def _resource_warnings(caught: list[warnings.WarningMessage]) -> list[str]:
    return [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)]


async def _use_store(path: pathlib.Path, close: bool) -> None:
    store = open_store(path)
    await store.read_tail(10)
    await store.read_ranges([(0, 10), (50_000, 10)])
    if close:
        await store.close()


async def test_close_leaves_no_resource_warning(data_file: pathlib.Path) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        await _use_store(data_file, close=True)
        gc.collect()
    assert _resource_warnings(caught) == []
    # The check can fail: a store that is never closed leaks its file.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        await _use_store(data_file, close=False)
        gc.collect()
    assert _resource_warnings(caught) != []


async def test_cancel_during_open_closes_the_file(data_file: pathlib.Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A read cancelled while the open runs in its thread leaves no open file behind: the
    file is closed when the open completes (a leaked one shows up as a ResourceWarning in a
    later test, whenever the garbage collector gets to it)."""
    import threading

    import aorc.io.local

    started, release, done = threading.Event(), threading.Event(), threading.Event()
    opened: list[object] = []

    def slow_open(*args: object, **kwargs: object) -> object:
        started.set()
        release.wait(60)  # (the bound only turns a bug into a failure, not a hang)
        f = open(*args, **kwargs)  # type: ignore[call-overload]  # noqa: SIM115
        opened.append(f)
        done.set()
        return f

    monkeypatch.setattr(aorc.io.local, "open", slow_open, raising=False)
    store = LocalStore(data_file)
    task = asyncio.ensure_future(store.read_tail(64))
    await asyncio.to_thread(started.wait, 60)
    assert started.is_set()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    release.set()
    await asyncio.to_thread(done.wait, 60)
    for _ in range(1000):  # the thread's result reaches the loop, then the close callback runs
        if opened[0].closed:  # type: ignore[attr-defined]
            break
        await asyncio.sleep(0)
    await store.close()
    assert len(opened) == 1 and opened[0].closed  # type: ignore[attr-defined]


@pytest.mark.parametrize("size", [0, 10, len(DATA), len(DATA) + 5, 1 << 22])
def test_read_local_whatever_size_the_listing_gave(data_file: pathlib.Path, size: int) -> None:
    """A small local file is read whole with os.read: all of it, whether the listed size
    is unknown (0), short (the file grew), exact or too long."""
    from aorc.io import registry

    assert registry.read_local(str(data_file), size) == DATA
    assert registry.read_local(f"file://{data_file}") == DATA


def test_read_local_errors(tmp_path: pathlib.Path) -> None:
    from aorc.io import registry

    with pytest.raises(ObjectNotFoundError, match="missing.orc"):
        registry.read_local(str(tmp_path / "missing.orc"))
    with pytest.raises(StoreError):
        registry.read_local(str(tmp_path))  # a folder
    with pytest.raises(ValueError, match="not a local file"):
        registry.read_local("s3://bucket/key.orc")
