"""Test helpers for the column encoders: decode what they wrote, check row-index positions.

Decoding goes through aorc's column decoders (another engineer's code, tested against the
conformance files and peers), so a round trip checks the encoders against an independent
reading of the format.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
from google.protobuf import text_format

from aorc.format._proto import orc_proto_pb2 as pb
from aorc.format.codec import rle
from aorc.format.codec.compression import decompress_stream
from aorc.format.columns import DecodeOptions, DictStripeStreams, decode_column
from aorc.format.columns.encode import EncodedColumn, EncodedStream, EncodeOptions, encode_column
from aorc.format.stripe import parse_stripe_footer, stream_layout
from aorc.format.tail import NeedBytes, parse_tail
from aorc.format.types import OrcType

K = pb.Stream


def flatten(c: EncodedColumn) -> Iterator[EncodedColumn]:
    """The column and all its descendants, in column-id order."""
    yield c
    for child in c.children:
        yield from flatten(child)


def stream(c: EncodedColumn, kind: int) -> EncodedStream:
    """The column's stream of ``kind``."""
    found = [s for s in c.streams if s.kind == kind]
    assert len(found) == 1, f"column {c.column_id} has {len(found)} streams of kind {kind}"
    return found[0]


def kinds(c: EncodedColumn) -> list[int]:
    """The column's stream kinds in order."""
    return [s.kind for s in c.streams]


def stripe_streams(enc: EncodedColumn, timezone: str | None = "UTC") -> DictStripeStreams:
    """The encoded tree as the decoders' stripe input."""
    cols = list(flatten(enc))
    encodings = [pb.ColumnEncoding() for _ in range(max(c.column_id for c in cols) + 1)]
    data: dict[tuple[int, int], bytes] = {}
    for c in cols:
        encodings[c.column_id] = c.encoding
        for s in c.streams:
            assert (c.column_id, s.kind) not in data, "duplicate stream"
            data[c.column_id, s.kind] = s.data
    return DictStripeStreams(data, encodings, timezone)


def decode(t: OrcType, enc: EncodedColumn, n: int, timezone: str | None = "UTC") -> pa.Array:
    """Decode an encoded column tree with aorc's decoders."""
    return decode_column(t, stripe_streams(enc, timezone), n, DecodeOptions())


def round_trip(t: OrcType, arr: pa.Array, starts: Sequence[int] | npt.NDArray[np.int64] = (0,),
               opts: EncodeOptions | None = None) -> tuple[EncodedColumn, pa.Array]:
    """Encode ``arr`` as ``t`` and decode it back."""
    opts = opts or EncodeOptions()
    enc = encode_column(t, arr, np.asarray(starts, np.int64), opts)
    return enc, decode(t, enc, len(arr), opts.timezone)


def value_starts(arr: pa.Array, starts: Sequence[int] | npt.NDArray[np.int64]
                 ) -> npt.NDArray[np.int64]:
    """Number of non-null values before each slot start."""
    valid = np.asarray(arr.is_valid().to_numpy(zero_copy_only=False), np.bool_)
    before = np.concatenate(([0], np.cumsum(valid)))
    return before[np.asarray(starts, np.int64)]


def group_slices(n: int, starts: Sequence[int] | npt.NDArray[np.int64]) -> list[slice]:
    """Slices of the groups starting at ``starts`` in ``n`` items."""
    s = [int(x) for x in starts] + [n]
    return [slice(a, b) for a, b in zip(s[:-1], s[1:], strict=True)]


@dataclass
class OrcStripe:
    """One stripe of a file written by a peer."""

    num_rows: int
    writer_timezone: str
    encodings: list[pb.ColumnEncoding]
    streams: dict[tuple[int, int], bytes]
    row_index: dict[int, pb.RowIndex]
    blooms: dict[int, pb.BloomFilterIndex]
    stats: list[pb.ColumnStatistics]


def read_orc_stripes(path: Path) -> tuple[OrcType, list[OrcStripe]]:
    """The schema and every stripe of an ORC file, streams decompressed."""
    data = path.read_bytes()
    tail = parse_tail(data, len(data))
    assert not isinstance(tail, NeedBytes)
    metadata = tail.metadata
    out = []
    for i, info in enumerate(tail.stripes):
        footer = parse_stripe_footer(data[info.footer_offset:info.end], tail, info)
        streams, index, blooms = {}, {}, {}
        for s in stream_layout(info, footer):
            raw = bytes(decompress_stream(data[s.offset:s.offset + s.length], tail.compression,
                                          tail.block_size))
            if s.kind == K.ROW_INDEX:
                index[s.column] = pb.RowIndex.FromString(raw)
            elif s.kind == K.BLOOM_FILTER_UTF8:
                blooms[s.column] = pb.BloomFilterIndex.FromString(raw)
            elif s.kind != K.BLOOM_FILTER:  # legacy filters: aorc writes none
                streams[s.column, s.kind] = raw
        stats = list(metadata.stripeStats[i].colStats) if metadata is not None else []
        out.append(OrcStripe(info.num_rows, footer.writerTimezone, list(footer.columns),
                              streams, index, blooms, stats))
    return tail.schema, out


def same_message(a: Any, b: Any, *, double_sums: bool = True) -> bool:
    """Protobuf equality as bytes, ignoring what cannot match ORC Java (see below)."""
    if isinstance(a, pb.ColumnStatistics):
        a, b = _comparable(a, double_sums), _comparable(b, double_sums)
    return bool(a.SerializeToString(deterministic=True) == b.SerializeToString(deterministic=True))


def _comparable(p: pb.ColumnStatistics, double_sums: bool) -> pb.ColumnStatistics:
    """Statistics without what cannot match ORC Java: its list/map statistics hold its batch
    capacity, not element counts (aorc's are checked in test_encode_compound.py; older
    writers wrote none), and the sign of a NaN sum depends on whether Java's JIT compiled the
    loop."""
    out = pb.ColumnStatistics()
    out.CopyFrom(p)
    out.ClearField("collectionStatistics")
    d = out.doubleStatistics
    if out.HasField("doubleStatistics") and d.HasField("sum") and d.sum != d.sum:
        d.sum = float("nan")
    if not double_sums and out.HasField("doubleStatistics"):
        d.ClearField("sum")
    return out


def _show(msg: Any) -> str:
    return text_format.MessageToString(msg, as_one_line=True)


def compare_column(name: str, c: EncodedColumn, java: OrcStripe, *,
                   positions: bool = True, double_sums: bool = True) -> None:
    """Assert an encoded column equals the same column of a peer's stripe.

    Args:
        name: a label for failure messages.
        c: the encoded column.
        java: the peer's stripe.
        positions: compare row-index positions (only meaningful for uncompressed files).
        double_sums: compare double sums (ORC Java adds a repeating batch once).
    """
    cid = c.column_id
    where = f"{name} column {cid}"
    assert same_message(c.encoding, java.encodings[cid]), (
        f"{where}: encoding {_show(c.encoding)} != Java {_show(java.encodings[cid])}")
    theirs = {kind: raw for (col, kind), raw in java.streams.items() if col == cid}
    ours = {s.kind: s.data for s in c.streams}
    assert sorted(ours) == sorted(theirs), f"{where}: streams {sorted(ours)} != {sorted(theirs)}"
    for kind, raw in theirs.items():
        assert ours[kind] == raw, f"{where}: stream {K.Kind.Name(kind)} differs"
    expected = java.stats[cid]
    expected.ClearField("bytesOnDisk")
    if java.row_index:  # without a row index ORC Java's statistics stay empty (a Java bug)
        assert same_message(c.stripe_stats, expected, double_sums=double_sums), (
            f"{where}: stripe stats {_show(c.stripe_stats)} != Java {_show(expected)}")
    index = java.row_index.get(cid)
    entries = list(index.entry) if index is not None else []
    assert len(c.row_group_stats) == len(entries), f"{where}: row group count"
    for g, entry in enumerate(entries):
        if positions:
            got = [p for s in c.streams for p in s.positions[g]]
            assert got == list(entry.positions), f"{where}: row group {g} positions"
        assert same_message(c.row_group_stats[g], entry.statistics, double_sums=double_sums), (
            f"{where}: row group {g} stats {_show(c.row_group_stats[g])} != "
            f"Java {_show(entry.statistics)}")
    blooms = java.blooms.get(cid)
    if blooms is None:
        assert c.bloom_filters is None, f"{where}: bloom filters Java did not write"
        return
    assert c.bloom_filters is not None and len(c.bloom_filters) == len(blooms.bloomFilter)
    for g, (ours_bf, theirs_bf) in enumerate(zip(c.bloom_filters, blooms.bloomFilter,
                                                 strict=True)):
        assert ours_bf.num_hash_functions == theirs_bf.numHashFunctions
        words = np.frombuffer(theirs_bf.utf8bitset, "<u8")
        assert np.array_equal(ours_bf.words, words), f"{where}: row group {g} bloom filter"


Reader = Callable[[bytes, int, list[int]], np.ndarray]


def _rle2(signed: bool) -> Reader:
    return lambda data, n, pos: rle.read_int_rle_v2(data, n, signed, pos[0], pos[1])


def _bool(data: bytes, n: int, pos: list[int]) -> np.ndarray:
    return rle.read_bool_rle(data, n, pos[0], pos[1] * 8 + pos[2])


def _byte(data: bytes, n: int, pos: list[int]) -> np.ndarray:
    return rle.read_byte_rle(data, n, pos[0], pos[1])


READERS: dict[str, Reader] = {
    "signed": _rle2(True),
    "unsigned": _rle2(False),
    "bool": _bool,
    "byte": _byte,
}


def check_positions(s: EncodedStream, reader: Reader | str, total: int,
                    index_starts: Sequence[int] | npt.NDArray[np.int64], probe: int = 50) -> None:
    """Decoding from each recorded position gives the values at that group's start.

    Args:
        s: the stream.
        reader: how to decode it (a key of :data:`READERS` or a function
            ``(data, n, positions) -> values``).
        total: the number of values the stream holds.
        index_starts: index (among the stream's values) of each group's first value.
        probe: how many values to compare per group.
    """
    read = READERS[reader] if isinstance(reader, str) else reader
    full = read(s.data, total, [0, 0, 0])
    assert len(s.positions) == len(index_starts)
    for g, (pos, start) in enumerate(zip(s.positions, index_starts, strict=True)):
        count = min(probe, total - int(start))
        if count <= 0:
            continue
        got = read(s.data, count, list(pos))
        assert np.array_equal(got, full[int(start):int(start) + count]), (
            f"stream {s.kind}: group {g} at {pos} reads {got[:5]} not {full[start:start + 5]}")
