"""The worker pool of ``aorc.threads`` and the malloc arena its threads start on.

Concurrency is shown with barriers and events (with fail-safe timeouts), never the clock.
"""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import textwrap
import threading
import time
import weakref
from typing import Any

import pytest

from aorc import _allocator
from aorc.threads import (
    ARENA_ATTEMPTS,
    IDLE_POOLS,
    WorkerPool,
    encode_pool,
    give_back_pool,
    pool_map,
    shared_pool,
    take_pool,
)

SAFE = 30  # seconds: only a fail-safe, the tests wait for events


def test_tasks_run_on_the_workers_and_return_their_results() -> None:
    pool = WorkerPool(2, "t-results")
    try:
        barrier = threading.Barrier(2, timeout=SAFE)  # passed only by two tasks at once

        def meet(x: int) -> tuple[int, int]:
            barrier.wait()
            return x * x, threading.get_ident()

        results = [f.result(SAFE) for f in [pool.submit(meet, x) for x in (3, 4)]]
        assert [r for r, _ in results] == [9, 16]
        assert len({ident for _, ident in results}) == 2
        assert threading.get_ident() not in {ident for _, ident in results}
        assert pool.submit(lambda a, *, b: a - b, 7, b=2).result(SAFE) == 5
    finally:
        pool.shutdown()


def _wait_until_idle(pool: WorkerPool, workers: int) -> None:
    """Wait for the pool's workers to be back waiting (a fail-safe bounds it)."""
    deadline = time.monotonic() + SAFE
    while pool.idle < workers:
        assert time.monotonic() < deadline, "the workers did not go idle"
        time.sleep(0.001)


def test_a_task_goes_to_the_worker_that_went_idle_last() -> None:
    """The workers that just ran stay the ones that run (warm), instead of taking turns."""
    pool = WorkerPool(3, "t-lifo")
    try:
        barrier = threading.Barrier(3, timeout=SAFE)  # all three workers started and ran
        for f in [pool.submit(barrier.wait) for _ in range(3)]:
            f.result(SAFE)
        _wait_until_idle(pool, 3)
        ran = []
        for _ in range(6):
            ran.append(pool.submit(threading.get_ident).result(SAFE))
            _wait_until_idle(pool, 3)
        assert len(set(ran)) == 1
        # Two tasks at once still get two workers.
        meet = threading.Barrier(2, timeout=SAFE)
        both = [pool.submit(lambda: (meet.wait(), threading.get_ident())[1]) for _ in range(2)]
        assert len({f.result(SAFE) for f in both}) == 2
    finally:
        pool.shutdown()


def test_an_error_goes_to_the_tasks_future_and_the_worker_carries_on() -> None:
    pool = WorkerPool(1, "t-errors")
    try:
        def fail() -> None:
            raise KeyError("boom")

        with pytest.raises(KeyError, match="boom"):
            pool.submit(fail).result(SAFE)
        assert pool.submit(int, "12").result(SAFE) == 12
    finally:
        pool.shutdown()


def test_shutdown_cancels_queued_tasks_and_refuses_new_ones() -> None:
    pool = WorkerPool(1, "t-shutdown")
    started, release = threading.Event(), threading.Event()

    def hold() -> str:
        started.set()
        assert release.wait(SAFE)
        return "held"

    running = pool.submit(hold)
    assert started.wait(SAFE)
    queued = [pool.submit(int, "1") for _ in range(3)]
    pool.shutdown(wait=False, cancel_futures=True)
    assert all(f.cancelled() for f in queued)
    with pytest.raises(RuntimeError, match="after shutdown"):
        pool.submit(int, "2")
    release.set()
    assert running.result(SAFE) == "held"
    pool.shutdown(wait=True)  # joins the worker, which took its stop mark
    assert not any(t.is_alive() for t in pool._threads)


def test_a_dropped_pool_stops_its_threads() -> None:
    pool = WorkerPool(2, "t-dropped")
    assert pool.submit(int, "3").result(SAFE) == 3
    threads = list(pool._threads) + list(pool._parked)
    gone = weakref.ref(pool)
    del pool
    gc.collect()
    assert gone() is None
    for thread in threads:
        thread.join(SAFE)
        assert not thread.is_alive()


def test_a_pool_needs_a_worker() -> None:
    with pytest.raises(ValueError, match="at least one worker"):
        WorkerPool(0, "t-none")


def test_the_shared_and_encode_pools_are_worker_pools() -> None:
    pool = shared_pool()
    assert isinstance(pool, WorkerPool)
    assert pool.submit(sum, [1, 2]).result(SAFE) == 3
    assert len(pool._threads) == max(1, os.cpu_count() or 1)
    # The writers' stripes have a pool of their own, so they never queue the reads' tasks.
    assert isinstance(encode_pool(), WorkerPool) and encode_pool() is not pool
    assert encode_pool() is encode_pool()


# A thread started before ``import aorc`` allocates, so glibc gives it an arena of its own
# (as NumPy's and pyarrow's imports do); it stays alive, so glibc hands that arena to new
# threads in turn with the main one.
ARENA_CHILD = textwrap.dedent("""
    import json, threading
    hold = threading.Event()
    early = threading.Thread(target=lambda: (bytearray(1 << 16), hold.wait()))
    early.start()
    from aorc import _allocator
    from aorc.threads import WorkerPool

    def plain_thread_arenas(n):
        seen = []
        for _ in range(n):
            t = threading.Thread(target=lambda: seen.append(_allocator.on_main_arena()))
            t.start()
            t.join()
        return seen

    pools = [WorkerPool(2, f"arena{i}") for i in range(3)]
    workers = [f.result() for pool in pools
               for f in [pool.submit(_allocator.on_main_arena) for _ in range(40)]]
    print(json.dumps({"tuned": _allocator.tune_malloc(), "main": _allocator.on_main_arena(),
                      "workers": workers, "parked": [p.parked for p in pools],
                      "plain": plain_thread_arenas(4)}))
    hold.set()
""")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc arenas")
def test_workers_start_on_the_main_arena_when_another_arena_exists() -> None:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("MALLOC_") and k != "AORC_MALLOC_TUNING"}
    result = subprocess.run([sys.executable, "-c", ARENA_CHILD], env=env, capture_output=True,
                            text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    got = json.loads(result.stdout)
    if not got["tuned"]:  # pragma: no cover - a C library other than glibc
        pytest.skip("malloc is not glibc's: no arenas to choose")
    assert got["main"] is True
    # The planned event: plain threads do land on the other arena, and the pools parked
    # threads that did; their workers never do.
    assert False in got["plain"]
    assert sum(got["parked"]) >= 1
    assert all(n < 2 * ARENA_ATTEMPTS for n in got["parked"])
    assert got["workers"] and all(got["workers"])


def test_off_glibc_or_untuned_every_thread_counts_as_on_the_main_arena(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_allocator, "_probe", None)
    assert _allocator.on_main_arena() is True
    pool = WorkerPool(1, "t-untuned")
    try:
        assert pool.submit(_allocator.on_main_arena).result(SAFE) is True
        assert pool.parked == 0
    finally:
        pool.shutdown()


def test_a_worker_that_cannot_tell_its_arena_still_works(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import aorc.threads

    asked: list[int] = []

    def broken() -> bool:
        asked.append(threading.get_ident())
        raise OSError("no libc")

    monkeypatch.setattr(aorc.threads, "on_main_arena", broken)
    pool = WorkerPool(2, "t-broken")
    try:
        assert [f.result(SAFE) for f in [pool.submit(int, "5") for _ in range(4)]] == [5] * 4
        assert len(asked) == 2 and pool.parked == 0
    finally:
        pool.shutdown()


def test_a_share_runs_every_item_in_its_order_and_ends_once() -> None:
    """WorkerPool.share: the items are taken in the given order, each result lands at its
    item's position, ``each`` hears of every item and ``end`` is called once with all the
    results, by the thread that finished the last item."""
    pool = WorkerPool(2, "share-test")
    try:
        started: list[int] = []
        lock = threading.Lock()
        seen: list[int] = []
        ended: list[tuple[list[int] | None, BaseException | None]] = []
        finished = threading.Event()

        def run(i: int) -> int:
            with lock:
                started.append(i)
            return i * 10

        def end(results: list[int] | None, exc: BaseException | None) -> None:
            ended.append((None if results is None else list(results), exc))
            finished.set()

        order = [4, 2, 0, 1, 3]
        share = pool.share(run, 5, helpers=1, order=order, each=seen.append, end=end)
        share.work()  # the caller takes items too
        assert finished.wait(10)
        share.wait_helpers()
        assert sorted(started) == [0, 1, 2, 3, 4] and started[0] in (4, 2)
        assert sorted(seen) == [0, 1, 2, 3, 4]
        assert ended == [([0, 10, 20, 30, 40], None)]
        assert share.result() == [0, 10, 20, 30, 40]
    finally:
        pool.shutdown()


def test_a_share_stops_at_the_first_failure_and_reports_it_once() -> None:
    """The first failing item ends the share with its exception (``end`` once, ``result``
    raises it) and no further item starts; a share stopped before it starts runs nothing."""
    ran: list[int] = []
    ended: list[BaseException | None] = []

    def run(i: int) -> int:
        ran.append(i)
        if i == 2:
            raise ValueError("item 2")
        return i

    pool = WorkerPool(1, "share-fail")
    try:
        share = pool.share(run, 6, helpers=0, end=lambda r, e: ended.append(e))
        share.work()
        assert ran == [0, 1, 2]
        assert len(ended) == 1 and isinstance(ended[0], ValueError)
        with pytest.raises(ValueError, match="item 2"):
            share.result()
        stopped = pool.share(run, 3, helpers=0)
        stopped.stop()
        stopped.work()
        assert ran == [0, 1, 2]
    finally:
        pool.shutdown()


def test_pools_handed_back_serve_the_next_jobs() -> None:
    name = "t-lent"
    first = take_pool(name)
    thread = first.submit(threading.current_thread).result(timeout=SAFE)
    give_back_pool(first, name)
    again = take_pool(name)
    assert again is first  # the same pool, and its same thread
    assert again.submit(threading.current_thread).result(timeout=SAFE) is thread
    other = take_pool(name)  # taken while the first is out: a pool of its own
    assert other is not first
    extra = [take_pool(name) for _ in range(IDLE_POOLS)]
    for pool in [first, other, *extra]:
        give_back_pool(pool, name)
    # at most IDLE_POOLS kept: the last one handed back was shut down
    with pytest.raises(RuntimeError, match="after shutdown"):
        extra[-1].submit(int)
    kept = [take_pool(name) for _ in range(IDLE_POOLS)]
    assert {id(p) for p in kept} == {id(p) for p in [first, other, *extra[:-2]]}
    for pool in kept:
        pool.shutdown()


def test_dataset_writes_one_after_another_reuse_their_encoder(tmp_path: Any) -> None:
    import pyarrow as pa

    from aorc.dataset.write import ENCODER_POOL
    from aorc.sync import write_dataset

    def encoders() -> list[threading.Thread]:
        return [t for t in threading.enumerate() if t.name.startswith(ENCODER_POOL)]

    write_dataset(pa.table({"a": [1, 2]}), tmp_path / "one")
    before = encoders()
    assert before
    for i in range(3):
        write_dataset(pa.table({"a": [i]}), tmp_path / f"more{i}")
    assert encoders() == before


# --------------------------------------------------------------------------- nested pool_map

def test_a_nested_pool_map_runs_on_the_calls_own_threads(monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:
    """With keep_threads, items that map again ask the pool for no helper: the top-level
    call's one helper is the only task submitted, and every item, nested ones included,
    runs on the caller or that helper."""
    submitted: list[object] = []
    real_submit = WorkerPool.submit

    def submit(self: WorkerPool, fn: Any, /, *args: Any, **kwargs: Any) -> Any:
        submitted.append(fn)
        return real_submit(self, fn, *args, **kwargs)

    monkeypatch.setattr(WorkerPool, "submit", submit)
    outer_threads: set[int] = set()
    inner_threads: set[int] = set()
    barrier = threading.Barrier(2, timeout=SAFE)  # both outer items run at once

    def inner(y: int) -> int:
        inner_threads.add(threading.get_ident())
        return y * y

    def outer(x: int) -> list[int]:
        barrier.wait()
        outer_threads.add(threading.get_ident())
        return pool_map(inner, list(range(x, x + 8)), 2)

    assert pool_map(outer, [0, 10], 2, keep_threads=True) == [
        [y * y for y in range(x, x + 8)] for x in (0, 10)]
    assert len(submitted) == 1
    assert len(outer_threads) == 2 and inner_threads <= outer_threads
    submitted.clear()
    pool_map(outer, [0, 10], 2)  # without: each nested call asks for a helper of its own
    assert len(submitted) == 3


def test_a_thread_done_early_takes_the_items_of_a_nested_pool_map() -> None:
    """The nested items meet at a barrier only two threads at once can pass: the thread that
    finished the short outer item takes one of them."""
    barrier = threading.Barrier(2, timeout=SAFE)
    idents: list[int] = []

    def inner(y: int) -> int:
        barrier.wait()
        idents.append(threading.get_ident())
        return y

    def outer(x: int) -> list[int]:
        return pool_map(inner, [1, 2], 2) if x else []

    assert pool_map(outer, [1, 0], 2, keep_threads=True) == [[1, 2], []]
    assert len(set(idents)) == 2


def test_a_nested_failure_reaches_its_caller_once_the_other_items_are_done() -> None:
    barrier = threading.Barrier(2, timeout=SAFE)
    finished: list[int] = []

    def inner(y: int) -> int:
        barrier.wait()  # both nested items are running
        if y == 2:
            raise ValueError("nested two")
        finished.append(y)
        return y

    def outer(x: int) -> list[int]:
        if not x:
            return []
        try:
            return pool_map(inner, [1, 2], 2)
        finally:
            finished.append(-1)  # pool_map has returned (or raised) here

    with pytest.raises(ValueError, match="nested two"):
        pool_map(outer, [1, 0], 2, keep_threads=True)
    assert finished == [1, -1]
