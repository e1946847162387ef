"""Targets of :class:`aorc.sink.RollingSink` beyond a plain folder: tables that files join by
a commit (an Iceberg table, :mod:`aorc.iceberg.sink`).

A target decides four things a folder leaves to the sink:

- the files' schema and the form of their rows (:meth:`SinkTarget.prepare`: the rows given
  to :meth:`RollingSink.write` converted and checked, e.g. Iceberg field ids attached);
- the partition folder of each row (:meth:`SinkTarget.route`: the table's partitioning,
  instead of ``partition_by``/``time_partitioning``);
- the metrics each file needs (:meth:`SinkTarget.file_metrics`: an object whose ``add`` sees
  every row the file gets, in the encoder's thread);
- the commit: when a cut's files are complete on the store, :meth:`SinkTarget.commit` makes
  them part of the table together with the stream positions they reach, atomically; a
  restarted sink asks :meth:`SinkTarget.restore` for those positions and drops rows at or
  before them, so a source that replays from an older position (a Kafka consumer whose own
  offset commit was lost) stores nothing twice.

Objects of other types can be given to the sink once a front end has registered an adapter
for them (:func:`register_target`; ``import aorc.iceberg`` registers pyiceberg's ``Table``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np
import pyarrow as pa

from aorc.errors import SchemaError
from aorc.sink.results import SinkCommit, SinkFile

__all__ = ["CommittedFile", "FileMetrics", "SinkTarget", "register_target", "resolve_target"]


@runtime_checkable
class FileMetrics(Protocol):
    """Sees the rows of one file (called in the encoder's worker thread)."""

    def add(self, batch: pa.RecordBatch) -> None:
        """Count a batch of the file's rows (in the target's schema)."""
        ...


@dataclass(frozen=True)
class CommittedFile:
    """A complete file of a cut, as the target commits it.

    Attributes:
        file: what the sink reports of it.
        metrics: the target's :class:`FileMetrics` of the file, having seen every row.
        column_sizes: bytes on disk of each ORC column (by column id; None when unknown).
        stripe_offsets: the byte offset of each stripe.
    """

    file: SinkFile
    metrics: FileMetrics
    column_sizes: list[int | None]
    stripe_offsets: list[int]


@runtime_checkable
class SinkTarget(Protocol):
    """Where a :class:`RollingSink` writes and how its files join the dataset (see the
    module docstring).

    Attributes:
        location: the root the files are written under (partition folders below it).
        schema: the files' Arrow schema (field metadata may carry ORC type attributes).
        storage_options: settings of the store at ``location`` (the sink's own
            ``storage_options`` are applied over them).
    """

    @property
    def location(self) -> str: ...

    @property
    def schema(self) -> pa.Schema: ...

    @property
    def storage_options(self) -> Mapping[str, Any]: ...

    def prepare(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        """The rows given to the sink in :attr:`schema`'s form (raising SchemaError for rows
        that do not fit)."""
        ...

    def route(self, batch: pa.RecordBatch) -> tuple[np.ndarray, list[str]]:
        """The partition folder of each row: (a code per row indexing the folders, the
        folders below :attr:`location`, ``""`` for none)."""
        ...

    def file_metrics(self) -> FileMetrics:
        """A new, empty metrics object for one file."""
        ...

    async def restore(self) -> dict[tuple[str, int], int]:
        """The last committed offset of each (topic, partition)."""
        ...

    async def commit(self, commit: SinkCommit, files: Sequence[CommittedFile],
                     positions: dict[tuple[str, int], int]) -> None:
        """Commit a cut's complete files with the positions of the streams the sink owns
        (``positions``, the cut's stream at ``commit.offset``), atomically."""
        ...

    async def settle(self) -> None:
        """Wait for commits in flight (the sink is closing or aborting)."""
        ...


_ADAPTERS: list[tuple[Callable[[Any], bool], Callable[..., SinkTarget]]] = []


def register_target(matches: Callable[[Any], bool], adapter: Callable[..., SinkTarget]
                    ) -> None:
    """Let :class:`RollingSink` take objects ``matches`` accepts: ``adapter(obj, **options)``
    makes the target."""
    _ADAPTERS.append((matches, adapter))


def resolve_target(obj: Any, **options: Any) -> SinkTarget:
    """The target for ``obj`` (a :class:`SinkTarget` as it is, or an adapted object).

    Raises:
        SchemaError: nothing handles ``obj``.
    """
    if isinstance(obj, SinkTarget):
        if options:
            raise SchemaError(f"target options {sorted(options)} need an object to adapt, "
                              "not a SinkTarget")
        return obj
    for matches, adapter in reversed(_ADAPTERS):
        if matches(obj):
            target: SinkTarget = adapter(obj, **options)
            return target
    module = type(obj).__module__.split(".")[0]
    hint = " (import aorc.iceberg to write to Iceberg tables)" if module == "pyiceberg" else ""
    raise SchemaError(f"RollingSink cannot write to a {type(obj).__name__}{hint}: pass a "
                      "folder, a URL or a SinkTarget")
