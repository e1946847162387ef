"""The process's one bounded thread pool, for CPU work that releases the GIL.

aorc's Cython kernels and the compression codecs release the GIL, so the columns of a stripe
can be encoded and compressed at the same time. :func:`pool_map` runs a function over items
on the shared pool (created on first use with one worker per CPU, re-created in a forked
child) with at most ``threads`` of them at once, the calling thread being one of them. The
results come back in the order of the items, so what is built from them does not depend on
the number of threads. With ``threads=1`` it is a plain loop in the calling thread.

The pool is shared by every reader and writer in the process: a call
never holds more than ``threads - 1`` workers, and a task that itself calls :func:`pool_map`
cannot deadlock: the calling thread works through the items itself and, when they are done,
cancels the helpers that have not started. With ``keep_threads`` (a stripe's fields, when
written), the calls made inside the items ask for no helper at all: the top-level call's
own threads take their items once they have none of their own (a family, see
:class:`_Family`), so a write never runs more threads than it was given, and a thread done
early helps with the last big column instead of waiting for it.

Work sharing: :meth:`WorkerPool.share` hands a list of items to up to ``helpers`` pool
threads at once (:class:`WorkShare`): each thread takes the next item (in a given order),
runs it and takes another, without going back to the pool or the event loop between items;
the thread that finishes the last item (or meets the first failure) reports the outcome; a
thread that finds no item left returns to the pool at once, never waiting for another. The
caller may work through the items too (:func:`pool_map` does). Three loops are built on it:
:func:`pool_map`, the groups of small dataset files (``aorc.read.dataset_local.run_groups``)
and a stripe's column parts (``aorc.read.stripe_run``).

The pool is a :class:`WorkerPool`, not a ``ThreadPoolExecutor``: its threads start on glibc's
main malloc arena, whichever modules were imported before aorc (see
:func:`aorc._allocator.on_main_arena`). A decode thread on another arena faulted fresh pages
into its large buffers on every read: with pyarrow imported before aorc, 7 of 30 reads of the
events benchmark took 40-60% longer than the median, against none with aorc imported first.
"""

from __future__ import annotations

import collections
import functools
import os
import threading
import weakref
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Executor, Future, wait
from typing import Any, Generic, TypeVar

from aorc._allocator import on_main_arena
from aorc.errors import SchemaError

__all__ = ["ARENA_ATTEMPTS", "IDLE_POOLS", "WorkShare", "WorkerPool", "encode_pool",
           "give_back_pool", "pool_map", "pool_size", "shared_pool", "take_pool",
           "thread_count"]

T = TypeVar("T")
R = TypeVar("R")

#: The most threads started for one worker of a :class:`WorkerPool` until one lands on the
#: main malloc arena (the last one is kept wherever it lands).
ARENA_ATTEMPTS = 4

_Task = tuple[Future[Any], Callable[..., Any], tuple[Any, ...], dict[str, Any]]
_lock = threading.Lock()
_pools: dict[str, WorkerPool] = {}  # the process's pools by name, created on first use
_idle: dict[str, list[WorkerPool]] = {}  # one-worker pools handed back, by name

#: One-worker pools of a name kept for the next jobs once handed back (:func:`take_pool`).
IDLE_POOLS = 4


class WorkerPool(Executor):
    """A fixed number of daemon worker threads that take tasks from one queue in order; a
    task goes to the worker that went idle last (see :class:`_Queue`).

    The workers are started on the first :meth:`submit`. A thread that glibc bound to a malloc
    arena other than the main one (see :func:`aorc._allocator.on_main_arena`) does not take
    tasks: it stays parked, holding that arena, so that glibc hands the next thread another
    one, and a new thread is started in its place (at most :data:`ARENA_ATTEMPTS` per worker).
    The threads stop when the pool is shut down or garbage-collected; at the process's exit
    they are left to end with it (daemon threads).
    """

    def __init__(self, workers: int, name: str) -> None:
        if workers < 1:
            raise ValueError(f"a pool needs at least one worker, got {workers}")
        self._workers = workers
        self._name = name
        self._queue = _Queue()
        self._release = threading.Event()  # lets the parked threads end
        self._threads: list[threading.Thread] = []
        self._parked: list[threading.Thread] = []
        self._lock = threading.Lock()
        self._closed = False
        self._stop = weakref.finalize(self, _stop, self._queue, self._release, workers)
        # Not at interpreter exit: the threads are daemons, and an exit handler run later
        # (aorc.sync's loop closing its readers and writers) may still wait for a task.
        self._stop.atexit = False

    @property
    def idle(self) -> int:
        """How many workers are waiting for a task."""
        return self._queue.idle

    @property
    def parked(self) -> int:
        """How many threads were parked because they landed on another malloc arena."""
        return len(self._parked)

    def submit(self, fn: Callable[..., R], /, *args: Any, **kwargs: Any) -> Future[R]:
        """Run ``fn(*args, **kwargs)`` on a worker.

        Raises:
            RuntimeError: the pool was shut down.
        """
        future: Future[R] = Future()
        with self._lock:
            if self._closed:
                raise RuntimeError("cannot schedule new futures after shutdown")
            if not self._threads:
                self._start()
            self._queue.put((future, fn, args, kwargs))
        return future

    def share(self, run: Callable[[int], R], count: int, *, helpers: int,
              order: Iterable[int] | None = None,
              each: Callable[[int], None] | None = None,
              end: Callable[[list[R] | None, BaseException | None], None] | None = None
              ) -> WorkShare[R]:
        """Items ``0 .. count - 1`` run as ``run(i)`` by up to ``helpers`` of this pool's
        threads at once, each taking the next item until none is left (see
        :class:`WorkShare`; the caller may take items too with :meth:`WorkShare.work`).

        Args:
            run: the work of item ``i``; its result goes to position ``i``.
            count: how many items.
            helpers: the most pool tasks that take items (at most ``count`` are submitted).
            order: the order in which the items are taken (default: ``0 .. count - 1``).
            each: called with ``i`` by the thread that finished item ``i``.
            end: called once, by the thread that finished the last item with the results,
                or by the one whose item failed first with its exception.
        """
        share = WorkShare(run, count, order=order, each=each, end=end)
        share.helpers = [self.submit(share.work) for _ in range(min(helpers, count))]
        return share

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Take no further task; with ``cancel_futures`` cancel the queued ones; with
        ``wait`` wait for the running ones."""
        with self._lock:
            self._closed = True
            if cancel_futures:
                for task in self._queue.drain():
                    if task is not None:
                        task[0].cancel()
            self._stop()
        if wait:
            for thread in self._threads:
                if thread is not threading.current_thread():
                    thread.join()

    def _start(self) -> None:
        for index in range(self._workers):
            for attempt in range(ARENA_ATTEMPTS):
                kept: list[bool] = []
                ready = threading.Event()
                thread = threading.Thread(
                    target=_work, name=f"{self._name}_{index}", daemon=True,
                    args=(self._queue, self._release, ready, kept,
                          attempt == ARENA_ATTEMPTS - 1))
                thread.start()
                ready.wait()
                if kept[0]:
                    self._threads.append(thread)
                    break
                self._parked.append(thread)


class _Queue:
    """The tasks of a :class:`WorkerPool`, in order, and its idle workers, the one that went
    idle last on top: a task wakes that one. The workers that just ran stay busy and warm
    (their caches, their codec contexts, the pages of their malloc arena), while the others
    sleep; a FIFO queue instead hands each task to the worker that has waited longest, so
    that every worker goes cold in turn, and each one's first tasks pay for it (measured: the
    second write of a process, the first on a fresh worker, took 10-20% longer)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._tasks: collections.deque[_Task | None] = collections.deque()
        self._idle: list[threading.Lock] = []  # the sleeping workers' wake-up locks (held)

    def put(self, task: _Task | None) -> None:
        with self._lock:
            self._tasks.append(task)
            if self._idle:
                self._idle.pop().release()

    def get(self, wake: threading.Lock) -> _Task | None:
        """The next task, waiting for one; ``wake`` is the calling worker's own lock, held
        by it (it sleeps acquiring it again until a task is put)."""
        while True:
            with self._lock:
                if self._tasks:
                    return self._tasks.popleft()
                self._idle.append(wake)
            wake.acquire()

    @property
    def idle(self) -> int:
        with self._lock:
            return len(self._idle)

    def drain(self) -> list[_Task | None]:
        """Take every task not yet started."""
        with self._lock:
            tasks = list(self._tasks)
            self._tasks.clear()
            return tasks


def _work(tasks: _Queue, release: threading.Event,
          ready: threading.Event, kept: list[bool], last: bool) -> None:
    """A worker: parks when on another arena (see :class:`WorkerPool`), else runs tasks
    until it takes a stop mark."""
    try:
        keep = last or on_main_arena()
    except Exception:  # noqa: BLE001 -- cannot tell: work wherever it is, never leave the pool waiting
        keep = True
    kept.append(keep)
    ready.set()
    if not keep:
        release.wait()
        return
    wake = threading.Lock()
    wake.acquire()
    while (task := tasks.get(wake)) is not None:
        future, fn, args, kwargs = task
        del task
        if future.set_running_or_notify_cancel():
            try:
                result = fn(*args, **kwargs)
            except BaseException as exc:  # handed to the task's future, as an executor does
                future.set_exception(exc)
                del exc
            else:
                future.set_result(result)
                del result
        del future, fn, args, kwargs


def _stop(tasks: _Queue, release: threading.Event, workers: int) -> None:
    for _ in range(workers):
        tasks.put(None)
    release.set()


class WorkShare(Generic[R]):
    """Items taken one at a time, in a given order, by whichever threads run :meth:`work`
    (made by :meth:`WorkerPool.share`). The first failure, or :meth:`stop`, leaves the
    items not yet taken untaken.

    Attributes:
        helpers: the futures of the pool tasks that take items.
    """

    def __init__(self, run: Callable[[int], R], count: int, *,
                 order: Iterable[int] | None = None,
                 each: Callable[[int], None] | None = None,
                 end: Callable[[list[R] | None, BaseException | None], None] | None = None
                 ) -> None:
        self.helpers: list[Future[None]] = []
        self._run = run
        self._each = each
        self._end = end
        self._lock = threading.Lock()
        self._todo: collections.deque[int] = collections.deque(
            range(count) if order is None else order)
        self._results: list[Any] = [None] * count
        self._left = count
        self._error: BaseException | None = None
        self._running = 0  # items taken and not finished
        self._idle = threading.Condition(self._lock)  # notified when _running drops to 0

    @property
    def open(self) -> bool:
        """Whether items are left to take."""
        return bool(self._todo)

    def wait_running(self) -> None:
        """Wait until no item is running (the ones other threads took are finished)."""
        with self._idle:
            while self._running:
                self._idle.wait()

    def stop(self) -> None:
        """Start no further item (the ones running finish)."""
        with self._lock:
            self._todo.clear()

    def work(self) -> None:
        """Take items until none is left, then return (never waiting for another thread);
        the last item's thread, or the first failure's, calls ``end``."""
        while True:
            with self._lock:
                if not self._todo:
                    return
                i = self._todo.popleft()
                self._running += 1
            try:
                value = self._run(i)
            except BaseException as exc:  # handed to end, or raised by result()
                with self._lock:
                    first = self._error is None
                    if first:
                        self._error = exc
                    self._todo.clear()
                    self._done_one()
                if first and self._end is not None:
                    self._end(None, exc)
                return
            with self._lock:
                self._results[i] = value
                self._left -= 1
                last = self._left == 0 and self._error is None
                self._done_one()
            if self._each is not None:
                self._each(i)
            if last:
                if self._end is not None:
                    self._end(self._results, None)
                return

    def _done_one(self) -> None:  # with the lock held
        self._running -= 1
        if not self._running:
            self._idle.notify_all()

    def result(self) -> list[R]:
        """The results in item order, once every item ran (after :meth:`work` returned and
        the helpers were waited for).

        Raises:
            BaseException: the first failure of an item.
        """
        if self._error is not None:
            raise self._error
        return self._results

    def wait_helpers(self) -> None:
        """Cancel the helpers not started yet (nothing is left for them) and wait for the
        running ones."""
        wait([f for f in self.helpers if not f.cancel()])


def pool_size() -> int:
    """Workers of the shared pool: one per CPU (at least 1)."""
    return max(1, os.cpu_count() or 1)


def _process_pool(name: str) -> WorkerPool:
    """The process's pool named ``name`` (one worker per CPU), created on first use."""
    with _lock:
        pool = _pools.get(name)
        if pool is None:
            pool = _pools[name] = WorkerPool(pool_size(), name)
        return pool


def shared_pool() -> WorkerPool:
    """The process's pool, created on first use."""
    return _process_pool("aorc")


def encode_pool() -> WorkerPool:
    """The process's pool for the stripes of writers that have no executor of their own
    (one worker per CPU, created on first use). A writer's stripe task calls
    :func:`pool_map`, whose helpers run on :func:`shared_pool`; a pool of its own keeps the
    writes from queueing the reads' tasks behind them."""
    return _process_pool("aorc-encode")


def take_pool(name: str) -> WorkerPool:
    """A one-worker pool for one job (a dataset write's encoder): one an earlier job of the
    process handed back with :func:`give_back_pool`, else a new one. Jobs one after the
    other (an engine worker's tasks) so reuse one thread, instead of starting one each --
    about 2 ms of the caller's time, more when threads land on other malloc arenas and are
    parked (see :class:`WorkerPool`)."""
    with _lock:
        idle = _idle.get(name)
        if idle:
            return idle.pop()
    return WorkerPool(1, name)


def give_back_pool(pool: WorkerPool, name: str) -> None:
    """Hand back a pool of :func:`take_pool` whose job is over (nothing queued or running):
    it is kept for the next job (at most :data:`IDLE_POOLS` of a name), else shut down."""
    with _lock:
        idle = _idle.setdefault(name, [])
        if len(idle) < IDLE_POOLS and not pool._closed:
            idle.append(pool)
            return
    pool.shutdown(wait=False)


def thread_count(use_threads: bool | int) -> int:
    """How many of the pool's threads a read or write may use: ``True`` all of them,
    ``False`` one, an integer that many (at most the pool's size).

    Raises:
        SchemaError: for an integer below 1 or a value of another type.
    """
    if isinstance(use_threads, bool):
        return pool_size() if use_threads else 1
    if not isinstance(use_threads, int) or use_threads < 1:
        raise SchemaError(f"use_threads must be a bool or a positive integer, "
                          f"got {use_threads!r}")
    return min(use_threads, pool_size())


def _forget_pool() -> None:  # a forked child has none of the parent's threads
    global _pools, _idle, _lock
    _pools = {}
    _idle = {}
    _lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)


def pool_map(fn: Callable[[T], R], items: Sequence[T], threads: int, *,
             keep_threads: bool = False) -> list[R]:
    """``[fn(x) for x in items]``, on up to ``threads`` threads (the caller's included).

    Args:
        fn: the work for one item; it should release the GIL for most of its time.
        items: the items.
        threads: the most threads to use at once; 1 runs everything in the calling thread.
        keep_threads: the :func:`pool_map` calls made inside the items run on this call's
            threads (those with no item left take their items: see :class:`_Family`)
            instead of asking the pool for helpers of their own. A call made inside such an
            item always does.

    Returns:
        The results, in the order of ``items``.

    Raises:
        Exception: the first exception raised by ``fn`` (in item order of discovery); the
            other items are then skipped.
    """
    helpers = min(threads, len(items), pool_size() + 1) - 1
    if helpers <= 0:
        return [fn(x) for x in items]
    family: _Family | None = getattr(_local, "family", None)
    if family is not None:
        return family.nested(fn, items)
    share: WorkShare[R]
    work: Callable[[], None]
    if keep_threads:
        family = _Family()
        share = WorkShare(lambda i: family.run(fn, items[i]), len(items))
        share.helpers = [shared_pool().submit(family.help, share) for _ in range(helpers)]
        work = functools.partial(family.help, share)
    else:
        share = shared_pool().share(lambda i: fn(items[i]), len(items), helpers=helpers)
        work = share.work
    try:
        work()
    finally:
        # Helpers not started yet have nothing left to do: cancel them, and wait only for
        # the running ones (a cancelled future is done only once a worker dequeues it).
        share.wait_helpers()
    return share.result()


_local = threading.local()  # .family: the _Family whose item this thread runs


class _Family:
    """The threads of one top-level :func:`pool_map` call with ``keep_threads`` (a stripe's
    fields, when written) and the shares their items open.

    A :func:`pool_map` called inside an item (a nested struct's fields, a long stream's
    compressed pieces) submits no helper of its own: with one, a pool worker left idle by
    the top-level call would start on it while the family's threads are all busy, one
    thread more than the call may use, and the longest item (the one the whole call waits
    for) would share a CPU. Instead the nested share joins the family's open shares, its
    caller takes its items, and every thread of the family that runs out of items of its
    own takes the items left in the open shares (oldest share first), and waits for shares
    opened later, until no item of the family runs. So the call never runs more than its
    ``threads`` threads, and a thread that is done early helps with the long item at the
    end instead of waiting. (An item must therefore not wait for a task it submits to the
    shared pool itself: the family's helpers may be all of the pool's workers.)

    No wait can close a circle: a thread waits only in :meth:`nested`, for the items of its
    own share that others took, and those items are below its own in the call tree."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)  # a share opened, or no item runs
        self._open: list[WorkShare[Any]] = []
        self._running = 0  # items of the family running, nested ones included

    def run(self, fn: Callable[[T], R], item: T) -> R:
        """``fn(item)`` as an item of this family (its nested calls join the family)."""
        outer = getattr(_local, "family", None)
        _local.family = self
        with self._lock:
            self._running += 1
        try:
            return fn(item)
        finally:
            _local.family = outer
            with self._lock:
                self._running -= 1
                if not self._running:
                    self._changed.notify_all()

    def help(self, share: WorkShare[Any]) -> None:
        """Take items of ``share``, then of the family's open shares, and of the shares
        opened later, until no item of the family runs."""
        share.work()
        while True:
            with self._lock:
                while (todo := next((s for s in self._open if s.open), None)) is None:
                    if not self._running:
                        return
                    self._changed.wait()
            todo.work()

    def nested(self, fn: Callable[[T], R], items: Sequence[T]) -> list[R]:
        """``[fn(x) for x in items]`` from inside an item: the caller and the family's idle
        threads take the items."""
        share: WorkShare[R] = WorkShare(lambda i: self.run(fn, items[i]), len(items))
        with self._lock:
            self._open.append(share)
            self._changed.notify_all()
        try:
            share.work()
        finally:
            with self._lock:
                self._open.remove(share)
            share.wait_running()  # the items other threads took
        return share.result()
