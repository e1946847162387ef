"""The sans-I/O read plan: which byte ranges a read needs, and decoding the bytes pushed back.

One :class:`ReadPlan` per read of a file, made from its tail, the selected columns, an
optional list of stripes and an optional filter. It cuts the stripes to read (those the
filter's statistics do not rule out) into :class:`GroupPlan` s of consecutive stripes; each
is a push decoder in the shape of parquet-rs's::

    group = plan.groups()[0]
    while (need := group.needs()) is not None:     # NeedsData(ranges, coalesce)
        group.push(need.ranges, fetch(need.ranges))
    for job in group.jobs():                        # one StripeJob per stripe, in order
        batches = job.run()

Nothing here performs I/O or awaits: :mod:`aorc.read.reader` is the driver that fetches the
ranges (coalesced, concurrently, the next group while the current one decodes) and runs the
jobs in threads. A group is read in up to three rounds: the stripe footers, the index
streams the filter needs (row indexes of the filter and decoded columns, bloom filters of
columns compared with ``==``/``in``), then the selected columns' data streams (only the
surviving row groups' bytes for a filtered read). A group spanning at most
``whole_read_bytes`` is read whole, in one round, as is one whose columns are all wanted
(when unfiltered). When the index streams of a filtered group's stripes span at most
``whole_read_bytes`` in all, they come whole with the footers, in one round (so that a
point lookup takes three round trips with the file's tail). Footers that parsed are kept in
the plan's :class:`~aorc.read.footers.FooterCache` (the reader's, shared by its reads): a
group whose footers are all there skips the footer round and asks only for the index
streams it needs (a warm point lookup: two round trips, no tail).

A stripe's decoding is split in parts, one per top-level column (:class:`StripeJob`), so
that a driver can run them on several threads; :meth:`StripeJob.run` runs them in turn.
"""

from __future__ import annotations

import collections
import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import pyarrow as pa

from aorc.errors import AorcError, SchemaError
from aorc.filters.predicate import Predicate
from aorc.format._proto import orc_proto_pb2 as pb
from aorc.format.columns import DecodeOptions, arrow_field
from aorc.format.columns.base import Context, Placement, decode_level
from aorc.format.encryption import keyed_layout
from aorc.format.stripe import DATA_KINDS, StreamInfo, parse_stripe_footer, stream_layout
from aorc.format.tail import FileTail, StripeInfo
from aorc.format.types import OrcType, TypeKind, gc_paused
from aorc.read.common import (
    INLINE_BYTES,
    FetchedBytes,
    LazyStreams,
    WholeFile,
    decode_weights,
    group_stripes,
    guarded,
    stripes_text,
)
from aorc.read.footers import FooterCache
from aorc.read.pushdown import FilteredSlices, ScanPlanner, ScanStats, StripeWork

__all__ = [
    "FOOTERS_AHEAD",
    "GROUP_BYTES",
    "WHOLE_READ_BYTES",
    "GroupPlan",
    "NeedsData",
    "ReadPlan",
    "SliceSource",
    "StripeJob",
    "StripeSlices",
    "decode_file",
    "parse_layout",
    "selected_pairs",
]

#: Stripes are read in groups of consecutive stripes of about this many bytes in total
#: (at least one stripe); a driver fetches the next group while the current one decodes.
GROUP_BYTES = 8 * 1024 * 1024
#: A group of stripes spanning at most this many bytes is read whole, in one request, even
#: when only some columns are wanted (a round trip costs more than that many bytes).
WHOLE_READ_BYTES = 1024 * 1024
#: An unfiltered read of some columns asks for the footers of up to this many stripes after
#: its group's with them (kept by the plan for the next groups).
FOOTERS_AHEAD = 16

Layout = tuple[pb.StripeFooter, list[StreamInfo]]


@dataclass(frozen=True)
class NeedsData:
    """Byte ranges a group needs before it can go on.

    Attributes:
        ranges: absolute ``(offset, length)`` ranges, to be pushed back in this order.
        coalesce: whether the ranges may be merged into fewer requests (stripe footers are
            not: the stripe data lies between them).
    """

    ranges: tuple[tuple[int, int], ...]
    coalesce: bool = True


@dataclass
class StripeJob:
    """Decoding one stripe: ``prepare`` gives the parts (independent callables, one per
    top-level column, that may run on different threads at once), ``assemble`` makes the
    batches of their results. Errors name the file and the stripe."""

    index: int
    path: str
    prepare: Callable[[], list[Callable[[], Any]]]
    assemble: Callable[[list[Any]], list[pa.RecordBatch]]
    #: An estimate of each part's work (its columns' stored bytes), in the order of the
    #: parts; empty when unknown.
    weights: Sequence[int] = ()
    #: The stripe's rows, and how to decode them in row slices instead (a stream's way:
    #: ``None`` when the job cannot, e.g. some filtered reads: see ``FilteredSlices``).
    num_rows: int = 0
    slices: Callable[[], SliceSource] | None = None

    @property
    def where(self) -> str:
        """``"stripe N"``, for error messages."""
        return f"stripe {self.index}"

    def guard(self, func: Callable[..., Any], *args: Any) -> Any:
        """Run ``func`` with errors given the file and the stripe as context."""
        return guarded(self.path, self.where, func, *args)

    def run(self) -> list[pa.RecordBatch]:
        """Decode the stripe on this thread (its batches, empty ones left out)."""
        parts = self.guard(self.prepare)
        results = [self.guard(part) for part in parts]
        out: list[pa.RecordBatch] = self.guard(self.assemble, results)
        return out


class SliceSource(Protocol):
    """A stripe decoded in row slices, one after the other (:class:`StripeSlices`, or
    :class:`aorc.read.pushdown.FilteredSlices` for a filtered read)."""

    @property
    def left(self) -> int:
        """Rows not decoded yet."""
        ...

    @property
    def tops(self) -> Sequence[Any]:
        """One entry per part of a slice."""
        ...

    @property
    def weights(self) -> Sequence[int]:
        """An estimate of each part's work (empty: unknown)."""
        ...

    def guard(self, func: Callable[..., Any], *args: Any) -> Any:
        """Run ``func`` with errors given the file and the stripe as context."""
        ...

    def prepare(self, rows: int) -> list[Callable[[], Any]]:
        """The parts decoding the next ``min(rows, left)`` rows."""
        ...

    def assemble(self, results: list[Any]) -> pa.RecordBatch:
        """The batch of a slice's parts' results."""
        ...

    def next_batch(self, rows: int) -> pa.RecordBatch:
        """Decode the next slice on this thread."""
        ...


@dataclass
class StripeSlices:
    """Decoding one stripe's selected columns in row slices, in order (a stream's way: one
    slice of every column is held at a time, whatever the stripe's row count).

    Each slice is :meth:`prepare` (the parts: one callable per top-level column, which may
    run on different threads at once; the root's PRESENT stream is read here) then
    :meth:`assemble`. Slices must be decoded one after the other: the column decoders read
    their streams on from where the previous slice stopped (see
    :class:`aorc.format.columns.base.Context`).
    """

    index: int
    path: str
    num_rows: int
    ctx: Context
    #: The struct root whose PRESENT stream applies (``None``: a non-struct root).
    root: OrcType | None
    tops: list[tuple[str, OrcType]]
    schema: pa.Schema
    weights: Sequence[int] = ()
    done: int = 0

    @property
    def where(self) -> str:
        """``"stripe N"``, for error messages."""
        return f"stripe {self.index}"

    @property
    def left(self) -> int:
        """Rows not decoded yet."""
        return self.num_rows - self.done

    def guard(self, func: Callable[..., Any], *args: Any) -> Any:
        """Run ``func`` with errors given the file and the stripe as context."""
        return guarded(self.path, self.where, func, *args)

    def prepare(self, rows: int) -> list[Callable[[], Any]]:
        """The parts decoding the next ``min(rows, left)`` rows (at least one row left)."""
        n = min(rows, self.left)
        level = Placement(n)
        if self.root is not None:
            slots = self.ctx.slots(self.root, level)
            if slots.valid is not None:  # a null root row: its fields read as null
                level = slots.level()
        self.done += n
        return [functools.partial(decode_level, c, self.ctx, level) for _, c in self.tops]

    def assemble(self, arrays: list[Any]) -> pa.RecordBatch:
        """The batch of a slice's parts' results."""
        return pa.RecordBatch.from_arrays(arrays, schema=self.schema)

    def next_batch(self, rows: int) -> pa.RecordBatch:
        """Decode the next slice on this thread."""
        parts = self.guard(self.prepare, rows)
        arrays = [self.guard(part) for part in parts]
        batch: pa.RecordBatch = self.guard(self.assemble, arrays)
        return batch


def parse_layout(path: str, tail: FileTail, stripe: StripeInfo,
                 raw_footer: bytes | memoryview) -> Layout:
    """Parse a stripe footer and lay out its streams (errors name file and stripe)."""
    where = f"stripe {stripe.index}"
    footer = guarded(path, where, parse_stripe_footer, raw_footer, tail, stripe)
    layout = guarded(path, where, stream_layout, stripe, footer)
    return guarded(path, where, keyed_layout, tail, stripe, footer, layout)


class ReadPlan:
    """The plan of one read of one file.

    Args:
        tail: the file's tail.
        selected: column ids to return (from :func:`aorc.format.projection.select_columns`).
        stripes: indices of the stripes to read (in file order); ``None`` for all.
        predicate: the filter, or ``None``.
        opts: decoding options.
        stats: counters of filtered reads, updated as the plan goes.
        path: the file's name, for error messages.
        group_bytes: see :data:`GROUP_BYTES`.
        whole_read_bytes: see :data:`WHOLE_READ_BYTES`.
        threads: the threads one stripe's decoding may use (long streams are decompressed
            in pieces when more than 1).
        footers: the stripe footers known already, to which the footers this plan parses
            are added (a reader's, shared by its reads); ``None``: a new one, for this plan.

    Raises:
        SchemaError: for a stripe index out of range.
    """

    def __init__(self, tail: FileTail, selected: set[int], *,
                 stripes: Sequence[int] | None = None, predicate: Predicate | None = None,
                 opts: DecodeOptions | None = None, stats: ScanStats | None = None,
                 path: str = "", group_bytes: int = GROUP_BYTES,
                 whole_read_bytes: int = WHOLE_READ_BYTES, threads: int = 1,
                 footers: FooterCache | None = None) -> None:
        self.tail = tail
        self.threads = threads
        self.selected = selected
        self.path: str = path or tail.where()
        self.opts = opts if opts is not None else DecodeOptions.from_tail(tail)
        self.stats = stats if stats is not None else ScanStats()
        self.group_bytes = group_bytes
        self.whole_read_bytes = whole_read_bytes
        self.stripes = self._chosen(stripes)
        self.scan = (None if predicate is None else
                     ScanPlanner(tail, selected, predicate, self.opts, self.stats,
                                 threads=threads))
        self.footers = footers if footers is not None else FooterCache()
        #: Footers fetched ahead for the next groups, not parsed yet.
        self.raw_footers: dict[int, bytes | memoryview] = {}
        #: The bytes a projection fetches of each stripe whose footer was seen (see
        #: :meth:`next_group`).
        self._fetched_bytes: dict[int, int] = {}

    def _chosen(self, stripes: Sequence[int] | None) -> list[StripeInfo]:
        every = self.tail.stripes
        if stripes is None:
            return list(every)
        out = []
        for i in sorted(set(stripes)):
            if not isinstance(i, int) or not 0 <= i < len(every):
                raise SchemaError(f"{self.path}: no stripe {i!r} (the file has "
                                  f"{len(every)})")
            out.append(every[i])
        return out

    @property
    def all_columns(self) -> bool:
        """Whether every column of the file is selected."""
        return len(self.selected) == self.tail.num_columns

    def schema(self) -> pa.Schema:
        """The schema of the batches (the selected columns)."""
        root = self.tail.schema
        dictionary, unit = self.opts.dictionary_strings, self.opts.timestamp_unit
        if root.kind != TypeKind.STRUCT:
            return pa.schema([arrow_field("_col0", root, self.selected,
                                          dictionary_strings=dictionary, timestamp_unit=unit,
                                          instant=self.opts.use_writer_timezone)])
        with gc_paused():  # a field per column: a footer may declare a million
            return pa.schema([arrow_field(n, c, self.selected, dictionary_strings=dictionary,
                                          timestamp_unit=unit,
                                          instant=self.opts.use_writer_timezone)
                              for n, c in zip(root.field_names, root.children, strict=True)
                              if c.column_id in self.selected])

    def decode_whole(self, data: bytes | memoryview, schema: pa.Schema | None = None
                     ) -> list[pa.RecordBatch] | None:
        """An unfiltered read's batches decoded from ``data``, the whole file's bytes, on
        this thread: no groups, no rounds (a dataset of many small files reads each so);
        ``None`` when ``data`` is not the whole file or the read is filtered. ``schema``:
        :meth:`schema`, when the caller knows it (the files of a dataset share theirs)."""
        if self.scan is not None or len(data) != self.tail.file_length:
            return None
        return decode_file(self.tail, data, self.selected, self.opts,
                           self.schema() if schema is None else schema, self.path,
                           self.stripes)

    def groups(self) -> list[GroupPlan]:
        """The groups of stripes to read, in file order (for a filtered read, those whose
        statistics do not rule them out; counters updated)."""
        if self.scan is not None:
            stripes = guarded(self.path, None, self.scan.stripes, self.stripes)
        else:
            stripes = self.stripes
        return [GroupPlan(self, g) for g in group_stripes(stripes, self.group_bytes)]

    def next_group(self, queue: collections.deque[GroupPlan]) -> GroupPlan:
        """Take the next group to fetch from ``queue`` (groups of :meth:`groups`, none
        started), joined with the groups after it while they follow on and the bytes this
        read fetches of them stay within ``group_bytes``.

        :meth:`groups` cuts groups by stripe size, which is what a whole read fetches. A read
        of some columns fetches only their streams, often a small share of each stripe:
        counted by stripe size, it would take one or two round trips per stripe. Here the
        streams' sizes come from the footers fetched so far (a group's footer round fetches
        those of the next :data:`FOOTERS_AHEAD` stripes too), and a stripe whose footer is
        not known yet counts at the share of the known ones (its whole size before any is
        known). The bytes held at once stay bounded by ``group_bytes`` as before.
        """
        first = queue.popleft()
        if self.scan is not None or self.all_columns or not queue:
            return first
        stripes = list(first.stripes)
        size = sum(self._fetched_estimate(s) for s in stripes)
        while queue and queue[0].stripes[0].index == stripes[-1].index + 1:
            more = sum(self._fetched_estimate(s) for s in queue[0].stripes)
            if size + more > self.group_bytes:
                break
            stripes += queue.popleft().stripes
            size += more
        return first if len(stripes) == len(first.stripes) else GroupPlan(self, stripes)

    def _fetched_estimate(self, stripe: StripeInfo) -> int:
        """The bytes of ``stripe`` a projection fetches: from its footer when it is known,
        else its size scaled by the share of the stripes measured so far."""
        known = self._fetched_bytes.get(stripe.index)
        if known is not None:
            return known
        raw = self.raw_footers.get(stripe.index)
        if raw is None:
            raw = self.footers.get(stripe.index)
        if raw is not None:
            try:
                _, layout = parse_layout(self.path, self.tail, stripe, raw)
            except AorcError:  # reported when the stripe is read
                return stripe.length
            known = sum(s.length for s in layout
                        if s.column in self.selected and s.kind in DATA_KINDS)
            self._fetched_bytes[stripe.index] = known
            return known
        if not self._fetched_bytes:
            return stripe.length
        every = self.tail.stripes
        total = sum(every[i].length for i in self._fetched_bytes)
        return stripe.length * sum(self._fetched_bytes.values()) // max(total, 1)

    # ------------------------------------------------------------------ unfiltered decode
    def stripe_job(self, stripe: StripeInfo, footer: pb.StripeFooter,
                   streams: dict[tuple[int, int], StreamInfo], fetched: FetchedBytes,
                   *, weigh: bool = True) -> StripeJob:
        """The decoding of a whole stripe's selected columns (``weigh``: with its parts'
        weights, for a driver that shares them among threads)."""
        root = self.tail.schema
        selected = self.selected
        lazy = LazyStreams(footer, streams, fetched, self.tail, threads=self.threads,
                           max_decoded_bytes=self.opts.max_decoded_bytes)
        ctx = Context(lazy, self.opts, selected)
        dictionary = self.opts.dictionary_strings
        if root.kind == TypeKind.STRUCT:
            pairs = [(n, c) for n, c in zip(root.field_names, root.children, strict=True)
                     if c.column_id in selected]
        else:
            pairs = [("_col0", root)]

        def prepare() -> list[Callable[[], Any]]:
            level = Placement(stripe.num_rows)
            if root.kind == TypeKind.STRUCT:
                slots = ctx.slots(root, level)
                if slots.valid is not None:  # a null root row: its fields read as null
                    level = slots.level()
            return [functools.partial(decode_level, c, ctx, level) for _, c in pairs]

        def assemble(arrays: list[Any]) -> list[pa.RecordBatch]:
            fields = [arrow_field(n, c, selected, dictionary_strings=dictionary,
                                  timestamp_unit=self.opts.timestamp_unit,
                                  instant=self.opts.use_writer_timezone) for n, c in pairs]
            batch = pa.RecordBatch.from_arrays(arrays, schema=pa.schema(fields))
            return [batch] if batch.num_rows else []

        weights = (decode_weights(streams, [c for _, c in pairs], stripe.num_rows) if weigh
                   else [])

        def slices() -> StripeSlices:
            sliced = Context(lazy, self.opts, selected, sliced=True)
            fields = [arrow_field(n, c, selected, dictionary_strings=dictionary,
                                  timestamp_unit=self.opts.timestamp_unit,
                                  instant=self.opts.use_writer_timezone) for n, c in pairs]
            return StripeSlices(stripe.index, self.path, stripe.num_rows, sliced,
                                root if root.kind == TypeKind.STRUCT else None, pairs,
                                pa.schema(fields), weights)

        return StripeJob(stripe.index, self.path, prepare, assemble, weights,
                         stripe.num_rows, slices)

    def filtered_job(self, work: StripeWork | None, stripe: StripeInfo,
                     fetched: FetchedBytes) -> StripeJob:
        """The decoding of a stripe's surviving row groups (none when ``work`` is None), also
        in row slices when :meth:`FilteredSlices.usable`."""
        scan = self.scan
        assert scan is not None
        slices: Callable[[], SliceSource] | None = None
        if work is not None and FilteredSlices.usable(work):
            def slices() -> SliceSource:
                return FilteredSlices(scan, work, fetched,
                                      functools.partial(guarded, self.path,
                                                        f"stripe {stripe.index}"))

        def prepare() -> list[Callable[[], Any]]:
            if work is None:
                return []
            return [lambda: list(scan.decode(work, fetched))]

        def assemble(results: list[Any]) -> list[pa.RecordBatch]:
            return results[0] if results else []

        return StripeJob(stripe.index, self.path, prepare, assemble, (), stripe.num_rows,
                         slices)


def decode_file(tail: FileTail, data: bytes | memoryview, selected: set[int],
                opts: DecodeOptions, schema: pa.Schema, path: str,
                stripes: Sequence[StripeInfo] | None = None,
                pairs: list[tuple[str, OrcType]] | None = None,
                types: dict[int, pa.DataType] | None = None) -> list[pa.RecordBatch]:
    """The batches of the ``selected`` columns of ``stripes`` (default: all), decoded from
    ``data``, the whole file's bytes, on this thread: :meth:`ReadPlan.decode_whole` without a
    plan (a dataset of many small files decodes each file so, a few microseconds a file
    cheaper). ``schema`` is :meth:`ReadPlan.schema`'s, ``pairs`` the selected top-level
    fields (:func:`selected_pairs`), when the caller knows them; ``types``: the columns'
    Arrow types worked out so far, by column id, shared by the files of one type tree and
    selection read so (see :meth:`aorc.format.columns.base.Context.arrow_type`).

    Raises:
        CorruptFileError: a damaged stripe (naming ``path`` and the stripe).
        ResourceLimitError: a stripe decodes to more than ``opts.max_decoded_bytes``.
    """
    root = tail.schema
    if pairs is None:
        pairs = selected_pairs(root, selected)
    fetched = WholeFile(data)
    out: list[pa.RecordBatch] = []
    for stripe in tail.stripes if stripes is None else stripes:
        batch = guarded(path, f"stripe {stripe.index}", _whole_stripe, tail, stripe, fetched,
                        selected, opts, root, pairs, schema, {} if types is None else types)
        if batch.num_rows:
            out.append(batch)
    return out


def selected_pairs(root: OrcType, selected: set[int]) -> list[tuple[str, OrcType]]:
    """The top-level fields (name, type) with a selected column, in the file's order."""
    if root.kind != TypeKind.STRUCT:
        return [("_col0", root)]
    return [(n, c) for n, c in zip(root.field_names, root.children, strict=True)
            if c.column_id in selected]


def _whole_stripe(tail: FileTail, stripe: StripeInfo, fetched: FetchedBytes,
                  selected: set[int], opts: DecodeOptions, root: OrcType,
                  pairs: list[tuple[str, OrcType]], schema: pa.Schema,
                  types: dict[int, pa.DataType]) -> pa.RecordBatch:
    footer = parse_stripe_footer(fetched.get(stripe.footer_offset, stripe.footer_length),
                                 tail, stripe)
    layout = stream_layout(stripe, footer, selected)
    if tail.decryption is not None:
        footer, layout = keyed_layout(tail, stripe, footer, layout, selected)
    streams = {(s.column, s.kind): s for s in layout if s.kind in DATA_KINDS}
    lazy = LazyStreams(footer, streams, fetched, tail, max_decoded_bytes=opts.max_decoded_bytes)
    return _decode_stripe(Context(lazy, opts, selected, types), root, pairs, stripe.num_rows,
                          schema)


def _decode_stripe(ctx: Context, root: OrcType, pairs: list[tuple[str, OrcType]], rows: int,
                   schema: pa.Schema) -> pa.RecordBatch:
    """A whole stripe's selected top-level columns (``pairs``) decoded in turn on this
    thread: :meth:`ReadPlan.stripe_job`'s parts and assembly in one go."""
    level = Placement(rows, None, rows)
    if root.kind == TypeKind.STRUCT:
        slots = ctx.slots(root, level)
        if slots.valid is not None:  # a null root row: its fields read as null
            level = slots.level()
    return pa.RecordBatch.from_arrays([decode_level(c, ctx, level) for _, c in pairs],
                                      schema=schema)


def _failed(plan: ReadPlan, stripe: StripeInfo, error: AorcError) -> StripeJob:
    """A job that raises ``error`` when the stripe's turn comes (so that earlier stripes are
    still delivered)."""
    def prepare() -> list[Callable[[], Any]]:
        raise error
    return StripeJob(stripe.index, plan.path, prepare, lambda results: [])


@dataclass
class _Stripe:
    """A stripe of a group as planning goes: its layout, plan or error."""

    info: StripeInfo
    layout: Layout | None = None
    work: StripeWork | None = None
    error: AorcError | None = None


@dataclass
class GroupPlan:
    """The push decoder of a group of consecutive stripes (see the module's docstring).

    Ask :meth:`needs` for ranges and :meth:`push` their bytes until it says ``None``; then
    :meth:`jobs` decodes the stripes. :meth:`push` parses footers and indexes (run it on a
    worker thread when that matters).
    """

    plan: ReadPlan
    stripes: list[StripeInfo]
    fetched: FetchedBytes = field(default_factory=FetchedBytes)
    _state: list[_Stripe] = field(default_factory=list)
    _stage: str = "start"
    _need: NeedsData | None = None
    _raw: dict[int, bytes | memoryview] = field(default_factory=dict)  # the group's footers

    def __post_init__(self) -> None:
        self._state = [_Stripe(s) for s in self.stripes]

    @property
    def where(self) -> str:
        """``"stripe N"`` or ``"stripes N-M"``."""
        return stripes_text(self.stripes)

    @property
    def whole(self) -> bool:
        """Whether the group is read whole, in one range."""
        start, end = self.stripes[0].offset, self.stripes[-1].end
        return (end - start <= self.plan.whole_read_bytes
                or (self.plan.scan is None and self.plan.all_columns))

    def needs(self) -> NeedsData | None:
        """The ranges needed next, or ``None`` when the stripes can be decoded (the first
        call decides, so footers fetched ahead for earlier groups are not asked again)."""
        if self._stage == "start":
            self._advance()
        return self._need

    @property
    def light_start(self) -> bool:
        """Whether the first :meth:`needs` is light: it parses the known footers it finds
        (all of them: it goes on to the next round), run it on a worker thread if not."""
        known = self.plan.footers
        return self.whole or sum(known.size(s.index) for s in self.stripes) <= INLINE_BYTES

    @property
    def light_push(self) -> bool:
        """Whether the next :meth:`push` only stores its bytes (the data round: nothing
        left to parse)."""
        return self._stage == "data"

    def push(self, ranges: Sequence[tuple[int, int]],
             data: Sequence[bytes | memoryview]) -> None:
        """Give the bytes of ranges (those of :meth:`needs`, in its order)."""
        pieces = list(zip(ranges, data, strict=True))
        if self._stage == "footers" and not self.whole:
            plan = self.plan
            footers = {(s.footer_offset, s.footer_length): s.index for s in plan.tail.stripes}
            mine = {s.index for s in self.stripes}
            for (offset, length), raw in pieces:
                if (offset, length) in footers:
                    index = footers[offset, length]
                    (self._raw if index in mine else plan.raw_footers)[index] = raw
                else:  # a stripe's index streams, asked for with the footers
                    self.fetched.add([(offset, raw)])
        else:
            self.fetched.add([(offset, raw) for (offset, _), raw in pieces])
        self._advance()

    def jobs(self) -> list[StripeJob]:
        """One decoding job per stripe, in order.

        Raises:
            RuntimeError: bytes are still needed (a driver bug).
        """
        if self._stage == "start" or self._need is not None:
            raise RuntimeError("GroupPlan.jobs() called before every range was pushed")
        plan, out = self.plan, []
        for item in self._state:
            if item.error is not None:
                out.append(_failed(plan, item.info, item.error))
            elif plan.scan is not None:
                out.append(plan.filtered_job(item.work, item.info, self.fetched))
            else:
                assert item.layout is not None
                footer, layout = item.layout
                streams = {(s.column, s.kind): s for s in layout if self._wanted(s)}
                out.append(plan.stripe_job(item.info, footer, streams, self.fetched))
        self._state = []  # the jobs own the bytes from here on
        return out

    # ------------------------------------------------------------------ the stages
    def _advance(self) -> None:
        """Move through the stages until bytes are missing (or all is there)."""
        while True:
            ranges, coalesce = self._step()
            if ranges is None:
                self._need = None
                return
            missing = tuple(self.fetched.missing(ranges))
            if missing:
                self._need = NeedsData(missing, coalesce)
                return

    def _step(self) -> tuple[list[tuple[int, int]] | None, bool]:
        """Enter the next stage; the ranges it needs (``None``: done)."""
        plan = self.plan
        if self._stage == "start":
            self._stage = "footers"
            if self.whole:
                start, end = self.stripes[0].offset, self.stripes[-1].end
                return [(start, end - start)], True
            footers = self._footer_ranges()
            if not footers:  # all known: the index streams needed (or the data) next
                return [], True
            return footers + self._index_regions(), False
        if self._stage == "footers":
            self._stage = "index"
            self._layouts()
            if plan.scan is None:
                self._stage = "data"
                return self._data_ranges(), True
            return [r for item in self._state if item.layout is not None
                    for r in plan.scan.index_ranges(item.info, *item.layout)], True
        if self._stage == "index":
            self._stage = "data"
            self._plan_row_groups()
            return [r for item in self._state if item.work is not None
                    for r in item.work.ranges], True
        return None, True

    def _footer_ranges(self) -> list[tuple[int, int]]:
        """Footers of the group's stripes not known yet (for an unfiltered read, with those
        of up to FOOTERS_AHEAD next stripes); empty when all are known. Takes the known
        ones, fetched ahead or kept by the cache."""
        plan, every = self.plan, self.plan.tail.stripes
        for s in self.stripes:
            raw = plan.raw_footers.pop(s.index, None)
            if raw is None:
                raw = plan.footers.get(s.index)
            if raw is not None:
                self._raw[s.index] = raw
        wanted = [s.index for s in self.stripes if s.index not in self._raw]
        if not wanted:
            return []
        if plan.scan is None:
            last = min(len(every), max(wanted) + 1 + FOOTERS_AHEAD)
            wanted += [i for i in range(max(wanted) + 1, last)
                       if i not in plan.raw_footers and i not in plan.footers]
        return [(every[i].footer_offset, every[i].footer_length) for i in wanted]

    def _index_regions(self) -> list[tuple[int, int]]:
        """For a filtered read, the index streams of the group's stripes whole, when they
        span at most ``whole_read_bytes`` in all: fetched with the footers, they save the
        round trip that would fetch the needed ones once the footers say where they are."""
        plan = self.plan
        if plan.scan is None or plan.tail.row_index_stride <= 0:
            return []
        if sum(s.index_length for s in self.stripes) > plan.whole_read_bytes:
            return []
        return [(s.offset, s.index_length) for s in self.stripes if s.index_length]

    def _raw_footer(self, stripe: StripeInfo) -> bytes | memoryview:
        if self.whole:
            return self.fetched.get(stripe.footer_offset, stripe.footer_length)
        return self._raw.pop(stripe.index)

    def _layouts(self) -> None:
        """Parse each stripe's footer, keeping those that parse; errors stay with their
        stripe (and the footer is forgotten)."""
        plan = self.plan
        for item in self._state:
            index = item.info.index
            raw = self._raw_footer(item.info)
            try:
                item.layout = parse_layout(plan.path, plan.tail, item.info, raw)
            except AorcError as exc:
                item.error = exc
                plan.footers.discard(index)
            else:
                plan.footers.put(index, raw)

    def _wanted(self, stream: StreamInfo) -> bool:
        """A data stream of a selected column."""
        return stream.column in self.plan.selected and stream.kind in DATA_KINDS

    def _data_ranges(self) -> list[tuple[int, int]]:
        return [(s.offset, s.length) for item in self._state if item.layout is not None
                for s in item.layout[1] if self._wanted(s) and s.length]

    def _plan_row_groups(self) -> None:
        """Choose each stripe's row groups; errors stay with their stripe."""
        plan, scan = self.plan, self.plan.scan
        assert scan is not None
        for item in self._state:
            if item.layout is None:
                continue
            try:
                item.work = guarded(plan.path, f"stripe {item.info.index}", scan.plan,
                                    item.info, *item.layout, self.fetched)
            except AorcError as exc:
                item.error = exc
