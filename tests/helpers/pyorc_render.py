"""Read a file with pyorc and render its rows in the conformance text format.

pyorc (ORC's C++ reader behind Python objects) is an independent peer: its rows are rendered
value by value here, with no Arrow involved, so agreeing with :func:`helpers.render.render`
of aorc's table means the two readers agree. pyorc does not report union tags, so unions
render as their bare value (compare with ``render(..., union_tags=False)``).
"""

from __future__ import annotations

import decimal
import math
from pathlib import Path
from typing import Any, NamedTuple

import pyorc
from pyorc.converters import ORCConverter

from .orc_schema import OrcSchema, parse_schema
from .render import LEGACY_DECIMAL_SCALE

__all__ = ["civil_from_days", "read_pyorc_lines", "render_value", "sample_windows"]


class _Timestamp(NamedTuple):
    seconds: int
    nanos: int


class _Date(NamedTuple):
    days: int


class _Decimal(NamedTuple):
    text: str


class _RawTimestamp(ORCConverter):
    @staticmethod
    def from_orc(seconds: int, nanoseconds: int, timezone: Any = None) -> _Timestamp:
        return _Timestamp(seconds, nanoseconds)

    @staticmethod
    def to_orc(*args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError


class _RawDate(ORCConverter):
    @staticmethod
    def from_orc(days: int) -> _Date:
        return _Date(days)

    @staticmethod
    def to_orc(*args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError


class _RawDecimal(ORCConverter):
    @staticmethod
    def from_orc(text: str) -> _Decimal:
        return _Decimal(text)

    @staticmethod
    def to_orc(*args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError


_CONVERTERS = {
    pyorc.TypeKind.TIMESTAMP: _RawTimestamp,
    pyorc.TypeKind.TIMESTAMP_INSTANT: _RawTimestamp,
    pyorc.TypeKind.DATE: _RawDate,
    pyorc.TypeKind.DECIMAL: _RawDecimal,
}


def read_pyorc_lines(
    path: str | Path,
    schema: OrcSchema | str,
    *,
    exact: bool = False,
    start: int = 0,
    stop: int | None = None,
) -> list[str]:
    """Read rows ``start:stop`` with pyorc and render them (unions without tags).

    Args:
        path: the ORC file.
        schema: its ORC type (the renderer needs it for decimal scales and union branches).
        exact: print floats with ``repr`` instead of ``%.7g``/``%.14g``.
        start: first row (pyorc seeks to it).
        stop: row to stop before; ``None`` reads to the end.

    Returns:
        One line per row read.
    """
    if isinstance(schema, str):
        schema = parse_schema(schema)
    with open(path, "rb") as f:
        reader = pyorc.Reader(f, struct_repr=pyorc.StructRepr.DICT, converters=_CONVERTERS)
        if start:
            try:
                reader.seek(start)
            except pyorc.ParseError:  # pyorc cannot skip in some files without a row index
                reader = pyorc.Reader(f, struct_repr=pyorc.StructRepr.DICT, converters=_CONVERTERS)
                reader.read(start)
        rows = reader.read() if stop is None else reader.read(stop - start)
        return [render_value(row, schema, exact) for row in rows]


def sample_windows(num_rows: int, max_rows: int = 9_000) -> list[tuple[int, int]]:
    """Row ranges to compare with pyorc: all rows, or its start, middle and end when large."""
    if num_rows <= max_rows:
        return [(0, num_rows)]
    size = max_rows // 3
    middle = (num_rows - size) // 2
    return [(0, size), (middle, middle + size), (num_rows - size, num_rows)]


def civil_from_days(days: int) -> tuple[int, int, int]:
    """(year, month, day) of the proleptic Gregorian date ``days`` after 1970-01-01."""
    z = days + 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    day = doy - (153 * mp + 2) // 5 + 1
    month = mp + 3 if mp < 10 else mp - 9
    return yoe + era * 400 + (month <= 2), month, day


def _escape(text: str) -> str:
    for old, new in (("\\", "\\\\"), ('"', '\\"'), ("\b", "\\b"), ("\f", "\\f")):
        text = text.replace(old, new)
    return text.replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")


def _float(value: float, kind: str, exact: bool) -> str:
    if math.isnan(value) and math.copysign(1.0, value) < 0:
        return "-nan"
    if exact:
        return repr(value)
    return ("%.7g" if kind == "float" else "%.14g") % value


def _timestamp(value: _Timestamp) -> str:
    seconds, nanos = divmod(value.seconds * 10**9 + value.nanos, 10**9)
    days, second_of_day = divmod(seconds, 86400)
    year, month, day = civil_from_days(days)
    hour, rest = divmod(second_of_day, 3600)
    fraction = f"{nanos:09d}".rstrip("0") or "0"
    return f'"{year}-{month:02d}-{day:02d} {hour:02d}:{rest // 60:02d}:{rest % 60:02d}.{fraction}"'


def _decimal(value: _Decimal, t: OrcSchema) -> str:
    if t.is_legacy_decimal:
        scale, rounding = LEGACY_DECIMAL_SCALE, decimal.ROUND_DOWN
    else:
        scale, rounding = t.scale or 0, decimal.ROUND_HALF_EVEN
    context = decimal.Context(prec=100, rounding=rounding)
    number = decimal.Decimal(value.text).quantize(
        decimal.Decimal(1).scaleb(-scale), context=context
    )
    return format(number, "f")


def _branch_accepts(value: Any, t: OrcSchema) -> bool:
    kind = t.kind
    if isinstance(value, bool):
        return kind == "boolean"
    checks = [
        (int, ("tinyint", "smallint", "int", "bigint")),
        (float, ("float", "double")),
        (str, ("string", "char", "varchar")),
        (bytes, ("binary",)),
        (_Timestamp, ("timestamp", "timestamp with local time zone")),
        (_Date, ("date",)),
        (_Decimal, ("decimal",)),
        (list, ("array",)),
        (dict, ("struct", "map")),
    ]
    return any(isinstance(value, cls) and kind in kinds for cls, kinds in checks)


def render_value(value: Any, t: OrcSchema, exact: bool = False) -> str:
    """Render one pyorc value of ORC type ``t`` (see the module docstring)."""
    if value is None:
        return "null"
    kind = t.kind
    if kind == "boolean":
        return "true" if value else "false"
    if kind in ("tinyint", "smallint", "int", "bigint"):
        return str(value)
    if kind in ("float", "double"):
        return _float(value, kind, exact)
    if kind in ("string", "char", "varchar"):
        return f'"{_escape(value)}"'
    if kind == "binary":
        return "[" + ", ".join(str(b) for b in value) + "]"
    if kind == "date":
        year, month, day = civil_from_days(value.days)
        return f'"{year}-{month:02d}-{day:02d}"'
    if kind.startswith("timestamp"):
        return _timestamp(value)
    if kind == "decimal":
        return _decimal(value, t)
    if kind == "array":
        return "[" + ", ".join(render_value(v, t.children[0], exact) for v in value) + "]"
    if kind == "map":
        key_type, value_type = t.children
        entries = (
            f'{{"key": {render_value(k, key_type, exact)}, '
            f'"value": {render_value(v, value_type, exact)}}}'
            for k, v in value.items()
        )
        return "[" + ", ".join(entries) + "]"
    if kind == "struct":
        fields = (
            f'"{name}": {render_value(value[name], child, exact)}'
            for name, child in zip(t.names, t.children, strict=True)
        )
        return "{" + ", ".join(fields) + "}"
    if kind == "uniontype":
        branch = next((c for c in t.children if _branch_accepts(value, c)), None)
        if branch is None:
            raise TypeError(f"no branch of {t} fits the pyorc value {value!r}")
        return render_value(value, branch, exact)
    raise TypeError(f"cannot render ORC type {t}")
