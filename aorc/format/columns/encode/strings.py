"""String, char, varchar and binary columns.

Char(n) values are truncated or space-padded to n characters and varchar(n) values truncated
to n characters before anything else, as ORC Java's CharTreeWriter and VarcharTreeWriter do.

Strings are DICTIONARY_V2 encoded when the first row group's distinct values are at most
``dictionary_key_size_threshold`` of its non-null values (ORC Java's early dictionary check;
the ratio is computed in 32-bit floating point as Java does, so 4 distinct values in 5 are
*above* 0.8), else DIRECT_V2. Java takes that decision once per file; pass the same
``dictionary_decisions`` dict to every stripe's :func:`encode_column` to do the same.

- DICTIONARY_V2: DICTIONARY_DATA holds the distinct values sorted by their bytes (ORC Java's
  red-black tree order), LENGTH their lengths and DATA each value's index in that order
  (unsigned RLE v2). Only DATA gets row-index positions.
- DIRECT_V2 (and binary columns always): DATA holds the values back to back, LENGTH their
  lengths; positions in that order.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from aorc.errors import SchemaError
from aorc.format._proto import orc_proto_pb2 as pb
from aorc.format.codec import rle
from aorc.format.codec.bloom import hash_arrow_array
from aorc.format.columns.encode.base import (
    EncodedStream,
    EncodeLevel,
    ValueParts,
    group_bounds,
    group_reduce,
    no_positions,
    positions_list,
    register,
    split_hashes,
)
from aorc.format.columns.encode.integers import boundaries
from aorc.format.columns.encode.statistics import (
    MAX_BYTES_RECORDED,
    BinaryStats,
    StringStats,
)
from aorc.format.types import OrcType, TypeKind, type_string

__all__ = ["adjust_strings", "use_dictionary"]


class _Blob:
    """Values as int64 offsets (from 0) into one bytes object."""

    def __init__(self, arr: pa.Array) -> None:
        n = len(arr)
        large = pa.types.is_large_string(arr.type) or pa.types.is_large_binary(arr.type)
        dtype = np.int64 if large else np.int32
        bufs = arr.buffers()
        self.offsets = np.zeros(n + 1, np.int64)
        #: The values' bytes, a view of the Arrow buffer (not copied).
        self.data = memoryview(b"")
        if n and bufs[1] is not None:
            raw = np.frombuffer(bufs[1], dtype, count=n + 1, offset=arr.offset * dtype().itemsize)
            first, last = int(raw[0]), int(raw[-1])
            self.offsets = raw.astype(np.int64) - first
            if bufs[2] is not None and last > first:
                self.data = memoryview(bufs[2].slice(first, last - first)).cast("B")

    @property
    def lengths(self) -> npt.NDArray[np.int64]:
        """Length of each value."""
        return np.diff(self.offsets)

    def value(self, i: int) -> bytes:
        """Value ``i``."""
        return bytes(self.data[self.offsets[i]:self.offsets[i + 1]])


def adjust_strings(t: OrcType, values: pa.Array) -> pa.Array:
    """Char values padded/truncated and varchar values truncated to the declared length."""
    if t.kind not in (TypeKind.CHAR, TypeKind.VARCHAR) or not t.max_length:
        return values
    if not (pa.types.is_string(values.type) or pa.types.is_large_string(values.type)):
        values = values.cast(pa.string())
    values = pc.utf8_slice_codeunits(values, 0, t.max_length)
    if t.kind == TypeKind.CHAR:
        values = pc.utf8_rpad(values, width=t.max_length, padding=" ")
    return values


def use_dictionary(level: EncodeLevel, values: pa.Array, vstarts: npt.NDArray[np.int64]) -> bool:
    """ORC Java's dictionary decision for a string column (see the module docstring)."""
    cid = level.t.column_id
    if level.decisions is not None and cid in level.decisions:
        return level.decisions[cid]
    threshold = level.opts.dictionary_key_size_threshold
    if threshold <= 0:
        use = False
    else:
        end = int(vstarts[1]) if len(vstarts) > 1 else len(values)
        count = end
        distinct = pc.count_distinct(values.slice(0, end)).as_py() if count else 0
        ratio = np.float32(distinct) / np.float32(count) if count else np.float32(0)
        use = float(ratio) <= threshold
    if level.decisions is not None:
        level.decisions[cid] = use
    return use


@register(TypeKind.STRING, TypeKind.CHAR, TypeKind.VARCHAR)
def encode_string(level: EncodeLevel, values: pa.Array, vstarts: npt.NDArray[np.int64],
                  groups: list[StringStats]) -> ValueParts:
    """Encode a string, char or varchar column's values."""
    try:
        values = adjust_strings(level.t, values)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        t = level.t
        raise SchemaError(f"column {t.column_id} ({type_string(t)}): {exc}") from exc
    if use_dictionary(level, values, vstarts):
        return _encode_dictionary(level, values, vstarts, groups)
    blob = _Blob(values)
    streams = _direct_streams(level, blob, vstarts)
    _string_group_stats(groups, blob, vstarts, None)
    return ValueParts(pb.ColumnEncoding.DIRECT_V2, streams, groups, _hashes(level, values, vstarts))


@register(TypeKind.BINARY)
def encode_binary(level: EncodeLevel, values: pa.Array, vstarts: npt.NDArray[np.int64],
                  groups: list[BinaryStats]) -> ValueParts:
    """Encode a binary column's values."""
    blob = _Blob(values)
    streams = _direct_streams(level, blob, vstarts)
    starts, ends = group_bounds(vstarts, len(values))
    for g, a, b in zip(groups, blob.offsets[starts].tolist(), blob.offsets[ends].tolist(),
                       strict=True):
        g.sum = b - a
    return ValueParts(pb.ColumnEncoding.DIRECT_V2, streams, groups, _hashes(level, values, vstarts))


def _hashes(level: EncodeLevel, values: pa.Array, vstarts: npt.NDArray[np.int64]
            ) -> list[npt.NDArray[np.int64]] | None:
    if not level.bloom:
        return None
    return split_hashes(hash_arrow_array(values, TypeKind.BINARY), vstarts)


def _direct_streams(level: EncodeLevel, blob: _Blob, vstarts: npt.NDArray[np.int64]
                    ) -> list[EncodedStream]:
    bounds = boundaries(level, vstarts)
    data = EncodedStream(pb.Stream.DATA, blob.data, blob.offsets[bounds][:, None].tolist())
    lengths, pos = rle.write_int_rle_v2_with_positions(blob.lengths, False, bounds)
    return [data, EncodedStream(pb.Stream.LENGTH, lengths, positions_list(pos))]


def _encode_dictionary(level: EncodeLevel, values: pa.Array, vstarts: npt.NDArray[np.int64],
                       groups: list[StringStats]) -> ValueParts:
    encoded = pc.dictionary_encode(values) if len(values) else None
    if encoded is None:
        keys = values.slice(0, 0)
        codes = np.zeros(0, np.int64)
    else:
        order = np.asarray(pc.array_sort_indices(encoded.dictionary), np.int64)
        rank = np.empty(len(order), np.int64)
        rank[order] = np.arange(len(order), dtype=np.int64)
        codes = rank[np.asarray(encoded.indices.to_numpy(zero_copy_only=False), np.int64)]
        keys = encoded.dictionary.take(pa.array(order))
    blob = _Blob(keys)
    data, pos = rle.write_int_rle_v2_with_positions(codes, False, boundaries(level, vstarts))
    streams = [
        EncodedStream(pb.Stream.DATA, data, positions_list(pos)),
        EncodedStream(pb.Stream.DICTIONARY_DATA, blob.data, no_positions(level)),
        EncodedStream(pb.Stream.LENGTH, rle.write_int_rle_v2(blob.lengths, False),
                      no_positions(level)),
    ]
    if _has_long(blob):
        _string_group_stats(groups, _Blob(values), vstarts, None)
    else:
        _string_group_stats(groups, blob, vstarts, codes)
    hashes = None
    if level.bloom:
        hashes = split_hashes(hash_arrow_array(keys, TypeKind.BINARY)[codes], vstarts)
    return ValueParts(pb.ColumnEncoding.DICTIONARY_V2, streams, groups, hashes,
                      dictionary_size=len(keys))


def _has_long(blob: _Blob) -> bool:
    return bool(len(blob.offsets) > 1 and blob.lengths.max() > MAX_BYTES_RECORDED)


def _string_group_stats(groups: list[StringStats], blob: _Blob, vstarts: npt.NDArray[np.int64],
                        codes: npt.NDArray[np.int64] | None) -> None:
    """Fill each group's extremes and total length.

    ``blob`` holds the values themselves (``codes is None``) or the sorted dictionary, with
    no value over 1024 bytes, that ``codes`` index.
    """
    lengths = blob.lengths if codes is None else blob.lengths[codes]
    starts, ends = group_bounds(vstarts, len(lengths))
    total = np.concatenate(([0], np.cumsum(lengths)))
    longest, _ = group_reduce(np.maximum, lengths, starts, ends)
    if codes is not None:
        low, _ = group_reduce(np.minimum, codes, starts, ends)
        high, _ = group_reduce(np.maximum, codes, starts, ends)
    else:  # the extremes' indexes, compared in C without the GIL
        low, high = rle.group_extremes(blob.offsets, blob.data, starts, ends)
    for i, g in enumerate(groups):
        a, b = int(starts[i]), int(ends[i])
        if a == b:
            continue
        if codes is None and longest[i] > MAX_BYTES_RECORDED:
            for j in range(a, b):  # rare: Java's truncated bounds depend on the value order
                g.update(blob.value(j))
            continue
        g.set_range(blob.value(int(low[i])), blob.value(int(high[i])))
        g.sum = int(total[b] - total[a])
