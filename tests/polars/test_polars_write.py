"""aorc.polars.write: write_orc output read back by pyarrow.orc, Polars-only types converted,
LazyFrames streamed batch by batch, S3 destinations."""

from __future__ import annotations

import datetime
import decimal
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa
import pyarrow.orc as po
import pytest

import aorc.sync
from aorc.errors import SchemaError
from aorc.polars import scan_orc, write_orc


def _frame() -> pl.DataFrame:
    n = 5000
    return pl.DataFrame({
        "i": pl.Series(range(n), dtype=pl.Int64),
        "i8": pl.Series([i % 100 - 50 for i in range(n)], dtype=pl.Int8),
        "u8": pl.Series([i % 256 for i in range(n)], dtype=pl.UInt8),
        "u32": pl.Series([i * 1000 for i in range(n)], dtype=pl.UInt32),
        "f32": pl.Series([i / 3 for i in range(n)], dtype=pl.Float32),
        "s": [f"s{i}" if i % 7 else None for i in range(n)],
        "cat": pl.Series([f"c{i % 5}" for i in range(n)], dtype=pl.Categorical),
        "enum": pl.Series([["lo", "hi"][i % 2] for i in range(n)], dtype=pl.Enum(["lo", "hi"])),
        "b": [i % 3 == 0 for i in range(n)],
        "d": [datetime.date(2024, 1, 1) + datetime.timedelta(days=i % 400) for i in range(n)],
        "t": pl.Series([datetime.datetime(2024, 1, 1, 0, 0, i % 60, i) for i in range(n)],
                       dtype=pl.Datetime("us")),
        "tz": pl.Series([datetime.datetime(2024, 6, 1, i % 24) for i in range(n)],
                        dtype=pl.Datetime("us")).dt.replace_time_zone("Europe/Berlin"),
        "m": pl.Series([decimal.Decimal(i) / 100 for i in range(n)], dtype=pl.Decimal(12, 2)),
        "bin": [bytes([i % 256]) for i in range(n)],
        "l": [[i, i + 1] if i % 5 else None for i in range(n)],
        "arr": pl.Series([[i, -i] for i in range(n)], dtype=pl.Array(pl.Int32, 2)),
        "st": [{"a": i, "c": pl.Series(["x"], dtype=pl.Categorical)[0]} for i in range(n)],
    })


def _expected(frame: pl.DataFrame) -> pl.DataFrame:
    """What the ORC file holds, as Polars reads it: Categorical/Enum as strings, unsigned
    integers widened, arrays as lists, zoned timestamps in UTC at nanoseconds, naive ones
    at nanoseconds."""
    return frame.with_columns(
        pl.col("cat", "enum").cast(pl.String),
        pl.col("u8").cast(pl.Int16), pl.col("u32").cast(pl.Int64),
        pl.col("arr").cast(pl.List(pl.Int32)),
        pl.col("t").cast(pl.Datetime("ns")),
        pl.col("tz").dt.convert_time_zone("UTC").cast(pl.Datetime("ns", "UTC")),
        pl.col("st").cast(pl.Struct({"a": pl.Int64, "c": pl.String})),
    )


def test_a_dataframe_reads_back_in_pyarrow(tmp_path: Path) -> None:
    frame = _frame()
    path = tmp_path / "w.orc"
    write_orc(frame, path)
    back = pl.from_arrow(po.read_table(str(path)))
    assert isinstance(back, pl.DataFrame)
    expected = _expected(frame)
    # pyarrow.orc reads timestamps at ns, the zoned column as UTC instants
    assert back.with_columns(pl.col("tz").dt.replace_time_zone("UTC")).equals(expected)
    assert scan_orc(path).collect().equals(expected)


def test_a_lazyframe_is_written_batch_by_batch(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    frame = pl.DataFrame({"a": range(30_000), "k": [i % 7 for i in range(30_000)]})
    lazy = frame.lazy().filter(pl.col("k") != 3).with_columns(b=pl.col("a") * 2)
    written: list[int] = []
    original = aorc.sync.SyncWriter.write

    def write(self: Any, data: Any) -> None:
        written.append(data.num_rows)
        original(self, data)

    monkeypatch.setattr(aorc.sync.SyncWriter, "write", write)
    if hasattr(pl.LazyFrame, "collect_batches"):
        real = pl.LazyFrame.collect_batches
        monkeypatch.setattr(pl.LazyFrame, "collect_batches",
                            lambda self, **kw: real(self, chunk_size=4000, **kw))
    path = tmp_path / "lazy.orc"
    write_orc(lazy, path, compression="zlib", stripe_size=64 * 1024)
    expected = lazy.collect()
    back = pl.from_arrow(po.read_table(str(path)))
    assert isinstance(back, pl.DataFrame)
    assert back.equals(expected)
    assert sum(written) == expected.height
    if hasattr(pl.LazyFrame, "collect_batches"):
        assert len(written) > 1
    with aorc.sync.open_reader(path) as reader:
        assert reader.compression == "zlib"


@pytest.mark.parametrize(("column", "name"), [
    (pl.Series("when", [datetime.time(1, 2)]), "when"),
    (pl.Series("gap", [datetime.timedelta(seconds=3)]), "gap"),
    (pl.Series("nothing", [None], dtype=pl.Null), "nothing"),
])
def test_a_type_orc_lacks_is_a_clear_error(tmp_path: Path, column: Any, name: str) -> None:
    with pytest.raises(SchemaError, match=f"column '{name}'"):
        write_orc(column.to_frame(), tmp_path / "x.orc")
    assert not (tmp_path / "x.orc").exists()


def test_an_unsigned_value_beyond_the_signed_range_fails(tmp_path: Path) -> None:
    frame = pl.DataFrame({"u": pl.Series([2**63], dtype=pl.UInt64)})
    with pytest.raises((SchemaError, pl.exceptions.PolarsError, pa.ArrowInvalid)):
        write_orc(frame, tmp_path / "x.orc")


def test_not_a_frame_is_a_type_error(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="polars DataFrame or LazyFrame"):
        write_orc(pa.table({"a": [1]}), tmp_path / "x.orc")  # type: ignore[arg-type,unused-ignore]


def test_write_to_s3(s3_bucket: str, s3_proxy: Any) -> None:
    options = {"endpoint_url": s3_proxy.url}
    frame = pl.DataFrame({"a": range(1000), "s": [str(i) for i in range(1000)]})
    write_orc(frame, f"s3://{s3_bucket}/out/f.orc", storage_options=options)
    back = scan_orc(f"s3://{s3_bucket}/out/f.orc", storage_options=options).collect()
    assert back.equals(frame)
