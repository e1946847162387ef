"""Many small local files read a group per worker task (aorc.dataset.local): a few
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
from aorc.dataset import local as dataset_local
from aorc.dataset.discovery import DatasetFile

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


# --------------------------------------------------------------------------- the lean path

def _write(path: Path, table: pa.Table) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    pa_orc.write_table(table, str(path))


@pytest.fixture
def mixed(tmp_path: Path) -> Path:
    """Two schemas interleaved within partitions: old files (id int32, x) and new ones
    (id int64, x, t string), so runs of one schema are cut at every file."""
    for i in range(24):
        n = 3 + i % 4
        ids = list(range(i * 10, i * 10 + n))
        if i % 2:
            table = pa.table({"id": pa.array(ids, pa.int64()), "x": [i + 0.5] * n,
                              "t": [f"t{i}"] * n})
        else:
            table = pa.table({"id": pa.array(ids, pa.int32()), "x": [i + 0.5] * n})
        _write(tmp_path / f"p={i % 3}" / f"f{i:03d}.orc", table)
    return tmp_path


def _expected_mixed(root: Path) -> pa.Table:
    """The mixed dataset unified by hand, from pyarrow.orc's reads of each file."""
    rows = []
    for f in sorted(root.glob("p=*/*.orc")):
        t = pa_orc.read_table(str(f)).to_pylist()
        for r in t:
            rows.append({"id": r["id"], "x": r["x"], "t": r.get("t"),
                         "p": int(f.parent.name[2:])})
    return pa.Table.from_pylist(rows, pa.schema([("id", pa.int64()), ("x", pa.float64()),
                                                 ("t", pa.string()), ("p", pa.int32())]))


@pytest.mark.parametrize("columns", [None, ["t", "id"], ["x", "p"]])
async def test_mixed_schemas_read_as_one(mixed: Path, columns: list[str] | None,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Files of two schemas take the per-schema requests: each schema's request is
    worked out once, not once per file, and every row comes back in the unified schema."""
    calls: list[int] = []
    real = aorc.Dataset._file_request

    def counted(self: aorc.Dataset, *args: object) -> object:
        calls.append(1)
        return real(self, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(aorc.Dataset, "_file_request", counted)
    got = await aorc.read_dataset(str(mixed), columns=columns)
    assert len(calls) == 2  # two schemas, 24 files
    want = _expected_mixed(mixed)
    want = want.select(columns) if columns is not None else want
    assert got.schema.names == want.schema.names
    if "id" in got.schema.names:
        assert got.schema.field("id").type == pa.int64()  # int32 files widened
    key = [(n, "ascending") for n in want.column_names]
    assert got.sort_by(key).to_pylist() == want.cast(got.schema).sort_by(key).to_pylist()
    calls.clear()
    ds = await aorc.open_dataset(str(mixed))
    assert (await ds.read(columns)).sort_by(key).to_pylist() == got.sort_by(key).to_pylist()
    assert len(calls) == 2


def _corrupt_stripe_footer(path: Path) -> None:
    """Damage the (first) stripe footer of a file whose tail stays readable."""
    from aorc.format.tail import NeedBytes, parse_tail

    data = bytearray(path.read_bytes())
    tail = parse_tail(bytes(data), len(data))
    assert not isinstance(tail, NeedBytes)
    stripe = tail.stripes[0]
    start = stripe.footer_offset
    data[start:start + stripe.footer_length] = b"\xff" * stripe.footer_length
    path.write_bytes(bytes(data))


async def test_a_corrupt_small_file_names_its_path(tmp_path: Path) -> None:
    for i in range(8):
        _write(tmp_path / f"f{i}.orc", pa.table({"x": [float(i)] * 5}))
    _corrupt_stripe_footer(tmp_path / "f5.orc")
    with pytest.raises(aorc.CorruptFileError, match=r"f5\.orc.*stripe 0"):
        await aorc.read_dataset(str(tmp_path), columns=["x"])
    ds = await aorc.open_dataset(str(tmp_path))
    with pytest.raises(aorc.CorruptFileError, match=r"f5\.orc.*stripe 0"):
        await ds.read(["x"])


async def test_filters_still_prune_and_count(tmp_path: Path) -> None:
    """A data filter still goes through each file's statistics (the lean path is for
    unfiltered reads): the files whose x cannot match are pruned, and the scans of the
    worker groups add up in the dataset's counts."""
    for i in range(40):
        _write(tmp_path / f"p={i % 4}" / f"f{i:03d}.orc",
               pa.table({"x": pa.array([float(i)] * 10), "id": list(range(10))}))
    ds = await aorc.open_dataset(str(tmp_path))
    got = await ds.read(["x"], [("x", ">=", 30.0)])
    assert sorted(set(got.column("x").to_pylist())) == [float(i) for i in range(30, 40)]
    assert ds.scan_stats.stripes_total == 40
    assert ds.scan_stats.stripes_pruned_by_stats == 30
    assert ds.scan_stats.rows_returned == 100
    want = peer(tmp_path, ["x"], pc.field("x") >= 30.0)
    assert sorted(got.column("x").to_pylist()) == sorted(want.column("x").to_pylist())


def test_group_threads() -> None:
    tiny = [DatasetFile(f"/d/f{i}.orc", 1500) for i in range(100)]
    assert dataset_local.group_threads(tiny) == 1
    big = [DatasetFile(f"/d/f{i}.orc", 2 * dataset_local.TINY_FILE_BYTES) for i in range(4)]
    assert dataset_local.group_threads(big) == dataset_local.pool_size()
    assert len(dataset_local._groups(list(range(10_000)), 1)) == 10_000 // 64 + 1


async def test_run_groups_hands_whole_groups() -> None:
    seen: list[int] = []
    got = await dataset_local.run_groups(
        list(range(300)), lambda g: (seen.append(len(g)), [x * 2 for x in g])[1],
        threads=1, done=lambda n: None)
    assert got == [x * 2 for x in range(300)]
    assert sum(seen) == 300 and max(seen) <= dataset_local.GROUP_FILES


async def test_run_groups_stops_at_the_first_failure() -> None:
    """A failing group stops the worker: no group after it starts, and the error is the
    caller's (the groups run in turn on one thread, none through the event loop)."""
    started: list[int] = []
    told: list[int] = []

    def work(group: list[int]) -> list[int]:
        started.append(group[0])
        if group[0] >= 64 * 3:
            raise aorc.CorruptFileError(f"group at {group[0]}")
        return list(group)

    with pytest.raises(aorc.CorruptFileError, match="group at 192"):
        await dataset_local.run_groups(list(range(64 * 10)), work, threads=1,
                                       done=told.append)
    assert started == [0, 64, 128, 192]
    assert sum(told) <= 3 * 64
