"""Predicate pushdown and selective reads: which stripes, row groups and byte ranges a
filtered read needs, and decoding only those rows. Synchronous; no I/O: the read plan
(:mod:`aorc.read.plan`) asks :class:`ScanPlanner` for ranges, and the read driver fetches
them.

A filtered read goes, for each stripe:

1. stripe statistics (from the file tail) rule stripes out;
2. the stripe footer gives the stream layout; the ROW_INDEX streams of the filtered columns
   (with their struct ancestors) and of the columns to decode are fetched, with the bloom
   filter streams of columns compared with ``==``/``in``;
3. row-index statistics, then bloom filters, rule row groups out;
4. only the byte ranges where the surviving row groups lie are fetched (see
   :mod:`aorc.format.rowgroups`), decoded from the row-index positions on, and the rows that do not
   match are removed (:meth:`aorc.filters.predicate.Predicate.row_mask`).

A top-level column is read from the start of the stripe (and the rows wanted sliced out)
when one of its decoded columns has no usable positions: no ROW_INDEX stream, too few
entries or positions (files written without row indexes, e.g.
``testSargSkipPickupGroupWithoutIndexJava.orc``). Stripes whose root struct has null rows are
read whole. Results are exact in every case: pruning only ever skips rows that cannot match.
"""

from __future__ import annotations

import dataclasses
import math
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from aorc.errors import CorruptFileError, UnsupportedFeatureError
from aorc.filters.predicate import Leaf, Predicate, StatsContext, bloom_absent_test
from aorc.format._proto import orc_proto_pb2 as pb
from aorc.format.codec.bloom import BloomFilter, bloom_filter_usable
from aorc.format.codec.compression import Budget, CompressionKind
from aorc.format.columns import DecodeOptions, arrow_field, decode_stripe
from aorc.format.columns.base import Context, Placement, StripeStreams, decode_level
from aorc.format.encryption import stream_bytes
from aorc.format.projection import select_columns
from aorc.format.rowgroups import (
    StreamStart,
    column_positions,
    decompress_complete,
    position_layout,
    segment_range,
    slice_start,
    surviving_runs,
)
from aorc.format.statistics import ColumnStatistics, column_statistics_from_proto
from aorc.format.stripe import DATA_KINDS, StreamInfo, parse_bloom_filter_index, parse_row_index
from aorc.format.tail import FileTail, StripeInfo
from aorc.format.types import OrcType, TypeKind
from aorc.read.common import FetchedBytes, LazyStreams, decode_weights, merge_ranges
from aorc.threads import pool_map

__all__ = ["Fetched", "FilteredSlices", "ScanPlanner", "ScanStats", "StripeWork"]

#: The buffer of fetched bytes (:class:`aorc.read.common.FetchedBytes`), by its former name.
Fetched = FetchedBytes

K = pb.Stream.Kind
_BLOOM_KINDS = (K.BLOOM_FILTER_UTF8, K.BLOOM_FILTER)  # the UTF-8 kind first, as ORC Java


@dataclass
class ScanStats:
    """What filtered reads through one reader skipped and read (counts add up over reads).

    Attributes:
        stripes_total: stripes considered.
        stripes_pruned_by_stats: stripes skipped by their statistics.
        row_groups_total: row groups of the stripes considered (a stripe of a file without
            row index counts as one).
        row_groups_pruned_by_stats: row groups of the remaining stripes skipped by their
            row-index statistics.
        row_groups_pruned_by_bloom: row groups skipped by bloom filters (after statistics
            kept them).
        row_groups_read: row groups decoded.
        rows_read: rows decoded.
        rows_returned: rows that matched the filter.
        requests: requests the reader's store has made (all reads, the tail included).
        bytes: bytes the reader's store has received.
        files_skipped: files a dataset left out as not ORC, damaged or empty (with
            ``exclude_invalid_files``; each also warned about with an
            :class:`~aorc.errors.AorcWarning`); always 0 for one file's reader.
    """

    stripes_total: int = 0
    stripes_pruned_by_stats: int = 0
    row_groups_total: int = 0
    row_groups_pruned_by_stats: int = 0
    row_groups_pruned_by_bloom: int = 0
    row_groups_read: int = 0
    rows_read: int = 0
    rows_returned: int = 0
    requests: int = 0
    bytes: int = 0
    files_skipped: int = 0

    def __add__(self, other: ScanStats) -> ScanStats:
        if not isinstance(other, ScanStats):
            return NotImplemented
        return ScanStats(*(getattr(self, f.name) + getattr(other, f.name)
                           for f in dataclasses.fields(self)))

    def __sub__(self, other: ScanStats) -> ScanStats:
        """The counts since ``other`` was taken (``after - before``)."""
        if not isinstance(other, ScanStats):
            return NotImplemented
        return ScanStats(*(getattr(self, f.name) - getattr(other, f.name)
                           for f in dataclasses.fields(self)))


@dataclass
class StripeWork:
    """The plan for one stripe: the rows to decode and the bytes to fetch.

    Attributes:
        stripe: the stripe.
        footer: its footer.
        streams: its streams by ``(column, kind)``.
        runs: runs ``(first, end)`` of row groups to decode; ``None`` for the whole stripe.
        positions: per column decoded from row-group starts: starts per stream kind.
        whole: top-level column ids (or the root id) decoded from the stripe's start.
        ranges: absolute ``(offset, length)`` ranges to fetch, merged.
        segments: the absolute range of each positioned stream for each run of row groups,
            by ``(column, kind, first row group of the run)``.
    """

    stripe: StripeInfo
    footer: pb.StripeFooter
    streams: dict[tuple[int, int], StreamInfo]
    runs: list[tuple[int, int]] | None
    positions: dict[int, dict[int, list[StreamStart]]] = field(default_factory=dict)
    whole: set[int] = field(default_factory=set)
    ranges: list[tuple[int, int]] = field(default_factory=list)
    segments: dict[tuple[int, int, int], tuple[int, int]] = field(default_factory=dict)


@dataclass(eq=False)
class ScanPlanner:
    """Plans (and decodes) one filtered read of a file.

    Args:
        tail: the file's tail.
        selected: column ids to return (from :func:`aorc.format.projection.select_columns`).
        predicate: the parsed filter.
        opts: decoding options.
        stats: counters to update.
        threads: the threads one stripe's decoding may use: its top-level columns are
            decoded at once, each with its long streams decompressed in pieces.
    """

    tail: FileTail
    selected: set[int]
    predicate: Predicate
    opts: DecodeOptions
    stats: ScanStats
    threads: int = 1

    def __post_init__(self) -> None:
        schema = self.tail.schema
        self.filter_columns = select_columns(schema, self.predicate.column_names)
        self.decode_columns = self.selected | self.filter_columns
        self.context = StatsContext(hybrid_calendar=self.tail.calendar == pb.JULIAN_GREGORIAN,
                                    decimal_bloom_filters=not self.tail.is_unstable_pre_2)
        self._bloom_tests: dict[int, Callable[[BloomFilter], bool] | None] = {
            id(leaf): bloom_absent_test(leaf, self.context) for leaf in self.predicate.leaves}
        self._types = {t.column_id: t for t in schema.walk()}
        self._tops = self._top_columns()
        self._lock = threading.Lock()

    def _top_columns(self) -> list[OrcType]:
        root = self.tail.schema
        if root.kind != TypeKind.STRUCT:
            return [root]
        return [c for c in root.children if c.column_id in self.decode_columns]

    # ------------------------------------------------------------------ stripes
    def _groups_of(self, stripe: StripeInfo) -> int:
        stride = self.tail.row_index_stride
        return math.ceil(stripe.num_rows / stride) if stride > 0 else 1

    def stripes(self, candidates: Sequence[StripeInfo] | None = None) -> list[StripeInfo]:
        """The stripes (of ``candidates``, default all) whose statistics do not rule them
        out (counters updated)."""
        all_stats = self.tail.stripe_statistics
        if all_stats is not None and len(all_stats) != len(self.tail.stripes):
            all_stats = None
        out = []
        for stripe in self.tail.stripes if candidates is None else candidates:
            self.stats.stripes_total += 1
            if stripe.num_rows == 0:
                continue
            self.stats.row_groups_total += self._groups_of(stripe)
            if all_stats is not None:
                columns = all_stats[stripe.index]

                def of(c: int, s: list[ColumnStatistics] = columns) -> ColumnStatistics | None:
                    return s[c] if c < len(s) else None
                truth = self.predicate.evaluate(of, self.context)
                if not truth.may_be_true:
                    self.stats.stripes_pruned_by_stats += 1
                    continue
            out.append(stripe)
        return out

    def _indexed(self, stripe: StripeInfo) -> bool:
        return self.tail.row_index_stride > 0

    def _bloom_stream(self, column: int, streams: dict[tuple[int, int], StreamInfo],
                      footer: pb.StripeFooter) -> StreamInfo | None:
        """The column's usable bloom filter stream (UTF-8 kind preferred), if any."""
        t = self._types[column]
        encoding = footer.columns[column]
        bloom_encoding = encoding.bloomEncoding if encoding.HasField("bloomEncoding") else None
        for kind in _BLOOM_KINDS:
            s = streams.get((column, kind))
            if s is not None and s.length:
                usable = bloom_filter_usable(kind, t.kind, self.tail.writer,
                                             self.tail.writer_version,
                                             self.tail.software_version, bloom_encoding)
                return s if usable else None
        return None

    def index_ranges(self, stripe: StripeInfo, footer: pb.StripeFooter,
                     layout: Sequence[StreamInfo]) -> list[tuple[int, int]]:
        """The index streams the plan of a stripe reads: ROW_INDEX of the filtered columns
        (and struct ancestors) and of the decoded columns, and usable bloom filters."""
        if not self._indexed(stripe):
            return []
        streams = {(s.column, s.kind): s for s in layout}
        wanted = (self.predicate.index_columns | self.decode_columns) - {0}
        if self.tail.schema.kind != TypeKind.STRUCT:
            wanted.add(0)
        found = [streams.get((c, K.ROW_INDEX)) for c in sorted(wanted)]
        found += [self._bloom_stream(c, streams, footer) for c in self.predicate.bloom_columns]
        return merge_ranges([(s.offset, s.length) for s in found if s is not None])

    # ------------------------------------------------------------------ row groups
    def plan(self, stripe: StripeInfo, footer: pb.StripeFooter, layout: Sequence[StreamInfo],
             fetched: Fetched) -> StripeWork | None:
        """Choose a stripe's row groups (counters updated) and the byte ranges to read.

        Args:
            stripe: the stripe.
            footer: its footer.
            layout: its streams.
            fetched: holds (at least) the ranges of :meth:`index_ranges`.

        Returns:
            The plan, or None when no row group can match.

        Raises:
            CorruptFileError: an index stream is damaged.
        """
        streams = {(s.column, s.kind): s for s in layout}
        n_groups = self._groups_of(stripe)
        entries: dict[int, list[pb.RowIndexEntry]] = {}
        if self._indexed(stripe):
            entries = self._row_indexes(stripe, streams, fetched, n_groups)
        if entries:  # a row index entry per row group: n_groups is backed by the file's bytes
            keep = self._select(stripe, footer, streams, entries, fetched, n_groups)
        else:  # no usable row index (a damaged stripe's n_groups may be absurd): all rows
            keep = [True]
        if not any(keep):
            return None
        self.stats.row_groups_read += sum(keep) if entries else n_groups
        if all(keep):
            work = StripeWork(stripe, footer, streams, None, whole={t.column_id
                                                                     for t in self._tops})
        else:
            work = StripeWork(stripe, footer, streams, surviving_runs(keep))
            self._place(work, entries)
        work.ranges = self._data_ranges(work)
        return work

    def _row_indexes(self, stripe: StripeInfo, streams: dict[tuple[int, int], StreamInfo],
                     fetched: Fetched, n_groups: int) -> dict[int, list[pb.RowIndexEntry]]:
        out = {}
        for (column, kind), s in streams.items():
            if kind != K.ROW_INDEX or not fetched.covers(s.offset, s.length) or not s.length:
                continue
            raw = stream_bytes(s, fetched.get(s.offset, s.length))
            index = parse_row_index(raw, self.tail,
                                    where=f"stripe {stripe.index} column {column} row index")
            if len(index.entry) == n_groups:  # otherwise unusable: read as if absent
                out[column] = list(index.entry)
        return out

    def _select(self, stripe: StripeInfo, footer: pb.StripeFooter,
                streams: dict[tuple[int, int], StreamInfo],
                entries: dict[int, list[pb.RowIndexEntry]], fetched: Fetched,
                n_groups: int) -> list[bool]:
        """Which row groups may hold matching rows."""
        zone = footer.writerTimezone if footer.HasField("writerTimezone") else None
        stats = {c: [column_statistics_from_proto(
                    e.statistics, self._types[c], writer_version=self.tail.writer_version,
                    writer=self.tail.writer, writer_timezone=zone or None) for e in rows]
                 for c, rows in entries.items() if c in self.predicate.index_columns}
        blooms = self._bloom_filters(stripe, footer, streams, fetched, n_groups)
        keep = []
        for g in range(n_groups):
            def of(c: int, g: int = g) -> ColumnStatistics | None:
                rows = stats.get(c)
                return None if rows is None else rows[g]
            if not self.predicate.evaluate(of, self.context).may_be_true:
                self.stats.row_groups_pruned_by_stats += 1
                keep.append(False)
                continue
            if blooms and not self.predicate.evaluate(
                    of, self.context, self._absent(blooms, g)).may_be_true:
                self.stats.row_groups_pruned_by_bloom += 1
                keep.append(False)
                continue
            keep.append(True)
        return keep

    def _absent(self, blooms: dict[int, list[tuple[int, pb.BloomFilter]]], g: int
                ) -> Callable[[Leaf], bool]:
        def absent(leaf: Leaf) -> bool:
            test = self._bloom_tests.get(id(leaf))
            protos = blooms.get(leaf.column.column_id)
            if test is None or protos is None:
                return False
            kind, proto = protos[g]
            bloom = BloomFilter.from_proto(proto, kind)
            return bloom is not None and test(bloom)
        return absent

    def _bloom_filters(self, stripe: StripeInfo, footer: pb.StripeFooter,
                       streams: dict[tuple[int, int], StreamInfo], fetched: Fetched,
                       n_groups: int) -> dict[int, list[tuple[int, pb.BloomFilter]]]:
        out = {}
        for column in self.predicate.bloom_columns:
            s = self._bloom_stream(column, streams, footer)
            if s is None or not fetched.covers(s.offset, s.length):
                continue
            index = parse_bloom_filter_index(
                stream_bytes(s, fetched.get(s.offset, s.length)), self.tail,
                where=f"stripe {stripe.index} column {column} bloom filter")
            if len(index.bloomFilter) == n_groups:
                out[column] = [(s.kind, b) for b in index.bloomFilter]
        return out

    # ------------------------------------------------------------------ byte ranges
    def _subtree(self, top: OrcType) -> list[OrcType]:
        return [t for t in top.walk() if t.column_id in self.decode_columns]

    def _place(self, work: StripeWork, entries: dict[int, list[pb.RowIndexEntry]]) -> None:
        """Decide per top-level column: decoded from row-group starts, or whole."""
        root = self.tail.schema
        if root.kind == TypeKind.STRUCT and (0, K.PRESENT) in work.streams:
            work.whole = {t.column_id for t in self._tops}  # null root rows: read it all
            return
        compressed = self.tail.compression != CompressionKind.NONE
        for top in self._tops:
            found: dict[int, dict[int, list[StreamStart]]] = {}
            for t in self._subtree(top):
                starts = self._column_starts(t, work, entries.get(t.column_id), compressed)
                if starts is None:
                    work.whole.add(top.column_id)
                    break
                found[t.column_id] = starts
            else:
                work.positions.update(found)

    def _column_starts(self, t: OrcType, work: StripeWork,
                       entries: list[pb.RowIndexEntry] | None,
                       compressed: bool) -> dict[int, list[StreamStart]] | None:
        c = t.column_id
        decimal64 = bool(self.tail.is_unstable_pre_2 and t.precision and t.precision <= 18)
        layout = position_layout(t, work.footer.columns[c], (c, K.PRESENT) in work.streams,
                                 decimal64)
        if not layout:
            return {}
        if entries is None:
            return None
        own = {kind: s for (col, kind), s in work.streams.items() if col == c}
        return column_positions(entries, layout, own, compressed)

    def _data_ranges(self, work: StripeWork) -> list[tuple[int, int]]:
        ranges = [(s.offset, s.length) for (c, kind), s in work.streams.items()
                  if c == 0 and kind in DATA_KINDS and self.tail.schema.kind == TypeKind.STRUCT]
        compressed = self.tail.compression != CompressionKind.NONE
        styles: dict[tuple[int, int], int] = {}
        for top in self._tops:
            for t in self._subtree(top):
                layout = position_layout(
                    t, work.footer.columns[t.column_id],
                    (t.column_id, K.PRESENT) in work.streams,
                    bool(self.tail.is_unstable_pre_2 and t.precision and t.precision <= 18))
                styles.update({(t.column_id, kind): style for kind, style in layout})
                for (c, kind), s in work.streams.items():
                    if c != t.column_id or kind not in DATA_KINDS:
                        continue
                    starts = work.positions.get(c, {}).get(kind)
                    if starts is None or work.runs is None:
                        ranges.append((s.offset, s.length))
                        continue
                    for first, end in work.runs:
                        offset, length = segment_range(starts, first, end, styles[c, kind],
                                                       s.length, compressed,
                                                       self.tail.block_size)
                        ranges.append((s.offset + offset, length))
                        work.segments[c, kind, first] = (s.offset + offset, length)
        return merge_ranges(ranges)

    # ------------------------------------------------------------------ decoding
    def decode(self, work: StripeWork, fetched: Fetched) -> Iterator[pa.RecordBatch]:
        """Decode the planned rows of a stripe and keep those matching the filter.

        Yields:
            One batch per run of row groups (empty batches left out).
        """
        whole = LazyStreams(work.footer, work.streams, fetched, self.tail,
                            threads=self.threads, max_decoded_bytes=self.opts.max_decoded_bytes)
        stride = self.tail.row_index_stride
        num_rows = work.stripe.num_rows
        runs = work.runs if work.runs is not None else [(0, 0)]
        cache: dict[tuple[int, frozenset[int]], Any] = {}
        for first, end in runs:
            if work.runs is None:
                r0, r1 = 0, num_rows
            else:
                r0, r1 = first * stride, min(end * stride, num_rows)
            segment = _SegmentStreams(work, fetched, self.tail, whole, first, end)
            batch = self._filtered(work, whole, segment, r0, r1, cache)
            if batch.num_rows:
                yield batch

    def _filtered(self, work: StripeWork, whole: LazyStreams, segment: _SegmentStreams,
                  r0: int, r1: int, cache: dict[tuple[int, frozenset[int]], Any]
                  ) -> pa.RecordBatch:
        with self._lock:  # stripes may decode on several threads at once
            self.stats.rows_read += r1 - r0
        try:
            return self._filtered_rows(work, whole, segment, r0, r1, cache, self.opts)
        except UnsupportedFeatureError as exc:
            if self.opts.timestamp_unit != "ns" or "timestamp_unit=" not in str(exc):
                raise
            return self._filtered_wide(work, whole, segment, r0, r1, exc)

    def _filtered_wide(self, work: StripeWork, whole: LazyStreams, segment: _SegmentStreams,
                       r0: int, r1: int, exc: UnsupportedFeatureError) -> pa.RecordBatch:
        """The rows again with microsecond timestamps (they hold every ORC timestamp), so
        a timestamp beyond nanoseconds raises only when its row matches the filter."""
        wide = dataclasses.replace(self.opts, timestamp_unit="us")
        batch = self._filtered_rows(work, whole, segment, r0, r1, {}, wide, count=False)
        dictionary = self.opts.dictionary_strings
        fields = [arrow_field(name, top, self.selected, dictionary_strings=dictionary,
                              instant=self.opts.use_writer_timezone)
                  for name, top in zip(batch.schema.names, self._top_types(self.selected),
                                       strict=True)] \
            if self.tail.schema.kind == TypeKind.STRUCT else None
        try:
            return batch.cast(pa.schema(fields)) if fields is not None else \
                pa.record_batch([batch.column(0).cast(
                    arrow_field("_col0", self.tail.schema, self.selected,
                                dictionary_strings=dictionary,
                                instant=self.opts.use_writer_timezone).type)], ["_col0"])
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            raise exc from None

    def sliced_rows(self, ctx: Context, work: StripeWork, n: int) -> pa.RecordBatch:
        """The next ``n`` rows of ``ctx.selected`` from a sliced context over a whole stripe."""
        root = self.tail.schema
        selected = ctx.selected if ctx.selected is not None else self.selected
        level = Placement(n)
        if root.kind == TypeKind.STRUCT:
            slots = ctx.slots(root, level)
            if slots.valid is not None:  # null root rows: their fields read as null
                level = slots.level()
        tops = [root] if root.kind != TypeKind.STRUCT else [
            c for c in root.children if c.column_id in selected]
        names = ["_col0"] if root.kind != TypeKind.STRUCT else [
            root.field_names[root.children.index(c)] for c in tops]
        arrays = _heaviest_first(lambda top: decode_level(top, ctx, level), tops,
                                 work.streams, self.threads)
        fields = [arrow_field(name, top, selected, timestamp_unit=self.opts.timestamp_unit,
                              dictionary_strings=self.opts.dictionary_strings,
                              instant=self.opts.use_writer_timezone)
                  for name, top in zip(names, tops, strict=True)]
        return pa.RecordBatch.from_arrays(arrays, schema=pa.schema(fields))

    def _top_types(self, selected: set[int]) -> list[OrcType]:
        return [c for c in self.tail.schema.children if c.column_id in selected]

    def _filtered_rows(self, work: StripeWork, whole: LazyStreams, segment: _SegmentStreams,
                       r0: int, r1: int, cache: dict[tuple[int, frozenset[int]], Any],
                       opts: DecodeOptions, count: bool = True) -> pa.RecordBatch:
        shared = self.filter_columns <= self.selected
        probe = self._rows(self.selected if shared else self.filter_columns, work, whole,
                           segment, r0, r1, cache, opts)
        mask = self.predicate.row_mask(probe)
        hits = mask.true_count
        if count:
            with self._lock:
                self.stats.rows_returned += hits
        if not shared:
            if not hits:
                return self._rows(self.selected, work, whole, segment, r0, r0, cache, opts)
            probe = self._rows(self.selected, work, whole, segment, r0, r1, cache, opts)
        return probe if hits == len(probe) else probe.filter(mask)

    def _rows(self, selected: set[int], work: StripeWork, whole: LazyStreams,
              segment: _SegmentStreams, r0: int, r1: int,
              cache: dict[tuple[int, frozenset[int]], Any],
              opts: DecodeOptions) -> pa.RecordBatch:
        """Rows ``r0 .. r1-1`` of the stripe's ``selected`` columns, decoded with ``opts``."""
        root = self.tail.schema
        n = r1 - r0
        if root.kind == TypeKind.STRUCT and (0, K.PRESENT) in work.streams:
            key = (0, frozenset(selected))
            if key not in cache:  # null root rows: decode the stripe whole, then slice
                cache[key] = decode_stripe(root, selected, whole, work.stripe.num_rows, opts)
            return cache[key].slice(r0, n)
        tops = [root] if root.kind != TypeKind.STRUCT else [
            c for c in root.children if c.column_id in selected]
        names = ["_col0"] if root.kind != TypeKind.STRUCT else [
            root.field_names[root.children.index(c)] for c in tops]

        def decode(top: OrcType) -> Any:
            if top.column_id not in work.whole:
                return decode_level(top, Context(segment, opts, selected), Placement(n))
            key = (top.column_id, frozenset(selected))
            if key not in cache:  # each key is decoded by one thread (one top column)
                cache[key] = decode_level(top, Context(whole, opts, selected),
                                          Placement(work.stripe.num_rows))
            return cache[key].slice(r0, n)

        arrays = _heaviest_first(decode, tops, work.streams, self.threads)
        fields = [arrow_field(name, top, selected, timestamp_unit=opts.timestamp_unit,
                              dictionary_strings=opts.dictionary_strings,
                              instant=opts.use_writer_timezone)
                  for name, top in zip(names, tops, strict=True)]
        return pa.RecordBatch.from_arrays(arrays, schema=pa.schema(fields))


class FilteredSlices:
    """The matching rows of a stripe decoded in row slices for a stream (a
    :class:`aorc.read.plan.SliceSource`): the whole stripe (``work.runs`` is None: no row
    index, or every row group survives), or each run of surviving row groups when every
    decoded column starts at row groups (no ``work.whole``). A slice never spans runs. Every
    slice's filter columns are decoded, then its selected columns (the same context when
    they include the filter columns), so that each column's streams move on together. A
    timestamp beyond ``timestamp_unit`` raises here even in a row the filter drops (the
    whole-run decode retries in microseconds)."""

    def __init__(self, scan: ScanPlanner, work: StripeWork, fetched: Fetched,
                 guard: Callable[..., Any]) -> None:
        self._scan = scan
        self._work = work
        self._fetched = fetched
        self.guard = guard
        self.tops = [scan.tail.schema]  # one part per slice
        self.weights: Sequence[int] = ()
        self._whole = LazyStreams(work.footer, work.streams, fetched, scan.tail,
                                  threads=scan.threads)
        num_rows, stride = work.stripe.num_rows, scan.tail.row_index_stride
        self._runs: list[tuple[int, int, tuple[int, int] | None]] = (
            [(0, num_rows, None)] if work.runs is None else
            [(first * stride, min(end * stride, num_rows), (first, end))
             for first, end in work.runs if first * stride < num_rows])
        self.num_rows = sum(r1 - r0 for r0, r1, _ in self._runs)
        self.done = 0
        self._run, self._at, self._end = -1, 0, 0
        self._shared = scan.filter_columns <= scan.selected
        self._selected: Context | None = None
        self._probe: Context | None = None

    @staticmethod
    def usable(work: StripeWork) -> bool:
        """Whether the stripe's plan can be decoded in slices (else runs whole)."""
        return work.runs is None or not work.whole

    @property
    def left(self) -> int:
        """Rows not decoded yet."""
        return self.num_rows - self.done

    def prepare(self, rows: int) -> list[Callable[[], Any]]:
        """One part: the next slice of at most ``rows`` rows (in the current run), filtered."""
        scan = self._scan
        if self._selected is None or self._at >= self._end:  # the next run's contexts
            self._run += 1
            self._at, self._end, groups = self._runs[self._run]
            streams: StripeStreams = self._whole if groups is None else _SegmentStreams(
                self._work, self._fetched, scan.tail, self._whole, *groups)
            self._selected = Context(streams, scan.opts, scan.selected, sliced=True)
            self._probe = self._selected if self._shared else Context(
                streams, scan.opts, scan.filter_columns, sliced=True)
        n = min(rows, self._end - self._at)
        self._at += n
        self.done += n
        selected, probe = self._selected, self._probe
        assert probe is not None
        return [lambda: self._next(selected, probe, n)]

    def assemble(self, results: list[Any]) -> pa.RecordBatch:
        """The part's batch."""
        batch: pa.RecordBatch = results[0]
        return batch

    def next_batch(self, rows: int) -> pa.RecordBatch:
        """The next slice's matching rows (perhaps none), decoded on this thread."""
        parts = self.guard(self.prepare, rows)
        return self.assemble([self.guard(parts[0])])

    def _next(self, selected: Context, probe_ctx: Context, n: int) -> pa.RecordBatch:
        scan = self._scan
        probe = scan.sliced_rows(probe_ctx, self._work, n)
        mask = scan.predicate.row_mask(probe)
        hits = mask.true_count
        with scan._lock:
            scan.stats.rows_read += n
            scan.stats.rows_returned += hits
        batch = probe if self._shared else scan.sliced_rows(selected, self._work, n)
        return batch if hits == len(batch) else batch.filter(mask)


def _heaviest_first(decode: Callable[[OrcType], Any], tops: list[OrcType],
                    streams: Mapping[tuple[int, int], StreamInfo], threads: int) -> list[Any]:
    """``[decode(t) for t in tops]``, on up to ``threads`` threads, the columns with the
    most stored bytes started first (so that the last one to finish is a small one)."""
    if threads <= 1 or len(tops) <= 1:
        return [decode(t) for t in tops]
    weights = decode_weights(streams, tops)
    order = sorted(range(len(tops)), key=lambda i: -weights[i])
    arrays = pool_map(decode, [tops[i] for i in order], threads)
    out: list[Any] = [None] * len(tops)
    for i, array in zip(order, arrays, strict=True):
        out[i] = array
    return out


@dataclass
class _SegmentStreams:
    """The streams of a stripe as seen from the start of row group ``first`` (of the run of
    groups ``first`` to ``end``): positioned streams start at the group's run (with values to
    skip), others (``whole``'s) come whole."""

    _work: StripeWork
    _fetched: Fetched
    _tail: FileTail
    _whole: LazyStreams
    _first: int
    _end: int
    _plain: dict[tuple[int, int], memoryview] = field(default_factory=dict, init=False)

    def __post_init__(self) -> None:
        self.writer_timezone = self._whole.writer_timezone
        self.budget = self._whole.budget  # the stripe's (see LazyStreams); each segment: its own

    def _start(self, column: int, kind: int) -> StreamStart | None:
        starts = self._work.positions.get(column, {}).get(kind)
        return None if starts is None or self._work.runs is None else starts[self._first]

    def stream(self, column: int, kind: int) -> bytes | memoryview | None:
        """The stream's decompressed bytes from the segment's start."""
        start = self._start(column, kind)
        if start is None:
            return self._whole.stream(column, kind)
        if (column, kind) not in self._plain:
            self._plain[column, kind] = self._positioned(column, kind, start)
        return self._plain[column, kind]

    def _positioned(self, column: int, kind: int, start: StreamStart) -> memoryview:
        offset, length = self._work.segments[column, kind, self._first]
        raw = stream_bytes(self._work.streams[column, kind], self._fetched.get(offset, length),
                           offset)
        where = f"column {column} {pb.Stream.Kind.Name(kind)} stream"
        try:
            plain = decompress_complete(raw, self._tail.compression, self._tail.block_size,
                                        Budget(self.budget.limit, self.budget.what))
        except CorruptFileError as exc:
            raise CorruptFileError(f"{where}: {exc}") from exc
        return slice_start(plain, start, where)

    def skip(self, column: int, kind: int) -> int:
        """Values to skip at the start of the stream."""
        start = self._start(column, kind)
        return 0 if start is None else start.skip

    def encoding(self, column: int) -> pb.ColumnEncoding:
        """The column's encoding."""
        encoding: pb.ColumnEncoding = self._work.footer.columns[column]
        return encoding
