"""Distributed engines over ORC: aorc's front ends against each engine's own ``read_orc``.

::

    python benchmarks/bench_distributed.py [--rows 1000000] [--files 20] [--repeat 3]
                                           [--engines dask,ray,daft] [--json PATH]

Run it in the engines' environment (``nox -s engines`` makes one; the main environment has
none of Ray, Dask and Daft), with this tree first on ``PYTHONPATH``.

Data: the events table (7 columns: ``id`` sorted, ``user`` with bloom filters, ``amount``,
``kind``, ``ok``, ``ts``, ``day``), ``--rows`` rows as ``--files`` ORC files of about 4
stripes each, written by aorc (zstd) into a temporary folder. Queries, each timed
``--repeat`` times per route (best and median printed, ratio aorc / built-in):

- (a) a whole scan of 3 of the 7 columns;
- (b) a selective filter on the sorted column (0.5% of the rows: statistics prune stripes);
- (c) a point lookup of one ``user`` (bloom filters prune row groups);
- (w) a write of the table (3 columns) as ORC files, uncompressed on both sides (the
  built-ins' default); (wz) the same with zstd at level 1 on both sides (pyarrow's zstd
  level; aorc's default is ORC Java's level 3, which costs more time for smaller files).
  Dask's built-in writes uncompressed only (its engine takes no ORC options): no (wz) there.

Engines: Dask (a LocalCluster of 2 worker processes; built-in ``dd.read_orc`` /
``dd.to_orc`` on pyarrow), Ray (``ray.init(num_cpus=2)``; built-in ``ray.data.read_orc`` /
``Dataset.write_orc``), Daft (native runner; Daft 0.7 has no ORC reader, so aorc's front end
is timed against pyarrow.dataset reading the same files in the driver, and against what a
Daft user does without aorc: pyarrow.dataset's table handed to ``daft.from_arrow`` and
queried in Daft). The built-ins get
the same filters applied after their reads (they cannot push them down).

With ``--s3`` (on by default; ``--no-s3`` to skip), (b) and (c) again with the same files on
moto's S3 behind a proxy adding ``--latency-ms`` (20) to every request (``s3_server.py``: both
in a child process), the built-ins reading through pyarrow's ``S3FileSystem``, aorc through
its own S3 store; per route the time (best / median), and the GET requests and bytes of one
run as the proxy saw them. Dask's built-in reads S3 through s3fs only, which the engines'
environment lacks: Dask's S3 rows time aorc alone.
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.dataset as pads

import aorc

COLUMNS = ["id", "user", "amount"]


def events(start: int, n: int, seed: int) -> pa.Table:
    """``n`` events with ids from ``start`` (sorted)."""
    rng = np.random.default_rng(seed)
    return pa.table({
        "id": pa.array(np.arange(start, start + n), pa.int64()),
        "user": pa.array([f"u{int(x):06d}" for x in rng.integers(0, 200_000, n)]),
        "amount": pa.array(rng.normal(100, 30, n).round(2)),
        "kind": pa.array(rng.choice(["view", "click", "buy"], n).tolist()),
        "ok": pa.array(rng.random(n) < 0.9),
        "ts": pa.array((np.int64(1_717_200_000_000_000) + np.arange(n) * 1_000_000)
                       .astype("datetime64[us]")),
        "day": pa.array((np.arange(start, start + n) // 100_000).astype(np.int32)),
    })


def build(root: Path, rows: int, files: int) -> tuple[list[str], str]:
    """The files, and a user that occurs in the data (the point lookup's key)."""
    per = rows // files
    paths = []
    for i in range(files):
        t = events(i * per, per, seed=i)
        size = t.nbytes // 4 // 3  # about 4 stripes (zstd shrinks about 3x)
        path = root / f"part-{i:03d}.orc"
        aorc.sync.write_table(t.to_batches(max_chunksize=max(1, per // 8)), path,
                              compression="zstd", stripe_size=max(64 * 1024, size),
                              bloom_filter_columns=("user",))
        paths.append(str(path))
    probe = events(7 * per, per, seed=7).column("user")[per // 2].as_py()
    return paths, probe


def timed(fn: Callable[[], int], repeat: int) -> dict[str, Any]:
    fn()  # warm-up
    times, rows = [], 0
    for _ in range(repeat):
        t0 = time.perf_counter()
        rows = fn()
        times.append(time.perf_counter() - t0)
    return {"best": min(times), "median": statistics.median(times), "rows": rows}


def dask_routes(paths: list[str], root: Path, lo: int, hi: int, probe: str,
                out: Path) -> dict[str, Callable[[], int]]:
    import dask.dataframe as dd
    import pandas as pd

    import aorc.dask

    cols = COLUMNS

    def builtin_a() -> int:
        return len(dd.read_orc(paths, columns=cols).compute())

    def aorc_a() -> int:
        return len(aorc.dask.read_orc(paths, columns=cols).compute())

    def builtin_b() -> int:
        df = dd.read_orc(paths, columns=cols)
        return len(df[(df.id >= lo) & (df.id < hi)].compute())

    def aorc_b() -> int:
        return len(aorc.dask.read_orc(paths, columns=cols,
                                      filters=[("id", ">=", lo), ("id", "<", hi)]).compute())

    def builtin_c() -> int:
        df = dd.read_orc(paths, columns=cols)
        return len(df[df.user == probe].compute())

    def aorc_c() -> int:
        return len(aorc.dask.read_orc(paths, columns=cols,
                                      filters=[("user", "==", probe)]).compute())

    frame = dd.from_pandas(pd.concat([pads.dataset(paths, format="orc").to_table(
        columns=cols).to_pandas()]), npartitions=8).persist()
    counter = iter(range(1_000_000))

    def builtin_w() -> int:
        dd.to_orc(frame, str(out / f"dask-builtin-{next(counter)}"), write_index=False)
        return len(frame)

    def aorc_w() -> int:  # uncompressed, as the built-in's default
        return len(aorc.dask.to_orc(frame, out / f"dask-aorc-{next(counter)}",
                                    compression="none"))

    return {"a builtin": builtin_a, "a aorc": aorc_a, "b builtin": builtin_b,
            "b aorc": aorc_b, "c builtin": builtin_c, "c aorc": aorc_c,
            "w builtin": builtin_w, "w aorc": aorc_w}


def ray_routes(paths: list[str], root: Path, lo: int, hi: int, probe: str,
               out: Path) -> dict[str, Callable[[], int]]:
    import ray.data
    from ray.data.expressions import col

    import aorc.ray

    cols = COLUMNS

    def builtin_a() -> int:
        return ray.data.read_orc(paths).select_columns(cols).materialize().count()

    def aorc_a() -> int:
        return aorc.ray.read_orc(paths).select_columns(cols).materialize().count()

    def builtin_b() -> int:
        ds = ray.data.read_orc(paths).select_columns(cols)
        return ds.filter(expr=(col("id") >= lo) & (col("id") < hi)).materialize().count()

    def aorc_b() -> int:
        ds = aorc.ray.read_orc(paths).select_columns(cols)
        return ds.filter(expr=(col("id") >= lo) & (col("id") < hi)).materialize().count()

    def builtin_c() -> int:
        ds = ray.data.read_orc(paths).select_columns(cols)
        return ds.filter(expr=col("user") == probe).materialize().count()

    def aorc_c() -> int:
        ds = aorc.ray.read_orc(paths).select_columns(cols)
        return ds.filter(expr=col("user") == probe).materialize().count()

    data = ray.data.from_arrow(pads.dataset(paths, format="orc").to_table(columns=cols)
                               ).repartition(8).materialize()
    counter = iter(range(1_000_000))

    def builtin_w() -> int:
        data.write_orc(str(out / f"ray-builtin-{next(counter)}"))
        return data.count()

    def builtin_wz() -> int:  # like for like: zstd, as aorc writes
        data.write_orc(str(out / f"ray-builtin-{next(counter)}"), compression="zstd")
        return data.count()

    def aorc_w() -> int:  # uncompressed, as the built-in's default
        return len(aorc.ray.write_orc(data, out / f"ray-aorc-{next(counter)}",
                                      compression="none"))

    def aorc_wz() -> int:  # zstd at pyarrow's level (1; aorc's default is ORC Java's 3)
        return len(aorc.ray.write_orc(data, out / f"ray-aorc-{next(counter)}",
                                      compression="zstd", compression_level=1))

    return {"a builtin": builtin_a, "a aorc": aorc_a, "b builtin": builtin_b,
            "b aorc": aorc_b, "c builtin": builtin_c, "c aorc": aorc_c,
            "w builtin": builtin_w, "w aorc": aorc_w, "wz builtin": builtin_wz,
            "wz aorc": aorc_wz}


def daft_routes(paths: list[str], root: Path, lo: int, hi: int, probe: str,
                out: Path) -> dict[str, Callable[[], int]]:
    import daft

    import aorc.daft

    cols = COLUMNS

    def ref(expr: Any = None) -> int:
        return pads.dataset(paths, format="orc").to_table(columns=cols, filter=expr).num_rows

    def aorc_a() -> int:
        return len(aorc.daft.read_orc(paths).select(*cols).to_arrow())

    def aorc_b() -> int:
        df = aorc.daft.read_orc(paths)
        return len(df.where((df["id"] >= lo) & (df["id"] < hi)).select(*cols).to_arrow())

    def aorc_c() -> int:
        df = aorc.daft.read_orc(paths)
        return len(df.where(df["user"] == probe).select(*cols).to_arrow())

    def via_a() -> int:  # what a Daft user does without aorc: pyarrow reads, Daft queries
        return len(daft.from_arrow(pads.dataset(paths, format="orc").to_table(columns=cols))
                   .to_arrow())

    def via_b() -> int:
        df = daft.from_arrow(pads.dataset(paths, format="orc").to_table(columns=cols))
        return len(df.where((df["id"] >= lo) & (df["id"] < hi)).to_arrow())

    def via_c() -> int:
        df = daft.from_arrow(pads.dataset(paths, format="orc").to_table(columns=cols))
        return len(df.where(df["user"] == probe).to_arrow())

    return {"a builtin": ref, "a aorc": aorc_a, "a via": via_a,
            "b builtin": lambda: ref((pads.field("id") >= lo) & (pads.field("id") < hi)),
            "b aorc": aorc_b, "b via": via_b,
            "c builtin": lambda: ref(pads.field("user") == probe), "c aorc": aorc_c,
            "c via": via_c}


class S3:
    """The files on moto's S3 behind the delaying proxy, and how each side reaches them."""

    def __init__(self, root: Path, paths: list[str], latency: float) -> None:
        import sys

        import boto3
        from pyarrow import fs

        here = Path(__file__).resolve().parent
        # s3_server, and the tests' helpers its child process imports (spawned: it gets
        # this sys.path)
        sys.path[:0] = [str(here), str(here.parent / "tests")]
        from s3_server import ServerProcess

        self.server = ServerProcess(latency).start()
        client = boto3.client("s3", endpoint_url=self.server.upstream, aws_access_key_id="bench",
                              aws_secret_access_key="bench", region_name="us-east-1")
        client.create_bucket(Bucket="bench")
        client.close()
        self.server.load("bench", "events", str(root))
        names = [Path(p).name for p in paths]
        self.uris = [f"s3://bench/events/{n}" for n in names]
        self.keys = [f"bench/events/{n}" for n in names]  # (pyarrow's S3 paths)
        self.options = {"endpoint_url": self.server.url, "key": "bench", "secret": "bench",
                        "region": "us-east-1"}
        self.fs = fs.S3FileSystem(endpoint_override=self.server.url, scheme="http",
                                  access_key="bench", secret_key="bench", region="us-east-1")

    def traffic(self, fn: Callable[[], int]) -> tuple[int, int]:
        """The GET requests and bytes of one run of ``fn`` (a ranged GET counts its range;
        a suffix range its length)."""
        self.server.log.clear()
        fn()
        gets, nbytes = 0, 0
        for record in self.server.log:
            if record.operation != "GetObject":
                continue
            gets += 1
            spec = (record.range or "").removeprefix("bytes=")
            first, _, last = spec.partition("-")
            if first and last:
                nbytes += int(last) - int(first) + 1
            elif last:
                nbytes += int(last)
        return gets, nbytes

    def stop(self) -> None:
        self.server.stop()


def s3_routes(engine: str, s3: S3, lo: int, hi: int, probe: str
              ) -> dict[str, Callable[[], int]]:
    """(b) and (c) on S3 for ``engine``: its built-in (pyarrow's S3 filesystem) and aorc."""
    cols = COLUMNS
    sorted_filter = [("id", ">=", lo), ("id", "<", hi)]
    lookup = [("user", "==", probe)]
    routes: dict[str, Callable[[], int]] = {}
    if engine == "ray":
        import ray.data
        from ray.data.expressions import col

        import aorc.ray

        def ray_builtin(expr: Any) -> Callable[[], int]:
            return lambda: ray.data.read_orc(s3.keys, filesystem=s3.fs).select_columns(
                cols).filter(expr=expr).materialize().count()

        def ray_aorc(expr: Any) -> Callable[[], int]:
            return lambda: aorc.ray.read_orc(s3.uris, storage_options=s3.options
                                             ).select_columns(cols).filter(
                                                 expr=expr).materialize().count()

        b, c = (col("id") >= lo) & (col("id") < hi), col("user") == probe
        routes = {"b builtin": ray_builtin(b), "b aorc": ray_aorc(b),
                  "c builtin": ray_builtin(c), "c aorc": ray_aorc(c)}
    elif engine == "dask":
        import aorc.dask

        routes = {
            "b aorc": lambda: len(aorc.dask.read_orc(s3.uris, columns=cols, filters=sorted_filter,
                                                     storage_options=s3.options).compute()),
            "c aorc": lambda: len(aorc.dask.read_orc(s3.uris, columns=cols, filters=lookup,
                                                     storage_options=s3.options).compute())}
    elif engine == "daft":
        import aorc.daft

        def ref(expr: Any) -> Callable[[], int]:
            return lambda: pads.dataset(s3.keys, format="orc", filesystem=s3.fs).to_table(
                columns=cols, filter=expr).num_rows

        def daft_b() -> int:
            df = aorc.daft.read_orc(s3.uris, storage_options=s3.options)
            return len(df.where((df["id"] >= lo) & (df["id"] < hi)).select(*cols).to_arrow())

        def daft_c() -> int:
            df = aorc.daft.read_orc(s3.uris, storage_options=s3.options)
            return len(df.where(df["user"] == probe).select(*cols).to_arrow())

        routes = {"b builtin": ref((pads.field("id") >= lo) & (pads.field("id") < hi)),
                  "b aorc": daft_b, "c builtin": ref(pads.field("user") == probe),
                  "c aorc": daft_c}
    return routes


def wanted(route: str, cases: str) -> bool:
    """Whether ``--cases`` keeps the route named ``"<case> <side>"`` (empty: every one)."""
    return not cases or route.split(" ", 1)[0] in cases.split(",")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--files", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--engines", default="dask,ray,daft")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--s3", action=argparse.BooleanOptionalAction, default=True,
                        help="(b) and (c) on moto's S3 too (default on)")
    parser.add_argument("--latency-ms", type=float, default=20.0)
    parser.add_argument("--cases", default="",
                        help="only these cases, comma-separated (a,b,c,w,wz; default all)")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    logging.disable(logging.WARNING)
    report: dict[str, Any] = {"rows": args.rows, "files": args.files, "results": {}}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "events"
        root.mkdir()
        paths, probe = build(root, args.rows, args.files)
        with aorc.sync.open_reader(paths[0]) as reader:
            print(f"{args.rows} rows, {args.files} files of {len(reader.stripes)} stripes")
        lo = args.rows // 2
        hi = lo + args.rows // 200
        s3 = S3(root, paths, args.latency_ms / 1000) if args.s3 else None
        try:
            for engine in args.engines.split(","):
                cluster = start(engine)
                try:
                    routes = {"dask": dask_routes, "ray": ray_routes,
                              "daft": daft_routes}[engine](paths, root, lo, hi, probe,
                                                           Path(tmp))
                    results = {name: timed(fn, args.repeat) for name, fn in routes.items()
                               if wanted(name, args.cases)}
                    on_s3 = {}
                    if s3 is not None:
                        for name, fn in s3_routes(engine, s3, lo, hi, probe).items():
                            if not wanted(name, args.cases):
                                continue
                            on_s3[name] = timed(fn, args.repeat)
                            on_s3[name]["gets"], on_s3[name]["bytes"] = s3.traffic(fn)
                finally:
                    stop(engine, cluster)
                report["results"][engine] = results
                print_engine(engine, results)
                if on_s3:
                    report["results"][f"{engine} s3"] = on_s3
                    print_s3(engine, on_s3, args.latency_ms)
        finally:
            if s3 is not None:
                s3.stop()
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))


def start(engine: str) -> Any:
    if engine == "dask":
        from distributed import Client, LocalCluster

        cluster = LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None,
                               silence_logs=logging.ERROR)
        return (cluster, Client(cluster))
    if engine == "ray":
        import ray
        import ray.data

        ray.init(num_cpus=2, include_dashboard=False, logging_level=logging.ERROR,
                 log_to_driver=False)
        ray.data.DataContext.get_current().enable_progress_bars = False
    return None


def stop(engine: str, handle: Any) -> None:
    if engine == "dask":
        handle[1].close()
        handle[0].close()
    if engine == "ray":
        import ray

        ray.shutdown()


def print_engine(engine: str, results: dict[str, dict[str, Any]]) -> None:
    builtin = "pyarrow.dataset" if engine == "daft" else "built-in"
    print(f"\n{engine}: seconds (best / median), aorc / {builtin}")
    for query in ("a", "b", "c", "w", "wz"):
        b, a = results.get(f"{query} builtin"), results.get(f"{query} aorc")
        if a is None or b is None:
            continue
        print(f"  ({query}) {builtin} {b['best']:.3f} / {b['median']:.3f}   aorc "
              f"{a['best']:.3f} / {a['median']:.3f}   ratio {a['best'] / b['best']:.2f}x / "
              f"{a['median'] / b['median']:.2f}x   rows {b['rows']} / {a['rows']}")
        via = results.get(f"{query} via")
        if via is not None:
            print(f"      pyarrow.dataset into Daft {via['best']:.3f} / {via['median']:.3f}"
                  f"   ratio {a['best'] / via['best']:.2f}x / {a['median'] / via['median']:.2f}x"
                  f"   rows {via['rows']}")


def print_s3(engine: str, results: dict[str, dict[str, Any]], latency_ms: float) -> None:
    builtin = "pyarrow.dataset" if engine == "daft" else "built-in"
    print(f"\n{engine} on S3 (+{latency_ms:g} ms): seconds (best / median), GETs, bytes")
    for query in ("b", "c"):
        b, a = results.get(f"{query} builtin"), results.get(f"{query} aorc")
        if a is None:
            continue
        line = (f"  ({query}) aorc {a['best']:.3f} / {a['median']:.3f}, {a['gets']} GETs, "
                f"{a['bytes']} B")
        if b is not None:
            line += (f"   {builtin} {b['best']:.3f} / {b['median']:.3f}, {b['gets']} GETs, "
                     f"{b['bytes']} B   ratio {a['best'] / b['best']:.2f}x / "
                     f"{a['median'] / b['median']:.2f}x   rows {b['rows']} / {a['rows']}")
        print(line)


if __name__ == "__main__":
    main()
