"""What the writers take (aorc.write.inputs): every writer -- write_table, OrcWriter.write,
write_dataset, RollingSink.write, aorc.iceberg.append and the aorc.sync twins -- with every
kind of input (Polars, DuckDB, pyarrow readers, tables and batches, iterators, async
iterators, an object exposing only ``__arrow_c_array__``, pandas), read back with
pyarrow.orc; TypeError for other objects; streams consumed batch by batch while stripes are
written."""

from __future__ import annotations

import asyncio
import pathlib
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.orc as po
import pytest

import aorc
import aorc.sync
from aorc.errors import AorcError, InputTypeError, SchemaError
from aorc.io.output import MemoryOutput
from aorc.sink.rolling import RollingSink
from aorc.write.inputs import ACCEPTED, collect_batches, iter_record_batches, record_input

pl = pytest.importorskip("polars")

ROWS = 3_000
CHUNK = 700  # rows per batch of the streamed inputs (several batches, a ragged last one)


def sample(n: int = ROWS, seed: int = 3) -> pa.Table:
    rng = np.random.default_rng(seed)
    return pa.table({
        "id": pa.array(np.arange(n), pa.int64()),
        "word": pa.array([f"w{v}" for v in rng.integers(0, 50, n)], pa.string()),
        "x": pa.array(rng.normal(size=n)),
    })


TABLE = sample()


class ArrayOnly:
    """Exposes its rows only through ``__arrow_c_array__`` (a struct array)."""

    def __init__(self, data: pa.RecordBatch | pa.Array) -> None:
        self._data = data

    def __arrow_c_array__(self, requested_schema: object | None = None) -> tuple[object, object]:
        return self._data.__arrow_c_array__(requested_schema)


def _gen(table: pa.Table) -> Iterator[pa.RecordBatch]:
    yield from table.to_batches(max_chunksize=CHUNK)


async def _agen(table: pa.Table) -> AsyncIterator[pa.RecordBatch]:
    for batch in table.to_batches(max_chunksize=CHUNK):
        await asyncio.sleep(0)
        yield batch


def _duckdb(table: pa.Table) -> Any:
    return duckdb.from_arrow(table).order("id")  # a relation (a query, run when pulled)


#: Each kind of input, made afresh from a table (streams are read once).
KINDS: dict[str, Callable[[pa.Table], Any]] = {
    "polars": lambda t: pl.from_arrow(t),
    "duckdb": _duckdb,
    "pa_reader": lambda t: pa.RecordBatchReader.from_batches(
        t.schema, t.to_batches(max_chunksize=CHUNK)),
    "pa_table": lambda t: t,
    "pa_batch": lambda t: t.combine_chunks().to_batches()[0],
    "iterator": _gen,
    "async_iterator": _agen,
    "tables_iterator": lambda t: iter([t.slice(0, 1000), t.slice(1000)]),
    "c_array_only": lambda t: ArrayOnly(t.combine_chunks().to_batches()[0]),
    "pandas": lambda t: t.to_pandas(),
}


def check_rows(got: pa.Table, want: pa.Table = TABLE) -> None:
    """Same rows (sorted by id) and values; strings read back as ORC strings."""
    got = got.select(want.column_names).sort_by("id")
    assert got.num_rows == want.num_rows
    assert got.to_pylist() == want.to_pylist()


def orc_files(root: pathlib.Path) -> pa.Table:
    files = sorted(p for p in root.rglob("*.orc") if p.is_file())
    assert files
    return pa.concat_tables(po.read_table(str(p)) for p in files)


# =========================================================================== every writer

async def via_write_table(data: Any, tmp: pathlib.Path) -> pa.Table:
    await aorc.write_table(data, str(tmp / "t.orc"))
    return po.read_table(str(tmp / "t.orc"))


async def via_open_writer(data: Any, tmp: pathlib.Path) -> pa.Table:
    async with aorc.open_writer(str(tmp / "w.orc"), TABLE.schema) as writer:
        await writer.write(data)
    return po.read_table(str(tmp / "w.orc"))


async def via_write_dataset(data: Any, tmp: pathlib.Path) -> pa.Table:
    await aorc.write_dataset(data, str(tmp / "ds"), max_rows_per_file=1_000)
    return orc_files(tmp / "ds")


async def via_sink(data: Any, tmp: pathlib.Path) -> pa.Table:
    async with RollingSink(str(tmp / "sink"), TABLE.schema) as sink:
        await sink.write(data, topic="t", partition=0, offsets=0)
    return orc_files(tmp / "sink")


ASYNC_WRITERS = {"write_table": via_write_table, "open_writer": via_open_writer,
                 "write_dataset": via_write_dataset, "rolling_sink": via_sink}


@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("writer", list(ASYNC_WRITERS))
async def test_every_writer_takes_every_kind(writer: str, kind: str,
                                             tmp_path: pathlib.Path) -> None:
    check_rows(await ASYNC_WRITERS[writer](KINDS[kind](TABLE), tmp_path))


def sync_write_table(data: Any, tmp: pathlib.Path) -> pa.Table:
    aorc.sync.write_table(data, str(tmp / "t.orc"))
    return po.read_table(str(tmp / "t.orc"))


def sync_open_writer(data: Any, tmp: pathlib.Path) -> pa.Table:
    with aorc.sync.open_writer(str(tmp / "w.orc"), TABLE.schema) as writer:
        writer.write(data)
    return po.read_table(str(tmp / "w.orc"))


def sync_write_dataset(data: Any, tmp: pathlib.Path) -> pa.Table:
    aorc.sync.write_dataset(data, str(tmp / "ds"), max_rows_per_file=1_000)
    return orc_files(tmp / "ds")


def sync_sink(data: Any, tmp: pathlib.Path) -> pa.Table:
    with aorc.sync.RollingSink(str(tmp / "sink"), TABLE.schema) as sink:
        sink.write(data, topic="t", partition=0, offsets=0)
    return orc_files(tmp / "sink")


SYNC_WRITERS = {"write_table": sync_write_table, "open_writer": sync_open_writer,
                "write_dataset": sync_write_dataset, "rolling_sink": sync_sink}


@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("writer", list(SYNC_WRITERS))
def test_every_sync_writer_takes_every_kind(writer: str, kind: str,
                                            tmp_path: pathlib.Path) -> None:
    check_rows(SYNC_WRITERS[writer](KINDS[kind](TABLE), tmp_path))


@pytest.mark.parametrize("kind", list(KINDS))
def test_iceberg_append_takes_every_kind(kind: str, catalog: Any) -> None:
    iceberg = pytest.importorskip("aorc.iceberg")
    table = catalog.create_table("db.t", TABLE.schema)
    asyncio.run(iceberg.append(table, KINDS[kind](TABLE)))
    check_rows(asyncio.run(iceberg.read_table(table)))


def test_sync_writers_take_aorc_sync_streams(tmp_path: pathlib.Path) -> None:
    """aorc.sync's own iterators pull on aorc's loop: a writer running on that loop reads
    them in worker threads (on the loop's thread they would wait for themselves)."""
    po.write_table(TABLE, str(tmp_path / "src.orc"))
    with aorc.sync.open_reader(str(tmp_path / "src.orc")) as reader:
        aorc.sync.write_table(reader.iter_batches(batch_size=CHUNK), str(tmp_path / "a.orc"))
        aorc.sync.write_table(reader, str(tmp_path / "b.orc"))
        aorc.sync.write_table(reader.to_reader(batch_size=CHUNK), str(tmp_path / "c.orc"))
    for name in "abc":
        check_rows(po.read_table(str(tmp_path / f"{name}.orc")))


# =========================================================================== wrong inputs

BAD = {"int": 42, "dict": {"id": [1, 2]}, "str": "data.orc", "bytes": b"ORC", "none": None,
       "float": 1.5}


def check_refusal(exc: pytest.ExceptionInfo[BaseException], type_name: str) -> None:
    assert isinstance(exc.value, TypeError) and isinstance(exc.value, AorcError)
    message = str(exc.value)
    assert f"type {type_name}" in message
    for accepted in ("Table", "RecordBatchReader", "pandas DataFrame", "__arrow_c_stream__",
                     "__arrow_c_array__", "async iterable"):
        assert accepted in message


@pytest.mark.parametrize("bad", list(BAD))
@pytest.mark.parametrize("writer", list(ASYNC_WRITERS))
async def test_wrong_inputs_raise_type_error(writer: str, bad: str,
                                             tmp_path: pathlib.Path) -> None:
    with pytest.raises(InputTypeError) as exc:
        await ASYNC_WRITERS[writer](BAD[bad], tmp_path)
    check_refusal(exc, type(BAD[bad]).__name__)
    assert not [p for p in tmp_path.rglob("*") if p.is_file()]


@pytest.mark.parametrize("bad", ["int", "dict", "str"])
def test_wrong_inputs_raise_type_error_in_sync_and_iceberg(bad: str, tmp_path: pathlib.Path,
                                                           catalog: Any) -> None:
    with pytest.raises(InputTypeError) as exc:
        aorc.sync.write_table(BAD[bad], str(tmp_path / "x.orc"))
    check_refusal(exc, type(BAD[bad]).__name__)
    iceberg = pytest.importorskip("aorc.iceberg")
    table = catalog.create_table("db.t", TABLE.schema)
    with pytest.raises(InputTypeError) as exc:
        asyncio.run(iceberg.append(table, BAD[bad]))
    check_refusal(exc, type(BAD[bad]).__name__)
    assert table.current_snapshot() is None


async def test_an_open_writer_stays_usable_after_a_type_error(tmp_path: pathlib.Path) -> None:
    async with aorc.open_writer(str(tmp_path / "w.orc"), TABLE.schema) as writer:
        with pytest.raises(InputTypeError):
            await writer.write({"id": [1]})
        await writer.write(TABLE)
    check_rows(po.read_table(str(tmp_path / "w.orc")))


@pytest.mark.parametrize("where", ["list", "iterator", "async_iterator"])
async def test_a_wrong_item_is_named(where: str, tmp_path: pathlib.Path) -> None:
    items = [TABLE.slice(0, 10), 7]
    data: Any = {"list": items, "iterator": iter(items)}.get(where)
    if data is None:
        async def agen() -> AsyncIterator[Any]:
            for item in items:
                yield item
        data = agen()
    with pytest.raises(InputTypeError, match="item 1 of the .*type int"):
        await aorc.write_table(data, str(tmp_path / "x.orc"))
    assert not list(tmp_path.iterdir())


def test_arrays_that_are_not_tables_are_refused() -> None:
    with pytest.raises(InputTypeError, match="not a struct array"):
        record_input(ArrayOnly(pa.array([1, 2, 3])))
    with pytest.raises(InputTypeError, match="not a stream of record batches"):
        list(iter_record_batches(pa.chunked_array([[1, 2], [3]])))
    with pytest.raises(InputTypeError, match="not a stream of record batches"):
        asyncio.run(collect_batches(pa.chunked_array([[1, 2], [3]])))
    with pytest.raises(InputTypeError, match="async iterable"):
        list(iter_record_batches(_agen(TABLE)))
    assert "Polars" in ACCEPTED and "DuckDB" in ACCEPTED


def test_pandas_index_is_left_out(tmp_path: pathlib.Path) -> None:
    frame = TABLE.to_pandas()
    frame.index = frame.index + 1_000  # not a RangeIndex from 0: pandas' own export keeps it
    aorc.sync.write_table(frame, str(tmp_path / "p.orc"))
    assert po.read_table(str(tmp_path / "p.orc")).column_names == TABLE.column_names


# =========================================================================== streams

async def test_write_table_writes_a_stream_as_it_reads_it() -> None:
    """A generator's yields interleave with the stripes written: the output holds finished
    stripes long before the generator is exhausted (no table is built first)."""
    table = sample(60_000, seed=5)
    out = MemoryOutput()
    seen: list[int] = []  # bytes in the output when each batch was asked for

    def batches() -> Iterator[pa.RecordBatch]:
        for batch in table.to_batches(max_chunksize=2_000):
            seen.append(out.bytes_written)
            yield batch

    await aorc.write_table(batches(), out, stripe_size=64 << 10, compression="none")
    back = po.read_table(pa.BufferReader(out.getvalue()))
    check_rows(back, table)
    assert len(seen) == 30
    assert seen == sorted(seen)
    header = 3  # "ORC"
    assert seen[0] == 0
    written_before_the_end = [b for b in seen if b > header]
    assert len(written_before_the_end) >= len(seen) // 2, seen
    assert seen[-1] > len(out.getvalue()) // 2  # most of the file out before the last batch


async def test_open_writer_streams_an_async_iterator_with_bounded_memory() -> None:
    table = sample(60_000, seed=6)
    out = MemoryOutput()
    stripes: list[int] = []
    async with aorc.open_writer(out, table.schema, stripe_size=64 << 10,
                                compression="none") as writer:
        async def batches() -> AsyncIterator[pa.RecordBatch]:
            for batch in table.to_batches(max_chunksize=2_000):
                stripes.append(writer.num_stripes)
                yield batch

        await writer.write(batches())
        assert writer.peak_memory < table.nbytes // 4
    assert stripes == sorted(stripes) and stripes[-1] >= 5  # stripes done while reading
    check_rows(po.read_table(pa.BufferReader(out.getvalue())), table)


async def test_a_schema_mismatch_in_a_stream(tmp_path: pathlib.Path) -> None:
    """A stream whose schema is known is checked before any row is taken (the writer stays
    usable); a later batch that does not fit abandons the file."""
    wrong = pa.table({"id": ["a"], "word": ["b"], "x": [1.0]})
    async with aorc.open_writer(str(tmp_path / "w.orc"), TABLE.schema) as writer:
        reader = pa.RecordBatchReader.from_batches(wrong.schema, wrong.to_batches())
        with pytest.raises(SchemaError, match="'id'"):
            await writer.write(reader)
        await writer.write(TABLE)
    check_rows(po.read_table(str(tmp_path / "w.orc")))

    async def mixed() -> AsyncIterator[pa.Table]:
        yield TABLE
        yield wrong

    writer = aorc.open_writer(str(tmp_path / "m.orc"), TABLE.schema)
    with pytest.raises(SchemaError, match="'id'"):
        await writer.write(mixed())
    with pytest.raises(AorcError, match="broke this writer"):
        await writer.write(TABLE)
    await writer.abort()
    assert not list(tmp_path.glob("m.orc*"))


async def test_an_error_of_the_source_abandons_the_file(tmp_path: pathlib.Path) -> None:
    def failing() -> Iterator[pa.RecordBatch]:
        yield from TABLE.to_batches(max_chunksize=CHUNK)[:2]
        raise ConnectionResetError("the producer went away")

    with pytest.raises(ConnectionResetError):
        await aorc.write_table(failing(), str(tmp_path / "x.orc"))
    assert not list(tmp_path.iterdir())


async def test_empty_inputs(tmp_path: pathlib.Path) -> None:
    with pytest.raises(SchemaError, match="no schema"):
        await aorc.write_table(iter([]), str(tmp_path / "x.orc"))
    empty = pa.RecordBatchReader.from_batches(TABLE.schema, [])
    await aorc.write_table(empty, str(tmp_path / "e.orc"))
    back = po.read_table(str(tmp_path / "e.orc"))
    assert back.num_rows == 0 and back.column_names == TABLE.column_names
    await aorc.write_table(TABLE.slice(0, 0), str(tmp_path / "t.orc"))
    assert po.read_table(str(tmp_path / "t.orc")).column_names == TABLE.column_names


class Released:
    """An Arrow stream that notes when its consumer releases it."""

    def __init__(self, table: pa.Table) -> None:
        self.table = table
        self.pulled = 0
        self.released = False

    def __arrow_c_stream__(self, requested_schema: object | None = None) -> object:
        owner = self

        class Batches:
            def __init__(self) -> None:
                self.it = iter(owner.table.to_batches(max_chunksize=CHUNK))

            def __iter__(self) -> Batches:
                return self

            def __next__(self) -> pa.RecordBatch:
                owner.pulled += 1
                return next(self.it)

            def __del__(self) -> None:
                owner.released = True

        reader = pa.RecordBatchReader.from_batches(self.table.schema, Batches())
        return reader.__arrow_c_stream__(requested_schema)


async def test_an_imported_stream_is_released_when_a_write_fails(
        tmp_path: pathlib.Path) -> None:
    source = Released(TABLE)
    writer = aorc.open_writer(str(tmp_path / "w.orc"), pa.schema([("id", pa.int64())]))
    with pytest.raises(SchemaError):
        async with writer:
            await writer.write(source)
    assert source.released and source.pulled == 0
    done = Released(TABLE)
    await aorc.write_table(done, str(tmp_path / "d.orc"))
    assert done.released and done.pulled == 6  # 5 batches, then the end
    check_rows(po.read_table(str(tmp_path / "d.orc")))
