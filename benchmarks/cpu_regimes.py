"""How steady is this machine's CPU? Each CPU of the process's affinity timed in turn, for
``--seconds``, on three fixed jobs: aorc's write kernels (RLE v2 of 250,000 int64 values and
zstd level 1 of 2 MB of doubles, twice), a pyarrow.orc write of 150,000 rows to memory, and
a copy of 32 MiB (bound by memory, not by the core).

On a shared virtual machine a CPU can run slower for seconds at a time (another guest on
the same physical core, for example); the guest sees no steal time, only its code taking
longer. A multi-threaded writer is exposed to the slow stretches of every CPU it uses, a
one-thread writer to those of one, so the tails of ``bench_write.py`` (aorc's p90 / median)
are read against this tool's figures from the same hour.

For every CPU and job it prints the best and median time (thread CPU time, ms), the share of
samples slower than ``--threshold`` x the best ("slow"), how much slower the slow samples are
(their median / the best) and the longest stretch of slow samples in seconds; then the share
of rounds in which at least one CPU, and every CPU, was slow on aorc's kernels.

Usage::

    python benchmarks/cpu_regimes.py [--seconds 60] [--threshold 1.3] [--json PATH]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.orc as pa_orc

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

__all__ = ["Regimes", "joint_slow", "regimes"]


@dataclass(frozen=True)
class Regimes:
    """One CPU's samples of one job, summarised (times in ms, stretches in seconds)."""

    samples: int
    best: float
    median: float
    slow_share: float
    slow_factor: float
    longest_slow: float


def _slow(times: Sequence[float], threshold: float) -> list[bool]:
    best = min(times)
    return [t > threshold * best for t in times]


def regimes(times: Sequence[float], stamps: Sequence[float], threshold: float) -> Regimes:
    """Summarise one CPU's job times (seconds) taken at ``stamps`` (seconds, increasing):
    a sample is slow when it took more than ``threshold`` x the best; the longest slow
    stretch runs from its first slow sample's stamp to the stamp of the sample after its
    last (or its last, at the end)."""
    if not times or len(times) != len(stamps):
        raise ValueError("regimes: needs as many stamps as times, and at least one")
    slow = _slow(times, threshold)
    best = min(times)
    slow_times = [t for t, s in zip(times, slow, strict=True) if s]
    longest, start = 0.0, None
    for i, s in enumerate(slow):
        if s and start is None:
            start = stamps[i]
        if start is not None and (not s or i == len(slow) - 1):
            longest = max(longest, stamps[i] - start)
            start = None
    return Regimes(samples=len(times), best=best * 1e3, median=statistics.median(times) * 1e3,
                   slow_share=len(slow_times) / len(times),
                   slow_factor=statistics.median(slow_times) / best if slow_times else 1.0,
                   longest_slow=longest)


def joint_slow(per_cpu: Sequence[Sequence[float]], threshold: float) -> tuple[float, float]:
    """The shares of rounds (index i of every CPU's times) in which at least one CPU, and
    every CPU, was slow."""
    rounds = min((len(times) for times in per_cpu), default=0)
    if rounds == 0:
        raise ValueError("joint_slow: no rounds")
    flags = [_slow(times, threshold) for times in per_cpu]
    any_slow = sum(any(f[i] for f in flags) for i in range(rounds))
    all_slow = sum(all(f[i] for f in flags) for i in range(rounds))
    return any_slow / rounds, all_slow / rounds


def _jobs() -> dict[str, Callable[[], object]]:
    import zstandard

    from aorc.format.codec.rle import write_int_rle_v2

    rng = np.random.default_rng(0)
    ints = rng.integers(0, 10_000, 250_000).astype(np.int64)
    doubles = rng.standard_normal(250_000).tobytes()
    compressor = zstandard.ZstdCompressor(level=1)
    table = pa.table({"a": rng.integers(0, 10_000, 150_000),
                      "b": rng.standard_normal(150_000),
                      "c": np.cumsum(rng.integers(0, 100, 150_000))})

    def kernels() -> None:
        for _ in range(2):
            write_int_rle_v2(ints, True)
            compressor.compress(doubles)

    def pyarrow_orc() -> None:
        pa_orc.write_table(table, io.BytesIO(), compression="zstd")

    source = np.ones(4 << 20)  # 32 MiB, far beyond the caches
    target = np.empty_like(source)

    def memory() -> None:
        np.copyto(target, source)

    return {"aorc kernels": kernels, "pyarrow.orc write": pyarrow_orc, "32 MiB copy": memory}


def sample(seconds: float, pause: float = 0.1) -> dict[int, dict[str, list[float]]]:
    """Every CPU of this process's affinity timed in turn on every job until ``seconds``
    have passed: cpu -> job -> times, and cpu -> "stamp" -> when each round began."""
    jobs = _jobs()
    cpus = sorted(os.sched_getaffinity(0))
    out: dict[int, dict[str, list[float]]] = {c: {"stamp": [], **{j: [] for j in jobs}}
                                              for c in cpus}
    start = time.perf_counter()
    try:
        while time.perf_counter() - start < seconds:
            for cpu in cpus:
                os.sched_setaffinity(0, {cpu})
                out[cpu]["stamp"].append(time.perf_counter() - start)
                for name, job in jobs.items():
                    t0 = time.thread_time()
                    job()
                    out[cpu][name].append(time.thread_time() - t0)
            if pause:
                time.sleep(pause)
    finally:
        os.sched_setaffinity(0, set(cpus))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--threshold", type=float, default=1.3)
    parser.add_argument("--pause", type=float, default=0.1,
                        help="seconds asleep between rounds (0: the CPUs never idle)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    data = sample(args.seconds, args.pause)
    jobs = [k for k in next(iter(data.values())) if k != "stamp"]
    print(f"{'cpu':>3} {'job':<18} {'n':>4} {'best ms':>8} {'median':>7} {'slow':>6} "
          f"{'slow x':>7} {'longest s':>9}")
    cpus: dict[str, dict[str, dict[str, float]]] = {}
    for cpu, series in data.items():
        for job in jobs:
            r = regimes(series[job], series["stamp"], args.threshold)
            cpus.setdefault(str(cpu), {})[job] = asdict(r)
            print(f"{cpu:>3} {job:<18} {r.samples:>4} {r.best:>8.1f} {r.median:>7.1f} "
                  f"{r.slow_share:>6.0%} {r.slow_factor:>7.2f} {r.longest_slow:>9.1f}")
    any_slow, all_slow = joint_slow([s[jobs[0]] for s in data.values()], args.threshold)
    print(f"rounds with a slow CPU ({jobs[0]}): {any_slow:.0%}, with every CPU slow: "
          f"{all_slow:.0%}")
    report = {"seconds": args.seconds, "threshold": args.threshold, "cpus": cpus,
              "any_cpu_slow": any_slow, "every_cpu_slow": all_slow}
    if args.json:
        args.json.write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
