"""What one slow worker costs a write: aorc's work made longer on some of its threads, as if
their CPU ran at 1 / (1 + ``--slow``) of its speed.

``--which helpers``: after each column task (encoding a column, compressing and placing its
streams) that runs on a helper thread of the shared pool, the thread sleeps ``--slow`` x the
task's CPU time. ``--which stripe``: the same for the tasks the stripe's own ``aorc-encode``
thread takes, and at the end of each stripe for the rest of that thread's CPU time (its
serial part: the stripe's assembly). The sleep holds no GIL, so this is the kindest slow
CPU. With two CPUs and one at 1/1.6 of its speed, ideal sharing makes the
parallel part 2 / (1 + 1/1.6) = 1.23 times longer. A diagnostic for ``cpu_regimes.py``'s
slow stretches (see benchmarks/README.md, "Issue 31, fifth round"); it patches aorc's
internals and is not a benchmark of aorc's speed.

Usage::

    python benchmarks/slow_worker.py [--table numeric200] [--writes 3] [--slow 0.6]
                                     [--which helpers|stripe]
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from bench_tables import build  # noqa: E402

import aorc  # noqa: E402
import aorc.write.stripe as stripe  # noqa: E402
import aorc.write.writer as writer  # noqa: E402
from aorc.format.columns.encode import compound  # noqa: E402

_DEPTH = threading.local()


@dataclass
class _Tally:
    """The slowing in force and what one write measured (seconds)."""

    stripe_side: bool
    slow: float = 0.0
    sleep: float = 0.0  # sleep added on the slowed side
    task_cpu: float = 0.0  # CPU of the column tasks the stripe's thread ran
    serial_cpu: float = 0.0  # the stripe's thread's CPU outside them
    encoding: float = 0.0  # wall time in encode_stripe

    def reset(self) -> None:
        self.sleep = self.task_cpu = self.serial_cpu = self.encoding = 0.0

    def pause(self, cpu: float) -> None:
        """Sleep as long as ``cpu`` would have taken more on a CPU slowed by ``slow``."""
        if self.slow:
            self.sleep += cpu * self.slow
            time.sleep(cpu * self.slow)


def _on_stripe_thread() -> bool:
    return threading.current_thread().name.startswith("aorc-encode")


def _slowed_task(fn: Callable[..., Any], tally: _Tally) -> Callable[..., Any]:
    """``fn`` (a column task), followed on the slowed side by a sleep of ``tally.slow`` x its
    CPU time; a task inside a task (a nested column's children) counts in its outer one."""
    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> Any:
        depth = getattr(_DEPTH, "n", 0)
        _DEPTH.n = depth + 1
        start = time.thread_time()
        try:
            result = fn(*args, **kwargs)
        finally:
            _DEPTH.n = depth
        if depth:
            return result
        spent = time.thread_time() - start
        if _on_stripe_thread():
            tally.task_cpu += spent
        if _on_stripe_thread() == tally.stripe_side:
            tally.pause(spent)
        return result
    return run


def _slowed_stripe(fn: Callable[..., Any], tally: _Tally) -> Callable[..., Any]:
    """``encode_stripe`` timed, its thread's CPU outside the column tasks counted (and, on
    the stripe side, slowed)."""
    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> Any:
        start, cpu, tasks = time.perf_counter(), time.thread_time(), tally.task_cpu
        try:
            return fn(*args, **kwargs)
        finally:
            serial = max(0.0, (time.thread_time() - cpu) - (tally.task_cpu - tasks))
            tally.serial_cpu += serial
            if tally.stripe_side:
                tally.pause(serial)
            tally.encoding += time.perf_counter() - start
    return run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--table", default="numeric200")
    parser.add_argument("--writes", type=int, default=3)
    parser.add_argument("--slow", type=float, default=0.6)
    parser.add_argument("--which", choices=("helpers", "stripe"), default="helpers")
    args = parser.parse_args(argv)
    table = build(args.table)
    tally = _Tally(stripe_side=args.which == "stripe")
    writer.encode_stripe = _slowed_stripe(writer.encode_stripe, tally)  # type: ignore[assignment]
    compound._encode_job = _slowed_task(compound._encode_job, tally)  # type: ignore[assignment]
    stripe._place_column = _slowed_task(stripe._place_column, tally)  # type: ignore[assignment]
    with tempfile.TemporaryDirectory() as folder:
        out = str(Path(folder) / "slow.orc")

        def write() -> None:
            asyncio.run(aorc.write_table(table, out, compression="zstd",
                                         compression_block_size=256 * 1024,
                                         compression_level=1))

        for slow in (0.0, args.slow):
            tally.slow = slow
            write()  # warm-up
            for _ in range(args.writes):
                tally.reset()
                start = time.perf_counter()
                write()
                wall = time.perf_counter() - start
                print(f"slow {slow:.2f}: write {wall:.3f} s, stripe encoding "
                      f"{tally.encoding:.3f} s, added sleep ({args.which}) {tally.sleep:.3f} s; "
                      f"stripe thread's CPU in tasks {tally.task_cpu:.3f} s, outside them "
                      f"{tally.serial_cpu:.3f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
