"""Query engines over ORC through aorc, against their own readers: one section per engine.

::

    python benchmarks/bench_engines.py [--rows 2000000] [--repeat 5] [--latency-ms 20]
                                       [--sections polars-local,polars-s3]

Data: ``--rows`` rows of seven columns from a seeded generator (``make_table``), written to
ORC by aorc and to Parquet by pyarrow (both zstd, in a temporary folder). The query reads 3
of the 7 columns: a filter on ``day`` (sorted, so statistics prune; about 10% of the rows
pass) and ``amount > 0``, grouped by ``category``, summing ``amount``.

Sections (each a function ``section_<name>(ctx)``, adding rows to the report):

- ``polars-local``: ``aorc.polars.scan_orc`` vs ``pl.scan_parquet`` on the Parquet copy vs
  ``pl.from_arrow(pyarrow.orc.read_table(path, columns=...))`` then the same query; plus
  the bytes aorc reads with and without the predicate pushed down;
- ``polars-s3``: the ORC file on moto's S3 behind a proxy adding ``--latency-ms`` to every
  request (``s3_server.py``, a child process): aorc's scan vs pyarrow.orc through pyarrow's
  S3 filesystem; and ``pl.scan_parquet`` on an S3 copy of the Parquet file.

Each route is run ``--repeat`` times; best and median are printed with ratios to the first
route of the section. Numbers from a shared machine are noisy: compare routes measured in the
same run.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.orc as po
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import polars as pl  # noqa: E402

import aorc.sync  # noqa: E402
from aorc.polars import open_scan  # noqa: E402

COLUMNS = ["day", "category", "amount"]
BUCKET = "bench"


def make_table(rows: int, seed: int = 42) -> pa.Table:
    """Seven columns: a sorted id and day, a 50-value category, amounts, quantities, a key of
    1,000 values and a flag."""
    rng = np.random.default_rng(seed)
    day = np.datetime64("2024-01-01") + (np.arange(rows) * 100 // rows).astype("timedelta64[D]")
    return pa.table({
        "id": pa.array(np.arange(rows)),
        "day": pa.array(day, pa.date32()),
        "category": pa.array(np.array([f"cat{i:02d}" for i in range(50)])[
            rng.integers(0, 50, rows)]),
        "amount": pa.array(rng.normal(10, 100, rows)),
        "qty": pa.array(rng.integers(0, 100, rows).astype(np.int32)),
        "key": pa.array(rng.integers(0, 1000, rows)),
        "flag": pa.array(rng.random(rows) < 0.3),
    })


def query(frame: Any) -> Any:
    """The benchmark query on a DataFrame or LazyFrame."""
    import datetime

    return (frame.filter((pl.col("day") >= datetime.date(2024, 4, 1))
                         & (pl.col("amount") > 0))
            .group_by("category").agg(pl.col("amount").sum(), pl.len())
            .sort("category"))


# =========================================================================== harness

@dataclass
class Context:
    """What the sections share: arguments, the files, the report."""

    args: argparse.Namespace
    folder: Path
    table: pa.Table
    orc: Path
    parquet: Path
    rows: list[tuple[str, str, float, float, float, float]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def timed(fn: Callable[[], Any], repeat: int) -> tuple[float, float, Any]:
    """Best and median seconds of ``repeat`` runs, and the last result."""
    times, result = [], None
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return min(times), statistics.median(times), result


def compare(ctx: Context, section: str, routes: dict[str, Callable[[], Any]]) -> None:
    """Time the routes (the first is the reference), check equal results, add rows."""
    expected = None
    base: tuple[float, float] | None = None
    for name, fn in routes.items():
        best, median, result = timed(fn, ctx.args.repeat)
        if expected is None:
            expected = result
        elif not _close(result, expected):
            raise SystemExit(f"{section}/{name}: result differs from the first route's")
        if base is None:
            base = (best, median)
        ctx.rows.append((section, name, best, median, best / base[0], median / base[1]))


def _close(a: pl.DataFrame, b: pl.DataFrame) -> bool:
    if a.shape != b.shape or a["category"].to_list() != b["category"].to_list():
        return False
    return bool(np.allclose(a["amount"].to_numpy(), b["amount"].to_numpy())
                and a["len"].to_list() == b["len"].to_list())


def report(ctx: Context) -> None:
    print(f"\n{'section':<14} {'route':<40} {'best s':>8} {'median s':>9} "
          f"{'best x':>7} {'median x':>8}")
    for section, name, best, median, rb, rm in ctx.rows:
        print(f"{section:<14} {name:<40} {best:8.3f} {median:9.3f} {rb:7.2f} {rm:8.2f}")
    for note in ctx.notes:
        print(note)


# =========================================================================== Polars

def section_polars_local(ctx: Context) -> None:
    """Local disk: aorc's scan vs Polars' Parquet scan vs pyarrow.orc into Polars."""
    orc, parquet = str(ctx.orc), str(ctx.parquet)
    compare(ctx, "polars-local", {
        "aorc.polars.scan_orc": lambda: query(open_scan(orc).lazy()).collect(),
        "pl.scan_parquet (Parquet copy)": lambda: query(pl.scan_parquet(parquet)).collect(),
        "pl.from_arrow(pyarrow.orc.read_table)": lambda: query(
            pl.from_arrow(po.read_table(orc, columns=COLUMNS))),
    })
    pushed = open_scan(orc)
    query(pushed.lazy()).collect()
    whole = open_scan(orc)
    whole.lazy().select(COLUMNS).collect()
    ctx.notes.append(
        f"polars-local bytes read by aorc: {pushed.io_stats.bytes:,} with the predicate "
        f"pushed down ({pushed.scan_stats.row_groups_read} of "
        f"{pushed.scan_stats.row_groups_total} row groups), {whole.io_stats.bytes:,} "
        f"without (the same 3 columns); file {ctx.orc.stat().st_size:,} bytes")


def section_polars_s3(ctx: Context) -> None:
    """S3 (moto) behind a proxy adding ``--latency-ms`` per request."""
    from bench_s3 import set_environment
    from pyarrow import fs
    from s3_server import ServerProcess

    server = ServerProcess(ctx.args.latency_ms / 1000).start()
    try:
        set_environment(server.upstream)
        import boto3

        client = boto3.client("s3", endpoint_url=server.upstream)
        client.create_bucket(Bucket=BUCKET)
        client.put_object(Bucket=BUCKET, Key="data.orc", Body=ctx.orc.read_bytes())
        client.put_object(Bucket=BUCKET, Key="data.parquet", Body=ctx.parquet.read_bytes())
        client.close()
        options = {"endpoint_url": server.url}
        url = f"s3://{BUCKET}/data.orc"

        def pyarrow_route() -> Any:
            s3 = fs.S3FileSystem(endpoint_override=server.url, scheme="http",
                                 access_key="bench", secret_key="bench", region="us-east-1")
            with s3.open_input_file(f"{BUCKET}/data.orc") as f:
                return query(pl.from_arrow(po.ORCFile(f).read(columns=COLUMNS)))

        polars_options = {"aws_endpoint_url": server.url, "aws_access_key_id": "bench",
                          "aws_secret_access_key": "bench", "aws_region": "us-east-1",
                          "aws_allow_http": "true"}
        routes: dict[str, Callable[[], Any]] = {
            "aorc.polars.scan_orc": lambda: query(
                open_scan(url, storage_options=options).lazy()).collect(),
            "pl.from_arrow(pyarrow.orc via S3FileSystem)": pyarrow_route,
            "pl.scan_parquet (Parquet copy)": lambda: query(pl.scan_parquet(
                f"s3://{BUCKET}/data.parquet", storage_options=polars_options)).collect(),
        }
        compare(ctx, f"polars-s3+{ctx.args.latency_ms:g}ms", routes)
        server.log.clear()
        scan = open_scan(url, storage_options=options)
        query(scan.lazy()).collect()
        ctx.notes.append(f"polars-s3 requests of one aorc query: {len(server.log)} "
                         f"({scan.io_stats.bytes:,} bytes)")
    finally:
        server.stop()


SECTIONS: dict[str, Callable[[Context], None]] = {
    "polars-local": section_polars_local,
    "polars-s3": section_polars_s3,
}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--latency-ms", type=float, default=20.0)
    parser.add_argument("--sections", default=",".join(SECTIONS))
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        table = make_table(args.rows)
        orc, parquet = folder / "data.orc", folder / "data.parquet"
        aorc.sync.write_table(table, orc, compression="zstd")
        pq.write_table(table, parquet, compression="zstd")
        ctx = Context(args, folder, table, orc, parquet)
        print(f"{args.rows:,} rows; ORC {orc.stat().st_size:,} bytes (aorc), Parquet "
              f"{parquet.stat().st_size:,} bytes (pyarrow)")
        for name in args.sections.split(","):
            SECTIONS[name](ctx)
        report(ctx)


if __name__ == "__main__":
    main()
