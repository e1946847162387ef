"""The write driver and the public write API, checked with aorc, pyarrow.orc and pyorc."""

from __future__ import annotations

import asyncio
import datetime
import decimal
import io
import pathlib
import random
import tracemalloc
import zoneinfo
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.orc as po
import pyorc
import pytest

import aorc
from aorc.errors import AorcError, InputTypeError, SchemaError, UnsupportedFeatureError
from aorc.format._proto import orc_proto_pb2 as pb
from aorc.format.codec.compression import CompressionKind, decompress_stream
from aorc.format.tail import FileTail, parse_tail
from aorc.format.types import from_arrow_schema
from aorc.io.output import TEMP_MARKER, MemoryOutput

CODECS = ["none", "zlib", "snappy", "lz4", "zstd"]

UTC = zoneinfo.ZoneInfo("UTC")
STRUCT = pa.struct([("x", pa.float64()), ("y", pa.string())])


def sample_table(n: int, seed: int = 0) -> pa.Table:
    """Plain values of many types, nulls in most columns (not the ORC edge cases: those are
    the encoders' tests)."""
    rng = np.random.default_rng(seed)
    ints = rng.integers(-10**9, 10**9, n)
    day = datetime.date(2000, 1, 1)
    return pa.table({
        "i64": pa.array(ints, pa.int64()),
        "i32": pa.array([None if i % 10 == 3 else int(v % 10**6) for i, v in enumerate(ints)],
                        pa.int32()),
        "flag": pa.array([None if i % 7 == 0 else bool(v & 1) for i, v in enumerate(ints)]),
        "dbl": pa.array(rng.normal(size=n)),
        "word": pa.array([None if i % 9 == 0 else f"w{v % 50}" for i, v in enumerate(ints)]),
        "text": pa.array([None if i % 11 == 0 else f"text {i} {v}" for i, v in enumerate(ints)]),
        "day": pa.array([day + datetime.timedelta(days=int(v % 5000)) for v in ints]),
        "ts": pa.array((1_600_000_000 * 10**9 + np.abs(ints) * 1000).astype("datetime64[ns]")),
        "dec": pa.array([decimal.Decimal(int(v)).scaleb(-2) for v in ints],
                        pa.decimal128(12, 2)),
        "nums": pa.array([None if i % 5 == 0 else [int(v % 100)] * (i % 4)
                          for i, v in enumerate(ints)], pa.list_(pa.int64())),
        "st": pa.array([None if i % 6 == 0 else {"x": float(i), "y": f"y{i % 3}"}
                        for i in range(n)], STRUCT),
    })


def read_tail(path: pathlib.Path | bytes) -> tuple[FileTail, bytes]:
    data = path if isinstance(path, bytes) else path.read_bytes()
    tail = parse_tail(data, len(data))
    assert isinstance(tail, FileTail)
    return tail, data


def stripe_footers(path: pathlib.Path) -> list[pb.StripeFooter]:
    tail, data = read_tail(path)
    out = []
    for stripe in tail.stripes:
        raw = data[stripe.footer_offset:stripe.end]
        footer = pb.StripeFooter()
        footer.ParseFromString(bytes(decompress_stream(raw, tail.compression, tail.block_size)))
        out.append(footer)
    return out


def pyorc_rows(path: pathlib.Path) -> list[dict[str, Any]]:
    with path.open("rb") as f:
        return list(pyorc.Reader(f, struct_repr=pyorc.StructRepr.DICT, timezone=UTC))


def expected_pyorc_rows(table: pa.Table) -> list[dict[str, Any]]:
    rows = table.to_pylist()
    for row in rows:  # pyorc gives timestamps as aware datetimes in the zone asked for
        if row.get("ts") is not None:
            row["ts"] = row["ts"].replace(tzinfo=datetime.UTC)
    return rows


# --------------------------------------------------------------------------- round trips

@pytest.mark.parametrize("codec", CODECS)
async def test_round_trip_every_codec(tmp_path: pathlib.Path, codec: str) -> None:
    table = sample_table(6000, seed=len(codec))
    path = tmp_path / "t.orc"
    await aorc.write_table(table, path, compression=codec, stripe_size=64 * 1024,
                           compression_block_size=8192, row_index_stride=1000)
    tail, _ = read_tail(path)
    assert len(tail.stripes) > 2, "a small stripe size must give several stripes"
    assert tail.compression.name.lower() == ("none" if codec == "none" else codec)
    assert (await aorc.read_table(path)).equals(table)
    assert po.read_table(path).equals(table)
    assert pyorc_rows(path) == expected_pyorc_rows(table)


async def test_streamed_batches_equal_the_table(tmp_path: pathlib.Path) -> None:
    table = sample_table(7000, seed=3)
    path = tmp_path / "t.orc"
    async with aorc.open_writer(path, table.schema, stripe_size=32 * 1024) as writer:
        for batch in table.to_batches(max_chunksize=333):
            await writer.write(batch)
        await writer.write(table.slice(0, 0))  # empty input is fine
    assert writer.num_rows == len(table)
    assert writer.num_stripes == len(read_tail(path)[0].stripes) > 1
    assert writer.bytes_written == path.stat().st_size
    assert po.read_table(path).equals(table)


async def test_empty_table_gives_a_file_without_stripes(tmp_path: pathlib.Path) -> None:
    table = sample_table(10).slice(0, 0)
    path = tmp_path / "empty.orc"
    await aorc.write_table(table, path)
    tail, _ = read_tail(path)
    assert tail.num_rows == 0 and tail.stripes == []
    back = po.read_table(path)
    assert back.num_rows == 0 and back.schema.names == table.schema.names
    assert (await aorc.read_table(path)).num_rows == 0
    with path.open("rb") as f:
        assert len(pyorc.Reader(f)) == 0


async def test_record_batch_memory_sink_and_file_uri(tmp_path: pathlib.Path) -> None:
    batch = sample_table(500).to_batches()[0]
    sink = MemoryOutput()
    await aorc.write_table(batch, sink)
    assert po.ORCFile(io.BytesIO(sink.getvalue())).read().equals(pa.Table.from_batches([batch]))
    path = tmp_path / "u.orc"
    await aorc.write_table(batch, path.as_uri())
    assert path.read_bytes() == sink.getvalue()


async def test_pandas_dataframe(tmp_path: pathlib.Path) -> None:
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"a": [1, 2, 3], "b": ["x", None, "z"]}, index=[10, 20, 30])
    await aorc.write_table(frame, tmp_path / "p.orc")
    back = po.read_table(tmp_path / "p.orc")
    assert back.column_names == ["a", "b"]  # the index is not written
    assert back.column("b").to_pylist() == ["x", None, "z"]


async def test_schema_as_orc_type_string(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "s.orc"
    async with aorc.open_writer(path, "struct<a:int,b:string,c:varchar(5)>") as writer:
        assert writer.schema.names == ["a", "b", "c"]
        await writer.write(pa.table({"a": pa.array([1, None], pa.int32()),
                                     "b": pa.array(["x", "y"], pa.large_string()),
                                     "c": ["abcdefg", None]}))
    tail, _ = read_tail(path)
    assert str(tail.schema) == "struct<a:int,b:string,c:varchar(5)>"
    assert pyorc_rows(path) == [{"a": 1, "b": "x", "c": "abcde"}, {"a": None, "b": "y",
                                                                  "c": None}]


# --------------------------------------------------------------------------- file contents

async def test_footer_and_postscript_fields(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "f.orc"
    await aorc.write_table(sample_table(2500), path, compression="zlib",
                           compression_block_size=100_000, row_index_stride=2000,
                           metadata={"b": b"\x00\xff", "s": "été"})
    tail, data = read_tail(path)
    assert data[:3] == b"ORC"
    assert tail.version == (0, 12)
    assert tail.writer == 7  # unregistered code (0-5 are taken), see aorc/write/file.py
    assert tail.writer_version == 6
    assert tail.software_version == f"aorc {aorc.__version__}"
    assert tail.calendar == pb.PROLEPTIC_GREGORIAN
    assert tail.compression is CompressionKind.ZLIB
    assert tail.block_size == 100_000
    assert tail.row_index_stride == 2000
    assert tail.user_metadata == {"b": b"\x00\xff", "s": "été".encode()}
    with path.open("rb") as f:
        reader = pyorc.Reader(f)
        assert reader.user_metadata == {"b": b"\x00\xff", "s": "été".encode()}
        assert reader.writer_version == 6 if hasattr(reader, "writer_version") else True
    meta = po.ORCFile(path).metadata
    assert meta is not None and meta[b"s"] == "été".encode()
    # pyarrow prefixes the writer's name, "Unknown(7)" for codes it does not know
    assert po.ORCFile(path).software_version.endswith(f"aorc {aorc.__version__}")
    for footer in stripe_footers(path):
        assert footer.writerTimezone == "UTC"


async def test_row_index_can_be_disabled(tmp_path: pathlib.Path) -> None:
    table = sample_table(3000)
    with_index, without = tmp_path / "a.orc", tmp_path / "b.orc"
    await aorc.write_table(table, with_index, row_index_stride=1000)
    await aorc.write_table(table, without, row_index_stride=0,
                           bloom_filter_columns=["word"])  # no index: no bloom filters
    n_columns = len(list(from_arrow_schema(table.schema).walk()))
    for footer in stripe_footers(with_index):
        indexed = {s.column for s in footer.streams if s.kind == pb.Stream.ROW_INDEX}
        assert indexed == set(range(n_columns))
    tail, _ = read_tail(without)
    assert tail.row_index_stride == 0
    for footer in stripe_footers(without):
        kinds = {s.kind for s in footer.streams}
        assert not kinds & {pb.Stream.ROW_INDEX, pb.Stream.BLOOM_FILTER_UTF8}
    assert po.read_table(without).equals(table)
    assert pyorc_rows(without) == expected_pyorc_rows(table)


async def test_bloom_filter_columns(tmp_path: pathlib.Path) -> None:
    table = sample_table(2500)
    path = tmp_path / "bf.orc"
    await aorc.write_table(table, path, bloom_filter_columns=["word", "st.y", "i64"],
                           bloom_filter_fpp=0.05, row_index_stride=1000)
    # ids by pre-order position, computed from the schema independently of aorc
    names = []
    for field in table.schema:
        names.append(field.name)
        if pa.types.is_struct(field.type):
            names += [f"{field.name}.{child.name}" for child in field.type]
        elif pa.types.is_list(field.type):
            names.append(f"{field.name}.item")
    ids = {name: i + 1 for i, name in enumerate(names)}
    wanted = {ids["word"], ids["st.y"], ids["i64"]}
    for footer in stripe_footers(path):
        bloomed = {s.column for s in footer.streams if s.kind == pb.Stream.BLOOM_FILTER_UTF8}
        assert bloomed == wanted
        for cid, encoding in enumerate(footer.columns):
            assert encoding.bloomEncoding == (1 if cid in wanted else 0)
    assert po.read_table(path).equals(table)


# --------------------------------------------------------------------------- seeking

def unsafe_for_cpp_seek(table: pa.Table, row: int, group_start: int) -> bool:
    """ORC C++ (1.9-2.x) cannot skip within a row group when every skipped value of a
    direct-encoded string column is null ("StringDirectColumnReader::skip: lastBuffer_ is
    null"; pyarrow-written files fail the same way), so such rows are not sought."""
    if row == group_start:
        return False
    skipped = table.slice(group_start, row - group_start)
    return any(skipped.column(name).null_count == len(skipped)
               for name in table.column_names if pa.types.is_string(table.schema.field(name).type))


SEEK_CASES = [("none", 1000)] + [(c, 1000) for c in CODECS[1:]] + [
    ("zlib", 4096), ("zstd", 4096), ("snappy", 65536), ("lz4", 65536)]


@pytest.mark.parametrize(("codec", "block_size"), SEEK_CASES)
async def test_pyorc_seeks_with_our_row_index(tmp_path: pathlib.Path, codec: str,
                                              block_size: int) -> None:
    """pyorc (ORC C++) seeks through the row index: each position must be right. Small
    blocks put many chunk boundaries inside every stream."""
    table = sample_table(9000, seed=block_size)
    path = tmp_path / "seek.orc"
    await aorc.write_table(table, path, compression=codec, compression_block_size=block_size,
                           row_index_stride=1000, stripe_size=128 * 1024)
    rows = expected_pyorc_rows(table)
    with path.open("rb") as f:
        reader = pyorc.Reader(f, struct_repr=pyorc.StructRepr.DICT, timezone=UTC)
        assert reader.num_of_stripes > 1
        stripe_starts = [reader.read_stripe(i).row_offset for i in range(reader.num_of_stripes)]
        sample = random.Random(block_size).sample(range(len(rows)), 80)
        sample += [0, 999, 1000, 1001, len(rows) - 1] + stripe_starts
        checked = 0
        for row in sample:
            start = max(s for s in stripe_starts if s <= row)
            group = start + (row - start) // 1000 * 1000
            if unsafe_for_cpp_seek(table, row, group):
                continue
            reader.seek(row)
            assert next(reader) == rows[row], f"row {row}"
            checked += 1
        assert checked > 70


# --------------------------------------------------------------------------- failures

async def test_exception_inside_open_writer_leaves_nothing(tmp_path: pathlib.Path) -> None:
    table = sample_table(5000)
    target = tmp_path / "out.orc"
    with pytest.raises(RuntimeError, match="boom"):
        async with aorc.open_writer(target, table.schema, stripe_size=16 * 1024) as writer:
            for batch in table.to_batches(max_chunksize=500):
                await writer.write(batch)
            assert writer.num_stripes > 0  # stripes already went to the temporary file
            assert [p.name for p in tmp_path.iterdir() if TEMP_MARKER in p.name]
            raise RuntimeError("boom")
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(AorcError, match="aborted"):
        await writer.write(table)


async def test_failure_keeps_an_existing_target(tmp_path: pathlib.Path) -> None:
    target = tmp_path / "out.orc"
    target.write_bytes(b"previous")
    with pytest.raises(KeyError):
        async with aorc.open_writer(target, sample_table(100).schema) as writer:
            await writer.write(sample_table(100))
            raise KeyError("x")
    assert target.read_bytes() == b"previous"
    assert [p.name for p in tmp_path.iterdir()] == ["out.orc"]


async def test_cancellation_leaves_nothing(tmp_path: pathlib.Path) -> None:
    table = sample_table(4000)
    target = tmp_path / "out.orc"
    progress = asyncio.Event()

    async def produce() -> None:
        async with aorc.open_writer(target, table.schema, stripe_size=8 * 1024) as writer:
            while True:
                for batch in table.to_batches(max_chunksize=400):
                    await writer.write(batch)
                    if writer.num_stripes >= 3:
                        progress.set()

    task = asyncio.create_task(produce())
    waiting = asyncio.ensure_future(progress.wait())  # however long the machine takes
    await asyncio.wait({task, waiting}, return_when=asyncio.FIRST_COMPLETED)
    assert progress.is_set() and not task.done()  # three stripes out, still writing
    assert [p.name for p in tmp_path.iterdir() if TEMP_MARKER in p.name]
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert list(tmp_path.iterdir()) == []


async def test_close_is_final(tmp_path: pathlib.Path) -> None:
    target = tmp_path / "out.orc"
    with pytest.raises(AorcError, match="closed"):
        async with aorc.open_writer(target, "struct<d:decimal(3,1)>") as writer:
            # decimal(5,2) is not decimal(3,1): refused before anything is buffered
            with pytest.raises(SchemaError):
                await writer.write(pa.table({"d": pa.array([decimal.Decimal("1.25")],
                                                           pa.decimal128(5, 2))}))
            await writer.write(pa.table({"d": pa.array([decimal.Decimal("12.5")],
                                                       pa.decimal128(3, 1))}))
            await writer.close()
            await writer.close()  # idempotent
            await writer.write(pa.table({"d": pa.array([], pa.decimal128(3, 1))}))
    # the file was complete before the misuse, and stays
    assert [p.name for p in tmp_path.iterdir()] == ["out.orc"]
    assert po.read_table(target).column("d").to_pylist() == [decimal.Decimal("12.5")]


async def test_a_failing_stripe_breaks_the_writer(tmp_path: pathlib.Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """An error in the worker thread reaches the caller; the file is abandoned."""
    calls = []

    def failing_assemble(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        if len(calls) == 2:
            raise RuntimeError("encoder broke")
        return real_assemble(*args, **kwargs)

    import aorc.write.writer as writer_module
    real_assemble = writer_module.encode_stripe
    monkeypatch.setattr(writer_module, "encode_stripe", failing_assemble)
    table = sample_table(4000)
    writer = aorc.open_writer(tmp_path / "out.orc", table.schema, stripe_size=8 * 1024)
    with pytest.raises(RuntimeError, match="encoder broke"):
        async with writer:
            for batch in table.to_batches(max_chunksize=200):
                await writer.write(batch)
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(AorcError, match="aborted"):
        await writer.write(table)

    # without async with: the error surfaces in write() or close(), which abandon the file
    calls.clear()
    writer = aorc.open_writer(tmp_path / "out.orc", table.schema, stripe_size=8 * 1024)
    with pytest.raises(RuntimeError, match="encoder broke"):
        for batch in table.to_batches(max_chunksize=200):
            await writer.write(batch)
        await writer.close()
    assert list(tmp_path.iterdir()) == []  # abandoned at once
    with pytest.raises(AorcError, match="broke this writer"):
        await writer.write(table)
    with pytest.raises(AorcError, match="broke this writer"):
        await writer.close()
    await writer.abort()


# --------------------------------------------------------------------------- validation

async def test_schema_mismatch_is_refused_and_the_writer_stays_usable(
        tmp_path: pathlib.Path) -> None:
    schema = pa.schema([("a", pa.int64()), ("b", pa.string())])
    path = tmp_path / "v.orc"
    async with aorc.open_writer(path, schema) as writer:
        with pytest.raises(SchemaError, match="columns"):
            await writer.write(pa.table({"b": ["x"], "a": [1]}))
        with pytest.raises(SchemaError, match="type int32"):
            await writer.write(pa.table({"a": pa.array([1], pa.int32()), "b": ["x"]}))
        with pytest.raises(InputTypeError, match="item 0 of the list: a value of type int"):
            await writer.write([1, 2])
        # types written alike are converted
        await writer.write(pa.table({"a": [1], "b": pa.array(["x"], pa.large_string())}))
        await writer.write(pa.table({"a": [2], "b": pa.array(["y"]).dictionary_encode()}))
        await writer.write(pa.table({"a": [3], "b": pa.array(["z"], pa.string_view())}))
    assert po.read_table(path).to_pydict() == {"a": [1, 2, 3], "b": ["x", "y", "z"]}


@pytest.mark.parametrize(("options", "message"), [
    ({"compresion": "zstd"}, "unexpected keyword argument 'compresion'"),
    ({"compression": "gzip"}, "compression must be one of"),
    ({"compression": "brotli"}, "compression must be one of"),
    ({"compression_block_size": 0}, "compression_block_size must be between"),
    ({"compression_block_size": 2**23}, "compression_block_size must be between"),
    ({"compression_block_size": 1.5}, "must be an integer"),
    ({"stripe_size": 0}, "stripe_size must be at least 1"),
    ({"stripe_size": True}, "must be an integer"),
    ({"row_index_stride": 999}, "at least 1000"),
    ({"row_index_stride": -1}, "row_index_stride must be at least 0"),
    ({"dictionary_key_size_threshold": 1.5}, "dictionary_key_size_threshold"),
    ({"bloom_filter_fpp": 0.0}, "bloom_filter_fpp"),
    ({"bloom_filter_fpp": 1}, "bloom_filter_fpp"),
    ({"bloom_filter_columns": "a"}, "list of column names"),
    ({"bloom_filter_columns": ["nope"]}, "nope"),
    ({"bloom_filter_columns": [1]}, "column names"),
    ({"metadata": {"k": 1}}, "metadata value"),
    ({"metadata": [("k", b"v")]}, "metadata must be a dict"),
    ({"timezone": "Mars/Olympus_Mons"}, "unknown time zone"),
    ({"timezone": ""}, "timezone"),
])
async def test_bad_options(tmp_path: pathlib.Path, options: dict[str, Any],
                           message: str) -> None:
    with pytest.raises(SchemaError, match=message):
        aorc.open_writer(tmp_path / "x.orc", pa.schema([("a", pa.int64())]), **options)
    with pytest.raises(SchemaError, match=message.replace("open_writer", "write_table")):
        await aorc.write_table(pa.table({"a": [1]}), tmp_path / "x.orc", **options)
    assert list(tmp_path.iterdir()) == []


async def test_good_option_spellings(tmp_path: pathlib.Path) -> None:
    table = pa.table({"a": [1, 2]})
    for codec, kind in (("ZSTD", CompressionKind.ZSTD), ("uncompressed", CompressionKind.NONE),
                        (None, CompressionKind.NONE), (CompressionKind.LZ4, CompressionKind.LZ4)):
        await aorc.write_table(table, tmp_path / "x.orc", compression=codec)
        assert read_tail(tmp_path / "x.orc")[0].compression is kind
    writer = aorc.open_writer(tmp_path / "y.orc", table.schema, timezone="America/New_York",
                              stripe_size=np.int64(1 << 20), dictionary_key_size_threshold=0)
    assert writer.options.timezone == "America/New_York"
    assert writer.options.stripe_size == 1 << 20
    await writer.abort()
    with pytest.raises(UnsupportedFeatureError):
        aorc.open_writer("ftp://host/key.orc", table.schema)
    with pytest.raises(SchemaError, match="struct"):
        aorc.open_writer(tmp_path / "z.orc", "int")
    with pytest.raises(SchemaError, match="cannot hold Arrow type null"):
        aorc.open_writer(tmp_path / "z.orc", pa.schema([("n", pa.null())]))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.orc"]


async def test_an_unwritable_type_is_a_public_error_naming_its_column(
        tmp_path: pathlib.Path) -> None:
    """aorc.UnwritableTypeError (a SchemaError) carries the type and the dotted column path
    of the nested field, and the message names the cast."""
    table = pa.table({"s": pa.array([{"t": 1}], pa.struct([("t", pa.time64("us"))]))})
    with pytest.raises(aorc.UnwritableTypeError) as info:
        await aorc.write_table(table, tmp_path / "t.orc")
    assert isinstance(info.value, SchemaError)
    assert info.value.dt == pa.time64("us") and info.value.column == "s.t"
    assert "'s.t'" in str(info.value) and "pa.int64()" in str(info.value)
    assert aorc.errors.UnwritableTypeError is aorc.UnwritableTypeError
    assert not (tmp_path / "t.orc").exists()


# --------------------------------------------------------------------------- streaming, memory

async def test_output_streams_while_writing(tmp_path: pathlib.Path) -> None:
    table = sample_table(20_000)
    target = tmp_path / "out.orc"
    sizes = []
    async with aorc.open_writer(target, table.schema, stripe_size=64 * 1024) as writer:
        for batch in table.to_batches(max_chunksize=1000):
            await writer.write(batch)
            temps = [p for p in tmp_path.iterdir() if TEMP_MARKER in p.name]
            sizes.append(temps[0].stat().st_size)
        assert not target.exists()
    assert sizes[-1] > sizes[0] >= 3
    assert len(set(sizes)) > 3  # the file grew stripe by stripe
    assert target.stat().st_size > sizes[-1]


class CountingSink:
    """A sink that keeps only the number of bytes it received."""

    path = "<counting>"

    def __init__(self) -> None:
        self.size = 0
        self.completed = False

    async def write(self, data: bytes | bytearray | memoryview) -> None:
        self.size += len(data)

    async def complete(self) -> None:
        self.completed = True

    async def abort(self) -> None:
        pass


@pytest.mark.slow
async def test_memory_stays_bounded() -> None:
    """500 MB of small batches through 8 MiB stripes: the writer holds about two stripes."""
    value_size, rows = 4096, 64
    pool = np.random.default_rng(0).integers(0, 256, 2**20 + value_size * rows, np.uint8)
    pool_buffer = pa.py_buffer(pool)
    schema = pa.schema([("b", pa.binary())])

    def batch(i: int) -> pa.RecordBatch:
        # distinct values over one shared buffer: the input itself costs no memory
        start = i * 7919 % 2**20
        offsets = (start + np.arange(rows + 1, dtype=np.int32) * value_size).astype(np.int32)
        arr = pa.Array.from_buffers(pa.binary(), rows, [None, pa.py_buffer(offsets),
                                                        pool_buffer])
        return pa.record_batch([arr], schema=schema)

    total = 500 * 2**20
    sink = CountingSink()
    stripe_size = 8 * 2**20
    tracemalloc.start()
    try:
        async with aorc.open_writer(sink, schema, stripe_size=stripe_size,
                                    compression="none") as writer:
            for i in range(total // (value_size * rows)):
                await writer.write(batch(i))
        _, traced_peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert sink.completed and sink.size > total
    assert writer.num_stripes >= 50
    assert writer.peak_memory <= writer.memory_limit
    # incompressible data: about one stripe buffered plus one being encoded
    assert writer.peak_memory <= 2.5 * stripe_size
    assert traced_peak < 6 * stripe_size, f"{traced_peak / 2**20:.0f} MiB traced"
