"""What one slow worker costs a write: aorc's per-column tasks made longer on the shared
pool's helper threads, as if their CPU ran at 1 / (1 + ``--slow``) of its speed.

After each column task (encoding a column, compressing and placing its streams) that runs on
a helper thread (not the stripe's own ``aorc-encode`` thread), the thread sleeps ``--slow``
x the task's CPU time. The sleep holds no GIL, so this is the kindest slow CPU: what the
work-sharing can absorb. With two CPUs and one at 1/1.6 of its speed, ideal sharing makes the
parallel part 2 / (1 + 1/1.6) = 1.23 times longer. A diagnostic for ``cpu_regimes.py``'s
slow stretches (see benchmarks/README.md, "Issue 31, fifth round"); it patches aorc's
internals and is not a benchmark of aorc's speed.

Usage::

    python benchmarks/slow_worker.py [--table numeric200] [--writes 3] [--slow 0.6]
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


def _slowed(fn: Callable[..., Any], slow: float, extra: list[float]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> Any:
        start = time.thread_time()
        result = fn(*args, **kwargs)
        if slow and not threading.current_thread().name.startswith("aorc-encode"):
            delay = (time.thread_time() - start) * slow
            extra[0] += delay
            time.sleep(delay)
        return result
    return run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--table", default="numeric200")
    parser.add_argument("--writes", type=int, default=3)
    parser.add_argument("--slow", type=float, default=0.6)
    args = parser.parse_args(argv)
    table = build(args.table)
    extra = [0.0]
    encoding = [0.0]
    encode_stripe = writer.encode_stripe

    def timed_stripe(*a: Any, **k: Any) -> Any:
        start = time.perf_counter()
        try:
            return encode_stripe(*a, **k)
        finally:
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
            compound._encode_job = _slowed(job, slow, extra)  # type: ignore[assignment]
            stripe._place_column = _slowed(place, slow, extra)  # type: ignore[assignment]
            write()  # warm-up
            for _ in range(args.writes):
                extra[0] = encoding[0] = 0.0
                start = time.perf_counter()
                write()
                wall = time.perf_counter() - start
                print(f"slow {slow:.2f}: write {wall:.3f} s, stripe encoding "
                      f"{encoding[0]:.3f} s, helpers' added sleep {extra[0]:.3f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
