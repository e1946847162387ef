"""Differential tests: files written by pyarrow.orc and pyorc, read back by the reader under test.

Random tables of every type ORC stores (tests/helpers/random_tables.py) are written with each
codec, both format versions (0.11: RLE v1; 0.12: RLE v2) and several stripe/index/dictionary
layouts. The reader's table must equal pyarrow.orc's reading of the same file and the table
that was written, value for value (floats bit for bit). Files written by pyorc add unions,
char/varchar, bloom filters and another writer's timestamp encoding; they must read as pyorc
and pyarrow.orc read them.
"""

from __future__ import annotations

import datetime
import functools
import itertools
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.orc as pa_orc
import pyorc
import pytest
from helpers.compare import assert_lines_equal, assert_tables_equal, project_table
from helpers.orc_schema import parse_schema, project_schema
from helpers.pyorc_render import read_pyorc_lines
from helpers.random_tables import random_table
from helpers.readers import read_pyarrow, read_table
from helpers.render import render

ROWS = 1500
SEEDS = 4  # distinct random tables shared by the codec/version/layout cases
CODECS = ["uncompressed", "zlib", "snappy", "lz4", "zstd"]
VERSIONS = ["0.11", "0.12"]
LAYOUTS: dict[str, dict[str, Any]] = {
    "defaults": {},
    # A stripe per batch (uncompressed) or a few (compressed); row groups of 500.
    "small-stripes": {"stripe_size": 1, "batch_size": 64, "row_index_stride": 500},
    # Dictionary encoding whenever it pays off; odd row-group size.
    "dictionary": {"dictionary_key_size_threshold": 1.0, "row_index_stride": 777},
}
CASES = [
    pytest.param(codec, version, layout, i % SEEDS, id=f"{codec}-{version}-{layout}")
    for i, ((codec, version), layout) in enumerate(
        zip(itertools.product(CODECS, VERSIONS), itertools.cycle(LAYOUTS))
    )
] + [
    pytest.param("zstd", "0.12", layout, SEEDS + i, id=f"zstd-0.12-{layout}-seed{SEEDS + i}")
    for i, layout in enumerate(["small-stripes", "dictionary"])
]


@functools.cache
def _table(seed: int, rows: int = ROWS) -> pa.Table:
    return random_table(seed, rows)


def _write_pyarrow(path: Path, table: pa.Table, codec: str, version: str, layout: str) -> Path:
    pa_orc.write_table(table, path, compression=codec, file_version=version, **LAYOUTS[layout])
    return path


@pytest.mark.parametrize(("codec", "version", "layout", "seed"), CASES)
async def test_pyarrow_written(
    tmp_path: Path, codec: str, version: str, layout: str, seed: int
) -> None:
    """Random tables written by pyarrow.orc read back equal to what was written."""
    table = _table(seed)
    path = _write_pyarrow(tmp_path / "t.orc", table, codec, version, layout)
    got = await read_table(path)
    assert_tables_equal(got, read_pyarrow(path), what="vs pyarrow.orc")
    assert_tables_equal(got, table, what="vs the written table")


@pytest.mark.parametrize("rows", [0, 1])
async def test_pyarrow_written_tiny(tmp_path: Path, rows: int) -> None:
    """Empty and one-row files keep the schema."""
    table = random_table(7, rows)
    path = _write_pyarrow(tmp_path / "t.orc", table, "zlib", "0.12", "defaults")
    got = await read_table(path)
    assert got.num_rows == rows
    assert_tables_equal(got, table, what=f"{rows} rows")


TIMESTAMP_EXTREMES = [
    -(2**63) + 1,  # int64 min is pandas' NaT; the next value is the earliest timestamp[ns]
    2**63 - 1,
    -(10**9) - 1,
    -(10**9),
    -(10**9) + 1,
    -1_000_001,
    -1,
    0,
    1,
    10**9 - 1,
    10**9,
]


@pytest.mark.parametrize("version", VERSIONS)
async def test_timestamp_extremes(tmp_path: Path, version: str) -> None:
    """Every timestamp[ns] value reads back, including the int64 extremes and (-1 s, 0)."""
    values = pa.array(TIMESTAMP_EXTREMES, pa.int64())
    table = pa.table(
        {
            "ts": values.cast(pa.timestamp("ns")),
            "ts_utc": values.cast(pa.timestamp("ns", tz="UTC")),
        }
    )
    path = _write_pyarrow(tmp_path / "t.orc", table, "zlib", version, "defaults")
    got = await read_table(path)
    assert_tables_equal(got, read_pyarrow(path), what="vs pyarrow.orc")
    assert_tables_equal(got, table, what="vs the written table")


PROJECTIONS = [
    ["i32"],
    ["i8", "nested"],
    ["nested", "i8"],
    ["struct.b"],
    ["struct.c", "struct.a"],
    ["struct", "struct.a"],
    ["map_nested", "ts_utc", "dec_38_38"],
    ["list_str", "str_dict", "bool"],
]


@pytest.fixture(scope="module")
def projection_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("projection") / "t.orc"
    return _write_pyarrow(path, _table(0), "zstd", "0.12", "small-stripes")


@pytest.mark.parametrize("columns", PROJECTIONS, ids=[",".join(c) for c in PROJECTIONS])
async def test_projection(projection_file: Path, columns: list[str]) -> None:
    """``columns=`` equals pyarrow.orc's ``columns=`` and the pruned written table, with the
    columns in the order asked for (pyarrow.orc keeps the file's order)."""
    got = await read_table(projection_file, columns=columns)
    order = list(dict.fromkeys(c.split(".")[0] for c in columns))
    assert_tables_equal(got, read_pyarrow(projection_file, columns).select(order),
                        what=f"{columns} vs pyarrow")
    assert_tables_equal(got, project_table(_table(0), columns).select(order),
                        what=f"{columns} vs written")


# ---------------------------------------------------------------------------------------------
# Files written by pyorc

PYORC_SCHEMA = (
    "struct<b:boolean,i8:tinyint,i16:smallint,i32:int,i64:bigint,f:float,d:double,"
    "s:string,c:char(5),v:varchar(8),bin:binary,ts:timestamp,"
    "tsl:timestamp with local time zone,dt:date,dec:decimal(10,3),dec38:decimal(38,10),"
    "u:uniontype<int,string,double>,l:array<bigint>,m:map<string,array<int>>,"
    "st:struct<x:int,y:string>>"
)
PYORC_CODECS = ["NONE", "ZLIB", "SNAPPY", "LZ4", "ZSTD"]


class _NanoTime(datetime.datetime):
    """A datetime carrying an exact nanosecond count (pyorc only converts datetimes)."""

    nanos: int


def _nano_time(nanos: int) -> _NanoTime:
    value = _NanoTime(1970, 1, 1, tzinfo=datetime.UTC)
    value.nanos = nanos
    return value


class _WriteTimestamp(pyorc.converters.ORCConverter):
    @staticmethod
    def from_orc(*args: Any) -> Any:
        raise NotImplementedError

    @staticmethod
    def to_orc(obj: _NanoTime, timezone: Any) -> tuple[int, int]:
        return divmod(obj.nanos, 10**9)


class _WriteRaw(pyorc.converters.ORCConverter):
    """Dates as day numbers and decimals as unscaled integers, passed through."""

    @staticmethod
    def from_orc(*args: Any) -> Any:
        raise NotImplementedError

    @staticmethod
    def to_orc(*args: Any) -> Any:
        return args[-1]


_WRITE_CONVERTERS = {
    pyorc.TypeKind.TIMESTAMP: _WriteTimestamp,
    pyorc.TypeKind.TIMESTAMP_INSTANT: _WriteTimestamp,
    pyorc.TypeKind.DATE: _WriteRaw,
    pyorc.TypeKind.DECIMAL: _WriteRaw,
}


def _pyorc_rows(seed: int, n: int) -> list[dict[str, Any]]:
    """Rows of random Python values for PYORC_SCHEMA, about 15% nulls at every level."""
    rng = np.random.default_rng(seed)
    alphabet = list('abc xyzé日"\\\n')

    def ints(lo: int, hi: int) -> list[int]:
        values: list[int] = rng.integers(lo, hi, n, endpoint=True).tolist()
        return values

    def texts(max_len: int, count: int = n) -> list[str]:
        ends = np.cumsum(rng.integers(0, max_len + 1, count)).tolist()
        chars = [alphabet[i] for i in rng.integers(0, len(alphabet), ends[-1] if ends else 0)]
        return ["".join(chars[a:b]) for a, b in zip([0] + ends[:-1], ends, strict=True)]

    def nanos() -> list[int]:
        values = rng.integers(-3 * 10**18, 3 * 10**18, n)
        result: list[int] = (values // rng.choice(np.array([1, 1000, 10**9]), n)).tolist()
        return result

    columns: dict[str, list[Any]] = {
        "b": (rng.random(n) < 0.5).tolist(),
        "i8": ints(-128, 127),
        "i16": ints(-(2**15), 2**15 - 1),
        "i32": ints(-(2**31), 2**31 - 1),
        "i64": ints(-(2**63), 2**63 - 1),
        "f": (rng.standard_normal(n) * 1e5).astype(np.float32).tolist(),
        "d": (rng.standard_normal(n) * 10.0 ** rng.integers(-300, 300, n)).tolist(),
        "s": texts(20),
        "c": texts(5),
        "v": texts(8),
        "bin": [rng.bytes(k) for k in rng.integers(0, 12, n).tolist()],
        "ts": [_nano_time(v) for v in nanos()],
        "tsl": [_nano_time(v) for v in nanos()],
        "dt": ints(-700_000, 2_900_000),
        "dec": ints(-(10**10) + 1, 10**10 - 1),
        "dec38": [a * b for a, b in zip(ints(-(2**62), 2**62), ints(1, 10**18), strict=True)],
    }
    unions = zip(
        rng.integers(0, 3, n).tolist(),
        ints(-(2**31), 2**31 - 1),
        texts(6),
        rng.standard_normal(n).tolist(),
        strict=True,
    )
    columns["u"] = [(i, s, f)[branch] for branch, i, s, f in unions]
    pool = ints(-(2**40), 2**40)
    columns["l"] = [pool[i : i + k] for i, k in enumerate(rng.integers(0, 4, n).tolist())]
    keys, values = texts(4), ints(0, 9)
    columns["m"] = [{keys[i]: [values[i]], keys[i - 1]: None} if i % 3 else {} for i in range(n)]
    columns["st"] = [{"x": x, "y": y} for x, y in zip(ints(-9, 9), texts(3), strict=True)]
    for column in columns.values():
        for i in np.flatnonzero(rng.random(n) < 0.15).tolist():
            column[i] = None
    for struct in columns["st"]:
        if struct is not None and rng.random() < 0.2:
            struct["y"] = None
    return [dict(zip(columns, row, strict=True)) for row in zip(*columns.values(), strict=True)]


def _write_pyorc(path: Path, codec: str, seed: int) -> Path:
    with open(path, "wb") as f:
        writer = pyorc.Writer(
            f,
            PYORC_SCHEMA,
            stripe_size=4096,
            row_index_stride=250,
            compression=pyorc.CompressionKind[codec],
            compression_block_size=4096,
            memory_block_size=4096,
            bloom_filter_columns=["i32", "s", "ts"],
            struct_repr=pyorc.StructRepr.DICT,
            converters=_WRITE_CONVERTERS,
        )
        writer.writerows(_pyorc_rows(seed, 1200))
        writer.close()
    return path


@pytest.mark.parametrize("codec", PYORC_CODECS)
async def test_pyorc_written(tmp_path: Path, codec: str) -> None:
    """Files written by pyorc read as pyorc reads them (and as pyarrow.orc, union tags included)."""
    path = _write_pyorc(tmp_path / "p.orc", codec, seed=PYORC_CODECS.index(codec))
    got = await read_table(path)
    assert got.num_rows == 1200
    lines = render(got, PYORC_SCHEMA, exact=True, union_tags=False)
    want = read_pyorc_lines(path, PYORC_SCHEMA, exact=True)
    assert_lines_equal(lines, want, what=f"{codec} vs pyorc")
    assert_tables_equal(
        got, read_pyarrow(path), PYORC_SCHEMA, what="vs pyarrow", check_schema=False
    )


async def test_pyorc_written_projection(tmp_path: Path) -> None:
    path = _write_pyorc(tmp_path / "p.orc", "ZLIB", seed=11)
    columns = ["u", "st.y", "c"]
    got = await read_table(path, columns=columns)
    assert got.column_names == ["u", "st", "c"]  # as asked (pyarrow.orc: file order)
    got = got.select(["c", "u", "st"])
    schema = project_schema(parse_schema(PYORC_SCHEMA), columns)
    assert_tables_equal(got, read_pyarrow(path, columns), schema, check_schema=False)
