"""Shared machinery of the column decoders: stream access, options, nulls, dispatch.

A column's values are spread over the streams of a stripe (PRESENT, DATA, LENGTH, ...). The
decoders in this package turn them into Arrow arrays. Every decoder works on a *level*: an
output of ``length`` slots of which only the slots marked in ``outer`` (all slots when
``outer`` is ``None``) are stored in the column; the others belong to null ancestors (the
parent struct was null there). The column's PRESENT stream then says which stored slots hold a
value. Struct children are decoded at their parent's level with the parent's validity as
``outer``, so no separate scatter step is needed; list, map and union children start a new
level of their own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar, cast

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from aorc.errors import AorcError, CorruptFileError, UnsupportedFeatureError
from aorc.format._proto import orc_proto_pb2 as pb
from aorc.format.codec import rle
from aorc.format.codec.compression import DEFAULT_MAX_DECODED_BYTES
from aorc.format.types import OrcType, TypeKind, to_arrow_field, to_arrow_type, type_string

__all__ = [
    "TIMESTAMP_PER_SECOND",
    "DecodeOptions",
    "DictStripeStreams",
    "Placement",
    "StripeStreams",
    "arrow_field",
    "arrow_type",
    "decode_column",
    "decode_stripe",
    "values_to_skip",
    "wants_dictionary",
    "with_timestamp_unit",
]

Buffer = bytes | bytearray | memoryview
T = TypeVar("T")
_Array = TypeVar("_Array", bound="npt.NDArray[Any]")

#: The most values one byte of each kind of stream can describe; a count above
#: ``ratio * len(stream)`` cannot be right, so it is refused before anything is allocated.
#: Byte RLE: a 2-byte run holds 130 values. Boolean RLE: 8 bits per byte-RLE value.
#: Integer RLE v2: a 4-byte fixed-delta run holds 512 values (v1 needs 3 bytes for 130).
BYTE_RLE_RATIO = 65
BOOL_RLE_RATIO = 520
INT_RLE_RATIO = 128

_INT32_MAX = 2**31 - 1

_KIND_NAMES: dict[int, str] = {int(v): str(k) for k, v in pb.Stream.Kind.items()}


def stream_name(kind: int) -> str:
    """The protobuf name of a stream kind (``DATA``, ``LENGTH``, ...)."""
    return _KIND_NAMES.get(kind, f"kind {kind}")


class StripeStreams(Protocol):
    """The decompressed streams of one stripe, as the decoders see them."""

    writer_timezone: str | None

    def stream(self, column: int, kind: int) -> Buffer | None:
        """The decompressed bytes of one stream, ``None`` when the stripe has no such stream."""
        ...

    def encoding(self, column: int) -> pb.ColumnEncoding:
        """The column's encoding from the stripe footer."""
        ...


def values_to_skip(streams: StripeStreams, column: int, kind: int) -> int:
    """How many values (bits for boolean streams) to skip at the start of a stream.

    A stripe read from a row group onward hands the decoders each stream from the run that
    holds the row group's first value; the row index says how far into that run the value
    is. Implementations of :class:`StripeStreams` that start mid-stream provide a method
    ``skip(column, kind) -> int``; whole streams need none (0).
    """
    skip = getattr(streams, "skip", None)
    return 0 if skip is None else int(skip(column, kind))


@dataclass
class DictStripeStreams:
    """A :class:`StripeStreams` backed by a dict of decompressed streams.

    Attributes:
        streams: bytes per ``(column id, stream kind)``.
        encodings: the stripe footer's column encodings, indexed by column id.
        writer_timezone: the stripe footer's ``writerTimezone`` (``None`` when absent).
    """

    streams: Mapping[tuple[int, int], Buffer]
    encodings: Sequence[pb.ColumnEncoding]
    writer_timezone: str | None = None

    def stream(self, column: int, kind: int) -> Buffer | None:
        """The bytes of one stream, ``None`` when the stripe has no such stream."""
        return self.streams.get((column, kind))

    def encoding(self, column: int) -> pb.ColumnEncoding:
        """The column's encoding.

        Raises:
            CorruptFileError: the stripe footer has no encoding for the column.
        """
        if not 0 <= column < len(self.encodings):
            raise CorruptFileError(
                f"stripe footer has {len(self.encodings)} column encodings, none for column "
                f"{column}")
        return self.encodings[column]

    @classmethod
    def from_footer(cls, footer: pb.StripeFooter,
                    streams: Mapping[tuple[int, int], Buffer]) -> DictStripeStreams:
        """Wrap decompressed streams with a stripe footer's encodings and writer zone."""
        tz = footer.writerTimezone if footer.HasField("writerTimezone") else None
        return cls(streams, list(footer.columns), tz or None)


@dataclass(frozen=True)
class DecodeOptions:
    """How to decode: the reader's wishes and what the file tail says about its writer.

    Attributes:
        reader_timezone: IANA zone used for timestamps of files that record no writer time
            zone (as ORC Java and C++ do, they fall back to the reader's zone); ``None`` means
            the local zone of this machine.
        dictionary_strings: return string, char, varchar and binary columns as Arrow
            ``dictionary<int32, ...>`` arrays (dictionary-encoded columns keep the stripe's
            dictionary; direct-encoded ones are dictionary-encoded on the fly): ``True``
            for all of them, or a set of column ids (``read_dictionary=``).
        file_version: the postscript version, e.g. ``(0, 12)``.
        writer: footer ``writer`` code (0 Java, 1 C++, ...), ``None`` when absent.
        writer_version: footer/postscript writer version.
        software_version: footer ``softwareVersion``.
        calendar: footer ``calendar`` (``pb.CalendarKind``); JULIAN_GREGORIAN dates are
            rebased to the proleptic Gregorian calendar Arrow uses.
        unstable_pre_2: the file version is ``[1, 9999]`` (UNSTABLE-PRE-2.0): decimals of
            precision up to 18 are stored as RLE v2 integers.
        timestamp_unit: the Arrow unit of timestamps (``"s"``, ``"ms"``, ``"us"``, ``"ns"``).
        use_writer_timezone: read ``timestamp`` columns as the instants the writer meant in
            its time zone (``timestamp[unit, UTC]``), not as its wall-clock times (naive),
            as ORC C++'s ``RowReaderOptions::setUseWriterTimezone`` (ORC-2213).
        max_decoded_bytes: the most bytes the decompressed streams and dictionary tables of
            one stripe may take (:data:`~aorc.format.codec.compression.DEFAULT_MAX_DECODED_BYTES`,
            1 GiB); past it, :class:`~aorc.errors.ResourceLimitError` before allocating.
    """

    reader_timezone: str | None = None
    dictionary_strings: bool | frozenset[int] = False
    file_version: tuple[int, ...] = (0, 12)
    writer: int | None = None
    writer_version: int = 0
    software_version: str | None = None
    calendar: int = 0
    unstable_pre_2: bool = False
    timestamp_unit: str = "ns"
    max_decoded_bytes: int = DEFAULT_MAX_DECODED_BYTES
    use_writer_timezone: bool = False

    @classmethod
    def from_tail(cls, tail: Any, **overrides: Any) -> DecodeOptions:
        """Options filled from an :class:`aorc.format.tail.FileTail`; keyword arguments override."""
        values = _tail_values(tail)
        values.update(overrides)
        return cls(**values)

    @classmethod
    def shared_from_tail(cls, tail: Any, **overrides: Any) -> DecodeOptions:
        """:meth:`from_tail`, one instance kept per distinct set of values (the options are
        frozen): for callers that make options for each of many files, which mostly share
        one writer (a dataset of small files)."""
        values = _tail_values(tail)
        values.update(overrides)
        key = (cls, tuple(values.items()))
        found = _SHARED_OPTIONS.get(key)
        if found is None:
            if len(_SHARED_OPTIONS) >= 64:
                _SHARED_OPTIONS.clear()
            found = _SHARED_OPTIONS[key] = cls(**values)
        return found


def _tail_values(tail: Any) -> dict[str, Any]:
    """What :class:`DecodeOptions` takes from a file's tail."""
    version = tuple(getattr(tail, "version", (0, 12)))
    return {
        "file_version": version,
        "writer": getattr(tail, "writer", None),
        "writer_version": getattr(tail, "writer_version", 0) or 0,
        "software_version": getattr(tail, "software_version", None),
        "calendar": int(getattr(tail, "calendar", 0) or 0),
        "unstable_pre_2": version == (1, 9999),
    }


#: The options :meth:`DecodeOptions.shared_from_tail` made last, by their values.
_SHARED_OPTIONS: dict[tuple[Any, ...], DecodeOptions] = {}


@dataclass(frozen=True)
class Placement:
    """Where a column's slots are in the output array.

    Attributes:
        length: number of output slots.
        outer: which output slots the column stores (``None``: all of them).
        stored: number of stored slots (``outer.sum()``).
    """

    length: int
    outer: npt.NDArray[np.bool_] | None = None
    stored: int = -1

    def __post_init__(self) -> None:
        if self.stored < 0:
            object.__setattr__(self, "stored",
                               self.length if self.outer is None else int(self.outer.sum()))


@dataclass(frozen=True)
class Slots:
    """A column's output slots after its PRESENT stream.

    Attributes:
        length: number of output slots.
        valid: which slots hold a value (``None``: all of them).
        count: number of values, i.e. of true entries in ``valid``.
    """

    length: int
    valid: npt.NDArray[np.bool_] | None
    count: int

    @property
    def null_count(self) -> int:
        """Number of null output slots."""
        return self.length - self.count

    def validity(self) -> pa.Buffer | None:
        """The Arrow validity bitmap (``None`` when every slot is valid)."""
        if self.valid is None or self.count == self.length:
            return None
        return pa.py_buffer(np.packbits(self.valid, bitorder="little"))

    def expand(self, values: np.ndarray, fill: Any = 0) -> np.ndarray:
        """Spread ``count`` values (along the first axis) over the output slots."""
        if self.valid is None or self.count == self.length:
            return values
        out = np.full((self.length,) + values.shape[1:], fill, dtype=values.dtype)
        out[self.valid] = values
        return out

    def level(self) -> Placement:
        """The level of a struct's children: this column's valid slots are theirs."""
        return Placement(self.length, self.valid, self.count)


@dataclass
class Context:
    """What every decoder of one stripe needs.

    A context made with ``sliced=True`` decodes a stripe in row slices: each stream is read
    on from where the previous decode of the column stopped (a cursor per stream: the run
    holding the next value and the values of it already taken, or a byte offset), so
    decoding the same column at levels of ``n1``, ``n2``, ... slots gives its rows
    ``0..n1``, ``n1..n1+n2``, ... in time proportional to the stream, holding one slice.
    Without it every decode reads its streams from their start (a whole stripe at once).
    """

    streams: StripeStreams
    opts: DecodeOptions
    selected: set[int] | None
    _types: dict[int, pa.DataType] = field(default_factory=dict)
    sliced: bool = False
    #: Per ``(column, kind)``: ``(offset, skip)`` of the next value (sliced contexts).
    _cursors: dict[tuple[int, int], tuple[int, int]] = field(default_factory=dict)
    #: What a sliced context decodes once per stripe (string dictionaries), by key.
    _kept: dict[Any, Any] = field(default_factory=dict)

    def is_selected(self, t: OrcType) -> bool:
        """Whether column ``t`` is to be decoded."""
        return self.selected is None or t.column_id in self.selected

    def arrow_type(self, t: OrcType) -> pa.DataType:
        """The Arrow type of ``t`` with unselected struct fields left out."""
        dt = self._types.get(t.column_id)
        if dt is None:
            dt = self._types[t.column_id] = arrow_type(
                t, self.selected, dictionary_strings=self.opts.dictionary_strings,
                timestamp_unit=self.opts.timestamp_unit,
                instant=self.opts.use_writer_timezone)
        return dt

    def encoding(self, t: OrcType) -> pb.ColumnEncoding:
        """The column's encoding (errors name the column)."""
        if self.sliced:  # asked again for every slice: kept (a protobuf lookup is slow)
            return self.once(("encoding", t.column_id), lambda: self._encoding(t))
        return self._encoding(t)

    def _encoding(self, t: OrcType) -> pb.ColumnEncoding:
        with self.reading(t, "encoding"):
            return self.streams.encoding(t.column_id)

    def rle_version(self, t: OrcType) -> int:
        """The integer RLE version of the column's encoding."""
        kind = self.encoding(t).kind
        with self.reading(t, "encoding"):
            return rle.rle_version(kind)

    def is_dictionary(self, t: OrcType) -> bool:
        """Whether the column uses DICTIONARY or DICTIONARY_V2 encoding."""
        return self.encoding(t).kind in (pb.ColumnEncoding.DICTIONARY,
                                         pb.ColumnEncoding.DICTIONARY_V2)

    def raw(self, t: OrcType, kind: int) -> Buffer | None:
        """A stream's bytes, or ``None`` when absent."""
        return self.streams.stream(t.column_id, kind)

    def skip(self, t: OrcType, kind: int) -> int:
        """Values (bits for boolean streams) to skip at the start of a stream (see
        :func:`values_to_skip`)."""
        return values_to_skip(self.streams, t.column_id, kind)

    def require(self, t: OrcType, kind: int, count: int, ratio: int, skip: int = 0) -> Buffer:
        """A stream that must describe ``skip + count`` values at most ``ratio`` per byte.

        Raises:
            CorruptFileError: the stream is missing or too short for the values.
        """
        data = self.streams.stream(t.column_id, kind)
        if data is None:
            if count == 0:
                return b""
            raise column_error(t, kind, f"stream is missing but {count} values are needed")
        count += skip
        if count > ratio * len(data):
            raise column_error(
                t, kind, f"{len(data)} bytes cannot hold the {count} values needed")
        return data

    @contextmanager
    def reading(self, t: OrcType, kind: int | str) -> Iterator[None]:
        """Re-raise errors of the codec layer with the column and stream named."""
        try:
            yield
        except CorruptFileError as exc:
            if f"column {t.column_id} " in str(exc):
                raise
            raise column_error(t, kind, str(exc)) from exc
        except AorcError:
            raise
        except (ValueError, IndexError, OverflowError) as exc:
            raise column_error(t, kind, str(exc)) from exc

    def _cursor(self, t: OrcType, kind: int) -> tuple[int, int]:
        """Where a sliced context's next read of a stream starts: ``(offset, skip)``."""
        at = self._cursors.get((t.column_id, kind))
        return at if at is not None else (0, self.skip(t, kind))

    def _resumed(self, t: OrcType, kind: int, count: int, ratio: int,
                 decode: Callable[[Buffer, int, int], tuple[Any, int, int]]) -> Any:
        """The next ``count`` values of a run-length stream for a sliced context."""
        offset, skip = self._cursor(t, kind)
        data = self.streams.stream(t.column_id, kind)
        if data is None:
            if count == 0:
                return None
            raise column_error(t, kind, f"stream is missing but {count} values are needed")
        if count + skip > ratio * (len(data) - offset):
            raise column_error(t, kind, f"the {len(data) - offset} bytes left cannot hold the "
                                        f"{count} values needed")
        if count == 0:
            return None
        with self.reading(t, kind):
            values, offset, skip = decode(data, offset, skip)
        self._cursors[t.column_id, kind] = (offset, skip)
        return values

    def _run_length(self, t: OrcType, kind: int, count: int, ratio: int,
                    dtype: npt.DTypeLike,
                    decode: Callable[[Buffer, int, int], tuple[_Array, int, int]]) -> _Array:
        """The next ``count`` values of a run-length stream: ``decode(data, offset, skip)``
        gives them with the ``(offset, skip)`` of the value after; none is an empty array of
        ``dtype``."""
        if self.sliced:
            got = self._resumed(t, kind, count, ratio, decode)
            return cast(_Array, np.zeros(0, dtype) if got is None else got)
        skip = self.skip(t, kind)
        data = self.require(t, kind, count, ratio, skip)
        if count == 0:
            return cast(_Array, np.zeros(0, dtype))
        with self.reading(t, kind):
            return decode(data, 0, skip)[0]

    def byte_offset(self, t: OrcType, kind: int) -> int:
        """Where the next value of a stream of plain bytes (floats, string bytes, varints)
        starts: 0 unless a sliced context read some already."""
        return self._cursors.get((t.column_id, kind), (0, 0))[0]

    def consumed(self, t: OrcType, kind: int, offset: int) -> None:
        """Say that a stream of plain bytes was read up to ``offset`` (sliced contexts)."""
        if self.sliced:
            self._cursors[t.column_id, kind] = (offset, 0)

    def once(self, key: Any, make: Callable[[], T]) -> T:
        """``make()``, kept by a sliced context for its next slices (per stripe data such
        as a string dictionary, whose streams are read once)."""
        if not self.sliced:
            return make()
        if key not in self._kept:
            self._kept[key] = make()
        value: T = self._kept[key]
        return value

    def ints(self, t: OrcType, kind: int, count: int, signed: bool,
             version: int | None = None) -> npt.NDArray[np.int64]:
        """Decode ``count`` integers of an RLE stream (v1 or v2 as the encoding says, or
        ``version``)."""
        if version is None:
            version = self.rle_version(t)
        return self._run_length(t, kind, count, INT_RLE_RATIO, np.int64,
                                lambda data, offset, skip: rle.decode_ints_from(
                                    data, count, signed, version, offset, skip))

    def lengths(self, t: OrcType, kind: int, count: int) -> npt.NDArray[np.int64]:
        """Decode ``count`` unsigned lengths; a negative (over 2**63) length is corrupt."""
        values = self.ints(t, kind, count, signed=False)
        if count and int(values.min()) < 0:
            raise column_error(t, kind, f"length {int(values.min()) + 2**64} is too large")
        return values

    def bools(self, t: OrcType, kind: int, count: int) -> npt.NDArray[np.bool_]:
        """Decode ``count`` booleans of a bit-packed byte-RLE stream."""
        return self._run_length(t, kind, count, BOOL_RLE_RATIO, np.bool_,
                                lambda data, offset, skip: rle.read_bool_rle_from(
                                    data, count, offset, skip))

    def bytes_rle(self, t: OrcType, kind: int, count: int) -> npt.NDArray[np.int8]:
        """Decode ``count`` bytes of a byte-RLE stream."""
        return self._run_length(t, kind, count, BYTE_RLE_RATIO, np.int8,
                                lambda data, offset, skip: rle.read_byte_rle_from(
                                    data, count, offset, skip))

    def slots(self, t: OrcType, level: Placement) -> Slots:
        """Apply the column's PRESENT stream to its level."""
        present_data = self.raw(t, pb.Stream.PRESENT)
        if present_data is None:
            if level.outer is None or level.stored == level.length:
                return Slots(level.length, None, level.length)
            return Slots(level.length, level.outer, level.stored)
        present = self.bools(t, pb.Stream.PRESENT, level.stored)
        count = int(np.count_nonzero(present))
        if level.outer is None or level.stored == level.length:
            valid = present
        else:
            valid = np.zeros(level.length, np.bool_)
            valid[level.outer] = present
        if count == level.length:
            return Slots(level.length, None, count)
        return Slots(level.length, valid, count)


def column_error(t: OrcType, kind: int | str, message: str) -> CorruptFileError:
    """A CorruptFileError naming the column, its type and the stream."""
    what = stream_name(kind) if isinstance(kind, int) else kind
    return CorruptFileError(f"column {t.column_id} ({type_string(t)}), {what}: {message}")


def fixed_width_array(dt: pa.DataType, slots: Slots, values: np.ndarray) -> pa.Array:
    """An Arrow array of a fixed-width type from ``slots.count`` values."""
    data = slots.expand(values)
    dtype = data.dtype
    aligned = (data.flags.aligned if dtype.alignment == dtype.itemsize  # cheap: no ctypes
               else not data.ctypes.data % dtype.itemsize)
    if not aligned:  # a view into a stream at an odd address
        data = data.copy()
    return pa.Array.from_buffers(dt, slots.length, [slots.validity(), pa.py_buffer(data)],
                                 null_count=slots.null_count)


def offsets_from_lengths(t: OrcType, slots: Slots, lengths: npt.NDArray[np.int64],
                         what: str) -> tuple[pa.Buffer, int]:
    """Arrow int32 offsets for ``slots`` from the lengths of the valid slots.

    Returns:
        The offsets buffer and the total length.

    Raises:
        UnsupportedFeatureError: the total does not fit Arrow's 32-bit offsets.
    """
    # Lengths are non-negative (Context.lengths checks them).
    offsets, total = rle.offsets_int32(lengths, slots.valid, slots.length)
    if total < 0:
        longest = int(lengths.max())  # capped first so that the sum cannot wrap
        total = longest if longest > _INT32_MAX else int(lengths.sum())
        raise UnsupportedFeatureError(
            f"column {t.column_id} ({type_string(t)}): {total} {what} in one stripe exceed the "
            "2**31 - 1 that Arrow's 32-bit offsets can address")
    return pa.py_buffer(offsets), total


# --------------------------------------------------------------------------- Arrow types

_STRING_KINDS = frozenset({TypeKind.STRING, TypeKind.VARCHAR, TypeKind.CHAR, TypeKind.BINARY})


def wants_dictionary(dictionary_strings: bool | frozenset[int], t: OrcType) -> bool:
    """Whether column ``t`` reads as an Arrow dictionary under ``dictionary_strings`` (see
    :class:`DecodeOptions`)."""
    if t.kind not in _STRING_KINDS or not dictionary_strings:
        return False
    return dictionary_strings is True or (isinstance(dictionary_strings, frozenset)
                                          and t.column_id in dictionary_strings)


def with_timestamp_unit(dt: pa.DataType, unit: str, instant: bool = False) -> pa.DataType:
    """``dt`` with every timestamp (nested ones too) in ``unit``; with ``instant``, naive
    timestamps become UTC ones (``use_writer_timezone``). Spark's ``TIMESTAMP_NTZ``
    columns (``timestamp[us]``) stay naive and take ``unit`` only when it is coarser."""
    if unit == "ns" and not instant:
        return dt
    if pa.types.is_timestamp(dt):
        if dt.unit != "ns":  # Spark's TIMESTAMP_NTZ (us): only coarser units, never zoned
            return dt if TIMESTAMP_PER_SECOND[unit] >= 10**6 else pa.timestamp(unit)
        return pa.timestamp(unit, "UTC" if instant else dt.tz)
    if pa.types.is_struct(dt):
        return pa.struct([f.with_type(with_timestamp_unit(f.type, unit, instant)) for f in dt])
    if pa.types.is_list(dt):
        return pa.list_(dt.value_field.with_type(with_timestamp_unit(dt.value_type, unit, instant)))
    if pa.types.is_map(dt):
        return pa.map_(dt.key_field.with_type(with_timestamp_unit(dt.key_type, unit, instant)),
                       dt.item_field.with_type(with_timestamp_unit(dt.item_type, unit, instant)))
    if pa.types.is_union(dt):
        return pa.union([f.with_type(with_timestamp_unit(f.type, unit, instant)) for f in dt],
                        dt.mode, dt.type_codes)
    return dt


def arrow_type(t: OrcType, selected: set[int] | None = None, *,
               dictionary_strings: bool | frozenset[int] = False,
               timestamp_unit: str = "ns", instant: bool = False) -> pa.DataType:
    """The Arrow type of ``t``; struct fields whose column is not in ``selected`` are left out.

    With ``selected=None`` this is :func:`aorc.format.types.to_arrow_type`. With
    ``dictionary_strings`` string, char, varchar and binary become
    ``dictionary<int32, string/binary>``; timestamps are in ``timestamp_unit`` (UTC-based
    with ``instant``, see :func:`with_timestamp_unit`).
    """
    return with_timestamp_unit(_arrow_type(t, selected, dictionary_strings), timestamp_unit,
                               instant)


def _arrow_type(t: OrcType, selected: set[int] | None,
                dictionary_strings: bool | frozenset[int]) -> pa.DataType:
    if not t.kind.is_compound:
        dt = to_arrow_type(t)
        if wants_dictionary(dictionary_strings, t):
            return pa.dictionary(pa.int32(), dt)
        return dt
    if selected is None and not dictionary_strings:
        return to_arrow_type(t)

    def field_(name: str, c: OrcType) -> pa.Field:
        return arrow_field(name, c, selected, dictionary_strings=dictionary_strings)

    if t.kind == TypeKind.STRUCT:
        return pa.struct([field_(n, c) for n, c in zip(t.field_names, t.children, strict=True)
                          if selected is None or c.column_id in selected])
    if t.kind == TypeKind.LIST:
        return pa.list_(field_("item", t.children[0]))
    if t.kind == TypeKind.MAP:
        return pa.map_(field_("key", t.children[0]).with_nullable(False),
                       field_("value", t.children[1]))
    fields = [field_(f"_union_{i}", c) for i, c in enumerate(t.children)]
    return pa.dense_union(fields, list(range(len(fields))))


def arrow_field(name: str, t: OrcType, selected: set[int] | None = None, *,
                dictionary_strings: bool | frozenset[int] = False,
                timestamp_unit: str = "ns", instant: bool = False) -> pa.Field:
    """The Arrow field for ``t`` (see :func:`arrow_type`), with the metadata of
    :func:`aorc.format.types.to_arrow_field`."""
    base = to_arrow_field(name, t)
    if (selected is None or not t.kind.is_compound) and not dictionary_strings:
        if timestamp_unit == "ns" and not instant:  # the type as it is (no copy per column)
            return base
        return base.with_type(with_timestamp_unit(base.type, timestamp_unit, instant))
    dt = arrow_type(t, selected, dictionary_strings=dictionary_strings,
                    timestamp_unit=timestamp_unit, instant=instant)
    return pa.field(name, dt, nullable=True, metadata=base.metadata)


#: Arrow timestamp units and their number per second.
TIMESTAMP_PER_SECOND = {"s": 1, "ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}


# --------------------------------------------------------------------------- dispatch

Decoder = Callable[[OrcType, Context, Placement], pa.Array]
_DECODERS: dict[TypeKind, Decoder] = {}


def register(*kinds: TypeKind) -> Callable[[Decoder], Decoder]:
    """Class the decorated function as the decoder of ``kinds``."""
    def wrap(fn: Decoder) -> Decoder:
        for kind in kinds:
            _DECODERS[kind] = fn
        return fn
    return wrap


def decode_level(t: OrcType, ctx: Context, level: Placement) -> pa.Array:
    """Decode column ``t`` at ``level`` (see the module docstring)."""
    try:
        decoder = _DECODERS[t.kind]
    except KeyError:  # pragma: no cover - every TypeKind has a decoder
        raise UnsupportedFeatureError(f"no decoder for ORC {t.kind.name}") from None
    return decoder(t, ctx, level)


def decode_column(t: OrcType, streams: StripeStreams, n: int, opts: DecodeOptions,
                  selected: set[int] | None = None) -> pa.Array:
    """Decode one column (and its subtree) of a stripe into an Arrow array.

    Args:
        t: the column's type node.
        streams: the stripe's decompressed streams.
        n: number of slots at this level, nulls included (the stripe's row count for a
            top-level column).
        opts: decoding options.
        selected: column ids to decode; struct fields not in it are left out of the result.
            ``None`` decodes everything.

    Returns:
        An array of length ``n`` whose type is :func:`arrow_type` of ``t``.

    Raises:
        CorruptFileError: a stream is missing, too short or inconsistent.
        UnsupportedFeatureError: the data cannot be represented in Arrow (e.g. null map keys).
    """
    if n < 0:
        raise ValueError(f"negative slot count {n}")
    return decode_level(t, Context(streams, opts, selected), Placement(n))


def decode_stripe(root: OrcType, selected: set[int] | None, streams: StripeStreams,
                  num_rows: int, opts: DecodeOptions) -> pa.RecordBatch:
    """Decode the selected columns of one stripe into a record batch.

    A struct root's fields become the batch's columns; any other root is one column
    ``_col0``. The schema is :func:`aorc.format.types.to_arrow_schema` restricted to ``selected``
    (with dictionary string types when ``opts.dictionary_strings``, see :func:`arrow_type`).

    Args:
        root: the file's root type.
        selected: column ids to decode (``None``: all), as from
            :func:`aorc.format.projection.select_columns`.
        streams: the stripe's decompressed streams.
        num_rows: the stripe's row count.
        opts: decoding options.
    """
    ctx = Context(streams, opts, selected)
    level = Placement(num_rows)
    if root.kind == TypeKind.STRUCT:
        pairs = [(n, c) for n, c in zip(root.field_names, root.children, strict=True)
                 if ctx.is_selected(c)]
        slots = ctx.slots(root, level)
        if slots.valid is not None:  # a null root row: its fields read as null
            level = slots.level()
        fields = [arrow_field(n, c, selected, dictionary_strings=opts.dictionary_strings,
                              timestamp_unit=opts.timestamp_unit,
                              instant=opts.use_writer_timezone) for n, c in pairs]
        arrays = [decode_level(c, ctx, level) for _, c in pairs]
        return pa.RecordBatch.from_arrays(arrays, schema=pa.schema(fields))
    field_ = arrow_field("_col0", root, selected, dictionary_strings=opts.dictionary_strings,
                         timestamp_unit=opts.timestamp_unit, instant=opts.use_writer_timezone)
    return pa.RecordBatch.from_arrays([decode_level(root, ctx, level)],
                                      schema=pa.schema([field_]))
