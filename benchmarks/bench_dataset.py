"""Dataset read benchmark: aorc.read_dataset against pyarrow.dataset on S3, with latency.

Starts moto's S3 server on 127.0.0.1 and the delaying proxy of ``bench_s3.py`` in front of
it (default 20 ms per request; both in a child process, see ``s3_server.py``), uploads
``--files`` ORC files (default 200) of ``--rows`` rows each (default 10,000) under
``s3://bench/events/`` in Hive folders ``country=<4 values>/day=<5 values>/``, written by
pyarrow.orc, and reads them through the proxy with

- aorc: ``aorc.read_dataset("s3://bench/events", storage_options={"endpoint_url": proxy})``
  in ``asyncio.run``;
- pyarrow: ``pyarrow.dataset.dataset("bench/events", format="orc", partitioning=hive,
  filesystem=S3FileSystem(endpoint_override=proxy)).to_table()``;

each doing its listing and setup inside the timed call. Both a whole read and a read with a
partition filter (``country == "DE"``: a quarter of the files) are timed, after checking that
both readers return the same rows. Prints the best of ``--repeat`` times, the requests each
sent (counted by the proxy) and the ratio aorc / pyarrow; the target is at most 0.2.

Usage::

    python benchmarks/bench_dataset.py [--files 200] [--rows 10000] [--latency-ms 20]
                                       [--repeat 3] [--in-process-server]
"""

from __future__ import annotations

import argparse
import asyncio
import io
import os
import platform
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.orc as pa_orc

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench_s3 (puts aorc, tests first)

from bench_s3 import (  # noqa: E402
    BUCKET,
    measure,
    set_environment,
    start_servers,
)

PREFIX = "events"
COUNTRIES = ["DE", "FR", "IT", "NL"]
PART = pa.schema([("country", pa.string()), ("day", pa.int32())])


def file_table(rows: int, seed: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    return pa.table({
        "id": pa.array(np.arange(seed * rows, (seed + 1) * rows, dtype=np.int64)),
        "value": pa.array(rng.normal(size=rows)),
        "amount": pa.array(rng.integers(0, 10_000, rows, dtype=np.int32)),
        "name": pa.array([f"user-{i % 997}" for i in range(rows)]),
    })


def upload(endpoint: str, files: int, rows: int) -> int:
    import boto3

    client = boto3.client("s3", endpoint_url=endpoint)
    client.create_bucket(Bucket=BUCKET)
    total = 0
    for i in range(files):
        out = io.BytesIO()
        pa_orc.write_table(file_table(rows, i), out, compression="zstd")
        key = (f"{PREFIX}/country={COUNTRIES[i % 4]}/day={1 + (i // 4) % 5}/"
               f"part-{i:05d}.orc")
        client.put_object(Bucket=BUCKET, Key=key, Body=out.getvalue())
        total += out.tell()
    client.close()
    return total


def readers(aorc: Any, proxy: Any, filters: Any) -> dict[str, Callable[[], pa.Table]]:
    import pyarrow.dataset as pads
    from pyarrow import fs

    def read_aorc() -> pa.Table:
        return asyncio.run(aorc.read_dataset(f"s3://{BUCKET}/{PREFIX}", filters=filters,
                                             storage_options={"endpoint_url": proxy.url,
                                                              "max_pool_connections": 64},
                                             max_open_files=64))

    def read_pyarrow() -> pa.Table:
        s3 = fs.S3FileSystem(endpoint_override=proxy.url, scheme="http", access_key="bench",
                             secret_key="bench", region="us-east-1")
        ds = pads.dataset(f"{BUCKET}/{PREFIX}", format="orc", filesystem=s3,
                          partitioning=pads.partitioning(PART, flavor="hive"))
        expr = pc.field("country") == "DE" if filters else None
        return ds.to_table(filter=expr)

    return {"aorc": read_aorc, "pyarrow": read_pyarrow}


def compare(label: str, aorc: Any, proxy: Any, filters: Any, repeat: int) -> float:
    fns = readers(aorc, proxy, filters)
    got = fns["aorc"]().sort_by("id")
    want = fns["pyarrow"]().sort_by("id")
    want = want.cast(got.schema) if want.schema != got.schema else want
    if not got.equals(want):
        sys.exit(f"bench_dataset: aorc and pyarrow return different tables for {label}")
    (t_aorc, n_aorc), (t_pa, n_pa) = (measure(fns[k], proxy, repeat) for k in fns)
    ratio = t_aorc / t_pa
    print(f"{label:<22} {t_aorc:>8.3f} {n_aorc:>6} {t_pa:>10.3f} {n_pa:>6} {ratio:>8.2f}",
          flush=True)
    return ratio


def main(argv: list[str] | None = None) -> None:
    """Parse the command line and run the benchmark."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--latency-ms", type=float, default=20.0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--in-process-server", action="store_true",
                        help="run moto and the proxy in threads of this process (they then "
                             "take the GIL from the readers) instead of a child process")
    args = parser.parse_args(argv)
    import aorc

    proxy = start_servers(args.latency_ms / 1000, args.in_process_server)
    try:
        set_environment(proxy.upstream)
        size = upload(proxy.upstream, args.files, args.rows)
        print(f"python {platform.python_version()}, pyarrow {pa.__version__}, "
              f"{os.cpu_count()} CPUs, best of {args.repeat}; {args.latency_ms:g} ms added "
              f"per request; {args.files} files x {args.rows:,} rows, {size / 2**20:.1f} MiB")
        print(f"{'':<22} {'aorc s':>8} {'reqs':>6} {'pyarrow s':>10} {'reqs':>6} "
              f"{'ratio':>8}")
        ratios = [compare("whole dataset", aorc, proxy, None, args.repeat),
                  compare("country == DE", aorc, proxy, [("country", "==", "DE")],
                          args.repeat)]
        verdict = "meets" if max(ratios) <= 0.2 else "misses"
        print(f"ratios {ratios[0]:.2f} / {ratios[1]:.2f}: {verdict} the target of 0.2")
    finally:
        proxy.stop()


if __name__ == "__main__":
    main()
