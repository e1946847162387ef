"""ORC Java (spark.read.orc) reads a folder that aorc.compact merged, stripe-copied files
and re-encoded ones alike, with the rows the small files held; its filter pushdown still
works on the merged files (their statistics were merged, not made up)."""

from __future__ import annotations

import asyncio
import pathlib
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.orc as po
import pytest
from spark_tables import to_arrow

import aorc

pytestmark = pytest.mark.spark


def _table(n: int = 3_000) -> pa.Table:
    rng = np.random.default_rng(17)
    return pa.table({"id": pa.array(np.arange(n, dtype=np.int64)),
                     "k": pa.array([f"p{i % 3}" for i in range(n)]),
                     "s": pa.array([f"name-{v}" for v in rng.integers(0, 99, n)]),
                     "x": pa.array(rng.standard_normal(n))})


def test_spark_reads_a_compacted_folder(spark: Any, tmp_path: pathlib.Path) -> None:
    table = _table()
    root = tmp_path / "ds"
    asyncio.run(aorc.write_dataset(table, root, partition_cols=["k"], max_rows_per_file=100))
    # one folder gets a file from another writer (ORC C++): re-encoded, not stripe-copied
    odd = table.filter(pa.compute.equal(table["k"], "p2")).drop_columns(["k"]).slice(0, 10)
    odd = odd.set_column(0, "id", pa.compute.add(odd["id"], 1_000_000))
    po.write_table(odd, root / "k=p2" / "from-cpp.orc")
    expected = pa.concat_tables([table.drop_columns(["k"]).append_column("k", table["k"]),
                                 odd.append_column("k", pa.array(["p2"] * 10))])
    result = asyncio.run(aorc.compact(root, target_size=1 << 30))
    assert result.stripe_copied == 2 and result.re_encoded == 1
    assert sum(1 for _ in root.rglob("*.orc")) == 3
    df = spark.read.orc(str(root))
    got = to_arrow(df.select("id", "s", "x", "k")).sort_by("id")
    want = expected.select(["id", "s", "x", "k"]).sort_by("id")
    assert got.column("id").to_pylist() == want.column("id").to_pylist()
    assert got.column("s").to_pylist() == want.column("s").to_pylist()
    assert got.column("x").to_pylist() == want.column("x").to_pylist()
    assert got.column("k").cast(pa.string()).to_pylist() == want.column("k").to_pylist()
    assert df.where("id >= 2990 and id < 1000000").count() == 10
