"""The blocking facade ``aorc.sync`` (issue 13, item 7): in a script, inside a running event
loop (as in Jupyter), in a fresh interpreter, and with the reader's metadata."""

from __future__ import annotations

import asyncio
import inspect
import io
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.orc as po
import pytest

import aorc
import aorc.sync

TABLE = pa.table({"id": list(range(1000)), "name": [f"n{i}" for i in range(1000)]})


def test_script_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "new" / "dir" / "t.orc"  # parent folders are created (item 8)
    aorc.sync.write_table(TABLE, path, compression="zstd")
    assert po.read_table(path).equals(TABLE)
    assert aorc.sync.read_table(path, columns=["name", "id"]).equals(TABLE.select(["name", "id"]))
    assert aorc.sync.read_table(path, filters=[("id", "<", 3)]).num_rows == 3


async def test_inside_a_running_loop(tmp_path: Path) -> None:
    """A notebook cell runs inside a running loop, where asyncio.run fails."""
    path = tmp_path / "t.orc"
    coroutine = aorc.read_table(path)
    with pytest.raises(RuntimeError):
        asyncio.run(coroutine)  # what users hit without the facade
    coroutine.close()
    aorc.sync.write_table(TABLE, path)
    assert aorc.sync.read_table(path).equals(TABLE)
    with aorc.sync.open_reader(path) as reader:
        assert reader.num_rows == 1000


def test_reader_metadata_and_batches(tmp_path: Path) -> None:
    path = tmp_path / "t.orc"
    aorc.sync.write_table(TABLE, path, metadata={"k": "v"})
    with aorc.sync.open_reader(path) as reader:
        assert reader.schema == po.ORCFile(path).schema
        assert reader.num_rows == 1000 and reader.metadata == {"k": b"v"}
        assert reader.statistics["id"].maximum == 999
        assert reader.read_stripe_footer(0).index == 0
        batches = list(reader.iter_batches(batch_size=300))
        assert [b.num_rows for b in batches] == [300, 300, 300, 100]
        first = next(iter(reader.iter_batches(["id"], batch_size=10)))  # left unfinished
        assert first.num_rows == 10
        assert reader.read(["id"], filters=[("id", ">=", 998)]).num_rows == 2
    with pytest.raises(aorc.AorcError, match="closed"):
        reader.read()


def test_errors_propagate(tmp_path: Path) -> None:
    with pytest.raises(aorc.ObjectNotFoundError):
        aorc.sync.read_table(tmp_path / "missing.orc")
    sink = io.BytesIO()
    po.write_table(TABLE, sink)
    with aorc.sync.open_reader(sink.getvalue()) as reader:  # bytes are a source too
        with pytest.raises(aorc.SchemaError):
            reader.iter_batches(batch_size=0)
        with pytest.raises(aorc.SchemaError, match="'nope'"):
            reader.read(filters=[("nope", "==", 1)])


def test_not_from_the_private_loop() -> None:
    async def inner() -> None:
        with pytest.raises(aorc.AorcError, match="own event loop"):
            aorc.sync.read_table(b"")

    aorc.sync.run(inner())


def test_fresh_interpreter_exits_cleanly(tmp_path: Path) -> None:
    script = (f"import aorc.sync, pyarrow as pa\n"
              f"aorc.sync.write_table(pa.table({{'a': [1, 2]}}), {str(tmp_path / 'x.orc')!r})\n"
              f"print(aorc.sync.read_table({str(tmp_path / 'x.orc')!r}).num_rows)\n")
    done = subprocess.run([sys.executable, "-W", "error", "-c", script], capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "2" and done.stderr == ""


FUNCTIONS = ["read_table", "write_table", "read_dataset", "write_dataset", "open_reader",
             "open_dataset", "open_writer"]


@pytest.mark.parametrize("name", FUNCTIONS)
def test_same_arguments_as_the_async_functions(name: str) -> None:
    """Issue 24 item 9: every blocking function takes the async one's arguments."""
    ours = inspect.signature(getattr(aorc.sync, name)).parameters
    theirs = inspect.signature(getattr(aorc, name)).parameters
    assert [(p.name, p.kind, p.default) for p in ours.values()] == \
        [(p.name, p.kind, p.default) for p in theirs.values()]


@pytest.mark.parametrize(("ours", "theirs"), [
    (aorc.sync.SyncReader.read, aorc.OrcReader.read),
    (aorc.sync.SyncReader.iter_batches, aorc.OrcReader.iter_batches),
    (aorc.sync.SyncDataset.iter_batches, aorc.Dataset.iter_batches),
    (aorc.sync.SyncDataset.to_batches, aorc.Dataset.to_batches),
    (aorc.sync.SyncWriter.write, aorc.OrcWriter.write),
    (aorc.sync.RollingSink.write, aorc.RollingSink.write),
    (aorc.sync.RollingSink.flush, aorc.RollingSink.flush),
])
def test_methods_take_the_same_arguments(ours: Any, theirs: Any) -> None:
    assert [(p.name, p.kind, p.default) for p in inspect.signature(ours).parameters.values()] \
        == [(p.name, p.kind, p.default) for p in inspect.signature(theirs).parameters.values()]


def test_rolling_sink_takes_the_sinks_arguments() -> None:
    theirs = set(inspect.signature(aorc.RollingSink).parameters)
    ours = inspect.signature(aorc.sync.RollingSink).parameters
    assert {"prefix", "schema", "on_commit"} <= set(ours)
    assert ours["kwargs"].kind == inspect.Parameter.VAR_KEYWORD
    assert theirs - {"prefix", "schema", "on_commit"}  # all passed through **kwargs


def test_everything_is_listed() -> None:
    assert sorted(aorc.sync.__all__) == aorc.sync.__all__
    for name in aorc.sync.__all__:
        assert name in dir(aorc.sync) and getattr(aorc.sync, name) is not None
    assert {"read_dataset", "write_dataset", "open_dataset", "open_writer",
            "RollingSink"} <= set(aorc.sync.__all__)
    doc = (aorc.sync.__doc__ or "") + Path(__file__).parents[2].joinpath("README.md").read_text()
    assert "being added" not in doc and "when aorc has them" not in doc


def test_reader_takes_stripes_threads_unit_and_dictionaries(tmp_path: Path) -> None:
    path = tmp_path / "t.orc"
    big = pa.table({"id": list(range(200_000)), "name": [f"n{i % 97}" for i in range(200_000)]})
    po.write_table(big, path, stripe_size=64 * 1024)
    with aorc.sync.open_reader(path, timestamp_unit="us", read_dictionary=["name"]) as r:
        assert r.num_stripes > 1 and r.timestamp_unit == "us"
        first = r.read(["id"], stripes=[0], use_threads=False)
        assert first.column("id").to_pylist() == list(range(first.num_rows))
        batches = list(r.iter_batches(["name"], stripes=[1], use_threads=1))
        assert batches and pa.types.is_dictionary(batches[0].schema.field("name").type)
        assert "read_stripe_footer" in dir(r) and "num_rows" in dir(r)
    assert aorc.sync.read_table(path, stripes=[0], use_threads=False).equals(
        big.slice(0, first.num_rows))


def test_datasets(tmp_path: Path) -> None:
    written = aorc.sync.write_dataset(TABLE.append_column("k", pa.array([i % 2 for i in
                                                                         range(1000)])),
                                      tmp_path / "ds", partition_cols=["k"])
    assert len(written) == 2
    dataset = aorc.sync.open_dataset(tmp_path / "ds", timestamp_unit="us")
    assert dataset.schema.names == ["id", "name", "k"] and len(dataset.files) == 2
    assert dataset.count_rows([("k", "==", 1)]) == 500
    assert dataset.read(["id"], [("id", "<", 3)]).num_rows == 3
    assert dataset.to_table(["id"], filter=[("id", "<", 3)]).num_rows == 3
    assert dataset.head(5).num_rows == 5
    assert sum(b.num_rows for b in dataset.iter_batches(batch_size=100)) == 1000
    assert sum(b.num_rows for b in dataset.to_batches(batch_size=100)) == 1000
    assert aorc.sync.read_dataset(tmp_path / "ds", filters=[("k", "==", 0)]).num_rows == 500


def test_writer_completes_or_aborts(tmp_path: Path) -> None:
    path = tmp_path / "w.orc"
    with aorc.sync.open_writer(path, TABLE.schema, compression="zlib") as writer:
        writer.write(TABLE.slice(0, 600))
        writer.write(TABLE.slice(600))
    assert po.read_table(path).equals(TABLE) and writer.num_rows == 1000
    broken = tmp_path / "broken.orc"
    with pytest.raises(KeyError), aorc.sync.open_writer(broken, TABLE.schema) as writer:
        writer.write(TABLE)
        raise KeyError("stop")
    assert not broken.exists() and list(tmp_path.iterdir()) == [path]


def test_rolling_sink_with_a_plain_callback(tmp_path: Path) -> None:
    commits: list[aorc.SinkCommit] = []
    loop_thread: list[bool] = []

    def on_commit(commit: aorc.SinkCommit) -> None:  # a plain function: runs in a thread
        loop_thread.append(threading.current_thread().name == "aorc-sync-loop")
        commits.append(commit)

    schema = pa.schema([("id", pa.int64()), ("name", pa.string())])
    with aorc.sync.RollingSink(tmp_path / "sink", schema, on_commit=on_commit,
                               time_partitioning=None, max_rows=400) as sink:
        sink.write(TABLE.cast(schema), topic="t", partition=0, offsets=0)
        sink.flush()
        assert sink.stats.rows_written == 1000
    assert [c.offset for c in commits][-1] == 999 and loop_thread and not any(loop_thread)
    files = sorted((tmp_path / "sink").rglob("*.orc"))
    assert sum(po.read_table(f).num_rows for f in files) == 1000
