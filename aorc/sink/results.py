"""What :class:`aorc.sink.RollingSink` reports: the files it completed, the commits it hands
to ``on_commit`` and its counters."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

__all__ = [
    "CommitCallback",
    "SinkCommit",
    "SinkFile",
    "SinkStats",
]

#: ``on_commit``: awaited with each cut's :class:`SinkCommit` once its files are complete.
CommitCallback = Callable[["SinkCommit"], Awaitable[None]]


@dataclass(frozen=True)
class SinkFile:
    """One complete file written by the sink.

    Attributes:
        uri: where it is (``s3://...`` or a local path).
        partition_path: its Hive partition folder below the prefix (``""`` if none).
        topic: the stream's topic.
        partition: the stream's partition.
        first_offset: offset of its first row.
        last_offset: offset of its last row.
        num_rows: rows in the file.
        num_bytes: the file's size.
    """

    uri: str
    partition_path: str
    topic: str
    partition: int
    first_offset: int
    last_offset: int
    num_rows: int
    num_bytes: int


@dataclass(frozen=True)
class SinkCommit:
    """What ``on_commit`` receives after a cut's files are complete on the store.

    Attributes:
        topic: the stream's topic.
        partition: the stream's partition.
        offset: every record of the stream up to this offset is in complete files (a Kafka
            consumer commits ``offset + 1``).
        files: the files completed by this cut, with the positions each covers.
        reason: why the cut happened: ``"rows"``, ``"bytes"``, ``"event_time"``, ``"age"``,
            ``"memory"``, ``"flush"`` or ``"close"``.
    """

    topic: str
    partition: int
    offset: int
    files: tuple[SinkFile, ...]
    reason: str


@dataclass
class SinkStats:
    """Counters of a :class:`RollingSink`.

    Attributes:
        rows_written: rows in complete files.
        files_written: complete files.
        bytes_written: bytes of complete files.
        commits: ``on_commit`` calls that returned.
        cuts: cuts by reason.
        peak_memory: the largest :attr:`RollingSink.memory_in_use` seen.
        peak_open_files: the most files open at once.
        rows_skipped: replayed rows dropped by ``on_old_offsets="skip"``.
    """

    rows_written: int = 0
    files_written: int = 0
    bytes_written: int = 0
    commits: int = 0
    cuts: dict[str, int] = field(default_factory=dict)
    peak_memory: int = 0
    peak_open_files: int = 0
    rows_skipped: int = 0
