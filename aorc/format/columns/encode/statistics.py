"""Column statistics as ORC Java's writer computes, merges and serializes them.

Each class below mirrors one of ORC Java's ``ColumnStatisticsImpl`` kinds: the same fields, the
same update and merge rules (``minimum`` replaced only by a strictly smaller value, NaN kept
when it came first, integer sums dropped on 64-bit overflow, decimal sums kept within 38 (or,
for precision up to 18, 18) digits, strings over 1024 bytes kept as truncated bounds) and the
same protobuf form. The writer builds one object per row group from whole arrays (see the
``*_group_stats`` functions), folds them into the stripe's statistics with :meth:`Stats.merge`
in row-group order, as Java does, and :func:`merge_statistics` folds protobuf statistics (stripe
into file) the same way.

Deliberate differences from ORC Java 2.3, all Java bugs:

- list/map statistics count the real element numbers (Java records the capacity of its batch
  vector once per batch instead);
- a Decimal64 (precision <= 18) sum that overflowed in one row group stays absent after the
  merge (Java copies the overflowed partial sum into an empty stripe statistics object);
- without a row index the stripe statistics are computed (Java leaves them empty);
- every value counts once in double sums (Java adds a repeating batch's value only once).
"""

from __future__ import annotations

import codecs
import decimal
import math
import struct
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from aorc.format._proto import orc_proto_pb2 as pb
from aorc.format.messages import parsed_statistics, scratch_serialized
from aorc.format.types import OrcType, TypeKind

__all__ = [
    "DECIMAL_CONTEXT",
    "BinaryStats",
    "BooleanStats",
    "CollectionStats",
    "DateStats",
    "Decimal64Stats",
    "DecimalStats",
    "DoubleStats",
    "IntegerStats",
    "Stats",
    "StringStats",
    "TimestampStats",
    "base_group_stats",
    "java_add",
    "java_nan_sum",
    "merge_statistics",
    "merge_statistics_of",
    "protos_of",
    "register_stats",
    "stats_class",
]

LONG_MIN = -(2**63)
LONG_MAX = 2**63 - 1
INT_MIN = -(2**31)
INT_MAX = 2**31 - 1
#: Longest string min/max ORC Java records; longer values become truncated bounds.
MAX_BYTES_RECORDED = 1024
#: Largest unscaled value of a Decimal64 column (18 digits).
MAX_DECIMAL64 = 10**18 - 1
_MAX_PRECISION = 38
_DEFAULT_MAX_NANOS = 999_999
#: Decimal arithmetic context wide enough for every exact sum the writer makes.
DECIMAL_CONTEXT = decimal.Context(prec=200, rounding=decimal.ROUND_HALF_UP)


class Stats:
    """Statistics every column has: value count, whether nulls occur, bytes on disk."""

    __slots__ = ("bytes_on_disk", "count", "has_null")

    def __init__(self) -> None:
        self.count = 0
        self.has_null = False
        self.bytes_on_disk = 0

    def merge(self, other: Stats) -> None:
        """Fold ``other`` (later data of the same column) into these statistics."""
        self.count += other.count
        self.has_null |= other.has_null
        self.bytes_on_disk += other.bytes_on_disk

    def to_proto(self) -> pb.ColumnStatistics:
        """The protobuf form ORC Java writes."""
        (p,) = parsed_statistics([self.serialized()])
        return p

    def serialized(self) -> bytes:
        """:meth:`to_proto`'s message, serialized (made in a reused message: see
        :mod:`aorc.format.messages`)."""
        return scratch_serialized(self.fill_proto, pb.ColumnStatistics)

    def fill_proto(self, p: pb.ColumnStatistics) -> None:
        """Write :meth:`to_proto`'s form into the empty message ``p`` (a sub-message of a
        message made for many: see :func:`protos_of`)."""
        p.numberOfValues = self.count
        p.hasNull = self.has_null
        if self.bytes_on_disk:
            p.bytesOnDisk = self.bytes_on_disk
        self._fill(p)

    def _fill(self, p: pb.ColumnStatistics) -> None:
        """Add the kind-specific part to ``p``."""

    def _read(self, p: pb.ColumnStatistics) -> None:
        """Take the kind-specific part from ``p``."""

    @classmethod
    def from_proto(cls, p: pb.ColumnStatistics, **kwargs: Any) -> Stats:
        """Statistics read back from protobuf, as ORC Java deserializes them."""
        s = cls(**kwargs)
        s.count = p.numberOfValues
        s.has_null = p.hasNull if p.HasField("hasNull") else True
        s.bytes_on_disk = p.bytesOnDisk
        s._read(p)
        return s


class BooleanStats(Stats):
    """Boolean columns: the number of true values (bucket 0)."""

    __slots__ = ("true_count",)

    def __init__(self) -> None:
        super().__init__()
        self.true_count = 0

    def merge(self, other: Stats) -> None:  # noqa: D102
        if isinstance(other, BooleanStats):
            self.true_count += other.true_count
        super().merge(other)

    def _fill(self, p: pb.ColumnStatistics) -> None:
        p.bucketStatistics.count.append(self.true_count)

    def _read(self, p: pb.ColumnStatistics) -> None:
        counts = p.bucketStatistics.count
        self.true_count = counts[0] if counts else 0


class IntegerStats(Stats):
    """tinyint..bigint columns: minimum, maximum and a sum dropped on 64-bit overflow."""

    __slots__ = ("has_minimum", "maximum", "minimum", "overflow", "sum")

    def __init__(self) -> None:
        super().__init__()
        self.has_minimum = False
        self.minimum = LONG_MAX
        self.maximum = LONG_MIN
        self.sum = 0
        self.overflow = False

    def merge(self, other: Stats) -> None:  # noqa: D102
        if isinstance(other, IntegerStats):
            if not self.has_minimum:
                self.has_minimum = other.has_minimum
                self.minimum, self.maximum = other.minimum, other.maximum
            elif other.has_minimum:
                self.minimum = min(self.minimum, other.minimum)
                self.maximum = max(self.maximum, other.maximum)
            self.overflow |= other.overflow
            if not self.overflow:
                total = self.sum + other.sum
                if LONG_MIN <= total <= LONG_MAX:
                    self.sum = total
                else:
                    self.overflow = True
        super().merge(other)

    def _fill(self, p: pb.ColumnStatistics) -> None:
        s = p.intStatistics
        s.SetInParent()
        if self.has_minimum:
            s.minimum, s.maximum = self.minimum, self.maximum
        if not self.overflow:
            s.sum = self.sum

    def _read(self, p: pb.ColumnStatistics) -> None:
        s = p.intStatistics
        if s.HasField("minimum"):
            self.has_minimum, self.minimum = True, s.minimum
        if s.HasField("maximum"):
            self.maximum = s.maximum
        if s.HasField("sum"):
            self.sum = s.sum
        else:
            self.overflow = True


_DEFAULT_NAN = struct.unpack("<d", struct.pack("<Q", 0xFFF8000000000000))[0]


def java_nan_sum() -> float:
    """The NaN x86 gives for ``inf + -inf`` (sign bit set), which Java keeps."""
    return float(_DEFAULT_NAN)


def java_add(a: float, b: float) -> float:
    """``a + b`` as Java computes it on x86, NaN bits included: a NaN ``a`` wins, then a NaN
    ``b``, and infinities of opposite signs give the default NaN."""
    if a != a:
        return a
    if b != b:
        return b
    if math.isinf(a) and math.isinf(b) and a != b:
        return java_nan_sum()
    return a + b


class DoubleStats(Stats):
    """float/double columns: minimum, maximum (a leading NaN sticks, as in Java) and sum."""

    __slots__ = ("has_minimum", "maximum", "minimum", "sum")

    def __init__(self) -> None:
        super().__init__()
        self.has_minimum = False
        self.minimum = 1.7976931348623157e308
        self.maximum = 5e-324
        self.sum = 0.0

    def merge(self, other: Stats) -> None:  # noqa: D102
        if isinstance(other, DoubleStats):
            if not self.has_minimum:
                self.has_minimum = other.has_minimum
                self.minimum, self.maximum = other.minimum, other.maximum
            elif other.has_minimum:
                if other.minimum < self.minimum:
                    self.minimum = other.minimum
                if other.maximum > self.maximum:
                    self.maximum = other.maximum
            self.sum = java_add(self.sum, other.sum)
        super().merge(other)

    def _fill(self, p: pb.ColumnStatistics) -> None:
        s = p.doubleStatistics
        if self.has_minimum:
            s.minimum, s.maximum = self.minimum, self.maximum
        s.sum = self.sum

    def _read(self, p: pb.ColumnStatistics) -> None:
        s = p.doubleStatistics
        if s.HasField("minimum"):
            self.has_minimum, self.minimum = True, s.minimum
        if s.HasField("maximum"):
            self.maximum = s.maximum
        if s.HasField("sum"):
            self.sum = s.sum


class StringStats(Stats):
    """string/char/varchar columns: byte-order minimum and maximum, total length.

    Values over 1024 bytes are kept as a truncated lower bound / incremented upper bound.
    """

    __slots__ = ("lower_set", "maximum", "minimum", "sum", "upper_set")

    def __init__(self) -> None:
        super().__init__()
        self.minimum: bytes | None = None
        self.maximum: bytes | None = None
        self.sum = 0
        self.lower_set = False
        self.upper_set = False

    def set_range(self, minimum: bytes, maximum: bytes) -> None:
        """Set the extremes of a group whose values are all at most 1024 bytes long."""
        self.minimum, self.maximum = minimum, maximum
        self.lower_set = self.upper_set = False

    def update(self, value: bytes) -> None:
        """Add one value, exactly as ORC Java does (for groups with long values)."""
        long_value = len(value) > MAX_BYTES_RECORDED
        if self.minimum is None or self.maximum is None:
            if long_value:
                self.minimum, self.maximum = truncate_lower(value), truncate_upper(value)
            else:
                self.minimum = self.maximum = value
            self.lower_set = self.upper_set = long_value
        elif self.minimum > value:
            self.minimum = truncate_lower(value) if long_value else value
            self.lower_set = long_value
        elif self.maximum < value:
            self.maximum = truncate_upper(value) if long_value else value
            self.upper_set = long_value
        self.sum += len(value)

    def merge(self, other: Stats) -> None:  # noqa: D102
        if isinstance(other, StringStats):
            if self.count == 0:
                self.minimum, self.maximum = other.minimum, other.maximum
                self.lower_set, self.upper_set = other.lower_set, other.upper_set
                if other.count == 0:
                    self.minimum = self.maximum = None
                    self.lower_set = self.upper_set = False
            elif other.count != 0 and other.minimum is not None and other.maximum is not None:
                if self.minimum is None or self.minimum > other.minimum:
                    self.minimum, self.lower_set = other.minimum, other.lower_set
                if self.maximum is None or self.maximum < other.maximum:
                    self.maximum, self.upper_set = other.maximum, other.upper_set
            self.sum += other.sum
        super().merge(other)

    def _fill(self, p: pb.ColumnStatistics) -> None:
        s = p.stringStatistics
        s.SetInParent()
        if self.count and self.minimum is not None and self.maximum is not None:
            low = self.minimum.decode("utf-8", _JAVA_REPLACE)
            high = self.maximum.decode("utf-8", _JAVA_REPLACE)
            if self.lower_set:
                s.lowerBound = low
            else:
                s.minimum = low
            if self.upper_set:
                s.upperBound = high
            else:
                s.maximum = high
            s.sum = self.sum

    def _read(self, p: pb.ColumnStatistics) -> None:
        s = p.stringStatistics
        if s.HasField("maximum"):
            self.maximum = s.maximum.encode()
        elif s.HasField("upperBound"):
            self.maximum, self.upper_set = s.upperBound.encode(), True
        if s.HasField("minimum"):
            self.minimum = s.minimum.encode()
        elif s.HasField("lowerBound"):
            self.minimum, self.lower_set = s.lowerBound.encode(), True
        if s.HasField("sum"):
            self.sum = s.sum


def _java_replace(err: UnicodeError) -> tuple[str, int]:
    """Replace malformed UTF-8 as Java's decoder does: like Python, except that a 3-byte
    encoded surrogate (which ORC Java's upper bounds can end with) is one malformed unit."""
    if not isinstance(err, UnicodeDecodeError):  # pragma: no cover - decoding only
        raise err
    data, i = err.object, err.start
    if (data[i] == 0xED and i + 2 < len(data) and 0xA0 <= data[i + 1] <= 0xBF
            and 0x80 <= data[i + 2] <= 0xBF):
        return "\ufffd", i + 3
    return "\ufffd", err.end


_JAVA_REPLACE = "aorc-java-utf8-replace"
codecs.register_error(_JAVA_REPLACE, _java_replace)


def _char_start(value: bytes, pos: int) -> int:
    """Start of the UTF-8 character holding byte ``pos`` (Java's findLastCharacter)."""
    while pos >= 0 and (value[pos] & 0xC0) == 0x80:
        pos -= 1
    return max(pos, 0)


def truncate_lower(value: bytes) -> bytes:
    """The whole characters within the first 1024 bytes of ``value``."""
    return value[:_char_start(value, MAX_BYTES_RECORDED)]


def truncate_upper(value: bytes) -> bytes:
    """A bound above ``value``: its whole characters within 1024 bytes, last one incremented.

    The increment is ORC Java's: the code point plus one, encoded by its own UTF-8 routine
    (which gives invalid bytes for U+007F, surrogates and U+FFFF; those turn into U+FFFD when
    serialized, as Java's String conversion does).
    """
    following = _char_start(value, MAX_BYTES_RECORDED)
    last = _char_start(value, following - 1)
    char = value[last:following].decode("utf-8", "replace")
    code = (ord(char[0]) if char else 0) + 1
    return value[:last] + _java_code_point_bytes(code)


def _java_code_point_bytes(code: int) -> bytes:
    if code < 0x7F:
        return bytes([code])
    if code <= 0x7FF:
        return bytes([0xC0 | (code >> 6), 0x80 | (code & 0x3F)])
    if code < 0xFFFF:
        return bytes([0xE0 | (code >> 12), 0x80 | ((code >> 6) & 0x3F), 0x80 | (code & 0x3F)])
    return bytes([0xF0 | (code >> 18), 0x80 | ((code >> 12) & 0x3F),
                  0x80 | ((code >> 6) & 0x3F), 0x80 | (code & 0x3F)])


class BinaryStats(Stats):
    """Binary columns: total length."""

    __slots__ = ("sum",)

    def __init__(self) -> None:
        super().__init__()
        self.sum = 0

    def merge(self, other: Stats) -> None:  # noqa: D102
        if isinstance(other, BinaryStats):
            self.sum += other.sum
        super().merge(other)

    def _fill(self, p: pb.ColumnStatistics) -> None:
        p.binaryStatistics.sum = self.sum

    def _read(self, p: pb.ColumnStatistics) -> None:
        self.sum = p.binaryStatistics.sum


def decimal_text(value: decimal.Decimal) -> str:
    """A decimal as HiveDecimal prints it: plain notation, trailing zeros removed."""
    if not value:
        return "0"
    text = format(value.normalize(DECIMAL_CONTEXT), "f")
    return text


def _fit_hive(value: decimal.Decimal) -> decimal.Decimal | None:
    """``value`` as a HiveDecimal holds it: at most 38 digits, fraction rounded half up to
    make room, ``None`` when the integer part alone needs more than 38 digits."""
    if not value:
        return decimal.Decimal(0)
    sign, digits, exponent = value.normalize(DECIMAL_CONTEXT).as_tuple()
    assert isinstance(exponent, int)
    scale = max(-exponent, 0)
    integer_digits = max(len(digits) + exponent, 0)
    if integer_digits > _MAX_PRECISION:
        return None
    if integer_digits + scale <= _MAX_PRECISION:
        return value
    quantum = decimal.Decimal(1).scaleb(-(_MAX_PRECISION - integer_digits))
    fitted = value.quantize(quantum, rounding=decimal.ROUND_HALF_UP, context=DECIMAL_CONTEXT)
    return _fit_hive(fitted) if fitted.adjusted() + 1 > integer_digits else fitted


class DecimalStats(Stats):
    """Decimal columns of precision over 18: minimum, maximum, sum within 38 digits."""

    __slots__ = ("has_sum", "maximum", "minimum", "sum")

    def __init__(self) -> None:
        super().__init__()
        self.minimum: decimal.Decimal | None = None
        self.maximum: decimal.Decimal | None = None
        self.sum: decimal.Decimal | None = decimal.Decimal(0)

    def add_sum(self, value: decimal.Decimal) -> None:
        """Add to the sum as HiveDecimal does (rounding or overflowing past 38 digits)."""
        if self.sum is not None:
            self.sum = _fit_hive(DECIMAL_CONTEXT.add(self.sum, value))

    def merge(self, other: Stats) -> None:  # noqa: D102
        if isinstance(other, DecimalStats):
            if self.minimum is None:
                self.minimum, self.maximum, self.sum = other.minimum, other.maximum, other.sum
            elif other.minimum is not None and other.maximum is not None:
                assert self.maximum is not None
                self.minimum = min(self.minimum, other.minimum)
                self.maximum = max(self.maximum, other.maximum)
                if self.sum is None or other.sum is None:
                    self.sum = None
                else:
                    self.add_sum(other.sum)
        super().merge(other)

    def _fill(self, p: pb.ColumnStatistics) -> None:
        s = p.decimalStatistics
        s.SetInParent()
        if self.count and self.minimum is not None and self.maximum is not None:
            s.minimum, s.maximum = decimal_text(self.minimum), decimal_text(self.maximum)
        if self.sum is not None:
            s.sum = decimal_text(self.sum)

    def _read(self, p: pb.ColumnStatistics) -> None:
        s = p.decimalStatistics
        if s.HasField("maximum"):
            self.maximum = _parse_decimal(s.maximum)
        if s.HasField("minimum"):
            self.minimum = _parse_decimal(s.minimum)
        self.sum = _parse_decimal(s.sum) if s.HasField("sum") else None


def _parse_decimal(text: str) -> decimal.Decimal | None:
    try:
        return decimal.Decimal(text)
    except decimal.InvalidOperation:
        return None


class Decimal64Stats(Stats):
    """Decimal columns of precision up to 18: unscaled int64 extremes and an 18-digit sum."""

    __slots__ = ("has_sum", "maximum", "minimum", "scale", "sum")

    def __init__(self, scale: int = 0) -> None:
        super().__init__()
        self.scale = scale
        self.minimum = LONG_MAX
        self.maximum = LONG_MIN
        self.has_sum = True
        self.sum = 0

    def merge(self, other: Stats) -> None:  # noqa: D102
        if isinstance(other, Decimal64Stats):
            if self.count == 0:
                self.minimum, self.maximum = other.minimum, other.maximum
                self.sum, self.has_sum = other.sum, other.has_sum
            else:
                self.minimum = min(self.minimum, other.minimum)
                self.maximum = max(self.maximum, other.maximum)
                if self.has_sum and other.has_sum:
                    self.sum += other.sum
                    self.has_sum = -MAX_DECIMAL64 <= self.sum <= MAX_DECIMAL64
                else:
                    self.has_sum = False
        super().merge(other)

    def _text(self, unscaled: int) -> str:
        return decimal_text(decimal.Decimal(unscaled).scaleb(-self.scale, DECIMAL_CONTEXT))

    def _fill(self, p: pb.ColumnStatistics) -> None:
        s = p.decimalStatistics
        s.SetInParent()
        if self.count:
            s.minimum, s.maximum = self._text(self.minimum), self._text(self.maximum)
        if self.has_sum:
            s.sum = self._text(self.sum)

    def _unscaled(self, text: str) -> int | None:
        value = _parse_decimal(text)
        if value is None or not value.is_finite():
            return None
        return int(value.scaleb(self.scale, DECIMAL_CONTEXT).to_integral_value(decimal.ROUND_DOWN))

    def _read(self, p: pb.ColumnStatistics) -> None:
        s = p.decimalStatistics
        high = self._unscaled(s.maximum) if s.HasField("maximum") else None
        low = self._unscaled(s.minimum) if s.HasField("minimum") else None
        self.maximum = LONG_MIN if high is None else high
        self.minimum = LONG_MAX if low is None else low
        total = self._unscaled(s.sum) if s.HasField("sum") else None
        self.has_sum = total is not None and abs(total) <= MAX_DECIMAL64
        self.sum = total if total is not None and self.has_sum else 0


class DateStats(Stats):
    """Date columns: minimum and maximum days since 1970-01-01."""

    __slots__ = ("maximum", "minimum")

    def __init__(self) -> None:
        super().__init__()
        self.minimum = INT_MAX
        self.maximum = INT_MIN

    def merge(self, other: Stats) -> None:  # noqa: D102
        if isinstance(other, DateStats):
            self.minimum = min(self.minimum, other.minimum)
            self.maximum = max(self.maximum, other.maximum)
        super().merge(other)

    def _fill(self, p: pb.ColumnStatistics) -> None:
        s = p.dateStatistics
        s.SetInParent()
        if self.count:
            s.minimum, s.maximum = self.minimum, self.maximum

    def _read(self, p: pb.ColumnStatistics) -> None:
        s = p.dateStatistics
        if s.HasField("maximum"):
            self.maximum = s.maximum
        if s.HasField("minimum"):
            self.minimum = s.minimum


class TimestampStats(Stats):
    """Timestamp columns: extremes as (milliseconds, sub-millisecond nanoseconds).

    ORC Java 2.x writes only the ``*Utc`` fields (wall-clock milliseconds read as UTC for
    timestamps without time zone) and the nanoseconds plus one when not at their defaults
    (0 for the minimum, 999999 for the maximum).
    """

    __slots__ = ("max_nanos", "maximum", "min_nanos", "minimum")

    def __init__(self) -> None:
        super().__init__()
        self.minimum = LONG_MAX
        self.maximum = LONG_MIN
        self.min_nanos = 0
        self.max_nanos = _DEFAULT_MAX_NANOS

    def merge(self, other: Stats) -> None:  # noqa: D102
        if isinstance(other, TimestampStats):
            if self.count == 0:
                if other.count != 0:
                    self.minimum, self.maximum = other.minimum, other.maximum
                    self.min_nanos, self.max_nanos = other.min_nanos, other.max_nanos
            elif other.count != 0:
                if self.minimum >= other.minimum:
                    if self.minimum > other.minimum or self.min_nanos > other.min_nanos:
                        self.min_nanos = other.min_nanos
                    self.minimum = other.minimum
                if self.maximum <= other.maximum:
                    if self.maximum < other.maximum or self.max_nanos < other.max_nanos:
                        self.max_nanos = other.max_nanos
                    self.maximum = other.maximum
        super().merge(other)

    def _fill(self, p: pb.ColumnStatistics) -> None:
        s = p.timestampStatistics
        s.SetInParent()
        if self.count:
            s.minimumUtc, s.maximumUtc = self.minimum, self.maximum
            if self.min_nanos != 0:
                s.minimumNanos = self.min_nanos + 1
            if self.max_nanos != _DEFAULT_MAX_NANOS:
                s.maximumNanos = self.max_nanos + 1

    def _read(self, p: pb.ColumnStatistics) -> None:
        s = p.timestampStatistics
        if s.HasField("maximumUtc"):
            self.maximum = s.maximumUtc
        elif s.HasField("maximum"):
            self.maximum = s.maximum
        if s.HasField("minimumUtc"):
            self.minimum = s.minimumUtc
        elif s.HasField("minimum"):
            self.minimum = s.minimum
        if s.HasField("maximumNanos"):
            self.max_nanos = s.maximumNanos - 1
        if s.HasField("minimumNanos"):
            self.min_nanos = s.minimumNanos - 1


class CollectionStats(Stats):
    """List and map columns: fewest, most and total elements."""

    __slots__ = ("maximum", "minimum", "sum")

    def __init__(self) -> None:
        super().__init__()
        self.minimum = LONG_MAX
        self.maximum = 0
        self.sum = 0

    def merge(self, other: Stats) -> None:  # noqa: D102
        if isinstance(other, CollectionStats):
            if self.count == 0:
                self.minimum, self.maximum = other.minimum, other.maximum
            else:
                self.minimum = min(self.minimum, other.minimum)
                self.maximum = max(self.maximum, other.maximum)
            self.sum += other.sum
        super().merge(other)

    def _fill(self, p: pb.ColumnStatistics) -> None:
        s = p.collectionStatistics
        s.SetInParent()
        if self.count:
            s.minChildren, s.maxChildren = self.minimum, self.maximum
        if self.sum:
            s.totalChildren = self.sum

    def _read(self, p: pb.ColumnStatistics) -> None:
        s = p.collectionStatistics
        self.minimum = s.minChildren if s.HasField("minChildren") else LONG_MAX
        self.maximum = s.maxChildren if s.HasField("maxChildren") else 0
        self.sum = s.totalChildren if s.HasField("totalChildren") else 0


_BY_KIND: dict[TypeKind, type[Stats]] = {
    TypeKind.BOOLEAN: BooleanStats,
    TypeKind.BYTE: IntegerStats,
    TypeKind.SHORT: IntegerStats,
    TypeKind.INT: IntegerStats,
    TypeKind.LONG: IntegerStats,
    TypeKind.FLOAT: DoubleStats,
    TypeKind.DOUBLE: DoubleStats,
    TypeKind.STRING: StringStats,
    TypeKind.CHAR: StringStats,
    TypeKind.VARCHAR: StringStats,
    TypeKind.BINARY: BinaryStats,
    TypeKind.DECIMAL: DecimalStats,
    TypeKind.DATE: DateStats,
    TypeKind.TIMESTAMP: TimestampStats,
    TypeKind.TIMESTAMP_INSTANT: TimestampStats,
    TypeKind.LIST: CollectionStats,
    TypeKind.MAP: CollectionStats,
}

_BY_FIELD: dict[str, type[Stats]] = {
    "intStatistics": IntegerStats,
    "doubleStatistics": DoubleStats,
    "stringStatistics": StringStats,
    "bucketStatistics": BooleanStats,
    "decimalStatistics": DecimalStats,
    "dateStatistics": DateStats,
    "binaryStatistics": BinaryStats,
    "timestampStatistics": TimestampStats,
    "collectionStatistics": CollectionStats,
}


def register_stats(cls: type[Stats], kinds: Sequence[TypeKind], field: str) -> None:
    """Class ``cls`` as the statistics of ``kinds``, recognised by the protobuf ``field``."""
    _BY_KIND.update(dict.fromkeys(kinds, cls))
    _BY_FIELD.setdefault(field, cls)


def stats_class(t: OrcType) -> tuple[type[Stats], dict[str, Any]]:
    """The statistics class ORC Java uses for ``t`` and its constructor arguments."""
    if t.kind == TypeKind.DECIMAL and t.precision and t.precision <= 18:
        return Decimal64Stats, {"scale": t.scale or 0}
    return _BY_KIND.get(t.kind, Stats), {}


def _infer(protos: Sequence[pb.ColumnStatistics]) -> type[Stats]:
    for p in protos:
        for name, cls in _BY_FIELD.items():
            if p.HasField(name):
                return cls
    return Stats


def merge_statistics(a: pb.ColumnStatistics, b: pb.ColumnStatistics,
                     orc_type: OrcType | None = None) -> pb.ColumnStatistics:
    """Merge the statistics of later data ``b`` into ``a``, as ORC Java merges stripe
    statistics into file statistics.

    Args:
        a: statistics of the earlier data (e.g. the file so far).
        b: statistics of the later data (e.g. one more stripe).
        orc_type: the column's type. Needed to merge decimals of precision up to 18 as Java
            does (18-digit sums); without it the kind is inferred from the fields set and
            decimals are merged with 38-digit sums.

    Returns:
        New merged statistics; ``a`` and ``b`` are not modified.
    """
    return _merged(a, b, orc_type).to_proto()


def merge_statistics_of(a: Sequence[pb.ColumnStatistics], b: Sequence[pb.ColumnStatistics],
                        orc_types: Sequence[OrcType]) -> list[pb.ColumnStatistics]:
    """:func:`merge_statistics` of every column (``b[i]`` into ``a[i]``, of type
    ``orc_types[i]``), the results sharing one protobuf arena (see :func:`protos_of`)."""
    return protos_of([_merged(x, y, t) for x, y, t in zip(a, b, orc_types, strict=True)])


def _merged(a: pb.ColumnStatistics, b: pb.ColumnStatistics, orc_type: OrcType | None) -> Stats:
    if orc_type is not None:
        cls, kwargs = stats_class(orc_type)
    else:
        cls, kwargs = _infer((a, b)), {}
    merged = cls.from_proto(a, **kwargs)
    merged.merge(cls.from_proto(b, **kwargs))
    return merged


def protos_of(stats: Sequence[Stats]) -> list[pb.ColumnStatistics]:
    """Each of ``stats`` as its protobuf message (:meth:`Stats.to_proto`), all of them
    sub-messages of one holder message, so that they share one protobuf arena, and made
    without the arenas of sub-messages reached before they are set (see
    :mod:`aorc.format.messages`: protobuf trims the process's heap after every 10,000 arena
    blocks freed, issue 31)."""
    return parsed_statistics([s.serialized() for s in stats])


# ---------------------------------------------------------------------------------------------
# the encoders' starting point


def base_group_stats(cls: type[Stats], counts: npt.NDArray[np.int64],
                     has_null: npt.NDArray[np.bool_], **kwargs: Any) -> list[Any]:
    """One fresh statistics object per group with count and hasNull set."""
    out = []
    for c, h in zip(counts.tolist(), has_null.tolist(), strict=True):
        s = cls(**kwargs)
        s.count, s.has_null = c, h
        out.append(s)
    return out
