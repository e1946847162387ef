"""``aorc kafka``: Kafka topics to ORC files, exactly once (:mod:`aorc.kafka`).

::

    aorc kafka --bootstrap-servers HOST:PORT --topic T [--topic ...] --group G --dest URL
        [--format json|raw|avro] [--schema 'struct<...>'] [--schema-registry URL]
        [--dead-letter URL|topic:NAME]
        [--partition-by FIELD,...] [--max-rows N] [--max-bytes N] [--max-age SECONDS]
        [-S KEY=VALUE ...] [--config FILE]

runs until SIGTERM or SIGINT, then flushes, commits and exits 0, printing the final health
(rows, files, dead letters, offsets per partition) as one JSON line. ``--config`` names a JSON
or TOML file whose keys are the flags' long names (``bootstrap-servers`` or
``bootstrap_servers``, ``topic`` a list, ``storage-options`` a table,
``consumer-options`` more aiokafka consumer settings); flags given on the command line win.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import tomllib
from collections.abc import Callable, Mapping
from typing import Any, TextIO

from aorc.errors import AorcError, SchemaError
from aorc.kafka import KafkaToOrc, service_memory_pool

__all__ = ["add_kafka_command", "kafka_command"]

#: Flags every run needs (from the command line or the config file).
REQUIRED = ("bootstrap_servers", "topic", "group", "dest")


def add_kafka_command(sub: Any, parent: argparse.ArgumentParser,
                      size: Callable[[str], int]) -> argparse.ArgumentParser:
    """Add ``aorc kafka`` to the subcommands ``sub``."""
    kafka: argparse.ArgumentParser = sub.add_parser(
        "kafka", parents=[parent], help="consume Kafka topics into ORC files, exactly once",
        description="Consume Kafka topics as a consumer group member into rolling ORC files "
        "under --dest, committing offsets only once their files are complete; runs until "
        "SIGTERM or SIGINT, then flushes, commits and exits 0.")
    kafka.add_argument("--config", help="a JSON or TOML file of the same settings")
    kafka.add_argument("--bootstrap-servers", help="host:port[,host:port]")
    kafka.add_argument("--topic", action="append", help="a topic; repeatable")
    kafka.add_argument("--group", help="the consumer group id")
    kafka.add_argument("--dest", help="a folder or store URL (s3://bucket/prefix, ...)")
    kafka.add_argument("--format", choices=["json", "raw", "avro"],
                       help="message values (json); avro: the Confluent wire format")
    kafka.add_argument("--schema", help="ORC type of the JSON fields kept, e.g. "
                       "'struct<user:string,amount:double>'; avro: the reader schema (Avro "
                       "JSON; default: the subject's latest version)")
    kafka.add_argument("--schema-registry", metavar="URL",
                       help="the Confluent schema registry of --format avro")
    kafka.add_argument("--dead-letter", metavar="URL|topic:NAME",
                       help="where records that do not decode go (a folder of ORC files or "
                       "a topic); without it such a record stops the run")
    kafka.add_argument("--partition-by", metavar="FIELD,...",
                       help="fields naming partition folders")
    kafka.add_argument("--no-time-folders", action="store_true", default=None,
                       help="no dt=/hour= folders from the message timestamps")
    kafka.add_argument("--max-rows", type=int, help="a file's most rows (1000000)")
    kafka.add_argument("--max-bytes", type=size, help="a file's size, e.g. 128M")
    kafka.add_argument("--max-age", type=float,
                       help="seconds before a quiet partition's files complete (300)")
    kafka.add_argument("--compression", choices=["zstd", "zlib", "snappy", "lz4", "none"],
                       help="the files' codec (default: aorc's, zstd)")
    kafka.add_argument("--exit-when-idle", type=int, metavar="POLLS",
                       help="also stop after this many empty polls in a row (batch mode)")
    return kafka


def _config(path: str) -> dict[str, Any]:
    text = pathlib.Path(path).read_bytes()
    try:
        data = (tomllib.loads(text.decode()) if path.endswith(".toml")
                else json.loads(text))
    except (ValueError, UnicodeError) as exc:
        raise SchemaError(f"{path}: not a valid config file: {exc}") from exc
    if not isinstance(data, dict):
        raise SchemaError(f"{path}: the config must be a table of settings")
    return {str(k).replace("-", "_"): v for k, v in data.items()}


def settings(args: argparse.Namespace, storage_options: Mapping[str, Any] | None
             ) -> dict[str, Any]:
    """The :class:`~aorc.kafka.KafkaToOrc` arguments of a command line and its config file.

    Raises:
        SchemaError: a required setting missing, or a bad config file.
    """
    merged = _config(args.config) if args.config else {}
    for name, value in vars(args).items():
        if value is not None:
            merged[name] = value
    missing = [f"--{n.replace('_', '-')}" for n in REQUIRED if not merged.get(n)]
    if missing:
        raise SchemaError(f"aorc kafka needs {', '.join(missing)} (flags or --config)")
    topics = merged["topic"]
    partition_by = merged.get("partition_by") or []
    if isinstance(partition_by, str):
        partition_by = [f for f in partition_by.split(",") if f]
    sink_options = {}
    if merged.get("compression"):
        sink_options["compression"] = merged["compression"]
    out = {
        "bootstrap_servers": merged["bootstrap_servers"],
        "topics": [topics] if isinstance(topics, str) else list(topics),
        "group": merged["group"], "dest": merged["dest"],
        "format": merged.get("format") or "json", "schema": merged.get("schema"),
        "dead_letter": merged.get("dead_letter"), "partition_by": partition_by,
        "storage_options": {**(merged.get("storage_options") or {}), **(storage_options or {})},
        "consumer_options": merged.get("consumer_options"),
        "schema_registry": merged.get("schema_registry"),
        "sink_options": sink_options,
    }
    if merged.get("no_time_folders"):
        out["event_time"] = None
    for name in ("max_rows", "max_bytes", "max_age"):
        if merged.get(name) is not None:
            out[name] = merged[name]
    return out


async def kafka_command(args: argparse.Namespace, storage_options: Mapping[str, Any] | None,
                        out: TextIO) -> None:
    """Run ``aorc kafka`` until SIGTERM/SIGINT (or ``--exit-when-idle``); print the health.

    Raises:
        AorcError: a bad setting, a record that does not decode without a dead letter, a
            store or broker failure.
    """
    options = settings(args, storage_options)
    idle = args.exit_when_idle
    if idle is None and args.config:
        idle = _config(args.config).get("exit_when_idle")
    try:
        import aiokafka.errors
    except ImportError as exc:
        raise AorcError("aorc kafka needs aiokafka: pip install 'aorc[kafka]'") from exc
    service_memory_pool()
    try:
        async with KafkaToOrc(**options) as pipe:
            await pipe.run(handle_signals=True, idle_polls=idle)
    except aiokafka.errors.KafkaError as exc:
        raise AorcError(f"Kafka: {exc}") from exc
    out.write(json.dumps(pipe.health(), sort_keys=True) + "\n")
