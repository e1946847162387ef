"""Arrow types ORC cannot hold, and the cast that makes a column of one writable.

:func:`unwritable_message` says which column could not be written and how to cast it:
pyarrow.orc refuses the same types with ``Unknown or unsupported Arrow type`` and no way out;
the casts named here are ones ``pyarrow.compute.cast`` performs (``time64[us]`` to
``int64``: the microseconds since midnight, as Spark's ORC and Parquet readers keep a time
of day; or to ``string``: ``"06:30:00"``).
"""

from __future__ import annotations

import pyarrow as pa

from aorc.errors import SchemaError

__all__ = ["UnwritableTypeError", "cast_hint", "unwritable_message"]


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


class UnwritableTypeError(SchemaError):
    """A column of an Arrow type ORC cannot hold (a :class:`~aorc.errors.SchemaError`);
    the message names the column (once known) and the cast that works.

    Attributes:
        dt: the type.
        column: the column's dotted path (``""`` until known).
        reason: why, when there is more to say than the type.
    """

    def __init__(self, dt: pa.DataType, column: str = "", reason: str = "") -> None:
        self.dt, self.column, self.reason = dt, column, reason
        super().__init__(unwritable_message(column, dt, reason) if column else
                         f"ORC cannot hold Arrow type {dt}; {cast_hint(dt)}")

    def inside(self, name: str) -> UnwritableTypeError:
        """The same error for the column ``name`` holding this one's."""
        return UnwritableTypeError(self.dt, f"{name}.{self.column}" if self.column else name,
                                   self.reason)
