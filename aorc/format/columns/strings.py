"""String, char, varchar and binary columns.

DIRECT(_V2): DATA holds the values back to back, LENGTH (unsigned integer RLE) their lengths.
DICTIONARY(_V2): DICTIONARY_DATA holds the ``dictionarySize`` distinct values back to back,
LENGTH their lengths, and DATA (unsigned integer RLE) one dictionary index per value. Char
values are returned as stored (ORC writers pad them to the declared length), like ORC C++.
Values are not checked for valid UTF-8, again like ORC C++ and pyarrow.orc.

A dictionary's tables (``dictionarySize`` lengths and offsets, 12 bytes an entry) must fit
in what is left of the stripe's decoding budget (``max_decoded_bytes``, see
:class:`aorc.format.codec.compression.Budget`) before they are allocated, after the LENGTH
stream was found long enough to hold that many lengths. (They are checked, not counted: a
filtered read builds the dictionary once per run of row groups.)
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from aorc.errors import AorcError, UnsupportedFeatureError
from aorc.format._proto import orc_proto_pb2 as pb
from aorc.format.codec.compression import Budget
from aorc.format.codec.dictionary import dictionary_values
from aorc.format.columns.base import (
    INT_RLE_RATIO,
    Buffer,
    Context,
    Placement,
    Slots,
    column_error,
    offsets_from_lengths,
    register,
    wants_dictionary,
)
from aorc.format.types import OrcType, TypeKind, to_arrow_type, type_string

__all__: list[str] = []


@register(TypeKind.STRING, TypeKind.VARCHAR, TypeKind.CHAR, TypeKind.BINARY, TypeKind.GEOMETRY,
          TypeKind.GEOGRAPHY)
def decode_string(t: OrcType, ctx: Context, level: Placement) -> pa.Array:
    """Decode a string, char, varchar or binary column of either encoding."""
    slots = ctx.slots(t, level)
    if ctx.is_dictionary(t):
        return _decode_dictionary(t, ctx, slots)
    array = _decode_direct(t, ctx, slots)
    if wants_dictionary(ctx.opts.dictionary_strings, t):
        return pc.dictionary_encode(array)
    return array


def _blob(t: OrcType, ctx: Context, kind: int, total: int) -> pa.Buffer:
    """The next ``total`` bytes of a stream of concatenated values (from its start, or for
    a stripe decoded in slices from where the previous slice ended)."""
    data: Buffer | None = ctx.raw(t, kind)
    if data is None:
        if total == 0:
            return pa.py_buffer(b"")
        raise column_error(t, kind, f"stream is missing but the lengths add up to {total} bytes")
    offset = ctx.byte_offset(t, kind)
    if len(data) - offset < total:
        raise column_error(t, kind, f"the lengths add up to {total} bytes but the stream "
                                    f"holds {len(data) - offset}")
    if not ctx.sliced:
        return pa.py_buffer(data)
    ctx.consumed(t, kind, offset + total)
    return pa.py_buffer(memoryview(data)[offset:offset + total])


def _decode_direct(t: OrcType, ctx: Context, slots: Slots) -> pa.Array:
    lengths = ctx.lengths(t, pb.Stream.LENGTH, slots.count)
    offsets, total = offsets_from_lengths(t, slots, lengths, "bytes")
    data = _blob(t, ctx, pb.Stream.DATA, total)
    return pa.Array.from_buffers(to_arrow_type(t), slots.length,
                                 [slots.validity(), offsets, data],
                                 null_count=slots.null_count)


#: Bytes of the tables of one dictionary entry: an int64 length and an int32 offset.
_ENTRY_BYTES = 12


def _dictionary(t: OrcType, ctx: Context, size: int) -> pa.Array:
    """The stripe's dictionary of ``size`` entries."""
    ctx.require(t, pb.Stream.LENGTH, size, INT_RLE_RATIO)
    budget = getattr(ctx.streams, "budget", None)
    if not isinstance(budget, Budget):
        limit = ctx.opts.max_decoded_bytes
        budget = Budget(limit, f"max_decoded_bytes={limit} for one stripe")
    try:
        budget.check(size * _ENTRY_BYTES)
    except AorcError as exc:
        raise type(exc)(f"column {t.column_id} ({type_string(t)}): a dictionary of {size} "
                        f"entries: {exc}") from exc
    lengths = ctx.lengths(t, pb.Stream.LENGTH, size)
    offsets, total = offsets_from_lengths(t, Slots(size, None, size), lengths, "dictionary bytes")
    data = _blob(t, ctx, pb.Stream.DICTIONARY_DATA, total)
    return pa.Array.from_buffers(to_arrow_type(t), size, [None, offsets, data], null_count=0)


def _decode_dictionary(t: OrcType, ctx: Context, slots: Slots) -> pa.Array:
    size = ctx.encoding(t).dictionarySize
    indices = ctx.ints(t, pb.Stream.DATA, slots.count, signed=False)
    as_dictionary = wants_dictionary(ctx.opts.dictionary_strings, t)
    if as_dictionary:  # (copied values are checked as they are copied: _values)
        _check_indices(t, indices, size)
    # Entries are read even when no value refers to them, so that damage shows.
    dictionary = ctx.once(("dictionary", t.column_id), lambda: _dictionary(t, ctx, size))
    if not as_dictionary:
        return _values(t, slots, indices, dictionary)
    idx = slots.expand(indices.astype(np.int32, copy=False))
    index_array = pa.Array.from_buffers(pa.int32(), slots.length,
                                        [slots.validity(), pa.py_buffer(idx)],
                                        null_count=slots.null_count)
    return pa.DictionaryArray.from_arrays(index_array, dictionary)


def _values(t: OrcType, slots: Slots, indices: npt.NDArray[np.int64],
            dictionary: pa.Array) -> pa.Array:
    """The column's values copied out of its dictionary (one pass, no index array)."""
    _, dict_offsets, dict_data = dictionary.buffers()
    offsets = np.frombuffer(dict_offsets, np.int32, len(dictionary) + 1)
    out, data, bad = dictionary_values(indices, slots.valid, slots.length, offsets,
                                       dict_data if dict_data is not None else b"")
    if out is None or data is None:
        if bad is None:
            raise UnsupportedFeatureError(
                f"column {t.column_id} ({type_string(t)}): its values add up to more than the "
                "2**31 - 1 bytes in one stripe that Arrow's 32-bit offsets can address")
        raise column_error(t, pb.Stream.DATA, f"dictionary index {bad % 2**64} is out of "
                                              f"range for {len(dictionary)} entries")
    return pa.Array.from_buffers(to_arrow_type(t), slots.length,
                                 [slots.validity(), pa.py_buffer(out), pa.py_buffer(data)],
                                 null_count=slots.null_count)


def _check_indices(t: OrcType, indices: npt.NDArray[np.int64], size: int) -> None:
    if not len(indices):
        return
    # Indices are unsigned: one above 2**63 - 1 comes out negative and is out of range too.
    low, high = int(indices.min()), int(indices.max())
    if low < 0 or high >= size:
        bad = high if low >= 0 else low + 2**64
        raise column_error(t, pb.Stream.DATA,
                           f"dictionary index {bad} is out of range for {size} entries")
