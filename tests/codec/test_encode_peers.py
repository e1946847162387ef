"""aorc's stream encoders against the streams and row indexes other writers put in files.

- Conformance files (Apache ORC's examples, mostly written by ORC Java): every stream is
  decoded with the reference decoders and encoded again; the bytes must come back the same.
  The byte, boolean, RLE v1 and varint encoders have not changed since Hive, so every file
  counts for them. RLE v2's choices changed in early releases (ORC-143 and fixes made before
  ORC became its own project), so for RLE v2 only files by ORC Java's own releases (writer
  version 6 and up) and by ORC C++ (a port of the Java encoder) count.
- Files pyarrow writes (ORC C++): streams rebuilt from the Arrow values, and the row-index
  positions recorded at each row group, must match.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.orc as pa_orc
import pytest
from encode_reference import (
    OrcFile,
    byte_rle_run,
    decode_all,
    decode_bools,
    decode_varint128,
    int128_words,
    read_orc,
    rle_v1_run,
    rle_v2_run,
)

from aorc.format._proto import orc_proto_pb2 as pb
from aorc.format.codec import _encode as enc

CONFORMANCE = Path(__file__).resolve().parents[2] / ".." / "shared" / "orc-conformance"
T, S, E = pb.Type, pb.Stream, pb.ColumnEncoding
INT_KINDS = {T.SHORT, T.INT, T.LONG, T.DATE}
STRING_KINDS = {T.STRING, T.VARCHAR, T.CHAR, T.BINARY}
MAX_STRIPES = 30  # demo-11-zlib has 385 small stripes; the first ones are plenty


def _codecs(t: pb.Type, encoding: pb.ColumnEncoding) -> list[tuple[int, tuple]]:
    """(stream kind, codec) of each run-length or varint stream of a column."""
    v2 = encoding.kind in (E.DIRECT_V2, E.DICTIONARY_V2)
    unsigned_ints, signed_ints = ("int", False, v2), ("int", True, v2)
    out: list[tuple[int, tuple]] = [(S.PRESENT, ("bool",))]
    if t.kind == T.BOOLEAN:
        out.append((S.DATA, ("bool",)))
    elif t.kind in (T.BYTE, T.UNION):
        out.append((S.DATA, ("byte",)))
    elif t.kind in INT_KINDS:
        out.append((S.DATA, signed_ints))
    elif t.kind in STRING_KINDS:
        out.append((S.LENGTH, unsigned_ints))
        if encoding.kind in (E.DICTIONARY, E.DICTIONARY_V2):
            out.append((S.DATA, unsigned_ints))
    elif t.kind == T.TIMESTAMP:
        out += [(S.DATA, signed_ints), (S.SECONDARY, unsigned_ints)]
    elif t.kind == T.DECIMAL:
        out += [(S.DATA, ("varint128",)), (S.SECONDARY, signed_ints)]
    elif t.kind in (T.LIST, T.MAP):
        out.append((S.LENGTH, unsigned_ints))
    return out


def _reencode(data: bytes, codec: tuple) -> bytes:
    if codec[0] == "bool":
        return enc.write_bool_rle(np.array(decode_bools(data), dtype=bool))
    if codec[0] == "byte":
        return enc.write_byte_rle(np.array(decode_all(data, byte_rle_run), dtype=np.int8))
    if codec[0] == "varint128":
        return enc.write_varint128(int128_words(decode_varint128(data)))
    _, signed, v2 = codec
    if v2:
        values = np.array(decode_all(data, rle_v2_run, signed), dtype=np.int64)
        return enc.write_int_rle_v2(values, signed)
    values = np.array(decode_all(data, rle_v1_run, signed), dtype=np.int64)
    return enc.write_int_rle_v1(values, signed)


def _current_rle_v2(f: OrcFile) -> bool:
    """Written by an encoder that makes today's RLE v2 choices (ORC Java 1.x+, ORC C++)."""
    return f.footer.writer == 1 or (f.footer.writer == 0 and f.postscript.writerVersion >= 6)


def _conformance_files() -> list[Path]:
    folder = CONFORMANCE / "files"
    return sorted(p for p in folder.glob("*.orc") if p.stat().st_size) if folder.is_dir() else []


@pytest.mark.skipif(not _conformance_files(), reason="conformance files not found")
@pytest.mark.parametrize("path", _conformance_files(), ids=lambda p: p.name)
def test_conformance_streams_encode_back_to_the_same_bytes(path: Path) -> None:
    try:
        f = read_orc(path)
    except NotImplementedError as exc:  # LZO, LZ4
        pytest.skip(str(exc))
    compared = 0
    for stripe in f.stripes[:MAX_STRIPES]:
        for column, encoding in enumerate(stripe.footer.columns[: len(f.footer.types)]):
            for kind, codec in _codecs(f.footer.types[column], encoding):
                stream = stripe.streams.get((column, kind))
                if stream is None or (codec[0] == "int" and codec[2] and not _current_rle_v2(f)):
                    continue
                assert _reencode(stream.data, codec) == stream.data, (column, kind, codec)
                compared += 1
    if not compared:
        pytest.skip("no stream to compare")


def test_reference_decoder_agrees_with_pyarrow() -> None:
    """The reference decoder that the re-encoding test relies on reads what pyarrow reads."""
    path = CONFORMANCE / "files" / "TestOrcFile.testPredicatePushdown.orc"
    if not path.exists():
        pytest.skip("conformance files not found")
    f = read_orc(path)
    data = f.stripes[0].streams[(1, S.DATA)].data
    expected = pa_orc.read_table(path, columns=["int1"]).column(0).to_pylist()
    assert decode_all(data, rle_v2_run, True) == expected


# ---------------------------------------------------------------------------------------
# files written by pyarrow (ORC C++)

ROWS, STRIDE = 40_321, 1000


def _table() -> pa.Table:
    rng = np.random.default_rng(11)
    nulls = rng.random(ROWS) < 0.15
    runs = np.repeat(rng.integers(-5, 5, ROWS // 7 + 1), 7)[:ROWS]
    runs[rng.random(ROWS) < 0.02] = 2**40
    words = rng.integers(-(2**62), 2**62, (ROWS, 2))
    ts = rng.integers(1_400_000_000, 1_800_000_000, ROWS) * 10**9
    ts += rng.integers(0, 10**9, ROWS) // 10 ** rng.integers(0, 10, ROWS)
    return pa.table(
        {
            "i64": pa.array(
                rng.integers(-(2**40), 2**40, ROWS) >> rng.integers(0, 40, ROWS), mask=nulls
            ),
            "runs": pa.array(runs),
            "sorted": pa.array(np.cumsum(rng.integers(0, 9, ROWS))),
            "flag": pa.array(rng.random(ROWS) < 0.3, mask=np.roll(nulls, 3)),
            "tiny": pa.array(
                np.repeat(rng.integers(-128, 128, ROWS // 3 + 1), 3)[:ROWS], pa.int8()
            ),
            "text": pa.array(
                [("x" * int(k)) for k in rng.integers(0, 30, ROWS)], mask=np.roll(nulls, 5)
            ),
            "ts": pa.array(ts, pa.timestamp("ns")),
            "d38": pa.Array.from_buffers(
                pa.decimal128(38, 6), ROWS, [None, pa.py_buffer(words.tobytes())]
            ),
            "d10": _decimals(pa.decimal128(10, 2), rng.integers(-(10**9), 10**9, ROWS)),
        }
    )


def _decimals(t: pa.Decimal128Type, unscaled: np.ndarray) -> pa.Array:
    words = np.stack([unscaled, unscaled >> 63], axis=1)
    return pa.Array.from_buffers(t, len(unscaled), [None, pa.py_buffer(words.tobytes())])


def _value_bounds(valid: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Index of the first non-null value at or after each row boundary."""
    before = np.concatenate([[0], np.cumsum(valid)])
    return before[rows]


def _expected_streams(col: pa.ChunkedArray, valid: np.ndarray, rows: np.ndarray):
    """(stream kind, bytes, positions per row group) of a column, rebuilt by aorc."""
    arr = col.combine_chunks()
    values = arr.drop_null()
    vb = _value_bounds(valid, rows)
    t = arr.type
    if pa.types.is_boolean(t):
        return [(S.DATA, *enc.write_bool_rle_with_positions(values.to_numpy(False), vb))]
    if pa.types.is_int8(t):
        return [(S.DATA, *enc.write_byte_rle_with_positions(values.to_numpy(), vb))]
    if pa.types.is_integer(t):
        return [(S.DATA, *enc.write_int_rle_v2_with_positions(values.to_numpy(), True, vb))]
    if pa.types.is_string(t):
        lengths = pa.compute.utf8_length(values).to_numpy().astype(np.int64)
        starts = np.concatenate([[0], np.cumsum(lengths)])[vb].reshape(-1, 1)
        data = b"".join(s.encode() for s in values.to_pylist())
        return [
            (S.DATA, data, starts),
            (S.LENGTH, *enc.write_int_rle_v2_with_positions(lengths, False, vb)),
        ]
    if pa.types.is_timestamp(t):
        nanos = values.cast(pa.int64()).to_numpy() % 10**9
        secs = values.cast(pa.int64()).to_numpy() // 10**9 - 1_420_070_400  # since 2015
        return [
            (S.DATA, *enc.write_int_rle_v2_with_positions(secs, True, vb)),
            (S.SECONDARY, *enc.write_int_rle_v2_with_positions(enc.encode_nanos(nanos), False, vb)),
        ]
    words = np.frombuffer(values.buffers()[1], np.uint64).reshape(-1, 2)[: len(values)]
    if t.precision > 18:
        data = enc.write_varint128_with_positions(words, vb)
    else:
        data = enc.write_varints_with_positions(words[:, 0].view(np.int64), True, vb)
    scales = np.full(len(values), t.scale, np.int64)
    return [(S.DATA, *data), (S.SECONDARY, *enc.write_int_rle_v2_with_positions(scales, True, vb))]


@pytest.fixture(scope="module")
def table() -> pa.Table:
    return _table()


@pytest.mark.parametrize("compression", ["uncompressed", "zlib"])
def test_pyarrow_streams_and_row_index_positions(table, tmp_path, compression) -> None:
    path = tmp_path / "peer.orc"
    pa_orc.write_table(
        table,
        path,
        compression=compression,
        compression_block_size=65536,
        row_index_stride=STRIDE,
        stripe_size=1 << 30,
    )
    f = read_orc(path)
    (stripe,) = f.stripes
    rows = np.arange(0, ROWS, STRIDE)
    for column, name in enumerate(table.column_names, start=1):
        col = table.column(name)
        valid = ~np.asarray(col.is_null().to_numpy(zero_copy_only=False))
        expected = _expected_streams(col, valid, rows)
        if not valid.all():
            present = enc.write_bool_rle_with_positions(valid, rows)
            expected.insert(0, (S.PRESENT, *present))
        want_positions = [[] for _ in rows]
        for kind, data, positions in expected:
            stream = stripe.streams[(column, kind)]
            assert stream.data == data, (name, kind)
            for entry, pos in zip(want_positions, positions.tolist(), strict=True):
                entry.extend(pos)
        got = [list(e.positions) for e in stripe.row_index[column].entry]
        if f.compressed:
            layout = [(kind, positions.shape[1]) for kind, _, positions in expected]
            got = [_uncompressed(stripe, column, layout, g) for g in got]
        assert got == want_positions, name


def _uncompressed(stripe, column: int, layout: list[tuple[int, int]], positions: list[int]):
    """Compressed streams' (chunk, offset inside chunk, ...) as (uncompressed offset, ...).

    ``layout`` is each stream's (kind, number of uncompressed positions).
    """
    out, i = [], 0
    for kind, width in layout:
        stream = stripe.streams[(column, kind)]
        out.append(stream.uncompressed_offset(positions[i], positions[i + 1]))
        out.extend(positions[i + 2 : i + 1 + width])
        i += width + 1
    assert i == len(positions)
    return out
