"""Shared machinery of the column encoders: options, results, nulls, row groups, dispatch.

:func:`encode_column` turns the Arrow values of one column (and its subtree) for one stripe
into ORC streams, exactly as ORC Java's ``TreeWriter`` classes write them, with the row-index
positions, statistics and bloom filters of every row group.

Every encoder works at a *level*: ``arr`` holds the column's slots (nulls included) and
``starts`` the slot index where each row group begins. This module handles what all columns
share: the PRESENT stream (written only when the stripe holds a null, as Java suppresses it
otherwise), the per-row-group value count and hasNull, and the conversion of slot starts into
value starts (nulls hold no value). The type modules then encode the non-null values; children
of compound types are encoded at the level of their parent's values.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, MutableMapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from aorc.errors import SchemaError
from aorc.format._proto import orc_proto_pb2 as pb
from aorc.format.codec import rle
from aorc.format.codec._encode_values import group_true_counts
from aorc.format.codec.bloom import DEFAULT_FPP, BloomFilter
from aorc.format.codec.compression import DEFAULT_BLOCK_SIZE, CompressionKind
from aorc.format.columns.encode.statistics import (
    Stats,
    base_group_stats,
    stats_class,
)
from aorc.format.messages import parsed_statistics
from aorc.format.types import (
    LEGACY_DECIMAL_PRECISION,
    LEGACY_DECIMAL_SCALE,
    OrcType,
    TypeKind,
    to_arrow_type,
    type_string,
)

__all__ = [
    "NESTED_TASK_BYTES",
    "EncodeLevel",
    "EncodeOptions",
    "EncodedColumn",
    "EncodedStream",
    "ValueParts",
    "encode_column",
    "exact_group_sums",
    "group_bounds",
    "group_reduce",
    "register",
]

#: ColumnEncoding.bloomEncoding of the filters written (UTF-8 strings, UTC timestamps).
BLOOM_ENCODING_UTF8 = 1
_LONG_MAX = 2**63 - 1


@dataclass
class EncodedStream:
    """One stream of one column in one stripe.

    Attributes:
        kind: the ``pb.Stream.Kind``.
        data: the uncompressed stream bytes.
        positions: one list per row group: where the row group starts in this stream, in
            uncompressed form (byte offset, then the RLE run offset and, for boolean streams,
            the bit offset). Streams that ORC records no positions for (dictionary
            DICTIONARY_DATA and LENGTH) have an empty list per row group.
    """

    kind: int
    data: bytes | memoryview
    positions: list[list[int]]


@dataclass
class EncodedColumn:
    """One column of one stripe, encoded.

    Attributes:
        column_id: the column's id.
        encoding: its ColumnEncoding for the stripe footer (shared between columns: never
            modify it).
        streams: its streams in the order ORC Java records their positions in the row index
            (PRESENT first when present; position-less streams last). Concatenating
            ``s.positions[g]`` over the streams gives row group ``g``'s index entry.
        stripe_stats: the stripe's statistics (row-group statistics merged in order);
            ``bytesOnDisk`` is left for the stripe writer: ORC Java sets it to the stored
            (compressed) size of the column's data-area streams in the stripe.
        row_group_stats: one statistics message per row group.
        bloom_filters: one filter per row group when the column is in
            ``EncodeOptions.bloom_filter_columns`` (and row groups exist), else ``None``.
        children: the encoded child columns, in column-id order.
        stripe_stats_bytes: :attr:`stripe_stats` serialized, as the encoder made it.
        row_group_stats_bytes: :attr:`row_group_stats` serialized, as the encoder made them.

    The statistics are kept serialized and parsed only when asked for: the stripe writer
    copies the bytes, and protobuf messages made per column and row group cost a protobuf
    arena each, after every 10,000 of which protobuf trims the process's heap (see
    :mod:`aorc.format.messages`).
    """

    column_id: int
    encoding: pb.ColumnEncoding
    streams: list[EncodedStream]
    stripe_stats_bytes: bytes
    row_group_stats_bytes: list[bytes]
    bloom_filters: list[BloomFilter] | None
    children: list[EncodedColumn]

    @functools.cached_property
    def stripe_stats(self) -> pb.ColumnStatistics:  # noqa: D102 -- documented above
        (stats,) = parsed_statistics([self.stripe_stats_bytes])
        return stats

    @functools.cached_property
    def row_group_stats(self) -> list[pb.ColumnStatistics]:  # noqa: D102
        return parsed_statistics(self.row_group_stats_bytes)


#: The defaults of aorc's writer (``aorc.EncodeOptions`` takes them from here).
DEFAULT_COMPRESSION = CompressionKind.ZSTD
DEFAULT_STRIPE_SIZE = 64 * 1024 * 1024
DEFAULT_ROW_INDEX_STRIDE = 10_000
DEFAULT_DICTIONARY_KEY_SIZE_THRESHOLD = 0.8
DEFAULT_TIMEZONE = "UTC"
#: A nested struct, map or union of a parallel write encodes its children in tasks of their
#: own when they hold at least this many bytes (below it, one task's overhead is not worth
#: it; the root's fields are always one task each).
NESTED_TASK_BYTES = 1 << 20


@dataclass
class EncodeOptions:
    """The writer's options resolved against a schema, as the encoders and the stripe and
    file assemblers read them (the subset the encoders use is marked). Built by
    ``aorc.EncodeOptions.resolve``; the defaults are the same.

    Attributes:
        compression: compression codec of the file's streams.
        compression_block_size: uncompressed bytes per compression chunk.
        stripe_size: target stripe size in bytes (before compression).
        row_index_stride: rows per row group; 0 writes no row index (and no bloom filters).
            (encoders) bloom filters are sized for this many values, as ORC Java does.
        dictionary_key_size_threshold: (encoders) strings are dictionary encoded when the
            distinct values of the first row group are at most this fraction of its
            non-null values (ORC Java's ``orc.dictionary.key.threshold``); 0 disables
            dictionaries.
        bloom_filter_columns: (encoders) column ids that get bloom filters.
        bloom_filter_fpp: (encoders) the bloom filters' false positive probability.
        timezone: (encoders) the writer's time zone: naive Arrow timestamps are wall-clock
            times there, and the stripe footer's ``writerTimezone`` must name it.
        threads: threads that may encode and compress the columns of one stripe (1: the
            calling thread alone). The bytes written do not depend on it.
        compression_level: the codec level of every stream and file structure; None uses
            ORC Java's levels (``aorc.format.codec.compression.default_level``).
    """

    compression: CompressionKind = DEFAULT_COMPRESSION
    compression_block_size: int = DEFAULT_BLOCK_SIZE
    stripe_size: int = DEFAULT_STRIPE_SIZE
    row_index_stride: int = DEFAULT_ROW_INDEX_STRIDE
    dictionary_key_size_threshold: float = DEFAULT_DICTIONARY_KEY_SIZE_THRESHOLD
    bloom_filter_columns: set[int] = field(default_factory=set)
    bloom_filter_fpp: float = DEFAULT_FPP
    timezone: str = DEFAULT_TIMEZONE
    threads: int = 1
    compression_level: int | None = None


@dataclass
class EncodeLevel:
    """Everything an encoder needs about one column at one level.

    Attributes:
        t: the column's type.
        opts: the write options.
        starts: slot index of the first slot of each row group (may be empty: no row index).
        decisions: dictionary decisions of earlier stripes (column id -> use dictionary),
            updated with new ones; ``None`` decides afresh in every stripe.
        parallel: encode the children of this column on ``opts.threads`` threads (set at
            the root and handed down: the root's fields are one task each, and a nested
            struct, map or union whose children hold at least :data:`NESTED_TASK_BYTES`
            encodes them in tasks of their own, so that one big nested column is not one
            thread's work while the others wait).
        finish: applied to each encoded field of the root, and to each child encoded in a
            task of its own, in the thread that encoded it, as soon as it is encoded (the
            stripe writer compresses the column's streams there); its result takes the
            column's place in the tree.
        nested: below the root.
    """

    t: OrcType
    opts: EncodeOptions
    starts: npt.NDArray[np.int64]
    decisions: MutableMapping[int, bool] | None = None
    parallel: bool = False
    finish: Callable[[EncodedColumn], EncodedColumn] | None = None
    nested: bool = False

    @property
    def indexed(self) -> bool:
        """Whether row groups (and so positions, row-group statistics) are produced."""
        return len(self.starts) > 0

    @property
    def bloom(self) -> bool:
        """Whether this column gets bloom filters."""
        return self.indexed and self.t.column_id in self.opts.bloom_filter_columns

    def child(self, t: OrcType, starts: npt.NDArray[np.int64]) -> EncodeLevel:
        """The level of a child column whose row groups start at ``starts``."""
        return EncodeLevel(t, self.opts, starts, self.decisions, self.parallel, self.finish,
                           nested=True)


@dataclass
class ValueParts:
    """What a type encoder produces from the non-null values of a column.

    Attributes:
        kind: the ColumnEncoding kind.
        streams: the value streams (PRESENT excluded) in position order.
        stats: one statistics object per group (count/hasNull filled in by the caller).
        hashes: the bloom filter hashes of each group's values (``None``: no filter wanted,
            or the type adds nothing, e.g. boolean and struct).
        children: encoded children.
        dictionary_size: set for dictionary encodings.
    """

    kind: int
    streams: list[EncodedStream]
    stats: Sequence[Stats]
    hashes: list[npt.NDArray[np.int64]] | None = None
    children: list[EncodedColumn] = field(default_factory=list)
    dictionary_size: int | None = None


#: A type encoder: (level, non-null values, value starts of the groups, group statistics
#: objects with count and hasNull already set) -> the value parts.
Encoder = Callable[[EncodeLevel, pa.Array, npt.NDArray[np.int64], list[Any]], ValueParts]
_ENCODERS: dict[TypeKind, Encoder] = {}


def register(*kinds: TypeKind) -> Callable[[Encoder], Encoder]:
    """Class the decorated function as the encoder of ``kinds``."""
    def wrap(fn: Encoder) -> Encoder:
        for kind in kinds:
            _ENCODERS[kind] = fn
        return fn
    return wrap


def positions_list(positions: np.ndarray) -> list[list[int]]:
    """Row-index positions from a kernel's ``(groups, k)`` array."""
    out: list[list[int]] = positions.tolist()
    return out


def no_positions(level: EncodeLevel) -> list[list[int]]:
    """The positions of a stream ORC records none for."""
    return [[] for _ in range(len(level.starts))]


def split_hashes(hashes: npt.NDArray[np.int64], vstarts: npt.NDArray[np.int64]
                 ) -> list[npt.NDArray[np.int64]]:
    """Per-group slices of one hash per value."""
    return np.split(hashes, vstarts[1:]) if len(vstarts) else [hashes]


def group_bounds(vstarts: npt.NDArray[np.int64], n: int) -> tuple[npt.NDArray[np.int64],
                                                                   npt.NDArray[np.int64]]:
    """(starts, ends) of each group of values, given the group starts and the value count."""
    ends = np.empty_like(vstarts)
    ends[:-1] = vstarts[1:]
    if len(ends):
        ends[-1] = n
    return vstarts, ends


#: Values per piece of a column that the one-pass encoders handle at a time (what they
#: derive from a piece stays in the CPU's cache on its way into the streams).
PIECE_VALUES = 1 << 15


def value_pieces(n: int, starts: npt.NDArray[np.int64], ends: npt.NDArray[np.int64],
                 size: int = PIECE_VALUES
                 ) -> Iterator[tuple[int, int, npt.NDArray[np.int64], npt.NDArray[np.int64]]]:
    """The values ``0 .. n - 1`` in pieces of ``size``: ``(a, b, starts, ends)`` for each,
    with every group's bounds clipped to the piece and counted from its start (groups
    outside it are empty there). No piece when ``n`` is 0."""
    for a in range(0, n, size):
        b = min(a + size, n)
        yield a, b, np.clip(starts, a, b) - a, np.clip(ends, a, b) - a


def group_reduce(ufunc: np.ufunc, values: np.ndarray, starts: npt.NDArray[np.int64],
                 ends: npt.NDArray[np.int64]) -> tuple[np.ndarray, npt.NDArray[np.bool_]]:
    """``ufunc.reduce`` over each non-empty group; returns (results, non-empty mask).

    Entries of empty groups in the result are meaningless.
    """
    nonempty = ends > starts
    out = np.zeros(len(starts), dtype=values.dtype)
    if nonempty.any():
        out[nonempty] = ufunc.reduceat(values, starts[nonempty])
    return out, nonempty


def exact_group_sums(values: npt.NDArray[np.int64], starts: npt.NDArray[np.int64],
                     ends: npt.NDArray[np.int64], largest: int | None = None
                     ) -> tuple[list[int], npt.NDArray[np.bool_]]:
    """Exact sums of int64 groups and whether a running sum left the int64 range.

    Args:
        values: the values.
        starts: first value index of each group.
        ends: one past the last value index of each group.
        largest: the largest absolute value, when known.

    Returns:
        (Python int sum per group, overflow flag per group).
    """
    n = len(values)
    if largest is None:
        largest = int(np.abs(values).max()) if n else 0  # np.abs(-2**63) < 0: slow path
    longest = int((ends - starts).max()) if len(starts) else 0
    if 0 <= largest and largest * longest <= _LONG_MAX:  # no running sum can overflow
        c = np.concatenate(([0], np.cumsum(values)))
        fast: list[int] = (c[ends] - c[starts]).tolist()
        return fast, np.zeros(len(starts), np.bool_)
    sums, overflow = rle.group_sums(values, starts, ends)  # in C, without the GIL
    return sums.tolist(), overflow


def encode_column(t: OrcType, arr: pa.Array | pa.ChunkedArray, row_group_starts: npt.ArrayLike,
                  opts: EncodeOptions, *,
                  dictionary_decisions: MutableMapping[int, bool] | None = None,
                  finish: Callable[[EncodedColumn], EncodedColumn] | None = None
                  ) -> EncodedColumn:
    """Encode one column (and its subtree) of one stripe as ORC Java does.

    Args:
        t: the column's type (ids as in the file's schema).
        arr: the column's values for the stripe (nulls included), in aorc's Arrow mapping of
            ``t`` (compatible types are converted: other integer widths, large/view strings,
            dictionary arrays, any timestamp unit, date64, other decimal widths...).
        row_group_starts: index of the first slot of each row group (0 first, increasing);
            empty when the file has no row index.
        opts: write options.
        dictionary_decisions: ORC Java decides once per file (in its first row group)
            whether a string column is dictionary encoded. Pass the same dict for every
            stripe of a file to do the same; ``None`` decides in each stripe from its first
            row group.

    Returns:
        The encoded column tree.

    Raises:
        SchemaError: ``arr`` cannot be written as ``t``, or ``row_group_starts`` is invalid.
    """
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks() if arr.num_chunks else pa.array([], arr.type)
    starts = np.asarray(row_group_starts, dtype=np.int64).reshape(-1)
    if len(starts) and (starts[0] != 0 or np.any(np.diff(starts) < 0) or starts[-1] > len(arr)):
        raise SchemaError(f"row group starts must begin at 0 and increase up to {len(arr)}")
    return encode_level(EncodeLevel(t, opts, starts, dictionary_decisions,
                                    parallel=opts.threads > 1 or finish is not None,
                                    finish=finish), arr)


def encode_level(level: EncodeLevel, arr: pa.Array) -> EncodedColumn:
    """Encode column ``level.t`` from its slots ``arr`` (nulls included)."""
    t = level.t
    try:
        encoder = _ENCODERS[t.kind]
    except KeyError:  # pragma: no cover - every kind has an encoder
        raise SchemaError(f"no encoder for ORC {t.kind.name}") from None
    arr = normalize(t, arr)
    streams, values, vstarts, counts, has_null = _present(level, arr)
    cls, kwargs = stats_class(t)
    groups = base_group_stats(cls, counts, has_null, **kwargs)
    parts = encoder(level, values, vstarts, groups)
    streams.extend(parts.streams)
    encoding = _column_encoding(parts.kind, parts.dictionary_size, level.bloom)
    filters = _bloom_filters(level, parts.hashes, len(groups)) if level.bloom else None
    return EncodedColumn(
        column_id=t.column_id, encoding=encoding, streams=streams,
        stripe_stats_bytes=_merge_all(parts.stats, cls, kwargs).serialized(),
        row_group_stats_bytes=[s.serialized() for s in parts.stats] if level.indexed else [],
        bloom_filters=filters, children=parts.children)


@functools.lru_cache(maxsize=1024)
def _column_encoding(kind: int, dictionary_size: int | None, bloom: bool) -> pb.ColumnEncoding:
    """A stripe footer's ColumnEncoding, made once per distinct value (a protobuf message
    made per column and stripe costs an arena apiece: see :mod:`aorc.format.messages`).
    Shared: never modified after it is made."""
    encoding = pb.ColumnEncoding(kind=kind)  # type: ignore[arg-type]
    if dictionary_size is not None:
        encoding.dictionarySize = dictionary_size
    if bloom:
        encoding.bloomEncoding = BLOOM_ENCODING_UTF8
    return encoding


def _merge_all(groups: Sequence[Stats], cls: type[Stats], kwargs: dict[str, Any]) -> Stats:
    total = cls(**kwargs)
    for g in groups:
        total.merge(g)
    return total


def _bloom_filters(level: EncodeLevel, hashes: list[npt.NDArray[np.int64]] | None,
                   n: int) -> list[BloomFilter]:
    opts = level.opts
    filters = []
    for g in range(n):
        bf = BloomFilter.for_entries(opts.row_index_stride, opts.bloom_filter_fpp)
        if hashes is not None and len(hashes[g]):
            bf.add_hashes(hashes[g])
        filters.append(bf)
    return filters


def _present(level: EncodeLevel, arr: pa.Array) -> tuple[list[EncodedStream], pa.Array,
                                                   npt.NDArray[np.int64], npt.NDArray[np.int64],
                                                   npt.NDArray[np.bool_]]:
    """The PRESENT stream (when needed), the non-null values and the groups' value starts.

    Returns:
        (streams, values, value starts, value count per group, hasNull per group). Without
        row groups the whole stripe is one group (for the stripe statistics).
    """
    n = len(arr)
    starts = level.starts if level.indexed else np.zeros(1, np.int64)
    slot_starts, slot_ends = group_bounds(starts, n)
    if arr.null_count == 0:
        counts = slot_ends - slot_starts
        return [], arr, starts, counts, np.zeros(len(starts), np.bool_)
    valid = validity_mask(arr)
    # Values per group without a column-sized running count (a pass through 8 bytes a slot).
    counts = group_true_counts(valid, slot_starts, slot_ends)
    lead = int(np.count_nonzero(valid[:int(starts[0])])) if len(starts) else 0
    vstarts = np.empty(len(starts), np.int64)
    if len(starts):
        vstarts[0] = lead
        np.cumsum(counts[:-1], out=vstarts[1:])
        vstarts[1:] += lead
    has_null = counts < (slot_ends - slot_starts)
    data, pos = rle.write_bool_rle_with_positions(valid, level.starts)
    present = EncodedStream(pb.Stream.PRESENT, data, positions_list(pos))
    if arr.null_count == n:
        values = arr.slice(0, 0)
    elif arr.buffers()[0] is not None:  # a validity bitmap: drop the nulls it marks
        values = arr.drop_null()
    else:
        values = arr.filter(pa.array(valid))
    return [present], values, vstarts, counts, has_null


def validity_mask(arr: pa.Array) -> npt.NDArray[np.bool_]:
    """Which slots of ``arr`` hold a value."""
    if arr.null_count == 0:
        return np.ones(len(arr), np.bool_)
    if arr.null_count == len(arr):
        return np.zeros(len(arr), np.bool_)
    buf = arr.buffers()[0]
    if buf is None:  # types without a validity bitmap (e.g. null type)
        return np.asarray(pc.is_valid(arr).to_numpy(zero_copy_only=False), np.bool_)
    # Only the bytes of this slice: a stripe of a larger table is a slice of its bitmap, and
    # unpacking the whole bitmap made every stripe cost as much as the table.
    first, skip = divmod(arr.offset, 8)
    count = (skip + len(arr) + 7) // 8
    bits = np.unpackbits(np.frombuffer(buf, np.uint8, count=count, offset=first),
                         bitorder="little")
    return bits[skip:skip + len(arr)].astype(np.bool_)


# --------------------------------------------------------------------------- normalization

_INTEGER_TYPES = {
    TypeKind.BYTE: pa.int8(), TypeKind.SHORT: pa.int16(), TypeKind.INT: pa.int32(),
    TypeKind.LONG: pa.int64(),
}


def normalize(t: OrcType, arr: pa.Array) -> pa.Array:
    """``arr`` in the Arrow form the encoder of ``t`` reads.

    Raises:
        SchemaError: the array's type cannot be written as ``t``.
    """
    try:
        return _normalize(t, arr)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as exc:
        raise SchemaError(f"column {t.column_id} ({type_string(t)}): cannot write Arrow "
                          f"{arr.type} values: {exc}") from exc


def _normalize(t: OrcType, arr: pa.Array) -> pa.Array:
    if isinstance(arr.type, pa.ExtensionType):
        arr = arr.storage
    if pa.types.is_dictionary(arr.type):
        arr = arr.dictionary_decode()
    if pa.types.is_null(arr.type):
        return pa.nulls(len(arr), _placeholder_type(t))
    return _NORMALIZERS.get(t.kind, _cast_to(None))(t, arr)


def _placeholder_type(t: OrcType) -> pa.DataType:
    """An Arrow type for an all-null array of ``t`` (the values are never looked at)."""
    return to_arrow_type(t)


def _cast_to(target: pa.DataType | None) -> Callable[[OrcType, pa.Array], pa.Array]:
    def norm(t: OrcType, arr: pa.Array) -> pa.Array:
        want = target if target is not None else _placeholder_type(t)
        return arr if arr.type == want else arr.cast(want)
    return norm


def _norm_integer(t: OrcType, arr: pa.Array) -> pa.Array:
    want = _INTEGER_TYPES[t.kind]
    if arr.type == want:
        return arr
    if pa.types.is_boolean(arr.type):
        arr = arr.cast(pa.int8())
    return arr.cast(want)


def _norm_string(t: OrcType, arr: pa.Array) -> pa.Array:
    dt = arr.type
    if pa.types.is_string_view(dt) or pa.types.is_binary_view(dt):
        return arr.cast(pa.large_binary())
    if pa.types.is_fixed_size_binary(dt):
        return arr.cast(pa.binary())
    if any(f(dt) for f in (pa.types.is_string, pa.types.is_large_string, pa.types.is_binary,
                           pa.types.is_large_binary)):
        return arr
    return arr.cast(pa.string())


def _norm_geospatial(t: OrcType, arr: pa.Array) -> pa.Array:
    """WKB values: the storage of a ``geoarrow.wkb`` extension array, or binary."""
    if isinstance(arr, pa.ExtensionArray):
        arr = arr.storage
    if pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type):
        raise SchemaError(f"column {t.column_id} ({type_string(t)}): WKB values must be "
                          f"binary, not {arr.type}")
    return _norm_string(t, arr)


def _norm_timestamp(t: OrcType, arr: pa.Array) -> pa.Array:
    if pa.types.is_timestamp(arr.type):
        return arr
    if pa.types.is_date(arr.type):
        return arr.cast(pa.timestamp("s"))
    raise pa.ArrowTypeError(f"{arr.type} is not a timestamp type")


def _norm_decimal(t: OrcType, arr: pa.Array) -> pa.Array:
    if t.is_legacy_decimal:
        want = pa.decimal128(LEGACY_DECIMAL_PRECISION, LEGACY_DECIMAL_SCALE)
    else:
        want = pa.decimal128(t.precision or LEGACY_DECIMAL_PRECISION, t.scale or 0)
    return arr if arr.type == want else arr.cast(want)


def _norm_list(t: OrcType, arr: pa.Array) -> pa.Array:
    dt = arr.type
    if pa.types.is_list(dt) or pa.types.is_large_list(dt):
        return arr
    if pa.types.is_fixed_size_list(dt) or pa.types.is_list_view(dt):
        return arr.cast(pa.list_(dt.value_field))
    if pa.types.is_large_list_view(dt):
        return arr.cast(pa.large_list(dt.value_field))
    raise pa.ArrowTypeError(f"{dt} is not a list type")


def _require(check: Callable[[pa.DataType], bool], what: str
             ) -> Callable[[OrcType, pa.Array], pa.Array]:
    def norm(t: OrcType, arr: pa.Array) -> pa.Array:
        if not check(arr.type):
            raise pa.ArrowTypeError(f"{arr.type} is not a {what} type")
        return arr
    return norm


_NORMALIZERS: dict[TypeKind, Callable[[OrcType, pa.Array], pa.Array]] = {
    **dict.fromkeys((TypeKind.BYTE, TypeKind.SHORT, TypeKind.INT, TypeKind.LONG),
                    _norm_integer),
    **dict.fromkeys((TypeKind.STRING, TypeKind.CHAR, TypeKind.VARCHAR, TypeKind.BINARY),
                    _norm_string),
    **dict.fromkeys((TypeKind.TIMESTAMP, TypeKind.TIMESTAMP_INSTANT), _norm_timestamp),
    TypeKind.BOOLEAN: _cast_to(pa.bool_()),
    TypeKind.FLOAT: _cast_to(pa.float32()),
    TypeKind.DOUBLE: _cast_to(pa.float64()),
    TypeKind.GEOMETRY: _norm_geospatial,
    TypeKind.GEOGRAPHY: _norm_geospatial,
    TypeKind.DATE: _cast_to(pa.date32()),
    TypeKind.DECIMAL: _norm_decimal,
    TypeKind.LIST: _norm_list,
    TypeKind.MAP: _require(pa.types.is_map, "map"),
    TypeKind.STRUCT: _require(pa.types.is_struct, "struct"),
    TypeKind.UNION: _require(pa.types.is_union, "union"),
}
