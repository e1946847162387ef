"""Unsigned integers and half floats are written as the next wider signed ORC type (issue 13,
item 1), judged by pyarrow.orc, pyorc and aorc itself; Spark's view is in tests/spark."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.orc as po
import pyorc
import pytest

import aorc
from aorc.format.types import WIDENED_ARROW_TYPES


def unsigned_table(seed: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    n = 500
    cols: dict[str, pa.Array] = {}
    for t in (pa.uint8(), pa.uint16(), pa.uint32()):
        info = np.iinfo(t.to_pandas_dtype())
        values = rng.integers(0, int(info.max) + 1, n, dtype=np.uint64)
        values[:2] = [0, info.max]
        mask = rng.random(n) < 0.1
        mask[:2] = False
        cols[str(t)] = pa.array(values.astype(t.to_pandas_dtype()), t, mask=mask)
    big = rng.integers(0, 2**63 - 1, n, dtype=np.uint64)
    big[:2] = [0, 2**63 - 1]  # the largest uint64 that fits
    cols["uint64"] = pa.array(big, pa.uint64())
    halves = rng.standard_normal(n).astype(np.float16)
    halves[:4] = [np.inf, -np.inf, np.finfo(np.float16).max, np.finfo(np.float16).tiny]
    cols["float16"] = pa.array(halves, pa.float16())
    cols["nested"] = pa.array([[int(v), 7] if v % 3 else None for v in big[:n] % 1000],
                              pa.list_(pa.uint32()))
    return pa.table(cols)


def widened(table: pa.Table) -> pa.Table:
    return table.cast(pa.schema([
        pa.field("nested", pa.list_(pa.int64())) if f.name == "nested"
        else pa.field(f.name, WIDENED_ARROW_TYPES[f.type]) for f in table.schema]))


@pytest.mark.parametrize("seed", [1, 2])
async def test_unsigned_and_half_floats_read_back_widened(tmp_path: Path, seed: int) -> None:
    table = unsigned_table(seed)
    path = tmp_path / "u.orc"
    await aorc.write_table(table, path)
    expected = widened(table)
    assert po.read_table(path).equals(expected)  # the peer reads the values exactly
    assert (await aorc.read_table(path)).equals(expected)
    with path.open("rb") as f:
        assert str(pyorc.Reader(f).schema) == ("struct<uint8:smallint,uint16:int,uint32:bigint,"
                                               "uint64:bigint,float16:float,"
                                               "nested:array<bigint>>")


async def test_uint64_overflow_names_column_and_largest_value(tmp_path: Path) -> None:
    table = pa.table({"ok": pa.array([1, 2], pa.uint8()),
                      "counter": pa.array([5, 2**64 - 1], pa.uint64())})
    with pytest.raises(aorc.SchemaError, match=r"'counter'.*18446744073709551615"):
        await aorc.write_table(table, tmp_path / "x.orc")
    nested = pa.table({"deep": pa.array([[1], [2**63]], pa.list_(pa.uint64()))})
    with pytest.raises(aorc.SchemaError, match=r"'deep'.*9223372036854775808"):
        await aorc.write_table(nested, tmp_path / "y.orc")
    assert not (tmp_path / "x.orc").exists() and not (tmp_path / "y.orc").exists()


async def test_unsigned_batches_into_a_signed_schema(tmp_path: Path) -> None:
    path = tmp_path / "s.orc"
    async with aorc.open_writer(path, pa.schema([("a", pa.int64())])) as writer:
        await writer.write(pa.table({"a": pa.array([1, 2**32 - 1], pa.uint32())}))
    assert po.read_table(path).column("a").to_pylist() == [1, 2**32 - 1]


async def test_polars_unsigned_frame(tmp_path: Path) -> None:
    pl = pytest.importorskip("polars")
    frame = pl.DataFrame({"a": pl.Series([0, 200], dtype=pl.UInt8),
                          "b": pl.Series([1, 2**64 - 1], dtype=pl.UInt64)})
    with pytest.raises(aorc.SchemaError, match="'b'"):
        await aorc.write_table(frame.to_arrow(), tmp_path / "p.orc")
    await aorc.write_table(frame.head(1).to_arrow(), tmp_path / "p.orc")
    assert po.read_table(tmp_path / "p.orc").to_pylist() == [{"a": 0, "b": 1}]
