"""``aorc.spark.read_acid_table``: a Hive transactional table into a DataFrame with deletes
applied.

The table is written in Hive 3's layout (``BucketCodec`` V1 bucket properties, statement
ids, a delete delta, an obsolete delta below the base, two partitions) as in
``tests/dataset/acid/test_acid_hive3.py``; the expected rows are aorc's own
``read_acid_table``, which ``tests/dataset/acid/test_acid_hive.py`` holds to Hive 2.3's own
ACID reader.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
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
