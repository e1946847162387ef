"""Column statistics: typed read-only views of ``pb.ColumnStatistics``.

Views over the protobuf messages a file holds, and their JSON form. Computing and merging
statistics while writing is :mod:`aorc.format.columns.encode.statistics`.

Value conventions (:class:`ColumnStatistics`):

- integers: ``int``; floating point: ``float``; decimals: ``decimal.Decimal``;
- strings (string/char/varchar): ``str`` minimum/maximum. Writers truncate values over 1024
  bytes and then record only ``lower_bound``/``upper_bound``; ``sum`` is the total length in
  bytes of the non-null values;
- binary: ``sum`` is the total length in bytes;
- booleans: ``true_count``/``false_count``;
- dates: ``datetime.date`` (the file stores days since 1970-01-01); a day outside the range of
  ``datetime.date`` gives ``None`` (unknown);
- timestamps: ``datetime.datetime`` minimum/maximum (naive wall-clock time for TIMESTAMP,
  UTC-aware for TIMESTAMP WITH LOCAL TIME ZONE, as the columns read), truncated to
  microseconds; the exact values are ``minimum_nanos``/``maximum_nanos``: ``int`` nanoseconds
  since the epoch of the wall-clock time read as UTC (what a TIMESTAMP column decodes to;
  ``None`` when out of ``datetime``'s range). Writers since ORC-135 record that in ``minimumUtc``/
  ``maximumUtc`` (``timestamp_utc`` is then true). Older writers recorded only ``minimum``/
  ``maximum``, the instant of the wall-clock time in the writer's zone: with the stripe's
  ``writer_timezone`` they are converted (``timestamp_utc`` true), otherwise they are taken as
  they are and are off by the zone's offset (``timestamp_utc`` false: do not prune with them).
  Sub-millisecond nanoseconds are stored plus one; when absent the minimum gets 0 and the
  maximum 999,999 extra nanoseconds (the ORC Java convention: an upper bound);
- lists/maps: ``min_children``/``max_children``/``total_children``;
- geometry/geography: ``bbox`` (:class:`aorc.format.geo.BoundingBox`) and
  ``geospatial_types`` (sorted WKB type codes), when recorded (ORC Java records them for
  geometry columns only); a malformed box or code raises :class:`CorruptFileError`.

Statistics a writer never recorded are ``None``. Statistics known to be wrong are dropped:
as ORC C++ does, string, date, decimal, timestamp, boolean and binary statistics of files from
the ORIGINAL Java writer (writer version 0, before HIVE-8732); as ORC Java does, decimal
minimum/maximum of precision up to 18 from Java writer version ORC-135 (ORC 1.5.0 to 1.5.5,
ORC-517).
"""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import zoneinfo
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, SupportsIndex, overload

from aorc.errors import CorruptFileError, SchemaError
from aorc.format import geo
from aorc.format._proto import orc_proto_pb2 as pb
from aorc.format.types import OrcType, TypeKind

__all__ = [
    "ColumnStatistics",
    "StatValue",
    "StatisticsList",
    "column_statistics_from_proto",
]

#: Python types a statistic's minimum/maximum/sum may have.
StatValue = int | float | str | decimal.Decimal | datetime.date | datetime.datetime

_EPOCH = datetime.date(1970, 1, 1)
_EPOCH_UTC = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)
_NANOS_PER_MILLI = 1_000_000
_DEFAULT_MAX_NANOS = 999_999
#: Writer version HIVE-8732: statistics before it are unreliable (see the module docstring).
_HIVE_8732 = 1
#: Java writer version ORC-135, whose decimal64 minimum/maximum are wrong (ORC-517).
_ORC_135 = 6
_MAX_DECIMAL64_PRECISION = 18

_INTEGER = frozenset({TypeKind.BYTE, TypeKind.SHORT, TypeKind.INT, TypeKind.LONG})
_FLOATING = frozenset({TypeKind.FLOAT, TypeKind.DOUBLE})
_STRING = frozenset({TypeKind.STRING, TypeKind.CHAR, TypeKind.VARCHAR})
_TIMESTAMP = frozenset({TypeKind.TIMESTAMP, TypeKind.TIMESTAMP_INSTANT})
_COLLECTION = frozenset({TypeKind.LIST, TypeKind.MAP})
#: Kinds whose statistics the ORIGINAL writer got wrong.
_NEED_HIVE_8732 = _STRING | _TIMESTAMP | {TypeKind.DATE, TypeKind.DECIMAL, TypeKind.BOOLEAN,
                                          TypeKind.BINARY}


# =========================================================================== reading

@dataclass(frozen=True)
class ColumnStatistics:
    """Statistics of one column over a file, a stripe or a row group.

    Attributes:
        kind: the column's ORC type kind (``None`` when neither given nor recognisable).
        num_values: number of non-null values.
        has_null: whether the column has nulls (true when the writer did not say).
        bytes_on_disk: bytes the column's streams take, when recorded.
        minimum: smallest value (see the module docstring for its Python type).
        maximum: largest value.
        sum: sum of the values (integers overflowing 64 bits give ``None``); for strings and
            binary, the total length in bytes.
        lower_bound: strings: a lower bound recorded instead of a too-long minimum.
        upper_bound: strings: an upper bound recorded instead of a too-long maximum.
        true_count: booleans: number of true values.
        false_count: booleans: number of false values.
        min_children: lists/maps: fewest elements in one value.
        max_children: lists/maps: most elements in one value.
        total_children: lists/maps: total number of elements.
        timestamp_utc: timestamps: minimum/maximum are wall-clock times read as UTC (from the
            UTC fields, or converted with the writer's zone); false when the writer-local
            fields were taken as they are.
        minimum_nanos: timestamps: the exact minimum, nanoseconds since the epoch.
        maximum_nanos: timestamps: the exact maximum, nanoseconds since the epoch.
        bbox: geometry/geography: the bounding box of the values.
        geospatial_types: geometry/geography: the WKB type codes of the values, sorted.
    """

    kind: TypeKind | None
    num_values: int
    has_null: bool
    bytes_on_disk: int | None = None
    minimum: StatValue | None = None
    maximum: StatValue | None = None
    sum: int | float | decimal.Decimal | None = None
    lower_bound: str | None = None
    upper_bound: str | None = None
    true_count: int | None = None
    false_count: int | None = None
    min_children: int | None = None
    max_children: int | None = None
    total_children: int | None = None
    timestamp_utc: bool | None = None
    minimum_nanos: int | None = None
    maximum_nanos: int | None = None
    bbox: geo.BoundingBox | None = None
    geospatial_types: tuple[int, ...] | None = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict: recorded fields only; decimals as strings, dates and timestamps
        as ISO-8601 text (timestamps with nanoseconds).

        Returns:
            A dict of the recorded fields, JSON-ready.
        """
        out: dict[str, Any] = {"kind": self.kind.name.lower() if self.kind is not None else None}
        for name in _DICT_FIELDS:
            value = getattr(self, name)
            if value is None:
                continue
            if name in ("minimum", "maximum") and self.kind in _TIMESTAMP:
                nanos = getattr(self, f"{name}_nanos")
                value = _iso_nanos(int(nanos), bool(self.timestamp_utc))
            out[name] = _json_value(value)
        if self.bbox is not None:
            out["bbox"] = {k: v for k, v in dataclasses.asdict(self.bbox).items()
                           if v is not None}
        if self.geospatial_types is not None:
            out["geospatial_types"] = list(self.geospatial_types)
        return out


_DICT_FIELDS = ("num_values", "has_null", "bytes_on_disk", "minimum", "maximum", "sum",
                "lower_bound", "upper_bound", "true_count", "false_count", "min_children",
                "max_children", "total_children", "timestamp_utc")


class StatisticsList(list[ColumnStatistics]):
    """Column statistics indexed by column id, also reachable by dotted column name
    (``stats["address.city"]``, names as :meth:`aorc.OrcReader.column_names` gives them)."""

    def __init__(self, items: Any, names: Sequence[str]) -> None:
        super().__init__(items)
        self._ids = {name: i for i, name in enumerate(names)}

    @overload
    def __getitem__(self, key: SupportsIndex | str) -> ColumnStatistics: ...

    @overload
    def __getitem__(self, key: slice) -> list[ColumnStatistics]: ...

    def __getitem__(self, key: SupportsIndex | str | slice) -> Any:
        if isinstance(key, str):
            if key not in self._ids:
                known = ", ".join(n for n in self._ids if n)
                raise SchemaError(f"no column {key!r}; the columns are: {known}")
            key = self._ids[key]
        return super().__getitem__(key)

    def names(self) -> list[str]:
        """The column names, by column id (the root is ``""``)."""
        return list(self._ids)


def column_statistics_from_proto(p: pb.ColumnStatistics, orc_type: OrcType | None = None, *,
                                 writer_version: int | None = None,
                                 writer: int | None = None,
                                 writer_timezone: str | None = None) -> ColumnStatistics:
    """The typed view of one ``ColumnStatistics`` message.

    Args:
        p: the message (from the footer, the Metadata or a row index entry).
        orc_type: the column's type; when ``None`` the kind is inferred from which statistics
            message is present (as ORC Java does).
        writer_version: the file's PostScript writer version; statistics known to be wrong
            for it are dropped.
        writer: the file's footer writer code (``None``: ORC Java), which qualifies
            ``writer_version``.
        writer_timezone: the stripe footer's writer time zone, to convert the writer-local
            timestamp statistics of old files (stripe and row-group statistics only: file
            statistics have no zone).

    Raises:
        CorruptFileError: for a decimal statistic that is not a finite decimal number.
    """
    kind = orc_type.kind if orc_type is not None else _infer_kind(p)
    base: dict[str, Any] = {
        "kind": kind,
        "num_values": p.numberOfValues,
        "has_null": p.hasNull if p.HasField("hasNull") else True,
        "bytes_on_disk": p.bytesOnDisk if p.HasField("bytesOnDisk") else None,
    }
    trusted = writer_version is None or writer_version >= _HIVE_8732
    if kind is not None and (trusted or kind not in _NEED_HIVE_8732):
        if kind in _TIMESTAMP:
            base.update(_timestamp_stats(p, writer_timezone, kind))
        else:
            reader = _READERS.get(kind)
            if reader is not None:
                base.update(reader(p))
    if (kind == TypeKind.DECIMAL and writer_version == _ORC_135 and not writer
            and orc_type is not None and orc_type.precision
            and orc_type.precision <= _MAX_DECIMAL64_PRECISION):
        base.pop("minimum", None)
        base.pop("maximum", None)
    return ColumnStatistics(**base)


def _geo_stats(p: pb.ColumnStatistics) -> dict[str, Any]:
    return {"bbox": geo.bbox_from_proto(p), "geospatial_types": geo.types_from_proto(p)}


def _infer_kind(p: pb.ColumnStatistics) -> TypeKind | None:
    for field, kind in _INFER_ORDER:
        if p.HasField(field):
            return kind
    return None


_INFER_ORDER = (
    ("bucketStatistics", TypeKind.BOOLEAN), ("intStatistics", TypeKind.LONG),
    ("collectionStatistics", TypeKind.LIST), ("doubleStatistics", TypeKind.DOUBLE),
    ("stringStatistics", TypeKind.STRING), ("decimalStatistics", TypeKind.DECIMAL),
    ("dateStatistics", TypeKind.DATE), ("timestampStatistics", TypeKind.TIMESTAMP),
    ("binaryStatistics", TypeKind.BINARY), ("geospatialStatistics", TypeKind.GEOMETRY),
)


def _opt(msg: Any, name: str) -> Any:
    return getattr(msg, name) if msg.HasField(name) else None


def _int_stats(p: pb.ColumnStatistics) -> dict[str, Any]:
    if not p.HasField("intStatistics"):
        return {}
    s = p.intStatistics
    return {"minimum": _opt(s, "minimum"), "maximum": _opt(s, "maximum"), "sum": _opt(s, "sum")}


def _double_stats(p: pb.ColumnStatistics) -> dict[str, Any]:
    if not p.HasField("doubleStatistics"):
        return {}
    s = p.doubleStatistics
    return {"minimum": _opt(s, "minimum"), "maximum": _opt(s, "maximum"), "sum": _opt(s, "sum")}


def _utf8(value: str | bytes | None) -> str | None:
    """A string statistic; python-protobuf gives bytes for invalid UTF-8: treat as unknown."""
    return value if isinstance(value, str) else None


def _string_stats(p: pb.ColumnStatistics) -> dict[str, Any]:
    if not p.HasField("stringStatistics"):
        return {}
    s = p.stringStatistics
    return {
        "minimum": _utf8(_opt(s, "minimum")), "maximum": _utf8(_opt(s, "maximum")),
        "sum": _opt(s, "sum"),
        "lower_bound": _utf8(_opt(s, "lowerBound")), "upper_bound": _utf8(_opt(s, "upperBound")),
    }


def _binary_stats(p: pb.ColumnStatistics) -> dict[str, Any]:
    if not p.HasField("binaryStatistics"):
        return {}
    return {"sum": _opt(p.binaryStatistics, "sum")}


def _bool_stats(p: pb.ColumnStatistics) -> dict[str, Any]:
    if not p.HasField("bucketStatistics") or not p.bucketStatistics.count:
        return {}
    true_count = int(p.bucketStatistics.count[0])
    return {"true_count": true_count, "false_count": max(p.numberOfValues - true_count, 0)}


def _decimal(value: str | bytes | None, what: str) -> decimal.Decimal | None:
    if value is None:
        return None
    text = _utf8(value)
    try:
        if text is None:
            raise decimal.InvalidOperation
        result = decimal.Decimal(text)
        if not result.is_finite():
            raise decimal.InvalidOperation
    except decimal.InvalidOperation as exc:
        raise CorruptFileError(f"decimal statistics: {what} {value!r} is not a number") from exc
    return result


def _decimal_stats(p: pb.ColumnStatistics) -> dict[str, Any]:
    if not p.HasField("decimalStatistics"):
        return {}
    s = p.decimalStatistics
    return {name: _decimal(_opt(s, name), name) for name in ("minimum", "maximum", "sum")}


def _date(days: int | None) -> datetime.date | None:
    if days is None:
        return None
    try:
        return _EPOCH + datetime.timedelta(days=days)
    except OverflowError:
        return None


def _date_stats(p: pb.ColumnStatistics) -> dict[str, Any]:
    if not p.HasField("dateStatistics"):
        return {}
    s = p.dateStatistics
    return {"minimum": _date(_opt(s, "minimum")), "maximum": _date(_opt(s, "maximum"))}


def _wall_millis(millis: int | None, zone: str | None) -> int | None:
    """Writer-local instant -> wall-clock millis read as UTC; ``None`` if not convertible."""
    if millis is None or zone is None:
        return None
    try:
        tz = zoneinfo.ZoneInfo(zone)
        instant = _EPOCH_UTC + datetime.timedelta(milliseconds=millis)
        offset = instant.astimezone(tz).utcoffset()
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError, OverflowError):
        return None
    if offset is None:
        return None
    return millis + offset // datetime.timedelta(milliseconds=1)


def _datetime(nanos: int | None, kind: TypeKind) -> datetime.datetime | None:
    """Nanoseconds of wall-clock time read as UTC as a ``datetime`` (microseconds, floored):
    naive for TIMESTAMP, UTC-aware for TIMESTAMP_INSTANT; None out of range."""
    if nanos is None:
        return None
    try:
        moment = _EPOCH_UTC + datetime.timedelta(microseconds=nanos // 1000)
    except OverflowError:
        return None
    return moment if kind == TypeKind.TIMESTAMP_INSTANT else moment.replace(tzinfo=None)


def _timestamp_stats(p: pb.ColumnStatistics, writer_timezone: str | None,
                     kind: TypeKind = TypeKind.TIMESTAMP) -> dict[str, Any]:
    if not p.HasField("timestampStatistics"):
        return {}
    s = p.timestampStatistics
    utc = s.HasField("minimumUtc") or s.HasField("maximumUtc")
    if utc:
        low, high = _opt(s, "minimumUtc"), _opt(s, "maximumUtc")
    else:
        low, high = _opt(s, "minimum"), _opt(s, "maximum")
        wall = (_wall_millis(low, writer_timezone), _wall_millis(high, writer_timezone))
        # converted only when every recorded value converts (a known zone, in range)
        if writer_timezone is not None and all(
                (w is None) == (v is None) for w, v in zip(wall, (low, high), strict=False)):
            (low, high), utc = wall, True
    low_nanos = s.minimumNanos - 1 if s.HasField("minimumNanos") else 0
    high_nanos = s.maximumNanos - 1 if s.HasField("maximumNanos") else _DEFAULT_MAX_NANOS
    minimum = None if low is None else low * _NANOS_PER_MILLI + low_nanos
    maximum = None if high is None else high * _NANOS_PER_MILLI + high_nanos
    return {
        "minimum": _datetime(minimum, kind), "maximum": _datetime(maximum, kind),
        "minimum_nanos": minimum, "maximum_nanos": maximum, "timestamp_utc": utc,
    }


def _collection_stats(p: pb.ColumnStatistics) -> dict[str, Any]:
    if not p.HasField("collectionStatistics"):
        return {}
    s = p.collectionStatistics
    return {"min_children": _opt(s, "minChildren"), "max_children": _opt(s, "maxChildren"),
            "total_children": _opt(s, "totalChildren")}


_READERS = {
    TypeKind.BOOLEAN: _bool_stats,
    TypeKind.BINARY: _binary_stats,
    TypeKind.GEOMETRY: _geo_stats,
    TypeKind.GEOGRAPHY: _geo_stats,
    TypeKind.DECIMAL: _decimal_stats,
    TypeKind.DATE: _date_stats,
    **{k: _int_stats for k in _INTEGER},
    **{k: _double_stats for k in _FLOATING},
    **{k: _string_stats for k in _STRING},
    **{k: _collection_stats for k in _COLLECTION},
}


# =========================================================================== JSON output

def _iso_nanos(nanos: int, utc: bool) -> str:
    """``YYYY-MM-DD HH:MM:SS.fffffffff`` for nanoseconds since the epoch (``Z`` when UTC)."""
    seconds, frac = divmod(nanos, 1_000_000_000)
    try:
        moment = datetime.datetime(1970, 1, 1) + datetime.timedelta(seconds=seconds)
    except OverflowError:
        return str(nanos)
    return f"{moment:%Y-%m-%d %H:%M:%S}.{frac:09d}" + ("Z" if utc else "")


def _json_value(value: Any) -> Any:
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, datetime.date):
        return value.isoformat()
    return value


# =========================================================================== writing
# compute / merge / to_proto (the writer) go here.
