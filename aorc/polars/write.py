"""Writing Polars frames as ORC files, batch by batch through aorc's writer.

Types ORC has no equivalent of are converted where the conversion keeps every value:
Categorical and Enum become strings, unsigned integers the next wider signed type (UInt64
stays 64 bits: a value beyond the Int64 range fails), Array becomes a list; Time, Duration,
Null and Object columns raise a :class:`~aorc.errors.SchemaError` naming the column.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import polars as pl
import pyarrow as pa

from aorc.errors import SchemaError
from aorc.io.output import Destination
from aorc.options import WriteOptions
from aorc.sync import open_writer

__all__ = ["write_orc"]

_UNSIGNED = {pl.UInt8: pl.Int16, pl.UInt16: pl.Int32, pl.UInt32: pl.Int64, pl.UInt64: pl.Int64}
_NO_ORC_TYPE = (pl.Time, pl.Duration, pl.Null, pl.Object)


def _orc_dtype(name: str, dtype: Any) -> pl.DataType:
    """The Polars type a column of ``dtype`` is written as."""
    if isinstance(dtype, (pl.Categorical, pl.Enum)):
        return pl.String()
    for unsigned, signed in _UNSIGNED.items():
        if dtype == unsigned:
            return signed()
    if isinstance(dtype, type):
        dtype = dtype()
    if isinstance(dtype, _NO_ORC_TYPE):
        raise SchemaError(f"column {name!r}: ORC has no type for Polars {dtype}")
    if isinstance(dtype, pl.Array):
        return pl.List(_orc_dtype(name, dtype.inner))
    if isinstance(dtype, pl.List):
        return pl.List(_orc_dtype(name, dtype.inner))
    if isinstance(dtype, pl.Struct):
        return pl.Struct({f.name: _orc_dtype(f"{name}.{f.name}", f.dtype)
                          for f in dtype.fields})
    same: pl.DataType = dtype
    return same


def _casts(schema: pl.Schema) -> dict[str, pl.DataType]:
    return {name: target for name, dtype in schema.items()
            if (target := _orc_dtype(name, dtype)) != dtype}


def _arrow(frame: pl.DataFrame, casts: Mapping[str, pl.DataType]) -> pa.Table:
    if casts:
        frame = frame.with_columns([pl.col(n).cast(t, strict=True) for n, t in casts.items()])
    table = frame.to_arrow()
    return table


def _chunks(data: pl.DataFrame | pl.LazyFrame) -> Iterator[pl.DataFrame]:
    if isinstance(data, pl.DataFrame):
        yield data
        return
    collect_batches = getattr(data, "collect_batches", None)
    if collect_batches is not None:
        yield from collect_batches()
    else:
        collected = data.collect()
        assert isinstance(collected, pl.DataFrame)
        yield collected


def write_orc(data: pl.DataFrame | pl.LazyFrame, dest: Destination,
              options: WriteOptions | None = None, *,
              storage_options: Mapping[str, Any] | None = None, **keywords: Any) -> None:
    """Write a Polars DataFrame, or the result of a LazyFrame, as an ORC file.

    A LazyFrame is streamed (``LazyFrame.collect_batches`` where Polars has it): its batches
    are written as they come, so a result larger than memory can be written.

    Args:
        data: the frame.
        dest: a local path or a URL of any store aorc writes to.
        options: an :class:`aorc.WriteOptions` (default: the defaults).
        storage_options: settings of the destination store.
        **keywords: fields of :class:`aorc.WriteOptions` (``compression``, ``stripe_size``,
            ``bloom_filter_columns``, ...), as :func:`aorc.open_writer`.

    Raises:
        TypeError: ``data`` is not a Polars DataFrame or LazyFrame.
        SchemaError: a column of a type ORC cannot hold (Time, Duration, Null, Object), or
            as :func:`aorc.open_writer`.
        StoreError: writing failed (nothing is left at the destination).
    """
    if not isinstance(data, (pl.DataFrame, pl.LazyFrame)):
        raise TypeError(f"write_orc takes a polars DataFrame or LazyFrame, "
                        f"got {type(data).__name__}")
    schema = data.schema if isinstance(data, pl.DataFrame) else data.collect_schema()
    casts = _casts(schema)
    arrow_schema = _arrow(pl.DataFrame(schema=schema), casts).schema
    with open_writer(dest, arrow_schema, options, storage_options=storage_options,
                     **keywords) as writer:
        for chunk in _chunks(data):
            if chunk.height:
                writer.write(_arrow(chunk, casts).cast(arrow_schema))
