"""Where a two-thread read's time goes: per-read wall time against the decode pool's work.

Wraps the tasks aorc submits to its shared thread pool (:mod:`aorc.threads`) and, for each
of ``--reads`` whole reads of one file in one process, prints the wall time, how long the
pool's tasks ran on each thread ("busy") and how much CPU they used there (user and system,
from ``getrusage(RUSAGE_THREAD)``), their minor page faults and their voluntary context
switches (a thread blocking: on the GIL, a lock, the allocator's lock). A read whose busy
time is close to its wall time but whose CPU time is not spent its tasks blocked; a read
whose busy time is well below its wall time left the threads idle between tasks.

Usage::

    python benchmarks/trace_read.py [--rows N] [--reads R] [--threads | --no-threads]
                                    [--parts] [--file PATH]

``--parts`` also prints, for the last read, every column decoder (a stripe's part) with the
thread that ran it, when (ms from the start of the read) and its CPU time: which thread ran
what, when. ``--file`` reads that ORC file instead of the events table.

The file is the 2M-row ``events`` table of ``bench_read.py``, written once by pyarrow.orc
(zstd) into ``--keep`` (default: a temporary folder).
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow.orc as pa_orc

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(1, str(Path(__file__).resolve().parent))

from bench_tables import build_table  # noqa: E402

import aorc  # noqa: E402
from aorc.threads import shared_pool  # noqa: E402

#: One pool task: thread name, start, end, user s, system s, minor faults, voluntary switches.
Task = tuple[str, float, float, float, float, int, int]


def instrument(log: list[Task]) -> None:
    """Record every task submitted to aorc's shared pool into ``log``."""
    pool = shared_pool()
    submit = pool.submit

    def traced(fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
        def run() -> Any:
            start, before = time.perf_counter(), resource.getrusage(resource.RUSAGE_THREAD)
            try:
                return fn(*args, **kwargs)
            finally:
                after = resource.getrusage(resource.RUSAGE_THREAD)
                log.append((threading.current_thread().name, start, time.perf_counter(),
                            after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime,
                            after.ru_minflt - before.ru_minflt,
                            after.ru_nvcsw - before.ru_nvcsw))
        return submit(run)

    pool.submit = traced  # type: ignore[method-assign]


#: One decoded part: stripe, part index, thread name, start, end, CPU seconds.
Part = tuple[int, int, str, float, float, float]


def instrument_parts(log: list[Part]) -> None:
    """Record every part of every stripe job a reader decodes into ``log``."""
    from aorc.read import reader as reader_module

    fetch = reader_module.OrcReader._fetch

    async def traced_fetch(self: Any, group: Any) -> Any:
        jobs = await fetch(self, group)
        for job in jobs:
            job.prepare = _timed_prepare(job.index, job.prepare, log)
        return jobs

    reader_module.OrcReader._fetch = traced_fetch  # type: ignore[method-assign]


def _timed_prepare(stripe: int, prepare: Callable[[], list[Any]],
                   log: list[Part]) -> Callable[[], list[Any]]:
    def timed() -> list[Any]:
        def wrap(i: int, part: Callable[[], Any]) -> Callable[[], Any]:
            def run() -> Any:
                start, cpu = time.perf_counter(), time.thread_time()
                try:
                    return part()
                finally:
                    log.append((stripe, i, threading.current_thread().name, start,
                                time.perf_counter(), time.thread_time() - cpu))
            return run
        return [wrap(i, part) for i, part in enumerate(prepare())]
    return timed


async def trace(path: str, reads: int, use_threads: bool, parts: bool = False) -> None:
    log: list[Task] = []
    instrument(log)
    part_log: list[Part] = []
    if parts:
        instrument_parts(part_log)
    for _ in range(reads):
        log.clear()
        part_log.clear()
        start = time.perf_counter()
        async with await aorc.open_reader(path) as reader:
            await reader.read(use_threads=use_threads)
        wall = time.perf_counter() - start
        threads: dict[str, list[float]] = {}
        for name, t0, t1, user, system, faults, switches in log:
            row = threads.setdefault(name, [0.0, 0.0, 0.0, 0.0])
            row[0] += t1 - t0
            row[1] += user + system
            row[2] += faults
            row[3] += switches
        per = "  ".join(f"{name}: busy {r[0]:.3f} cpu {r[1]:.3f} faults {int(r[2])} "
                        f"blocked {int(r[3])}x" for name, r in sorted(threads.items()))
        print(f"wall {wall:.3f}  tasks {len(log):3d}  {per}")
    for stripe, i, name, t0, t1, cpu in sorted(part_log, key=lambda p: p[3]):
        print(f"  stripe {stripe} part {i:3d}  {name:>8}  {(t0 - start) * 1000:7.1f} - "
              f"{(t1 - start) * 1000:7.1f} ms  cpu {cpu * 1000:6.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--reads", type=int, default=12)
    parser.add_argument("--threads", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("--keep", help="folder for the file (kept and reused)")
    parser.add_argument("--parts", action="store_true",
                        help="print the last read's parts: thread, start, end, CPU time")
    parser.add_argument("--file", help="read this ORC file instead of the events table")
    args = parser.parse_args()
    if args.file:
        asyncio.run(trace(args.file, args.reads, args.threads, args.parts))
        return
    folder = Path(args.keep or tempfile.mkdtemp(prefix="aorc_trace_"))
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"events-{args.rows}-zstd.orc"
    if not path.exists():
        pa_orc.write_table(build_table(args.rows), str(path), compression="zstd")
    asyncio.run(trace(str(path), args.reads, args.threads, args.parts))


if __name__ == "__main__":
    main()
