"""The async read driver: the only reader code that awaits.

Opening a file is one request for its last 16 KiB (two when the tail is longer)::

    async with open_reader("data.orc") as reader:
        print(reader.schema, reader.num_rows)
        async for batch in reader.iter_batches(columns=["a", "b.c"]):
            ...

Rows are read per group of consecutive stripes (about :data:`GROUP_BYTES`, at least one
stripe). A group is read whole, as one range, when all columns are wanted or when it spans at
most :data:`WHOLE_READ_BYTES`; otherwise its stripe footers are fetched first (with those of
the next stripes) and then only the selected columns' data streams, in one coalesced
:meth:`Store.read_ranges` call. Each stripe is decompressed and decoded in a worker thread
while the next group is being fetched, so at most two groups' bytes are held at once. Bytes
that lie in the tail read at open time cost no request (a small file is read in one).

Errors raised while reading a stripe name the file and the stripe; stray exceptions of
decoders (IndexError, struct.error, ...) are turned into CorruptFileError as a last resort.
"""

from __future__ import annotations

import asyncio
import bisect
import dataclasses
import struct
import zlib
from collections.abc import AsyncGenerator, Awaitable, Callable, Generator, Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any, TypeVar

import pyarrow as pa
from google.protobuf.message import DecodeError

from aorc.errors import (
    AorcError,
    CorruptFileError,
    ObjectChangedError,
    SchemaError,
    StoreError,
)
from aorc.filters.predicate import Predicate, parse_filters
from aorc.format._proto import orc_proto_pb2 as pb
from aorc.format.codec.compression import decompress_stream
from aorc.format.columns import DecodeOptions, DictStripeStreams, arrow_field, decode_stripe
from aorc.format.columns.base import with_timestamp_unit
from aorc.format.columns.timestamps import check_timestamp_unit
from aorc.format.statistics import ColumnStatistics, StatisticsList
from aorc.format.stripe import DATA_KINDS, StreamInfo, parse_stripe_footer, stream_layout
from aorc.format.tail import TAIL_READ_SIZE, FileTail, NeedBytes, StripeInfo, parse_tail
from aorc.format.types import (
    OrcType,
    TypeKind,
    requested_order,
    select_columns,
    to_arrow_schema,
    type_string,
)
from aorc.io import IOStats, Source, Store, open_store
from aorc.io.base import gather_or_cancel
from aorc.read.pushdown import ScanStats

__all__ = [
    "ColumnEncodingInfo",
    "OrcReader",
    "ScanStats",
    "StreamDescription",
    "StripeFooterInfo",
    "StripeMetadata",
    "WriterInfo",
    "open_reader",
]

T = TypeVar("T")

#: Stripes are fetched in groups of consecutive stripes of about this many bytes in total
#: (at least one stripe); the next group is fetched while the current one decodes.
GROUP_BYTES = 8 * 1024 * 1024
#: A group of stripes spanning at most this many bytes is read whole, in one request, even
#: when only some columns are wanted (a round trip costs more than that many bytes).
WHOLE_READ_BYTES = 1024 * 1024
#: When only some columns are wanted, stripe footers are fetched up to this many stripes
#: ahead, as separate concurrent requests (never merged: the stripe data lies between them).
FOOTERS_AHEAD = 16
#: Exceptions that, escaping a decoder, mean a damaged file (a last safety net: decoders are
#: meant to raise CorruptFileError themselves).
_DECODE_FAILURES = (IndexError, KeyError, ValueError, OverflowError, struct.error, DecodeError,
                    zlib.error)


# =========================================================================== public records

@dataclass(frozen=True)
class WriterInfo:
    """Which software wrote a file.

    Attributes:
        name: the writer implementation: ``"Java"``, ``"C++"``, ``"Presto"``, ``"Go"``,
            ``"Trino"``, ``"cuDF"`` or ``"unknown(N)"``.
        code: the footer's writer code (``None`` when absent, which means ORC Java).
        writer_version: the PostScript's writer version number.
        writer_version_name: its name, e.g. ``"HIVE-8732"``, ``"ORC-135"``, ``"original"``.
        software_version: the footer's software version text, when recorded.
    """

    name: str
    code: int | None
    writer_version: int
    writer_version_name: str
    software_version: str | None


@dataclass(frozen=True)
class StripeMetadata:
    """Where one stripe lies and what it holds.

    Attributes:
        index: the stripe's position in the file (0-based).
        offset: byte offset of the stripe in the file.
        index_length: bytes of index streams (row indexes, bloom filters).
        data_length: bytes of data streams.
        footer_length: bytes of the stripe footer.
        num_rows: rows in the stripe.
        statistics: the stripe's column statistics, indexed by column id or dotted name,
            or ``None`` when the file records no stripe statistics.
    """

    index: int
    offset: int
    index_length: int
    data_length: int
    footer_length: int
    num_rows: int
    statistics: list[ColumnStatistics] | None

    @property
    def length(self) -> int:
        """Total bytes of the stripe."""
        return self.index_length + self.data_length + self.footer_length


@dataclass(frozen=True)
class StreamDescription:
    """One stream of a stripe: ``kind`` is the ORC name, e.g. ``"DATA"``, ``"ROW_INDEX"``."""

    column: int
    kind: str
    offset: int
    length: int


@dataclass(frozen=True)
class ColumnEncodingInfo:
    """How a column is encoded in a stripe: ``kind`` is e.g. ``"DIRECT_V2"``,
    ``"DICTIONARY_V2"``; ``dictionary_size`` is set for dictionary encodings."""

    column: int
    kind: str
    dictionary_size: int | None


@dataclass(frozen=True)
class StripeFooterInfo:
    """The contents of a stripe footer.

    Attributes:
        index: the stripe's position in the file.
        streams: every stream of the stripe, in file order, with absolute offsets.
        encodings: one entry per column id.
        writer_timezone: the time zone timestamps were written in, when recorded.
    """

    index: int
    streams: tuple[StreamDescription, ...]
    encodings: tuple[ColumnEncodingInfo, ...]
    writer_timezone: str | None

    @property
    def bloom_filter_columns(self) -> list[int]:
        """Column ids that have a bloom filter stream in this stripe (sorted)."""
        kinds = {"BLOOM_FILTER", "BLOOM_FILTER_UTF8"}
        return sorted({s.column for s in self.streams if s.kind in kinds})


# =========================================================================== helpers

def _prefixed(exc: AorcError, prefix: str) -> AorcError:
    """A new exception of the same class whose message is ``prefix: message`` (for a class
    with another constructor, ``exc`` itself with ``prefix`` as a note)."""
    try:
        new = type(exc)(f"{prefix}: {exc}")
    except TypeError:
        exc.add_note(prefix)
        return exc
    if isinstance(exc, OSError) and isinstance(new, OSError):
        new.errno = exc.errno
    return new


def _add_context(exc: AorcError, path: str, stripes: str | None = None) -> AorcError:
    """``exc`` again, same class, with the file (and stripe) in front of its message.

    Parts already in the message are not repeated, and an error that already received
    context is returned unchanged. The caller raises the result ``from exc``.
    """
    if getattr(exc, "_aorc_context", False):
        return exc
    message = str(exc)
    missing = [part for part in (path, stripes) if part and part not in message]
    new = _prefixed(exc, ", ".join(missing)) if missing else exc
    new._aorc_context = True  # type: ignore[attr-defined]
    return new


def _guarded(path: str, stripes: str | None, func: Callable[..., T], *args: Any) -> T:
    """Run ``func``; AorcErrors gain the file and stripe as context, and stray decoder
    exceptions become CorruptFileError (keeping the original as the cause)."""
    try:
        return func(*args)
    except AorcError as exc:
        new = _add_context(exc, path, stripes)
        if new is exc:
            raise
        raise new from exc
    except _DECODE_FAILURES as exc:
        where = ", ".join(p for p in (path, stripes) if p)
        new = CorruptFileError(f"{where}: {type(exc).__name__}: {exc}")
        new._aorc_context = True  # type: ignore[attr-defined]
        raise new from exc


class _Segments:
    """Fetched byte ranges of a file, sorted by offset; slices are looked up by offset."""

    def __init__(self, pieces: Sequence[tuple[int, bytes | memoryview]]) -> None:
        ordered = sorted(pieces, key=lambda p: p[0])
        self._starts = [o for o, _ in ordered]
        self._views = [memoryview(b) for _, b in ordered]

    def get(self, offset: int, length: int) -> memoryview:
        """The bytes ``[offset, offset + length)``, which must lie in one fetched range."""
        if length == 0:
            return memoryview(b"")
        i = bisect.bisect_right(self._starts, offset) - 1
        while i >= 0:
            start, view = self._starts[i], self._views[i]
            if offset + length <= start + len(view):
                return view[offset - start:offset - start + length]
            i -= 1
        raise CorruptFileError(f"bytes [{offset}, {offset + length}) were not fetched")


@dataclass
class _FetchedStripe:
    """A stripe's footer and the stored bytes of its selected streams, or the error that
    prevented getting them (raised when the stripe's turn comes, so that earlier stripes
    are still delivered)."""

    info: StripeInfo
    footer: pb.StripeFooter | None = None
    streams: dict[tuple[int, int], memoryview] | None = None
    error: AorcError | None = None


# =========================================================================== the reader

class OrcReader:
    """An open ORC file. Create it with :func:`open_reader`.

    File-level information (schema, statistics, stripes, metadata) is available at once;
    rows are read with :meth:`iter_batches` or :meth:`read`.

    Attributes:
        path: the file's name, as used in error messages.
    """

    def __init__(self, store: Store, tail: FileTail, tail_bytes: bytes, *,
                 owns_store: bool, timestamp_unit: str = "ns") -> None:
        check_timestamp_unit(timestamp_unit)
        self._store = store
        self._tail = tail
        self._tail_bytes = memoryview(tail_bytes)
        self._tail_start = tail.file_length - len(tail_bytes)
        self._owns_store = owns_store
        self._raw_footers: dict[int, bytes | memoryview] = {}
        self._footer_lock = asyncio.Lock()
        self._tasks: set[asyncio.Task[Any]] = set()
        self._closed = False
        self.path = store.path
        self._decode_options = DecodeOptions.from_tail(tail, timestamp_unit=timestamp_unit)
        self.timestamp_unit = timestamp_unit
        self._scan_stats = ScanStats()

    # ------------------------------------------------------------------ file information
    @property
    def schema(self) -> pa.Schema:
        """The Arrow schema of the rows (a non-struct root is one column ``_col0``)."""
        schema = to_arrow_schema(self._tail.schema)
        if self.timestamp_unit == "ns":
            return schema
        return pa.schema([f.with_type(with_timestamp_unit(f.type, self.timestamp_unit))
                          for f in schema], metadata=schema.metadata)

    @property
    def orc_type(self) -> str:
        """The file's ORC type as a string, e.g. ``struct<a:int,b:string>``."""
        return type_string(self._tail.schema)

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
        branches ``_union_N`` (e.g. ``"a.item.b"`` for ``a:array<struct<b:int>>``)."""
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

    async def _raw_stripe_footers(self, indexes: Sequence[int]) -> list[bytes | memoryview]:
        """The stored footers of the given stripes. Missing ones are fetched together with
        the footers of up to FOOTERS_AHEAD following stripes, kept for later calls."""
        async with self._footer_lock:
            wanted = [i for i in indexes if i not in self._raw_footers]
            if wanted:
                last = min(len(self._tail.stripes), max(wanted) + 1 + FOOTERS_AHEAD)
                fetch = wanted + [i for i in range(max(wanted) + 1, last)
                                  if i not in self._raw_footers]
                stripes = [self._tail.stripes[i] for i in fetch]
                raw = await self._read_ranges([(s.footer_offset, s.footer_length)
                                               for s in stripes], coalesce=False)
                self._raw_footers.update(zip(fetch, raw, strict=True))
            return [self._raw_footers.pop(i) for i in indexes]

    def _layout(self, stripe: StripeInfo,
                raw_footer: bytes | memoryview) -> tuple[pb.StripeFooter, list[StreamInfo]]:
        """Parse a stripe footer and lay out its streams (errors name file and stripe)."""
        where = f"stripe {stripe.index}"
        footer = _guarded(self.path, where, parse_stripe_footer, raw_footer, self._tail, stripe)
        return footer, _guarded(self.path, where, stream_layout, stripe, footer)

    def _layouts(self, stripes: Sequence[StripeInfo], raw_footers: Sequence[bytes | memoryview]
                 ) -> list[tuple[pb.StripeFooter, list[StreamInfo]] | AorcError]:
        """:meth:`_layout` of each stripe, or the error it raised (runs in a thread)."""
        out: list[tuple[pb.StripeFooter, list[StreamInfo]] | AorcError] = []
        for stripe, raw in zip(stripes, raw_footers, strict=True):
            try:
                out.append(self._layout(stripe, raw))
            except AorcError as exc:
                out.append(exc)
        return out

    # ------------------------------------------------------------------ stripe footers
    async def read_stripe_footer(self, index: int) -> StripeFooterInfo:
        """Read and describe the footer of stripe ``index`` (streams, encodings, zone).

        Raises:
            SchemaError: for an index out of range.
            CorruptFileError: when the footer is damaged.
        """
        self._check_open()
        if not 0 <= index < len(self._tail.stripes):
            raise SchemaError(f"{self.path}: no stripe {index} (the file has "
                              f"{len(self._tail.stripes)})")
        stripe = self._tail.stripes[index]
        (raw,) = await self._raw_stripe_footers([index])
        footer, layout = await asyncio.to_thread(self._layout, stripe, raw)
        return StripeFooterInfo(
            index=index,
            streams=tuple(StreamDescription(s.column, _stream_kind_name(s.kind), s.offset,
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
                     filters: Any = None) -> AsyncGenerator[pa.RecordBatch, None]:
        """Iterate over the rows as Arrow record batches of at most ``batch_size`` rows.

        Batches never span stripes. The next stripes' bytes are fetched while the current
        stripe is decoded in a worker thread. To stop early, close the iterator (e.g. with
        ``contextlib.aclosing``) or the reader: either cancels the fetch in progress.

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

        Raises:
            SchemaError: for an unknown column name, malformed filters or a batch size below
                1 (raised here, before iteration starts).
            CorruptFileError: (during iteration) when the file is damaged; the message names
                the file and the stripe.
        """
        self._check_open()
        if not isinstance(batch_size, int) or batch_size < 1:
            raise SchemaError(f"batch_size must be a positive integer, got {batch_size!r}")
        selected = select_columns(self._tail.schema, columns)
        predicate = parse_filters(filters, self._tail.schema)
        order = requested_order(self._tail.schema, columns)
        if predicate is not None:
            source = self._filtered(selected, predicate, batch_size)
        else:
            source = self._batches(selected, batch_size)
        return source if order is None else _reordered(source, order)

    def _filtered(self, selected: set[int], predicate: Predicate,
                  batch_size: int | None) -> AsyncGenerator[pa.RecordBatch, None]:
        from aorc.read.scan import filtered_batches  # the filtered path of this driver
        return filtered_batches(self, selected, predicate, batch_size)

    async def read(self, columns: Sequence[str] | None = None, filters: Any = None) -> pa.Table:
        """Read the whole file (or the selected columns, or the matching rows) into an Arrow
        table.

        Args:
            columns: as for :meth:`iter_batches`.
            filters: as for :meth:`iter_batches`.
        """
        self._check_open()
        selected = select_columns(self._tail.schema, columns)
        predicate = parse_filters(filters, self._tail.schema)
        source = (self._batches(selected, None) if predicate is None
                  else self._filtered(selected, predicate, None))
        batches = [b async for b in source]
        if batches:
            table = pa.Table.from_batches(batches, schema=batches[0].schema)
        else:
            table = pa.Table.from_batches([], schema=self._projected_schema(selected))
        order = requested_order(self._tail.schema, columns)
        return table if order is None else table.select(order)

    def _projected_schema(self, selected: set[int]) -> pa.Schema:
        """The schema :func:`decode_stripe` gives the selected columns."""
        root = self._tail.schema
        if root.kind != TypeKind.STRUCT:
            return pa.schema([arrow_field("_col0", root, selected,
                                          timestamp_unit=self.timestamp_unit)])
        return pa.schema([arrow_field(n, c, selected, timestamp_unit=self.timestamp_unit)
                          for n, c in zip(root.field_names, root.children, strict=True)
                          if c.column_id in selected])

    def _groups(self) -> list[list[StripeInfo]]:
        """Consecutive stripes grouped so each group is about GROUP_BYTES (at least one)."""
        groups: list[list[StripeInfo]] = []
        size = 0
        for stripe in self._tail.stripes:
            if groups and size + stripe.length <= GROUP_BYTES:
                groups[-1].append(stripe)
                size += stripe.length
            else:
                groups.append([stripe])
                size = stripe.length
        return groups

    async def _batches(self, selected: set[int],
                       batch_size: int | None) -> AsyncGenerator[pa.RecordBatch, None]:
        groups = self._groups()
        if not groups:
            return
        pending: asyncio.Task[list[_FetchedStripe]] | None = self._spawn(
            self._fetch_group(groups[0], selected))
        try:
            for number in range(len(groups)):
                assert pending is not None
                fetched = await pending
                pending = (self._spawn(self._fetch_group(groups[number + 1], selected))
                           if number + 1 < len(groups) else None)
                while fetched:
                    item = fetched.pop(0)  # drop each stripe's bytes once decoded
                    batch = await asyncio.to_thread(self._decode, item, selected)
                    del item
                    if batch_size is None or batch.num_rows <= batch_size:
                        if batch.num_rows:
                            yield batch
                        continue
                    for start in range(0, batch.num_rows, batch_size):
                        yield batch.slice(start, batch_size)
        finally:
            if pending is not None:
                pending.cancel()
                await asyncio.gather(pending, return_exceptions=True)

    async def _fetch_group(self, group: list[StripeInfo],
                           selected: set[int]) -> list[_FetchedStripe]:
        """Fetch the footers and the selected columns' data streams of a group of stripes.

        A group that is small, or whose columns are all wanted, is read whole; otherwise
        the footers come first and then only the selected streams' ranges.
        """
        self._check_open()
        start, end = group[0].offset, group[-1].end
        try:
            if end - start <= WHOLE_READ_BYTES or len(selected) == self._tail.num_columns:
                (blob,) = await self._read_ranges([(start, end - start)])
                segments = _Segments([(start, blob)])
                raw = [segments.get(s.footer_offset, s.footer_length) for s in group]
                layouts = await asyncio.to_thread(self._layouts, group, raw)
            else:
                footers = await self._raw_stripe_footers([s.index for s in group])
                layouts = await asyncio.to_thread(self._layouts, group, footers)
                ranges = [(x.offset, x.length) for entry in layouts
                          if not isinstance(entry, AorcError)
                          for x in entry[1] if _wanted(x, selected) and x.length]
                fetched = await self._read_ranges(ranges)
                segments = _Segments([(o, data) for (o, _), data in
                                      zip(ranges, fetched, strict=True)])
        except AorcError as exc:
            new = _add_context(exc, self.path, _stripes_text(group))
            if new is exc:
                raise
            raise new from exc
        out = []
        for stripe, entry in zip(group, layouts, strict=True):
            if isinstance(entry, AorcError):
                out.append(_FetchedStripe(stripe, error=entry))
                continue
            footer, layout = entry
            streams = {(x.column, x.kind): segments.get(x.offset, x.length)
                       for x in layout if _wanted(x, selected)}
            out.append(_FetchedStripe(stripe, footer, streams))
        return out

    def _decode(self, item: _FetchedStripe, selected: set[int]) -> pa.RecordBatch:
        """Decompress and decode one stripe (runs in a worker thread)."""
        return _guarded(self.path, f"stripe {item.info.index}", self._decode_unguarded, item,
                        selected)

    def _decode_unguarded(self, item: _FetchedStripe, selected: set[int]) -> pa.RecordBatch:
        if item.error is not None:
            raise item.error
        assert item.footer is not None and item.streams is not None
        kind, block_size = self._tail.compression, self._tail.block_size
        plain = {}
        for (column, stream_kind), raw in item.streams.items():
            try:
                plain[column, stream_kind] = decompress_stream(raw, kind, block_size)
            except AorcError as exc:
                what = f"column {column} {_stream_kind_name(stream_kind)} stream"
                raise _prefixed(exc, what) from exc
        streams = DictStripeStreams.from_footer(item.footer, plain)
        return decode_stripe(self._tail.schema, selected, streams, item.info.num_rows,
                             self._decode_options)


async def _reordered(source: AsyncGenerator[pa.RecordBatch, None],
                     order: list[str]) -> AsyncGenerator[pa.RecordBatch, None]:
    """The batches of ``source`` with their columns in ``order``."""
    try:
        async for batch in source:
            yield batch.select(order)
    finally:
        await source.aclose()


def _wanted(stream: StreamInfo, selected: set[int]) -> bool:
    """A data stream of a selected column."""
    return stream.column in selected and stream.kind in DATA_KINDS


def _stripes_text(group: Sequence[StripeInfo]) -> str:
    first, last = group[0].index, group[-1].index
    return f"stripe {first}" if first == last else f"stripes {first}-{last}"


def _stream_kind_name(kind: int) -> str:
    try:
        return str(pb.Stream.Kind.Name(kind))
    except ValueError:
        return f"UNKNOWN({kind})"


# =========================================================================== opening

def _parse_tail(path: str, tail: bytes, size: int) -> FileTail | NeedBytes:
    return _guarded(path, None, lambda: parse_tail(tail, size, source=path))


async def _load(source: Source, storage_options: Mapping[str, Any] | None,
                timestamp_unit: str = "ns") -> OrcReader:
    check_timestamp_unit(timestamp_unit)
    owns_store = not isinstance(source, Store)
    store = open_store(source, storage_options)
    try:
        tail_bytes, size = await store.read_tail(TAIL_READ_SIZE)
        tail = await asyncio.to_thread(_parse_tail, store.path, tail_bytes, size)
        if isinstance(tail, NeedBytes):
            tail_bytes, new_size = await store.read_tail(tail.n)
            if new_size != size:
                raise ObjectChangedError(f"{store.path}: the file changed size while it was "
                                         f"being opened ({size} -> {new_size} bytes)")
            tail = await asyncio.to_thread(_parse_tail, store.path, tail_bytes, size)
            if isinstance(tail, NeedBytes):
                raise CorruptFileError(f"{store.path}: the file tail asks for {tail.n} bytes "
                                       f"after {len(tail_bytes)} were read")
        return OrcReader(store, tail, tail_bytes, owns_store=owns_store,
                         timestamp_unit=timestamp_unit)
    except BaseException:
        if owns_store:
            await store.close()
        raise


class _OpenReader:
    """What :func:`open_reader` returns: use ``async with`` (or ``await``, then close)."""

    def __init__(self, source: Source, storage_options: Mapping[str, Any] | None,
                 timestamp_unit: str = "ns") -> None:
        self._source = source
        self._options = storage_options
        self._unit = timestamp_unit
        self._reader: OrcReader | None = None

    def __await__(self) -> Generator[Any, None, OrcReader]:
        return _load(self._source, self._options, self._unit).__await__()

    async def __aenter__(self) -> OrcReader:
        self._reader = await _load(self._source, self._options, self._unit)
        return self._reader

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc: BaseException | None, tb: TracebackType | None) -> None:
        if self._reader is not None:
            await self._reader.close()


def open_reader(source: Source, *, storage_options: Mapping[str, Any] | None = None,
                timestamp_unit: str = "ns") -> _OpenReader:
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

    Raises:
        ObjectNotFoundError: when the file does not exist.
        CorruptFileError: when the file's tail is damaged.
        UnsupportedVersionError: for a future format version.
    """
    return _OpenReader(source, storage_options, timestamp_unit)
