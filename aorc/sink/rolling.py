"""A rolling ORC sink for record streams (Kafka partitions and the like).

:class:`RollingSink` writes rows that come from ordered *streams* into many ORC files under a
prefix (a local folder or ``s3://bucket/prefix``)::

    async def commit(c: aorc.sink.SinkCommit) -> None:
        await consumer.commit({TopicPartition(c.topic, c.partition): c.offset + 1})

    async with RollingSink("s3://bucket/events", schema, event_time="ts",
                           on_commit=commit) as sink:
        async for topic, partition, batch, offsets in source:
            await sink.write(batch, topic=topic, partition=partition, offsets=offsets)

A stream is a ``(topic, partition)`` pair whose records carry strictly increasing offsets.
Rows go into Hive-style partition folders named from column values (``partition_by``) and/or
from an event-time column (``time_partitioning``, ``dt=2026-11-22/hour=07`` by default). A
file holds the rows of one stream in one partition folder and is named from the stream
position of its first row: ``<folder>/<topic>+<partition>+<first offset, 20 digits>.orc``.
Its user metadata records the topic, partition, first and last offset, and the offset of
the cut that completed it (``aorc.sink.cut_offset``: the stream's position after the cut).

Rolling and committing. The files of a stream roll together: a *cut* closes every open file
of the stream at the same position, completes them on the store, and then awaits
``on_commit`` with a :class:`SinkCommit` naming the files and the stream's position (every
record up to ``offset`` is in complete files). Cuts of one stream commit in order; the files
of a cut are completed (renamed into place, ``CompleteMultipartUpload``) only after the
previous cut's commit returned. A cut happens before the first record that would take one of
the stream's files past ``max_rows`` rows or ``max_event_span`` of event time, and after the
stripe with which a file got within one stripe of ``max_bytes`` (its size on the store, ORC
bytes; default 128 MiB). Those decisions depend only on the stream's records since the last
cut, so a replay cuts at the same records and writes byte-identical files (with nested
columns, or stripes shrunk for memory, stripe and size cuts may move).
``max_age`` (default 5 minutes, so that a quiet stream commits without a close), the memory
budget, :meth:`RollingSink.flush` and :meth:`RollingSink.close` also cut, at positions that
depend on timing.

Streaming. An open file encodes its rows into stripes as they arrive (a stripe of a sixteenth
of ``max_bytes``, between 1 and 64 MiB, unless ``stripe_size`` is given; see
:mod:`aorc.sink.files`) and sends each finished stripe to the store at once: a hidden
temporary file beside the target for a local folder, the parts of a multipart upload for S3
(5 MiB parts unless ``storage_options`` set ``part_size``). A file therefore holds only its
current stripe's rows and the encoded bytes not yet in a part, and can be far larger than
the memory budget.

Exactly once. Restart a crashed pipeline from the positions last given to ``on_commit``
(``offset + 1``). Each partition folder's first file after that position starts with the same
record as before the crash, so it has the same name: whatever the crashed run completed past
its last commit (at most one file per folder: a cut's files are written only after the
previous cut committed) is overwritten by the replay, and no record is stored twice. This
also holds for the timing-dependent cuts (``max_age``, memory, flush): they only change where
a replayed file ends, and the replayed file replaces the crashed run's file with the same
first offset whatever their lengths. Until the replay overwrites them, files past the last
commit are visible to readers. Requirements: records replay with the same offsets and
partition values; one sink at a time writes a stream; ``on_commit`` does not call the sink.

Failure. An exception or a cancellation inside ``async with`` (or :meth:`RollingSink.abort`)
aborts every file being written: nothing partial appears, multipart uploads are aborted, no
commit follows. An error while closing a file breaks the sink: the next call raises it. A
killed process leaves no visible partial object (S3 shows objects only when complete; local
files are renamed into place). The next sink writing the stream into a folder removes what a
killed one left of that stream there: hidden temporaries, incomplete multipart uploads.

Memory. :attr:`RollingSink.memory_in_use` counts what the files hold: the rows of current
stripes, a stripe being encoded, encoded bytes not yet in a part (on object stores they wait
in a local spool folder instead with ``buffer="disk"``, the default: see
:mod:`aorc.sink.memory`), parts being uploaded (twice: the HTTP client copies the body) and
the files being closed. When the open files' stripes would not fit ``memory_budget``, their
stripes are scaled down; before a stripe is encoded, and when a write would take the count
past the budget, the sink waits for part uploads that free enough, then ends the largest
stripe early, and only when every stripe is down to :data:`~aorc.sink.files.STRIPE_FLOOR`
cuts the stream owning the oldest open file (repeatedly, oldest first) and waits for files
being closed. ``stats`` counts ``stripes_shrunk`` and ``files_cut_for_memory``.
Targets. Given a table instead of a folder (``RollingSink(iceberg_table, ...)`` after
``import aorc.iceberg``, or any :class:`aorc.sink.target.SinkTarget`), the target shapes the
rows and their partition folders, and each cut is committed to it with the positions
reached, before ``on_commit``; a new sink resumes each stream after the target's position
(rows at or before it are skipped), so the target holds every record exactly once.
Replays: after a consumer rebalance a source may replay records already written; with
``on_old_offsets="skip"`` rows at or below the stream's last written offset are dropped and
counted in :attr:`SinkStats.rows_skipped` (the default ``"raise"`` refuses them with an
:class:`~aorc.errors.OldOffsetsError`).

Counters. :attr:`RollingSink.stats` (:class:`SinkStats`) tells rows received, written (in
complete files) and committed apart: ``stats.rows_pending`` rows are not committed yet.
"""

from __future__ import annotations

import asyncio
import datetime
import os
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, cast

import numpy as np
import pyarrow as pa

from aorc.errors import AorcError, OldOffsetsError, SchemaError
from aorc.format.arrow import conform
from aorc.format.types import from_arrow_schema
from aorc.io import registry
from aorc.options import WriteOptions
from aorc.sink.cuts import Cuts
from aorc.sink.files import (
    OpenSinkFile,
    StaleTemporaries,
    abort_files,
    default_stripe_target,
    scaled_capacity,
    sink_encryption,
    stripe_point,
)
from aorc.sink.memory import Spooling, in_flight, oldest, shrink_candidate, stripe_scale
from aorc.sink.plan import (
    DEFAULT_TIME_PARTITIONING,
    PIECE_OVERHEAD,
    OpenFile,
    Partitioner,
    Routing,
    StreamState,
    check_offsets,
    file_ids,
    file_name,
    group_order,
    join_uri,
    make_limits,
    positive,
    roll_point,
    take_rows,
    time_bounds,
)
from aorc.sink.results import CommitCallback, SinkStats
from aorc.sink.target import SinkTarget, resolve_target
from aorc.threads import WorkerPool
from aorc.write.inputs import collect_batches
from aorc.write.writer import CloseOrAbort

__all__ = ["DEFAULT_MAX_AGE", "DEFAULT_MAX_BYTES", "SINK_PART_SIZE", "RollingSink"]

#: ``max_bytes`` when not given: the size of a file on the store.
DEFAULT_MAX_BYTES = 128 << 20
#: ``max_age`` when not given, in seconds: a quiet stream commits after 5 minutes.
DEFAULT_MAX_AGE = 300.0
#: S3 part size of the sink's files unless ``storage_options`` set one (S3's smallest part):
#: each open file holds up to one part of encoded bytes.
SINK_PART_SIZE = 5 << 20
#: Rows of one write are handled in chunks of at most this share of the memory budget.
CHUNK_SHARE = 8
#: Below this many cells (rows x columns) a write's rows are copied to their files on the
#: event loop: handing them to a thread would cost more than the copy.
LIGHT_CELLS = 64 * 1024

# =========================================================================== the sink

class RollingSink(Cuts, CloseOrAbort):
    """Writes record streams into rolling, partitioned ORC files (see the module docstring).

    Use as ``async with RollingSink(...) as sink``: leaving the block normally flushes and
    commits everything (:meth:`close`); an exception or a cancellation aborts (:meth:`abort`).

    Args:
        prefix: a local folder, an ``s3://bucket/prefix``, or a target (see Targets above).
        schema: the Arrow schema of the rows given to :meth:`write` (a target's own when
            left out).
        partition_by: columns whose values name partition folders (``country=DE``); they are
            left out of the files (as Hive and Spark do) unless ``drop_partition_columns`` is
            false.
        event_time: a timestamp (or date) column naming time partition folders.
        time_partitioning: the folders of ``event_time``, strftime codes in UTC (or
            ``time_zone``); default ``dt=%Y-%m-%d/hour=%H``. ``None``: no time folders.
        time_zone: the zone of the time folders; naive timestamps are taken as UTC.
        max_rows: cut before a file would exceed this many rows.
        max_bytes: the size of a file on the store (ORC bytes, default 128 MiB): a stream is
            cut after a stripe once one more stripe like it would take the file past this.
        max_event_span: cut before a file's event times would span this much.
        max_age: cut a stream whose oldest open file is this many seconds old (default 300:
            a quiet stream commits within about five minutes); None: never.
        memory_budget: bytes held in memory (see the module docstring).
        max_open_uploads: files being finished or completed on the store at once (open
            files stream their stripes whatever this says).
        on_commit: awaited with a :class:`SinkCommit` after each cut's files are complete.
        before_complete: awaited with ``(topic, partition)`` before a cut's files are
            completed (made visible); False drops them instead, without a commit (a
            consumer fencing itself off partitions it may have lost: see
            :mod:`aorc.kafka.consumer`). Counted in ``stats.cuts_fenced``.
        storage_options: settings of the store (see :func:`aorc.io.open_store`).
        drop_partition_columns: leave ``partition_by`` columns out of the files.
        on_old_offsets: what :meth:`write` does with rows at or below the stream's last
            written offset (a replay after a consumer rebalance): ``"raise"`` an
            :class:`~aorc.errors.OldOffsetsError` (default for folders) or ``"skip"`` them
            (counted in :attr:`SinkStats.rows_skipped`; the default with a target).
        clock: the monotonic clock of ``max_age`` (seconds; default ``time.monotonic``).
        buffer: where an object store's upload parts wait until sent: ``"disk"`` (default:
            a spool folder, see :mod:`aorc.sink.memory`) or ``"memory"``.
        spool_dir: the folder of the spool (default: the system's temporary folder).
        max_spool_bytes: the most bytes spooled (default 8 GiB); beyond, parts wait in memory.
        options: an :class:`aorc.WriteOptions` for the files (default: the defaults; the
            stripe size then follows ``max_bytes``).
        keys: the key provider of ``encrypt`` (as for :func:`aorc.open_writer`).
        **write_options: fields of :class:`aorc.WriteOptions` (compression, stripe_size, ...),
            overriding ``options``.

    Raises:
        SchemaError: a bad option, or a column that is missing or of the wrong type.
    """

    def __init__(self, prefix: str | os.PathLike[str] | SinkTarget | Any,
                 schema: pa.Schema | None = None, *,
                 partition_by: Sequence[str] = (), event_time: str | None = None,
                 time_partitioning: str | None = DEFAULT_TIME_PARTITIONING,
                 time_zone: str = "UTC", max_rows: int | None = 1_000_000,
                 max_bytes: int | None = DEFAULT_MAX_BYTES,
                 max_event_span: datetime.timedelta | None = None,
                 max_age: float | None = DEFAULT_MAX_AGE, memory_budget: int = 256 << 20,
                 max_open_uploads: int = 8, on_commit: CommitCallback | None = None,
                 before_complete: Callable[[str, int], Awaitable[bool]] | None = None,
                 storage_options: Mapping[str, Any] | None = None,
                 drop_partition_columns: bool = True, on_old_offsets: str | None = None,
                 clock: Callable[[], float] = time.monotonic, buffer: str | None = None,
                 spool_dir: str | os.PathLike[str] | None = None,
                 max_spool_bytes: int | None = None, options: WriteOptions | None = None,
                 keys: Any = None, **write_options: Any) -> None:
        self.target: SinkTarget | None = None
        if not isinstance(prefix, (str, os.PathLike)):
            self.target = resolve_target(prefix)
            schema = self._target_schema(schema, partition_by)
            time_partitioning, drop_partition_columns = None, False
        elif schema is None:
            raise SchemaError("RollingSink needs the schema of the rows it writes")
        self.prefix = (self.target.location if self.target is not None
                       else os.fspath(cast(str, prefix)))
        self.schema = schema
        self._limits = make_limits(max_rows, None, max_event_span)
        self.max_bytes = positive("max_bytes", max_bytes, int)
        if on_old_offsets is None:  # a target's restart replays what it committed: skip it
            on_old_offsets = "skip" if self.target is not None else "raise"
        if on_old_offsets not in ("raise", "skip"):
            raise SchemaError(f"on_old_offsets must be 'raise' or 'skip', got "
                              f"{on_old_offsets!r}")
        self.on_old_offsets = on_old_offsets
        self._clock = clock
        self.max_age = positive("max_age", max_age, float)
        self.memory_budget = int(positive("memory_budget", memory_budget, int) or 0)
        self._uploads = asyncio.Semaphore(int(positive("max_open_uploads",
                                                        max_open_uploads, int) or 1))
        self._routing = (partition_by, event_time, time_partitioning, time_zone,
                         set(partition_by) if drop_partition_columns else set(), keys)
        self.write_options = WriteOptions.create(options, write_options, caller="RollingSink")
        self._set_schema(schema)
        self._metadata = dict(self.write_options.metadata)
        stripe_size_given = "stripe_size" in write_options or (
            options is not None and options.stripe_size != WriteOptions().stripe_size)
        self._stripe_target = (self._options.stripe_size if stripe_size_given
                               else default_stripe_target(self.max_bytes))
        self._storage_options = dict(storage_options or {})
        if self.target is not None:
            self._storage_options = {**self.target.storage_options, **self._storage_options}
        if registry.is_remote(self.prefix):  # an object store: multipart parts
            self._storage_options.setdefault("part_size", SINK_PART_SIZE)
            self._storage_options.setdefault("memory_budget",
                                             2 * self._storage_options["part_size"])
        self._spooling = Spooling(buffer, spool_dir, max_spool_bytes)
        self._closing: set[OpenSinkFile] = set()
        self._stale = StaleTemporaries()  # a killed run's temporaries (aorc.sink.files)
        self._encoder = WorkerPool(1, "aorc-sink-encoder")
        self._on_commit = on_commit
        self._before_complete = before_complete
        self._streams: dict[tuple[str, int], StreamState] = {}
        self._lock = asyncio.Lock()
        self._released = asyncio.Event()
        self._tasks: set[asyncio.Task[Any]] = set()
        self._timer: asyncio.Task[None] | None = None
        self._seq = 0
        self._error: BaseException | None = None
        self._state = "open"  # open -> closed | aborted | failed
        self.stats = SinkStats()
        self._restored: dict[tuple[str, int], int] | None = None  # a target's positions
        self._owned: dict[tuple[str, int], int] = {}  # positions committed to the target

    def _set_schema(self, schema: pa.Schema) -> None:
        """The rows' schema and what follows from it (routing, the files' ORC type)."""
        partition_by, event_time, time_partitioning, time_zone, dropped, keys = self._routing
        self._partitioner = Partitioner(
            schema, partition_by, event_time, time_partitioning, time_zone,
            self._limits.max_span is not None,
            router=self.target.route if self.target is not None else None)
        file_schema = pa.schema([f for f in schema if f.name not in dropped])
        if not len(file_schema):
            raise SchemaError("RollingSink: no columns left to write after dropping the "
                              "partition columns")
        orc_type = from_arrow_schema(file_schema)
        self._encryption = sink_encryption(orc_type, self.write_options, keys)
        self.schema, self.file_schema, self._orc_type = schema, file_schema, orc_type
        self._options = self.write_options.resolve(orc_type)

    def _target_schema(self, schema: pa.Schema | None, partition_by: Sequence[str]
                       ) -> pa.Schema:
        """The files' schema of a target (its own; ``schema`` may name a subset of it)."""
        assert self.target is not None
        if partition_by:
            raise SchemaError("RollingSink: a target partitions the rows itself; leave out "
                              "partition_by")
        extra = sorted(set(schema.names if schema is not None else [])
                       - set(self.target.schema.names))
        if extra:
            raise SchemaError(f"RollingSink: columns {extra} are not in the target's schema")
        return self.target.schema

    # ----------------------------------------------------------------- properties

    @property
    def memory_in_use(self) -> int:
        """Bytes held by open files and files being closed: rows of current stripes,
        stripes being encoded, encoded bytes not yet in a part and parts being uploaded."""
        return self._open_bytes + self._closing_bytes

    @property
    def _open_bytes(self) -> int:
        return sum(f.writer.memory for s in self._streams.values() for f in s.files.values()
                   if f.writer is not None)

    @property
    def _closing_bytes(self) -> int:
        return sum(f.memory for f in self._closing)

    @property
    def open_files(self) -> int:
        """Files currently open (rows buffered, not yet cut)."""
        return sum(len(s.files) for s in self._streams.values())

    def position(self, topic: str, partition: int) -> int | None:
        """The offset of the last row written for a stream (committed or not).

        Args:
            topic: the stream's topic.
            partition: the stream's partition.

        Returns:
            The offset of its last row written, or ``None`` when the sink has no rows of
            that stream (never written to, or discarded).
        """
        stream = self._streams.get((topic, partition))
        return None if stream is None else stream.last_offset

    # ----------------------------------------------------------------- life cycle

    async def __aenter__(self) -> RollingSink:
        self._start_timer()
        return self

    def _start_timer(self) -> None:
        if self.max_age is not None and self._timer is None and self._state == "open":
            self._timer = asyncio.create_task(self._age_loop())

    def _check(self) -> None:
        if self._error is not None:
            raise self._error.with_traceback(None)
        if self._state != "open":
            raise AorcError(f"RollingSink {self.prefix}: the sink is {self._state}")

    async def close(self) -> None:
        """Cut every stream, wait for all files and commits. Calling it again (or after
        :meth:`abort`) does nothing.

        Raises:
            AorcError: the first error of a file write or commit callback (then aborts).
        """
        if self._state == "closed" or (self._state == "aborted" and self._error is None):
            return  # (after an explicit abort there is nothing left to close)
        if self._error is not None:
            await self.abort()
        self._check()
        try:
            async with self._lock:
                for stream in self._streams.values():
                    self._cut(stream, "close")
            await self._wait_chains(list(self._streams.values()))
        except BaseException:
            await self.abort()
            raise
        self._state = "closed"
        await self._stop_timer()
        await self._spooling.close()
        if self.target is not None:
            await self.target.settle()
        self._encoder.shutdown(wait=False)

    async def abort(self) -> None:
        """Drop every open file and cancel the files being written: nothing partial is left
        and no further commit happens. Safe to repeat."""
        if self._state in ("closed", "aborted"):
            return
        self._state = "aborted"
        await self._stop_timer()
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for stream in self._streams.values():
            await abort_files(list(stream.files.values()))
            stream.files.clear()
        await asyncio.shield(self._spooling.close())
        if self.target is not None:
            await asyncio.shield(self.target.settle())
        self._encoder.shutdown(wait=False)

    async def _stop_timer(self) -> None:
        timer, self._timer = self._timer, None
        if timer is not None:
            timer.cancel()
            await asyncio.gather(timer, return_exceptions=True)

    async def flush(self, streams: Sequence[tuple[str, int]] | None = None) -> None:
        """Cut streams and wait until their files are complete and committed.

        Args:
            streams: ``(topic, partition)`` pairs (a consumer giving them up); ``None``: all.
        """
        self._check()
        async with self._lock:
            chosen = [s for key, s in self._streams.items() if streams is None or key in streams]
            for stream in chosen:
                self._cut(stream, "flush")
        await self._wait_chains(chosen)

    async def discard(self, streams: Sequence[tuple[str, int]]) -> None:
        """Forget streams without committing: drop their open files and cancel their files
        being written (a new owner replays them from their last commit).

        Args:
            streams: the (topic, partition) pairs to forget; unknown ones are ignored.

        Raises:
            AorcError: the sink is closed or aborted, or an earlier write or commit failed
                (that error is raised again).
        """
        self._check()
        async with self._lock:
            for key in streams:
                self._owned.pop(key, None)
                if self._restored is not None:
                    self._restored = None  # a new owner may commit it: ask the target again
                stream = self._streams.pop(key, None)
                if stream is None:
                    continue
                await abort_files(list(stream.files.values()))
                stream.files.clear()
                if stream.chain is not None:
                    stream.chain.cancel()
                    await asyncio.gather(stream.chain, return_exceptions=True)

    async def evolve(self, schema: pa.Schema) -> None:
        """Take rows of a new schema from now on (a source's schema evolved): every stream is
        cut (reason ``"schema"``) and the next files have the new schema; the files before
        keep the old one (a dataset reads both with schema evolution).

        Args:
            schema: the rows' new Arrow schema.

        Raises:
            SchemaError: a target's sink (its schema is the table's), or a schema that does
                not fit the partitioning options (the sink keeps the old one).
            AorcError: the sink is closed or broken.
        """
        self._check()
        if self.target is not None:
            raise SchemaError("RollingSink.evolve: a target's sink writes the target's schema")
        async with self._lock:
            self._check()
            if schema.equals(self.schema):
                return
            old = self.schema
            try:
                self._set_schema(schema)
            except BaseException:
                self._set_schema(old)
                raise
            streams = list(self._streams.values())
            for stream in streams:  # (the files being closed keep their own ORC type)
                self._cut(stream, "schema")
        await self._wait_chains(streams)

    async def _wait_chains(self, streams: Sequence[StreamState]) -> None:
        for stream in streams:
            if stream.chain is not None:
                await stream.chain
        self._check()

    # ----------------------------------------------------------------- writing

    async def write(self, data: Any, *, topic: str, partition: int,
                    offsets: int | str | Sequence[int] | np.ndarray | pa.Array) -> None:
        """Add rows of one stream.

        Args:
            data: rows with the sink's schema (anything :func:`aorc.write_table` takes).
            topic: the stream's topic.
            partition: the stream's partition.
            offsets: the rows' offsets: the first one (the others follow consecutively), one
                per row (strictly increasing), or the name of a column holding them. They
                must be above every offset already written for the stream; rows at or
                below it are dropped with ``on_old_offsets="skip"``.

        Raises:
            InputTypeError: ``data`` is of no kind a writer takes (the sink stays usable).
            SchemaError: rows or offsets that do not fit (the sink stays usable).
            OldOffsetsError: offsets at or below the stream's last written one, with
                ``on_old_offsets="raise"`` (the sink stays usable).
            AorcError: the sink is closed or broken by an earlier error.
            StoreError: sending a finished stripe to the store failed (the sink is broken).
        """
        self._check()
        self._start_timer()
        if not isinstance(topic, str) or not topic:
            raise SchemaError(f"topic must be a non-empty string, got {topic!r}")
        if isinstance(partition, bool) or not isinstance(partition, (int, np.integer)):
            raise SchemaError(f"partition must be an integer, got {partition!r}")
        rows, target = (await collect_batches(data))[1], self.target
        batches = (await asyncio.to_thread(lambda: [target.prepare(b) for b in rows])
                   if target is not None else [conform(b, self.schema) for b in rows])
        total = sum(b.num_rows for b in batches)
        offs = check_offsets(offsets, total, batches)
        key = (topic, int(partition))
        async with self._lock:
            self._check()
            stream = self._streams.get(key) or await self._new_stream(topic, int(partition))
            if total and stream.last_offset is not None and offs[0] <= stream.last_offset:
                if self.on_old_offsets == "raise":
                    raise OldOffsetsError(
                        f"{topic}+{partition}: offset {int(offs[0])} is at or below "
                        f"{stream.last_offset}, the last one written (a replay, e.g. after a "
                        f"consumer rebalance?); pass on_old_offsets=\"skip\" to drop such "
                        f"records (counted in stats.rows_skipped)")
                batches, offs = self._skip_old(batches, offs, stream.last_offset)
            self._streams[key] = stream
            self.stats.rows_received += int(len(offs))
            try:
                self._cut_aged()
                start = 0
                for batch in batches:
                    for piece in self._chunks(batch):
                        await self._write_piece(stream, piece,
                                                offs[start:start + piece.num_rows])
                        start += piece.num_rows
            except SchemaError:
                raise
            except BaseException as exc:
                self._break(exc)  # a stripe may be lost: the sink cannot go on
                raise

    async def _new_stream(self, topic: str, partition: int) -> StreamState:
        """A stream seen for the first time (since :meth:`discard`): with a target, it
        resumes after the position the target committed."""
        stream = StreamState(topic, partition)
        if self.target is not None:
            if self._restored is None:
                self._restored = await self.target.restore()
            stream.last_offset = self._restored.get((topic, partition))
            if stream.last_offset is not None:  # owned now: carried by every commit
                self._owned.setdefault((topic, partition), stream.last_offset)
        return stream

    async def committed_offsets(self) -> dict[tuple[str, int], int]:
        """The last offset of each (topic, partition) committed to the target (where a
        consumer resumes: ``offset + 1``); empty without a target.

        Returns:
            ``{(topic, partition): offset}`` as the target restores it now (the streams
            committed so far; empty without a target).
        """
        if self.target is None:
            return {}
        self._restored = await self.target.restore()
        return dict(self._restored)

    def _skip_old(self, batches: list[pa.RecordBatch], offs: np.ndarray,
                  last: int) -> tuple[list[pa.RecordBatch], np.ndarray]:
        """The rows above offset ``last`` (offsets increase, so they are a suffix)."""
        skip = int(np.searchsorted(offs, last, side="right"))
        self.stats.rows_skipped += skip
        kept, seen = [], 0
        for batch in batches:
            lo = min(max(skip - seen, 0), batch.num_rows)
            if lo < batch.num_rows:
                kept.append(batch.slice(lo))
            seen += batch.num_rows
        return kept, offs[skip:]

    def _break(self, exc: BaseException) -> None:
        if self._error is None:
            self._error = exc if isinstance(exc, Exception) else AorcError(
                f"RollingSink {self.prefix}: a write was interrupted while a stripe was "
                f"being stored")
        if self._state == "open":
            self._state = "failed"
        self._released.set()

    def _chunks(self, batch: pa.RecordBatch) -> list[pa.RecordBatch]:
        if not batch.num_rows:
            return []
        per_row = max(1, batch.nbytes // batch.num_rows)
        rows = max(1, self.memory_budget // CHUNK_SHARE // per_row)
        return [batch.slice(i, rows) for i in range(0, batch.num_rows, rows)]

    async def _write_piece(self, stream: StreamState, batch: pa.RecordBatch,
                           offs: np.ndarray) -> None:
        routing = await asyncio.to_thread(self._partitioner.route, batch)
        buffers = sum(len(c.buffers()) for c in batch.columns)
        await self._reserve(batch.nbytes + 8 * batch.num_rows
                            + len(routing.paths) * (64 * buffers + PIECE_OVERHEAD))
        pos, n = 0, batch.num_rows
        while pos < n:
            end, why = roll_point(self._limits, stream, routing, pos, n)
            if end == pos:
                self._cut(stream, why)
                continue
            scale = stripe_scale(self._streams.values(), self.memory_budget)
            full_at = stripe_point(stream.files, routing, pos, end,
                                   scaled_capacity(self._stripe_target, scale))
            stop = end if full_at is None else full_at + 1
            await self._append(stream, batch, routing, offs, pos, stop)
            pos = stop
            if full_at is not None:
                await self._flush_full(stream)
        await self._reserve(0)  # in case the estimate fell short
        self._note_memory()

    async def _flush_full(self, stream: StreamState) -> None:
        """Encode the full stripes of ``stream``'s files; cut the stream when one more
        stripe would take a file past ``max_bytes``."""
        for f in list(stream.files.values()):
            if f.writer is not None and f.writer.full:
                await self._reserve(f.writer.send_cost)
                if stream.files.get(f.path) is not f:
                    return  # cut to make room: the stripe is the file's last
                self.stats.stripes_shrunk += f.writer.stripe_rows > 0 and f.writer.shrunk
                if await self._flush_stripe(stream, f):
                    return

    async def _flush_stripe(self, stream: StreamState, f: OpenFile) -> bool:
        """Encode ``f``'s stripe; cut the stream (and say so) when one more stripe would
        take the file past ``max_bytes``."""
        await f.writer.flush_stripe()
        pa.default_memory_pool().release_unused()  # (rows freed on this thread's heap)
        self._note_memory()
        if self.max_bytes is not None and f.writer.expected_size() > self.max_bytes:
            await self._reserve(sum(g.writer.finish_cost for g in stream.files.values()
                                    if g.writer is not None))
            self._cut(stream, "bytes")  # (no-op if the reserve cut it already)
            return True
        return False

    async def _append(self, stream: StreamState, batch: pa.RecordBatch, routing: Routing,
                      offs: np.ndarray, pos: int, end: int) -> None:
        """Give rows ``pos:end`` to their files (a compact copy each) and count them.

        The copies are made off the event loop (on the shared pool, a column per task) unless
        they are small; the sink's lock, held by :meth:`write`, keeps the streams as they are
        meanwhile."""
        row_fids = file_ids(stream, routing, pos, end)
        order = group_order(row_fids)
        fids = row_fids[order]
        rows = order + pos
        starts = np.flatnonzero(np.r_[True, fids[1:] != fids[:-1]])
        stops = np.r_[starts[1:], len(fids)]
        est = np.add.reduceat(routing.sizes[rows], starts)
        bounds = time_bounds(routing.times, rows, starts)
        files = list(stream.files.values())
        columns = batch.select(self.file_schema.names)
        groups = [rows[a:b] for a, b in zip(starts.tolist(), stops.tolist(), strict=True)]
        threads = self._options.threads
        if (end - pos) * columns.num_columns < LIGHT_CELLS:
            pieces = take_rows(columns, groups, 1)
        else:
            pieces = await asyncio.to_thread(take_rows, columns, groups, threads)
        if stream.opened_at is None:
            self._seq += 1
            stream.epoch = self._seq
            stream.opened_at = self._clock()
        for k, fid in enumerate(fids[starts].tolist()):
            f = files[fid]
            if f.writer is None:
                f.first = int(offs[rows[starts[k]]])
                f.writer = self._open_file(stream, f)
            f.last = int(offs[rows[stops[k] - 1]])
            f.rows += int(stops[k] - starts[k])
            f.est_bytes += int(est[k])
            if bounds is not None:
                f.tmin, f.tmax = min(f.tmin, int(bounds[0][k])), max(f.tmax, int(bounds[1][k]))
            f.writer.add(pieces[k], int(est[k]))
        stream.last_offset = int(offs[end - 1])

    def _open_file(self, stream: StreamState, f: OpenFile) -> OpenSinkFile:
        uri = join_uri(self.prefix, f.path, file_name(stream.topic, stream.partition, f.first))
        metadata = {**self._metadata,
                    "aorc.sink.topic": stream.topic.encode(),
                    "aorc.sink.partition": str(stream.partition).encode(),
                    "aorc.sink.first_offset": str(f.first).encode()}
        metrics = self.target.file_metrics() if self.target is not None else None
        return OpenSinkFile(uri, self._orc_type, self.file_schema, self._options, metadata,
                            self._storage_options, self._stripe_target, self._encoder,
                            metrics, self._stale, self._spooling, self._encryption)

    def _note_memory(self) -> None:
        self.stats.peak_memory = max(self.stats.peak_memory, self.memory_in_use)
        self.stats.peak_open_files = max(self.stats.peak_open_files, self.open_files)
        self.stats.peak_spool_bytes = self._spooling.peak_bytes

    # ----------------------------------------------------------------- memory

    async def _reserve(self, nbytes: int) -> None:
        """Make room for ``nbytes`` more: wait for part uploads, end the largest stripes
        early, cut the streams holding the oldest rows until enough bytes are on their way
        out, then wait for files being closed to finish."""
        while True:
            closing = self._closing_bytes
            excess = closing + self._open_bytes + nbytes - self.memory_budget
            if excess <= 0:
                return
            if closing < excess and await self._wait_uploads(excess - closing):
                continue
            shrink = shrink_candidate(self._streams.values()) if closing < excess else None
            if shrink is not None:
                self.stats.stripes_shrunk += 1
                await self._flush_stripe(*shrink)
                continue
            if closing < excess:
                victim = oldest(self._streams.values())
                if victim is not None:
                    self._cut(victim, "memory")
                    continue
            if not self._closing:
                return  # nothing to wait for: the rows alone exceed the budget
            self._released.clear()
            await self._released.wait()
            self._check()

    async def _wait_uploads(self, need: int) -> bool:
        """When the open files' part uploads will release ``need`` bytes, wait until one of
        them (or a file being closed) finishes and return True; False otherwise."""
        inflight, uploads = in_flight(self._streams.values())
        if not uploads or inflight < need:
            return False
        self._released.clear()
        released = asyncio.ensure_future(self._released.wait())
        try:
            await asyncio.wait([*uploads, released], return_when=asyncio.FIRST_COMPLETED)
        finally:
            released.cancel()
        self._check()
        return True

    # ----------------------------------------------------------------- age

    def _cut_aged(self) -> None:
        """Cut the streams whose oldest open file reached ``max_age``."""
        if self.max_age is None:
            return
        now = self._clock()
        for stream in self._streams.values():
            if stream.opened_at is not None and now - stream.opened_at >= self.max_age:
                self._cut(stream, "age")

    async def _age_loop(self) -> None:
        assert self.max_age is not None
        while True:
            await asyncio.sleep(min(self.max_age / 4, 1.0))
            async with self._lock:
                if self._state != "open":
                    return
                self._cut_aged()
