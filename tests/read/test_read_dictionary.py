"""``read_dictionary=`` (issue 24 item 12): chosen string columns read as Arrow dictionaries
straight from ORC's dictionary encoding. Peer: pyarrow.orc's values (and its writer's
dictionary decisions, seen through the stripe footers)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.orc as pa_orc
import pytest

import aorc

DICT = pa.dictionary(pa.int32(), pa.string())


@pytest.fixture
def path(tmp_path: Path) -> Path:
    n = 30_000
    table = pa.table({
        "id": pa.array(range(n), pa.int64()),
        "city": pa.array([None if i % 11 == 0 else f"city{i % 7}" for i in range(n)]),
        "uuid": pa.array([f"{i:032x}" for i in range(n)]),  # all distinct: direct encoding
        "tags": pa.array([[f"t{i % 3}", f"t{i % 5}"] for i in range(n)]),
        "blob": pa.array([bytes([i % 4]) for i in range(n)], pa.binary()),
    })
    out = tmp_path / "t.orc"
    pa_orc.write_table(table, str(out), stripe_size=64 * 1024, row_index_stride=1000,
                       dictionary_key_size_threshold=0.5)
    return out


async def test_values_and_types_as_the_peer_reads_them(path: Path) -> None:
    want = pa_orc.read_table(str(path))
    async with aorc.open_reader(path, read_dictionary=["city", "uuid", "tags", "blob"]) as r:
        assert r.schema.field("city").type == DICT
        assert r.schema.field("uuid").type == DICT
        assert r.schema.field("tags").type == pa.list_(pa.field("item", DICT))
        assert r.schema.field("blob").type == pa.dictionary(pa.int32(), pa.binary())
        assert r.schema.field("id").type == pa.int64()
        got = await r.read()
        assert got.schema == r.schema
        for name in want.column_names:
            assert got.column(name).to_pylist() == want.column(name).to_pylist(), name
        filtered = await r.read(["city"], filters=[("id", ">=", 29_000), ("city", "==", "city3")])
        assert filtered.schema.field("city").type == DICT
        expected = [v for i, v in enumerate(want.column("city").to_pylist())
                    if i >= 29_000 and v == "city3"]
        assert filtered.column("city").to_pylist() == expected
        batches = [b async for b in r.iter_batches(["city"], batch_size=5000)]
        assert all(b.schema.field("city").type == DICT for b in batches)


async def test_dictionary_stripes_keep_orcs_dictionary(path: Path) -> None:
    """A dictionary-encoded stripe's Arrow dictionary is the stripe's ORC dictionary (its
    entries, not one per row); a direct-encoded stripe is dictionary-encoded as read."""
    async with aorc.open_reader(path, read_dictionary=["city", "uuid"]) as r:
        city_id = r.column_names().index("city")
        uuid_id = r.column_names().index("uuid")
        sizes, kinds = [], []
        for i in range(r.num_stripes):
            footer = await r.read_stripe_footer(i)
            enc = {e.column: e for e in footer.encodings}
            sizes.append(enc[city_id].dictionary_size)
            kinds.append(enc[uuid_id].kind)
        assert all(s is not None for s in sizes)  # the peer wrote city as a dictionary
        assert all(k.startswith("DIRECT") for k in kinds)
        batches = [b async for b in r.iter_batches(["city", "uuid"], batch_size=10**9)]
        assert len(batches) == r.num_stripes
        for batch, size in zip(batches, sizes, strict=True):
            city = batch.column("city")
            assert len(city.dictionary) == size
            uuids = batch.column("uuid")
            assert len(uuids.dictionary) == batch.num_rows  # all distinct


async def test_read_table_and_datasets(path: Path, tmp_path: Path) -> None:
    got = await aorc.read_table(path, columns=["city"], read_dictionary=["city"])
    assert got.schema.field("city").type == DICT
    other = tmp_path / "more" / "b.orc"
    other.parent.mkdir()
    pa_orc.write_table(pa.table({"id": pa.array([1], pa.int64())}), str(other))
    folder = tmp_path / "more"
    (folder / "a.orc").write_bytes(path.read_bytes())
    for table in (await aorc.read_dataset(folder, read_dictionary=["city"]),
                  await (await aorc.open_dataset(folder, read_dictionary=["city"])).read()):
        assert table.schema.field("city").type == DICT
        assert table.column("city").to_pylist()[-1] is None  # b.orc has no city
        assert table.num_rows == 30_001
    with pytest.raises(aorc.SchemaError, match="read_dictionary: no data column 'nope'"):
        await aorc.read_dataset(folder, read_dictionary=["nope"])


@pytest.mark.parametrize(("names", "message"), [
    (["id"], "only string"), (["nope"], "nope"), ("city", "list of column names"),
    ([""], "not a column name")])
async def test_bad_read_dictionary(path: Path, names: object, message: str) -> None:
    with pytest.raises(aorc.SchemaError, match=message):
        async with aorc.open_reader(path, read_dictionary=names):  # type: ignore[arg-type]
            pass
