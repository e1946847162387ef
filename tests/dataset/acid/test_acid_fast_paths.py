"""The shortcuts of the ACID read against the rows worked out in Python from the events
written: a file no delete event touches is not filtered, a file whose rows share one write
id and bucket is masked by its row ids alone (no other key column decoded), a chunk whose
row-id range no delete falls in is not filtered, and the delete events of one folder span
several data files (a base, deltas, two statements of one write, original files numbered
across a bucket's files). Each read is also checked to have taken the shortcut it tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.orc as orc
import pytest

import aorc
import aorc.dataset.acid.table as acid_table
from aorc.dataset.acid import WriteIdList, read_acid_table

ROW = pa.struct([("id", pa.int64()), ("score", pa.int32()), ("name", pa.string())])
EVENT = pa.schema([("operation", pa.int32()), ("originalTransaction", pa.int64()),
                   ("bucket", pa.int32()), ("rowId", pa.int64()),
                   ("currentTransaction", pa.int64()), ("row", ROW)])
Key = tuple[int, int, int]  # (write id, bucket property, row id)


def v1(bucket: int, stmt: int = 0) -> int:
    """Hive 3's BucketCodec V1 property."""
    return (1 << 29) | (bucket << 16) | stmt


def write_events(path: Path, columns: list[Any], **options: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    (path.parent / "_orc_acid_version").write_text("2")
    table = pa.Table.from_arrays([pa.array(c, f.type) for c, f in zip(columns, EVENT,
                                                                      strict=True)],
                                 schema=EVENT)
    aorc.sync.write_table(table, path, row_index_stride=1000, **options)


class Table:
    """A table written event by event, with its rows kept for the expected result."""

    def __init__(self, root: Path, seed: int) -> None:
        self.root = root
        self.rng = np.random.default_rng(seed)
        self.rows: dict[Key, dict[str, Any]] = {}
        self.deleted: dict[int, set[Key]] = {}  # by the delete's write id
        root.mkdir()
        (root / "_orc_acid_version").write_text("2")

    def row(self, key: Key) -> dict[str, Any]:
        w, b, r = key
        rid = w * 1_000_000 + (b & 0xFFFFF) * 10_000 + r
        return {"id": rid, "score": int(self.rng.integers(0, 100)), "name": f"n{rid % 997}"}

    def inserts(self, folder: str, bucket: int, wid: int, prop: int, n: int,
                **options: Any) -> list[Key]:
        keys = [(wid, prop, r) for r in range(n)]
        rows = [self.row(k) for k in keys]
        self.rows.update(zip(keys, rows, strict=True))
        write_events(self.root / folder / f"bucket_{bucket:05d}",
                     [[0] * n, [wid] * n, [prop] * n, list(range(n)), [wid] * n, rows],
                     **options)
        return keys

    def originals(self, name: str, bucket: int, first: int, n: int) -> None:
        keys = [(0, v1(bucket), first + r) for r in range(n)]
        rows = [self.row(k) for k in keys]
        self.rows.update(zip(keys, rows, strict=True))
        aorc.sync.write_table(pa.Table.from_pylist(rows, pa.schema(list(ROW))),
                              self.root / name, row_index_stride=1000)

    def deletes(self, folder: str, bucket: int, wid: int, keys: list[Key]) -> None:
        keys = sorted(set(keys))
        self.deleted.setdefault(wid, set()).update(keys)
        n = len(keys)
        write_events(self.root / folder / f"bucket_{bucket:05d}",
                     [[2] * n, [k[0] for k in keys], [k[1] for k in keys],
                      [k[2] for k in keys], [wid] * n, [None] * n])

    def expected(self, hidden: tuple[int, ...] = ()) -> list[dict[str, Any]]:
        gone = set().union(*(k for w, k in self.deleted.items() if w not in hidden))
        return sorted((r for k, r in self.rows.items() if k not in gone),
                      key=lambda r: r["id"])

    def keys_of(self, ids: list[int]) -> list[Key]:
        by_id = {r["id"]: k for k, r in self.rows.items()}
        return [by_id[i] for i in ids]


@pytest.fixture
def filtered(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The number of rows of each chunk the read filtered for deletes."""
    calls: list[int] = []
    real = acid_table.filter_columns

    def spy(columns: list[pa.ChunkedArray], schema: pa.Schema, gone: Any) -> pa.Table:
        calls.append(len(columns[0]))
        return real(columns, schema, gone)

    monkeypatch.setattr(acid_table, "filter_columns", spy)
    return calls


def read(root: Path, **kwargs: Any) -> pa.Table:
    return aorc.sync.run(read_acid_table(root, **kwargs)).sort_by("id")


def full_acid_table(root: Path) -> Table:
    t = Table(root, 11)
    base0 = t.inserts("base_0000001", 0, 1, v1(0), 3000)
    base1 = t.inserts("base_0000001", 1, 1, v1(1), 2000)
    d2b0 = t.inserts("delta_0000002_0000002_0000", 0, 2, v1(0), 500)
    d2b1 = t.inserts("delta_0000002_0000002_0000", 1, 2, v1(1), 500)
    t.inserts("delta_0000003_0000003_0000", 0, 3, v1(0), 400)  # no delete touches it
    s0 = t.inserts("delta_0000004_0000004_0000", 0, 4, v1(0, 0), 300)
    s1 = t.inserts("delta_0000004_0000004_0001", 0, 4, v1(0, 1), 300)
    pick = t.rng.choice
    # one delete file spans the base (its first row group only), a delta and a statement
    t.deletes("delete_delta_0000005_0000005_0000", 0, 5,
              [base0[i] for i in pick(1000, 60, replace=False)]
              + [d2b0[i] for i in pick(500, 40, replace=False)]
              + [s1[i] for i in pick(300, 30, replace=False)] + [s1[0], s1[-1]])
    t.deletes("delete_delta_0000005_0000005_0000", 1, 5,
              [base1[i] for i in pick(2000, 100, replace=False)]
              + [d2b1[i] for i in pick(500, 20, replace=False)])
    # a later delete deletes some rows again and the other statement's rows
    t.deletes("delete_delta_0000006_0000006_0000", 0, 6,
              [base0[i] for i in pick(1000, 30, replace=False)]
              + [s0[i] for i in pick(300, 50, replace=False)])
    return t


def test_deletes_spanning_files_and_untouched_files(tmp_path: Path,
                                                    filtered: list[int]) -> None:
    t = full_acid_table(tmp_path / "t")
    want = t.expected()
    assert len(want) < len(t.rows) - 300
    whole = read(t.root)
    assert whole.to_pylist() == want
    # filtered: the base files, delta 2's two files and both statements; not delta 3
    assert sorted(filtered) == [300, 300, 500, 500, 2000, 3000]
    # every key column decoded (the ROW__ID): the packed-key lookup
    filtered.clear()
    with_ids = read(t.root, row_id=True)
    assert with_ids.drop_columns([acid_table.ROW_ID]).to_pylist() == want
    ids = [(r["writeid"], r["bucketid"], r["rowid"])
           for r in with_ids.column(acid_table.ROW_ID).to_pylist()]
    assert ids == t.keys_of(with_ids.column("id").to_pylist())
    assert len(filtered) == 6
    # columns not asked for are not decoded; a count of rows only
    assert read(t.root, columns=["id"]).column("id").to_pylist() == [r["id"] for r in want]
    assert aorc.sync.open_acid_table(t.root).count_rows() == len(want)
    # a write-id list that hides the second delete delta
    hidden = read(t.root, valid_write_ids=WriteIdList.parse("db.t:6:6:6:"))
    assert hidden.to_pylist() == t.expected(hidden=(6,))


def test_pushed_down_filter_leaves_gaps_in_row_ids(tmp_path: Path,
                                                   filtered: list[int]) -> None:
    t = full_acid_table(tmp_path / "t")
    # row groups of the base skipped by their statistics: its row ids are no longer
    # consecutive, and only the first group of bucket 0's base has deletes
    lo, hi = 1_000_000 + 500, 1_000_000 + 2500
    got = read(t.root, filters=[("id", ">=", lo), ("id", "<", hi)])
    assert got.to_pylist() == [r for r in t.expected() if lo <= r["id"] < hi]
    assert got.num_rows > 1000
    filtered.clear()
    got = read(t.root, filters=[("id", ">=", 1_000_000 + 1000), ("id", "<", 1_000_000 + 3000)])
    assert got.to_pylist() == [r for r in t.expected()
                               if 1_000_000 + 1000 <= r["id"] < 1_000_000 + 3000]
    assert filtered == []  # the deleted row ids all lie before the rows read


def test_streamed_chunks_without_deletes_are_not_filtered(tmp_path: Path,
                                                          filtered: list[int]) -> None:
    t = full_acid_table(tmp_path / "t")
    batches = list(aorc.sync.open_acid_table(t.root).iter_batches(batch_size=500))
    assert pa.Table.from_batches(batches).sort_by("id").to_pylist() == t.expected()
    # bucket 0's base in 6 chunks, deletes in the first 2; bucket 1's base in 4, all
    # touched; delta 2's files, both statements: one chunk each
    assert sorted(filtered) == [300, 300] + [500] * 8


def test_original_files_numbered_across_a_bucket(tmp_path: Path,
                                                 filtered: list[int]) -> None:
    t = Table(tmp_path / "t", 5)
    t.originals("000000_0", 0, 0, 1500)
    t.originals("000000_0_copy_1", 0, 1500, 800)
    t.originals("000001_0", 1, 0, 600)
    d2 = t.inserts("delta_0000002_0000002_0000", 0, 2, v1(0), 200)
    # deletes across the boundary of bucket 0's two files, and in the delta
    t.deletes("delete_delta_0000003_0000003_0000", 0, 3,
              [(0, v1(0), r) for r in (0, 7, 1498, 1499, 1500, 1501, 2299)]
              + [d2[5], d2[199]])
    t.deletes("delete_delta_0000003_0000003_0000", 1, 3, [(0, v1(1), 599)])
    want = t.expected()
    assert len(want) == len(t.rows) - 10
    assert read(t.root).to_pylist() == want
    assert len(filtered) == 4  # both of bucket 0's files, bucket 1's and the delta
    with_ids = read(t.root, row_id=True)
    ids = [(r["writeid"], r["bucketid"], r["rowid"])
           for r in with_ids.column(acid_table.ROW_ID).to_pylist()]
    assert ids == t.keys_of(with_ids.column("id").to_pylist())
    batches = list(aorc.sync.open_acid_table(t.root).iter_batches(batch_size=256))
    assert pa.Table.from_batches(batches).sort_by("id").to_pylist() == want


def test_whole_read_drops_deletes_stripe_by_stripe(tmp_path: Path,
                                                   filtered: list[int]) -> None:
    t = Table(tmp_path / "t", 9)
    base = t.inserts("base_0000001", 0, 1, v1(0), 20_000, stripe_size=40_000)
    peer = orc.ORCFile(str(t.root / "base_0000001" / "bucket_00000"))
    stripes = [peer.read_stripe(i).num_rows for i in range(peer.nstripes)]
    assert len(stripes) >= 3
    bounds = np.cumsum([0, *stripes])
    # deletes in the first and the last stripe only, one on each side of their bounds
    gone = [base[0], base[int(bounds[1]) - 1], base[int(bounds[-2])], base[-1]]
    t.deletes("delete_delta_0000002_0000002_0000", 0, 2, gone)
    want = t.expected()
    assert len(want) == 20_000 - 4
    assert read(t.root).to_pylist() == want
    # each stripe decoded and filtered alone; the middle ones lose no row: not filtered
    assert filtered == [stripes[0], stripes[-1]]
    with_ids = read(t.root, row_id=True)  # every key column: the packed-key lookup
    assert with_ids.drop_columns([acid_table.ROW_ID]).to_pylist() == want
