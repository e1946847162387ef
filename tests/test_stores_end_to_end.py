"""Every entry point takes gs:// and az:// (and abfss://) URLs as it takes s3://: read_table,
open_reader, write_table, open_writer, write_dataset / open_dataset / read_dataset, RollingSink,
aorc.sync and the CLI; the bytes aorc writes are read back with pyarrow.orc from the store's
own peer (not through aorc), and files pyarrow wrote are read by aorc."""

from __future__ import annotations

import io
import json
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.orc as po
import pytest
from helpers.cli import run
from helpers.store_harness import Backend, make_backend

import aorc
import aorc.sync

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(params=["s3", "gs", "az"])
def backend(request: pytest.FixtureRequest) -> Backend:
    return make_backend(request.param, request)


def events(rows: int, seed: int = 0) -> pa.Table:
    rng = np.random.default_rng(seed)
    return pa.table({
        "id": pa.array(np.arange(rows, dtype=np.int64)),
        "country": pa.array(rng.choice(["DE", "FR", "US"], rows)),
        "amount": pa.array(rng.normal(100, 15, rows)),
        "note": pa.array([f"n{i % 4099:05d}" for i in range(rows)]),
    })


def orc_bytes(table: pa.Table, **options: Any) -> bytes:
    sink = io.BytesIO()
    po.write_table(table, sink, **options)
    return sink.getvalue()


async def test_write_table_and_read_table(backend: Backend) -> None:
    table = events(200_000)
    url = backend.url("t/events.orc")
    await aorc.write_table(table, url, storage_options=backend.options, stripe_size=1 << 20)
    written = backend.get("t/events.orc")
    assert written is not None and po.read_table(io.BytesIO(written)).equals(table)
    got = await aorc.read_table(url, columns=["id", "country"],
                                filters=[("id", ">=", 150_000)], storage_options=backend.options)
    assert got.equals(table.filter(pc.field("id") >= 150_000).select(["id", "country"]))
    backend.put("t/pyarrow.orc", orc_bytes(table, stripe_size=1 << 20))
    async with aorc.open_reader(backend.url("t/pyarrow.orc"),
                                storage_options=backend.options) as reader:
        assert reader.num_stripes > 1
        batches = [b async for b in reader.iter_batches(batch_size=50_000)]
        assert reader.io_stats.requests >= 2
    assert pa.Table.from_batches(batches).equals(table)


async def test_open_writer_streams_a_large_file(backend: Backend) -> None:
    table = events(300_000, seed=1)
    noise = np.random.default_rng(1).integers(0, 256, (table.num_rows, 24), dtype=np.uint8)
    table = table.append_column("noise", pa.array(list(map(bytes, noise)), pa.binary()))
    url = backend.url("w/big.orc")
    options = {**backend.options, "part_size": 5 << 20}
    async with aorc.open_writer(url, table.schema, storage_options=options,
                                compression="none") as writer:
        for batch in table.to_batches(max_chunksize=50_000):
            await writer.write(batch)
    written = backend.get("w/big.orc")
    assert written is not None and len(written) > 5 << 20  # more than one part
    assert po.read_table(io.BytesIO(written)).equals(table)
    assert len(backend.records("part")) >= 2


async def test_datasets(backend: Backend) -> None:
    table = events(30_000, seed=2)
    paths = await aorc.write_dataset(table, backend.url("lake/"), partition_cols=["country"],
                                     storage_options=backend.options)
    assert len(paths) == 3 and all(p.startswith(backend.root + "/lake/country=") for p in paths)
    assert sorted(backend.names()) == sorted(p[len(backend.root) + 1:] for p in paths)
    dataset = await aorc.open_dataset(backend.url("lake/"), storage_options=backend.options)
    got = await dataset.read(filters=[("country", "==", "FR"), ("amount", ">", 100.0)])
    expected = table.filter((pc.field("country") == "FR") & (pc.field("amount") > 100.0))
    assert sorted(got.column("id").to_pylist()) == sorted(expected.column("id").to_pylist())
    whole = await aorc.read_dataset(backend.url("lake"), storage_options=backend.options)
    assert whole.num_rows == table.num_rows
    assert await aorc.read_table(backend.url("lake/"), columns=["id"],
                                 storage_options=backend.options) is not None


async def test_rolling_sink(backend: Backend) -> None:
    schema = pa.schema([("id", pa.int64()), ("country", pa.string())])
    commits: list[aorc.SinkCommit] = []

    async def on_commit(commit: aorc.SinkCommit) -> None:
        commits.append(commit)

    async with aorc.RollingSink(backend.url("sink/"), schema, partition_by=["country"],
                                time_partitioning=None, max_rows=4000, on_commit=on_commit,
                                storage_options=backend.options) as sink:
        for start in range(0, 10_000, 1000):
            batch = pa.record_batch({"id": pa.array(range(start, start + 1000), pa.int64()),
                                     "country": pa.array(["DE", "FR"] * 500)}, schema=schema)
            await sink.write(batch, topic="t", partition=0,
                             offsets=pa.array(range(start, start + 1000), pa.int64()))
    assert commits and commits[-1].offset == 9999
    names = backend.names()
    assert names and all(n.startswith("sink/country=") for n in names)
    ids = []
    for name in names:
        data = backend.get(name)
        assert data is not None
        ids += po.read_table(io.BytesIO(data)).column("id").to_pylist()
    assert sorted(ids) == list(range(10_000))


def test_sync_facade(backend: Backend) -> None:
    table = events(5_000, seed=3)
    aorc.sync.write_table(table, backend.url("s/t.orc"), storage_options=backend.options)
    assert aorc.sync.read_table(backend.url("s/t.orc"),
                                storage_options=backend.options).equals(table)
    with aorc.sync.open_reader(backend.url("s/t.orc"), storage_options=backend.options) as r:
        assert r.num_rows == 5_000


def test_cli(backend: Backend, monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI reaches every store with the settings of the environment (and ``-S``)."""
    backend.put("c/t.orc", orc_bytes(events(1_000, seed=4)))
    extra = [f"-S{k}={v}" for k, v in backend.options.items() if k == "endpoint_url"]
    count = run("count", *extra, backend.url("c/t.orc"))
    assert count.returncode == 0, count.stderr
    assert "1000" in count.stdout
    head = run("head", "-n", "2", *extra, backend.url("c/t.orc"))
    assert head.returncode == 0, head.stderr
    assert [json.loads(line)["id"] for line in head.stdout.splitlines()] == [0, 1]
    meta = run("meta", *extra, backend.url("c/t.orc"))
    assert meta.returncode == 0 and "country" in meta.stdout
