"""Issue 33 items 4-7: ``schema=`` on the writers for pandas input and a message naming the
column and the fix when pandas' conversion fails; types ORC cannot hold named with their
column and the cast that works; a truncated file called truncated (no protobuf words); a
Polars scan's ``scan_stats`` counting the requests and bytes its ``io_stats`` counts. Files
are checked with pyarrow.orc."""

from __future__ import annotations

import datetime
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.orc as pa_orc
import pytest

import aorc
import aorc.sync

MAP = pa.map_(pa.string(), pa.int64())
SCHEMA = pa.schema([("id", pa.int64()), ("mp", MAP)])


def _frame() -> pd.DataFrame:
    # what pandas holds after reading a map column: lists of (key, value) pairs
    return pd.DataFrame({"id": [1, 2], "mp": [[("a", 1)], [("b", 2), ("c", 3)]]})


def _check(path: Path) -> None:
    got = pa_orc.read_table(str(path))
    assert got.schema.field("mp").type == MAP
    assert got.to_pylist() == [{"id": 1, "mp": [("a", 1)]},
                               {"id": 2, "mp": [("b", 2), ("c", 3)]}]


def test_pandas_failure_names_column_and_fix(tmp_path: Path) -> None:
    with pytest.raises(aorc.SchemaError) as info:
        aorc.sync.write_table(_frame(), tmp_path / "x.orc")
    text = str(info.value)
    assert "'mp'" in text and "schema=" in text and "pa.map_" in text
    assert isinstance(info.value.__cause__, pa.ArrowException)
    assert not (tmp_path / "x.orc").exists()


async def test_schema_guides_pandas_in_every_writer(tmp_path: Path) -> None:
    await aorc.write_table(_frame(), tmp_path / "a.orc", schema=SCHEMA)
    _check(tmp_path / "a.orc")
    aorc.sync.write_table(_frame(), tmp_path / "b.orc", schema=SCHEMA)
    _check(tmp_path / "b.orc")
    async with aorc.open_writer(tmp_path / "c.orc", SCHEMA) as writer:
        await writer.write(_frame())
    _check(tmp_path / "c.orc")
    with aorc.sync.open_writer(tmp_path / "d.orc", SCHEMA) as sync_writer:
        sync_writer.write(_frame())
    _check(tmp_path / "d.orc")
    files = await aorc.write_dataset(_frame(), tmp_path / "ds", schema=SCHEMA)
    assert len(files) == 1
    _check(Path(files[0]))
    files = aorc.sync.write_dataset([_frame()], tmp_path / "ds2", schema=SCHEMA)
    _check(Path(files[0]))


async def test_schema_that_does_not_fit_says_which_type(tmp_path: Path) -> None:
    wrong = pa.schema([("id", pa.int64()), ("mp", pa.map_(pa.string(), pa.string()))])
    with pytest.raises(aorc.SchemaError, match="'mp'.*map<string, string>"):
        await aorc.write_table(_frame(), tmp_path / "x.orc", schema=wrong)


@pytest.mark.parametrize(("kind", "cast"), [(pa.time64("us"), pa.int64()),
                                            (pa.time32("ms"), pa.int32()),
                                            (pa.duration("ms"), pa.int64())])
def test_unwritable_type_names_column_and_a_cast_that_works(tmp_path: Path, kind: pa.DataType,
                                                            cast: pa.DataType) -> None:
    values = ([datetime.time(6, 30)] if pa.types.is_time(kind)
              else [datetime.timedelta(seconds=5)])
    table = pa.table({"id": [1], "t": pa.array(values, kind)})
    with pytest.raises(aorc.SchemaError) as info:
        aorc.sync.write_table(table, tmp_path / "x.orc")
    text = str(info.value)
    assert "'t'" in text and str(kind) in text and f"pa.{cast}()" in text
    with pytest.raises(pa.ArrowNotImplementedError):  # the peer refuses it too
        pa_orc.write_table(table, str(tmp_path / "peer.orc"))
    fixed = table.set_column(1, "t", table["t"].cast(cast))  # the cast it names works
    aorc.sync.write_table(fixed, tmp_path / "ok.orc")
    assert pa_orc.read_table(str(tmp_path / "ok.orc")).equals(fixed)


def test_nested_unwritable_type_names_the_path(tmp_path: Path) -> None:
    table = pa.table({"s": pa.array([{"x": None}], pa.struct([("x", pa.null())]))})
    with pytest.raises(aorc.SchemaError, match=r"column 's\.x'.*null"):
        aorc.sync.write_table(table, tmp_path / "x.orc")


def test_truncated_file_says_so(tmp_path: Path) -> None:
    whole = tmp_path / "whole.orc"
    pa_orc.write_table(pa.table({"x": list(range(20_000))}), str(whole))
    data = whole.read_bytes()
    for cut in (len(data) // 2, len(data) - 5, 40):
        path = tmp_path / f"cut{cut}.orc"
        path.write_bytes(data[:cut])
        with pytest.raises(aorc.CorruptFileError) as info:
            aorc.sync.read_table(path)
        text = str(info.value)
        assert "truncated" in text and "cut short" in text, text
        for jargon in ("proto", "Wire format", "parsing message"):
            assert jargon not in text, text


def test_polars_scan_stats_count_what_io_stats_count(tmp_path: Path) -> None:
    import polars as pl

    import aorc.polars

    pa_orc.write_table(pa.table({"x": list(range(5000))}), str(tmp_path / "a.orc"))
    scan = aorc.polars.open_scan(tmp_path / "a.orc")
    frame = scan.lazy().collect()
    assert frame.height == 5000
    io, stats = scan.io_stats, scan.scan_stats
    assert io.requests >= 1 and io.bytes > 0
    assert (stats.requests, stats.bytes) == (io.requests, io.bytes)
    again = scan.lazy().filter(pl.col("x") >= 4000).collect()  # a second, filtered run
    assert again.height == 1000
    io, stats = scan.io_stats, scan.scan_stats
    assert (stats.requests, stats.bytes) == (io.requests, io.bytes)
    assert stats.rows_returned == 1000
