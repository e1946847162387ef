"""Datasets of many small files: aorc against pyarrow.dataset, local and on S3 with latency.

Generates Hive datasets of ``--files`` small ORC files (100 rows each: ``id`` int64, ``x``
float64, ``s`` string; written by pyarrow.orc) in 100 partitions ``p=0..99``, once, into
``--cache`` (default ``/tmp/aorc_bench_scale``; reused by later runs). Each case runs in a
fresh child process (its peak RSS, VmHWM, is measured above the RSS after imports), timed
inside the child, ``--repeat`` times (best and median):

- ``list``: aorc's listing alone (``aorc.io.list_files``), the baseline of the RSS target;
- ``open``: ``aorc.open_dataset(root, schema_from=...)`` (``"first"``: one tail, as
  pyarrow infers the schema; ``"all"``: every tail) against ``pyarrow.dataset.dataset``;
- ``partition``: one partition's ``x`` (``read_dataset(root, columns=["x"], filters=[("p",
  "==", 7)])`` against ``dataset(...).to_table(columns=["x"], filter=p == 7)``);
- ``whole``: every file's ``x`` (``read_dataset(root, columns=["x"])`` against
  ``dataset(...).to_table(columns=["x"])``); both include their listing;
- ``open_read``: what a user runs, ``open_dataset(root)`` (every tail, the default) and then
  ``Dataset.read(columns=["x"])`` against ``dataset(...)`` and then ``to_table(columns=["x"])``
  in one process: the total, and below it each phase (``open``, with the peak RSS growth at
  its end, and ``read``).

Below each case: ``cpu``, the process's CPU time (user + system, all threads) of the case,
and for ``open_read`` that of each phase. On a loaded machine the wall times favour the
reader with more runnable threads (the scheduler shares the cores by thread; pyarrow's C++
reads on several); the CPU times say what each reader costs whatever the load.

Requests: locally the folders listed (``os.scandir`` calls) and the files read (``open``,
``os.open``) by aorc (pyarrow's C++ I/O is not counted); on S3 (``--s3-files``, moto behind the
delaying proxy of ``bench_s3.py``, ``--latency-ms`` per request, default 20; the objects
are the local dataset of that many files, generated into ``--cache`` once and put straight
into moto's backend, so 20,000 take seconds) LIST and GET requests of both, from the
proxy's log. Targets: whole read <= 1.0x pyarrow locally and
<= 0.2x on S3; a one-partition read lists only that partition; RSS of ``open`` of 100,000
files at most 100 MiB above the listing's.

Usage::

    python benchmarks/bench_dataset_scale.py [--files 10000 100000] [--s3-files 20000]
                                             [--repeat 3] [--latency-ms 20] [--cases ...]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

PARTS = 100
ROWS = 100
BUCKET = "bench"

CHILD = r'''
import asyncio, builtins, json, os, resource, sys, time
sys.path.insert(0, sys.argv[5])

def cpu():
    use = resource.getrusage(resource.RUSAGE_SELF)
    return use.ru_utime + use.ru_stime

def rss(field):
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(field):
                return int(line.split()[1]) * 1024
    return 0

case, who, root, options = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
import pyarrow as pa, pyarrow.compute as pc, pyarrow.dataset as pads
import aorc
from aorc.io import list_files
lists, opens = [0], [0]
if not options:
    real_scandir, real_open, real_os_open = os.scandir, builtins.open, os.open
    def scandir(path="."):
        lists[0] += 1
        return real_scandir(path)
    def opened(file, *a, **k):
        if isinstance(file, str) and file.startswith(root):
            opens[0] += 1
        return real_open(file, *a, **k)
    def os_opened(file, *a, **k):
        if isinstance(file, str) and file.startswith(root):
            opens[0] += 1
        return real_os_open(file, *a, **k)
    os.scandir, builtins.open, os.open = scandir, opened, os_opened

def pyarrow_dataset():
    if not options:
        return pads.dataset(root, format="orc", partitioning="hive")
    from pyarrow import fs
    s3 = fs.S3FileSystem(endpoint_override=options["endpoint_url"], scheme="http",
                         access_key="bench", secret_key="bench", region="us-east-1")
    return pads.dataset(root.removeprefix("s3://"), format="orc", partitioning="hive",
                        filesystem=s3)

so = options or None
extra = {"max_open_files": 64} if options else {}
phases = {}
async def run():
    if case == "list":
        return len(await list_files(root, so))
    if case == "open_read":
        t0, c0 = time.perf_counter(), cpu()
        ds = await aorc.open_dataset(root, storage_options=so, **extra)
        phases["open"] = time.perf_counter() - t0
        phases["open_cpu"] = cpu() - c0
        phases["open_rss"] = rss("VmHWM") - base
        t1, c1 = time.perf_counter(), cpu()
        n = (await ds.read(columns=["x"])).num_rows
        phases["read"] = time.perf_counter() - t1
        phases["read_cpu"] = cpu() - c1
        return n
    if case.startswith("open"):
        ds = await aorc.open_dataset(root, storage_options=so, schema_from=case[5:], **extra)
        return len(ds.files)
    filters = [("p", "==", 7)] if case == "partition" else None
    return (await aorc.read_dataset(root, columns=["x"], filters=filters,
                                    storage_options=so, **extra)).num_rows

def run_pyarrow():
    t0, c0 = time.perf_counter(), cpu()
    ds = pyarrow_dataset()
    phases["open"] = time.perf_counter() - t0
    phases["open_cpu"] = cpu() - c0
    phases["open_rss"] = rss("VmHWM") - base
    if case.startswith("open") and case != "open_read":
        return len(ds.files)
    t1, c1 = time.perf_counter(), cpu()
    if case == "open_read":
        n = ds.to_table(columns=["x"]).num_rows
        phases["read"] = time.perf_counter() - t1
        phases["read_cpu"] = cpu() - c1
        return n
    expr = pc.field("p") == 7 if case == "partition" else None
    return ds.to_table(columns=["x"], filter=expr).num_rows

base = rss("VmRSS")
start, start_cpu = time.perf_counter(), cpu()
n = asyncio.run(run()) if who == "aorc" else run_pyarrow()
took = time.perf_counter() - start
phases["cpu"] = cpu() - start_cpu
print(json.dumps({"time": took, "n": n, "rss": rss("VmHWM") - base, "lists": lists[0],
                  "opens": opens[0], **phases}))
'''


def table(i: int) -> Any:
    import numpy as np
    import pyarrow as pa

    return pa.table({"id": pa.array(np.arange(i * ROWS, (i + 1) * ROWS, dtype=np.int64)),
                     "x": pa.array(np.random.default_rng(i).normal(size=ROWS)),
                     "s": pa.array([f"v{j % 7}" for j in range(ROWS)])})


def generate(root: Path, files: int) -> None:
    """The dataset of ``files`` files under ``root``, written once (``.done`` marks it)."""
    import pyarrow.orc as pa_orc

    if (root / ".done").exists():
        return
    for i in range(files):
        folder = root / f"p={i % PARTS}"
        folder.mkdir(parents=True, exist_ok=True)
        pa_orc.write_table(table(i), str(folder / f"part-{i:06d}.orc"))
    (root / ".done").touch()


def upload(proxy: Any, prefix: str, files: int, cache: str) -> None:
    """The ``files`` files of the local dataset (generated once into ``cache``, as the
    local runs) put into moto under ``prefix/`` straight through its backend in the server's
    process (:meth:`s3_server.ServerProcess.load`): 20,000 objects in seconds."""
    import boto3

    folder = Path(cache) / f"files{files}"
    generate(folder, files)
    boto3.client("s3", endpoint_url=proxy.upstream).create_bucket(Bucket=BUCKET)
    loaded = proxy.load(BUCKET, prefix, str(folder))
    if loaded != files:
        sys.exit(f"bench_dataset_scale: {loaded} objects loaded from {folder}, not {files}")


def child(case: str, who: str, root: str, options: dict[str, Any]) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", CHILD, case, who, root, json.dumps(options),
                          str(ROOT)], capture_output=True, text=True, env=env, check=False)
    if out.returncode:
        sys.exit(f"bench_dataset_scale: {case}/{who} failed:\n{out.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def run_case(case: str, who: str, root: str, options: dict[str, Any], repeat: int,
             proxy: Any = None) -> dict[str, Any]:
    runs = []
    for _ in range(repeat):
        if proxy is not None:
            proxy.log.clear()
        got = child(case, who, root, options)
        if proxy is not None:
            ops = [r.operation for r in proxy.log]
            got["lists"] = ops.count("GET bucket")
            got["opens"] = ops.count("GetObject") + ops.count("HeadObject")
        runs.append(got)
    times = [r["time"] for r in runs]
    out = {"best": min(times), "median": statistics.median(times), "n": runs[0]["n"],
           "rss": max(r["rss"] for r in runs), "lists": runs[-1]["lists"],
           "opens": runs[-1]["opens"], "samples": times}
    for phase in ("open", "read", "cpu", "open_cpu", "read_cpu"):
        if all(phase in r for r in runs):
            got = [r[phase] for r in runs]
            out[phase] = {"best": min(got), "median": statistics.median(got), "samples": got}
    if all("open_rss" in r for r in runs):
        out["open_rss"] = max(r["open_rss"] for r in runs)
    return out


CASES = ("open_first", "open_all", "partition", "whole", "open_read")


def report(label: str, files: int, root: str, options: dict[str, Any], repeat: int,
           proxy: Any = None, cases: tuple[str, ...] = CASES) -> list[dict[str, Any]]:
    rows = []
    counted = proxy is not None
    print(f"\n{label}: {files:,} files x {ROWS} rows, best/median of {repeat}")
    print(f"{'case':<12} {'aorc s':>15} {'pyarrow s':>15} {'ratio':>11} {'LIST':>11} "
          f"{'GET':>13} {'RSS MiB':>11}")
    listing = run_case("list", "aorc", root, options, repeat, proxy)
    print(f"{'list':<12} {listing['best']:>7.3f}/{listing['median']:<7.3f} {'':>15} {'':>11} "
          f"{listing['lists']:>5}/{'-':<5} {'':>13} {listing['rss'] / 2**20:>5.0f}/{'-':<5}")
    for case in cases:
        peer = "open_first" if case == "open_all" else case
        a = run_case(case, "aorc", root, options, repeat, proxy)
        p = run_case(peer, "pyarrow", root, options, repeat, proxy)
        if a["n"] != p["n"]:
            sys.exit(f"bench_dataset_scale: {case}: aorc found {a['n']}, pyarrow {p['n']}")
        pl = str(p["lists"]) if counted else "-"
        pg = str(p["opens"]) if counted else "-"
        print(f"{case:<12} {a['best']:>7.3f}/{a['median']:<7.3f} {p['best']:>7.3f}/"
              f"{p['median']:<7.3f} {a['best'] / p['best']:>5.2f}/"
              f"{a['median'] / p['median']:<5.2f} {a['lists']:>5}/{pl:<5} {a['opens']:>6}/"
              f"{pg:<6} {a['rss'] / 2**20:>5.0f}/{p['rss'] / 2**20:<5.0f}", flush=True)
        for phase in ("open", "read", "cpu", "open_cpu", "read_cpu"):
            if phase in a and phase in p:
                ap, pp = a[phase], p[phase]
                rss_text = (f"{a['open_rss'] / 2**20:>5.0f}/{p['open_rss'] / 2**20:<5.0f}"
                            if phase == "open" else "")
                print(f"{'  ' + phase:<12} {ap['best']:>7.3f}/{ap['median']:<7.3f} "
                      f"{pp['best']:>7.3f}/{pp['median']:<7.3f} "
                      f"{ap['best'] / pp['best']:>5.2f}/{ap['median'] / pp['median']:<5.2f} "
                      f"{'':>11} {'':>13} {rss_text}", flush=True)
        rows.append({"label": label, "files": files, "case": case, "aorc": a, "pyarrow": p,
                     "list": listing})
    return rows


def main(argv: list[str] | None = None) -> None:
    """Parse the command line and run the benchmark."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--files", type=int, nargs="*", default=[10_000, 100_000])
    parser.add_argument("--s3-files", type=int, default=20_000, help="0: no S3 run")
    parser.add_argument("--latency-ms", type=float, default=20.0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--cache", default="/tmp/aorc_bench_scale")
    parser.add_argument("--json", help="write the results here")
    parser.add_argument("--cases", nargs="*", default=list(CASES), choices=CASES)
    args = parser.parse_args(argv)
    results = []
    for files in args.files:
        root = Path(args.cache) / f"files{files}"
        generate(root, files)
        results += report("local", files, str(root), {}, args.repeat,
                          cases=tuple(args.cases))
    if args.s3_files:
        from bench_s3 import set_environment, start_servers

        proxy = start_servers(args.latency_ms / 1000)
        try:
            set_environment(proxy.upstream)
            upload(proxy, "scale", args.s3_files, args.cache)
            results += report(f"S3 +{args.latency_ms:g} ms", args.s3_files,
                              f"s3://{BUCKET}/scale", {"endpoint_url": proxy.url,
                                                       "max_pool_connections": 64},
                              args.repeat, proxy, tuple(args.cases))
        finally:
            proxy.stop()
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
