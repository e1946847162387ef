"""ORC Java reads the statistics of aorc's files as the statistics of the data.

For a file written by the writer under test, ORC Java's ``reader.getStatistics()`` (file),
``reader.getStripeStatistics()`` and the row-index statistics (``readRowIndex``) must equal
the statistics computed from the table with ORC Java's update and merge rules
(``java_stats_model``): counts, hasNull, min/max/sum of integers, doubles, strings (with
lower/upper bounds for values over 1024 bytes), dates, timestamps, decimals, true counts,
binary and string lengths, list/map child counts. The statistics of the same rows written
by Spark (ORC Java's writer) must also be the ones aorc writes.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from helpers.random_tables import ALL_TYPES, random_table
from java_stats_model import column_levels, expected_statistics, merge_all
from spark_java_orc import assert_stats_equal
from spark_tables import dataframe_from_arrow, micros_type, spark_maps

pytestmark = pytest.mark.spark

ROWS = 4000
SPARK_ROWS = 2500  # rows written by both Spark and aorc (one stripe each)
STRIDE = 1000

# Long strings: some over 1024 bytes with multi-byte characters across byte 1024, one of
# exactly 1024 bytes; none ends its first 1024 bytes with "~" (ORC Java's upper bound would
# then hold an over-long encoding).
_LONG = [
    "A" * 1023 + "é" + "tail",
    "日本" * 200,
    "b" * 1024,
    "b" * 1025,
    "\U0001f600" * 300,
    "\U0001f600" * 255 + "a" + "\U0001f600" * 20,
    " " * 1500,
    "Zz" * 700 + "ß",
    "",
    "short",
    "\U0001f601",
    "Zz",
]


def _long_strings(rng: np.random.Generator, n: int) -> pa.Array:
    picks = rng.integers(0, len(_LONG), n)
    mask = rng.random(n) < 0.3
    return pa.array([_LONG[i] for i in picks], pa.string(), mask=mask)


def stats_table(seed: int, rows: int) -> pa.Table:
    """Every type, plus long strings, an all-null column and NaN-free doubles."""
    table = random_table(seed, rows, ALL_TYPES)
    rng = np.random.default_rng(seed)
    extra = {
        "long_str": _long_strings(rng, rows),
        "all_null": pa.nulls(rows, pa.int32()),
        "f64_plain": pa.array(rng.standard_normal(rows) * 1e6),
        "i64_small": pa.array(rng.integers(-(10**12), 10**12, rows)),
    }
    for name, arr in extra.items():
        table = table.append_column(name, arr)
    return table


@pytest.fixture(scope="module")
def table() -> pa.Table:
    return stats_table(21, ROWS)


@pytest.fixture(scope="module")
def stripes_file(table, write_orc, tmp_path_factory):
    """The table written in several stripes, row groups of STRIDE rows."""
    path = tmp_path_factory.mktemp("stats") / "stats.orc"
    write_orc(table, path, stripe_size=512 * 1024, row_index_stride=STRIDE,
              compression="zstd", compression_block_size=16 * 1024)
    return path


def _names(table: pa.Table) -> dict[int, str]:
    """Column id -> a readable name (dotted path of the first level, type)."""
    return {lv.column_id: f"column {lv.column_id} ({lv.type})" for lv in column_levels(table)}


def test_file_and_stripe_statistics(jvm_orc, table, stripes_file):
    info = jvm_orc.file_info(stripes_file)
    stripe_rows = info["stripe_rows"]
    assert len(stripe_rows) >= 2, f"expected several stripes, got {stripe_rows}"
    levels, groups = expected_statistics(table, stripe_rows, STRIDE)
    names = _names(table)
    stripe_accs = [[merge_all(g, lv.type) for g, lv in zip(stripe, levels, strict=True)]
                   for stripe in groups]
    got_stripes = jvm_orc.stripe_statistics(stripes_file)
    assert len(got_stripes) == len(stripe_rows)
    for s, (got, want) in enumerate(zip(got_stripes, stripe_accs, strict=True)):
        assert len(got) == len(levels)
        for lv, g, w in zip(levels, got, want, strict=True):
            assert_stats_equal(g, w.expected(), f"stripe {s}, {names[lv.column_id]}")
    got_file = jvm_orc.file_statistics(stripes_file)
    assert len(got_file) == len(levels)
    for i, lv in enumerate(levels):
        want = merge_all([stripe[i] for stripe in stripe_accs], lv.type)
        assert_stats_equal(got_file[i], want.expected(), f"file, {names[lv.column_id]}")


def test_row_group_statistics(jvm_orc, table, stripes_file):
    stripe_rows = jvm_orc.file_info(stripes_file)["stripe_rows"]
    levels, groups = expected_statistics(table, stripe_rows, STRIDE)
    names = _names(table)
    columns = [lv.column_id for lv in levels]
    for s, stripe in enumerate(groups):
        index = jvm_orc.row_index(stripes_file, s, columns)
        for lv, want in zip(levels, stripe, strict=True):
            got = index[lv.column_id]["stats"]
            assert len(got) == len(want), f"stripe {s}, {names[lv.column_id]}: row groups"
            for g, (a, w) in enumerate(zip(got, want, strict=True)):
                where = f"stripe {s}, row group {g}, {names[lv.column_id]}"
                assert_stats_equal(a, w.expected(), where)


def test_statistics_equal_sparks(spark, jvm_orc, write_orc, table, tmp_path):
    """Spark (ORC Java's writer) and aorc record the same statistics for the same rows.

    Except the child counts of lists and maps: ORC Java's list and map writers record the
    capacity of each batch (1024 for Spark) instead of each value's length
    (``updateCollectionLength(vec.lengths.length)``), so only their count and hasNull can
    match; the other tests check aorc's child counts against the data.
    """
    micros = pa.schema([f.with_type(micros_type(f.type)) for f in table.schema])
    # Spark's TimestampType is an instant; it writes ORC "timestamp", not the instant kind.
    # Spark's ORC writer keeps one entry per map key, sorted: give both writers such maps.
    same = spark_maps(table.slice(0, SPARK_ROWS).drop_columns(["ts_utc"]).cast(
        pa.schema([f for f in micros if f.name != "ts_utc"]), safe=False
    ))
    ours = tmp_path / "aorc.orc"
    write_orc(same, ours, compression="zlib")
    spark_dir = tmp_path / "spark"
    frame = dataframe_from_arrow(spark, same)
    frame.coalesce(1).write.option("compression", "zlib").orc(str(spark_dir))
    (theirs,) = spark_dir.glob("*.orc")
    names = _names(same)
    for what, got, want in [
        ("file", jvm_orc.file_statistics(ours), jvm_orc.file_statistics(theirs)),
        ("stripe 0", jvm_orc.stripe_statistics(ours)[0], jvm_orc.stripe_statistics(theirs)[0]),
    ]:
        assert len(got) == len(want)
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            if w["kind"] == "CollectionColumnStatisticsImpl":
                w = {k: w[k] for k in ("kind", "count", "has_null")}
            assert_stats_equal(g, w, f"{what}, {names[i]}, aorc against Spark",
                               exact_keys=w["kind"] != "CollectionColumnStatisticsImpl")
