"""Arrow types ORC cannot hold, and the cast that makes a column of one writable.

:func:`unwritable_message` says which column could not be written and how to cast it:
pyarrow.orc refuses the same types with ``Unknown or unsupported Arrow type`` and no way out;
the casts named here are ones ``pyarrow.compute.cast`` performs (``time64[us]`` to
``int64``: the microseconds since midnight, as Spark's ORC and Parquet readers keep a time
of day; or to ``string``: ``"06:30:00"``).
"""

from __future__ import annotations

import pyarrow as pa

from aorc.errors import UnwritableTypeError

__all__ = ["UnwritableTypeError", "cast_hint", "unwritable", "unwritable_inside",
           "unwritable_message"]


_UNITS = {"s": "seconds", "ms": "milliseconds", "us": "microseconds", "ns": "nanoseconds"}


def cast_hint(dt: pa.DataType, column: str = "col") -> str:
    """The cast (``pyarrow.compute.cast``) that makes values of ``dt`` writable as ORC."""
    top = column.split(".")[0]

    def cast(target: str) -> str:
        if top != column:
            return f"cast {top!r} to its type with {target} at {column!r}"
        return (f"table = table.set_column(table.schema.get_field_index({top!r}), {top!r}, "
                f"table[{top!r}].cast({target}))")

    if pa.types.is_time(dt):
        ints = "int32" if pa.types.is_time32(dt) else "int64"
        return (f"cast it to pa.{ints}() (the {_UNITS[dt.unit]} since midnight) or to "
                f"pa.string() (06:30:00.000000), e.g. {cast(f'pa.{ints}()')}")
    if pa.types.is_duration(dt):
        return (f"cast it to pa.int64() (a count of {_UNITS[dt.unit]}), e.g. "
                f"{cast('pa.int64()')}")
    if pa.types.is_interval(dt):
        return "write it as a string, or as a struct of months, days and nanoseconds"
    if pa.types.is_null(dt):
        return (f"give it the type its values will have (ORC has no null type), e.g. "
                f"pa.string(): {cast('pa.string()')}")
    if pa.types.is_decimal(dt):
        return "cast it to pa.decimal128(38, scale) if its values fit, else to pa.string()"
    if isinstance(dt, pa.ExtensionType):
        return (f"cast it to its storage type, {dt.storage_type}: "
                f"{cast(repr(dt.storage_type))}")
    if pa.types.is_run_end_encoded(dt):
        return f"decode it first (pyarrow.compute.run_end_decode) to {dt.value_type}"
    return "cast it to a type ORC holds (integers, floats, strings, binary, dates, timestamps)"


def unwritable_message(column: str, dt: pa.DataType, reason: str = "") -> str:
    """What to say when the column ``column`` of type ``dt`` cannot be written as ORC."""
    why = f": {reason}" if reason else ""
    return (f"column {column!r}: ORC cannot hold Arrow type {dt}{why}; "
            f"{cast_hint(dt, column)}")


def unwritable(dt: pa.DataType, column: str = "", reason: str = "") -> UnwritableTypeError:
    """The :class:`~aorc.errors.UnwritableTypeError` for a column of type ``dt`` at the dotted
    path ``column`` (``""`` until known)."""
    message = (unwritable_message(column, dt, reason) if column else
               f"ORC cannot hold Arrow type {dt}; {cast_hint(dt)}")
    return UnwritableTypeError(message, dt=dt, column=column, reason=reason)


def unwritable_inside(exc: UnwritableTypeError, name: str) -> UnwritableTypeError:
    """The same error as ``exc`` for the column ``name`` holding the one ``exc`` names."""
    assert isinstance(exc.dt, pa.DataType)
    return unwritable(exc.dt, f"{name}.{exc.column}" if exc.column else name, exc.reason)
