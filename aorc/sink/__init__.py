"""The rolling ORC sink for record streams (Kafka partitions and the like).

:class:`RollingSink` (in :mod:`aorc.sink.rolling`, the async driver) writes ordered streams of
records into Hive-partitioned ORC files and commits their positions exactly once;
:mod:`aorc.sink.plan` holds the pure parts (roll policies, partition folders, file names).
See :mod:`aorc.sink.rolling` for the full description.
"""

from aorc.sink.rolling import (
    DEFAULT_TIME_PARTITIONING,
    HIVE_DEFAULT_PARTITION,
    RollingSink,
    SinkCommit,
    SinkFile,
    SinkStats,
    file_name,
    partition_segment,
)

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
