"""RollingSink.evolve (a source's schema widened: every stream cut, the next files with the
new columns) and before_complete (a fence: a cut whose files must not be completed), read
back by pyarrow.orc and aorc.read_dataset."""

from __future__ import annotations

import pathlib

import pyarrow as pa
import pyarrow.orc as po
import pytest

import aorc
from aorc.errors import SchemaError
from aorc.sink import RollingSink, SinkCommit

V1 = pa.schema([("n", pa.int64()), ("s", pa.string())])
V2 = pa.schema([("n", pa.int64()), ("s", pa.string()), ("extra", pa.string())])


def rows(schema: pa.Schema, first: int, count: int) -> pa.RecordBatch:
    data = {"n": list(range(first, first + count)), "s": [f"s{i}" for i in
                                                         range(first, first + count)]}
    if "extra" in schema.names:
        data["extra"] = [f"e{i}" for i in range(first, first + count)]
    return pa.RecordBatch.from_pydict(data, schema=schema)


async def test_evolve_cuts_every_stream(tmp_path: pathlib.Path) -> None:
    commits: list[SinkCommit] = []

    async def on_commit(c: SinkCommit) -> None:
        commits.append(c)

    async with RollingSink(tmp_path, V1, time_partitioning=None, max_rows=1000,
                           on_commit=on_commit) as sink:
        for p in range(2):
            await sink.write(rows(V1, 0, 30), topic="t", partition=p, offsets=0)
        await sink.evolve(V1)  # the same schema: nothing happens
        assert not commits
        await sink.evolve(V2)
        assert sorted((c.partition, c.offset, c.reason) for c in commits) == [
            (0, 29, "schema"), (1, 29, "schema")]
        assert sink.stats.cuts == {"schema": 2} and sink.schema.equals(V2)
        with pytest.raises(SchemaError):  # rows of the old schema no longer fit
            await sink.write(rows(V1, 30, 5), topic="t", partition=0, offsets=30)
        for p in range(2):
            await sink.write(rows(V2, 30, 20), topic="t", partition=p, offsets=30)
    files = sorted(tmp_path.rglob("*.orc"))
    assert [f.name for f in files] == [f"t+{p}+{o:020d}.orc" for p in range(2)
                                       for o in (0, 30)]
    for f in files:
        table = po.ORCFile(str(f)).read()
        assert ("extra" in table.schema.names) == f.name.endswith("30.orc")
    table = await aorc.read_dataset(str(tmp_path))
    assert table.num_rows == 100 and "extra" in table.schema.names
    extra = sorted(zip(table["n"].to_pylist(), table["extra"].to_pylist(), strict=True))
    assert [e for n, e in extra if n < 30] == [None] * 60
    assert [e for n, e in extra if n >= 30] == [f"e{n}" for n, _ in extra if n >= 30]


async def test_before_complete_false_drops_the_cut(tmp_path: pathlib.Path) -> None:
    asked: list[tuple[str, int]] = []
    commits: list[SinkCommit] = []

    async def fence(topic: str, partition: int) -> bool:
        asked.append((topic, partition))
        return partition != 1  # partition 1 is not ours any more

    async def on_commit(c: SinkCommit) -> None:
        commits.append(c)

    async with RollingSink(tmp_path, V1, time_partitioning=None, max_rows=10,
                           on_commit=on_commit, before_complete=fence) as sink:
        for p in range(2):
            await sink.write(rows(V1, 0, 25), topic="t", partition=p, offsets=0)
    assert sorted(set(asked)) == [("t", 0), ("t", 1)] and len(asked) == 6
    assert [(c.partition, c.offset) for c in commits] == [(0, 9), (0, 19), (0, 24)]
    assert sink.stats.cuts_fenced == 3
    names = sorted(f.name for f in tmp_path.rglob("*"))
    assert names == [f"t+0+{o:020d}.orc" for o in (0, 10, 20)]  # no temporaries left
