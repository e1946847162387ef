"""Dropping the deleted rows out of a file's decoded columns (no I/O).

:func:`filter_columns` copies each column without the rows a mask drops, column after
column, letting each decoded column go once its copy is made, so that a read holds the
decoded file and one column's copy at a time, not two copies of the file. The copies are
allocated like the decoded columns, with the C library's malloc (:mod:`aorc._allocator`), in
the pages the columns before them freed: with twice the file's rows held at once the heap
grew past malloc's trim threshold and every read faulted fresh pages (as much kernel time as
the decoding); from Arrow's default pool (mimalloc) too.

Columns without nulls of fixed-width types and of strings or binaries are copied run by run
by the kernels of :mod:`aorc.dataset.acid._drop` (deletes drop few rows, so the rows kept form
long runs: one ``memcpy`` each); others by Arrow's filter kernels, column by column (filtering
a whole table takes the mask's indices from every column, several times slower). A chunk
that loses no row is kept as it is, without a copy.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from aorc.dataset.acid import _drop

__all__ = ["drop_rows", "dropped", "filter_columns"]

_OFFSETS = {pa.string(): np.int32, pa.binary(): np.int32, pa.large_string(): np.int64,
            pa.large_binary(): np.int64}


def _fixed_width(t: pa.DataType) -> int | None:
    """The byte width of a fixed-width type's values (not booleans' bits), else ``None``."""
    if (pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_temporal(t)
            or pa.types.is_decimal(t) or pa.types.is_fixed_size_binary(t)):
        bits = t.bit_width
        return bits // 8 if bits % 8 == 0 else None
    return None


def _drop_chunk(arr: pa.Array, gone: np.ndarray, pool: pa.MemoryPool) -> pa.Array:
    """``arr`` without the rows at the sorted positions ``gone`` (some, all within it)."""
    n, k = len(arr), len(gone)
    width = _fixed_width(arr.type)
    offset_type = _OFFSETS.get(arr.type)
    if arr.null_count == 0 and width is not None:
        src = np.frombuffer(arr.buffers()[1], np.uint8, n * width, arr.offset * width)
        out = pa.allocate_buffer((n - k) * width, memory_pool=pool)
        _drop.drop_fixed(src, np.frombuffer(out, np.uint8), width, gone)
        return pa.Array.from_buffers(arr.type, n - k, [None, out], null_count=0)
    if arr.null_count == 0 and offset_type is not None:
        _, offs, data = arr.buffers()
        size = np.dtype(offset_type).itemsize
        offsets = np.frombuffer(offs, offset_type, n + 1, arr.offset * size)
        first, last = int(offsets[0]), int(offsets[-1])
        values = (np.frombuffer(data, np.uint8, last - first, first) if data is not None
                  else np.zeros(0, np.uint8))
        kept = _drop.binary_kept_bytes(offsets, gone)
        out_offsets = pa.allocate_buffer((n - k + 1) * size, memory_pool=pool)
        out_data = pa.allocate_buffer(kept, memory_pool=pool)
        _drop.drop_binary(offsets, values, np.frombuffer(out_offsets, offset_type),
                          np.frombuffer(out_data, np.uint8), gone)
        return pa.Array.from_buffers(arr.type, n - k, [None, out_offsets, out_data],
                                     null_count=0)
    keep = np.ones(n, dtype=bool)
    keep[gone] = False
    return pc.filter(arr, pa.array(keep), memory_pool=pool)


def drop_rows(column: pa.ChunkedArray | pa.Array, gone: np.ndarray,
              pool: pa.MemoryPool | None = None) -> pa.ChunkedArray:
    """A column without the rows at positions ``gone``.

    Args:
        column: the column (its chunks are kept as they are where they lose no row).
        gone: the positions of the rows to drop: sorted, distinct, below ``len(column)``.
        pool: where the copies are allocated (the system allocator by default).

    Returns:
        The column's other rows, in order, chunk by chunk.
    """
    pool = pool or pa.system_memory_pool()
    chunks = column.chunks if isinstance(column, pa.ChunkedArray) else [column]
    out = []
    start = 0
    for arr in chunks:
        n = len(arr)
        lo, hi = np.searchsorted(gone, [start, start + n])
        out.append(arr if hi == lo else _drop_chunk(arr, gone[lo:hi] - start, pool))
        start += n
    return pa.chunked_array(out, column.type)


def dropped(mask: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """The positions (sorted) of the rows a mask does not keep: False or null."""
    if mask.null_count:
        mask = pc.fill_null(mask, False)
    gone = pc.indices_nonzero(pc.invert(mask)).to_numpy()
    return np.asarray(gone, dtype=np.int64)


def filter_columns(columns: list[pa.ChunkedArray], schema: pa.Schema, gone: np.ndarray
                   ) -> pa.Table:
    """The ``columns`` (of ``schema``) without the rows at positions ``gone``, each column
    let go once its copy is made (``columns`` is emptied).

    Args:
        columns: the columns, all of the same length.
        schema: their fields.
        gone: the positions of the rows to drop: sorted, distinct, within the columns.

    Returns:
        The table of the rows kept.
    """
    pool = pa.system_memory_pool()
    out = []
    for i in range(len(columns)):
        out.append(drop_rows(columns[i], gone, pool))
        columns[i] = None
    columns.clear()
    return pa.Table.from_arrays(out, schema=schema)
