"""The ``redact`` mask, as ORC Java's ``RedactMaskFactory`` computes it.

Parameters (all optional, in ``orc.mask`` order: ``redact,CHARS,TIME,UNMASK:column``):

1. *CHARS*, the replacement of each character class, one code point each, in this order:
   upper-case letter (``X``), lower-case letter (``x``), decimal digit (``9``), symbol
   (``$``), punctuation (``.``), separator (``_``, which means *kept*), other letter
   (``\\u00aa``), mark (``\\u0903``), other number (``\\u00b2``), anything else
   (``\\u06dd``). A ``_`` keeps that class as it is. The digit also masks numbers: every
   digit of an integer, a floating-point number's mantissa (``9.99999 x 10^e``, the value's
   decimal exponent kept) and a decimal's digits become it (``_``: numbers kept; a digit
   that is not 0-9 counts as 9); booleans become ``digit != 0``.
2. *TIME*, the replacement year, month, day, hour, minute and second of dates and
   timestamps, separated by any non-word character (default ``_ 1 1 0 0 0``: the year
   kept, January 1st, midnight; ``_`` keeps a field). Timestamps lose their fraction of a
   second when the second is replaced.
3. *UNMASK*, ``start:end`` index ranges (negative: from the end) of characters (or of an
   integer's or decimal's text) left as they are, comma separated.

Binary columns are nullified; lists, maps and structs keep their shape with each child
redacted. Character classes are Unicode general categories (Python's tables, which may
differ from the JVM's for characters assigned in recent Unicode versions; ORC Java leaves the
initial/final quote punctuation ``Pi``/``Pf`` in *anything else*).
"""

from __future__ import annotations

import bisect
import datetime
import decimal
import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa

from aorc.errors import SchemaError
from aorc.format.types import OrcType, TypeKind

__all__ = ["RedactMask"]

_UNMASKED = ord("_")
#: ORC Java's defaults, in parameter order (see the module docstring).
_DEFAULTS = ("X", "x", "9", "$", ".", "_", "\u00aa", "\u0903", "\u00b2", "\u06dd")
_CLASS_OF = {
    "Lu": 0, "Ll": 1, "Nd": 2, "Sm": 3, "Sc": 3, "Sk": 3, "So": 3,
    "Pd": 4, "Ps": 4, "Pe": 4, "Pc": 4, "Po": 4, "Zs": 5, "Zl": 5, "Zp": 5,
    "Lt": 6, "Lm": 6, "Lo": 6, "Mn": 7, "Me": 7, "Mc": 7, "Nl": 8, "No": 8,
}
_POW10 = [float(f"1e{e}") for e in range(-308, 308)]
_REPUNITS = [int("1" * n) for n in range(1, 20)]
_EPOCH = datetime.date(1970, 1, 1).toordinal()
_DAY_MS = 86_400_000


def _digit_value(cp: int) -> int:
    """Java's ``Character.getNumericValue`` where it is 0-9, else 9."""
    value = unicodedata.digit(chr(cp), -1) if cp != _UNMASKED else -1
    return value if 0 <= value <= 9 else 9


def _date_param(params: Sequence[str] | None, posn: int, default: int, top: int) -> int:
    if params is None or posn >= len(params):
        return default
    text = params[posn]
    if text.startswith("_"):
        return -1
    try:
        value = int(text)
    except ValueError:
        raise SchemaError(f"redact: date parameter {posn} is {text!r}, not a number") from None
    if not -1 <= value <= top:
        raise SchemaError(f"redact: date parameter {posn} of {value} is not in -1..{top}")
    return value


@dataclass(frozen=True)
class RedactMask:
    """The ``redact`` mask with its parameters (see the module docstring).

    Args:
        parameters: the mask's parameters as ``orc.mask`` gives them.

    Raises:
        SchemaError: malformed parameters.
    """

    parameters: tuple[str, ...] = ()
    _chars: tuple[int, ...] = field(init=False, repr=False)
    _digit: int = field(init=False, repr=False)
    _time: tuple[int, ...] = field(init=False, repr=False)
    _unmask: tuple[tuple[int, int], ...] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        given = self.parameters[0] if self.parameters else ""
        chars = [ord(c) for c in given[:len(_DEFAULTS)]]
        chars += [ord(c) for c in _DEFAULTS[len(chars):]]
        object.__setattr__(self, "_chars", tuple(chars))
        object.__setattr__(self, "_digit", _digit_value(chars[2]))
        time_text = self.parameters[1] if len(self.parameters) > 1 else ""
        times = None if not time_text.strip() else re.split(r"\W+", time_text)
        tops = (4000, 12, 31, 23, 59, 59)
        defaults = (-1, 1, 1, 0, 0, 0)
        object.__setattr__(self, "_time", tuple(_date_param(times, i, d, t) for i, (d, t)
                                                in enumerate(zip(defaults, tops, strict=True))))
        ranges = []
        unmask = self.parameters[2] if len(self.parameters) > 2 else ""
        for pair in unmask.split(",") if unmask.strip() else []:
            start, sep, end = pair.strip().partition(":")
            try:
                ranges.append((int(start), int(end)))
            except ValueError:
                raise SchemaError(f"redact: unmask range {pair!r} is not START:END") from None
            if not sep:
                raise SchemaError(f"redact: unmask range {pair!r} is not START:END")
        object.__setattr__(self, "_unmask", tuple(sorted(dict(ranges).items())))

    # ------------------------------------------------------------------ scalars

    @property
    def numbers_kept(self) -> bool:
        """The digit replacement is ``_``: numbers are not masked."""
        return self._chars[2] == _UNMASKED

    def _kept(self, index: int, length: int) -> bool:
        for start, end in self._unmask:
            lo = start if start >= 0 else length + start
            hi = end if end >= 0 else length + end
            if lo <= index <= hi:
                return True
        return False

    def replacement(self, cp: int) -> int:
        """The code point that replaces ``cp`` (``_`` for a class kept)."""
        cls = _CLASS_OF.get(unicodedata.category(chr(cp)), 9)
        return self._chars[cls]

    def mask_text(self, text: str) -> str:
        """A string redacted (negative unmask indexes count from the UTF-8 length in bytes,
        as ORC Java counts them, while indexes count characters)."""
        out = []
        n = len(text.encode("utf-8", "surrogatepass")) if self._unmask else 0
        for i, ch in enumerate(text):
            r = self.replacement(ord(ch))
            out.append(ch if r == _UNMASKED or (self._unmask and self._kept(i, n))
                       else chr(r))
        return "".join(out)

    def _mask_numeric_text(self, text: str) -> str:
        n = len(text)
        return "".join(ch if self._kept(i, n) or unicodedata.category(ch) != "Nd"
                       else chr(self._chars[2]) for i, ch in enumerate(text))

    def mask_long(self, value: int) -> int:
        """An integer redacted (before its column's width applies)."""
        if self._unmask:
            masked = int(self._mask_numeric_text(str(value)))
            if -2**63 <= masked < 2**63:
                return masked
            return 111_111_111_111_111_111 * self._digit  # Java's parse overflowed
        if self._digit == 0:
            return 0
        sign = 1 if value >= 0 else -1
        magnitude = min(abs(value), 2**63 - 1)
        digits = len(str(magnitude))
        if digits == 19 and self._digit == 9:
            digits = 18  # 99...9 with 19 digits would overflow
        return sign * self._digit * _REPUNITS[digits - 1]

    def mask_double(self, value: float) -> float:
        """A floating-point number redacted."""
        if self._unmask:
            raise SchemaError("redact: unmask ranges on floating-point columns are not "
                              "supported (ORC Java masks Java's text of the number)")
        if value == 0 or self._digit == 0:
            return self._digit * 1.11111
        base = 1.11111
        if value < 0:
            base, value = -1.11111, -value
        if value != value:  # NaN sorts last in Java's binary search
            posn = len(_POW10) - 1
        else:
            posn = max(0, bisect.bisect_right(_POW10, value) - 1)
        return self._digit * base * _POW10[posn]

    def mask_decimal(self, value: decimal.Decimal) -> decimal.Decimal:
        """A decimal redacted (its digits, trailing zeros of the fraction dropped first as
        Hive's decimals print)."""
        text = format(value.normalize() if value != 0 else decimal.Decimal(0), "f")
        return decimal.Decimal(self._mask_numeric_text(text))

    def mask_days(self, days: int) -> int:
        """A date (days since 1970-01-01) redacted."""
        year, month, day = self._time[:3]
        date = datetime.date.fromordinal(days + _EPOCH)
        return _lenient(year if year != -1 else date.year,
                        month if month != -1 else date.month,
                        day if day != -1 else date.day) - _EPOCH

    def mask_millis(self, millis: int) -> int:
        """A timestamp (milliseconds of its wall clock since 1970) redacted, its fraction
        of a second dropped (ORC Java zeroes the nanoseconds)."""
        days, ms = divmod(millis, _DAY_MS)
        days = self.mask_days(days) if any(t != -1 for t in self._time[:3]) else days
        hour, minute, second = self._time[3:]
        h, rest = divmod(ms, 3_600_000)
        m, rest = divmod(rest, 60_000)
        s, frac = divmod(rest, 1000)
        if hour != -1:
            h = hour
        if minute != -1:
            m = minute
        if second != -1:
            s = second
        return days * _DAY_MS + ((h * 60 + m) * 60 + s) * 1000  # nanos dropped, as Java

    @property
    def dates_kept(self) -> bool:
        """Dates are not masked (year, month and day kept)."""
        return all(t == -1 for t in self._time[:3])

    @property
    def timestamps_kept(self) -> bool:
        """Timestamps are not masked."""
        return all(t == -1 for t in self._time)

    # ------------------------------------------------------------------ arrays

    def mask(self, arr: pa.Array, t: OrcType,
             compound: Callable[[pa.Array, OrcType], pa.Array]) -> pa.Array:
        """The redacted copy of ``arr`` (a column of type ``t``); ``compound`` masks a
        list, map, struct or union child by child (a union keeping its tags)."""
        kind = t.kind
        if kind in (TypeKind.STRUCT, TypeKind.LIST, TypeKind.MAP, TypeKind.UNION):
            return compound(arr, t)
        if kind == TypeKind.BINARY:
            return pa.nulls(len(arr), arr.type)
        if pa.types.is_dictionary(arr.type):
            arr = arr.dictionary_decode()
        if kind in (TypeKind.STRING, TypeKind.VARCHAR, TypeKind.CHAR):
            return self._strings(arr)
        if kind == TypeKind.BOOLEAN:
            if self.numbers_kept:
                return arr
            return pa.array(np.full(len(arr), self._digit != 0), pa.bool_(),
                            mask=_nulls(arr))
        if kind in (TypeKind.BYTE, TypeKind.SHORT, TypeKind.INT, TypeKind.LONG):
            if self.numbers_kept:
                return arr
            out = np.array([0 if v is None else self.mask_long(v) for v in arr.to_pylist()],
                           dtype=object)
            wrapped = np.array([int(v) & 0xFFFF_FFFF_FFFF_FFFF for v in out],
                               dtype=np.uint64).view(np.int64)
            return pa.array(wrapped.astype(arr.type.to_pandas_dtype()), arr.type,
                            mask=_nulls(arr))
        if kind in (TypeKind.FLOAT, TypeKind.DOUBLE):
            if self.numbers_kept:
                return arr
            values = [0.0 if v is None else self.mask_double(v) for v in arr.to_pylist()]
            return pa.array(np.array(values, dtype=np.float64), pa.float64(),
                            mask=_nulls(arr)).cast(arr.type, safe=False)
        if kind == TypeKind.DECIMAL:
            if self.numbers_kept:
                return arr
            return pa.array([None if v is None else self.mask_decimal(v)
                             for v in arr.to_pylist()], arr.type)
        if kind == TypeKind.DATE:
            if self.dates_kept:
                return arr
            days = arr.cast(pa.int32()).fill_null(0).to_numpy(zero_copy_only=False)
            return pa.array(np.array([self.mask_days(int(d)) for d in days], np.int32),
                            pa.int32(), mask=_nulls(arr)).cast(arr.type)
        if kind in (TypeKind.TIMESTAMP, TypeKind.TIMESTAMP_INSTANT):
            if self.timestamps_kept:
                return arr
            ms = arr.cast(pa.timestamp("ms", arr.type.tz), safe=False).cast(pa.int64())
            masked = [None if v is None else self.mask_millis(v) for v in ms.to_pylist()]
            return pa.array(masked, pa.int64()).cast(pa.timestamp("ms", arr.type.tz)) \
                .cast(arr.type)
        return pa.nulls(len(arr), arr.type)

    def _strings(self, arr: pa.Array) -> pa.Array:
        if not self._unmask:  # ASCII text whose classes map to ASCII: a table lookup
            table, slow = self._ascii_table()
            raw = arr.cast(pa.large_binary())
            validity, offsets, data = raw.buffers()
            if data is not None:
                bytes_ = np.frombuffer(data, np.uint8)
                if not slow[bytes_].any():
                    out = table[bytes_]
                    result = pa.Array.from_buffers(
                        pa.large_string(), len(raw), [validity, offsets, pa.py_buffer(out)],
                        null_count=raw.null_count, offset=raw.offset)
                    return result.cast(arr.type)
        return pa.array([None if v is None else self.mask_text(v) for v in arr.to_pylist()],
                        arr.type)

    def _ascii_table(self) -> tuple[np.ndarray, np.ndarray]:
        """Byte -> byte for ASCII text, and the bytes it cannot map (non-ASCII bytes, and
        ASCII characters whose replacement is not ASCII)."""
        table = np.arange(256, dtype=np.uint8)
        slow = np.zeros(256, dtype=bool)
        slow[0x80:] = True
        for b in range(128):
            r = self.replacement(b)
            if r == _UNMASKED:
                continue
            if r >= 0x80:
                slow[b] = True
            else:
                table[b] = r
        return table, slow


def _nulls(arr: pa.Array) -> np.ndarray | None:
    """The null mask of ``arr`` for ``pa.array(mask=)`` (``None`` without nulls)."""
    if arr.null_count == 0:
        return None
    out: np.ndarray = arr.is_null().to_numpy(zero_copy_only=False)
    return out


def _lenient(year: int, month: int, day: int) -> int:
    """The ordinal of (year, month, day) with months and days out of range rolled over, as a
    lenient Java calendar does."""
    y, m = year + (month - 1) // 12, (month - 1) % 12 + 1
    if y < 1:
        raise SchemaError(f"redact: year {y} is before the calendar's first")
    return datetime.date(y, m, 1).toordinal() + day - 1
