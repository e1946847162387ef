"""aorc.polars.scan: scan_orc/read_orc against pyarrow.orc and Polars' own evaluation; what
the pushdown prunes (stripes, files, bytes) and that row limits stop the reads."""

from __future__ import annotations

import asyncio
import datetime
import decimal
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.orc as po
import pytest

import aorc.sync
from aorc.errors import ObjectNotFoundError, SchemaError, UnsupportedFeatureError
from aorc.polars import open_scan, read_orc, scan_orc

ROWS = 20_000
POLARS_MAJOR = int(pl.__version__.split(".")[0])


def _table(rows: int = ROWS, seed: int = 7) -> pa.Table:
    rng = np.random.default_rng(seed)
    ids = np.arange(rows)
    nulls = rng.random(rows) < 0.1
    return pa.table({
        "id": pa.array(ids, pa.int64()),
        "small": pa.array((ids % 100).astype(np.int32), mask=nulls),
        "x": pa.array(rng.normal(size=rows)),
        "name": pa.array([f"n{i % 37:02d}" for i in range(rows)], mask=rng.random(rows) < 0.05),
        "flag": pa.array(ids % 3 == 0),
        "day": pa.array([datetime.date(2024, 1, 1) + datetime.timedelta(days=int(i % 60))
                         for i in ids], pa.date32()),
        "ts": pa.array(ids * 1_000_000_007, pa.timestamp("ns")),
        "amount": pa.array([decimal.Decimal(int(i)) / 100 for i in ids], pa.decimal128(12, 2)),
        "tags": pa.array([[int(i), int(i) + 1] if i % 4 else None for i in ids],
                         pa.list_(pa.int32())),
        "pt": pa.array([{"a": int(i), "b": str(i)} for i in ids],
                       pa.struct([("a", pa.int64()), ("b", pa.string())])),
    })


@pytest.fixture(scope="module")
def orc_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A file of many small stripes (the id column sorted, so ranges prune stripes)."""
    path = tmp_path_factory.mktemp("polars") / "t.orc"
    aorc.sync.write_table(_table(), path, stripe_size=64 * 1024, row_index_stride=1000,
                          bloom_filter_columns=["name"])
    return path


@pytest.fixture(scope="module")
def big_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A file over aorc's small-file size (4 MiB, read whole when opened), so that the bytes
    read show what was skipped: sorted ids and random doubles, in 16 stripes."""
    rng = np.random.default_rng(11)
    rows = 600_000
    table = pa.table({"id": pa.array(np.arange(rows)), "x": pa.array(rng.normal(size=rows)),
                      "y": pa.array(rng.normal(size=rows)), "z": pa.array(rng.normal(size=rows))})
    path = tmp_path_factory.mktemp("polars") / "big.orc"
    aorc.sync.write_table(table, path, stripe_size=3 << 20, compression="none")
    assert path.stat().st_size > 5 << 20
    return path


def _pyarrow(path: Path) -> pl.DataFrame:
    frame = pl.from_arrow(po.read_table(str(path)))
    assert isinstance(frame, pl.DataFrame)
    return frame


def test_the_whole_file_reads_as_pyarrow_reads_it(orc_file: Path) -> None:
    expected = _pyarrow(orc_file)
    got = scan_orc(orc_file).collect()
    assert got.schema == expected.schema
    assert got.equals(expected)
    assert read_orc(str(orc_file)).equals(expected)


def test_projection_reads_only_the_columns_used(orc_file: Path, big_file: Path) -> None:
    got = scan_orc(orc_file).select("name", "id").collect()
    assert got.equals(_pyarrow(orc_file).select("name", "id"))
    full, narrow = open_scan(big_file), open_scan(big_file)
    full.lazy().collect()
    got = narrow.lazy().select("x").collect()
    assert got.equals(_pyarrow(big_file).select("x"))
    assert 0 < narrow.io_stats.bytes < full.io_stats.bytes / 2


def test_a_selective_predicate_reads_fewer_bytes(big_file: Path) -> None:
    scan, everything = open_scan(big_file), open_scan(big_file)
    predicate = pl.col("id").is_between(100_000, 120_000)
    got = scan.lazy().filter(predicate).collect()
    assert got.equals(everything.lazy().collect().filter(predicate))
    assert scan.scan_stats.stripes_pruned_by_stats >= scan.scan_stats.stripes_total - 2
    assert scan.io_stats.bytes < everything.io_stats.bytes / 4


@pytest.mark.parametrize("predicate", [
    pl.col("id") < 1500,
    (pl.col("id") >= 17_000) & (pl.col("small") != 3),
    pl.col("id").is_between(5000, 5200) | (pl.col("id") == 19_999),
    pl.col("id").is_in([3, 9000, 12_345]),
    ~(pl.col("id") >= 800),
    pl.col("ts") < datetime.datetime(1970, 1, 1, 0, 0, 1),
])
def test_a_selective_predicate_prunes_stripes_with_identical_results(
        orc_file: Path, predicate: Any) -> None:
    scan, everything = open_scan(orc_file), open_scan(orc_file)
    got = scan.lazy().filter(predicate).collect()
    expected = _pyarrow(orc_file).filter(predicate)
    assert got.equals(expected)
    # the same predicate applied by Polars after an unfiltered scan reads every stripe
    assert everything.lazy().collect().filter(predicate).equals(expected)
    stats = scan.scan_stats
    assert stats.stripes_total >= 8
    assert stats.stripes_pruned_by_stats >= stats.stripes_total - 3  # is_in: three stripes
    assert stats.rows_read < ROWS / 4


def test_an_equality_on_a_bloom_filtered_column_prunes_row_groups(orc_file: Path) -> None:
    scan = open_scan(orc_file)
    got = scan.lazy().filter(pl.col("name") == "n05x").collect()
    assert got.height == 0
    assert scan.scan_stats.row_groups_pruned_by_bloom > 0


def test_an_untranslatable_predicate_filters_exactly_without_pruning(orc_file: Path) -> None:
    predicate = ((pl.col("id") * 2 + pl.col("small")) % 7 == 3) & pl.col("name").str.ends_with("5")
    scan = open_scan(orc_file)
    got = scan.lazy().filter(predicate).select("id", "name").collect()
    assert got.equals(_pyarrow(orc_file).filter(predicate).select("id", "name"))
    assert scan.scan_stats.stripes_pruned_by_stats == 0


def test_head_stops_reading_early(big_file: Path) -> None:
    head, everything = open_scan(big_file), open_scan(big_file)
    got = head.lazy().head(10).collect()
    assert got.equals(_pyarrow(big_file).head(10))
    everything.lazy().collect()
    assert head.io_stats.bytes < everything.io_stats.bytes / 4
    # a filtered head: 5 matching rows, the scan stops in the first stripes (Polars 1.x
    # passes no row limit to a source with a predicate, and reads it to the end)
    filtered = open_scan(big_file)
    predicate = pl.col("x") > 2
    got = filtered.lazy().filter(predicate).head(5).collect()
    assert got.equals(_pyarrow(big_file).filter(predicate).head(5))
    if POLARS_MAJOR >= 2:
        assert filtered.io_stats.bytes < everything.io_stats.bytes / 4


def _pending_tasks() -> int:
    async def count() -> int:
        return len(asyncio.all_tasks()) - 1

    return aorc.sync.run(count())


def test_abandoning_a_scan_early_leaves_no_task_running(tmp_path: Path) -> None:
    table = _table(4000)
    aorc.sync.write_dataset(table, tmp_path / "ds", partition_cols=["flag"],
                            max_rows_per_file=500, stripe_size=16 * 1024)
    lf = scan_orc(tmp_path / "ds")
    for n in (1, 700, 1500):
        assert lf.head(n).collect().height == n
        assert _pending_tasks() == 0
    assert lf.select(pl.len()).collect().item() == 4000


def test_a_partition_predicate_prunes_files(tmp_path: Path) -> None:
    table = _table(6000).append_column("part", pa.array(np.arange(6000) % 4, pa.int32()))
    aorc.sync.write_dataset(table, tmp_path / "ds", partition_cols=["part"],
                            max_rows_per_file=1000)
    narrow, wide = open_scan(tmp_path / "ds"), open_scan(tmp_path / "ds")
    got = narrow.lazy().filter(pl.col("part") == 2).sort("id").collect()
    expected = wide.lazy().collect().filter(pl.col("part") == 2).sort("id")
    assert got.equals(expected)
    assert got.height == 1500
    assert "part" in got.columns and got["part"].dtype == pl.Int32
    files = len(narrow.dataset.files)
    assert len(narrow.dataset.files_matching([("part", "==", 2)])) * 4 == files
    # the tails (these small files whole) were read when the dataset was opened; the
    # reads decode the files of partition 2 only
    assert narrow.dataset.scan_stats.stripes_total == 0  # no data filter left to count
    wide.lazy().filter(pl.col("id") >= 0).collect()
    narrow_counted = open_scan(tmp_path / "ds")
    narrow_counted.lazy().filter((pl.col("part") == 2) & (pl.col("id") >= 0)).collect()
    assert narrow_counted.scan_stats.stripes_total * 4 == wide.scan_stats.stripes_total
    assert narrow_counted.scan_stats.rows_read == 1500
    # and a data predicate with a partition one: both prune
    got = scan_orc(tmp_path / "ds").filter(
        (pl.col("part").is_in([1, 3])) & (pl.col("id") < 100)).sort("id").collect()
    assert got["id"].to_list() == [i for i in range(100) if i % 4 in (1, 3)]


def test_filters_argument_applies_besides_the_predicate(orc_file: Path) -> None:
    got = scan_orc(orc_file, filters=[("id", "<", 100)]).filter(pl.col("small") > 90).collect()
    expected = _pyarrow(orc_file).filter((pl.col("id") < 100) & (pl.col("small") > 90))
    assert got.equals(expected)
    with pytest.raises(SchemaError, match="filters must be"):
        scan_orc(orc_file, filters="id < 3")


def test_read_orc_columns_and_n_rows(orc_file: Path) -> None:
    got = read_orc(orc_file, columns=["x", "id"], n_rows=7)
    assert got.equals(_pyarrow(orc_file).select("x", "id").head(7))


def test_a_missing_source_raises(tmp_path: Path) -> None:
    with pytest.raises(ObjectNotFoundError):
        scan_orc(tmp_path / "missing.orc")


def test_a_union_column_is_a_clear_error_at_scan_time(tmp_path: Path) -> None:
    pyorc = pytest.importorskip("pyorc")
    path = tmp_path / "u.orc"
    with path.open("wb") as f, pyorc.Writer(f, "struct<a:int,u:uniontype<int,string>>") as w:
        w.write((1, 2))
        w.write((2, "x"))
    with pytest.raises(UnsupportedFeatureError, match="column 'u'"):
        scan_orc(path)


def test_a_dataset_on_s3(s3_bucket: str, s3_proxy: Any) -> None:
    table = _table(3000).append_column("part", pa.array(np.arange(3000) % 3, pa.int32()))
    options = {"endpoint_url": s3_proxy.url}
    aorc.sync.write_dataset(table, f"s3://{s3_bucket}/events", partition_cols=["part"],
                            storage_options=options)
    predicate = (pl.col("part") == 1) & (pl.col("small") < 10)
    got = (scan_orc(f"s3://{s3_bucket}/events", storage_options=options)
           .filter(predicate).select("id", "small", "part").sort("id").collect())
    local = pl.from_arrow(table)
    assert isinstance(local, pl.DataFrame)
    expected = local.filter(predicate).select("id", "small", "part").sort("id")
    assert got.equals(expected)
    single = scan_orc(f"s3://{s3_bucket}/events/part=2/" + _one_name(s3_bucket, options),
                      storage_options=options).collect()
    assert single.height == 1000


def _one_name(bucket: str, options: dict[str, Any]) -> str:
    store = aorc.sync.open_dataset(f"s3://{bucket}/events/part=2/", storage_options=options)
    return str(store.dataset.files[0]).rsplit("/", 1)[1]


def test_importing_aorc_does_not_import_polars() -> None:
    code = "import sys, aorc, aorc.sync; print('polars' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, timeout=120)
    assert done.stdout.strip() == "False"


def test_without_polars_the_import_error_says_how_to_install() -> None:
    code = ("import sys; sys.modules['polars'] = None\n"
            "try:\n    import aorc.polars\nexcept ImportError as e:\n    print(e)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, timeout=120)
    assert "pip install polars" in done.stdout
