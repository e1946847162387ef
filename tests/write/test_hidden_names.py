"""Names that would make a folder or file hidden (``_x``, ``.x``: listings skip them, as
Spark and Hive do) are refused or escaped when writing, so no row is lost silently on the
way back: write_dataset's partition columns, RollingSink's partition columns, time folders
and topics."""

from __future__ import annotations

import datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.dataset as pads
import pytest

import aorc
from aorc.sink.rolling import RollingSink


@pytest.mark.parametrize("name", ["_k", ".k", "__k"])
async def test_write_dataset_refuses_hidden_partition_columns(tmp_path: Path,
                                                              name: str) -> None:
    table = pa.table({name: [1, 1, 2, 2], "v": [1, 2, 3, 4]})
    with pytest.raises(aorc.SchemaError, match="hidden") as info:
        await aorc.write_dataset(table, tmp_path / "ds", partition_cols=[name])
    assert repr(name) in str(info.value)
    assert not (tmp_path / "ds").exists()


async def test_partition_values_that_look_hidden_keep_their_rows(tmp_path: Path) -> None:
    """A value starting with '_' or '.' makes ``k=_a``, not a hidden folder: every row is
    read back, by aorc and by pyarrow."""
    values = ["_a", ".b", "c", None, "_"]
    table = pa.table({"k": values, "v": list(range(len(values)))})
    await aorc.write_dataset(table, tmp_path / "ds", partition_cols=["k"])
    back = await aorc.read_dataset(tmp_path / "ds")
    assert sorted(back.column("v").to_pylist()) == list(range(len(values)))
    peer = pads.dataset(str(tmp_path / "ds"), format="orc", partitioning="hive").to_table()
    assert peer.num_rows == len(values)


def _events(n: int = 4) -> pa.Table:
    start = datetime.datetime(2026, 11, 27, 10, tzinfo=datetime.UTC)
    return pa.table({"offset": pa.array(range(n), pa.int64()),
                     "p": [f"x{i % 2}" for i in range(n)],
                     "ts": pa.array([start + datetime.timedelta(hours=i) for i in range(n)],
                                    pa.timestamp("us", "UTC"))})


@pytest.mark.parametrize("topic", ["_schemas", ".t", "__consumer_offsets"])
async def test_sink_topics_that_look_hidden_keep_their_rows(tmp_path: Path, topic: str) -> None:
    """Kafka topics may start with '_' (``_schemas``): the file name escapes it, so the
    files are listed and every row is read back (before: 0 rows of 4, no error)."""
    t = _events()
    async with RollingSink(tmp_path, t.schema, event_time="ts") as sink:
        await sink.write(t, topic=topic, partition=0, offsets="offset")
    back = await aorc.read_dataset(tmp_path)
    assert sorted(back.column("offset").to_pylist()) == [0, 1, 2, 3]
    names = {f.name for f in tmp_path.rglob("*.orc")}
    assert len(names) == 4 and not any(n.startswith(("_", ".")) for n in names)
    assert all(n.startswith(f"%{ord(topic[0]):02X}{topic[1:]}+0+") for n in names)


@pytest.mark.parametrize("options", [
    {"partition_by": ["_p"]},
    {"event_time": "ts", "time_partitioning": "_dt=%Y-%m-%d"},
    {"event_time": "ts", "time_partitioning": "dt=%Y-%m-%d/.hour=%H"},
], ids=["partition_by", "time-folder", "second-time-folder"])
def test_sink_refuses_hidden_folder_names(tmp_path: Path, options: dict[str, object]) -> None:
    t = _events().rename_columns(["offset", "_p", "ts"])
    with pytest.raises(aorc.SchemaError, match="hidden"):
        RollingSink(tmp_path, t.schema, **options)  # type: ignore[arg-type]
