"""Issue 24, datasets as a new user meets them: expression filters on every entry point,
columns missing from the files a filter leaves, stray files and mixed depths, pyarrow.dataset's
names and directory partitioning. Peer: pyarrow.dataset over the same ORC files."""

from __future__ import annotations

import datetime
import os
import warnings
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as pads
import pyarrow.orc as pa_orc
import pytest

import aorc


def put(path: Path, table: pa.Table) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    pa_orc.write_table(table, str(path))


def sort(table: pa.Table) -> list[dict[str, object]]:
    return sorted(table.to_pylist(), key=repr)


@pytest.fixture
def hive(tmp_path: Path) -> Path:
    """country=DE|NO / files with id, amount, name (one file without ``name``)."""
    put(tmp_path / "country=DE" / "a.orc",
        pa.table({"id": pa.array([1, 2, 3], pa.int64()), "amount": [5.0, 50.0, 500.0],
                  "name": ["ann", "bob", "cy"]}))
    put(tmp_path / "country=NO" / "b.orc",
        pa.table({"id": pa.array([4, 5], pa.int64()), "amount": [7.0, 70.0]}))
    return tmp_path


EXPRESSIONS = {
    "data column": pc.field("amount") > 10,
    "partition column": pc.field("country") == "NO",
    "both, and": (pc.field("country") == "DE") & (pc.field("amount") < 100),
    "both, or": (pc.field("country") == "NO") | (pc.field("id") == 1),
    "unprunable function": pc.utf8_length(pc.field("name")) == 2,
    "isin and is_null": pc.field("id").isin([1, 4, 5]) & pc.field("name").is_null(),
}


@pytest.mark.parametrize("name", list(EXPRESSIONS))
async def test_expression_filters_on_every_entry_point(hive: Path, name: str) -> None:
    """Issue 24 item 3: a pyarrow Expression works on a folder as on one file, with the rows
    pyarrow.dataset gives for it."""
    expr = EXPRESSIONS[name]
    peer = pads.dataset(str(hive), format="orc", partitioning="hive")
    want = peer.to_table(filter=expr)
    expected = sort(want.select(["id", "amount", "country"]))
    for got in (await aorc.read_table(hive, filters=expr),
                await aorc.read_dataset(hive, filters=expr),
                await aorc.read_dataset(hive, filters=expr, schema_from="all"),
                await (await aorc.open_dataset(hive)).read(filters=expr),
                await (await aorc.open_dataset(hive)).to_table(filter=expr)):
        assert sort(got.select(["id", "amount", "country"])) == expected
    dataset = await aorc.open_dataset(hive)
    batches = [b async for b in dataset.iter_batches(["id"], filters=expr, batch_size=1)]
    assert sorted(r["id"] for b in batches for r in b.to_pylist()) == \
        sorted(r["id"] for r in expected)
    assert await dataset.count_rows(filter=expr) == want.num_rows
    assert await dataset.count_rows(expr) == want.num_rows


async def test_expression_prunes_partitions_before_opening(hive: Path) -> None:
    dataset = await aorc.open_dataset(hive)
    assert [os.path.basename(f.path) for f in
            dataset.files_matching(pc.field("country") == "NO")] == ["b.orc"]
    before = dataset.io_stats.requests
    got = await dataset.read(["id"], filters=(pc.field("country") == "NO")
                             & (pc.field("id") > 4))
    assert got.column("id").to_pylist() == [5]
    assert dataset.io_stats.requests - before <= 1  # the one surviving file


async def test_expression_columns_are_checked(hive: Path) -> None:
    with pytest.raises(aorc.SchemaError, match="no column 'nope'"):
        await aorc.read_dataset(hive, filters=pc.field("nope") > 1)
    dataset = await aorc.open_dataset(hive)
    with pytest.raises(aorc.SchemaError, match="not both"):
        await dataset.count_rows([("id", "==", 1)], filter=pc.field("id") == 1)


async def test_column_missing_from_the_files_left_reads_as_nulls(hive: Path) -> None:
    """Issue 24 item 4: ``name`` is only in country=DE's file; a filter that leaves only
    country=NO no longer decides whether the query fails."""
    opened = await aorc.open_dataset(hive)
    assert "name" in opened.schema.names
    for value, names in (("DE", ["ann", "bob", "cy"]), ("NO", [None, None])):
        filters = [("country", "==", value)]
        for got in (await aorc.read_dataset(hive, columns=["name"], filters=filters),
                    await aorc.read_table(hive, columns=["name"], filters=filters),
                    await opened.read(["name"], filters)):
            assert got.column("name").to_pylist() == names
        got = await aorc.read_dataset(hive, filters=[*filters, ("name", "is null")])
        assert got.num_rows == (0 if value == "DE" else 2)
        assert got.schema.field("name").type == pa.string()
    with pytest.raises(aorc.SchemaError, match="no column 'nope'"):
        await aorc.read_dataset(hive, columns=["nope"], filters=[("country", "==", "NO")])


async def test_pruned_tails_are_read_only_when_a_column_is_missing(
        hive: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from aorc.dataset import local as dataset_local
    from aorc.dataset import read as dataset_module

    opened: list[str] = []
    real = dataset_module.open_tail
    real_local = dataset_local.open_local_tail

    async def counting(path: str, *args: object, **kwargs: object) -> object:
        opened.append(os.path.basename(path))
        return await real(path, *args, **kwargs)  # type: ignore[arg-type]

    def counting_local(path: str, *args: object) -> object:  # small local files' way
        opened.append(os.path.basename(path))
        return real_local(path, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(dataset_module, "open_tail", counting)
    monkeypatch.setattr(dataset_local, "open_local_tail", counting_local)
    await aorc.read_dataset(hive, columns=["id"], filters=[("country", "==", "NO")])
    assert opened == ["b.orc"]
    opened.clear()
    await aorc.read_dataset(hive, columns=["name"], filters=[("country", "==", "NO")])
    assert sorted(opened) == ["a.orc", "b.orc"]


async def test_stray_files_do_not_decide_the_layout(tmp_path: Path) -> None:
    """Issue 24 item 5: notes one folder up are skipped by name; a real stray file at
    another depth fails with a message naming the options, or is skipped with a warning."""
    put(tmp_path / "events" / "country=DE" / "a.orc", pa.table({"id": [1]}))
    put(tmp_path / "events" / "country=NO" / "000000_0", pa.table({"id": [2]}))  # Hive's name
    for name in ("notes.txt", "README.md", "manifest.json", "part.crc", "SCHEMA.TXT"):
        (tmp_path / "events" / name).write_text("not data")
    got = await aorc.read_dataset(tmp_path / "events")
    assert sort(got) == [{"id": 1, "country": "DE"}, {"id": 2, "country": "NO"}]

    put(tmp_path / "events" / "stray.orc", pa.table({"id": [3]}))
    with pytest.raises(aorc.SchemaError, match="exclude_invalid_files") as info:
        await aorc.open_dataset(tmp_path / "events")
    assert "stray.orc" in str(info.value) and "path_glob_filter" in str(info.value)
    with pytest.warns(aorc.AorcWarning, match=r"1 file\(s\) skipped.*stray.orc"):
        got = await aorc.read_dataset(tmp_path / "events", exclude_invalid_files=True)
    assert sort(got) == [{"id": 1, "country": "DE"}, {"id": 2, "country": "NO"}]


async def test_path_glob_filter(tmp_path: Path) -> None:
    put(tmp_path / "k=1" / "part-0.orc", pa.table({"id": [1]}))
    put(tmp_path / "k=1" / "part-1", pa.table({"id": [2]}))
    put(tmp_path / "k=2" / "other.orc", pa.table({"id": [3]}))
    (tmp_path / "k=2" / "data.json").write_text("{}")
    cases = {"*.orc": [1, 3], "part-*": [1, 2], "{part-0,other}.orc": [1, 3],
             "part-[1]": [2], "*.json": None}
    for glob, ids in cases.items():
        if ids is None:  # the glob alone decides: it chose a file that is not ORC
            with pytest.raises(aorc.CorruptFileError, match="data.json"):
                await aorc.read_dataset(tmp_path, path_glob_filter=glob)
            continue
        got = await aorc.read_dataset(tmp_path, path_glob_filter=glob)
        assert sorted(got.column("id").to_pylist()) == ids, glob
    with pytest.raises(aorc.SchemaError, match="path_glob_filter"):
        await aorc.open_dataset(tmp_path, path_glob_filter="")


async def test_named_files_are_read_whatever_their_names(tmp_path: Path) -> None:
    put(tmp_path / "data.txt", pa.table({"id": [1]}))
    assert (await aorc.read_dataset([tmp_path / "data.txt"])).num_rows == 1


async def test_pyarrow_dataset_names(hive: Path) -> None:
    """Issue 24 item 10: to_table, to_batches, head, count_rows, schema, files and
    partitioning as pyarrow.dataset spells them."""
    ours = await aorc.open_dataset(hive)
    peer = pads.dataset(str(hive), format="orc", partitioning="hive")
    expr = pc.field("amount") > 6
    assert sort(await ours.to_table(["id", "amount"], filter=expr)) == \
        sort(peer.to_table(["id", "amount"], filter=expr))
    batches = [b async for b in ours.to_batches(["id"], filter=expr, batch_size=2)]
    assert all(b.num_rows <= 2 for b in batches)
    assert sorted(r["id"] for b in batches for r in b.to_pylist()) == [2, 3, 4, 5]
    assert (await ours.head(2, ["id"])).to_pylist() == peer.head(2, ["id"]).to_pylist()
    assert (await ours.head(10, filter=pc.field("id") > 3)).column("id").to_pylist() == [4, 5]
    assert (await ours.head(0)).schema == ours.schema
    assert await ours.count_rows(filter=expr) == peer.count_rows(filter=expr)
    assert [os.fspath(f) for f in ours.files] == sorted(peer.files)
    assert [str(f) for f in ours.files] == sorted(peer.files)
    assert isinstance(ours.partitioning, pads.HivePartitioning)
    assert ours.partitioning.schema == pa.schema([("country", pa.string())])
    assert ours.schema.names == ["id", "amount", "name", "country"]
    with pytest.raises(aorc.SchemaError, match="num_rows"):
        await ours.head(-1)
    flat = await aorc.open_dataset(hive, partitioning=None)
    assert flat.partitioning is None


async def test_directory_partitioning_by_names(tmp_path: Path) -> None:
    """``partitioning=["country", "day"]``: one value per folder level, as pyarrow.dataset
    reads it (types inferred as for hive folders)."""
    for country, day, ids in (("DE", "2024-01-01", [1, 2]), ("DE", "2024-01-02", [3]),
                              ("NO", "2024-01-01", [4])):
        put(tmp_path / country / day / "f.orc", pa.table({"id": pa.array(ids, pa.int64())}))
    ours = await aorc.read_dataset(tmp_path, partitioning=["country", "day"])
    peer = pads.dataset(str(tmp_path), format="orc",
                        partitioning=["country", "day"]).to_table()
    assert ours.schema == pa.schema([("id", pa.int64()), ("country", pa.string()),
                                     ("day", pa.date32())])
    assert sort(ours.set_column(2, "day", ours.column("day").cast(pa.string()))) == sort(peer)
    dataset = await aorc.open_dataset(tmp_path, partitioning=["country", "day"])
    assert isinstance(dataset.partitioning, pads.DirectoryPartitioning)
    got = await dataset.read(["id"], [("day", "==", datetime.date(2024, 1, 1)),
                                      ("country", "==", "DE")])
    assert got.column("id").to_pylist() == [1, 2]
    assert len(dataset.files_matching([("country", "==", "NO")])) == 1
    given = pads.DirectoryPartitioning(pa.schema([("country", pa.string()),
                                                  ("day", pa.string())]))
    typed = await aorc.read_dataset(tmp_path, partitioning=given)
    assert typed.schema.field("day").type == pa.string()

    put(tmp_path / "DE" / "odd.orc", pa.table({"id": pa.array([9], pa.int64())}))
    with pytest.raises(aorc.SchemaError, match="2 folder levels"):
        await aorc.open_dataset(tmp_path, partitioning=["country", "day"])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        skipped = await aorc.read_dataset(tmp_path, partitioning=["country", "day"],
                                          exclude_invalid_files=True)
    assert skipped.num_rows == 4
    assert any(issubclass(w.category, aorc.AorcWarning) and "odd.orc" in str(w.message)
               for w in caught)
    for bad in (["a", "a"], [""], "directory", 3):
        with pytest.raises(aorc.SchemaError, match="partitioning"):
            await aorc.open_dataset(tmp_path, partitioning=bad)


async def test_empty_files_are_skipped_by_datasets_and_refused_alone(tmp_path: Path) -> None:
    """Issue 24 item 6: a 0-byte file read on its own raises CorruptFileError (as
    pyarrow.orc refuses it); a dataset skips it, as Hive writes empty ORC files so."""
    put(tmp_path / "a.orc", pa.table({"id": [1]}))
    (tmp_path / "empty.orc").write_bytes(b"")
    with pytest.raises(aorc.CorruptFileError, match="empty file"):
        await aorc.read_table(tmp_path / "empty.orc")
    with pytest.raises(OSError, match="too small"):
        pa_orc.read_table(str(tmp_path / "empty.orc"))
    assert (await aorc.read_table(tmp_path)).column("id").to_pylist() == [1]
    with pytest.raises(aorc.CorruptFileError, match="empty"):
        async with aorc.open_reader(b""):
            pass
