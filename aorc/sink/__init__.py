"""The rolling ORC sink for record streams (Kafka partitions and the like).

:class:`RollingSink` (in :mod:`aorc.sink.rolling`, the async driver) writes ordered streams of
records into Hive-partitioned ORC files and commits their positions exactly once;
:mod:`aorc.sink.plan` holds the pure parts (roll policies, partition folders, file names),
:mod:`aorc.sink.files` the files being streamed to the store and :mod:`aorc.sink.results`
what the sink reports (:class:`SinkFile`, :class:`SinkCommit`, :class:`SinkStats`).
See :mod:`aorc.sink.rolling` for the full description.
"""

from aorc.sink.plan import (
    DEFAULT_TIME_PARTITIONING,
    HIVE_DEFAULT_PARTITION,
    file_name,
    partition_segment,
)
from aorc.sink.results import SinkCommit, SinkFile, SinkStats
from aorc.sink.rolling import RollingSink

__all__ = [
    "DEFAULT_TIME_PARTITIONING",
    "HIVE_DEFAULT_PARTITION",
    "RollingSink",
    "SinkCommit",
    "SinkFile",
    "SinkStats",
    "file_name",
    "partition_segment",
]
