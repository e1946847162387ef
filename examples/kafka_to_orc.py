"""Kafka to ORC files on S3, exactly once: a thin user of :mod:`aorc.kafka`.

Usage::

    pip install 'aorc[kafka]'
    python examples/kafka_to_orc.py --bootstrap-servers broker:9092 --topic events \\
        --group orc-sink --dest s3://bucket/events \\
        --schema 'struct<user:string,action:string,amount:double>' \\
        --dead-letter s3://bucket/events-dead [--endpoint-url URL]

Messages are JSON objects; ``--schema`` names the fields kept (and their ORC types). Each row
also gets ``kafka_partition``, ``kafka_offset`` and ``kafka_time`` (the message timestamp,
which places the row in an hourly folder ``dt=.../hour=...``; ``--event-time FIELD`` uses a
timestamp field of the message instead). Messages that are not JSON objects, or do not fit
the schema, go to the dead-letter files with the reason.

Offsets are committed only once the files holding the messages are complete on S3; files are
named from the offset of their first message, so after a crash the group replays from the
committed offsets and rewrites the same objects: nothing lost, nothing twice. Stop with Ctrl-C
(or SIGTERM): open files are flushed and committed first. The same runs as
``aorc kafka ...`` (the command line of :mod:`aorc.cli.kafka`).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys
from collections.abc import Sequence
from typing import Any


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Kafka to ORC files on S3, exactly once.")
    parser.add_argument("--bootstrap-servers", required=True, help="host:port[,host:port]")
    parser.add_argument("--topic", action="append", required=True, help="repeatable")
    parser.add_argument("--group", required=True, help="consumer group id")
    parser.add_argument("--dest", required=True, help="s3://bucket/prefix or a folder")
    parser.add_argument("--schema", default="struct<payload:string>",
                        help="ORC type of the message fields kept")
    parser.add_argument("--dead-letter", help="s3://bucket/prefix, a folder or topic:NAME")
    parser.add_argument("--event-time", default="kafka_time",
                        help="a timestamp field to partition by (default: the Kafka "
                        "timestamp)")
    parser.add_argument("--max-rows", type=int, default=1_000_000)
    parser.add_argument("--max-bytes", type=int, default=128 << 20,
                        help="file size on the store (128 MiB)")
    parser.add_argument("--max-age", type=float, default=300.0, help="seconds (300)")
    parser.add_argument("--compression", default="zstd")
    parser.add_argument("--endpoint-url", help="S3 endpoint (MinIO, ...)")
    parser.add_argument("--storage-option", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--consumer-option", action="append", default=[],
                        metavar="KEY=VALUE", help="an aiokafka consumer setting (JSON value)")
    parser.add_argument("--exit-when-idle", type=int, metavar="POLLS",
                        help="stop after this many empty polls in a row (batch mode)")
    return parser.parse_args(argv)


def key_values(items: Sequence[str]) -> dict[str, Any]:
    options: dict[str, Any] = {}
    for item in items:
        key, _, value = item.partition("=")
        try:
            options[key] = json.loads(value)
        except json.JSONDecodeError:
            options[key] = value
    return options


def storage_options(args: argparse.Namespace) -> dict[str, Any]:
    options = key_values(args.storage_option)
    if args.endpoint_url:
        options["endpoint_url"] = args.endpoint_url
    return options


def main(argv: Sequence[str] | None = None) -> int:
    """Run the consumer until SIGTERM/SIGINT; returns the exit status."""
    args = parse_args(argv)
    try:
        import aiokafka  # noqa: F401

        import aorc.kafka
    except ImportError:
        print("kafka_to_orc.py needs aiokafka: pip install 'aorc[kafka]'", file=sys.stderr)
        return 2
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    health = asyncio.run(aorc.kafka.run(
        bootstrap_servers=args.bootstrap_servers, topics=args.topic, group=args.group,
        dest=args.dest, schema=args.schema, dead_letter=args.dead_letter,
        event_time=args.event_time, max_rows=args.max_rows, max_bytes=args.max_bytes,
        max_age=args.max_age, storage_options=storage_options(args),
        consumer_options=key_values(args.consumer_option),
        sink_options={"compression": args.compression}, idle_polls=args.exit_when_idle))
    print(json.dumps(health))
    return 0


if __name__ == "__main__":
    sys.exit(main())
