"""``aorc.spark.read_acid_table``: a Hive transactional table into a DataFrame with deletes
applied, on a classic session and through Spark Connect (``nox -s spark-connect``).

:func:`test_hive_written_table_in_spark` reads a table written by Hive 2.3's own ACID writer
(original files, statement ids, split updates, a base over obsolete deltas, open and aborted
transactions, two partitions) and compares the DataFrame's rows with what Hive 2.3's own ACID
reader returns (the helper JVM of ``tests/helpers/hive_acid.py``, not Spark's, so it runs
under Spark Connect too). :func:`test_read_acid_table_in_spark` reads a table in Hive 3's
layout (``BucketCodec`` V1 bucket properties, ``_v`` suffixes), checked against aorc's own
``read_acid_table``, which ``tests/dataset/acid/test_acid_hive3.py`` follows Hive 3's source
for.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from helpers.hive_acid import HiveAcid
from spark_tables import to_arrow

import aorc
import aorc.spark

pytestmark = pytest.mark.spark

ROW = pa.struct([("id", pa.int32()), ("name", pa.string()), ("ts", pa.timestamp("us"))])
EVENT = pa.schema([("operation", pa.int32()), ("originalTransaction", pa.int64()),
                   ("bucket", pa.int32()), ("rowId", pa.int64()),
                   ("currentTransaction", pa.int64()), ("row", ROW)])


def v1(bucket: int, stmt: int = 0) -> int:
    return (1 << 29) | (bucket << 16) | stmt


def events(path: Path, rows: list[tuple[Any, ...]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    cols = list(zip(*rows, strict=True))
    aorc.sync.write_table(pa.Table.from_arrays(
        [pa.array(c, f.type) for c, f in zip(cols, EVENT, strict=True)], schema=EVENT), path)


def make_table(root: Path) -> None:
    import datetime

    ts = datetime.datetime(2024, 5, 1, 12, 30)
    for day in (1, 2):
        part = root / f"day={day}"
        events(part / "base_0000002_v0000010" / "bucket_00000",
               [(0, 2, v1(0), i, 2, {"id": i, "name": f"b{day}-{i}", "ts": ts})
                for i in range(50)])
        events(part / "delta_0000001_0000001_0000" / "bucket_00000",
               [(0, 1, v1(0), 0, 1, {"id": 999, "name": "obsolete", "ts": ts})])
        events(part / "delta_0000003_0000003_0000" / "bucket_00001",
               [(0, 3, v1(1), i, 3, {"id": 100 + i, "name": f"d{day}", "ts": None})
                for i in range(5)])
        events(part / "delete_delta_0000004_0000004_0000" / "bucket_00000",
               [(2, 2, v1(0), i, 4, None) for i in range(0, 50, 7)])
        events(part / "delete_delta_0000004_0000004_0000" / "bucket_00001",
               [(2, 3, v1(1), 1, 4, None)])


def test_read_acid_table_in_spark(spark: Any, tmp_path: Path) -> None:
    root = tmp_path / "t"
    make_table(root)
    expected = aorc.sync.read_acid_table(root, timestamp_unit="us")
    assert expected.num_rows == 2 * (50 - 8 + 4)
    df = aorc.spark.read_acid_table(spark, str(root))
    got = to_arrow(df)
    assert got.schema.names == ["id", "name", "ts", "day"]
    key = [("day", "ascending"), ("id", "ascending")]
    want = expected.sort_by(key)
    got = got.sort_by(key)
    assert got.column("id").to_pylist() == want.column("id").to_pylist()
    assert got.column("name").to_pylist() == want.column("name").to_pylist()
    assert [None if v is None else v.replace(tzinfo=None) for v in
            got.column("ts").to_pylist()] == want.column("ts").to_pylist()
    # filters: a partition term prunes, a data term is pushed down
    df = aorc.spark.read_acid_table(spark, str(root), columns=["name"],
                                    filters=[("day", "==", 2), ("id", ">=", 100)])
    assert sorted(r["name"] for r in df.collect()) == ["d2"] * 4
    # ROW__ID on request
    df = aorc.spark.read_acid_table(spark, str(root), columns=["ROW__ID", "id"],
                                    row_id=True, filters=[("id", "==", 104)])
    rows = df.collect()
    assert len(rows) == 2 and rows[0]["ROW__ID"]["bucketid"] == v1(1)


def _hive_table(hive: HiveAcid, root: Path) -> str:
    """Two partitions written by Hive 2.3's own ACID writer; returns the valid transaction
    list (high watermark 10, 5 open, 6 aborted)."""
    def delta(part: Path, txn: int, rows: list[tuple[Any, ...]], bucket: int = 0,
              stmt: int = -1) -> None:
        hive.updater(part, "delta", txn, txn, stmt, bucket)
        for row in rows:
            hive.insert(txn, row)
        hive.close()

    def delete(part: Path, txn: int, keys: list[tuple[int, int, int]], bucket: int = 0
               ) -> None:
        hive.updater(part, "delta", txn, txn, -1, bucket)
        for key in sorted(keys):
            hive.delete(txn, key)
        hive.close()

    one = root / "day=1"  # original files, statement ids, a split update
    for name, rows in (("000000_0", [(i, f"o{i}", float(i)) for i in range(6)]),
                       ("000001_0", [(10, "p", 0.5), (11, None, None)])):
        hive.original(one / name)
        for row in rows:
            hive.insert(0, row)
        hive.close()
    delta(one, 7, [(20, "s0", 2.0), (21, "s0", 2.5)], stmt=0)
    delta(one, 7, [(22, "s1", 3.0)], bucket=1, stmt=1)
    delete(one, 8, [(0, 0, 1), (0, 0, 4), (7, 0, 1)])
    delete(one, 8, [(0, 1, 0)], bucket=1)
    delete(one, 9, [(7, 1, 0)], bucket=1)  # an update: the old version deleted,
    delta(one, 9, [(22, "s1-updated", 30.0)], bucket=1)  # the new one inserted
    two = root / "day=2"  # a base over obsolete deltas, open and aborted transactions
    delta(two, 1, [(1, "a", 1.0), (2, "b", 2.0)])
    delta(two, 2, [(3, "c", 3.0)])
    hive.updater(two, "base", 0, 2, -1, 0)
    for txn, row in ((1, (1, "a", 1.0)), (1, (2, "b", 2.0)), (2, (3, "c", 3.0))):
        hive.insert(txn, row)
    hive.close()
    delta(two, 3, [(4, "d", 4.0)], bucket=1)
    delete(two, 4, [(1, 0, 0)])
    delta(two, 5, [(5, "open", 5.0)])
    delta(two, 6, [(6, "aborted", 6.0)])
    delete(two, 6, [(3, 1, 0)], bucket=1)  # aborted: not applied
    delta(two, 10, [(7, "g", 7.0)], bucket=1)
    return hive.txn_list(10, open_ids=[5], aborted=[6])


def test_hive_written_table_in_spark(spark: Any, hive: HiveAcid, tmp_path: Path) -> None:
    root = tmp_path / "t"
    txns = _hive_table(hive, root)
    expected = {day: hive.read(root / f"day={day}", txns) for day in (1, 2)}
    assert {r[3] for r in expected[1]} == {0, 2, 3, 5, 11, 20, 22}
    assert {r[3] for r in expected[2]} == {2, 3, 4, 7}
    assert ("s1-updated" in {r[4] for r in expected[1]}
            and "s1" not in {r[4] for r in expected[1]})
    df = aorc.spark.read_acid_table(spark, str(root), valid_write_ids=txns, row_id=True)
    assert df.columns == ["ROW__ID", "id", "name", "score", "day"]
    got: dict[int, list[tuple[Any, ...]]] = {1: [], 2: []}
    for r in df.collect():
        rid = r["ROW__ID"]
        got[r["day"]].append((rid["writeid"], rid["bucketid"], rid["rowid"], r["id"],
                              r["name"], r["score"]))
    assert {day: sorted(rows, key=repr) for day, rows in got.items()} == expected
    # a partition term prunes, a data term is pushed down, deletes still applied
    df = aorc.spark.read_acid_table(spark, str(root), columns=["id", "name"],
                                    filters=[("day", "==", 1), ("id", ">=", 3)],
                                    valid_write_ids=txns)
    assert sorted((r["id"], r["name"]) for r in df.collect()) == sorted(
        (r[3], r[4]) for r in expected[1] if r[3] >= 3)
    # without the list every folder counts as committed: the open and aborted writes count
    ids = sorted(r["id"] for r in aorc.spark.read_acid_table(
        spark, str(root / "day=2"), columns=["id"]).collect())
    assert ids == [2, 3, 5, 6, 7]  # and the aborted delete of 4 applies
