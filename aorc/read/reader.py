"""The async read driver: the only reader code that awaits.

Opening a file is one request for its last 16 KiB (two when the tail is longer)::

    async with open_reader("data.orc") as reader:
        print(reader.schema, reader.num_rows)
        async for batch in reader.iter_batches(columns=["a", "b.c"]):
            ...

Every read -- whole, some columns, filtered, some stripes -- is planned by
:class:`aorc.read.plan.ReadPlan`, which performs no I/O: it says which byte ranges each
group of consecutive stripes (about :data:`GROUP_BYTES`) needs, this driver fetches them
(coalesced, in one :meth:`Store.read_ranges` call per round) and pushes the bytes back, then
decodes the group's stripes on the decode thread pool (:mod:`aorc.threads`) while the
next group is being fetched, so at most two groups' bytes are held at once, and at most
``use_threads`` stripes are decoded at once. Bytes that lie in the tail read at open time
cost no request (a small file is read in one). The stripe footers a read parses are kept for
the reader's next reads (:mod:`aorc.read.footers`, at most :data:`FOOTER_CACHE_BYTES`).

Errors raised while reading a stripe name the file and the stripe; stray exceptions of
decoders (IndexError, struct.error, ...) are turned into CorruptFileError as a last resort.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import dataclasses
from collections.abc import AsyncGenerator, Awaitable, Generator, Mapping, Sequence
from types import TracebackType
from typing import Any, TypeVar

import pyarrow as pa

from aorc.errors import AorcError, CorruptFileError, ObjectChangedError, SchemaError, StoreError
from aorc.filters.predicate import parse_filters
from aorc.format._proto import orc_proto_pb2 as pb
from aorc.format.codec.compression import DEFAULT_MAX_DECODED_BYTES
from aorc.format.columns import DecodeOptions
from aorc.format.columns.base import with_timestamp_unit
from aorc.format.columns.timestamps import check_timestamp_unit
from aorc.format.projection import requested_order, select_columns
from aorc.format.statistics import StatisticsList
from aorc.format.tail import TAIL_READ_SIZE, FileTail, NeedBytes, parse_tail
from aorc.format.types import OrcType, TypeKind, to_arrow_schema, type_string
from aorc.io import IOStats, Source, Store, open_store
from aorc.io.base import gather_or_cancel
from aorc.keys import KeyProvider
from aorc.read import footers as _footers
from aorc.read import plan as _plan
from aorc.read.common import (
    INLINE_BYTES,
    check_max_decoded_bytes,
    guarded,
    raise_in_context,
    run_light,
    stream_kind_name,
)
from aorc.read.dictionary import check_read_dictionary, dictionary_columns, dictionary_schema
from aorc.read.export import BatchStream, blocking_reader, export_stream, home_loop
from aorc.read.footers import FooterCache
from aorc.read.keyed import EncryptionView, apply_keys
from aorc.read.plan import (
    GroupPlan,
    ReadPlan,
    SliceSource,
    StripeJob,
    parse_layout,
)
from aorc.read.pushdown import ScanStats
from aorc.read.records import (
    ColumnEncodingInfo,
    StreamDescription,
    StripeFooterInfo,
    StripeMetadata,
    WriterInfo,
)
from aorc.read.slices import decode_slices, slice_rows
from aorc.read.stripe_run import decode_stripe
from aorc.threads import shared_pool, thread_count

__all__ = [
    "ColumnEncodingInfo",
    "OrcReader",
    "ScanStats",
    "StreamDescription",
    "StripeFooterInfo",
    "StripeMetadata",
    "WriterInfo",
    "check_read_dictionary",
    "open_reader",
]

T = TypeVar("T")

#: Stripes are fetched in groups of consecutive stripes of about this many bytes in total
#: (at least one stripe); the next group is fetched while the current one decodes (read
#: at each read, so it can be tuned here).
GROUP_BYTES = _plan.GROUP_BYTES
#: A group of stripes spanning at most this many bytes is read whole, in one request, even
#: when only some columns are wanted (a round trip costs more than that many bytes).
WHOLE_READ_BYTES = _plan.WHOLE_READ_BYTES
#: The bytes of stripe footers a reader keeps for its next reads (read at open): see
#: :mod:`aorc.read.footers`.
FOOTER_CACHE_BYTES = _footers.FOOTER_CACHE_BYTES


# =========================================================================== the reader

class OrcReader(EncryptionView):
    """An open ORC file. Create it with :func:`open_reader`.

    File-level information (schema, statistics, stripes, metadata) is available at once;
    rows are read with :meth:`iter_batches` or :meth:`read`.

    Attributes:
        path: the file's name, as used in error messages.
    """

    def __init__(self, store: Store, tail: FileTail, tail_bytes: bytes, *,
                 owns_store: bool, timestamp_unit: str = "ns",
                 read_dictionary: Sequence[str] | None = None,
                 max_decoded_bytes: int = DEFAULT_MAX_DECODED_BYTES,
                 use_writer_timezone: bool = False) -> None:
        check_timestamp_unit(timestamp_unit)
        dictionary = dictionary_columns(tail.schema, read_dictionary)
        self._store = store
        self._tail = tail
        self._tail_bytes = memoryview(tail_bytes)
        self._tail_start = tail.file_length - len(tail_bytes)
        self._owns_store = owns_store
        self._tasks: set[asyncio.Task[Any]] = set()
        self._footers: dict[int, bytes | memoryview] = {}  # read_stripe_footer's, ahead
        self._footer_cache = FooterCache(FOOTER_CACHE_BYTES)  # parsed once, for every read
        self._closed = False
        self.path = store.path
        self._decode_options = DecodeOptions.from_tail(tail, timestamp_unit=timestamp_unit,
                                                       dictionary_strings=dictionary,
                                                       max_decoded_bytes=max_decoded_bytes,
                                                       use_writer_timezone=use_writer_timezone)
        self.timestamp_unit = timestamp_unit
        self.read_dictionary = tuple(read_dictionary or ())
        self._scan_stats = ScanStats()
        self._loop = home_loop()  # the loop Arrow streams of this reader pull on

    # ------------------------------------------------------------------ file information
    @property
    def schema(self) -> pa.Schema:
        """The Arrow schema of the rows (a non-struct root is one column ``_col0``)."""
        opts = self._decode_options
        if opts.dictionary_strings:
            return dictionary_schema(self._tail.schema, opts)
        schema, instant = to_arrow_schema(self._tail.schema), opts.use_writer_timezone
        if self.timestamp_unit == "ns" and not instant:
            return schema
        return pa.schema([f.with_type(with_timestamp_unit(f.type, self.timestamp_unit, instant))
                          for f in schema], metadata=schema.metadata)

    @property
    def orc_type(self) -> str:
        """The file's ORC type as a string, e.g. ``struct<a:int,b:string>``."""
        return type_string(self._tail.schema)

    @property
    def orc_schema(self) -> OrcType:
        """The file's ORC type tree (with type attributes, which ``orc_type`` omits)."""
        return self._tail.schema

    @property
    def num_rows(self) -> int:
        """Rows in the file, as the footer records them."""
        return self._tail.num_rows

    @property
    def num_stripes(self) -> int:
        """Number of stripes."""
        return len(self._tail.stripes)

    @property
    def stripes(self) -> list[StripeMetadata]:
        """Location, row count and statistics of each stripe."""
        stats = self._tail.stripe_statistics
        if stats is not None and len(stats) != len(self._tail.stripes):
            stats = None
        names = self.column_names()
        return [StripeMetadata(s.index, s.offset, s.index_length, s.data_length,
                               s.footer_length, s.num_rows,
                               StatisticsList(stats[s.index], names)
                               if stats is not None else None)
                for s in self._tail.stripes]

    @property
    def statistics(self) -> StatisticsList:
        """File-level column statistics, indexed by column id (0 is the root; ids are
        pre-order) or by dotted column name, e.g. ``reader.statistics["address.city"]``
        (names as :meth:`column_names` gives them)."""
        return StatisticsList(self._tail.column_statistics, self.column_names())

    @property
    def metadata(self) -> dict[str, bytes]:
        """User metadata key/value pairs."""
        return dict(self._tail.user_metadata)

    @property
    def compression(self) -> str:
        """The codec: ``"none"``, ``"zlib"``, ``"snappy"``, ``"lzo"``, ``"lz4"``, ``"zstd"``."""
        return self._tail.compression.name.lower()

    @property
    def compression_block_size(self) -> int:
        """The compression block (chunk) size in bytes."""
        return self._tail.block_size

    @property
    def file_version(self) -> str:
        """The format version, ``"0.11"``, ``"0.12"`` or ``"UNSTABLE-PRE-2.0"``."""
        return self._tail.format_version

    @property
    def writer(self) -> WriterInfo:
        """Which software wrote the file."""
        t = self._tail
        return WriterInfo(t.writer_name, t.writer, t.writer_version, t.writer_version_name,
                          t.software_version)

    @property
    def row_index_stride(self) -> int:
        """Rows per row group (0: no row index)."""
        return self._tail.row_index_stride

    @property
    def calendar(self) -> str:
        """How dates and timestamps were counted: ``"JULIAN_GREGORIAN"``,
        ``"PROLEPTIC_GREGORIAN"`` or ``"UNKNOWN_CALENDAR"`` (not recorded)."""
        return str(pb.CalendarKind.Name(self._tail.calendar))

    @property
    def file_length(self) -> int:
        """The file's size in bytes."""
        return self._tail.file_length

    @property
    def etag(self) -> str | None:
        """The object's ETag on S3, to which every read of this reader is pinned (pass it as
        the ``if_match`` storage option to read the same version again later); ``None``
        for other stores."""
        etag = getattr(self._store, "etag", None)
        return etag if isinstance(etag, str) else None

    @property
    def io_stats(self) -> IOStats:
        """Requests and bytes read so far (a live counter; use ``snapshot()`` to keep one)."""
        return self._store.stats

    @property
    def scan_stats(self) -> ScanStats:
        """What filtered reads (``filters=``) through this reader pruned and read so far:
        stripes and row groups in total, pruned by statistics and by bloom filters, rows
        decoded and returned, and the store's requests and bytes (a snapshot)."""
        io = self._store.stats
        return dataclasses.replace(self._scan_stats, requests=io.requests, bytes=io.bytes)

    def column_names(self) -> list[str]:
        """A dotted path name per column id (root ``""``), as ``columns=`` accepts them:
        struct fields by name, list elements ``item``, map ``key``/``value``, union
        branches ``_union_N`` (e.g. ``"a.item.b"`` for ``a:array<struct<b:int>>``).

        Returns:
            One name per ORC column id.
        """
        names = [""] * (self._tail.schema.max_column_id + 1)

        def walk(t: OrcType, prefix: str) -> None:
            names[t.column_id] = prefix
            if t.kind == TypeKind.STRUCT:
                subs = list(t.field_names)
            elif t.kind == TypeKind.MAP:
                subs = ["key", "value"]
            elif t.kind == TypeKind.UNION:
                subs = [f"_union_{i}" for i in range(len(t.children))]
            else:  # a list's elements (no children for primitives)
                subs = ["item"] * len(t.children)
            for child, sub in zip(t.children, subs, strict=True):
                walk(child, ".".join(p for p in (prefix, sub) if p))

        walk(self._tail.schema, "" if self._tail.schema.kind == TypeKind.STRUCT else "_col0")
        return names

    # ------------------------------------------------------------------ life cycle
    async def close(self) -> None:
        """Cancel background fetches and close the store (when the reader opened it)."""
        if self._closed:
            return
        self._closed = True
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if self._owns_store:
            await self._store.close()

    async def __aenter__(self) -> OrcReader:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc: BaseException | None, tb: TracebackType | None) -> None:
        await self.close()

    def _spawn(self, coro: Awaitable[T]) -> asyncio.Task[T]:
        task: asyncio.Task[T] = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def _check_open(self) -> None:
        if self._closed:
            raise StoreError(f"{self.path}: the reader is closed")

    # ------------------------------------------------------------------ byte access
    async def _read_ranges(self, ranges: Sequence[tuple[int, int]], *,
                           coalesce: bool = True) -> list[bytes | memoryview]:
        """Fetch ranges, serving those inside the tail read at open time from memory.

        With ``coalesce=False`` each range is its own request (all run concurrently).
        """
        out: list[bytes | memoryview] = []
        missing: list[int] = []
        for i, (offset, length) in enumerate(ranges):
            if offset >= self._tail_start and offset + length <= self._tail.file_length:
                start = offset - self._tail_start
                out.append(self._tail_bytes[start:start + length])
            else:
                out.append(b"")
                missing.append(i)
        if missing:
            wanted = [ranges[i] for i in missing]
            if coalesce:
                fetched = await self._store.read_ranges(wanted)
            else:
                fetched = await gather_or_cancel([self._store.read_range(o, n)
                                                  for o, n in wanted])
            for i, data in zip(missing, fetched, strict=True):
                out[i] = data
        return out

    # ------------------------------------------------------------------ stripe footers
    async def read_stripe_footer(self, index: int) -> StripeFooterInfo:
        """Read and describe the footer of stripe ``index`` (streams, encodings, zone).

        Raises:
            SchemaError: for an index out of range.
            CorruptFileError: when the footer is damaged.

        Args:
            index: the stripe's index in the file (0-based).

        Returns:
            The stripe's :class:`StripeFooterInfo`.
        """
        self._check_open()
        if not 0 <= index < len(self._tail.stripes):
            raise SchemaError(f"{self.path}: no stripe {index} (the file has "
                              f"{len(self._tail.stripes)})")
        stripe = self._tail.stripes[index]
        known = self._known_footers()
        raw: bytes | memoryview | None = known.get(index)
        if raw is None:
            raw = self._footers.pop(index, None)
        if raw is None:  # fetch it with the next stripes' footers, for the next calls (those
            # fetched ahead before and not asked for are dropped: at most FOOTERS_AHEAD kept)
            every = self._tail.stripes
            ahead = [i for i in range(index, min(len(every), index + 1 + _plan.FOOTERS_AHEAD))
                     if i == index or i not in known]
            got = await self._read_ranges([(every[i].footer_offset, every[i].footer_length)
                                           for i in ahead], coalesce=False)
            self._footers = dict(zip(ahead, got, strict=True))
            raw = self._footers.pop(index)
        footer, layout = await asyncio.to_thread(parse_layout, self.path, self._tail, stripe,
                                                 raw)
        known.put(index, raw)
        return StripeFooterInfo(
            index=index,
            streams=tuple(StreamDescription(s.column, stream_kind_name(s.kind), s.offset,
                                            s.length) for s in layout),
            encodings=tuple(ColumnEncodingInfo(
                column, pb.ColumnEncoding.Kind.Name(e.kind),
                e.dictionarySize if e.HasField("dictionarySize") else None)
                for column, e in enumerate(footer.columns)),
            writer_timezone=footer.writerTimezone if footer.HasField("writerTimezone")
            else None,
        )

    # ------------------------------------------------------------------ reading rows
    def iter_batches(self, columns: Sequence[str] | None = None, batch_size: int = 65536,
                     filters: Any = None, *, stripes: Sequence[int] | None = None,
                     use_threads: bool | int = True) -> BatchStream:
        """Iterate over the rows as Arrow record batches of at most ``batch_size`` rows.

        Batches never span stripes. The next stripes' bytes are fetched while the current
        ones are decoded in worker threads. The iterator is also an Arrow C stream
        (``__arrow_c_stream__``, :meth:`BatchStream.to_reader`): DuckDB, Polars and pyarrow
        can stream it from another thread (see :mod:`aorc.read.export`). To stop early,
        close the iterator (e.g. with ``contextlib.aclosing``) or the reader: either cancels
        the fetch in progress.

        Args:
            columns: names of the columns to read: top-level names or dotted paths into
                nested structs (``"a.b"``); ``None`` reads every column.
            batch_size: the largest number of rows per batch.
            filters: only rows matching these, in pyarrow.parquet's form: a list of
                ``(column, op, value)`` tuples (AND) or a list of such lists (OR of ANDs);
                ops ``==``, ``=``, ``!=``, ``<``, ``<=``, ``>``, ``>=``, ``in``, ``not in``,
                ``is null``, ``is not null`` (see :mod:`aorc.filters.predicate`); or a
                :class:`pyarrow.compute.Expression` such as ``pc.field("x") > 5``, whose
                parts that map to these ops prune and which filters the rows exactly
                (see :mod:`aorc.filters.expression`). Stripes and row
                groups that cannot match are skipped using statistics and bloom filters,
                and only the surviving row groups' bytes are read; :attr:`scan_stats` says
                what was skipped. Filtered columns need not be among ``columns``.
            stripes: indices of the stripes to read (see :attr:`stripes`), e.g. a split's;
                ``None`` reads all. Rows come in file order whatever the order given.
            use_threads: decode stripes and columns on several threads: ``True`` on as
                many as there are CPUs, ``False`` on one, or a number of threads. The
                threads come from one pool per process.

        Raises:
            SchemaError: for an unknown column name, malformed filters, a stripe index out
                of range, a bad ``use_threads`` or a batch size below 1 (raised here, before
                iteration starts).
            CorruptFileError: (during iteration) when the file is damaged; the message names
                the file and the stripe.

        Returns:
            An async iterator of ``pyarrow.RecordBatch`` (a :class:`BatchStream`).
        """
        self._check_open()
        if not isinstance(batch_size, int) or batch_size < 1:
            raise SchemaError(f"batch_size must be a positive integer, got {batch_size!r}")
        threads = thread_count(use_threads)
        plan = self._plan(columns, filters, stripes, threads)
        source = self._batches(plan, batch_size, threads, overlap=False)
        order, schema = requested_order(self._tail.schema, columns), plan.schema()
        if order is not None:
            source = _reordered(source, order)
            schema = pa.schema([schema.field(name) for name in order])
        return BatchStream(source, schema, self._loop, self.path)

    def __arrow_c_stream__(self, requested_schema: object | None = None) -> object:
        """Every row as an Arrow C stream (the Arrow PyCapsule interface: DuckDB, Polars,
        pyarrow), read when the consumer pulls; each call is a read of its own. For some
        columns or rows, export ``reader.iter_batches(columns, filters=...)``. Pulls run on
        the reader's event loop (see :mod:`aorc.read.export`).

        Raises:
            AorcError: called from a coroutine of the reader's own event loop (a deadlock:
                use :mod:`aorc.sync` or a worker thread), or that loop is not running.
            SchemaError: a requested schema the rows cannot be cast to.
        """
        return export_stream(blocking_reader(self.schema, self.iter_batches, self._loop,
                                             self.path), requested_schema)

    async def read(self, columns: Sequence[str] | None = None, filters: Any = None, *,
                   stripes: Sequence[int] | None = None,
                   use_threads: bool | int = True) -> pa.Table:
        """Read the whole file (or the selected columns, or stripes, or the matching rows)
        into an Arrow table.

        Args:
            columns: as for :meth:`iter_batches`.
            filters: as for :meth:`iter_batches`.
            stripes: as for :meth:`iter_batches`.
            use_threads: as for :meth:`iter_batches`.

        Returns:
            The rows read, as a ``pyarrow.Table``.

        Raises:
            SchemaError: as :meth:`iter_batches`.
            CorruptFileError: the file is damaged (the message names the stripe).
            ResourceLimitError: a stripe would decode to more than ``max_decoded_bytes`` or to
                more than memory holds.
        """
        self._check_open()
        threads = thread_count(use_threads)
        plan = self._plan(columns, filters, stripes, threads)
        batches = [b async for b in self._batches(plan, None, threads, overlap=True)]
        return self._table(plan, batches, columns)

    def read_buffered(self, columns: Sequence[str] | None = None,
                      filters: Any = None) -> pa.Table | None:
        """:meth:`read` on this thread, without I/O, when the bytes read at open time hold
        every range the read needs (a small file read whole); ``None`` otherwise. Datasets
        of many small files decode a group of files per worker task with it.

        Args:
            columns: as for :meth:`read`.
            filters: as for :meth:`read`.

        Returns:
            The rows read, or ``None`` when the read needs more bytes than were read at open time.

        Raises:
            CorruptFileError: the file is damaged (as :meth:`read`).
            ResourceLimitError: as :meth:`read`.
        """
        self._check_open()
        plan = self._plan(columns, filters, None, 1)
        batches: list[pa.RecordBatch] = []
        for group in plan.groups():
            try:
                need = group.needs()
                while need is not None:
                    if any(o < self._tail_start or o + n > self._tail.file_length
                           for o, n in need.ranges):
                        return None
                    start = self._tail_start
                    group.push(need.ranges, [self._tail_bytes[o - start:o - start + n]
                                             for o, n in need.ranges])
                    need = group.needs()
            except AorcError as exc:
                raise_in_context(exc, self.path, group.where)
            for job in group.jobs():
                batches += job.run()
        return self._table(plan, batches, columns)

    def _table(self, plan: ReadPlan, batches: list[pa.RecordBatch],
               columns: Sequence[str] | None) -> pa.Table:
        """A read's batches as one table, its columns in the order asked for."""
        table = (pa.Table.from_batches(batches, schema=batches[0].schema) if batches
                 else pa.Table.from_batches([], schema=plan.schema()))
        order = requested_order(self._tail.schema, columns)
        return table if order is None else table.select(order)

    def _plan(self, columns: Sequence[str] | None, filters: Any,
              stripes: Sequence[int] | None, threads: int) -> ReadPlan:
        selected = select_columns(self._tail.schema, columns)
        predicate = parse_filters(filters, self._tail.schema)
        return ReadPlan(self._tail, selected, stripes=stripes, predicate=predicate,
                        opts=self._decode_options, stats=self._scan_stats, path=self.path,
                        group_bytes=GROUP_BYTES, whole_read_bytes=WHOLE_READ_BYTES,
                        threads=threads, footers=self._known_footers())

    def _known_footers(self) -> FooterCache:
        """The footers kept, those of the version the store is pinned to (its ETag)."""
        self._footer_cache.pin(self.etag)
        return self._footer_cache

    async def _batches(self, plan: ReadPlan, batch_size: int | None, threads: int, *,
                       overlap: bool) -> AsyncGenerator[pa.RecordBatch, None]:
        groups = (await asyncio.to_thread(plan.groups) if plan.scan is not None
                  else plan.groups())
        if not groups:
            return
        # Closed with this generator: an early stop cancels the decodes and the fetch at once.
        async with contextlib.aclosing(self._decoded(groups, threads, overlap,
                                                     slice_rows(batch_size))) as decoded:
            async for batches in decoded:
                if not isinstance(batches, list):  # a SliceSource
                    async with contextlib.aclosing(decode_slices(
                            batches, batch_size or 1, threads, self._spawn)) as sliced:
                        async for batch in sliced:
                            yield batch
                    continue
                for batch in batches:
                    if batch_size is None or batch.num_rows <= batch_size:
                        yield batch
                        continue
                    for start in range(0, batch.num_rows, batch_size):
                        yield batch.slice(start, batch_size)

    async def _decoded(self, groups: list[GroupPlan], threads: int, overlap: bool,
                       slice_rows: int | None = None
                       ) -> AsyncGenerator[list[pa.RecordBatch] | SliceSource, None]:
        """The batches of each stripe, in order.

        A stream (``slice_rows``, see :func:`slice_rows`) gets a stripe of more rows than that as a
        :class:`SliceSource` to decode slice by slice, so that it holds about one batch
        per column whatever the stripe's row count.

        Up to ``threads`` stripes of a group decode at once; the next group is fetched
        meanwhile. With ``overlap`` (a whole read, which keeps every batch anyway) the next
        group's first stripe starts as soon as the current group's last one no longer needs
        every thread, and the group after is fetched once no stripe of the current one is
        left in the decode window: the bytes of at most two groups are held. Without it (a
        stream) the next group starts once the current one is handed out, so that at most one
        group's decoded stripes exist besides the batch the caller holds.
        """
        # Groups are dropped as they are taken: a group holds its fetched bytes, so keeping
        # the list would keep every stripe's bytes until the read ends.
        queue = collections.deque(groups)
        groups.clear()
        jobs: collections.deque[tuple[int, StripeJob]] = collections.deque()
        window: collections.deque[
            tuple[int, asyncio.Task[list[pa.RecordBatch] | SliceSource]]] = (
            collections.deque())
        limit = asyncio.Semaphore(threads)
        taken = 0  # groups whose jobs were taken
        pending: asyncio.Task[list[StripeJob]] | None = None

        def prefetch() -> None:
            nonlocal pending
            if pending is None and queue and all(g == taken - 1 for g, _ in window):
                pending = self._spawn(self._fetch(queue[0].plan.next_group(queue)))

        try:
            while True:
                prefetch()
                while len(window) < threads:
                    if not jobs:
                        if pending is None or (window and not (overlap and pending.done())):
                            break  # nothing to start without waiting for bytes
                        jobs.extend((taken, job) for job in await pending)
                        taken += 1
                        pending = None
                        prefetch()
                        continue
                    group, job = jobs.popleft()
                    window.append((group, self._spawn(self._decode(job, threads, limit,
                                                                   slice_rows))))
                if not window:
                    return  # no jobs, no fetch in progress and no group left
                if overlap and pending is not None and not jobs and len(window) < threads:
                    # A thread is free: start the next group's stripes if its bytes come
                    # before the oldest stripe is decoded.
                    await asyncio.wait([window[0][1], pending],
                                       return_when=asyncio.FIRST_COMPLETED)
                    if pending.done() and not window[0][1].done():
                        continue
                yield await window.popleft()[1]
        finally:
            tasks = [t for _, t in window] + ([pending] if pending is not None else [])
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    async def _fetch(self, group: GroupPlan) -> list[StripeJob]:
        """Fetch what a group needs, round after round, and push it to the group."""
        self._check_open()
        try:
            need = await run_light(group.light_start, group.needs)
            while need is not None:
                data = await self._read_ranges(need.ranges, coalesce=need.coalesce)
                light = group.light_push or sum(map(len, data)) <= INLINE_BYTES
                await run_light(light, group.push, need.ranges, data)
                need = group.needs()
        except AorcError as exc:
            raise_in_context(exc, self.path, group.where)
        return group.jobs()

    async def _decode(self, job: StripeJob, threads: int, limit: asyncio.Semaphore,
                      slice_rows: int | None = None) -> list[pa.RecordBatch] | SliceSource:
        """Decode one stripe on the decode pool: its parts in parallel (``threads`` > 1).
        A stripe of more than ``slice_rows`` rows that can be decoded in slices is not:
        its :class:`SliceSource` is returned."""
        if slice_rows is not None and job.slices is not None and job.num_rows > slice_rows:
            sliced: SliceSource = job.guard(job.slices)
            return sliced
        loop = asyncio.get_running_loop()
        async with limit:
            if threads == 1:
                return await loop.run_in_executor(shared_pool(), job.run)
            return await decode_stripe(job, threads)


async def _reordered(source: AsyncGenerator[pa.RecordBatch, None],
                     order: list[str]) -> AsyncGenerator[pa.RecordBatch, None]:
    """The batches of ``source`` with their columns in ``order``."""
    try:
        async for batch in source:
            yield batch.select(order)
    finally:
        await source.aclose()


# =========================================================================== opening

def _parse_tail(path: str, tail: bytes, size: int) -> FileTail | NeedBytes:
    return guarded(path, None, lambda: parse_tail(tail, size, source=path))


async def _load(source: Source, storage_options: Mapping[str, Any] | None,
                timestamp_unit: str = "ns",
                read_dictionary: Sequence[str] | None = None,
                max_decoded_bytes: int = DEFAULT_MAX_DECODED_BYTES,
                keys: KeyProvider | None = None, use_writer_timezone: bool = False) -> OrcReader:
    check_timestamp_unit(timestamp_unit)
    check_read_dictionary(read_dictionary)
    check_max_decoded_bytes(max_decoded_bytes)
    owns_store = not isinstance(source, Store)
    store = open_store(source, storage_options)
    try:
        tail_bytes, size = await store.read_tail(TAIL_READ_SIZE)
        tail = await run_light(len(tail_bytes) <= INLINE_BYTES, _parse_tail, store.path,
                               tail_bytes, size)
        if isinstance(tail, NeedBytes):
            tail_bytes, new_size = await store.read_tail(tail.n)
            if new_size != size:
                raise ObjectChangedError(f"{store.path}: the file changed size while it was "
                                         f"being opened ({size} -> {new_size} bytes)")
            tail = await asyncio.to_thread(_parse_tail, store.path, tail_bytes, size)
            if isinstance(tail, NeedBytes):
                raise CorruptFileError(f"{store.path}: the file tail asks for {tail.n} bytes "
                                       f"after {len(tail_bytes)} were read")
        tail = await apply_keys(store, tail, tail_bytes, keys)
        return OrcReader(store, tail, tail_bytes, owns_store=owns_store,
                         timestamp_unit=timestamp_unit, read_dictionary=read_dictionary,
                         max_decoded_bytes=max_decoded_bytes,
                         use_writer_timezone=bool(use_writer_timezone))
    except BaseException:
        if owns_store:
            await store.close()
        raise


class _OpenReader:
    """What :func:`open_reader` returns: use ``async with`` (or ``await``, then close)."""

    def __init__(self, *args: Any) -> None:
        self._args = args  # those of _load
        self._reader: OrcReader | None = None

    def __await__(self) -> Generator[Any, None, OrcReader]:
        return _load(*self._args).__await__()

    async def __aenter__(self) -> OrcReader:
        self._reader = await _load(*self._args)
        return self._reader

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc: BaseException | None, tb: TracebackType | None) -> None:
        if self._reader is not None:
            await self._reader.close()


def open_reader(source: Source, *, storage_options: Mapping[str, Any] | None = None,
                timestamp_unit: str = "ns",
                read_dictionary: Sequence[str] | None = None,
                max_decoded_bytes: int = DEFAULT_MAX_DECODED_BYTES,
                keys: KeyProvider | None = None, use_writer_timezone: bool = False) -> _OpenReader:
    """Open an ORC file for reading.

    Use as ``async with open_reader(path) as reader: ...``; ``reader = await
    open_reader(path)`` also works, and then ``await reader.close()`` is up to you.

    Args:
        source: where the file is:

            - a local path (``str`` or ``os.PathLike``) or a ``file://`` URL;
            - an ``s3://bucket/key`` (or ``s3a://``) URL: S3 or an S3-compatible store
              (MinIO, ...), configured by ``storage_options`` and the AWS environment;
            - a bytes-like object (``bytes``, ``bytearray``, ``memoryview``) holding a
              whole ORC file;
            - a :class:`aorc.io.Store` (e.g. from :func:`aorc.open_store`), used as it is
              and not closed with the reader.
        storage_options: store settings: S3 connection and credentials (``endpoint_url``,
            ``region``, ``key``/``secret``, ``anon``, ...) and read tuning
            (``max_merge_distance``, ``max_request_size``, ``max_concurrency``); see
            :func:`aorc.io.open_store`. Not allowed with a Store (it is configured).
        timestamp_unit: the unit of the timestamps returned: ``"s"``, ``"ms"``, ``"us"`` or
            ``"ns"`` (the default, as pyarrow.orc); ``"us"`` holds every ORC timestamp
            (year 9999 too). A value outside the unit's range raises an error naming this
            option; coarser units floor the values.
        read_dictionary: string, char, varchar or binary columns (top-level names or
            dotted paths; a nested column names every string column in it) read as Arrow
            ``dictionary<int32, string>`` arrays, as ``pyarrow.parquet.read_table``'s
            option: a dictionary-encoded stripe keeps ORC's own dictionary (no expansion),
            a directly encoded one is dictionary-encoded as it is read.
        max_decoded_bytes: the most bytes the decompressed streams (and dictionary tables)
            of one stripe may take, 1 GiB by default: beyond it a read raises
            :class:`~aorc.errors.ResourceLimitError` before allocating (see "Resource
            limits" in the user guide). Raise it for stripes that decompress to more.
        keys: an :class:`aorc.KeyProvider` for encrypted columns: those whose key it holds
            read decrypted, the others masked; a wrong key raises :class:`aorc.DecryptionError`.
        use_writer_timezone: read ``timestamp`` columns as the instants they hold in the
            writer's time zone (each stripe footer's), typed ``timestamp[unit, UTC]``, as
            ORC C++'s ``setUseWriterTimezone`` (ORC-2213), instead of the writer's
            wall-clock times (naive); for writers that stored zoned instants there.

    Raises:
        ObjectNotFoundError: when the file does not exist.
        CorruptFileError: when the file's tail is damaged (an empty, 0-byte file too).
        UnsupportedVersionError: for a future format version.
        SchemaError: a ``read_dictionary`` column that is unknown or holds no strings, or a
            ``max_decoded_bytes`` that is not a positive integer.

    Returns:
        An :class:`OrcReader`, opened when awaited or entered with ``async with``.
    """
    return _OpenReader(source, storage_options, timestamp_unit, read_dictionary,
                       max_decoded_bytes, keys, use_writer_timezone)
