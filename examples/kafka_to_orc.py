"""Kafka to ORC files on S3, exactly once: an aiokafka consumer feeding aorc's RollingSink.

Usage::

    pip install '.[kafka]'             # from a clone of aorc: aiokafka too
    python examples/kafka_to_orc.py --bootstrap-servers broker:9092 --topic events \\
        --group orc-sink --dest s3://bucket/events \\
        --schema 'struct<user:string,action:string,amount:double>' [--endpoint-url URL]

Messages are JSON objects; ``--schema`` names the fields kept (and their ORC types). Each row
also gets ``kafka_partition``, ``kafka_offset`` and ``kafka_time`` (the message timestamp,
which places the row in an hourly folder ``dt=.../hour=...``; ``--event-time FIELD`` uses a
timestamp field of the message instead). Messages that are not JSON objects are skipped and
logged.

Offsets are committed only in the sink's commit callback, after the files holding the
messages are complete on S3 -- never before, so nothing is lost. After a crash the consumer
group restarts from the committed offsets and the sink rewrites the same objects (files are
named from the offset of their first message), so nothing is stored twice either. Before
partitions are taken away in a rebalance, their files are flushed and committed. Stop with
Ctrl-C (or SIGTERM): open files are flushed and committed first.

S3 settings come from the usual AWS environment, ``--endpoint-url`` (MinIO, ...) and
``--storage-option KEY=VALUE``.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import logging
import signal
import sys
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import pyarrow as pa

from aorc.format.types import parse_type_string, to_arrow_schema
from aorc.sink.rolling import RollingSink, SinkCommit

logger = logging.getLogger("kafka_to_orc")

KAFKA_COLUMNS = [("kafka_partition", pa.int32()), ("kafka_offset", pa.int64()),
                 ("kafka_time", pa.timestamp("ms"))]


def row_schema(orc_type: str) -> pa.Schema:
    """The rows' schema: the message fields of ``orc_type`` plus the Kafka columns."""
    fields = list(to_arrow_schema(parse_type_string(orc_type)))
    return pa.schema(fields + [pa.field(n, t) for n, t in KAFKA_COLUMNS])


def records_to_batch(records: Sequence[Any], schema: pa.Schema
                     ) -> tuple[pa.RecordBatch, list[int]]:
    """The rows of some consumer records of one partition, and their offsets; records whose
    value is not a JSON object whose fields fit the schema are skipped (and logged)."""
    kafka = {name for name, _ in KAFKA_COLUMNS}
    names = [f.name for f in schema if f.name not in kafka]
    parsed = []
    for record in records:
        try:
            value = json.loads(record.value)
        except (ValueError, TypeError) as exc:
            _skip(record, exc)
            continue
        if not isinstance(value, dict):
            _skip(record, "not a JSON object")
            continue
        parsed.append((record, {name: value.get(name) for name in names}))
    try:
        return _build(parsed, schema), [r.offset for r, _ in parsed]
    except (pa.ArrowException, TypeError, ValueError):
        good = []
        for item in parsed:  # find the rows that do not fit
            try:
                _build([item], schema)
                good.append(item)
            except (pa.ArrowException, TypeError, ValueError) as exc:
                _skip(item[0], exc)
        return _build(good, schema), [r.offset for r, _ in good]


def _skip(record: Any, why: object) -> None:
    logger.warning("skipping %s-%s@%s: %s", record.topic, record.partition, record.offset, why)


def _build(items: list[tuple[Any, dict[str, Any]]], schema: pa.Schema) -> pa.RecordBatch:
    rows = []
    for record, row in items:
        when = datetime.datetime.fromtimestamp(record.timestamp / 1000, datetime.UTC)
        rows.append({**row, "kafka_partition": record.partition, "kafka_offset": record.offset,
                     "kafka_time": when.replace(tzinfo=None)})
    return pa.RecordBatch.from_pylist(rows, schema=schema)


def offset_committer(consumer: Any, topic_partition: Callable[[str, int], Any]
                     ) -> Callable[[SinkCommit], Awaitable[None]]:
    """The sink's commit callback: commit the offset after the last one in complete files."""
    async def commit(c: SinkCommit) -> None:
        await consumer.commit({topic_partition(c.topic, c.partition): c.offset + 1})
        logger.info("committed %s-%d at %d (%d files, %s)", c.topic, c.partition,
                    c.offset + 1, len(c.files), c.reason)
    return commit


async def consume(consumer: Any, sink: RollingSink, schema: pa.Schema, *,
                  stop: asyncio.Event | None = None, idle_polls: int | None = None,
                  poll_ms: int = 1000, max_records: int = 10_000) -> int:
    """Move messages from ``consumer`` (``getmany`` as aiokafka's) into ``sink`` until
    ``stop`` is set, or after ``idle_polls`` polls in a row returned nothing; returns the
    number of rows written."""
    written = idle = 0
    while not (stop is not None and stop.is_set()):
        batches = await consumer.getmany(timeout_ms=poll_ms, max_records=max_records)
        if not any(batches.values()):
            idle += 1
            if idle_polls is not None and idle >= idle_polls:
                break
            continue
        idle = 0
        for tp, records in batches.items():
            batch, offsets = records_to_batch(records, schema)
            if batch.num_rows:
                await sink.write(batch, topic=tp.topic, partition=tp.partition,
                                 offsets=offsets)
                written += batch.num_rows
    return written


def make_listener(sink: RollingSink, base: type) -> Any:
    """A rebalance listener flushing (and so committing) partitions before they go."""
    class FlushOnRevoke(base):  # type: ignore[misc]
        async def on_partitions_revoked(self, revoked: Any) -> None:
            await sink.flush([(tp.topic, tp.partition) for tp in revoked])

        async def on_partitions_assigned(self, assigned: Any) -> None:
            pass

    return FlushOnRevoke()


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Kafka to ORC files on S3, exactly once.")
    parser.add_argument("--bootstrap-servers", required=True, help="host:port[,host:port]")
    parser.add_argument("--topic", action="append", required=True, help="repeatable")
    parser.add_argument("--group", required=True, help="consumer group id")
    parser.add_argument("--dest", required=True, help="s3://bucket/prefix or a folder")
    parser.add_argument("--schema", default="struct<payload:string>",
                        help="ORC type of the message fields kept")
    parser.add_argument("--event-time", help="a timestamp field to partition by "
                        "(default: the Kafka timestamp)")
    parser.add_argument("--max-rows", type=int, default=1_000_000)
    parser.add_argument("--max-bytes", type=int, default=128 << 20,
                        help="file size on the store (128 MiB)")
    parser.add_argument("--max-age", type=float, default=300.0, help="seconds (300)")
    parser.add_argument("--memory-budget", type=int, default=256 << 20)
    parser.add_argument("--compression", default="zstd")
    parser.add_argument("--endpoint-url", help="S3 endpoint (MinIO, ...)")
    parser.add_argument("--storage-option", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--exit-when-idle", type=int, metavar="POLLS",
                        help="stop after this many empty polls in a row (batch mode)")
    return parser.parse_args(argv)


def storage_options(args: argparse.Namespace) -> dict[str, Any]:
    options: dict[str, Any] = {}
    for item in args.storage_option:
        key, _, value = item.partition("=")
        try:
            options[key] = json.loads(value)
        except json.JSONDecodeError:
            options[key] = value
    if args.endpoint_url:
        options["endpoint_url"] = args.endpoint_url
    return options


async def run(args: argparse.Namespace, aiokafka: Any) -> int:
    schema = row_schema(args.schema)
    consumer = aiokafka.AIOKafkaConsumer(
        bootstrap_servers=args.bootstrap_servers, group_id=args.group,
        enable_auto_commit=False, auto_offset_reset="earliest")
    sink = RollingSink(args.dest, schema, event_time=args.event_time or "kafka_time",
                       max_rows=args.max_rows, max_bytes=args.max_bytes,
                       max_age=args.max_age, memory_budget=args.memory_budget,
                       storage_options=storage_options(args) or None,
                       on_commit=offset_committer(consumer, aiokafka.TopicPartition),
                       compression=args.compression)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    consumer.subscribe(args.topic, listener=make_listener(
        sink, aiokafka.ConsumerRebalanceListener))
    await consumer.start()
    try:
        async with sink:
            rows = await consume(consumer, sink, schema, stop=stop,
                                 idle_polls=args.exit_when_idle)
    finally:
        await consumer.stop()
    logger.info("wrote %d rows in %d files", rows, sink.stats.files_written)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run the consumer; returns the exit status."""
    args = parse_args(argv)
    try:
        import aiokafka
    except ImportError:
        print("kafka_to_orc.py needs aiokafka: pip install '.[kafka]' in a clone of aorc "
              "(or pip install aiokafka)", file=sys.stderr)
        return 2
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    return asyncio.run(run(args, aiokafka))


if __name__ == "__main__":
    sys.exit(main())
