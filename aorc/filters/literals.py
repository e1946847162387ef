"""Filter values given as text, parsed for the column they are compared with.

JSON filters, the command line and hand-written filters give dates, timestamps and decimals
as text. :func:`parse_text` turns such a text into a value of the column's type, with one
grammar for data columns (:mod:`aorc.filters.parse`), partition columns
(:func:`aorc.dataset.partitioning.filter_value`, after Spark's folder grammar) and the CLI's
``--filter`` (:mod:`aorc.filters.text`); :func:`accepted_formats` says what it takes:

- dates: ``yyyy-MM-dd``;
- timestamps: ``yyyy-MM-dd``, ``yyyy-MM-dd HH:mm``, ``yyyy-MM-dd HH:mm:ss`` with up to nine
  digits of fraction, ``T`` instead of the space, and optionally a zone: ``Z``, ``+HH:MM``,
  ``+HHMM`` or ``+HH`` (a zone makes an instant, which a ``timestamp`` column without zone
  refuses, as it refuses a zone-aware ``datetime``);
- decimals: ``12.50``, ``-3``, ``1e5``; integers: ``42`` (a decimal number such as ``2.5``
  is a bound: ``x < 2.5`` keeps ``x <= 2``);
- floating point: a decimal number, ``NaN``, ``Infinity``/``inf`` with an optional sign;
- booleans: ``true`` or ``false`` (any case).

Strings are taken as they are; binary values as their UTF-8 bytes.
"""

from __future__ import annotations

import datetime
import decimal
import re
from collections.abc import Callable
from typing import Any

import pyarrow as pa

__all__ = ["accepted_formats", "parse_text"]

_INTEGER = re.compile(r"[+-]?[0-9]+")
_NUMBER = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_SPECIAL_FLOAT = re.compile(r"[+-]?(?:nan|inf|infinity)", re.IGNORECASE)
_DATE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})")
_TIMESTAMP = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})"
    r"(?:[T ]([0-9]{2}):([0-9]{2})(?::([0-9]{2})(?:\.([0-9]{1,9}))?)?"
    r"\s*(Z|[+-][0-9]{2}(?::?[0-9]{2})?)?)?")

_FORMATS = {
    "date": "a date yyyy-MM-dd",
    "timestamp": "a timestamp yyyy-MM-dd[ HH:mm[:ss[.fffffffff]]] ('T' may replace the "
                 "space), optionally followed by a zone: Z, +HH:MM, +HHMM or +HH",
    "decimal": "a decimal number such as 12.50, -3 or 1e5",
    "integer": "an integer such as 42 (or a decimal number such as 2.5, as a bound)",
    "float": "a number such as 1.5, -2, 1e-3, NaN or Infinity",
    "boolean": "true or false",
}


#: The kind of literal each Arrow type takes, by the first test the type passes.
_KINDS: tuple[tuple[Callable[[pa.DataType], bool], str], ...] = (
    (pa.types.is_date, "date"), (pa.types.is_timestamp, "timestamp"),
    (pa.types.is_decimal, "decimal"), (pa.types.is_integer, "integer"),
    (pa.types.is_floating, "float"), (pa.types.is_boolean, "boolean"),
    (pa.types.is_binary, "binary"), (pa.types.is_large_binary, "binary"),
    (pa.types.is_fixed_size_binary, "binary"),
)


def _kind(t: pa.DataType) -> str | None:
    if pa.types.is_dictionary(t):
        t = t.value_type
    return next((kind for test, kind in _KINDS if test(t)), None)


def accepted_formats(t: pa.DataType) -> str:
    """What :func:`parse_text` takes for a column of type ``t``, for error messages."""
    return _FORMATS.get(_kind(t) or "", "any text")


def parse_text(text: str, t: pa.DataType) -> Any:
    """The value a filter's ``text`` means for a column of Arrow type ``t``: a ``date``,
    ``datetime`` (with a ``tzinfo`` when a zone is given; an Arrow ``timestamp[ns]`` scalar
    when the fraction has more than six digits), ``Decimal``, ``int``, ``float`` or ``bool``;
    the text itself for string columns (and any other type), bytes for binary ones.

    Raises:
        ValueError: ``text`` is not in a format of ``t`` (see :func:`accepted_formats`).
    """
    kind = _kind(t)
    body = text.strip()
    if kind is None:
        return text
    if kind == "binary":
        return text.encode("utf-8")
    if kind == "boolean":
        if body.lower() in ("true", "false"):
            return body.lower() == "true"
    elif kind == "integer":
        if _INTEGER.fullmatch(body):
            return int(body)
        if _NUMBER.fullmatch(body):
            return decimal.Decimal(body)
    elif kind == "decimal":
        if _NUMBER.fullmatch(body):
            return decimal.Decimal(body)
    elif kind == "float":
        if _NUMBER.fullmatch(body) or _SPECIAL_FLOAT.fullmatch(body):
            return float(body)
    elif kind == "date":
        match = _DATE.fullmatch(body)
        if match:
            return _checked(lambda: datetime.date(*(int(g) for g in match.groups())), text, t)
    else:
        match = _TIMESTAMP.fullmatch(body)
        if match:
            return _checked(lambda: _timestamp(match), text, t)
    raise ValueError(f"{text!r} is not {accepted_formats(t)}")


def _checked(make: Any, text: str, t: pa.DataType) -> Any:
    try:
        return make()
    except ValueError as exc:  # month 13, hour 25, ...
        raise ValueError(f"{text!r} is not {accepted_formats(t)} ({exc})") from None


def _timestamp(match: re.Match[str]) -> Any:
    year, month, day, hour, minute, second, fraction, zone = match.groups()
    digits = (fraction or "").ljust(9, "0")
    value = datetime.datetime(int(year), int(month), int(day), int(hour or 0),
                              int(minute or 0), int(second or 0), int(digits[:6]),
                              tzinfo=_zone(zone))
    if digits[6:] == "000":
        return value
    epoch = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC if zone else None)
    delta = value - epoch
    nanos = ((delta.days * 86_400 + delta.seconds) * 10**6 + delta.microseconds) * 1000 \
        + int(digits[6:])
    return pa.scalar(nanos, pa.timestamp("ns", "UTC" if zone else None))


def _zone(text: str | None) -> datetime.tzinfo | None:
    if text is None:
        return None
    if text == "Z":
        return datetime.UTC
    sign = -1 if text[0] == "-" else 1
    digits = text[1:].replace(":", "")
    offset = datetime.timedelta(hours=int(digits[:2]), minutes=int(digits[2:] or 0))
    if offset >= datetime.timedelta(hours=24):
        raise ValueError(f"zone offset {text} is out of range")
    return datetime.timezone(sign * offset)
