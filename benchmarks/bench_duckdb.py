"""DuckDB over ORC: a DuckDB query over an aorc Arrow stream (``aorc.sync.record_batch_reader``,
the filter also pushed into aorc's ``filters=``), against DuckDB over pyarrow.orc's table
(read whole first) and DuckDB's own ``read_parquet`` of a Parquet copy.

Two queries on a table of ``--rows`` rows (default 2,000,000: id, country, amount, text):
a full aggregate (every row) and a selective one (``id >= 0.95 * rows``: aorc skips the
stripes before). Times are the best and the median of ``--repeat`` runs, each in a new
reader, reported as ratios to DuckDB over pyarrow.orc. The machine is shared: take the
numbers as noisy, peers side by side.

Usage::

    python benchmarks/bench_duckdb.py [--rows N] [--repeat 5]
"""

from __future__ import annotations

import argparse
import pathlib
import statistics
import tempfile
import time
from collections.abc import Callable
from typing import Any

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.orc as po
import pyarrow.parquet as pq

import aorc.sync


def make_table(rows: int, seed: int = 1) -> pa.Table:
    rng = np.random.default_rng(seed)
    return pa.table({
        "id": pa.array(np.arange(rows), pa.int64()),
        "country": pa.array(rng.choice(["DE", "FR", "NL", "PL", "ES"], rows)),
        "amount": pa.array(rng.integers(0, 100_000, rows), pa.int64()),
        "text": pa.array(rng.choice([f"event text {i}" for i in range(500)], rows)),
    })


def timed(func: Callable[[], Any], repeat: int) -> tuple[list[float], Any]:
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = func()
        times.append(time.perf_counter() - start)
    return times, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = pathlib.Path(tmp)
        table = make_table(args.rows)
        orc, parquet = folder / "t.orc", folder / "t.parquet"
        po.write_table(table, str(orc), compression="zstd", stripe_size=8 << 20)
        pq.write_table(table, str(parquet), compression="zstd")
        del table
        first = int(args.rows * 0.95)
        queries = {
            "full": ("SELECT country, count(*), sum(amount) FROM src GROUP BY country "
                     "ORDER BY country", None),
            "selective": (f"SELECT country, count(*), sum(amount) FROM src WHERE id >= "
                          f"{first} GROUP BY country ORDER BY country",
                          [("id", ">=", first)]),
        }
        for name, (sql, filters) in queries.items():
            def on_aorc(sql: str = sql, filters: Any = filters) -> Any:
                src = aorc.sync.record_batch_reader(  # noqa: F841 - found by DuckDB
                    str(orc), columns=["id", "country", "amount"], filters=filters)
                return duckdb.sql(sql).fetchall()

            def on_pyarrow(sql: str = sql) -> Any:
                src = po.read_table(str(orc),  # noqa: F841 - found by DuckDB
                                    columns=["id", "country", "amount"])
                return duckdb.sql(sql).fetchall()

            def on_parquet(sql: str = sql) -> Any:
                return duckdb.sql(sql.replace("src", f"read_parquet('{parquet}')")).fetchall()

            results = {}
            for label, func in (("aorc stream", on_aorc), ("pyarrow.orc table", on_pyarrow),
                                ("duckdb read_parquet", on_parquet)):
                results[label] = timed(func, args.repeat)
            answers = {repr(r[1]) for r in results.values()}
            assert len(answers) == 1, f"{name}: the engines disagree"
            base = results["pyarrow.orc table"][0]
            print(f"{name} ({args.rows:,} rows), ratio to DuckDB over pyarrow.orc's table:")
            for label, (times, _) in results.items():
                print(f"  {label:22s} best {min(times):7.3f} s ({min(times) / min(base):.2f}x)"
                      f"  median {statistics.median(times):7.3f} s "
                      f"({statistics.median(times) / statistics.median(base):.2f}x)")


if __name__ == "__main__":
    main()
