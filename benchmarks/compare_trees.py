"""Read speed and peak RSS of two aorc trees (e.g. before and after a change) and
pyarrow.orc, side by side, each measurement in a fresh subprocess, alternating.

``--write`` times ``write_table`` (zstd) instead, on the same tables; ``--level 1`` makes aorc
compress at pyarrow.orc's default zstd level (1; aorc's default is ORC Java's 3), in a tree
without ``compression_level`` too. On a busy machine the best of several alternating rounds
is the fairest comparison::

    python benchmarks/compare_trees.py --base /path/to/old/checkout [--rounds 3]
        [--tables events-zstd,numeric200] [--threads 1,2] [--filters JSON]

``--filters '[["small_int", "<", 500]]'`` times filtered reads (aorc's ``filters=``; for the
peer, ``pyarrow.dataset`` with the same filter, which reads the file whole).

Prints, per table: the best read time of pyarrow.orc, of the base tree and of this tree
(once per ``--threads`` value), the ratios to pyarrow.orc, the best process CPU time (all
threads; on a busy machine the fairer measure of one thread's work), and each one's peak RSS while
streaming the file with ``iter_batches`` (``VmHWM`` of the subprocess, Linux; for
pyarrow.orc, of reading the whole table).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import pyarrow as pa
import pyarrow.orc as pa_orc

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from fresh import run_python  # noqa: E402

CHILD = r"""
import asyncio, gc, json, sys, time
root, path, kind, threads, repeat, level, filters = sys.argv[1:8]
filters = json.loads(filters)


def peak_rss():
    # VmHWM: this process's peak since exec (ru_maxrss would include the parent's at fork)
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmHWM"))


sys.path.insert(0, root)
kw = {} if threads == "-" else {"use_threads": int(threads)}
read_kw = dict(kw, filters=[tuple(f) for f in filters]) if filters else kw
best = cpu = float("inf")
if kind.endswith("-write"):  # path: an Arrow IPC file holding the table to write
    import os, tempfile
    import pyarrow as pa
    table = pa.ipc.open_file(path).read_all()
    out = os.path.join(tempfile.mkdtemp(prefix="aorc-ab-w-"), "w.orc")
    if kind == "pyarrow-write":
        import pyarrow.orc as po
        write = lambda: po.write_table(table, out, compression="zstd")
    else:
        import aorc
        if level != "-":
            if "compression_level" in aorc.WriteOptions.names():
                kw["compression_level"] = int(level)
            else:  # a tree without the option: the same level through its codec table
                import dataclasses
                from aorc.format.codec import compression as C
                C.CODECS = tuple(dataclasses.replace(c, levels=(int(level),) * 3)
                                 if c.name == "zstd" else c for c in C.CODECS)
                C._BY_KIND = {c.kind: c for c in C.CODECS}
        write = lambda: asyncio.run(aorc.write_table(table, out, compression="zstd", **kw))
    for _ in range(int(repeat)):
        gc.collect(); t = time.perf_counter(); c = time.process_time()
        write()
        best = min(best, time.perf_counter() - t); cpu = min(cpu, time.process_time() - c)
    rss = peak_rss()
elif kind == "pyarrow":
    import pyarrow.orc as po
    if filters:  # pyarrow.dataset reads ORC files whole and filters the rows
        import pyarrow.dataset as ds, pyarrow.parquet as pq
        expression = pq.filters_to_expression([tuple(f) for f in filters])
        read = lambda: ds.dataset(path, format="orc").to_table(filter=expression)
    else:
        read = lambda: po.read_table(path)
    for _ in range(int(repeat)):
        gc.collect(); t = time.perf_counter(); c = time.process_time()
        read()
        best = min(best, time.perf_counter() - t); cpu = min(cpu, time.process_time() - c)
    rss = peak_rss()
else:
    import aorc
    async def stream():
        async with aorc.open_reader(path) as r:
            async for _ in r.iter_batches(**read_kw):
                pass
    asyncio.run(stream())
    rss = peak_rss()
    for _ in range(int(repeat)):
        gc.collect(); t = time.perf_counter(); c = time.process_time()
        asyncio.run(aorc.read_table(path, **read_kw))
        best = min(best, time.perf_counter() - t); cpu = min(cpu, time.process_time() - c)
print(json.dumps({"time": best, "cpu": cpu, "rss_mib": rss / 1024}))
"""


def measure(root: str, path: Path, kind: str, threads: str, repeat: int,
            level: str = "-", filters: str = "[]") -> dict[str, float]:
    """One subprocess: best read time of ``repeat`` and peak RSS of a streaming read."""
    return run_python(["-c", CHILD, root, str(path), kind, threads, str(repeat), level,
                       filters], Path(root))


def main(argv: list[str] | None = None) -> None:
    """Parse the command line and run the comparison."""
    from bench_read import _specs

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", required=True, help="the other checkout (its root)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--threads", default="1,2",
                        help="use_threads values for this tree (the base gets none)")
    parser.add_argument("--tables",
                        default="events-zstd,events-uncompressed,numeric200,strings,nested,"
                                "temporal")
    parser.add_argument("--write", action="store_true",
                        help="time writing (zstd) instead of reading")
    parser.add_argument("--level", default="-",
                        help="with --write: aorc's zstd level, e.g. 1 as pyarrow.orc's default "
                             "(default '-': each tree's default, ORC Java's 3)")
    parser.add_argument("--filters", default="[]",
                        help="reads only: aorc's filters= as JSON, e.g. "
                             "'[[\"small_int\", \"<\", 500]]'; pyarrow then reads with "
                             "pyarrow.dataset and the same filter")
    args = parser.parse_args(argv)
    if args.write and args.filters != "[]":
        parser.error("--filters is for reads")
    here = str(HERE.parent)
    suffix = "-write" if args.write else ""
    configs = [("pyarrow", "pyarrow" + suffix, here, "-"),
               ("base", "aorc" + suffix, args.base, "-")]
    configs += [(f"this t={t}", "aorc" + suffix, here, t) for t in args.threads.split(",")]
    with tempfile.TemporaryDirectory(prefix="aorc-ab-") as folder:
        for label, build, codec in _specs(args.tables.split(","), None):
            path = Path(folder) / ("t.arrow" if args.write else "t.orc")
            if args.write:
                table = build()
                with pa.ipc.new_file(path, table.schema) as sink:
                    sink.write_table(table)
            else:
                pa_orc.write_table(build(), path, compression=codec)
            best: dict[str, dict[str, float]] = {}
            for _ in range(args.rounds):
                for name, kind, root, threads in configs:
                    got = measure(root, path, kind, threads, args.repeat, args.level,
                                  args.filters)
                    old = best.setdefault(name, got)
                    old["time"] = min(old["time"], got["time"])
                    old["cpu"] = min(old["cpu"], got["cpu"])
                    old["rss_mib"] = min(old["rss_mib"], got["rss_mib"])
            base_pa = best["pyarrow"]["time"]
            print(f"== {label} {codec}")
            for name, got in best.items():
                print(f"  {name:<12} {got['time']:7.3f} s  {got['time'] / base_pa:5.2f}x "
                      f"pyarrow  CPU {got['cpu']:7.3f} s  peak RSS {got['rss_mib']:6.0f} MiB",
                      flush=True)


if __name__ == "__main__":
    main()
