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


def _on_stripe_thread() -> bool:
    return threading.current_thread().name.startswith("aorc-encode")


def _slowed(fn: Callable[..., Any], slow: float, stripe_side: bool,
            extra: list[float]) -> Callable[..., Any]:
    """``fn`` followed by a sleep of ``slow`` x its CPU time on the chosen threads; the CPU
    time of tasks on the stripe's thread is also added to ``extra[1]``."""
    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> Any:
        depth = getattr(_DEPTH, "n", 0)
        _DEPTH.n = depth + 1
        start = time.thread_time()
        try:
            result = fn(*args, **kwargs)
        finally:
            _DEPTH.n = depth
        if depth:  # a task inside a task (a nested column's children): its outer one counts
            return result
        spent = time.thread_time() - start
        if _on_stripe_thread():
            extra[1] += spent
        if slow and _on_stripe_thread() == stripe_side:
            extra[0] += spent * slow
            time.sleep(spent * slow)
        return result
    return run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--table", default="numeric200")
    parser.add_argument("--writes", type=int, default=3)
    parser.add_argument("--slow", type=float, default=0.6)
    parser.add_argument("--which", choices=("helpers", "stripe"), default="helpers")
    args = parser.parse_args(argv)
    table = build(args.table)
    # added sleep; CPU of the tasks on the stripe's thread; its CPU outside them (serial)
    extra = [0.0, 0.0, 0.0]
    encoding = [0.0]
    slow_now = [0.0]
    stripe_side = args.which == "stripe"
    encode_stripe = writer.encode_stripe

    def timed_stripe(*a: Any, **k: Any) -> Any:
        start, cpu, tasks = time.perf_counter(), time.thread_time(), extra[1]
        try:
            return encode_stripe(*a, **k)
        finally:
            serial = max(0.0, (time.thread_time() - cpu) - (extra[1] - tasks))
            extra[2] += serial
            if stripe_side and slow_now[0]:
                extra[0] += serial * slow_now[0]
                time.sleep(serial * slow_now[0])
            encoding[0] += time.perf_counter() - start

    writer.encode_stripe = timed_stripe  # type: ignore[assignment]
    job, place = compound._encode_job, stripe._place_column
    with tempfile.TemporaryDirectory() as folder:
        out = str(Path(folder) / "slow.orc")

        def write() -> None:
            asyncio.run(aorc.write_table(table, out, compression="zstd",
                                         compression_block_size=256 * 1024,
                                         compression_level=1))

        for slow in (0.0, args.slow):
            slow_now[0] = slow
            compound._encode_job = _slowed(job, slow, stripe_side, extra)  # type: ignore[assignment]
            stripe._place_column = _slowed(place, slow, stripe_side, extra)  # type: ignore[assignment]
            write()  # warm-up
            for _ in range(args.writes):
                extra[0] = extra[1] = extra[2] = encoding[0] = 0.0
                start = time.perf_counter()
                write()
                wall = time.perf_counter() - start
                print(f"slow {slow:.2f}: write {wall:.3f} s, stripe encoding "
                      f"{encoding[0]:.3f} s, added sleep ({args.which}) {extra[0]:.3f} s; "
                      f"stripe thread's CPU in tasks {extra[1]:.3f} s, outside them "
                      f"{extra[2]:.3f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
