"""File assembly: header, stripes, Metadata, Footer and PostScript, read by three readers."""

from __future__ import annotations

import io

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.orc as po
import pyorc
import pytest

import aorc
from aorc.errors import AorcError
from aorc.format._proto import orc_proto_pb2 as pb
from aorc.format.codec.compression import CompressionKind
from aorc.format.columns.encode import EncodeOptions, encode_column
from aorc.format.tail import FileTail, parse_tail
from aorc.format.types import OrcType, from_arrow_schema, type_string
from aorc.write.file import WRITER_CODE, FileAssembler
from aorc.write.stripe import EncodedStripe, assemble_stripe


def part(seed: int, n: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    return pa.table({
        "n": pa.array(rng.integers(-10**6, 10**6, n), pa.int64()),
        "s": pa.array([None if i % 5 == 0 else f"s{seed}-{i % 17}" for i in range(n)]),
        "d": pa.array(rng.random(n)),
    })


def stripe_of(table: pa.Table, schema: OrcType, opts: EncodeOptions) -> EncodedStripe:
    root = pa.StructArray.from_arrays([c.combine_chunks() for c in table.columns],
                                      fields=list(table.schema))
    starts = np.arange(0, len(table), opts.row_index_stride, dtype=np.int64)
    encoded = encode_column(schema, root, starts, opts)
    return assemble_stripe(encoded, len(table), len(starts), opts)


def build_file(parts: list[pa.Table], opts: EncodeOptions,
               metadata: dict[str, bytes] | None = None) -> tuple[bytes, list[EncodedStripe]]:
    schema = from_arrow_schema(parts[0].schema)
    assembler = FileAssembler(schema, opts, metadata)
    out = [assembler.header()]
    stripes = [stripe_of(t, schema, opts) for t in parts]
    for stripe in stripes:
        out.append(assembler.add_stripe(stripe))
    out.append(assembler.finish())
    data = b"".join(out)
    assert assembler.position == len(data)
    return data, stripes


def tail_of(data: bytes) -> FileTail:
    tail = parse_tail(data, len(data))
    assert isinstance(tail, FileTail)
    return tail


WRITABLE = [CompressionKind.NONE, CompressionKind.ZLIB, CompressionKind.SNAPPY,
            CompressionKind.LZ4, CompressionKind.ZSTD]


@pytest.mark.parametrize("kind", WRITABLE, ids=lambda k: k.name)
def test_file_is_read_by_every_reader(kind: CompressionKind) -> None:
    parts = [part(1, 3000), part(2, 1500), part(3, 10)]
    opts = EncodeOptions(compression=kind, compression_block_size=4096, row_index_stride=1000)
    data, _ = build_file(parts, opts, {"k": b"v\x00"})
    expected = pa.concat_tables(parts)
    assert po.ORCFile(io.BytesIO(data)).read().equals(expected)
    reader = pyorc.Reader(io.BytesIO(data))
    assert len(reader) == len(expected)
    assert reader.num_of_stripes == 3
    assert reader.user_metadata == {"k": b"v\x00"}
    rows = [tuple(r.values()) for r in expected.to_pylist()]
    assert [tuple(r) for r in reader] == rows


def test_tail_fields() -> None:
    parts = [part(4, 2000), part(5, 1234)]
    opts = EncodeOptions(compression=CompressionKind.ZSTD, compression_block_size=10_000,
                        row_index_stride=1000)
    data, stripes = build_file(parts, opts, {"a": b"1", "b": b""})
    tail = tail_of(data)
    assert data[:3] == b"ORC"
    assert tail.version == (0, 12)
    assert tail.writer == WRITER_CODE
    assert tail.writer_version == 6
    assert tail.software_version == f"aorc {aorc.__version__}"
    assert tail.calendar == pb.PROLEPTIC_GREGORIAN
    assert tail.compression is CompressionKind.ZSTD
    assert tail.block_size == 10_000
    assert tail.postscript.HasField("compressionBlockSize")
    assert tail.row_index_stride == 1000
    assert tail.num_rows == 3234
    assert tail.user_metadata == {"a": b"1", "b": b""}
    assert type_string(tail.schema) == "struct<n:bigint,s:string,d:double>"
    assert tail.footer.headerLength == 3
    # stripes follow each other from the header on; the content ends where the last one does
    offset = 3
    for info, stripe in zip(tail.stripes, stripes, strict=True):
        assert (info.offset, info.num_rows) == (offset, stripe.num_rows)
        assert info.length == len(stripe.data)
        offset += info.length
    assert tail.content_length == offset
    assert tail.tail_length == len(data) - offset
    # stripe statistics are in the Metadata, in stripe order
    assert tail.metadata is not None
    assert [list(s.colStats) for s in tail.metadata.stripeStats] == [s.column_stats
                                                                     for s in stripes]


def test_file_statistics_are_merged_from_the_stripes() -> None:
    parts = [part(6, 2500), part(7, 700), part(8, 3100)]
    opts = EncodeOptions(compression=CompressionKind.ZLIB, row_index_stride=1000)
    data, stripes = build_file(parts, opts)
    stats = tail_of(data).footer.statistics
    table = pa.concat_tables(parts)
    assert stats[0].numberOfValues == len(table)
    n = table.column("n")
    assert stats[1].numberOfValues == len(table)
    assert stats[1].intStatistics.minimum == pc.min(n).as_py()
    assert stats[1].intStatistics.maximum == pc.max(n).as_py()
    assert stats[1].intStatistics.sum == pc.sum(n).as_py()
    s = table.column("s")
    assert stats[2].numberOfValues == len(s) - s.null_count
    assert stats[2].hasNull
    assert stats[2].stringStatistics.minimum == pc.min(s).as_py()
    assert stats[2].stringStatistics.maximum == pc.max(s).as_py()
    assert stats[2].stringStatistics.sum == sum(len(v) for v in s.to_pylist() if v)
    d = table.column("d")
    assert stats[3].doubleStatistics.minimum == pc.min(d).as_py()
    assert stats[3].doubleStatistics.maximum == pc.max(d).as_py()
    assert stats[3].doubleStatistics.sum == pytest.approx(pc.sum(d).as_py())
    for cid in range(4):
        assert stats[cid].bytesOnDisk == sum(st.column_stats[cid].bytesOnDisk for st in stripes)
    # pyarrow (ORC C++) reads the same statistics
    assert po.ORCFile(io.BytesIO(data)).nrows == len(table)


def test_empty_file() -> None:
    schema = from_arrow_schema(part(0, 10).schema)
    assembler = FileAssembler(schema, EncodeOptions(compression=CompressionKind.ZLIB))
    data = assembler.header() + assembler.finish()
    tail = tail_of(data)
    assert tail.num_rows == 0
    assert tail.stripes == []
    assert [s.numberOfValues for s in tail.footer.statistics] == [0, 0, 0, 0]
    assert tail.metadata is None or list(tail.metadata.stripeStats) == []
    table = po.ORCFile(io.BytesIO(data)).read()
    assert table.num_rows == 0
    assert table.schema.names == ["n", "s", "d"]
    assert len(pyorc.Reader(io.BytesIO(data))) == 0


def test_uncompressed_file_records_no_block_size() -> None:
    data, _ = build_file([part(9, 100)], EncodeOptions(compression=CompressionKind.NONE))
    tail = tail_of(data)
    assert tail.compression is CompressionKind.NONE
    assert not tail.postscript.HasField("compressionBlockSize")
    assert po.ORCFile(io.BytesIO(data)).read().equals(part(9, 100))


def test_misuse_is_an_internal_error() -> None:
    schema = from_arrow_schema(part(0, 10).schema)
    opts = EncodeOptions()
    assembler = FileAssembler(schema, opts)
    stripe = stripe_of(part(0, 10), schema, opts)
    with pytest.raises(AorcError):
        assembler.add_stripe(stripe)  # before the header
    assembler.header()
    with pytest.raises(AorcError):
        assembler.header()
    other = from_arrow_schema(pa.schema([("x", pa.int32())]))
    with pytest.raises(AorcError, match="statistics of"):
        small = FileAssembler(other, opts)
        small.header()
        small.add_stripe(stripe)
    assembler.finish()
    with pytest.raises(AorcError):
        assembler.finish()
