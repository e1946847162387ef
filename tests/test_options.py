"""``aorc.WriteOptions``: one typed, frozen options object with one set of defaults, taken by
every writing entry point, with keyword options overriding its fields. Files are checked with
pyarrow.orc and pyorc."""

from __future__ import annotations

import dataclasses
import pathlib
import pickle
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.orc as po
import pyorc
import pytest
from helpers.cli import run

import aorc
from aorc.errors import SchemaError
from aorc.format._proto import orc_proto_pb2 as pb
from aorc.format.codec.compression import (
    CODECS,
    DEFAULT_BLOCK_SIZE,
    CompressionKind,
    compress_stream,
    decompress_stream,
)
from aorc.format.columns.encode import EncodeOptions
from aorc.format.types import from_arrow_schema
from aorc.options import WriteOptions


def table(n: int = 3000) -> pa.Table:
    return pa.table({"a": pa.array(range(n), pa.int64()),
                     "s": pa.array([f"v{i % 17}" for i in range(n)]),
                     "t": pa.array([{"x": i} for i in range(n)])})


def compression_of(path: pathlib.Path) -> str:
    return str(po.ORCFile(str(path)).compression)


def test_one_set_of_defaults() -> None:
    opts = WriteOptions()
    assert opts.compression == "zstd"  # the writer's public default, everywhere
    resolved = opts.resolve(from_arrow_schema(table().schema))
    bare = EncodeOptions()
    for f in dataclasses.fields(EncodeOptions):
        if f.name != "threads":
            assert getattr(resolved, f.name) == getattr(bare, f.name), f.name
    assert bare.compression is CompressionKind.ZSTD
    assert aorc.write.writer.DEFAULT_OPTIONS["compression"] == "zstd"


@pytest.mark.parametrize(("options", "message"), [
    ({"compression": "gzip"}, "compression must be one of"),
    ({"compression": CompressionKind.LZO}, "cannot write LZO"),
    ({"compression_block_size": 0}, "compression_block_size must be between"),
    ({"stripe_size": True}, "must be an integer"),
    ({"row_index_stride": 999}, "at least 1000"),
    ({"bloom_filter_fpp": 1}, "bloom_filter_fpp"),
    ({"bloom_filter_columns": "a"}, "list of column names"),
    ({"metadata": {"k": 1}}, "metadata value"),
    ({"timezone": "Mars/Olympus_Mons"}, "unknown time zone"),
    ({"use_threads": 0}, "use_threads must be at least 1"),
    ({"use_threads": 1.5}, "use_threads must be an integer"),
    ({"compression_level": 0}, "compression_level must be between 1 and 22"),
    ({"compression_level": 23}, "compression_level must be between 1 and 22"),
    ({"compression": "zlib", "compression_level": 10}, "between 0 and 9"),
    ({"compression_level": "fast"}, "compression_level must be an integer"),
])
def test_checked_on_construction(options: dict[str, Any], message: str) -> None:
    with pytest.raises(SchemaError, match=message):
        WriteOptions(**options)
    with pytest.raises(SchemaError, match=message):
        WriteOptions().replace(**options)


def test_normalised_frozen_and_picklable() -> None:
    opts = WriteOptions(compression=None, bloom_filter_columns=["a", "t.x"],
                        metadata={"k": "v"}, use_threads=2)
    assert opts.compression == "none" and opts.compression_kind is CompressionKind.NONE
    assert WriteOptions(compression="UNCOMPRESSED").compression == "none"
    assert WriteOptions(compression=CompressionKind.LZ4).compression == "lz4"
    assert opts.bloom_filter_columns == ("a", "t.x")
    assert opts.metadata == {"k": b"v"}
    assert opts.threads == 2
    with pytest.raises(dataclasses.FrozenInstanceError):
        opts.stripe_size = 5  # type: ignore[misc]
    with pytest.raises(TypeError):
        opts.metadata["x"] = b"y"  # type: ignore[index]
    again = pickle.loads(pickle.dumps(opts))
    assert again == opts and again.metadata == {"k": b"v"}


def test_create_merges_and_names_the_caller() -> None:
    base = WriteOptions(compression="zlib", stripe_size=1 << 20)
    merged = WriteOptions.create(base, {"compression": "none"})
    assert (merged.compression, merged.stripe_size) == ("none", 1 << 20)
    assert WriteOptions.create(base, {}) is base
    with pytest.raises(SchemaError, match=r"RollingSink\(\) got an unexpected keyword .*'nope'"):
        WriteOptions.create(None, {"nope": 1}, caller="RollingSink")
    with pytest.raises(SchemaError, match="must be an aorc.WriteOptions"):
        WriteOptions.create({"compression": "zlib"}, {})  # type: ignore[arg-type]


async def test_compression_level_sets_every_stream(tmp_path: pathlib.Path) -> None:
    """With ``compression_level`` every chunk of the file is the codec's output at that level
    (ORC Java's per-stream levels otherwise); pyarrow.orc reads the file back."""
    import zstandard

    from aorc.write.stripe import compress, stream_level

    assert WriteOptions(compression="snappy", compression_level=99).compression_level == 99
    rng = np.random.default_rng(7)
    payload = rng.integers(0, 16, 300_000, dtype=np.uint8).astype("S1").tobytes()
    for level in (1, 5):
        opts = WriteOptions(compression_level=level).resolve(from_arrow_schema(table().schema))
        assert stream_level(opts, pb.Stream.DATA) == stream_level(opts, None) == level
        got = compress(payload, opts, pb.Stream.DATA)
        assert got == compress_stream(payload, CompressionKind.ZSTD, DEFAULT_BLOCK_SIZE, level)
        first = zstandard.ZstdCompressor(level=level, write_content_size=True)
        body = first.compress(payload[:DEFAULT_BLOCK_SIZE])
        assert got[3:3 + len(body)] == body
    java = WriteOptions().resolve(from_arrow_schema(table().schema))
    assert stream_level(java, pb.Stream.DATA) == 3
    zlib_java = WriteOptions(compression="zlib").resolve(from_arrow_schema(table().schema))
    assert (stream_level(zlib_java, pb.Stream.DATA), stream_level(zlib_java, None)) == (2, 6)
    data = table()
    path = tmp_path / "l1.orc"
    await aorc.write_table(data, path, compression_level=1)
    assert po.read_table(path).equals(data)


def test_resolve_checks_bloom_columns() -> None:
    root = from_arrow_schema(table().schema)
    enc = WriteOptions(bloom_filter_columns=["t"]).resolve(root)
    assert enc.bloom_filter_columns == {3, 4}  # t and its field x
    with pytest.raises(SchemaError, match="nope"):
        WriteOptions(bloom_filter_columns=["nope"]).resolve(root)


async def test_write_table_and_open_writer_take_options(tmp_path: pathlib.Path) -> None:
    data = table()
    opts = WriteOptions(compression="zlib", row_index_stride=1000, metadata={"who": "me"})
    await aorc.write_table(data, tmp_path / "a.orc", opts)
    await aorc.write_table(data, tmp_path / "b.orc", options=opts, compression="none")
    async with aorc.open_writer(tmp_path / "c.orc", data.schema, opts,
                                compression="snappy") as writer:
        await writer.write(data)
    assert writer.options.compression == "snappy" and writer.options.row_index_stride == 1000
    for name, codec in (("a", "ZLIB"), ("b", "UNCOMPRESSED"), ("c", "SNAPPY")):
        f = po.ORCFile(str(tmp_path / f"{name}.orc"))
        assert f.compression == codec
        assert f.row_index_stride == 1000
        assert f.metadata == {b"who": b"me"}
        assert f.read().equals(data)


async def test_rolling_sink_takes_options(tmp_path: pathlib.Path) -> None:
    data = table(500)
    async with aorc.RollingSink(tmp_path, data.schema, options=WriteOptions(compression="lz4"),
                                metadata={"m": "1"}) as sink:
        await sink.write(data, topic="t", partition=0, offsets=range(data.num_rows))
    (path,) = [p for p in tmp_path.rglob("*.orc")]
    with open(path, "rb") as handle:
        reader = pyorc.Reader(handle)
        assert reader.compression == pyorc.CompressionKind.LZ4
        assert reader.user_metadata["m"] == b"1"
        assert reader.user_metadata["aorc.sink.topic"] == b"t"
    with pytest.raises(SchemaError, match="RollingSink"):
        aorc.RollingSink(tmp_path, data.schema, options=WriteOptions(), compresion="zstd")


def test_cli_convert_threads(tmp_path: pathlib.Path) -> None:
    src = tmp_path / "in.csv"
    src.write_text("a,b\n" + "".join(f"{i},x{i % 5}\n" for i in range(2000)))
    outs = []
    for threads in ("1", "3"):
        out = tmp_path / f"out{threads}.orc"
        result = run("convert", str(src), str(out), "--compression", "zlib",
                     "--threads", threads)
        assert result.returncode == 0, result.stderr
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]
    assert po.ORCFile(str(tmp_path / "out1.orc")).compression == "ZLIB"
    bad = run("convert", str(src), str(tmp_path / "x.orc"), "--threads", "0")
    assert bad.returncode != 0 and "use_threads" in bad.stderr
    assert not (tmp_path / "x.orc").exists()


def test_codec_table_is_complete_and_round_trips() -> None:
    assert [c.kind for c in CODECS] == list(CompressionKind)
    assert {c.name for c in CODECS if c.writable} == {"none", "zlib", "snappy", "lz4", "zstd"}
    data = b"".join(i.to_bytes(4, "little") for i in range(20_000)) + b"x" * 5000
    for codec in CODECS:
        if codec.compressor is None or codec.kind is CompressionKind.NONE:
            continue
        framed = compress_stream(data, codec.kind, 4096)
        assert len(framed) < len(data)
        assert bytes(decompress_stream(framed, codec.kind, 4096)) == data
