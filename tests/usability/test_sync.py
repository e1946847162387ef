"""The blocking facade ``aorc.sync`` (issue 13, item 7): in a script, inside a running event
loop (as in Jupyter), in a fresh interpreter, and with the reader's metadata."""

from __future__ import annotations

import asyncio
import io
import subprocess
import sys
from pathlib import Path

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


@pytest.mark.parametrize("name", ["read_dataset", "write_dataset"])
def test_dataset_functions_follow_aorc(name: str) -> None:
    if hasattr(aorc, name) is False:
        with pytest.raises(AttributeError):
            getattr(aorc.sync, name)
    if not hasattr(aorc, name):
        pytest.skip(f"aorc.{name} is not in this tree yet")
    assert callable(getattr(aorc.sync, name))
