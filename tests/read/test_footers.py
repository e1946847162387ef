"""The stripe footers a reader keeps across reads (aorc.read.footers): the byte budget and
its accounting, the least recently used dropped first, the file version they belong to, and
reads of a reader that skip the footer round (counted requests, no timing)."""

from __future__ import annotations

import asyncio
import gc
import io
import os
import pathlib
import tracemalloc

import numpy as np
import pyarrow as pa
import pyarrow.orc as po
import pytest

import aorc
import aorc.read.reader
from aorc.errors import CorruptFileError
from aorc.format.tail import FileTail, parse_tail
from aorc.io.memory import MemoryStore
from aorc.read.footers import ENTRY_OVERHEAD, FooterCache
from aorc.read.plan import FOOTERS_AHEAD


class CountingStore(MemoryStore):
    """A memory store that records the ranges it is asked for."""

    def __init__(self, data: bytes) -> None:
        super().__init__(data, path="<footers>")
        self.asked: list[tuple[int, int]] = []

    async def _fetch(self, offset: int, length: int) -> bytes:
        self.asked.append((offset, length))
        out: bytes = await super()._fetch(offset, length)
        return out


async def many_stripes(path: pathlib.Path, rows: int = 40_000,
                       compression: str = "zstd") -> tuple[bytes, pa.Table]:
    """A file of about ``rows // 200`` stripes (tiny ones: 2 KiB), written by aorc."""
    rng = np.random.default_rng(5)
    t = pa.table({"a": pa.array(np.arange(rows, dtype=np.int64)),
                  "b": pa.array(rng.standard_normal(rows)),
                  "c": pa.array([f"s{v}" for v in rng.integers(0, 1000, rows)])})
    await aorc.write_table(t, path, aorc.WriteOptions(stripe_size=2048,
                                                      compression=compression))
    return path.read_bytes(), t


@pytest.fixture(scope="module")
def many(tmp_path_factory: pytest.TempPathFactory) -> tuple[bytes, pa.Table]:
    return asyncio.run(many_stripes(tmp_path_factory.mktemp("footers") / "many.orc"))


def footer_ranges(reader: aorc.OrcReader) -> set[tuple[int, int]]:
    return {(s.offset + s.index_length + s.data_length, s.footer_length)
            for s in reader.stripes}


# =========================================================================== the cache

def test_least_recently_used_dropped_beyond_the_budget() -> None:
    raw = [bytes([i]) * 100 for i in range(5)]
    cache = FooterCache(budget=3 * FooterCache.cost(raw[0]))
    for i in range(3):
        cache.put(i, raw[i])
    assert cache.get(0) == raw[0]  # now the most recently used
    cache.put(3, raw[3])
    assert 1 not in cache and {0, 2, 3} == {i for i in range(5) if i in cache}
    assert cache.nbytes == 3 * FooterCache.cost(raw[0]) <= cache.budget
    cache.put(3, raw[3])  # again: counted once
    assert len(cache) == 3 and cache.nbytes <= cache.budget
    cache.discard(0)
    assert cache.get(0) is None and cache.nbytes == 2 * FooterCache.cost(raw[0])


def test_a_footer_larger_than_the_budget_is_not_kept() -> None:
    cache = FooterCache(budget=1000)
    cache.put(1, b"x" * 100)
    cache.put(2, b"y" * 1000)
    assert 2 not in cache and 1 in cache
    cache.put(1, b"z" * 1000)  # a new value too large: the old one goes too
    assert len(cache) == 0 and cache.nbytes == 0
    assert len(FooterCache(budget=0)) == 0


def test_a_view_is_copied_not_its_buffer_kept() -> None:
    buffer = bytearray(b"a" * 10_000)
    cache = FooterCache()
    cache.put(7, memoryview(buffer)[100:150])
    buffer[100:150] = b"b" * 50
    kept = cache.get(7)
    assert type(kept) is bytes and kept == b"a" * 50
    assert cache.nbytes == FooterCache.cost(b"a" * 50) < 1000


def test_the_count_covers_the_memory_used() -> None:
    """``nbytes`` is not below what tracemalloc sees the entries take (the dictionary's
    slots, the keys, the bytes objects), nor far above it."""
    size, n = 300, 2000
    view = memoryview(bytearray(os.urandom(size * n)))
    cache = FooterCache(budget=10**9)
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for i in range(n):
            cache.put(1000 + i, view[i * size:(i + 1) * size])
        gc.collect()
        used = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert used <= cache.nbytes <= 1.5 * used
    assert cache.nbytes - n * size > n * ENTRY_OVERHEAD


def test_pinning_another_version_drops_every_footer() -> None:
    cache = FooterCache()
    cache.pin('"v1"')
    cache.put(0, b"abc")
    cache.pin('"v1"')
    assert 0 in cache
    cache.pin('"v2"')
    assert len(cache) == 0 and cache.nbytes == 0


# =========================================================================== through a reader

async def test_a_second_column_read_sends_no_footer_request(
        many: tuple[bytes, pa.Table], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(aorc.read.reader, "WHOLE_READ_BYTES", 0)
    monkeypatch.setattr(aorc.read.reader, "GROUP_BYTES", 20_000)  # several groups
    data, t = many
    store = CountingStore(data)
    async with aorc.open_reader(store) as reader:
        first = await reader.read(["b"])
        footers = footer_ranges(reader)
        assert len(footers & set(store.asked)) > 100  # those not in the tail read at open
        store.asked.clear()
        second = await reader.read(["a", "c"])
        assert not footers & set(store.asked)
        assert len(reader._footer_cache) == reader.num_stripes
    assert first.equals(t.select(["b"]))
    assert second.equals(po.read_table(io.BytesIO(data), columns=["a", "c"]))


async def test_the_cache_stays_within_its_budget_on_a_file_of_many_stripes(
        many: tuple[bytes, pa.Table], monkeypatch: pytest.MonkeyPatch) -> None:
    data, t = many
    async with aorc.open_reader(data) as probe:
        assert probe.num_stripes >= 150
        budget = 20 * FooterCache.cost(b"x" * probe.stripes[0].footer_length)
    monkeypatch.setattr(aorc.read.reader, "FOOTER_CACHE_BYTES", budget)
    monkeypatch.setattr(aorc.read.reader, "WHOLE_READ_BYTES", 0)
    store = CountingStore(data)
    async with aorc.open_reader(store) as reader:
        cache = reader._footer_cache
        got = await reader.read(["c"])
        assert 10 <= len(cache) <= 25 and cache.nbytes <= budget
        assert max(i for i in range(reader.num_stripes) if i in cache) == reader.num_stripes - 1
        lookup = await reader.read(["a"], filters=[("a", "==", 12_345)])
        assert cache.nbytes <= budget
        for i in range(reader.num_stripes):
            await reader.read_stripe_footer(i)
            assert cache.nbytes <= budget
        assert len(cache) < reader.num_stripes
        for i in range(0, reader.num_stripes, 5):  # the footers fetched ahead: a few at most
            await reader.read_stripe_footer(i)
            assert len(reader._footers) <= FOOTERS_AHEAD
    assert got.equals(t.select(["c"]))
    assert lookup.to_pydict() == {"a": [12_345]}


def corrupt_footer(data: bytes, index: int) -> bytes:
    """The file with stripe ``index``'s footer overwritten (it no longer parses)."""
    tail = parse_tail(data, len(data))
    assert isinstance(tail, FileTail)
    s = tail.stripes[index]
    return (data[:s.footer_offset] + b"\xff" * s.footer_length
            + data[s.footer_offset + s.footer_length:])


async def test_a_footer_that_fails_to_parse_is_not_kept(
        tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(aorc.read.reader, "WHOLE_READ_BYTES", 0)
    data, _ = await many_stripes(tmp_path / "bad.orc", rows=2_000, compression="none")
    bad = corrupt_footer(data, 3)
    store = CountingStore(bad)
    async with aorc.open_reader(store) as reader:
        for _ in range(2):  # fetched and failing again, naming file and stripe, each time
            store.asked.clear()
            with pytest.raises(CorruptFileError, match=r"<footers>.*stripe 3"):
                await reader.read(["a"], filters=[("a", ">=", 0)])
            assert (reader.stripes[3].offset + reader.stripes[3].index_length
                    + reader.stripes[3].data_length, reader.stripes[3].footer_length
                    ) in store.asked
            assert 3 not in reader._footer_cache
            assert {0, 1, 2} <= {i for i in range(3) if i in reader._footer_cache}
        with pytest.raises(CorruptFileError, match=r"<footers>.*stripe 3"):
            await reader.read_stripe_footer(3)
        assert 3 not in reader._footer_cache
