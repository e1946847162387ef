"""Where the time of ``aorc.spark.read`` goes (``bench_spark.py --breakdown``).

Each case is a Spark job in the benchmark's ``local[2]`` session over the same files; the
cases run in turns (so a busy moment of the machine hits all of them) and the best wall time
is kept, with the median CPU seconds the JVM and the Python processes (the workers and the
driver's planning) spent in it, read from ``/proc`` (Linux; CPU of worker processes that exit
during a case is not counted):

- ``empty``: a ``mapInArrow`` over as many tasks as :func:`aorc.spark.read` makes, yielding
  nothing: job scheduling, Python worker hand-off, the function's unpickling;
- ``decode, no hand-over``: the same tasks decode their splits with aorc and drop the batches;
- ``hand-over only``: the tasks yield batches decoded in an earlier job (kept in the worker
  process), so only the Arrow transfer to the JVM and Spark's own work remain;
- ``aorc.spark.read``: the whole read;
- ``spark.read.orc``: Spark's reader.

Each is measured with every column and with only the 3 columns the group-by uses.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from typing import Any

import pyarrow as pa
from cpu_time import cpu_spent

import aorc.spark
from aorc.spark.compat import default_parallelism
from aorc.spark.compat import from_arrow_schema as to_spark_schema
from aorc.spark.plan import balance_splits, pack_splits, plan_read
from aorc.spark.reader import (
    SPARK_BATCH_ROWS,
    read_split,
    run_async_iter,
    spark_arrow_schema,
    task_threads,
)

__all__ = ["breakdown"]

USED = ["event_type", "amount", "ts"]
class _Jobs:
    """DataFrames made like :func:`aorc.spark.read`'s, with a different task body."""

    def __init__(self, spark: Any, path: str) -> None:
        self.spark = spark
        self.path = path
        self.cores = default_parallelism(spark)

    def frame(self, columns: list[str] | None,
              body: Callable[[list[Any], pa.Schema, int, str], Iterator[pa.RecordBatch]]) -> Any:
        schema, splits = asyncio.run(plan_read(self.path, columns))
        arrow = spark_arrow_schema(schema)
        packs = pack_splits(balance_splits(splits, self.cores), self.cores)
        tasks = len(packs)
        threads = task_threads(self.cores, tasks)
        key = f"{self.path}:{columns}"

        def task(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
            mine = [s for b in batches for i in b.column(0).to_pylist() for s in packs[i]]
            yield from body(mine, arrow, threads, key)

        return self.spark.range(0, tasks, 1, tasks).mapInArrow(task, to_spark_schema(arrow))


def _empty(splits: list[Any], arrow: pa.Schema, threads: int, key: str
           ) -> Iterator[pa.RecordBatch]:
    return iter(())


def _decode_only(splits: list[Any], arrow: pa.Schema, threads: int, key: str
                 ) -> Iterator[pa.RecordBatch]:
    columns = arrow.names
    for split in splits:
        for _ in run_async_iter(read_split(split, columns, arrow, None, use_threads=threads)):
            pass
    return iter(())


def _handover_only(splits: list[Any], arrow: pa.Schema, threads: int, key: str
                   ) -> Iterator[pa.RecordBatch]:
    import builtins  # a place that lives as long as the (reused) worker process

    kept: dict[Any, list[pa.RecordBatch]] = builtins.__dict__.setdefault(
        "_aorc_bench_batches", {})
    for split in splits:
        if (key, split) not in kept:
            kept[key, split] = list(run_async_iter(read_split(
                split, arrow.names, arrow, None, use_threads=threads)))
        yield from kept[key, split]


def breakdown(spark: Any, path: str, group: Callable[[Any], Any], repeat: int) -> None:
    """Print the cases of the module docstring, with and without column pruning."""
    import sys

    from pyspark import cloudpickle

    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # workers cannot import it
    jobs = _Jobs(spark, path)

    def noop(df: Any) -> None:
        df.write.format("noop").mode("overwrite").save()

    cases: dict[str, Callable[[], Any]] = {}
    for label, cols in (("all columns", None), ("3 columns", USED)):
        cases |= {
            f"empty ({label})": lambda c=cols: noop(jobs.frame(c, _empty)),
            f"decode, no hand-over ({label})": lambda c=cols: noop(jobs.frame(c, _decode_only)),
            f"hand-over only + group-by ({label})":
                lambda c=cols: group(jobs.frame(c, _handover_only)),
            f"aorc.spark.read + group-by ({label})":
                lambda c=cols: group(aorc.spark.read(spark, path, columns=c)),
        }
    cases["spark.read.orc + group-by (prunes to 3)"] = lambda: group(spark.read.orc(path))
    runs: dict[str, list[tuple[float, float, float]]] = {name: [] for name in cases}
    for fn in cases.values():
        fn()  # warm up (and fill the workers' kept batches)
    for _ in range(repeat):
        for name, fn in cases.items():
            with cpu_spent() as spent:
                t0 = time.perf_counter()
                fn()
                wall = time.perf_counter() - t0
            runs[name].append((wall, spent["jvm"], spent["py"]))
    print(f"\nbreakdown (best wall of {repeat}; median CPU s)")
    print(f"{'case':<46} {'wall':>7} {'JVM cpu':>8} {'Py cpu':>8}")
    for name, values in runs.items():
        def median(i: int, v: list[tuple[float, float, float]] = values) -> float:
            return sorted(x[i] for x in v)[len(v) // 2]
        print(f"{name:<46} {min(x[0] for x in values):7.2f} {median(1):8.2f} {median(2):8.2f}")
    packs = pack_splits(asyncio.run(plan_read(path))[1], jobs.cores)
    print(f"(batches of {SPARK_BATCH_ROWS} rows; {jobs.cores} cores; {len(packs)} tasks)")
