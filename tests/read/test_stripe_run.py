"""aorc.read.stripe_run: a stripe's parts shared by the pool's free threads."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any

import pyarrow as pa
import pytest

from aorc.errors import CorruptFileError
from aorc.read.plan import StripeJob
from aorc.read.stripe_run import decode_stripe


def _job(parts: list[Callable[[], Any]], weights: list[int] | None = None) -> StripeJob:
    def assemble(results: list[Any]) -> list[pa.RecordBatch]:
        return [pa.record_batch({"r": results})]
    return StripeJob(4, "f.orc", lambda: parts, assemble, weights=weights or [])


async def test_the_free_thread_takes_every_other_column_while_one_is_long() -> None:
    """Parts are taken one at a time by whichever thread is free, heaviest first: while the
    heaviest part is held, the other thread decodes all the rest (a fixed share of the parts
    per thread would leave some behind the held one, and time out)."""
    done: list[int] = []
    others = threading.Event()
    order: list[int] = []
    lock = threading.Lock()

    def part(i: int) -> Callable[[], int]:
        def run() -> int:
            with lock:
                order.append(i)
            if i == 3:  # the heaviest: held until every other part is done
                assert others.wait(30), f"only {sorted(done)} decoded while part 3 was held"
            else:
                with lock:
                    done.append(i)
                    if len(done) == 7:
                        others.set()
            return i * 10
        return run

    job = _job([part(i) for i in range(8)], [5, 1, 2, 100, 4, 3, 1, 2])
    batches = await decode_stripe(job, 2)
    assert batches[0].column("r").to_pylist() == [i * 10 for i in range(8)]
    assert order[0] == 3 and sorted(done) == [0, 1, 2, 4, 5, 6, 7]


async def test_no_thread_waits_for_another_to_finish_its_part() -> None:
    """Two stripes on two threads: once the first stripe's parts are all taken, the thread
    that finds none left starts the second stripe while the first one's long part is still
    running elsewhere (the long part is released only once the second stripe is done)."""
    both = threading.Barrier(2, timeout=30)  # the two heavy parts run on different threads
    second_done = threading.Event()

    def heavy() -> int:
        both.wait()
        return 0

    def long_part() -> int:
        both.wait()
        assert second_done.wait(30), "the second stripe did not run beside the long part"
        return 1

    first = _job([heavy, long_part, lambda: 2], [100, 50, 1])
    second = _job([lambda: 4, lambda: 5])
    task = asyncio.ensure_future(decode_stripe(first, 2))
    await asyncio.sleep(0)  # the first stripe's task is queued first
    got = await decode_stripe(second, 2)
    second_done.set()
    assert got[0].column("r").to_pylist() == [4, 5]
    assert (await task)[0].column("r").to_pylist() == [0, 1, 2]


async def test_an_error_names_the_stripe_and_stops_the_other_parts() -> None:
    started: list[int] = []
    lock = threading.Lock()

    def part(i: int) -> Callable[[], int]:
        def run() -> int:
            with lock:
                started.append(i)
            if i == 0:
                raise IndexError("bad run")
            return i
        return run

    # One thread: the parts run in weight order, the failing one first.
    job = _job([part(i) for i in range(5)], [9, 1, 1, 1, 1])
    with pytest.raises(CorruptFileError, match="stripe 4"):
        await decode_stripe(job, 1)
    assert started == [0]


async def test_a_cancelled_decode_starts_no_further_part() -> None:
    gate = threading.Event()
    entered = threading.Event()
    started: list[int] = []

    def part(i: int) -> Callable[[], int]:
        def run() -> int:
            started.append(i)
            if i == 0:
                entered.set()
                assert gate.wait(30)
            return i
        return run

    job = _job([part(i) for i in range(4)], [9, 1, 1, 1])
    task = asyncio.ensure_future(decode_stripe(job, 1))
    await asyncio.get_running_loop().run_in_executor(None, entered.wait, 30)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    gate.set()
    # The part that was running ends; nothing after it starts.
    await asyncio.get_running_loop().run_in_executor(None, lambda: None)
    assert started == [0]


async def test_errors_in_prepare_and_assemble_are_raised() -> None:
    def prepare() -> list[Callable[[], Any]]:
        raise ValueError("no parts")

    with pytest.raises(CorruptFileError, match="stripe 1"):
        await decode_stripe(StripeJob(1, "f.orc", prepare, lambda r: []), 2)

    def assemble(results: list[Any]) -> list[pa.RecordBatch]:
        raise KeyError("x")

    with pytest.raises(CorruptFileError, match="stripe 2"):
        await decode_stripe(StripeJob(2, "f.orc", lambda: [lambda: 1], assemble), 2)
    empty = await decode_stripe(StripeJob(3, "f.orc", lambda: [], lambda r: []), 2)
    assert empty == []
