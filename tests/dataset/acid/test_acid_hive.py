"""Hive transactional tables written by Hive 2.3's own ACID writer (OrcRecordUpdater, split
update) and read by aorc, compared with what Hive 2.3's own ACID reader (OrcInputFormat with
AcidUtils.getAcidState and OrcRawRecordMerger) returns for the same folder.

Everything here follows Hive 2.3 (bucket = the plain bucket id, transaction ids, folder
names without ``_v`` suffixes); the Hive 3 forms are in test_acid_hive3.py.
"""

from __future__ import annotations

import math
import shutil
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from helpers.hive_acid import HiveAcid, HiveError

import aorc
from aorc.dataset.acid import read_acid_table


def aorc_rows(path: Path | str, **kwargs: Any) -> list[tuple[Any, ...]]:
    """aorc's rows in the oracle's form: ``(writeid, bucket, rowid, id, name, score)``."""
    table = aorc.sync.run(read_acid_table(path, row_id=True, **kwargs))
    out = []
    for r in table.to_pylist():
        rid = r["ROW__ID"]
        out.append((rid["writeid"], rid["bucketid"], rid["rowid"], r["id"], r["name"],
                    r["score"]))
    return sorted(out, key=repr)


def insert_delta(hive: HiveAcid, table: Path, txn: int, rows: list[tuple[Any, ...]],
                 bucket: int = 0, stmt: int = -1) -> None:
    hive.updater(table, "delta", txn, txn, stmt, bucket)
    for row in rows:
        hive.insert(txn, row)
    hive.close()


def delete_delta(hive: HiveAcid, table: Path, txn: int, keys: list[tuple[int, int, int]],
                 bucket: int = 0, stmt: int = -1) -> None:
    hive.updater(table, "delta", txn, txn, stmt, bucket)
    for key in sorted(keys):
        hive.delete(txn, key)
    hive.close()


def test_inserts_deletes_and_updates(hive: HiveAcid, tmp_path: Path) -> None:
    t = tmp_path / "t"
    insert_delta(hive, t, 1, [(1, "a", 1.5), (2, "b", None), (3, None, -0.5)])
    insert_delta(hive, t, 2, [(4, "d", 4.0), (5, "é", math.inf)], bucket=1)
    delete_delta(hive, t, 3, [(1, 0, 1)])  # deletes id 2
    # an update (split update): delete the old row, insert its new version
    delete_delta(hive, t, 4, [(2, 1, 0)], bucket=1)
    insert_delta(hive, t, 4, [(4, "d2", 40.0)], bucket=1)
    assert sorted(p.name for p in t.iterdir() if not p.name.startswith((".", "_"))) == [
        "delete_delta_0000003_0000003", "delete_delta_0000004_0000004",
        "delta_0000001_0000001", "delta_0000002_0000002", "delta_0000004_0000004"]
    expected = hive.read(t)
    assert len(expected) == 4 and {r[3] for r in expected} == {1, 3, 4, 5}
    assert aorc_rows(t) == expected
    # without ROW__ID: the table's own columns only
    table = aorc.sync.run(read_acid_table(t))
    assert table.schema.names == ["id", "name", "score"]
    assert table.num_rows == 4


def test_base_and_obsolete_deltas(hive: HiveAcid, tmp_path: Path) -> None:
    t = tmp_path / "t"
    insert_delta(hive, t, 1, [(1, "a", 1.0), (2, "b", 2.0)])
    insert_delta(hive, t, 2, [(3, "c", 3.0)])
    # a major compaction's base up to 2 (the deltas below it are now obsolete but still there)
    hive.updater(t, "base", 0, 2, -1, 0)
    hive.insert(1, (1, "a", 1.0))
    hive.insert(2, (3, "c", 3.0))
    hive.close()
    insert_delta(hive, t, 3, [(6, "f", 6.0)])
    delete_delta(hive, t, 4, [(3, 0, 0)])
    assert (t / "base_0000002").is_dir()
    expected = hive.read(t)
    assert {r[3] for r in expected} == {1, 3}
    assert aorc_rows(t) == expected
    opened = aorc.sync.run(aorc.open_acid_table(t))
    snap = opened.partitions[0].snapshot
    assert snap.base is not None and snap.base.name == "base_0000002"
    assert [d.name for d in snap.obsolete] == ["delta_0000001_0000001",
                                               "delta_0000002_0000002"]


def test_compacted_delta_preferred(hive: HiveAcid, tmp_path: Path) -> None:
    t = tmp_path / "t"
    for txn in (1, 2, 3):
        insert_delta(hive, t, txn, [(txn, f"r{txn}", float(txn))])
    # a minor compaction's delta_1_3 holds the same events, the old deltas not yet cleaned
    hive.updater(t, "delta", 1, 3, -1, 0)
    hive.close()
    shutil.rmtree(t / "delta_0000001_0000003")
    hive.updater(t, "delta", 1, 3, -1, 0)
    for txn in (1, 2, 3):
        hive.insert(txn, (txn, f"r{txn}", float(txn)))
    hive.close()
    expected = hive.read(t)
    assert len(expected) == 3  # not 6: the covered deltas are skipped
    assert aorc_rows(t) == expected


def test_statement_ids(hive: HiveAcid, tmp_path: Path) -> None:
    t = tmp_path / "t"
    insert_delta(hive, t, 5, [(1, "a", 1.0), (2, "b", 2.0)], stmt=0)
    insert_delta(hive, t, 5, [(3, "c", 3.0)], bucket=1, stmt=1)
    delete_delta(hive, t, 6, [(5, 0, 0)], stmt=0)
    assert (t / "delta_0000005_0000005_0001").is_dir()
    expected = hive.read(t)
    assert {r[3] for r in expected} == {2, 3}
    assert aorc_rows(t) == expected


def test_original_files_get_synthetic_row_ids(hive: HiveAcid, tmp_path: Path) -> None:
    t = tmp_path / "t"
    hive.original(t / "000000_0")
    for i in range(5):
        hive.insert(0, (i, f"o{i}", float(i)))
    hive.close()
    hive.original(t / "000001_0")
    hive.insert(0, (10, "p", 0.0))
    hive.close()
    insert_delta(hive, t, 7, [(20, "new", 2.0)])
    delete_delta(hive, t, 8, [(0, 0, 1), (0, 0, 3)])
    delete_delta(hive, t, 8, [(0, 1, 0)], bucket=1)  # each bucket's events in its file
    expected = hive.read(t)
    assert {r[3] for r in expected} == {0, 2, 4, 20}
    assert aorc_rows(t) == expected


def test_valid_transaction_list(hive: HiveAcid, tmp_path: Path) -> None:
    t = tmp_path / "t"
    insert_delta(hive, t, 1, [(1, "a", 1.0)])
    insert_delta(hive, t, 2, [(2, "open", 2.0)])
    insert_delta(hive, t, 3, [(3, "aborted", 3.0)])
    insert_delta(hive, t, 4, [(4, "ok", 4.0)])
    delete_delta(hive, t, 5, [(1, 0, 0)])  # above the watermark: not visible
    # (open ids below aborted ones: Hive 2.3's ValidReadTxnList.readFromString leaves its
    # id array unsorted otherwise, and its binary search then misses aborted ids)
    txns = hive.txn_list(4, open_ids=[2], aborted=[3])
    assert txns == "4:2:2:3"
    expected = hive.read(t, txns)
    assert {r[3] for r in expected} == {1, 4}
    assert aorc_rows(t, valid_write_ids=txns) == expected
    # Hive 3's form with a table name says the same
    assert aorc_rows(t, valid_write_ids="db.t:4:2:2:3") == expected
    # no list: every folder is taken as committed
    assert {r[3] for r in aorc_rows(t)} == {2, 3, 4}


def test_flush_length_side_file(hive: HiveAcid, tmp_path: Path) -> None:
    t = tmp_path / "t"
    insert_delta(hive, t, 1, [(1, "a", 1.0)])
    hive.updater(t, "delta", 2, 3, -1, 0)  # a streaming ingest's batch of transactions
    hive.insert(2, (2, "flushed", 2.0))
    hive.flush()
    hive.insert(3, (3, "unflushed", 3.0))
    side = t / "delta_0000002_0000003" / "bucket_00000_flush_length"
    assert side.exists()
    got = aorc_rows(t)
    # Hive 2.3's split generation fails on the side file ("For input string:
    # 00000_flush_length"), so its reader reads a copy cut at the flushed length, which is
    # what its merger reads of the file (Reader.Options.maxLength)
    with pytest.raises(HiveError, match="flush_length"):
        hive.read(t)
    copy = tmp_path / "copy"
    shutil.copytree(t, copy, ignore=shutil.ignore_patterns("*_flush_length", ".*"))
    flushed = int.from_bytes(side.read_bytes()[-8:], "big")
    data = copy / "delta_0000002_0000003" / "bucket_00000"
    data.write_bytes(data.read_bytes()[:flushed])
    expected = hive.read(copy)
    hive.close()  # closing removes the side file
    assert {r[3] for r in expected} == {1, 2}
    assert got == expected
    assert not side.exists()
    assert {r[3] for r in aorc_rows(t)} == {1, 2, 3}


def test_partitions_filters_and_pushdown(hive: HiveAcid, tmp_path: Path) -> None:
    t = tmp_path / "t"
    for day in (1, 2):
        part = t / f"day={day}"
        insert_delta(hive, part, 1, [(i, f"{day}-{i}", float(i)) for i in range(100)])
        delete_delta(hive, part, 2, [(1, 0, i) for i in range(0, 100, 3)])
    expected = {day: hive.read(t / f"day={day}") for day in (1, 2)}
    for day in (1, 2):
        assert aorc_rows(t / f"day={day}") == expected[day]
    table = aorc.sync.run(read_acid_table(t))
    assert table.schema.names == ["id", "name", "score", "day"]
    assert table.schema.field("day").type == pa.int32()
    assert table.num_rows == sum(len(v) for v in expected.values())
    filtered = aorc.sync.run(read_acid_table(
        t, filters=[("day", "==", 2), ("id", ">=", 90)], columns=["name", "day"]))
    want = sorted(r[4] for r in expected[2] if r[3] >= 90)
    assert sorted(filtered.column("name").to_pylist()) == want
    expr = aorc.sync.run(read_acid_table(t, filters=(pc.field("id") < 5) & (pc.field("day") == 1)))
    assert sorted(expr.column("id").to_pylist()) == sorted(r[3] for r in expected[1]
                                                           if r[3] < 5)
    opened = aorc.open_acid_table  # the sync twin streams and exports too
    sync_table = aorc.sync.open_acid_table(t, filters=[("day", "==", 1)])
    batches = list(sync_table.iter_batches(batch_size=10))
    assert sum(b.num_rows for b in batches) == len(expected[1])
    assert max(b.num_rows for b in batches) <= 10
    exported = pa.RecordBatchReader.from_stream(sync_table).read_all()
    assert exported.num_rows == len(expected[1])
    assert sync_table.count_rows() == len(expected[1])
    assert opened is not None


def test_s3(hive: HiveAcid, tmp_path: Path, s3_client: Any, s3_bucket: str) -> None:
    t = tmp_path / "t"
    insert_delta(hive, t, 1, [(1, "a", 1.0), (2, "b", 2.0)])
    delete_delta(hive, t, 2, [(1, 0, 0)])
    expected = hive.read(t)
    for path in t.rglob("*"):
        if path.is_file() and not path.name.startswith("."):
            s3_client.upload_file(str(path), s3_bucket, f"t/{path.relative_to(t)}")
    assert aorc_rows(f"s3://{s3_bucket}/t") == expected
