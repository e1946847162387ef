"""Hive ACID read benchmark: a transactional table with deletes read by
``aorc.read_acid_table``, against the same rows read as a plain dataset.

Writes (aorc's writer, zstd, in Hive 3's layout: ``base_N``, ``delta_N_N_0000`` and
``delete_delta_N_N_0000`` folders of ``bucket_NNNNN`` files with ``BucketCodec`` V1 bucket
properties, the layout ``tests/dataset/acid`` checks against Hive's own writer) a table of
``--rows`` rows: a base of most of them, ``--deltas`` insert deltas, ``--delete-deltas``
delete deltas deleting ``--delete-fraction`` of the rows. The plain dataset holds the same
inserted rows as flat columns in as many files. Both are read whole and with a filter
(``score < 100``), side by side in turns, best and median of ``--repeat``; the ratio is
the ACID read over the plain read.

With ``--s3`` both folders are also uploaded to moto's S3 server behind the delaying proxy
of ``bench_s3.py`` (``--latency-ms`` per request, both in a child process, see
``s3_server.py``) and read from there the same way, each read opening its own client; the
requests and bytes of one read are aorc's own counts (``io_stats``).

Usage::

    python benchmarks/bench_acid.py [--rows 10000000] [--deltas 5] [--delete-deltas 3]
                                    [--delete-fraction 0.01] [--buckets 2] [--repeat 5]
                                    [--s3] [--latency-ms 20]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

import aorc
import aorc.sync

EVENT_FIELDS = [("operation", pa.int32()), ("originalTransaction", pa.int64()),
                ("bucket", pa.int32()), ("rowId", pa.int64()),
                ("currentTransaction", pa.int64())]


def _rows(n: int, seed: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    return pa.table({
        "id": pa.array(rng.integers(0, 2**62, n)),
        "ts": pa.array(rng.integers(1.7e15, 1.8e15, n).astype("datetime64[us]")),
        "user": pa.array([f"user-{v}" for v in rng.integers(0, 100_000, n)]),
        "amount": pa.array(rng.standard_normal(n) * 100),
        "score": pa.array(rng.integers(0, 1000, n, dtype=np.int32)),
    })


def _v1(bucket: int) -> int:
    return (1 << 29) | (bucket << 16)


def _events(rows: pa.Table, wid: int, bucket: int, op: int = 0) -> pa.Table:
    n = rows.num_rows
    cols = [pa.array(np.full(n, op, np.int32)), pa.array(np.full(n, wid, np.int64)),
            pa.array(np.full(n, _v1(bucket), np.int32)), pa.array(np.arange(n, dtype=np.int64)),
            pa.array(np.full(n, wid, np.int64)),
            pa.StructArray.from_arrays([c.combine_chunks() for c in rows.columns],
                                       names=rows.column_names)]
    return pa.Table.from_arrays(cols, names=[*(f for f, _ in EVENT_FIELDS), "row"])


def build(root: Path, rows: int, deltas: int, delete_deltas: int, fraction: float,
          buckets: int) -> tuple[Path, Path, int]:
    """The ACID table, the plain dataset and the number of rows left after deletes."""
    acid, plain = root / "acid", root / "plain"
    base_rows = rows * 3 // 4
    per_delta = (rows - base_rows) // max(1, deltas)
    writes = [(1, base_rows, "base_0000001")]
    writes += [(2 + i, per_delta, f"delta_{2 + i:07d}_{2 + i:07d}_0000") for i in range(deltas)]
    rng = np.random.default_rng(0)
    written: list[tuple[int, int, int]] = []  # (write id, bucket, rows)
    for wid, n, folder in writes:
        for b in range(buckets):
            part = _rows(n // buckets, wid * 100 + b)
            aorc.sync.write_table(_events(part, wid, b), acid / folder / f"bucket_{b:05d}",
                                  compression="zstd")
            aorc.sync.write_table(part, plain / f"{folder}-{b}.orc", compression="zstd")
            written.append((wid, b, part.num_rows))
    deleted = 0
    for k in range(delete_deltas):
        wid = 2 + deltas + k
        for b in range(buckets):
            keys = []
            for owid, ob, n in written:
                if ob != b:
                    continue
                pick = np.unique(rng.integers(0, n, int(n * fraction / delete_deltas)))
                keys.append((np.full(len(pick), owid), pick))
            otid = np.concatenate([k_[0] for k_ in keys])
            row_ids = np.concatenate([k_[1] for k_ in keys])
            order = np.lexsort((row_ids, otid))
            n = len(order)
            table = pa.Table.from_arrays(
                [pa.array(np.full(n, 2, np.int32)), pa.array(otid[order].astype(np.int64)),
                 pa.array(np.full(n, _v1(b), np.int32)), pa.array(row_ids[order]),
                 pa.array(np.full(n, wid, np.int64)),
                 pa.nulls(n, pa.struct(list(_rows(1, 0).schema)))],
                names=[*(f for f, _ in EVENT_FIELDS), "row"])
            aorc.sync.write_table(table, acid / f"delete_delta_{wid:07d}_{wid:07d}_0000" /
                                  f"bucket_{b:05d}", compression="zstd")
            deleted += n
    return acid, plain, deleted


def _time(fn: Callable[[], pa.Table]) -> tuple[float, int]:
    start = time.perf_counter()
    table = fn()
    return time.perf_counter() - start, table.num_rows


def _compare(cases: dict[str, tuple[Callable[[], pa.Table], Callable[[], pa.Table]]],
             repeat: int, prefix: str = "") -> None:
    for name, (acid_read, plain_read) in cases.items():
        times: dict[str, list[float]] = {"acid": [], "plain": []}
        counts = {}
        for _ in range(repeat):  # in turns, so both see the same machine load
            for label, fn in (("acid", acid_read), ("plain", plain_read)):
                seconds, n = _time(fn)
                times[label].append(seconds)
                counts[label] = n
        best = {k: min(v) for k, v in times.items()}
        med = {k: statistics.median(v) for k, v in times.items()}
        print(f"{prefix}{name:18s} acid {best['acid']:.3f}s (median {med['acid']:.3f}) "
              f"{counts['acid']:,} rows | plain {best['plain']:.3f}s (median "
              f"{med['plain']:.3f}) {counts['plain']:,} rows | ratio best "
              f"{best['acid'] / best['plain']:.2f}x, median "
              f"{med['acid'] / med['plain']:.2f}x", flush=True)


def _upload(endpoint: str, root: Path, bucket: str) -> None:
    import boto3

    client = boto3.client("s3", endpoint_url=endpoint)
    client.create_bucket(Bucket=bucket)
    for path in sorted(root.rglob("*")):
        if path.is_file():
            client.upload_file(str(path), bucket, path.relative_to(root).as_posix())
    client.close()


def _s3(root: Path, latency: float, repeat: int) -> None:
    """The same reads from moto's S3 behind the delaying proxy, and one read's I/O."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_s3 import set_environment, start_servers

    proxy = start_servers(latency)
    try:
        set_environment(proxy.upstream)
        _upload(proxy.upstream, root, "bench")
        options = {"endpoint_url": proxy.url}
        acid, plain = "s3://bench/acid", "s3://bench/plain"
        flt = [("score", "<", 100)]

        def io(open_fn: Callable[[], Any], filters: Any) -> tuple[int, int, int]:
            async def one() -> tuple[int, int, int]:
                table = await open_fn()
                rows = (await table.read(filters=filters)).num_rows
                return rows, table.io_stats.requests, table.io_stats.bytes
            return asyncio.run(one())

        for label, filters in (("whole", None), ("filter score<100", flt)):
            a = io(lambda: aorc.open_acid_table(acid, storage_options=options), filters)
            p = io(lambda: aorc.open_dataset(plain, storage_options=options), filters)
            print(f"s3 {label:18s} one read: acid {a[1]} requests, {a[2] / 2**20:.1f} MiB | "
                  f"plain {p[1]} requests, {p[2] / 2**20:.1f} MiB | bytes ratio "
                  f"{a[2] / p[2]:.2f}x", flush=True)
        _compare({
            "whole": (lambda: aorc.sync.read_acid_table(acid, storage_options=options),
                      lambda: aorc.sync.read_dataset(plain, storage_options=options)),
            "filter score<100": (
                lambda: aorc.sync.read_acid_table(acid, filters=flt, storage_options=options),
                lambda: aorc.sync.read_dataset(plain, filters=flt, storage_options=options)),
        }, repeat, prefix="s3 ")
    finally:
        proxy.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--deltas", type=int, default=5)
    parser.add_argument("--delete-deltas", type=int, default=3)
    parser.add_argument("--delete-fraction", type=float, default=0.01)
    parser.add_argument("--buckets", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--s3", action="store_true", help="also read from S3 (moto + proxy)")
    parser.add_argument("--latency-ms", type=float, default=20.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="aorc-bench-acid-") as tmp:
        acid, plain, deleted = build(Path(tmp), args.rows, args.deltas, args.delete_deltas,
                                     args.delete_fraction, args.buckets)
        total = aorc.sync.read_dataset(plain, columns=["score"]).num_rows
        print(f"{total:,} rows inserted, {deleted:,} delete events "
              f"({args.deltas} deltas, {args.delete_deltas} delete deltas, "
              f"{args.buckets} buckets)", flush=True)
        _compare({
            "whole": (lambda: aorc.sync.read_acid_table(acid),
                      lambda: aorc.sync.read_dataset(plain)),
            "filter score<100": (
                lambda: aorc.sync.read_acid_table(acid, filters=[("score", "<", 100)]),
                lambda: aorc.sync.read_dataset(plain, filters=[("score", "<", 100)])),
        }, args.repeat)
        if args.s3:
            _s3(Path(tmp), args.latency_ms / 1000, args.repeat)


if __name__ == "__main__":
    main()
