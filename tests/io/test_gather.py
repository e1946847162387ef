"""``gather_or_cancel``: results in order, the first failure cancels the others, and no
coroutines give an empty list (the dataset reads and writes rely on that)."""

from __future__ import annotations

import asyncio

import pytest

from aorc.io.base import gather_or_cancel, map_bounded


async def test_no_coroutines_give_an_empty_list() -> None:
    assert await gather_or_cancel([]) == []


async def test_results_keep_the_order_of_the_coroutines() -> None:
    async def value(v: int, turns: int) -> int:
        for _ in range(turns):
            await asyncio.sleep(0)
        return v

    assert await gather_or_cancel([value(1, 3), value(2, 0), value(3, 1)]) == [1, 2, 3]


async def test_a_failure_cancels_the_others() -> None:
    never = asyncio.Event()
    cancelled: list[int] = []

    async def wait(i: int) -> None:
        try:
            await never.wait()
        except asyncio.CancelledError:
            cancelled.append(i)
            raise

    async def fail() -> None:
        raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        await gather_or_cancel([wait(0), fail(), wait(2)])
    assert sorted(cancelled) == [0, 2]


async def test_map_bounded_runs_at_most_limit_at_once_in_order() -> None:
    running, most, tasks = 0, 0, set()

    async def work(v: int) -> int:
        nonlocal running, most
        tasks.add(asyncio.current_task())
        running += 1
        most = max(most, running)
        for _ in range(v % 4):
            await asyncio.sleep(0)
        running -= 1
        return v * 2

    assert await map_bounded(list(range(100)), work, 3) == [v * 2 for v in range(100)]
    assert most == 3 and len(tasks) == 3  # three tasks took the 100 items in turn
    assert await map_bounded([], work, 3) == []


async def test_map_bounded_failure_cancels_the_others() -> None:
    started: list[int] = []
    never = asyncio.Event()

    async def work(v: int) -> None:
        started.append(v)
        if v == 2:
            raise ValueError("two")
        await never.wait()

    with pytest.raises(ValueError, match="two"):
        await map_bounded(list(range(10)), work, 3)
    assert started == [0, 1, 2]  # the rest never started
