"""``schema_mapping="position"``: a dataset's files matched to ``schema=`` by column position
(ORC Java's ``orc.force.positional.evolution``), and the automatic positional mapping of
files whose columns are all ``_col0, _col1, ...`` (Hive 1's files, which ORC Java maps by
position in ``SchemaEvolution``), here with files written by ORC C++ (pyarrow)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.orc as pa_orc
import pytest

import aorc
import aorc.sync

SCHEMA = pa.schema([("id", pa.int64()), ("name", pa.string())])


def write(tmp_path: Path) -> Path:
    root = tmp_path / "ds"
    root.mkdir()
    pa_orc.write_table(pa.table({"a": [1, 2], "b": ["x", "y"]}), root / "f1.orc")
    pa_orc.write_table(pa.table({"k": [3, 4], "v": ["z", None]}), root / "f2.orc")
    pa_orc.write_table(pa.table({"_col0": [5], "_col1": ["hive1"]}), root / "f3.orc")
    return root


def test_forced_positional_mapping(tmp_path: Path) -> None:
    root = write(tmp_path)
    got = aorc.sync.read_dataset(root, schema=SCHEMA, schema_mapping="position")
    assert sorted(got.to_pylist(), key=lambda r: r["id"]) == [
        {"id": 1, "name": "x"}, {"id": 2, "name": "y"}, {"id": 3, "name": "z"},
        {"id": 4, "name": None}, {"id": 5, "name": "hive1"}]
    ds = aorc.sync.open_dataset(root, schema=SCHEMA, schema_mapping="position")
    assert ds.read(["name"], [("id", ">=", 3)]).column("name").to_pylist() == [
        "z", None, "hive1"]


def test_by_name_maps_only_hive_internal_names(tmp_path: Path) -> None:
    root = write(tmp_path)
    got = aorc.sync.read_dataset(root, schema=SCHEMA).to_pylist()
    assert {"id": 5, "name": "hive1"} in got  # _col0, _col1: by position
    assert sum(r["id"] is None for r in got) == 4  # other names: no such columns


def test_position_needs_a_schema(tmp_path: Path) -> None:
    root = write(tmp_path)
    with pytest.raises(aorc.SchemaError, match="needs schema"):
        aorc.sync.open_dataset(root, schema_mapping="position")
    with pytest.raises(aorc.SchemaError, match="'name' or 'position'"):
        aorc.sync.open_dataset(root, schema=SCHEMA, schema_mapping="index")
