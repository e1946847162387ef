"""A bucket file Hive 3 itself wrote: Apache ORC's ``acid5k.orc`` (5,000 insert events of
write id 12 in bucket 0, ``BucketCodec`` V1 property ``536870912``; see ``data/NOTICE``),
placed in a delta folder as Hive 3 places it. The expected rows are pyarrow.orc's (ORC C++)
reading of the same file's ``row`` struct; the delete delta is written by aorc in Hive 3's
form (as in test_acid_hive3.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.orc as po

import aorc
from aorc.dataset.acid import read_acid_table

ACID5K = Path(__file__).resolve().parent / "data" / "acid5k.orc"
EVENT_ROW = pa.struct([("i", pa.int32()), ("j", pa.int32()), ("k", pa.int32())])


def _table(root: Path) -> pa.Table:
    """The table folder with acid5k.orc as its one delta; returns pyarrow's events."""
    delta = root / "delta_0000012_0000012_0000"
    delta.mkdir(parents=True)
    (root / "_orc_acid_version").write_text("2")
    (delta / "_orc_acid_version").write_text("2")
    shutil.copy(ACID5K, delta / "bucket_00000")
    return po.read_table(ACID5K)


def _rows(events: pa.Table) -> pa.Table:
    row = events.column("row").combine_chunks()
    return pa.table({n: row.field(n) for n in ("i", "j", "k")})


def test_hive3_bucket_file(tmp_path: Path) -> None:
    events = _table(tmp_path / "t")
    assert events.num_rows == 5000
    assert set(events.column("bucket").to_pylist()) == {(1 << 29) | (0 << 16)}
    got = aorc.sync.run(read_acid_table(tmp_path / "t"))
    assert got.schema.names == ["i", "j", "k"]
    assert got.equals(_rows(events))
    # ROW__ID is the events' own key (the stored V1 bucket property)
    with_id = aorc.sync.run(read_acid_table(tmp_path / "t", row_id=True))
    rid = with_id.column("ROW__ID").combine_chunks()
    assert rid.field("writeid").to_pylist() == events.column("originalTransaction").to_pylist()
    assert rid.field("bucketid").to_pylist() == events.column("bucket").to_pylist()
    assert rid.field("rowid").to_pylist() == events.column("rowId").to_pylist()
    # a write id above the high watermark is not read (no file left to take the columns
    # from: they are given)
    hidden = aorc.sync.run(read_acid_table(tmp_path / "t", valid_write_ids="default.t:11:12::",
                                           schema=got.schema))
    assert hidden.num_rows == 0 and hidden.schema == got.schema


def test_hive3_bucket_file_with_deletes(tmp_path: Path) -> None:
    root = tmp_path / "t"
    events = _table(root)
    gone = list(range(0, 5000, 7)) + [4999]
    n = len(gone)
    delete = pa.Table.from_arrays(
        [pa.array([2] * n, pa.int32()), pa.array([12] * n, pa.int64()),
         pa.array([1 << 29] * n, pa.int32()), pa.array(gone, pa.int64()),
         pa.array([13] * n, pa.int64()), pa.nulls(n, EVENT_ROW)],
        names=["operation", "originalTransaction", "bucket", "rowId", "currentTransaction",
               "row"])
    folder = root / "delete_delta_0000013_0000013_0000"
    folder.mkdir()
    aorc.sync.write_table(delete, folder / "bucket_00000")
    keep = pc.invert(pc.is_in(events.column("rowId"), pa.array(gone, pa.int64())))
    want = _rows(events.filter(keep))
    assert want.num_rows == 5000 - n
    assert aorc.sync.run(read_acid_table(root)).equals(want)
    # filtered: pushdown into the file, then the deletes
    got = aorc.sync.run(read_acid_table(root, filters=[("i", "<", 100)]))
    assert got.equals(want.filter(pc.less(want.column("i"), 100)))
    # the delete's write id open: not applied
    assert aorc.sync.run(read_acid_table(
        root, valid_write_ids="default.t:13:13:13:")).equals(_rows(events))
