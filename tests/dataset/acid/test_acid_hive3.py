"""Hive 3 transactional tables, in the forms Hive 2.3 cannot write: written here with aorc
in the layout Hive 3's source gives (``AcidUtils``, ``BucketCodec``, ``OrcRecordUpdater``),
with the expected rows worked out by hand from Hive 3's rules (and Trino's ORC ACID reader,
which applies the same ones):

- the ``bucket`` field is a ``BucketCodec`` V1 property (``1 << 29 | bucket << 16 | stmt``);
- ``_orc_acid_version`` files (content ``2``) in the table and in every delta;
- folder names with a 7-digit write id, a 4-digit statement id and ``_vN`` visibility
  suffixes on compacted bases;
- original files numbered across ``000000_0`` and its ``_copy_N`` files;
- insert-only ("micro-managed") tables whose deltas hold plain ORC files.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import aorc
from aorc.dataset.acid import WriteIdList, read_acid_table

ROW = pa.struct([("id", pa.int32()), ("name", pa.string())])
EVENT = pa.schema([("operation", pa.int32()), ("originalTransaction", pa.int64()),
                   ("bucket", pa.int32()), ("rowId", pa.int64()),
                   ("currentTransaction", pa.int64()), ("row", ROW)])


def v1(bucket: int, stmt: int = 0) -> int:
    """Hive 3's BucketCodec V1 property."""
    return (1 << 29) | (bucket << 16) | stmt


def events(path: Path, rows: list[tuple[int, int, int, int, int, Any]]) -> None:
    """An ACID event file: rows of (operation, otid, bucket, rowId, currentTxn, row)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    (path.parent / "_orc_acid_version").write_text("2")
    cols = list(zip(*rows, strict=True)) if rows else [[] for _ in EVENT]
    table = pa.Table.from_arrays([pa.array(c, f.type) for c, f in zip(cols, EVENT,
                                                                       strict=True)],
                                 schema=EVENT)
    aorc.sync.write_table(table, path)


def inserts(path: Path, wid: int, bucket: int, rows: list[dict[str, Any]],
            first: int = 0) -> None:
    events(path, [(0, wid, bucket, first + i, wid, r) for i, r in enumerate(rows)])


def deletes(path: Path, wid: int, keys: list[tuple[int, int, int]]) -> None:
    events(path, [(2, o, b, r, wid, None) for o, b, r in sorted(keys)])


def read(path: Path, **kwargs: Any) -> list[dict[str, Any]]:
    table = aorc.sync.run(read_acid_table(path, **kwargs))
    return sorted(table.to_pylist(), key=repr)


def test_bucket_codec_statements_and_visibility_suffix(tmp_path: Path) -> None:
    t = tmp_path / "t"
    t.mkdir()
    (t / "_orc_acid_version").write_text("2")
    inserts(t / "base_0000005_v0000012" / "bucket_00000", 5, v1(0),
            [{"id": 1, "name": "a"}, {"id": 2, "name": "b"}])
    # two statements of write 6 into bucket 1: both number their rows from 0
    inserts(t / "delta_0000006_0000006_0000" / "bucket_00001", 6, v1(1, 0),
            [{"id": 3, "name": "s0"}])
    inserts(t / "delta_0000006_0000006_0001" / "bucket_00001", 6, v1(1, 1),
            [{"id": 4, "name": "s1"}])
    # delete statement 0's row 0 of bucket 1, and base row 1
    deletes(t / "delete_delta_0000007_0000007_0000" / "bucket_00001", 7, [(6, v1(1, 0), 0)])
    deletes(t / "delete_delta_0000007_0000007_0000" / "bucket_00000", 7, [(5, v1(0), 1)])
    # a delta below the base: obsolete (a compaction's leftover)
    inserts(t / "delta_0000004_0000004_0000" / "bucket_00000", 4, v1(0),
            [{"id": 99, "name": "old"}])
    rows = read(t, row_id=True)
    assert [r["id"] for r in rows] == [1, 4]
    by_id = {r["id"]: r["ROW__ID"] for r in rows}
    assert by_id[4] == {"writeid": 6, "bucketid": v1(1, 1), "rowid": 0, "currentwriteid": 6}
    assert v1(1, 1) == 536936449


def test_original_copies_numbered_across_files(tmp_path: Path) -> None:
    t = tmp_path / "t"
    t.mkdir()
    plain = pa.table({"id": pa.array([1, 2, 3], pa.int32()), "name": ["a", "b", "c"]})
    aorc.sync.write_table(plain, t / "000000_0")
    aorc.sync.write_table(plain.slice(0, 2).set_column(0, "id", pa.array([4, 5], pa.int32())),
                          t / "000000_0_copy_1")
    aorc.sync.write_table(plain.slice(0, 1).set_column(0, "id", pa.array([6], pa.int32())),
                          t / "000001_0")
    # row 3 of bucket 0 is the copy file's first row (id 4); bucket 1's row 0 is id 6
    deletes(t / "delete_delta_0000001_0000001_0000" / "bucket_00000", 1, [(0, v1(0), 3)])
    deletes(t / "delete_delta_0000001_0000001_0000" / "bucket_00001", 1, [(0, v1(1), 0)])
    rows = read(t, row_id=True)
    assert [r["id"] for r in rows] == [1, 2, 3, 5]
    ids = {r["id"]: r["ROW__ID"]["rowid"] for r in rows}
    assert ids == {1: 0, 2: 1, 3: 2, 5: 4}
    assert {r["ROW__ID"]["bucketid"] for r in rows} == {v1(0)}
    # a base makes the original files obsolete
    inserts(t / "base_0000001_v0000009" / "bucket_00000", 1, v1(0), [{"id": 7, "name": "z"}])
    assert [r["id"] for r in read(t)] == [7]


def test_insert_only_table(tmp_path: Path) -> None:
    t = tmp_path / "t"
    for wid, ids in ((1, [1, 2]), (2, [3]), (3, [4])):
        folder = t / f"delta_{wid:07d}_{wid:07d}_0000"
        folder.mkdir(parents=True)
        aorc.sync.write_table(pa.table({"id": pa.array(ids, pa.int32()),
                                        "name": [str(i) for i in ids]}), folder / "000000_0")
    assert [r["id"] for r in read(t)] == [1, 2, 3, 4]
    # write 2 aborted, 3 open
    got = read(t, valid_write_ids="db.mm:3:3:3:2")
    assert [r["id"] for r in got] == [1, 2]
    assert read(t, columns=["name"], filters=[("id", ">", 1)]) == [{"name": "2"},
                                                                     {"name": "3"},
                                                                     {"name": "4"}]


def test_open_write_inside_a_multi_write_delta(tmp_path: Path) -> None:
    # streaming ingest's delta_1_3 holds writes 1..3; write 2 is still open: its rows are
    # left out row by row (Hive checks each event's currentTransaction)
    t = tmp_path / "t"
    events(t / "delta_0000001_0000003" / "bucket_00000",
           [(0, w, v1(0), 0, w, {"id": w, "name": str(w)}) for w in (1, 2, 3)])
    assert [r["id"] for r in read(t)] == [1, 2, 3]
    assert [r["id"] for r in read(t, valid_write_ids="db.s:3:2:2:")] == [1, 3]


def test_not_enough_history(tmp_path: Path) -> None:
    t = tmp_path / "t"
    inserts(t / "base_0000010" / "bucket_00000", 10, v1(0), [{"id": 1, "name": "a"}])
    with pytest.raises(aorc.SchemaError, match="not enough history"):
        read(t, valid_write_ids="db.t:5:9223372036854775807::")
    assert [r["id"] for r in read(t, valid_write_ids=WriteIdList.parse("db.t:10:"
                                                                       "9223372036854775807::"))
            ] == [1]


def test_attempt_files_and_hidden_folders(tmp_path: Path) -> None:
    t = tmp_path / "t"
    inserts(t / "delta_0000001_0000001_0000" / "bucket_00000_1", 1, v1(0),
            [{"id": 1, "name": "attempt"}])
    # staging and temporary folders are not part of the table
    inserts(t / ".hive-staging_hive_1" / "bucket_00000", 1, v1(0), [{"id": 9, "name": "x"}])
    inserts(t / "_tmp.delta_0000002_0000002_0000" / "bucket_00000", 2, v1(0),
            [{"id": 8, "name": "y"}])
    assert [r["id"] for r in read(t)] == [1]


def test_legacy_update_events_refused(tmp_path: Path) -> None:
    t = tmp_path / "t"
    events(t / "delta_0000001_0000001" / "bucket_00000",
           [(1, 1, 0, 0, 1, {"id": 1, "name": "updated"})])
    with pytest.raises(aorc.UnsupportedFeatureError, match="split update"):
        read(t)


def test_streamed_batches_match_the_whole_read(tmp_path: Path) -> None:
    # small batches: the synthetic row ids of original files and the deletes keyed by them
    # continue across batches, and the base's deletes across its batches
    t = tmp_path / "t"
    t.mkdir()
    plain = pa.table({"id": pa.array(range(7), pa.int32()), "name": list("abcdefg")})
    aorc.sync.write_table(plain, t / "000000_0")
    deletes(t / "delete_delta_0000001_0000001_0000" / "bucket_00000", 1,
            [(0, v1(0), 1), (0, v1(0), 4), (0, v1(0), 6)])
    inserts(t / "delta_0000002_0000002_0000" / "bucket_00000", 2, v1(0),
            [{"id": 10 + i, "name": str(i)} for i in range(9)])
    deletes(t / "delete_delta_0000003_0000003_0000" / "bucket_00000", 3,
            [(2, v1(0), 0), (2, v1(0), 5)])
    opened = aorc.sync.open_acid_table(t, row_id=True)
    whole = opened.read().sort_by("id")
    assert whole.column("id").to_pylist() == [0, 2, 3, 5, 11, 12, 13, 14, 16, 17, 18]
    batches = list(opened.iter_batches(batch_size=2))
    assert max(b.num_rows for b in batches) <= 2
    streamed = pa.Table.from_batches(batches).sort_by("id")
    assert streamed.equals(whole)
    assert opened.count_rows() == 11
    assert opened.count_rows([("id", ">=", 12)]) == 6


def test_hive_internal_column_names_map_by_position(tmp_path: Path) -> None:
    # Hive 1 and 2 often wrote the row struct (and original files) with its internal names
    # _col0, _col1, ...: matched to the table's columns by position, as ORC Java does
    t = tmp_path / "t"
    t.mkdir()
    aorc.sync.write_table(pa.table({"_col0": pa.array([1, 2], pa.int32()),
                                    "_col1": ["o1", "o2"]}), t / "000000_0")
    row = pa.struct([("_col0", pa.int32()), ("_col1", pa.string())])
    schema = pa.schema([*EVENT][:5] + [pa.field("row", row)])
    aorc.sync.write_table(pa.Table.from_arrays(
        [pa.array([0, 0], pa.int32()), pa.array([5, 5]), pa.array([0, 0], pa.int32()),
         pa.array([0, 1]), pa.array([5, 5]),
         pa.array([{"_col0": 3, "_col1": "d1"}, {"_col0": 4, "_col1": "d2"}], row)],
        schema=schema), t / "delta_0000005_0000005" / "bucket_00000")
    deletes(t / "delete_delta_0000006_0000006" / "bucket_00000", 6,
            [(0, 0, 0), (5, 0, 1)])
    table_schema = pa.schema([("id", pa.int32()), ("name", pa.string())])
    got = read(t, schema=table_schema)
    assert got == [{"id": 2, "name": "o2"}, {"id": 3, "name": "d1"}]
    assert read(t, schema=table_schema, filters=[("id", ">", 2)]) == [{"id": 3, "name": "d1"}]
    # without a schema the file's own names are the columns
    assert [r["_col0"] for r in read(t)] == [2, 3]


def test_writes_above_the_high_watermark_inside_a_delta(tmp_path: Path) -> None:
    # delta_3_6 (streaming ingest) read with a high watermark of 4 and nothing open: the
    # folder is partly visible, its rows of writes 5 and 6 are not; nor is a delete of 7
    t = tmp_path / "t"
    events(t / "delta_0000003_0000006" / "bucket_00000",
           [(0, w, v1(0), 0, w, {"id": w, "name": str(w)}) for w in (3, 4, 5, 6)])
    deletes(t / "delete_delta_0000007_0000007" / "bucket_00000", 7, [(3, v1(0), 0)])
    assert [r["id"] for r in read(t)] == [4, 5, 6]
    hwm = "db.s:4:9223372036854775807::"
    assert [r["id"] for r in read(t, valid_write_ids=hwm)] == [3, 4]


def test_default_partition_is_null(tmp_path: Path) -> None:
    t = tmp_path / "t"
    inserts(t / "day=1" / "delta_0000001_0000001_0000" / "bucket_00000", 1, v1(0),
            [{"id": 1, "name": "a"}])
    inserts(t / "day=__HIVE_DEFAULT_PARTITION__" / "delta_0000002_0000002_0000" /
            "bucket_00000", 2, v1(0), [{"id": 2, "name": "b"}])
    got = read(t)
    assert got == [{"id": 1, "name": "a", "day": 1}, {"id": 2, "name": "b", "day": None}]
    assert read(t, filters=[("day", "is null")]) == [{"id": 2, "name": "b", "day": None}]
