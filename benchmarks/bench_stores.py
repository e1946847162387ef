"""Object-store read benchmark: aorc on S3 (aiobotocore and obstore engines), GCS and Azure,
each behind the same delaying proxy, against pyarrow's own filesystems for each store
(``S3FileSystem``, ``GcsFileSystem``, ``AzureFileSystem``); and the CPU one ranged GET costs
each client.

Stores: moto (S3), gcp-storage-emulator behind the tests' fidelity layer (GCS) and Azurite
(Azure), started with their proxies in a child process (``stores_server.py``). The benchmark
table of ``bench_read.py`` (``--rows``, default 2,000,000) is written once by pyarrow.orc in
stripes of 8 MiB with a bloom filter on ``id``, and a dataset of ``--files`` files (default
200) of ``--file-rows`` rows in Hive folders as ``bench_dataset.py`` makes it; both are
uploaded to every store. Then, through each store's proxy (``--latency-ms``, default 20):

- *whole file* and *two columns*: ``aorc.read_table`` vs pyarrow's ORC reader over the
  store's pyarrow filesystem;
- *point lookup*: ``id == N`` with aorc (open the file, read the matching rows, with a warm
  client): time, requests and sequential round trips (pyarrow has no ORC pushdown);
- *dataset*: ``aorc.read_dataset`` of the prefix vs ``pyarrow.dataset``.

Every aorc reader does its setup (client, listing) inside the timed call, in a new event
loop, as the pyarrow readers make a new filesystem. Times are the best and the median of
``--repeat`` runs; requests are counted by the proxy. The summary compares every store with
aorc on S3 (target: within 1.2x in requests and time) and with pyarrow (target: at most
0.1x pyarrow's time where pyarrow has the store).

CPU per request: ``--cpu-requests`` (default 400) ranged GETs of 64 KiB, 8 at a time, straight
to each store (no proxy, no latency), by aorc's stores and by the other candidate clients
(obstore's Azure store, azure-storage-blob's async client, gcsfs and adlfs when installed):
the process's CPU time (every thread's) per request. Results go to
``benchmarks/results/stores.json``.

Usage::

    python benchmarks/bench_stores.py [--rows N] [--files 200] [--file-rows 10000]
                                      [--latency-ms 20] [--repeat 3] [--cpu-requests 400]
                                      [--stores s3,s3-obstore,gs,az]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import io
import json
import os
import platform
import statistics
import sys
import tempfile
import time
import urllib.parse
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.dataset as pds
import pyarrow.orc as pa_orc

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_dataset import file_table  # noqa: E402
from bench_tables import build_table  # noqa: E402
from stores_server import StoresProcess  # noqa: E402

BUCKET = "bench"
KEY = "data.orc"
ACCOUNT = "devstoreaccount1"
AZ_KEY = ("Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/"
          "KBHBeksoGMGw==")
PROJECTION = ["id", "value"]
COUNTRIES = ["DE", "FR", "US", "BR"]
DAYS = [f"2024-01-0{d}" for d in range(1, 6)]


def _azure_cs(endpoint: str) -> str:
    return (f"DefaultEndpointsProtocol=http;AccountName={ACCOUNT};AccountKey={AZ_KEY};"
            f"BlobEndpoint={endpoint}/{ACCOUNT};")


# =========================================================================== setup

def upload(urls: dict[str, tuple[str, str]], data: bytes,
           files: list[tuple[str, bytes]]) -> None:
    """Put the file and the dataset into every store, straight to its upstream."""
    import boto3
    from azure.storage.blob import BlobServiceClient
    from helpers.store_fixtures import gcs_call, gcs_put

    s3 = boto3.client("s3", endpoint_url=urls["s3"][0], region_name="us-east-1",
                      aws_access_key_id="bench", aws_secret_access_key="bench")
    s3.create_bucket(Bucket=BUCKET)
    gcs = urls["gs"][0]
    gcs_call(gcs, "POST", "/storage/v1/b?project=bench", json.dumps({"name": BUCKET}).encode(),
             {"Content-Type": "application/json"})
    azure = BlobServiceClient.from_connection_string(_azure_cs(urls["az"][0]))
    container = azure.create_container(BUCKET)
    for key, body in [(KEY, data), *files]:
        s3.put_object(Bucket=BUCKET, Key=key, Body=body)
        gcs_put(gcs, BUCKET, key, body)
        container.upload_blob(key, body)
    s3.close()
    azure.close()


def dataset_files(count: int, rows: int) -> list[tuple[str, bytes]]:
    out = []
    for i in range(count):
        sink = io.BytesIO()
        pa_orc.write_table(file_table(rows, i), sink)
        country, day = COUNTRIES[i % 4], DAYS[(i // 4) % 5]
        out.append((f"events/country={country}/day={day}/part-{i:05d}.orc", sink.getvalue()))
    return out


# =========================================================================== readers

def aorc_options(store: str, urls: dict[str, tuple[str, str]]) -> dict[str, Any]:
    proxy = urls["s3" if store.startswith("s3") else store][1]
    if store == "s3":
        return {"endpoint_url": proxy}
    if store == "s3-obstore":
        return {"endpoint_url": proxy, "engine": "obstore"}
    if store == "gs":
        return {"endpoint_url": proxy, "token": "anon"}
    return {"connection_string": _azure_cs(proxy)}


def pyarrow_fs(store: str, urls: dict[str, tuple[str, str]]) -> Any:
    from pyarrow import fs

    proxy = urllib.parse.urlsplit(urls["s3" if store.startswith("s3") else store][1])
    if store.startswith("s3"):
        return fs.S3FileSystem(endpoint_override=proxy.geturl(), scheme="http",
                               access_key="bench", secret_key="bench", region="us-east-1")
    if store == "gs":
        return fs.GcsFileSystem(anonymous=True, scheme="http",
                                endpoint_override=proxy.netloc)
    return fs.AzureFileSystem(account_name=ACCOUNT, account_key=AZ_KEY,
                              blob_storage_authority=proxy.netloc, blob_storage_scheme="http",
                              dfs_storage_authority=proxy.netloc, dfs_storage_scheme="http")


def scheme(store: str) -> str:
    return {"gs": "gs", "az": "az"}.get(store, "s3")


def read_fns(store: str, urls: dict[str, tuple[str, str]], aorc: Any,
             columns: list[str] | None) -> dict[str, Callable[[], pa.Table]]:
    options = aorc_options(store, urls)

    def read_aorc() -> pa.Table:
        return asyncio.run(aorc.read_table(f"{scheme(store)}://{BUCKET}/{KEY}",
                                           columns=columns, storage_options=options))

    def read_pyarrow() -> pa.Table:
        with pyarrow_fs(store, urls).open_input_file(f"{BUCKET}/{KEY}") as f:
            return pa_orc.ORCFile(f).read(columns=columns)

    return {"aorc": read_aorc, "pyarrow": read_pyarrow}


def dataset_fns(store: str, urls: dict[str, tuple[str, str]],
                aorc: Any) -> dict[str, Callable[[], pa.Table]]:
    options = aorc_options(store, urls)

    def read_aorc() -> pa.Table:
        return asyncio.run(aorc.read_dataset(f"{scheme(store)}://{BUCKET}/events/",
                                             storage_options=options))

    def read_pyarrow() -> pa.Table:
        return pds.dataset(f"{BUCKET}/events", format="orc", partitioning="hive",
                           filesystem=pyarrow_fs(store, urls)).to_table()

    return {"aorc": read_aorc, "pyarrow": read_pyarrow}


def timed(fn: Callable[[], Any], servers: StoresProcess, store: str,
          repeat: int) -> dict[str, float]:
    times = []
    requests = 0
    for _ in range(repeat):
        gc.collect()
        servers.clear(store)
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
        requests = len(servers.log(store))
    return {"best": min(times), "median": statistics.median(times), "requests": requests}


def rounds(log: list[tuple[str, str, float, float]]) -> int:
    count, end = 0, -1.0
    for _, _, start, stop in sorted(log, key=lambda r: r[2]):
        if start >= end:
            count += 1
            end = stop
        else:
            end = max(end, stop)
    return count


def lookup(store: str, urls: dict[str, tuple[str, str]], aorc: Any, servers: StoresProcess,
           value: int, repeat: int) -> dict[str, float]:
    options = aorc_options(store, urls)
    url = f"{scheme(store)}://{BUCKET}/{KEY}"
    proxy = "s3" if store.startswith("s3") else store

    async def one() -> pa.Table:
        async with aorc.open_reader(url, storage_options=options) as reader:
            return await reader.read(filters=[("id", "==", value)])

    async def run() -> dict[str, float]:
        await one()  # the loop's client exists before timing
        times, requests, trips = [], 0, 0
        for _ in range(repeat):
            servers.clear(proxy)
            start = time.perf_counter()
            got = await one()
            times.append(time.perf_counter() - start)
            log = servers.log(proxy)
            requests, trips = len(log), rounds(log)
            assert got.num_rows == 1
        return {"best": min(times), "median": statistics.median(times),
                "requests": requests, "rounds": trips}

    return asyncio.run(run())


# =========================================================================== CPU

async def _cpu_of(name: str, get: Callable[[int, int], Any], size: int, count: int) -> float:
    """CPU seconds (all threads) per ranged GET of 64 KiB, 8 in flight."""
    length = 64 * 1024
    gate = asyncio.Semaphore(8)

    async def one(i: int) -> None:
        offset = (i * 7919 * length) % (size - length)
        async with gate:
            data = await get(offset, length)
        assert len(data) == length, (name, len(data))

    await asyncio.gather(*(one(i) for i in range(20)))  # warm: connections, tokens
    start = time.process_time()
    await asyncio.gather(*(one(i) for i in range(count)))
    return (time.process_time() - start) / count


async def cpu_per_request(urls: dict[str, tuple[str, str]], size: int,
                          count: int) -> dict[str, float]:
    import aorc.io
    out: dict[str, float] = {}
    direct = {"s3": {"endpoint_url": urls["s3"][0]},
              "s3-obstore": {"endpoint_url": urls["s3"][0], "engine": "obstore"},
              "gs": {"endpoint_url": urls["gs"][0], "token": "anon"},
              "az": {"connection_string": _azure_cs(urls["az"][0])}}
    for store, options in direct.items():
        async with aorc.io.open_store(f"{scheme(store)}://{BUCKET}/{KEY}", options) as s:
            await s.read_tail(16)
            out[f"aorc {store}"] = await _cpu_of(store, s.read_range, size, count)
    try:
        import obstore
        from obstore.store import AzureStore
        az = AzureStore(BUCKET, config={"account_name": ACCOUNT, "account_key": AZ_KEY,
                                        "endpoint": f"{urls['az'][0]}/{ACCOUNT}",
                                        "allow_http": "true"})
        out["obstore az"] = await _cpu_of("obstore az", lambda o, n: obstore.get_range_async(
            az, KEY, start=o, length=n), size, count)
    except ImportError:
        pass
    from azure.storage.blob.aio import BlobServiceClient
    async with BlobServiceClient.from_connection_string(_azure_cs(urls["az"][0])) as svc:
        blob = svc.get_blob_client(BUCKET, KEY)

        async def sdk(offset: int, length: int) -> bytes:
            stream = await blob.download_blob(offset=offset, length=length, max_concurrency=1)
            return bytes(await stream.readall())

        out["azure-storage-blob aio"] = await _cpu_of("sdk", sdk, size, count)
    out.update(await _fsspec_cpu(urls, size, count))
    return out


async def _fsspec_cpu(urls: dict[str, tuple[str, str]], size: int,
                      count: int) -> dict[str, float]:
    """gcsfs and adlfs (fsspec's async GCS and Azure file systems), when installed."""
    out: dict[str, float] = {}
    try:
        import gcsfs.core
    except ImportError:
        out["gcsfs (not installed)"] = float("nan")
    else:  # the core class: gcsfs.GCSFileSystem first asks a gRPC API for the bucket's
        # layout, which no emulator answers (a minute's timeout)
        gcs = gcsfs.core.GCSFileSystem(endpoint_url=urls["gs"][0], token="anon",
                                       asynchronous=True, skip_instance_cache=True)
        await gcs._set_session()
        out["gcsfs"] = await _cpu_of("gcsfs", lambda o, n: gcs._cat_file(
            f"{BUCKET}/{KEY}", start=o, end=o + n), size, count)
        await gcs.session.close()
    try:
        import adlfs
    except ImportError:
        out["adlfs (not installed)"] = float("nan")
    else:
        az = adlfs.AzureBlobFileSystem(connection_string=_azure_cs(urls["az"][0]),
                                       asynchronous=True, skip_instance_cache=True)
        out["adlfs"] = await _cpu_of("adlfs", lambda o, n: az._cat_file(
            f"{BUCKET}/{KEY}", start=o, end=o + n), size, count)
        await az.service_client.close()
    return out


# =========================================================================== main

def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--file-rows", type=int, default=10_000)
    parser.add_argument("--latency-ms", type=float, default=20.0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--cpu-requests", type=int, default=400)
    parser.add_argument("--stores", default="s3,s3-obstore,gs,az")
    args = parser.parse_args(argv)
    stores = args.stores.split(",")
    os.environ.update({"AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench",
                       "AWS_DEFAULT_REGION": "us-east-1", "AWS_EC2_METADATA_DISABLED": "true"})
    import aorc

    table = build_table(args.rows)
    sink = io.BytesIO()
    pa_orc.write_table(table, sink, stripe_size=8 << 20,
                     bloom_filter_columns=[table.column_names.index("id") + 1])
    data = sink.getvalue()
    files = dataset_files(args.files, args.file_rows)
    with tempfile.TemporaryDirectory() as workdir:
        servers = StoresProcess(args.latency_ms / 1000, Path(workdir)).start()
        try:
            upload(servers.urls, data, files)
            results = run(stores, servers, aorc, table, args)
            results["cpu_per_request_us"] = {
                k: v * 1e6 for k, v in asyncio.run(cpu_per_request(
                    servers.urls, len(data), args.cpu_requests)).items()}
        finally:
            servers.stop()
    report(results, stores)
    results.update(machine=platform.machine(), python=platform.python_version(),
                   argv=sys.argv[1:], load=os.getloadavg()[0], bytes=len(data))
    out = Path(__file__).resolve().parent / "results" / "stores.json"
    out.write_text(json.dumps(results, indent=1, default=str) + "\n")
    print(f"results: {out}")


def run(stores: list[str], servers: StoresProcess, aorc: Any, table: pa.Table,
        args: argparse.Namespace) -> dict[str, Any]:
    results: dict[str, Any] = {}
    value = int(table.num_rows * 0.6) + 7
    for store in stores:
        store_key = "s3" if store.startswith("s3") else store
        row: dict[str, Any] = {}
        for label, columns in (("whole file", None), ("two columns", PROJECTION)):
            fns = read_fns(store, servers.urls, aorc, columns)
            if not fns["aorc"]().equals(fns["pyarrow"]()):
                sys.exit(f"bench_stores: aorc and pyarrow differ on {store} {label}")
            row[label] = {name: timed(fn, servers, store_key, args.repeat)
                          for name, fn in fns.items()}
            print_row(store, label, row[label])
        row["point lookup"] = {"aorc": lookup(store, servers.urls, aorc, servers, value,
                                              args.repeat)}
        print_row(store, "point lookup", row["point lookup"])
        fns = dataset_fns(store, servers.urls, aorc)
        got, want = fns["aorc"](), fns["pyarrow"]()
        if got.num_rows != want.num_rows:
            sys.exit(f"bench_stores: the datasets differ on {store}")
        row["dataset"] = {name: timed(fn, servers, store_key, args.repeat)
                          for name, fn in fns.items()}
        print_row(store, "dataset", row["dataset"])
        results[store] = row
    return results


def print_row(store: str, label: str, cell: dict[str, dict[str, float]]) -> None:
    a = cell["aorc"]
    text = (f"{store:<11} {label:<13} aorc {a['best']:7.3f} s (median {a['median']:7.3f}) "
            f"{int(a['requests']):>4} requests")
    if "rounds" in a:
        text += f" in {int(a['rounds'])} rounds"
    if "pyarrow" in cell:
        p = cell["pyarrow"]
        text += (f" | pyarrow {p['best']:7.3f} s {int(p['requests']):>5} requests"
                 f" | ratio {a['best'] / p['best']:.3f}")
    print(text, flush=True)


def report(results: dict[str, Any], stores: list[str]) -> None:
    base = results.get("s3")
    print("\nagainst aorc on S3 (time best/median ratio, requests ratio):")
    for store in stores:
        if base is None or store == "s3":
            continue
        for label in ("whole file", "two columns", "point lookup", "dataset"):
            a, s = results[store][label]["aorc"], base[label]["aorc"]
            print(f"  {store:<11} {label:<13} time {a['best'] / s['best']:.2f} / "
                  f"{a['median'] / s['median']:.2f}  requests "
                  f"{a['requests'] / max(1, s['requests']):.2f}")
    print("\nCPU per ranged GET of 64 KiB (us, all threads):")
    for name, value in results["cpu_per_request_us"].items():
        print(f"  {name:<28} {value:8.0f}")


if __name__ == "__main__":
    main()
