"""Which offsets of a Kafka partition are durable, and so may be committed (sans-I/O).

A record consumed from a partition ends either as a row of the data files or as a dead
letter; each of those is *pending* until its file (or its dead-letter topic message) is
durable. :class:`PartitionProgress` keeps the offset ranges handed to each destination and not
yet durable, and tells the offset a consumer may commit: the first pending one, or past the
last record consumed when nothing is pending. A crash replays from there and the files, named
from offsets, are rewritten in place: exactly once.

That holds only if no complete file holds records on both sides of the committed offset (a
replay would start a file in its middle, under another name): for a destination whose files
hold many records (``spans=True``, the data files), the offset committed must be past the
last one of its complete files. (Dead-letter files hold one record each.)
"""

from __future__ import annotations

import collections
import time
from dataclasses import dataclass, field

__all__ = ["PartitionProgress"]


@dataclass
class PartitionProgress:
    """The state of one (topic, partition) owned by a consumer.

    Attributes:
        topic: the topic.
        partition: the partition.
        consumed: the offset after the last record handled (None before the first).
        committed: the offset last committed to the group (None before the first commit).
        records: rows written (in files or on their way).
        dead_letters: records sent to the dead letters.
        files: data files complete.
        bytes: bytes of those files.
        last_commit: when the last commit of this partition returned (``time.time()``).
        highwater: the partition's end offset at the last fetch (None: unknown).
        start: the first offset handed (where this owner started).
    """

    topic: str
    partition: int
    consumed: int | None = None
    committed: int | None = None
    records: int = 0
    dead_letters: int = 0
    files: int = 0
    bytes: int = 0
    last_commit: float | None = None
    highwater: int | None = None
    start: int | None = None
    _pending: dict[str, collections.deque[list[int]]] = field(default_factory=dict)
    _complete: dict[str, int] = field(default_factory=dict)

    def handed(self, destination: str, first: int, last: int) -> None:
        """Records ``first`` to ``last`` (some of them) went to ``destination``, not durable
        yet."""
        if self.start is None:
            self.start = first
        self._pending.setdefault(destination, collections.deque()).append([first, last])

    def durable(self, destination: str, offset: int, spans: bool = True) -> None:
        """Everything ``destination`` was handed up to ``offset`` is durable, in files that
        may hold many records (``spans``) or one each."""
        if spans:
            self._complete[destination] = offset
        pending = self._pending.get(destination)
        while pending and pending[0][1] <= offset:
            pending.popleft()
        if pending and pending[0][0] <= offset:
            pending[0][0] = offset + 1

    def consumed_to(self, offset: int) -> None:
        """Every record up to ``offset`` was handed to a destination."""
        self.consumed = offset + 1
        if self.start is None:
            self.start = offset

    @property
    def pending(self) -> bool:
        """Whether some records are not durable yet."""
        return any(self._pending.values())

    def commit_offset(self) -> int | None:
        """The offset to commit (the next record a restart reads), or None when there is
        nothing new to commit."""
        if self.consumed is None:
            return None
        target = min([p[0][0] for p in self._pending.values() if p] + [self.consumed])
        if self.committed is not None and target <= self.committed:
            return None
        if self.committed is None and self.start is not None and target <= self.start:
            return None  # nothing durable yet: where the group already resumes
        if any(target <= last for last in self._complete.values()):
            return None  # a complete file holds the target: wait for the pending records
        return target

    def did_commit(self, offset: int) -> None:
        """The group took ``offset``."""
        self.committed = offset
        self.last_commit = time.time()
