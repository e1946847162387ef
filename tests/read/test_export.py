"""Reads as Arrow C streams (aorc.read.export): readers, datasets and batch iterators consumed
by DuckDB, Polars and pyarrow (checked against pyarrow.orc and pyarrow.dataset), requested
schemas, the deadlock of a consumer on the reader's own event loop, and early release."""

from __future__ import annotations

import asyncio
import pathlib
import threading
from typing import Any

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as pads
import pyarrow.orc as po
import pytest

import aorc
import aorc.sync
from aorc.errors import AorcError, SchemaError
from aorc.read.export import BatchStream
from aorc.read.reader import OrcReader

pl = pytest.importorskip("polars")

ROWS = 40_000


def sample(n: int = ROWS, seed: int = 9) -> pa.Table:
    rng = np.random.default_rng(seed)
    return pa.table({
        "id": pa.array(np.arange(n), pa.int64()),
        "word": pa.array([f"w{v}" for v in rng.integers(0, 30, n)]),
        "x": pa.array(rng.normal(size=n)),
    })


@pytest.fixture(scope="module")
def orc_file(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    """About a dozen stripes (ids in order)."""
    path = tmp_path_factory.mktemp("export") / "data.orc"
    aorc.sync.write_table(sample(), str(path), stripe_size=32 << 10, compression="zstd")
    assert po.ORCFile(str(path)).nstripes >= 8
    return path


def stripes_before(path: pathlib.Path, first_id: int) -> int:
    """The stripes holding only ids below ``first_id`` (those a filter id >= first_id
    prunes by their statistics)."""
    orc = po.ORCFile(str(path))
    ends = np.cumsum([orc.read_stripe(i).num_rows for i in range(orc.nstripes)])
    return int((ends <= first_id).sum())


@pytest.fixture(scope="module")
def oracle(orc_file: pathlib.Path) -> pa.Table:
    return po.read_table(str(orc_file))


@pytest.fixture(scope="module")
def dataset_dir(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    root = tmp_path_factory.mktemp("export_ds")
    table = sample(9_000, seed=4)
    for i, key in enumerate(["a", "b", "c"]):
        (root / f"k={key}").mkdir()
        po.write_table(table.slice(i * 3_000, 3_000), str(root / f"k={key}" / "part.orc"))
    return root


def sorted_rows(data: Any) -> list[dict[str, Any]]:
    table = data if isinstance(data, pa.Table) else pa.table(data)
    return table.sort_by("id").to_pylist()


# =========================================================================== consumers

def test_duckdb_polars_and_pyarrow_read_a_sync_reader(orc_file: pathlib.Path,
                                                      oracle: pa.Table) -> None:
    with aorc.sync.open_reader(str(orc_file)) as reader:
        got = duckdb.sql("SELECT * FROM reader ORDER BY id").to_arrow_table()
        assert got.to_pylist() == oracle.to_pylist()
        want = duckdb.sql("SELECT word, count(*) n, max(x) m, sum(id) s FROM oracle GROUP BY word "
                          "ORDER BY word").fetchall()
        assert duckdb.sql("SELECT word, count(*) n, max(x) m, sum(id) s FROM reader GROUP BY word "
                          "ORDER BY word").fetchall() == want
        assert pl.DataFrame(reader).equals(pl.from_arrow(oracle))
        assert pl.from_arrow(reader.to_reader()).equals(pl.from_arrow(oracle))
        # (polars makes a generic stream a struct Series: pl.DataFrame makes it a frame)
        assert pl.from_arrow(reader).struct.unnest().equals(pl.from_arrow(oracle))
        stream = pa.RecordBatchReader.from_stream(reader)
        assert stream.schema == reader.schema
        assert stream.read_all().equals(oracle)


def test_a_projected_filtered_batch_stream(orc_file: pathlib.Path, oracle: pa.Table) -> None:
    want = oracle.filter(pc.field("id") >= 30_500).select(["word", "id"])
    with aorc.sync.open_reader(str(orc_file)) as reader:
        stream = reader.reader.iter_batches(["word", "id"], batch_size=1_000,
                                            filters=[("id", ">=", 30_500)])
        assert isinstance(stream, BatchStream)
        assert stream.schema.names == ["word", "id"]
        assert pl.DataFrame(stream).to_arrow().to_pylist() == want.to_pylist()
        batches = list(reader.to_reader(["word", "id"], 1_000, [("id", ">=", 30_500)]))
        assert len(batches) > 1 and max(b.num_rows for b in batches) == 1_000
        assert pa.Table.from_batches(batches).equals(want)
        pruned = stripes_before(orc_file, 30_500)
        assert pruned >= 3
        assert reader.scan_stats.stripes_pruned_by_stats == 2 * pruned  # (two reads)


def test_a_dataset_and_its_batch_stream(dataset_dir: pathlib.Path) -> None:
    theirs = pads.dataset(str(dataset_dir), format="orc", partitioning="hive")
    want = theirs.to_table(filter=(pc.field("k") != "b") & (pc.field("id") < 4_000))
    dataset = aorc.sync.open_dataset(str(dataset_dir))
    got = duckdb.sql("SELECT * FROM dataset WHERE k <> 'b' AND id < 4000").to_arrow_table()
    assert sorted_rows(got) == sorted_rows(want.cast(got.schema))
    reader = dataset.to_reader(["id", "k"], [("k", "!=", "b")], batch_size=500)
    assert reader.schema.names == ["id", "k"]
    assert reader.read_all().num_rows == 6_000
    assert pl.DataFrame(dataset.dataset.iter_batches(["id"])).height == 9_000


def test_record_batch_reader_of_a_file_and_of_a_dataset(orc_file: pathlib.Path,
                                                        oracle: pa.Table,
                                                        dataset_dir: pathlib.Path) -> None:
    stream = aorc.sync.record_batch_reader(str(orc_file), columns=["id"],
                                           filters=[("id", "<", 100)])
    assert stream.read_all().column("id").to_pylist() == list(range(100))
    ds = aorc.sync.record_batch_reader(  # noqa: F841 - DuckDB finds it by its name
        str(dataset_dir), filters=[("k", "==", "c")])
    assert duckdb.sql("SELECT count(*), min(id) FROM ds").fetchall() == [(3_000, 6_000)]
    with pytest.raises(SchemaError, match="nope"):
        aorc.sync.record_batch_reader(str(orc_file), columns=["nope"])


# =========================================================================== requested schemas

def import_stream(obj: Any, schema: pa.Schema) -> pa.Table:
    capsule = obj.__arrow_c_stream__(schema.__arrow_c_schema__())
    return pa.RecordBatchReader._import_from_c_capsule(capsule).read_all()


def test_a_requested_schema_is_honoured_by_casting(orc_file: pathlib.Path,
                                                   oracle: pa.Table) -> None:
    target = pa.schema([("id", pa.int32()), ("word", pa.large_string()), ("x", pa.float32())])
    with aorc.sync.open_reader(str(orc_file)) as reader:
        got = import_stream(reader, target)
        assert got.schema == target
        assert got.equals(oracle.cast(target))
        assert import_stream(reader, reader.schema).equals(oracle)
        with pytest.raises(SchemaError, match="columns"):
            import_stream(reader, pa.schema([("id", pa.int64())]))
        with pytest.raises(SchemaError, match="cannot cast"):
            import_stream(reader, pa.schema([("id", pa.list_(pa.int64())), *target][:1]
                                            + list(target)[1:]))


# =========================================================================== event loops

async def test_a_consumer_on_the_readers_own_loop_is_refused(orc_file: pathlib.Path,
                                                             oracle: pa.Table) -> None:
    """Pulling from the loop's own thread would wait for the loop it blocks: refused with
    advice; from a worker thread it streams."""
    async with aorc.open_reader(str(orc_file)) as reader:
        with pytest.raises(AorcError, match="deadlock.*aorc.sync.*to_thread"):
            pa.RecordBatchReader.from_stream(reader)
        with pytest.raises(duckdb.Error, match="deadlock"):
            duckdb.sql("SELECT count(*) FROM reader").fetchall()
        stream = reader.iter_batches(["id"])
        with pytest.raises(AorcError, match="deadlock"):
            stream.to_reader()

        def count(source: Any) -> int:
            return int(duckdb.sql("SELECT count(*) FROM source").fetchall()[0][0])

        assert await asyncio.to_thread(count, reader) == ROWS
        assert await asyncio.to_thread(count, stream) == ROWS
        table = await asyncio.to_thread(lambda: pl.DataFrame(reader).to_arrow())
        assert table.to_pylist() == oracle.to_pylist()
        dataset = await aorc.open_dataset([str(orc_file)])
        with pytest.raises(AorcError, match="deadlock"):
            pa.table(dataset)
        assert await asyncio.to_thread(count, dataset) == ROWS


async def test_a_consumer_thread_joined_from_the_loop_is_refused(orc_file: pathlib.Path
                                                               ) -> None:
    """A thread exports and pulls while the loop's own coroutine waits for it (as DuckDB's
    worker threads may): the pull finds the loop stuck and gives up instead of hanging."""
    async with aorc.open_reader(str(orc_file)) as reader:
        errors: list[BaseException] = []

        def consume() -> None:
            try:
                pa.table(reader)
            except BaseException as exc:  # noqa: BLE001 - checked below
                errors.append(exc)

        thread = threading.Thread(target=consume)
        thread.start()
        thread.join()  # blocks the loop: the deadlock the pull must detect
        assert len(errors) == 1  # (an ArrowInvalid: pyarrow carries it across the C stream)
        assert "deadlock" in str(errors[0]) and "aorc.sync" in str(errors[0])
        assert (await reader.read(["id"])).num_rows == ROWS  # the reader is still usable


def test_a_reader_whose_loop_is_closed_is_refused(orc_file: pathlib.Path) -> None:
    data = orc_file.read_bytes()
    reader = asyncio.run(_open(data))
    with pytest.raises(AorcError, match="closed.*aorc.sync"):
        pa.table(reader)


def test_a_reader_on_another_thread_s_loop_serves_any_thread(orc_file: pathlib.Path,
                                                            oracle: pa.Table) -> None:
    """The reader's loop runs in one thread, the consumer (and DuckDB's own threads) in
    others."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:
        reader = asyncio.run_coroutine_threadsafe(_open(orc_file), loop).result()
        assert duckdb.sql("SELECT sum(id) FROM reader").fetchall() == [(sum(range(ROWS)),)]
        assert pa.table(reader).equals(oracle)
        asyncio.run_coroutine_threadsafe(reader.close(), loop).result()
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join()
        loop.close()


async def _open(source: pathlib.Path | bytes) -> OrcReader:
    return await aorc.open_reader(source)


# =========================================================================== early release

@pytest.fixture
def closes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The paths of the readers closed."""
    closed: list[str] = []
    original = OrcReader.close

    async def close(self: OrcReader) -> None:
        closed.append(self.path)
        await original(self)

    monkeypatch.setattr(OrcReader, "close", close)
    return closed


def test_releasing_a_record_batch_reader_early_closes_the_file(orc_file: pathlib.Path,
                                                               closes: list[str]) -> None:
    stream = aorc.sync.record_batch_reader(str(orc_file), batch_size=1_000)
    assert stream.read_next_batch().num_rows == 1_000
    assert closes == []
    stream.close()
    assert closes == [str(orc_file)]
    untouched = aorc.sync.record_batch_reader(str(orc_file))
    del untouched  # never pulled: released all the same
    assert len(closes) == 2
    whole = aorc.sync.record_batch_reader(str(orc_file))
    assert whole.read_all().num_rows == ROWS
    assert len(closes) == 3
    limited = aorc.sync.record_batch_reader(str(orc_file))
    assert duckdb.sql("SELECT id FROM limited LIMIT 3").fetchall() == [(0,), (1,), (2,)]
    limited.close()  # (DuckDB leaves the stream where it stopped)
    assert len(closes) == 4


def test_releasing_a_batch_stream_early_ends_its_read(orc_file: pathlib.Path) -> None:
    """DuckDB stops after a LIMIT: the read ends there (its fetches cancelled), the reader
    stays open for the next read."""
    with aorc.sync.open_reader(str(orc_file)) as reader:
        assert duckdb.sql("SELECT id FROM reader LIMIT 5").fetchall() == [(i,) for i in
                                                                         range(5)]
        assert not reader.reader._tasks  # no fetch left running
        stream = reader.reader.iter_batches(batch_size=100)
        exported = stream.to_reader()
        assert exported.read_next_batch().num_rows == 100
        exported.close()
        with pytest.raises(StopAsyncIteration):
            aorc.sync.run(_next(stream))
        assert not reader.reader._tasks
        assert reader.read(["id"]).num_rows == ROWS


async def _next(stream: BatchStream) -> pa.RecordBatch:
    return await anext(stream)


def test_a_batch_stream_is_read_once(orc_file: pathlib.Path) -> None:
    """Iterating and exporting share the rows of one read."""
    with aorc.sync.open_reader(str(orc_file)) as reader:
        stream = reader.reader.iter_batches(batch_size=10_000)
        first = aorc.sync.run(_next(stream))
        rest = pa.table(stream)
        assert first.num_rows + rest.num_rows == ROWS
        assert rest.column("id")[0].as_py() == first.num_rows
        assert pa.table(stream).num_rows == 0
