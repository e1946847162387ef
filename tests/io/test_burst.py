"""Bursts: a batch of ranges too far apart to merge whose requests fetch at most one
request's bytes in all goes out at once (one round trip), bounded by ``max_burst``, and
takes one ``max_concurrency`` slot. Requests in flight are counted by events (asyncio
scheduling), not by the clock."""

from __future__ import annotations

import asyncio

import pytest

from aorc.errors import SchemaError
from aorc.io import StoreOptions
from aorc.io.memory import MemoryStore

DATA = bytes(range(256)) * 4096  # 1 MiB
FAR = [(i * 50_000, 100) for i in range(12)]  # gaps far larger than the bytes wanted


class Counting(MemoryStore):
    """Each request stays in flight until ``gate`` opens (or for a few loop turns)."""

    def __init__(self, options: StoreOptions, gate: asyncio.Event | None = None) -> None:
        super().__init__(DATA, options=options)
        self.inflight = self.peak = 0
        self.gate = gate

    async def _fetch(self, offset: int, length: int) -> bytes:
        self.inflight += 1
        self.peak = max(self.peak, self.inflight)
        try:
            if self.gate is not None:
                await self.gate.wait()
            for _ in range(5):  # let every request that may start, start
                await asyncio.sleep(0)
            return await super()._fetch(offset, length)
        finally:
            self.inflight -= 1


async def test_small_far_ranges_go_out_at_once() -> None:
    store = Counting(StoreOptions(max_concurrency=2))
    got = await store.read_ranges(FAR)
    assert got == [DATA[o:o + n] for o, n in FAR]
    assert store.stats.requests == 12 and store.peak == 12


async def test_max_burst_caps_a_burst() -> None:
    store = Counting(StoreOptions(max_concurrency=2, max_burst=5))
    await store.read_ranges(FAR)
    assert store.peak == 5


async def test_a_batch_larger_than_one_request_keeps_max_concurrency() -> None:
    store = Counting(StoreOptions(max_concurrency=2, max_request_size=1000))
    ranges = [(i * 50_000, 200) for i in range(6)]  # 1,200 bytes > one request's 1,000
    assert await store.read_ranges(ranges) == [DATA[o:o + n] for o, n in ranges]
    assert store.peak == 2


async def test_a_burst_takes_one_concurrency_slot() -> None:
    """With max_concurrency=1 a single read waits for a burst in flight to finish."""
    gate = asyncio.Event()
    store = Counting(StoreOptions(max_concurrency=1), gate)
    burst = asyncio.ensure_future(store.read_ranges(FAR))
    for _ in range(100):  # until the whole burst is in flight, held at the gate
        if store.inflight == 12:
            break
        await asyncio.sleep(0)
    if store.inflight != 12:
        gate.set()  # let the requests finish before failing
        await burst
    assert store.inflight == 12
    single = asyncio.ensure_future(store.read_range(900_000, 10))
    for _ in range(20):
        await asyncio.sleep(0)
    assert store.inflight == 12 and not single.done()  # waiting for the burst's slot
    gate.set()
    assert await single == DATA[900_000:900_010]
    assert len(await burst) == 12
    assert store.peak == 12


def test_max_burst_is_checked() -> None:
    with pytest.raises(SchemaError, match="max_burst"):
        StoreOptions(max_burst=0)
