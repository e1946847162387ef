"""nanoarrow with aorc: nanoarrow's own C stream consumer reads aorc's readers (a file and a
dataset) batch by batch, and aorc writes a stream that nanoarrow built from buffers (no
pyarrow on the producing side). Values are compared with pyarrow.orc (ORC C++) reading the
same files and with nanoarrow's own conversion to Python, not with aorc's round trip."""

from __future__ import annotations

import datetime
import decimal
import pathlib

import numpy as np
import pyarrow as pa
import pyarrow.orc as po
import pytest

import aorc
import aorc.sync

na = pytest.importorskip("nanoarrow")  # in the test extra; CI=true fails without it (conftest)


def mixed(n: int, seed: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    missing = rng.random(n) < 0.1
    base = datetime.datetime(2001, 2, 3, 4, 5, 6)
    return pa.table({
        "id": pa.array(np.arange(n), pa.int64()),
        "name": pa.array([None if m else f"n{v}" for m, v in zip(missing, rng.integers(0, 99, n),
                                                                  strict=True)]),
        "score": pa.array(rng.standard_normal(n), mask=missing),
        "tags": pa.array([None if m else list(range(int(v)))
                          for m, v in zip(missing, rng.integers(0, 4, n), strict=True)],
                         pa.list_(pa.int32())),
        "point": pa.array([{"x": int(v), "y": f"y{v}"} for v in rng.integers(0, 9, n)]),
        "at": pa.array([base + datetime.timedelta(microseconds=int(v))
                        for v in rng.integers(0, 10**12, n)], pa.timestamp("us")),
        "price": pa.array([decimal.Decimal(int(v)).scaleb(-2)
                           for v in rng.integers(-10**6, 10**6, n)], pa.decimal128(10, 2)),
        "day": pa.array([datetime.date(2020, 1, 1) + datetime.timedelta(days=int(v))
                         for v in rng.integers(0, 3000, n)]),
        "flag": pa.array(rng.random(n) < 0.5),
    })


def test_nanoarrow_reads_an_aorc_reader_batch_by_batch(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "mixed.orc"
    po.write_table(mixed(30_000, seed=1), str(path), stripe_size=64 << 10)
    orc = po.ORCFile(str(path))
    assert orc.nstripes >= 3
    expected = orc.read()
    expected = expected.set_column(expected.schema.get_field_index("at"), "at",
                                   expected["at"].cast(pa.timestamp("us")))
    with aorc.sync.open_reader(str(path), timestamp_unit="us") as reader:
        chunks = list(na.ArrayStream(reader))  # nanoarrow pulls aorc's stream itself
    assert len(chunks) >= orc.nstripes  # batch by batch, not one table
    assert all(c.schema.type == na.Type.STRUCT for c in chunks)
    assert sum(len(c) for c in chunks) == orc.nrows
    # nanoarrow 0.9.0 converts negative decimal128 values to Python wrongly (its own
    # conversion: a pyarrow array gives the same), so decimals are compared by their values
    # as pyarrow imports them from nanoarrow's arrays, everything else by nanoarrow's.
    others = [name for name in expected.column_names if name != "price"]
    got = [{k: row[k] for k in others} for c in chunks for row in c.to_pylist()]
    assert got == expected.select(others).to_pylist()
    prices = pa.chunked_array([pa.array(c).field("price") for c in chunks])
    assert prices.equals(expected["price"])


def test_nanoarrow_reads_an_aorc_dataset(tmp_path: pathlib.Path) -> None:
    for day in (1, 2, 3):
        folder = tmp_path / f"day={day}"
        folder.mkdir()
        po.write_table(mixed(2_000, seed=day).select(["id", "name", "score"]),
                       str(folder / "part.orc"))
    dataset = aorc.sync.open_dataset(str(tmp_path))
    chunks = list(na.ArrayStream(dataset))
    rows = [row for c in chunks for row in c.to_pylist()]
    assert len(rows) == 6_000
    for day in (1, 2, 3):
        want = po.read_table(str(tmp_path / f"day={day}" / "part.orc")).to_pylist()
        assert [{k: r[k] for k in ("id", "name", "score")} for r in rows
                if r["day"] == day] == want


def test_aorc_writes_a_stream_nanoarrow_built(tmp_path: pathlib.Path) -> None:
    n = 1_000
    ids = na.Array(range(n), na.int64())
    names = na.Array([None if i % 7 == 0 else f"k{i % 13}" for i in range(n)], na.string())
    scores = na.Array([i / 8 for i in range(n)], na.float64())
    batch = na.c_array_from_buffers(
        na.struct({"id": na.int64(), "name": na.string(), "score": na.float64()}), n, [None],
        children=[ids, names, scores])
    path = tmp_path / "from_nanoarrow.orc"
    aorc.sync.write_table(na.ArrayStream(batch), str(path))
    got = po.read_table(str(path))  # ORC C++ reads what aorc wrote
    assert got.schema.names == ["id", "name", "score"]
    assert got.to_pylist() == na.Array(batch).to_pylist()
