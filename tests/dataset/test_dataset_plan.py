"""aorc.dataset.plan: finish_runs finishes runs of files as one table."""

from __future__ import annotations

import pyarrow as pa

from aorc.dataset.discovery import DatasetFile
from aorc.dataset.plan import finish_runs


def test_runs_cut_at_schema_and_partition_changes() -> None:
    a = pa.table({"x": [1.0, 2.0]})
    b = pa.table({"x": pa.array([3, 4], pa.int32())})
    files = [DatasetFile(f"/d/p={p}/f{i}.orc", 10, {"p": p})
             for i, p in enumerate([0, 0, 0, 1, 1, 1])]
    found = [(files[0], a.schema, a), (files[1], a.schema, a), (files[2], b.schema, b),
             (files[3], a.schema, a), (files[4], a.schema, a), (files[5], a.schema, a)]
    seen: list[tuple[str, int]] = []

    def finish(table: pa.Table, f: DatasetFile) -> pa.Table:
        seen.append((f.path, table.num_rows))
        return table.cast(pa.schema([("x", pa.float64())]))

    out = finish_runs(found, ["p"], finish)
    # f0+f1 (one schema, p=0), f2 (another schema), f3..f5 (p=1)
    assert seen == [("/d/p=0/f0.orc", 4), ("/d/p=0/f2.orc", 2), ("/d/p=1/f3.orc", 6)]
    assert pa.concat_tables(out).column("x").to_pylist() == [1, 2, 1, 2, 3, 4] + [1, 2] * 3
    seen.clear()
    finish_runs(found, [], finish)  # no partition column asked for: p does not cut
    assert [n for _, n in seen] == [4, 2, 6]


def test_tables_of_no_columns_keep_their_rows() -> None:
    empty = pa.table({"n": pa.nulls(3)}).select([])
    f = DatasetFile("/d/f.orc", 10, {})
    counts: list[int] = []
    finish_runs([(f, empty.schema, empty)] * 3, [],
                lambda t, _: (counts.append(t.num_rows), t)[1])
    assert counts == [3, 3, 3]  # each alone: a concatenation would lose the row count
