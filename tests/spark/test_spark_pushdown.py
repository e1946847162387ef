"""Spark's ORC filter pushdown over aorc's files returns every matching row.

With ``spark.sql.orc.filterPushdown`` on, Spark hands ORC Java a search argument and ORC Java
skips the stripes and row groups whose statistics (min/max, hasNull) or bloom filters say
the predicate cannot match. Wrong statistics or filters in a file therefore make Spark
silently lose rows. The file here has clustered keys (each row group covers its own range)
and bloom filters on ``k`` and ``s``; every query's result must equal the same filter
applied with pandas. ORC Java's reader, given the same search arguments, must actually skip
row groups, so that the comparisons exercise the index.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from spark_tables import to_arrow

F = pytest.importorskip("pyspark.sql.functions")

pytestmark = pytest.mark.spark

STRIDE = 1000
GROUPS = 24
BASE = 10**10  # keys beyond the int range (see JavaOrc.rows_selected)
STEP = 100_000  # each row group holds keys in [BASE + g * STEP, BASE + g * STEP + STEP / 2)


def pushdown_table(seed: int) -> pa.Table:
    """Clustered int64 keys ``k`` with duplicates and nulls, string keys ``s``, payload."""
    rng = np.random.default_rng(seed)
    rows = STRIDE * GROUPS - 123  # the last row group is partial
    group = np.arange(rows) // STRIDE
    k = BASE + group * STEP + rng.integers(0, STEP // 2, rows) * 2  # even offsets only
    k_null = rng.random(rows) < 0.05
    k_null[(group == 5)] = True  # one row group of nulls only
    k_null[(group == 7)] = False  # and one without nulls
    s = np.array([f"key-{v:012d}" for v in k], dtype=object)
    s_null = rng.random(rows) < 0.05
    return pa.table({
        "id": pa.array(np.arange(rows, dtype=np.int64)),
        "k": pa.array(k, pa.int64(), mask=k_null),
        "s": pa.array(s, pa.string(), mask=s_null),
        "x": pa.array(rng.standard_normal(rows)),
        "tag": pa.array(rng.choice(["red", "green", "blue"], rows)),
    })  # fmt: skip


@pytest.fixture(scope="module")
def pushdown_file(write_orc, tmp_path_factory):
    table = pushdown_table(41)
    path = tmp_path_factory.mktemp("pushdown") / "pushdown.orc"
    write_orc(table, path, bloom_filter_columns=["k", "s"], row_index_stride=STRIDE,
              stripe_size=96 * 1024, compression="zstd")
    return table, path


def _spark_results(spark, path, conditions: list) -> list[pd.DataFrame]:
    """The rows Spark returns for each condition, in one Spark job: a union of one scan per
    condition, each with its own pushed-down filter."""
    spark.conf.set("spark.sql.orc.filterPushdown", "true")
    df = spark.read.orc(str(path))
    scans = [df.filter(c).withColumn("_query", F.lit(i)) for i, c in enumerate(conditions)]
    union = scans[0]
    for scan in scans[1:]:
        union = union.unionByName(scan)
    rows = to_arrow(union).to_pandas()
    return [
        rows[rows._query == i].drop(columns="_query").sort_values("id").reset_index(drop=True)
        for i in range(len(conditions))
    ]


def _check(spark, path, frame: pd.DataFrame, cases: list) -> None:
    """Each (Spark condition, pandas mask, label) selects the same rows in Spark and pandas."""
    results = _spark_results(spark, path, [c for c, _, _ in cases])
    for got, (_, mask, what) in zip(results, cases, strict=True):
        want = frame[mask.fillna(False)].sort_values("id").reset_index(drop=True)
        assert len(got) == len(want), f"{what}: Spark gave {len(got)} rows, expected {len(want)}"
        pd.testing.assert_frame_equal(got, want, check_dtype=False, obj=what)


def _values(table: pa.Table) -> tuple[list[int], list[int]]:
    """Keys present (one per region of the file) and absent (inside and outside the ranges)."""
    k = table.column("k").to_pylist()
    present = [k[i] for i in (3, 1500, 7001, 7999, 12345, len(k) - 1) if k[i] is not None]
    absent = [BASE + 9 * STEP + 1, BASE + 9 * STEP + 777, BASE + 2 * STEP + STEP // 2 + 10,
              BASE - 5, BASE + GROUPS * STEP + 3]  # odd offsets, a gap, below, above
    assert not set(absent) & set(k)
    return present, absent


def test_equality_on_int_and_string_keys(spark, pushdown_file):
    table, path = pushdown_file
    frame = table.to_pandas()
    present, absent = _values(table)
    keys = present + absent
    texts = [f"key-{v:012d}" for v in keys]
    cases = [(F.col("k") == v, frame.k == v, f"k = {v}") for v in present[:3] + absent[:3]]
    cases += [(F.col("s") == t, frame.s == t, f"s = {t}") for t in texts[1:2] + texts[-2:]]
    cases += [
        (F.col("k").isin(keys), frame.k.isin(keys), "k in (...)"),
        (F.col("s").isin(texts), frame.s.isin(texts), "s in (...)"),
    ]
    _check(spark, path, frame, cases)


def test_range_and_null_predicates(spark, pushdown_file):
    table, path = pushdown_file
    frame = table.to_pandas()
    lo, hi = BASE + 6 * STEP + 4321, BASE + 11 * STEP + 20
    s_lo, s_hi = f"key-{BASE + 3 * STEP + 700:012d}", f"key-{BASE + 4 * STEP + 10:012d}"
    cases = [
        ((F.col("k") >= lo) & (F.col("k") < hi), (frame.k >= lo) & (frame.k < hi), "k range"),
        (F.col("k") > BASE + 22 * STEP, frame.k > BASE + 22 * STEP, "k > late"),
        (F.col("k") <= BASE + 1, frame.k <= BASE + 1, "k <= first"),
        (F.col("k").isNull(), frame.k.isna(), "k is null"),
        (F.col("k").isNotNull() & (F.col("tag") == "red"), frame.k.notna() & (frame.tag == "red"),
         "k is not null"),
        ((F.col("s") >= s_lo) & (F.col("s") < s_hi), (frame.s >= s_lo) & (frame.s < s_hi),
         "s range"),
    ]  # fmt: skip
    _check(spark, path, frame, cases)


def test_java_skips_row_groups(jvm_orc, pushdown_file):
    """The index is used: ORC Java keeps one row group or none for an equality."""
    table, path = pushdown_file
    present, absent = _values(table)
    total = table.num_rows
    for v in present:
        assert 0 < jvm_orc.rows_selected(path, "k", v) <= 2 * STRIDE, f"k = {v}"
        assert 0 < jvm_orc.rows_selected(path, "s", f"key-{v:012d}") <= 2 * STRIDE, f"s for {v}"
    for v in absent:
        # inside a row group's range only the bloom filter can rule the group out
        assert jvm_orc.rows_selected(path, "k", v) <= STRIDE < total, f"absent k = {v}"
        assert jvm_orc.rows_selected(path, "s", f"key-{v:012d}") <= STRIDE, f"absent s {v}"
