"""S3 read benchmark: aorc against pyarrow.orc over pyarrow's S3 filesystem, with latency.

Starts moto's S3 server on 127.0.0.1 and, in front of it, a loopback proxy that delays every
request by a fixed time (default 20 ms) to stand in for the round trip to a real object
store; both run in a child process (``s3_server.py``: in this process they would take the
GIL from the readers; ``--in-process-server`` runs them here as before). Writes the
benchmark table of ``bench_read.py`` (default 2,000,000 rows) with pyarrow.orc in stripes of
``--stripe-mib`` MiB (several stripes), uploads it, then reads it through the proxy with

- aorc: ``aorc.read_table("s3://bench/data.orc", storage_options={"endpoint_url": proxy})``
  inside ``asyncio.run`` (a new event loop, hence a new S3 client, each run);
- pyarrow: ``pyarrow.orc.ORCFile(fs.open_input_file(...)).read()`` with a new
  ``pyarrow.fs.S3FileSystem(endpoint_override=proxy, scheme="http")`` each run;

and prints the best of ``--repeat`` times, the ratio aorc / pyarrow (the target is at most
0.3 with 20 ms latency) and the number of requests each reader sent (counted by the proxy).
The file has bloom filters on ``id`` and ``uuid``. Last, a point lookup (``id == N`` on the
sorted ``id`` column, one row: open the file, read the matching rows, with an S3 client that
already exists) reports its time, requests, sequential round trips and bytes (target: at
most 0.12 s at 20 ms, in three round trips), and so does a second lookup on the same open
reader, of another key of that stripe (in another row group): the reader keeps the stripe's
footer, so it needs neither the tail nor the footer round.
Both a whole-file read and a read of two columns are timed, and both results are checked
against each other before timing.

Usage::

    python benchmarks/bench_s3.py [--rows N] [--latency-ms 20] [--repeat 3]
                                  [--stripe-mib 8] [--codec zstd] [--lookup-only]
                                  [--in-process-server]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import io
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.orc as pa_orc

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # aorc from the checkout
sys.path.insert(0, str(ROOT / "tests"))  # helpers.s3proxy
sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench_read

from bench_tables import build_table  # noqa: E402

BUCKET = "bench"
KEY = "data.orc"
PROJECTION = ["id", "value"]


def start_servers(latency: float, in_process: bool = False) -> Any:
    """moto's server and the delaying proxy in front of it, in a child process (see
    :mod:`s3_server`), or with ``in_process`` in threads of this one (as before: they then
    compete with the reader for the GIL). Returns an object with ``url``, ``upstream``,
    ``log`` and ``stop()``."""
    from s3_server import ServerProcess, start_moto_and_proxy
    if not in_process:
        return ServerProcess(latency).start()
    server, proxy = start_moto_and_proxy(latency)
    stop = proxy.stop

    def stop_both() -> None:
        stop()
        server.stop()

    proxy.stop = stop_both  # type: ignore[method-assign]
    return proxy


def set_environment(endpoint: str) -> None:
    """Dummy credentials; aorc and boto3 find the (undelayed) endpoint in the environment,
    benchmark reads override it with the proxy's."""
    os.environ.update({
        "AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench",
        "AWS_DEFAULT_REGION": "us-east-1", "AWS_ENDPOINT_URL": endpoint,
        "AWS_EC2_METADATA_DISABLED": "true",
    })


def upload(endpoint: str, data: bytes) -> None:
    import boto3

    client = boto3.client("s3", endpoint_url=endpoint)
    client.create_bucket(Bucket=BUCKET)
    client.put_object(Bucket=BUCKET, Key=KEY, Body=data)
    client.close()


def readers(aorc: Any, proxy: Any, columns: list[str] | None
            ) -> dict[str, Callable[[], pa.Table]]:
    """The two readers, each doing all its setup (client, filesystem) inside the call."""
    from pyarrow import fs

    def read_aorc() -> pa.Table:
        return asyncio.run(aorc.read_table(f"s3://{BUCKET}/{KEY}", columns=columns,
                                           storage_options={"endpoint_url": proxy.url}))

    def read_pyarrow() -> pa.Table:
        s3 = fs.S3FileSystem(endpoint_override=proxy.url, scheme="http", access_key="bench",
                             secret_key="bench", region="us-east-1")
        with s3.open_input_file(f"{BUCKET}/{KEY}") as f:
            return pa_orc.ORCFile(f).read(columns=columns)

    return {"aorc": read_aorc, "pyarrow": read_pyarrow}


def measure(fn: Callable[[], pa.Table], proxy: Any, repeat: int) -> tuple[float, int]:
    """Best time of ``repeat`` runs, and the requests one run sends."""
    best, requests = float("inf"), 0
    for _ in range(repeat):
        gc.collect()
        proxy.log.clear()
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
        requests = len(proxy.log)
    return best, requests


def compare(label: str, aorc: Any, proxy: Any, columns: list[str] | None,
            repeat: int) -> float:
    """Check both readers agree, time them, print a row; returns the ratio."""
    fns = readers(aorc, proxy, columns)
    got, want = fns["aorc"](), fns["pyarrow"]()
    if not got.equals(want):
        sys.exit(f"bench_s3: aorc and pyarrow return different tables for {label}")
    (t_aorc, n_aorc), (t_pa, n_pa) = (measure(fns[k], proxy, repeat) for k in fns)
    ratio = t_aorc / t_pa
    print(f"{label:<22} {t_aorc:>8.3f} {n_aorc:>6} {t_pa:>10.3f} {n_pa:>6} {ratio:>8.2f}",
          flush=True)
    return ratio


def _rounds(log: list[Any]) -> int:
    """Sequential round trips in a request log: requests that overlap in time are one."""
    rounds, end = 0, -1.0
    for record in sorted(log, key=lambda r: r.start):
        if record.start >= end:
            rounds += 1
            end = record.end
        else:
            end = max(end, record.end)
    return rounds


def point_lookup(aorc: Any, proxy: Any, value: int, repeat: int) -> float:
    """Time ``id == value`` (one matching row): opening the file and reading the matching
    rows, in an event loop whose S3 client is made (by a first lookup) before timing.
    Prints the best time, the requests, sequential round trips and bytes of one lookup."""
    filters = [("id", "==", value)]
    options = {"endpoint_url": proxy.url}

    async def one() -> tuple[pa.Table, Any]:
        async with aorc.open_reader(f"s3://{BUCKET}/{KEY}", storage_options=options) as reader:
            table = await reader.read(filters=filters)
            return table, reader.io_stats.snapshot()

    async def timed() -> tuple[list[float], int, int, int, pa.Table]:
        await one()  # makes the loop's S3 client
        times: list[float] = []
        requests, rounds, nbytes = 0, 0, 0
        for _ in range(repeat):
            gc.collect()
            proxy.log.clear()
            start = time.perf_counter()
            table, io_stats = await one()
            times.append(time.perf_counter() - start)
            requests, rounds, nbytes = len(proxy.log), _rounds(proxy.log), io_stats.bytes
        return times, requests, rounds, nbytes, table

    times, requests, rounds, nbytes, table = asyncio.run(timed())
    if table.num_rows != 1 or table.column("id")[0].as_py() != value:
        sys.exit(f"bench_s3: the point lookup returned {table.num_rows} rows")
    best = min(times)
    verdict = "meets" if best <= 0.12 else "misses"
    print(f"point lookup id == {value}: {best:.3f} s (median {statistics.median(times):.3f} s "
          f"of {len(times)}), {requests} requests in {rounds} rounds, {nbytes / 2**20:.2f} MiB "
          f"({verdict} the target of 0.12 s)", flush=True)
    warm_lookup(aorc, proxy, value, repeat)
    return best


def other_key(reader: Any, value: int) -> int:
    """A key of ``value``'s stripe in another row group (``id`` is the row number)."""
    start, step = 0, 3 * reader.row_index_stride
    for stripe in reader.stripes:
        if start <= value < start + stripe.num_rows:
            return value + step if value + step < start + stripe.num_rows else value - step
        start += stripe.num_rows
    raise ValueError(f"no row {value}")


def warm_lookup(aorc: Any, proxy: Any, value: int, repeat: int) -> float:
    """Time a second lookup on an open reader (``id == value`` first, not timed), of another
    key in the same stripe; prints as :func:`point_lookup` does."""
    options = {"endpoint_url": proxy.url}

    async def one() -> tuple[float, int, int, int, pa.Table]:
        async with aorc.open_reader(f"s3://{BUCKET}/{KEY}", storage_options=options) as reader:
            await reader.read(filters=[("id", "==", value)])
            key = other_key(reader, value)
            gc.collect()
            proxy.log.clear()
            before = reader.io_stats.snapshot().bytes
            start = time.perf_counter()
            table = await reader.read(filters=[("id", "==", key)])
            elapsed = time.perf_counter() - start
            log = list(proxy.log)
            nbytes = reader.io_stats.bytes - before
        if table.num_rows != 1 or table.column("id")[0].as_py() != key:
            sys.exit(f"bench_s3: the second lookup returned {table.num_rows} rows")
        return elapsed, len(log), _rounds(log), nbytes, table

    async def timed() -> list[tuple[float, int, int, int, pa.Table]]:
        return [await one() for _ in range(repeat)]

    runs = asyncio.run(timed())
    times = [r[0] for r in runs]
    _, requests, rounds, nbytes, table = runs[-1]
    best = min(times)
    print(f"second lookup id == {table.column('id')[0].as_py()} on the same reader: "
          f"{best:.3f} s (median {statistics.median(times):.3f} s of {len(times)}), "
          f"{requests} requests in {rounds} rounds, {nbytes / 2**20:.2f} MiB", flush=True)
    return best


def main(argv: list[str] | None = None) -> None:
    """Parse the command line and run the benchmark."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--latency-ms", type=float, default=20.0,
                        help="delay added to every request (default 20)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per timing, best kept")
    parser.add_argument("--stripe-mib", type=float, default=8.0,
                        help="pyarrow.orc stripe_size in MiB (default 8)")
    parser.add_argument("--codec", default="zstd", help="pyarrow codec (default zstd)")
    parser.add_argument("--lookup-only", action="store_true",
                        help="only the point lookup (no whole-file and column reads)")
    parser.add_argument("--in-process-server", action="store_true",
                        help="run moto and the proxy in threads of this process (they then "
                             "take the GIL from the readers) instead of a child process")
    args = parser.parse_args(argv)
    try:
        import aorc
    except ImportError as exc:
        sys.exit(f"bench_s3: cannot import aorc ({exc}); build it first")

    proxy = start_servers(args.latency_ms / 1000, args.in_process_server)
    try:
        set_environment(proxy.upstream)
        print(f"python {platform.python_version()}, pyarrow {pa.__version__}, "
              f"{os.cpu_count()} CPUs, best of {args.repeat}; moto on {proxy.upstream}, "
              f"{args.latency_ms:g} ms added per request by the proxy at {proxy.url}, "
              f"{'in this process' if args.in_process_server else 'in a child process'}")
        print(f"building {args.rows:,} rows ...", flush=True)
        out = io.BytesIO()
        table = build_table(args.rows)
        pa_orc.write_table(table, out, compression=args.codec,
                           stripe_size=int(args.stripe_mib * 2**20),
                           # ORC column ids: 0 is the root struct, fields from 1
                           bloom_filter_columns=[table.column_names.index("id") + 1,
                                                 table.column_names.index("uuid") + 1])
        data = out.getvalue()
        upload(proxy.upstream, data)
        nstripes = pa_orc.ORCFile(io.BytesIO(data)).nstripes
        print(f"s3://{BUCKET}/{KEY}: {len(data) / 2**20:.1f} MiB, {nstripes} stripes, "
              f"{args.codec}")
        print(f"{'':<22} {'aorc s':>8} {'reqs':>6} {'pyarrow s':>10} {'reqs':>6} "
              f"{'ratio':>8}")
        if not args.lookup_only:
            ratios = [compare("whole file", aorc, proxy, None, args.repeat),
                      compare(f"columns {','.join(PROJECTION)}", aorc, proxy, PROJECTION,
                              args.repeat)]
            verdict = "meets" if ratios[0] <= 0.3 else "misses"
            print(f"whole-file ratio {ratios[0]:.2f}: {verdict} the target of 0.3")
        point_lookup(aorc, proxy, args.rows * 3 // 5 + 7, args.repeat)
    finally:
        proxy.stop()


if __name__ == "__main__":
    main()
