"""A valid ORC file of one stripe holding very many rows in few bytes (issue 20, item 3).

Uncompressed, no row index, columns ``a: bigint`` (the row number: RLE v2 fixed-delta runs
of 512 values), ``b: boolean`` (null in every other row: a PRESENT stream of ``0xAA`` bytes;
the values are all true) and ``s: string`` (dictionary encoded, every row ``"hello"``). About
25 bytes per 1,000 rows: 2.5 MB for 10**8 rows, whose Arrow arrays take 1.5 GB.
"""

from __future__ import annotations

import numpy as np

from aorc.format._proto import orc_proto_pb2 as pb
from helpers.varints import varint

__all__ = ["long_stripe_file"]

_RUN = 512  # values per RLE v2 run (the most)


def _delta_runs(rows: int, step: int) -> bytes:
    """RLE v2 (signed) fixed-delta runs of ``rows`` values: ``value = row * step``."""
    out = bytearray()
    for start in range(0, rows, _RUN):
        length = min(_RUN, rows - start)
        zig_base = 2 * start * step  # non-negative: zigzag is 2 * value
        zig_delta = 2 * step
        out += bytes([0xC0 | ((length - 1) >> 8), (length - 1) & 0xFF])
        out += varint(zig_base) + varint(zig_delta)
    return bytes(out)


def _zero_runs(rows: int) -> bytes:
    """RLE v2 (unsigned) runs of ``rows`` zeros."""
    full, last = divmod(rows, _RUN)
    out = bytes([0xC1, 0xFF, 0, 0]) * full
    if last:
        out += bytes([0xC0 | ((last - 1) >> 8), (last - 1) & 0xFF, 0, 0])
    return out


def _byte_runs(count: int, value: int) -> bytes:
    """Byte RLE runs of at least ``count`` copies of ``value`` (runs of 130, the last >= 3)."""
    full, last = divmod(count, 130)
    out = bytes([0x7F, value]) * full
    if last:
        out += bytes([max(last, 3) - 3, value])
    return out


def long_stripe_file(rows: int, a_rows: int | None = None) -> bytes:
    """The bytes of the file (see the module docstring); with ``a_rows``, column ``a``'s
    stream holds that many values only (a corrupt file when fewer than ``rows``)."""
    present_bytes = (rows + 7) // 8
    values = (rows + 1) // 2  # rows 0, 2, 4, ... are present
    streams = [
        (1, pb.Stream.DATA, _delta_runs(rows if a_rows is None else a_rows, 1)),
        (2, pb.Stream.PRESENT, _byte_runs(present_bytes, 0xAA)),
        (2, pb.Stream.DATA, _byte_runs((values + 7) // 8, 0xFF)),
        (3, pb.Stream.DATA, _zero_runs(rows)),
        (3, pb.Stream.LENGTH, bytes([0xC0, 0x00, 0x05, 0x00])),  # one length: 5
        (3, pb.Stream.DICTIONARY_DATA, b"hello"),
    ]
    footer = pb.StripeFooter()
    data = bytearray()
    for column, kind, payload in streams:
        footer.streams.add(kind=kind, column=column, length=len(payload))
        data += payload
    footer.columns.add(kind=pb.ColumnEncoding.DIRECT)
    footer.columns.add(kind=pb.ColumnEncoding.DIRECT_V2)
    footer.columns.add(kind=pb.ColumnEncoding.DIRECT)
    footer.columns.add(kind=pb.ColumnEncoding.DICTIONARY_V2, dictionarySize=1)
    stripe_footer = footer.SerializeToString()

    tail = pb.Footer(headerLength=3, contentLength=3 + len(data) + len(stripe_footer),
                     numberOfRows=rows, rowIndexStride=0)
    tail.stripes.add(offset=3, indexLength=0, dataLength=len(data),
                     footerLength=len(stripe_footer), numberOfRows=rows)
    tail.types.add(kind=pb.Type.STRUCT, subtypes=[1, 2, 3], fieldNames=["a", "b", "s"])
    tail.types.add(kind=pb.Type.LONG)
    tail.types.add(kind=pb.Type.BOOLEAN)
    tail.types.add(kind=pb.Type.STRING)
    footer_bytes = tail.SerializeToString()
    postscript = pb.PostScript(footerLength=len(footer_bytes), compression=pb.NONE,
                               version=[0, 12], metadataLength=0, writerVersion=9,
                               magic="ORC").SerializeToString()
    assert len(postscript) < 256
    return b"ORC" + bytes(data) + stripe_footer + footer_bytes + postscript + bytes(
        [len(postscript)])


def expected_columns(start: int, stop: int) -> dict[str, np.ndarray]:
    """The values of rows ``start .. stop - 1`` (``b``: None where null)."""
    rows = np.arange(start, stop, dtype=np.int64)
    return {"a": rows, "b_valid": rows % 2 == 0}
