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
            ``"memory"``, ``"flush"``, ``"schema"`` (:meth:`RollingSink.evolve`) or
            ``"close"``.
    """

    topic: str
    partition: int
    offset: int
    files: tuple[SinkFile, ...]
    reason: str


@dataclass
class SinkStats:
    """Counters of a :class:`RollingSink`. A row goes through three stages: *received* (a
    :meth:`~RollingSink.write` took it), *written* (its file is complete on the store, so
    readers see it) and *committed* (``on_commit`` returned for its cut, so the source may
    forget it). Until committed it is *pending*: a crash before then replays it.

    Attributes:
        rows_received: rows taken by ``write`` (replayed rows that were skipped aside).
        rows_written: rows in complete files (visible on the store; committed or not).
        files_written: complete files.
        bytes_written: bytes of complete files.
        rows_committed: rows of the cuts whose ``on_commit`` returned (without
            ``on_commit``: of the cuts whose files are complete).
        files_committed: files of those cuts.
        commits: cuts committed (``on_commit`` calls that returned).
        cuts: cuts by reason.
        peak_memory: the largest :attr:`RollingSink.memory_in_use` seen.
        peak_open_files: the most files open at once.
        rows_skipped: replayed rows dropped by ``on_old_offsets="skip"``.
        stripes_shrunk: stripes ended early because the open files' rows did not fit the
            memory budget (see :mod:`aorc.sink.memory`).
        files_cut_for_memory: files closed early because even shrunk stripes did not fit
            the memory budget (the files of the ``"memory"`` cuts).
        peak_spool_bytes: the most bytes of upload parts spooled to disk at once.
        retries: requests the stores retried for the files written (any failure).
        cuts_fenced: cuts whose files were dropped, not completed, because
            ``before_complete`` said no (a consumer that lost its partitions).
    """

    rows_received: int = 0
    rows_written: int = 0
    files_written: int = 0
    bytes_written: int = 0
    rows_committed: int = 0
    files_committed: int = 0
    commits: int = 0
    cuts: dict[str, int] = field(default_factory=dict)
    peak_memory: int = 0
    peak_open_files: int = 0
    rows_skipped: int = 0
    stripes_shrunk: int = 0
    files_cut_for_memory: int = 0
    peak_spool_bytes: int = 0
    retries: int = 0
    cuts_fenced: int = 0

    @property
    def rows_pending(self) -> int:
        """Rows received but not committed yet: in open files, in files being completed, or
        in complete files whose commit has not returned (after an abort: the rows lost,
        which a restart from the last commit replays)."""
        return self.rows_received - self.rows_committed
