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
Its user metadata records the topic, partition, first and last offset.

Rolling and committing. The files of a stream roll together: a *cut* closes every open file
of the stream at the same position, uploads them, and then awaits ``on_commit`` with a
:class:`SinkCommit` naming the files and the stream's position (every record up to
``offset`` is in complete files). Cuts of one stream commit in order; the files of a cut are
completed only after the previous cut's commit returned. A cut happens before the first
record that would take one of the stream's files past ``max_rows`` rows, ``max_bytes``
(Arrow bytes, estimated per row: fixed widths, string lengths) or ``max_event_span`` of
event time; those decisions depend only on the stream's records since the last cut, so a
replay cuts at the same records and writes byte-identical files (with nested columns, whose
size estimate is their batch's average, cuts by bytes may move). ``max_age`` (wall clock, for
quiet streams), the memory budget, :meth:`RollingSink.flush` and :meth:`RollingSink.close`
also cut, at positions that depend on timing.

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
killed process leaves no visible partial object either (S3 shows objects only when complete;
local files are renamed into place), but it can leave incomplete multipart uploads, which a
bucket lifecycle rule (``AbortIncompleteMultipartUpload``) removes.

Memory. An open file's rows stay in memory (compact Arrow copies) until its cut, so
:attr:`RollingSink.memory_in_use` counts the rows of open files plus those of files being
written. When a write would take it past ``memory_budget``, the stream owning the oldest open
file is cut early (repeatedly, oldest first) and the write waits for uploads to finish. A
file is therefore never larger (in Arrow bytes) than ``memory_budget``; keep ``max_bytes``
well below it.
"""

from __future__ import annotations

import asyncio
import datetime
import os
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

import numpy as np
import pyarrow as pa

from aorc.errors import AorcError, SchemaError
from aorc.format.arrow import as_record_batches, conform
from aorc.format.types import from_arrow_schema
from aorc.io.registry import make_parents
from aorc.options import WriteOptions
from aorc.sink.plan import (
    DEFAULT_TIME_PARTITIONING,
    HIVE_DEFAULT_PARTITION,
    INT64_MAX,
    INT64_MIN,
    PIECE_OVERHEAD,
    OpenFile,
    Partitioner,
    Piece,
    Routing,
    StreamState,
    check_offsets,
    file_name,
    held_bytes,
    join_uri,
    make_limits,
    partition_segment,
    positive,
    roll_point,
)
from aorc.write.writer import open_writer

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

#: A stream whose rows since its last cut arrived in more pieces than this gets them merged.
COMPACT_PIECES = 32
#: Rows of one write are handled in chunks of at most this share of the memory budget.
CHUNK_SHARE = 8

CommitCallback = Callable[["SinkCommit"], Awaitable[None]]


# =========================================================================== results

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
    """

    rows_written: int = 0
    files_written: int = 0
    bytes_written: int = 0
    commits: int = 0
    cuts: dict[str, int] = field(default_factory=dict)
    peak_memory: int = 0
    peak_open_files: int = 0


# =========================================================================== the sink

class RollingSink:
    """Writes record streams into rolling, partitioned ORC files (see the module docstring).

    Use as ``async with RollingSink(...) as sink``: leaving the block normally flushes and
    commits everything (:meth:`close`); an exception or a cancellation aborts (:meth:`abort`).

    Args:
        prefix: a local folder or an ``s3://bucket/prefix``.
        schema: the Arrow schema of the rows given to :meth:`write`.
        partition_by: columns whose values name partition folders (``country=DE``); they are
            left out of the files (as Hive and Spark do) unless ``drop_partition_columns`` is
            false.
        event_time: a timestamp (or date) column naming time partition folders.
        time_partitioning: the folders of ``event_time``, strftime codes in UTC (or
            ``time_zone``); default ``dt=%Y-%m-%d/hour=%H``. ``None``: no time folders.
        time_zone: the zone of the time folders; naive timestamps are taken as UTC.
        max_rows: cut before a file would exceed this many rows.
        max_bytes: cut before a file would exceed this many (estimated Arrow) bytes.
        max_event_span: cut before a file's event times would span this much.
        max_age: cut a stream whose oldest open file is this many seconds old (wall clock).
        memory_budget: bytes of rows held in memory (see the module docstring).
        max_open_uploads: files written to the store at once.
        on_commit: awaited with a :class:`SinkCommit` after each cut's files are complete.
        storage_options: settings of the store (see :func:`aorc.io.open_store`).
        drop_partition_columns: leave ``partition_by`` columns out of the files.
        options: an :class:`aorc.WriteOptions` for the files (default: the defaults).
        **write_options: fields of :class:`aorc.WriteOptions` (compression, stripe_size, ...),
            overriding ``options``.

    Raises:
        SchemaError: a bad option, or a column that is missing or of the wrong type.
    """

    def __init__(self, prefix: str | os.PathLike[str], schema: pa.Schema, *,
                 partition_by: Sequence[str] = (), event_time: str | None = None,
                 time_partitioning: str | None = DEFAULT_TIME_PARTITIONING,
                 time_zone: str = "UTC", max_rows: int | None = 1_000_000,
                 max_bytes: int | None = 64 << 20,
                 max_event_span: datetime.timedelta | None = None,
                 max_age: float | None = None, memory_budget: int = 256 << 20,
                 max_open_uploads: int = 8, on_commit: CommitCallback | None = None,
                 storage_options: Mapping[str, Any] | None = None,
                 drop_partition_columns: bool = True, options: WriteOptions | None = None,
                 **write_options: Any) -> None:
        self.prefix = os.fspath(prefix)
        self.schema = schema
        self._limits = make_limits(max_rows, max_bytes, max_event_span)
        self.max_age = positive("max_age", max_age, float)
        self.memory_budget = int(positive("memory_budget", memory_budget, int) or 0)
        self._uploads = asyncio.Semaphore(int(positive("max_open_uploads",
                                                        max_open_uploads, int) or 1))
        self._partitioner = Partitioner(schema, partition_by, event_time, time_partitioning,
                                         time_zone, self._limits.max_span is not None)
        dropped = set(partition_by) if drop_partition_columns else set()
        self.file_schema = pa.schema([f for f in schema if f.name not in dropped])
        if not len(self.file_schema):
            raise SchemaError("RollingSink: no columns left to write after dropping the "
                              "partition columns")
        self.write_options = WriteOptions.create(options, write_options, caller="RollingSink")
        self.write_options.resolve(from_arrow_schema(self.file_schema))  # check column names
        self._storage_options = dict(storage_options or {})
        self._on_commit = on_commit
        self._streams: dict[tuple[str, int], StreamState] = {}
        self._lock = asyncio.Lock()
        self._released = asyncio.Event()
        self._tasks: set[asyncio.Task[Any]] = set()
        self._timer: asyncio.Task[None] | None = None
        self._open_bytes = 0
        self._closing_bytes = 0
        self._seq = 0
        self._error: BaseException | None = None
        self._state = "open"  # open -> closed | aborted | failed
        self.stats = SinkStats()

    # ----------------------------------------------------------------- properties

    @property
    def memory_in_use(self) -> int:
        """Arrow bytes of the rows in open files and in files being written."""
        return self._open_bytes + self._closing_bytes

    @property
    def open_files(self) -> int:
        """Files currently open (rows buffered, not yet cut)."""
        return sum(len(s.files) for s in self._streams.values())

    def position(self, topic: str, partition: int) -> int | None:
        """The offset of the last row written for a stream (committed or not)."""
        stream = self._streams.get((topic, partition))
        return None if stream is None else stream.last_offset

    # ----------------------------------------------------------------- life cycle

    async def __aenter__(self) -> RollingSink:
        self._start_timer()
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc: BaseException | None, tb: TracebackType | None) -> None:
        if exc_type is None:
            await self.close()
        else:
            await self.abort()

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
            the first error of a file write or a commit callback (the sink then aborts).
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
            stream.files.clear()
            stream.staged.clear()
        self._open_bytes = 0

    async def _stop_timer(self) -> None:
        timer, self._timer = self._timer, None
        if timer is not None:
            timer.cancel()
            await asyncio.gather(timer, return_exceptions=True)

    async def flush(self, streams: Sequence[tuple[str, int]] | None = None) -> None:
        """Cut the given streams (default: all) and wait until their files are complete and
        committed, e.g. before a Kafka consumer gives up partitions."""
        self._check()
        async with self._lock:
            chosen = [s for key, s in self._streams.items() if streams is None or key in streams]
            for stream in chosen:
                self._cut(stream, "flush")
        await self._wait_chains(chosen)

    async def discard(self, streams: Sequence[tuple[str, int]]) -> None:
        """Forget streams without committing: drop their open files and cancel their files
        being written (a new owner replays them from their last commit)."""
        self._check()
        async with self._lock:
            for key in streams:
                stream = self._streams.pop(key, None)
                if stream is None:
                    continue
                self._open_bytes -= stream.mem_bytes
                stream.files.clear()
                stream.staged.clear()
                if stream.chain is not None:
                    stream.chain.cancel()
                    await asyncio.gather(stream.chain, return_exceptions=True)

    async def _wait_chains(self, streams: Sequence[StreamState]) -> None:
        for stream in streams:
            if stream.chain is not None:
                await stream.chain
        self._check()

    # ----------------------------------------------------------------- writing

    async def write(self, data: pa.RecordBatch | pa.Table, *, topic: str, partition: int,
                    offsets: int | str | Sequence[int] | np.ndarray | pa.Array) -> None:
        """Add rows of one stream.

        Args:
            data: rows with the sink's schema (a RecordBatch or a Table).
            topic: the stream's topic.
            partition: the stream's partition.
            offsets: the rows' offsets: the first one (the others follow consecutively), one
                per row (strictly increasing), or the name of a column holding them. They
                must be above every offset already written for the stream.

        Raises:
            SchemaError: rows or offsets that do not fit (the sink stays usable).
            AorcError: the sink is closed or broken by an earlier error.
        """
        self._check()
        self._start_timer()
        if not isinstance(topic, str) or not topic:
            raise SchemaError(f"topic must be a non-empty string, got {topic!r}")
        if isinstance(partition, bool) or not isinstance(partition, (int, np.integer)):
            raise SchemaError(f"partition must be an integer, got {partition!r}")
        batches = [conform(b, self.schema) for b in as_record_batches(data)]
        total = sum(b.num_rows for b in batches)
        offs = check_offsets(offsets, total, batches)
        key = (topic, int(partition))
        async with self._lock:
            self._check()
            stream = self._streams.get(key) or StreamState(topic, int(partition))
            if total and stream.last_offset is not None and offs[0] <= stream.last_offset:
                raise SchemaError(f"offsets of {topic}+{partition} must increase: got "
                                  f"{int(offs[0])} after {stream.last_offset}")
            self._streams[key] = stream
            start = 0
            for batch in batches:
                for piece in self._chunks(batch):
                    await self._write_piece(stream, piece, offs[start:start + piece.num_rows])
                    start += piece.num_rows

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
        await self._reserve(batch.nbytes + 64 * buffers + 8 * batch.num_rows + PIECE_OVERHEAD)
        pos, n = 0, batch.num_rows
        while pos < n:
            end, why = roll_point(self._limits, stream, routing, pos, n)
            if end == pos:
                self._cut(stream, why)
                continue
            self._append(stream, batch, routing, offs, pos, end)
            pos = end
        await self._reserve(0)  # in case the estimate fell short
        self._note_memory()

    def _file_ids(self, stream: StreamState, routing: Routing, pos: int,
                  end: int) -> np.ndarray:
        """The id (in the stream's epoch) of each row's file, opening files as needed."""
        groups, inverse = np.unique(routing.groups[pos:end], return_inverse=True)
        ids = np.empty(len(groups), dtype=np.int64)
        for k, group in enumerate(groups.tolist()):
            path = routing.paths[group]
            f = stream.files.get(path)
            if f is None:
                f = stream.files[path] = OpenFile(path, len(stream.files))
            ids[k] = f.id
        return ids[inverse.reshape(-1)]

    def _append(self, stream: StreamState, batch: pa.RecordBatch, routing: Routing,
                offs: np.ndarray, pos: int, end: int) -> None:
        """Stage rows ``pos:end``: one compact copy sorted by file, and the files' counters."""
        row_fids = self._file_ids(stream, routing, pos, end)
        order = np.argsort(row_fids, kind="stable")
        fids = row_fids[order]
        rows = order + pos
        starts = np.flatnonzero(np.r_[True, fids[1:] != fids[:-1]])
        stops = np.r_[starts[1:], len(fids)]
        counts = stops - starts
        est = np.add.reduceat(routing.sizes[rows], starts)
        bounds = _time_bounds(routing.times, rows, starts)
        files = list(stream.files.values())
        for k, fid in enumerate(fids[starts].tolist()):
            f = files[fid]
            if not f.rows:
                f.first = int(offs[rows[starts[k]]])
            f.last = int(offs[rows[stops[k] - 1]])
            f.rows += int(counts[k])
            f.est_bytes += int(est[k])
            if bounds is not None:
                f.tmin, f.tmax = min(f.tmin, int(bounds[0][k])), max(f.tmax, int(bounds[1][k]))
        copy = batch.select(self.file_schema.names).take(pa.array(rows))
        piece = Piece(copy, fids, held_bytes(copy) + fids.nbytes)
        if not stream.staged:
            self._seq += 1
            stream.epoch = self._seq
            stream.opened_at = time.monotonic()
        stream.staged.append(piece)
        self._add_bytes(stream, piece.nbytes)
        stream.last_offset = int(offs[end - 1])
        if len(stream.staged) > COMPACT_PIECES:
            self._compact(stream)

    def _compact(self, stream: StreamState) -> None:
        """Merge a stream's pieces into one (many small writes leave many small pieces)."""
        fids = np.concatenate([p.fids for p in stream.staged])
        order = np.argsort(fids, kind="stable")
        merged = pa.concat_batches([p.batch for p in stream.staged]).take(pa.array(order))
        piece = Piece(merged, fids[order], held_bytes(merged) + fids.nbytes)
        self._add_bytes(stream, piece.nbytes - stream.mem_bytes)
        stream.staged = [piece]

    def _add_bytes(self, stream: StreamState, nbytes: int) -> None:
        stream.mem_bytes += nbytes
        self._open_bytes += nbytes

    def _note_memory(self) -> None:
        self.stats.peak_memory = max(self.stats.peak_memory, self.memory_in_use)
        self.stats.peak_open_files = max(self.stats.peak_open_files, self.open_files)

    # ----------------------------------------------------------------- memory

    def _oldest(self) -> StreamState | None:
        """The stream holding the oldest rows."""
        live = [s for s in self._streams.values() if s.staged]
        return min(live, key=lambda s: s.epoch) if live else None

    async def _reserve(self, nbytes: int) -> None:
        """Make room for ``nbytes`` more: cut the streams holding the oldest rows until
        enough bytes are on their way out, then wait for uploads to release them."""
        while self.memory_in_use + nbytes > self.memory_budget:
            excess = self.memory_in_use + nbytes - self.memory_budget
            if self._closing_bytes < excess:
                victim = self._oldest()
                if victim is not None:
                    self._cut(victim, "memory")
                    continue
            if not self._closing_bytes:
                return  # nothing to wait for: the rows alone exceed the budget
            self._released.clear()
            await self._released.wait()
            self._check()

    def _release(self, nbytes: int) -> None:
        self._closing_bytes -= nbytes
        self._released.set()

    # ----------------------------------------------------------------- cuts

    def _cut(self, stream: StreamState, reason: str) -> None:
        """Close every open file of ``stream``: they are written, then committed, after the
        stream's previous cut committed."""
        if not stream.staged:
            return
        assert stream.last_offset is not None
        self._note_memory()
        files = list(stream.files.values())
        parts: list[list[pa.RecordBatch]] = [[] for _ in files]
        for piece in stream.staged:
            for fid, rows in piece.slices():
                parts[fid].append(rows)
        held = stream.mem_bytes
        self._open_bytes -= held
        self._closing_bytes += held
        stream.files, stream.staged, stream.mem_bytes, stream.opened_at = {}, [], 0, None
        self.stats.cuts[reason] = self.stats.cuts.get(reason, 0) + 1
        task = asyncio.create_task(self._finish_cut(
            stream, list(zip(files, parts, strict=True)), held, stream.chain, reason))
        stream.chain = task
        self._tasks.add(task)
        task.add_done_callback(self._task_done)

    def _task_done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if task.cancelled():
            return
        exc = task.exception()
        if exc is not None and self._error is None:
            self._error = exc
            if self._state == "open":
                self._state = "failed"
            self._released.set()

    async def _finish_cut(self, stream: StreamState,
                          files: list[tuple[OpenFile, list[pa.RecordBatch]]], held: int,
                          previous: asyncio.Task[None] | None, reason: str) -> None:
        offset = max(f.last for f, _ in files)
        try:
            if previous is not None:
                await previous
            written: list[SinkFile] = []
            tasks = [asyncio.create_task(self._write_file(stream, f, rows, written))
                     for f, rows in files]
            files.clear()  # the tasks own the rows now
            try:
                await asyncio.gather(*tasks)
            except BaseException:
                for task in tasks:
                    task.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)
                raise
        finally:
            files.clear()
            self._release(held)
        written.sort(key=lambda s: (s.partition_path, s.first_offset))
        if self._on_commit is not None:
            await self._on_commit(SinkCommit(stream.topic, stream.partition, offset,
                                             tuple(written), reason))
        self.stats.commits += 1

    async def _write_file(self, stream: StreamState, f: OpenFile, rows: list[pa.RecordBatch],
                          out: list[SinkFile]) -> None:
        async with self._uploads:
            uri = join_uri(self.prefix, f.path, file_name(stream.topic, stream.partition,
                                                          f.first))
            await make_parents(uri)
            metadata = {**self.write_options.metadata,
                        "aorc.sink.topic": stream.topic,
                        "aorc.sink.partition": str(stream.partition),
                        "aorc.sink.first_offset": str(f.first),
                        "aorc.sink.last_offset": str(f.last)}
            writer = open_writer(uri, self.file_schema, self.write_options,
                                 storage_options=self._storage_options, metadata=metadata)
            async with writer:
                batch = rows[0] if len(rows) == 1 else pa.concat_batches(rows)
                rows.clear()
                await writer.write(batch)
                del batch
        out.append(SinkFile(uri, f.path, stream.topic, stream.partition, f.first, f.last,
                            f.rows, writer.bytes_written))
        self.stats.files_written += 1
        self.stats.rows_written += f.rows
        self.stats.bytes_written += writer.bytes_written

    async def _age_loop(self) -> None:
        assert self.max_age is not None
        while True:
            await asyncio.sleep(min(self.max_age / 4, 1.0))
            now = time.monotonic()
            async with self._lock:
                if self._state != "open":
                    return
                for stream in self._streams.values():
                    if stream.opened_at is not None and now - stream.opened_at >= self.max_age:
                        self._cut(stream, "age")


def _time_bounds(times: np.ndarray | None, rows: np.ndarray,
                 starts: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """Smallest and largest event time (nulls ignored) of each run of ``rows``."""
    if times is None:
        return None
    t = times[rows]
    valid = t != INT64_MIN
    lo = np.minimum.reduceat(np.where(valid, t, INT64_MAX), starts)
    hi = np.maximum.reduceat(np.where(valid, t, INT64_MIN), starts)
    return lo, hi
