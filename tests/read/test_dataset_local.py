"""Many small local files read a group per worker task (aorc.read.dataset_local): a few
hundred generated Hive files read whole, by column, filtered on partitions, data and
expressions, equal to pyarrow.dataset; one request per file; invalid files skipped when
asked; progress told of every file; groups bounded."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as pads
import pyarrow.orc as pa_orc
import pytest

import aorc
from aorc.read import dataset_local
from aorc.read.discovery import DatasetFile

FILES = 300


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("small")
    rng = np.random.default_rng(7)
    for i in range(FILES):
        folder = base / f"g={i % 10}" / f"h={'ab'[i % 2]}"
        folder.mkdir(parents=True, exist_ok=True)
        n = int(rng.integers(0, 40))
        pa_orc.write_table(pa.table({
            "id": pa.array(np.arange(i * 100, i * 100 + n, dtype=np.int64)),
            "x": pa.array(rng.normal(size=n)),
            "s": pa.array([f"s{j % 5}" if j % 7 else None for j in range(n)], pa.string()),
        }), str(folder / f"f{i:04d}.orc"))
    return base


def peer(root: Path, columns: list[str] | None = None,
         expr: pc.Expression | None = None) -> pa.Table:
    ds = pads.dataset(str(root), format="orc", partitioning="hive")
    return ds.to_table(columns=columns, filter=expr)


def same(got: pa.Table, want: pa.Table) -> None:
    assert got.column_names == want.column_names
    order = [("id", "ascending")] if "id" in got.column_names else None
    if order:
        got, want = got.sort_by(order), want.sort_by(order)
    for name in got.column_names:
        assert got.column(name).to_pylist() == want.column(name).to_pylist(), name


@pytest.mark.parametrize(("columns", "filters", "expr"), [
    (None, None, None),
    (["x"], None, None),
    (["id", "g"], [("g", ">=", 7)], pc.field("g") >= 7),
    (["id", "s"], [("h", "==", "a"), ("x", ">", 0.0)],
     (pc.field("h") == "a") & (pc.field("x") > 0.0)),
    (["id"], pc.field("s").isin(["s1", "s3"]) | (pc.field("g") == 2),
     pc.field("s").isin(["s1", "s3"]) | (pc.field("g") == 2)),
    ([], [("x", "<", -1.0)], pc.field("x") < -1.0),
])
async def test_reads_equal_pyarrow(root: Path, columns: list[str] | None, filters: object,
                                   expr: pc.Expression | None) -> None:
    ds = await aorc.open_dataset(str(root), schema_from="first")
    got = await ds.read(columns, filters)
    want = peer(root, columns, expr)
    if columns == []:
        assert got.num_rows == want.num_rows
    else:
        same(got, want)


async def test_one_request_per_file_and_progress(root: Path) -> None:
    ds = await aorc.open_dataset(str(root), tail_cache_bytes=0)
    assert ds.io_stats.requests == FILES
    seen: list[int] = []
    got = await ds.read(["id"], progress=lambda e: seen.append(e.done))
    assert ds.io_stats.requests == 2 * FILES  # no tail kept: each file read once more
    assert seen[-1] == FILES
    assert got.num_rows == peer(root, ["id"]).num_rows
    assert await ds.count_rows() == got.num_rows


async def test_invalid_files_skipped_or_raised(tmp_path: Path) -> None:
    for i in range(6):
        pa_orc.write_table(pa.table({"id": [i]}), str(tmp_path / f"f{i}.orc"))
    (tmp_path / "f3.orc").write_bytes(b"not an orc file at all")
    ds = await aorc.open_dataset(str(tmp_path), exclude_invalid_files=True)
    assert sorted((await ds.read()).column("id").to_pylist()) == [0, 1, 2, 4, 5]
    with pytest.raises(aorc.CorruptFileError, match="f3.orc"):
        await aorc.open_dataset(str(tmp_path))


def test_groups_bounded() -> None:
    items = list(range(10_000))
    groups = dataset_local._groups(items)
    assert max(len(g) for g in groups) <= dataset_local.GROUP_FILES
    assert [x for g in groups for x in g] == items
    assert len(dataset_local._groups(items[:5])) == 5
    assert not dataset_local.all_small_local([])
    assert not dataset_local.all_small_local([DatasetFile("s3://b/k.orc", 10)])
    assert not dataset_local.all_small_local([DatasetFile("/x.orc", 1 << 30)])
    assert dataset_local.all_small_local([DatasetFile("/x.orc", 10)])
