"""Timings in fresh processes, and their summary: best, median and 90th percentile.

A read or write timed again and again in one process profits from (or suffers) what the
earlier runs left behind: warm allocator arenas, a started thread pool, imported modules. A
benchmark therefore times each library in ``processes`` fresh child processes, ``repeat``
timed runs each after ``warmup`` untimed ones, and the libraries alternate process by process
(A B, then B A, ...) so that a drift of the machine hits all of them alike.

A :class:`Job` names a *task*: a function ``module:name`` of the benchmarks folder that takes
keyword arguments (JSON values), does its set-up and returns the zero-argument callable to
time (say ``bench_read:read_task``). The child is this file run as a script: it puts the root
of the tree the benchmarks live in first on ``sys.path`` (so that it imports *this* tree's
aorc, as ``compare_trees.py`` does for its trees), calls the task, times the callable and
prints the times as JSON on its last line, with the file its aorc came from.

:func:`run_python` is the subprocess call itself (``compare_trees.py`` uses it with its own
child code); :func:`summarize` turns samples into a :class:`Summary`.
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import importlib
import json
import math
import os
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

__all__ = ["ROOT", "Job", "Summary", "add_timing_arguments", "measure", "percentile",
           "run_child", "run_python", "statistic", "stats_cells", "stats_header", "summarize",
           "timing_of"]

HERE = Path(__file__).resolve().parent
#: The root of the tree these benchmarks live in: the children import its aorc.
ROOT = HERE.parent


def percentile(samples: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0..100) of ``samples``, interpolated linearly between the two
    nearest ranks (numpy's default method); ``q=50`` is the median.

    Raises:
        ValueError: no samples, or ``q`` outside 0..100.
    """
    if not samples:
        raise ValueError("percentile of no samples")
    if not 0 <= q <= 100:
        raise ValueError(f"percentile {q} is outside 0..100")
    xs = sorted(samples)
    pos = (len(xs) - 1) * q / 100
    lo = math.floor(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


@dataclasses.dataclass(frozen=True)
class Summary:
    """Best, median and 90th percentile of a timing's samples (seconds), and the samples."""

    best: float
    median: float
    p90: float
    samples: tuple[float, ...]

    def as_json(self) -> dict[str, Any]:
        """The fields of a result entry: ``seconds`` is the median."""
        return {"seconds": self.median, "best": self.best, "median": self.median,
                "p90": self.p90, "samples": list(self.samples)}


def summarize(samples: Sequence[float]) -> Summary:
    """The :class:`Summary` of ``samples``.

    Raises:
        ValueError: no samples.
    """
    return Summary(best=percentile(samples, 0), median=percentile(samples, 50),
                   p90=percentile(samples, 90), samples=tuple(samples))


def add_timing_arguments(parser: argparse.ArgumentParser, noun: str) -> None:
    """``--processes``, ``--repeat`` and ``--in-process``, as the benchmarks that time in
    fresh processes take them (``noun``: read, write)."""
    parser.add_argument("--processes", type=int, default=5,
                        help="fresh processes per timing and library (default 5)")
    parser.add_argument("--repeat", type=int, default=3,
                        help=f"timed {noun}s per process, after one warm-up {noun} (default 3)")
    parser.add_argument("--in-process", action="store_true",
                        help=f"quick mode: --repeat {noun}s in this process, no fresh processes")


def timing_of(parser: argparse.ArgumentParser, args: argparse.Namespace
              ) -> tuple[int, int, bool]:
    """``(processes, repeat, fresh)`` of :func:`add_timing_arguments`' arguments; a usage
    error when a count is below 1."""
    if args.processes < 1 or args.repeat < 1:
        parser.error("--processes and --repeat must be at least 1")
    return args.processes, args.repeat, not args.in_process


def statistic(processes: int, repeat: int, fresh: bool, noun: str) -> str:
    """How a benchmark's figures were taken (``noun``: read, write), for its JSON document
    and the chart."""
    runs = f"{repeat} {noun}{'s' if repeat != 1 else ''}"
    how = (f"{processes} fresh process{'es' if processes != 1 else ''} x {runs}, "
           f"1 warm-up {noun} each" if fresh else f"{runs} in one process after 1 warm-up {noun}")
    return f"median of {how} (pyorc: 1 run)"


def stats_header(first: str = "", width: int = 28) -> str:
    """The column heads that :func:`stats_cells` fills."""
    return (f"{first:<{width}} {'aorc best':>9} {'median':>7} {'p90':>7}  "
            f"{'pyarrow best':>12} {'median':>7} {'p90':>7}  "
            f"{'a/pa best':>9} {'median':>7}  {'a p90/med':>9}")


def stats_cells(aorc: Summary, pyarrow: Summary) -> str:
    """aorc's and pyarrow.orc's best, median and p90; the ratios aorc / pyarrow.orc of the
    best and of the median; aorc's p90 / median (how far its slow reads stray)."""

    def ratio(a: float, b: float) -> float:
        return a / b if b else math.nan

    return (f"{aorc.best:9.3f} {aorc.median:7.3f} {aorc.p90:7.3f}  "
            f"{pyarrow.best:12.3f} {pyarrow.median:7.3f} {pyarrow.p90:7.3f}  "
            f"{ratio(aorc.best, pyarrow.best):8.2f}x {ratio(aorc.median, pyarrow.median):6.2f}x"
            f"  {ratio(aorc.p90, aorc.median):9.2f}")


@dataclasses.dataclass(frozen=True)
class Job:
    """One library's timing: the task ``module:name`` called with ``kwargs`` in each of
    ``processes`` processes, ``warmup`` untimed and ``repeat`` timed calls of what it returns."""

    task: str
    kwargs: dict[str, Any]
    processes: int = 5
    repeat: int = 3
    warmup: int = 1


def run_python(args: Sequence[str], root: Path = ROOT) -> dict[str, Any]:
    """Run ``python ARGS`` (a script or ``-c CODE`` and its arguments) with ``root`` first on
    ``PYTHONPATH``; the JSON object it printed on its last line.

    Raises:
        RuntimeError: the child failed (its stderr is in the message).
    """
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(root), env.get("PYTHONPATH")) if p)
    out = subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env,
                         check=False)
    if out.returncode != 0 or not out.stdout.strip():
        raise RuntimeError(f"benchmark child exited with {out.returncode}:\n"
                           f"{out.stderr.strip()[-3000:]}")
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def run_child(job: Job, root: Path = ROOT) -> dict[str, Any]:
    """One fresh process running ``job`` once: ``{"times": [...], "cpu": [...], "aorc": file
    of the aorc it imported or None}``."""
    spec = {"root": str(root), "task": job.task, "kwargs": job.kwargs,
            "warmup": job.warmup, "repeat": job.repeat}
    return run_python([str(HERE / "fresh.py"), json.dumps(spec)], root)


def _time(fn: Callable[[], object], warmup: int, repeat: int) -> dict[str, list[float]]:
    for _ in range(warmup):
        fn()
    times, cpu = [], []
    for _ in range(repeat):
        gc.collect()
        start, start_cpu = time.perf_counter(), time.process_time()
        fn()
        times.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return {"times": times, "cpu": cpu}


def _task(name: str) -> Callable[..., Callable[[], object]]:
    module, _, attr = name.partition(":")
    task: Callable[..., Callable[[], object]] = getattr(importlib.import_module(module), attr)
    return task


def run_here(job: Job) -> dict[str, Any]:
    """``job`` in this process (the quick ``--in-process`` mode): one process's worth."""
    return _time(_task(job.task)(**job.kwargs), job.warmup, job.repeat)


def measure(jobs: dict[str, Job], *, fresh: bool = True, root: Path = ROOT,
            runner: Callable[[Job], dict[str, Any]] | None = None) -> dict[str, Summary]:
    """The summary of every job's times, library by library: the jobs take turns process by
    process, in reverse order every other round (A B, B A, A B, ...).

    Args:
        jobs: library name -> job.
        fresh: each process a fresh child (else everything runs in this process).
        root: the tree whose aorc the children import.
        runner: runs one job once (default :func:`run_child`, or :func:`run_here` when not
            ``fresh``); tests pass their own.

    Raises:
        RuntimeError: a child imported aorc from outside ``root``.
    """
    run = runner or ((lambda job: run_child(job, root)) if fresh else run_here)
    samples: dict[str, list[float]] = {name: [] for name in jobs}
    names = list(jobs)
    for round_ in range(max((job.processes for job in jobs.values()), default=0)):
        for name in names if round_ % 2 == 0 else names[::-1]:
            job = jobs[name]
            if round_ >= job.processes:
                continue
            got = run(job)
            origin = got.get("aorc")
            if origin and runner is None and fresh and \
                    not Path(origin).resolve().is_relative_to(root.resolve()):
                raise RuntimeError(f"the benchmark child imported aorc from {origin}, "
                                   f"not from {root}")
            samples[name] += got["times"]
    return {name: summarize(times) for name, times in samples.items()}


def _child(spec: dict[str, Any]) -> None:
    """The child process: set up the task, time it, print the times as JSON."""
    sys.path[:0] = [spec["root"], str(HERE)]
    got: dict[str, Any] = _time(_task(spec["task"])(**spec["kwargs"]), spec["warmup"],
                                spec["repeat"])
    aorc = sys.modules.get("aorc")
    got["aorc"] = getattr(aorc, "__file__", None)
    print(json.dumps(got))


if __name__ == "__main__":
    _child(json.loads(sys.argv[1]))
