"""Kafka topics to ORC files, exactly once (``pip install 'aorc[kafka]'``).

:class:`KafkaToOrc` (in :mod:`aorc.kafka.consumer`) is a consumer-group member feeding a
:class:`~aorc.sink.RollingSink`, with offsets committed only once the files holding them are
complete, rebalances, dead letters and a health view; :func:`run` runs one until SIGTERM or
SIGINT. :mod:`aorc.kafka.records` turns records into rows (the ``json`` and ``raw`` formats)
and :mod:`aorc.kafka.progress` tracks which offsets are durable. The command line is
``aorc kafka`` (:mod:`aorc.cli.kafka`).
"""

from aorc.kafka.consumer import KafkaToOrc, run, service_memory_pool
from aorc.kafka.records import DEAD_LETTER_SCHEMA, FORMATS, KAFKA_COLUMNS, DeadLetter, row_schema

__all__ = [
    "DEAD_LETTER_SCHEMA",
    "FORMATS",
    "KAFKA_COLUMNS",
    "DeadLetter",
    "KafkaToOrc",
    "row_schema",
    "run",
    "service_memory_pool",
]
