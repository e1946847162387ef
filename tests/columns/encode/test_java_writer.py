"""aorc's column encoders against ORC Java's writer, stream for stream.

Each case writes an Arrow table with pyarrow.orc, has ORC Java 2.3 (the orc-core jar PySpark
bundles, through ``OrcWriterOracle.java``) read it and write it again, uncompressed, then
encodes the same table with :func:`encode_column` and compares every column of every stripe:
encodings, stream bytes, row-index positions and statistics, bloom filters and stripe
statistics. Skipped when Java or PySpark's jars are missing.

The inputs avoid what ORC Java cannot read back from pyarrow's files as pyarrow meant them
(negative timestamps with a fraction, dates before the Gregorian reform); the timestamp case
with negative fractions is built by the oracle itself from (seconds, nanos) text.
"""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.orc as pa_orc
import pytest
from encode_helpers import compare_column, flatten, read_orc_stripes
from helpers.random_tables import random_array

from aorc.format._proto import orc_proto_pb2 as pb
from aorc.format.columns.encode import EncodeOptions, encode_column
from aorc.format.types import OrcType, parse_type_string

pytestmark = pytest.mark.slow

ORACLE = Path(__file__).with_name("OrcWriterOracle.java")
K = pb.Stream


@dataclass
class Case:
    name: str
    table: pa.Table | None
    schema: str
    stride: int = 10_000
    bloom: str = "-"
    fpp: float = 0.01
    threshold: float = 0.8
    zone: str = "UTC"
    per_stripe: int = 0
    timestamps: list[tuple[int, int]] = field(default_factory=list)


# ---------------------------------------------------------------------------------------
# inputs


def _clean(arr: pa.Array) -> pa.Array:
    """Values ORC Java reads back from pyarrow's files as written (see the module docstring)."""
    t = arr.type
    if pa.types.is_timestamp(t):
        per_second = {"s": 1, "ms": 10**3, "us": 10**6, "ns": 10**9}[t.unit]
        raw = pc.cast(arr, pa.int64())
        raw = pc.max_element_wise(raw, pa.scalar(-2_208_988_800 * per_second))  # 1900
        raw = pc.min_element_wise(raw, pa.scalar(7_258_118_400 * per_second))  # 2200
        whole = pc.multiply(pc.divide(raw, pa.scalar(per_second)), pa.scalar(per_second))
        raw = pc.if_else(pc.less(raw, pa.scalar(0)), whole, raw)
        return pc.cast(raw, t)
    if pa.types.is_date32(t):
        days = pc.cast(arr, pa.int32())
        return pc.cast(pc.max_element_wise(days, pa.scalar(-135_000, pa.int32())), t)
    if pa.types.is_struct(t):
        children = [_clean(arr.field(i)) for i in range(t.num_fields)]
        return pa.StructArray.from_arrays(children, fields=list(t),
                                          mask=pc.invert(arr.is_valid()))
    if pa.types.is_map(t):
        return pa.MapArray.from_arrays(arr.offsets, _clean(arr.keys), _clean(arr.items), type=t,
                                       mask=pc.invert(arr.is_valid()))
    if pa.types.is_list(t):
        return pa.ListArray.from_arrays(arr.offsets, _clean(arr.values), type=t,
                                        mask=pc.invert(arr.is_valid()))
    return arr


def _table(seed: int, n: int, types: dict[str, pa.DataType]) -> pa.Table:
    rng = np.random.default_rng(seed)
    cols = {name: _clean(random_array(rng, t, n)) for name, t in types.items()}
    return pa.table(cols)


def _dictionary_strings(n: int, distinct: int, first: int, seed: int) -> pa.Array:
    """Strings whose first ``first`` values hold exactly ``distinct`` distinct values."""
    rng = np.random.default_rng(seed)
    head = np.concatenate([np.arange(distinct), rng.integers(0, distinct, first - distinct)])
    tail = rng.integers(0, 3 * distinct, n - first)
    return pa.array([f"v{i:05d}" for i in np.concatenate([head, tail]).tolist()])


def _long_strings(n: int, seed: int) -> pa.Array:
    rng = np.random.default_rng(seed)
    pieces = ["a", "é", "日", "😀", "~", "z", "\x7f", "\uffff", "\ud7ff"]
    out = []
    for _ in range(n):
        size = int(rng.choice([5, 1000, 1022, 1023, 1024, 1025, 1030, 3000]))
        chars = rng.choice(pieces, size)
        out.append("".join(chars.tolist()))
    return pa.array(out)


def _cases() -> list[Case]:
    primitive_types = {
        "b": pa.bool_(), "i8": pa.int8(), "i16": pa.int16(), "i32": pa.int32(),
        "i64": pa.int64(), "f32": pa.float32(), "f64": pa.float64(), "s": pa.string(),
        "bin": pa.binary(), "d": pa.date32(), "ts": pa.timestamp("ns"),
        "dec_5_2": pa.decimal128(5, 2), "dec_18_4": pa.decimal128(18, 4),
        "dec_19_0": pa.decimal128(19, 0), "dec_38_10": pa.decimal128(38, 10),
        "dec_38_38": pa.decimal128(38, 38),
    }
    nested_types = {
        "l": pa.list_(pa.int32()), "ls": pa.list_(pa.string()),
        "m": pa.map_(pa.string(), pa.int64()),
        "st": pa.struct([("a", pa.int32()), ("b", pa.string()), ("c", pa.list_(pa.float64()))]),
        "deep": pa.list_(pa.struct([("x", pa.int64()),
                                    ("y", pa.map_(pa.int32(), pa.list_(pa.bool_())))])),
    }
    prim = _table(1, 12_345, primitive_types)
    low = pa.array(np.random.default_rng(5).integers(0, 30, 12_345).astype(str))
    prim = prim.append_column("low", pc.if_else(pc.equal(prim["i8"], 7), None, low))
    nested = _table(2, 12_345, nested_types)
    chars = pa.table({"c": prim["s"], "v": prim["s"], "cl": low})
    dict_cases = pa.table({
        "at": _dictionary_strings(25_000, 800, 1000, 3),  # 0.8 as float > 0.8: direct
        "below": _dictionary_strings(25_000, 799, 1000, 4),  # dictionary
        "later": _dictionary_strings(25_000, 10, 1000, 6),  # dictionary, direct later on
    })
    long_strings = pa.table({"s": _long_strings(3_000, 7)})
    nulls = pa.table({"n_i": pa.nulls(5_000, pa.int32()), "n_s": pa.nulls(5_000, pa.string()),
                      "n_d": pa.nulls(5_000, pa.decimal128(10, 2)),
                      "n_l": pa.nulls(5_000, pa.list_(pa.int32())),
                      "n_st": pa.nulls(5_000, pa.struct([("a", pa.int32())])),
                      "x": pa.array(np.arange(5_000))})
    union_children = [pa.array(np.arange(3000, dtype=np.int32)),
                      pa.array([f"u{i % 17}" for i in range(3000)])]
    tags = np.random.default_rng(8).integers(0, 2, 3000).astype(np.int8)
    union = pa.UnionArray.from_sparse(pa.array(tags), union_children)
    zone_table = _table(9, 10_000, {"ts": pa.timestamp("us"), "ts_utc": pa.timestamp("ns",
                                                                                       "UTC")})
    return [
        Case("primitives", prim, _schema(prim.schema), stride=5000, bloom="*"),
        Case("nested", nested, _schema(nested.schema), stride=3000, bloom="*"),
        Case("char_varchar", chars, "struct<c:char(5),v:varchar(3),cl:char(300)>", bloom="*"),
        Case("dictionary", dict_cases, "struct<at:string,below:string,later:string>",
             per_stripe=10 * 1024, stride=1000),
        Case("dictionary_off", dict_cases, "struct<at:string,below:string,later:string>",
             threshold=0.0, stride=5000),
        Case("long_strings", long_strings, "struct<s:string>", stride=1000),
        Case("nulls", nulls, _schema(nulls.schema), bloom="*", stride=1000),
        Case("union", pa.table({"u": union}), "struct<u:uniontype<int,string>>", bloom="*",
             stride=1000),
        Case("no_index", prim.slice(0, 5000), _schema(prim.schema), stride=0),
        Case("zone", zone_table, "struct<ts:timestamp,ts_utc:timestamp with local time zone>",
             zone="America/Los_Angeles", bloom="*", stride=1000),
        Case("negative_timestamps", None, "struct<ts:timestamp>", stride=1000, bloom="*",
             timestamps=_stamps()),
    ]


def _stamps() -> list[tuple[int, int]]:
    """(floor seconds, nanos) pairs around and far from the epoch, before it included."""
    rng = np.random.default_rng(10)
    seconds = rng.integers(-3_000_000_000, 3_000_000_000, 5000).tolist() + list(range(-3, 3)) * 20
    nanos = rng.choice([0, 1, 999, 999_999, 1_000_000, 500_000_000, 999_999_999, 123_456_789],
                       len(seconds)).tolist()
    return [(int(s), int(n)) for s, n in zip(seconds, nanos, strict=True)]


def _schema(schema: pa.Schema) -> str:
    from aorc.format.types import from_arrow_schema, type_string
    return type_string(from_arrow_schema(schema))


CASE_NAMES = ["primitives", "nested", "char_varchar", "dictionary", "dictionary_off",
              "long_strings", "nulls", "union", "no_index", "zone", "negative_timestamps"]


# ---------------------------------------------------------------------------------------
# running ORC Java


def _jars() -> Path | None:
    spec = importlib.util.find_spec("pyspark")
    if spec is None or not spec.submodule_search_locations:
        return None
    jars = Path(next(iter(spec.submodule_search_locations))) / "jars"
    return jars if any(jars.glob("orc-core-*.jar")) else None


def _job(case: Case, folder: Path) -> str:
    if case.table is not None:
        source = folder / f"{case.name}.in.orc"
        pa_orc.write_table(case.table, source, compression="uncompressed")
    else:
        source = folder / f"{case.name}.ts.txt"
        source.write_text("".join(f"{s} {n}\n" for s, n in case.timestamps))
    fields = [str(source), str(folder / f"{case.name}.orc"), case.schema, str(case.stride),
              case.bloom, repr(case.fpp), repr(case.threshold),
              case.zone, str(case.per_stripe)]
    return "\t".join(fields) + "\n"


@pytest.fixture(scope="module")
def java_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Case, Path]]:
    jars = _jars()
    if jars is None or shutil.which("java") is None:
        pytest.skip("needs Java and PySpark's orc-core jar")
    cases = _cases()
    assert [c.name for c in cases] == CASE_NAMES
    folder = tmp_path_factory.mktemp("java_writer")
    jobs = "".join(_job(c, folder) for c in cases)
    # C1 only: the jobs are short, full JIT compilation costs more than it saves
    subprocess.run(["java", "-XX:TieredStopAtLevel=1", "-Duser.timezone=UTC", "-cp",
                    f"{jars}/*", str(ORACLE)],
                   input=jobs.encode(), capture_output=True, timeout=300, check=True)
    return {c.name: (c, folder / f"{c.name}.orc") for c in cases}


# ---------------------------------------------------------------------------------------
# reading Java's file


# ---------------------------------------------------------------------------------------
# comparing


def _input_table(case: Case, root: OrcType) -> pa.Table:
    if case.table is not None:
        return case.table
    secs = np.array([s for s, _ in case.timestamps], np.int64)
    nanos = np.array([n for _, n in case.timestamps], np.int64)
    return pa.table({"ts": pa.array(secs * 10**9 + nanos, pa.timestamp("ns"))})


@pytest.mark.parametrize("name", CASE_NAMES)
def test_matches_orc_java(name: str, java_files: dict[str, tuple[Case, Path]]) -> None:
    case, path = java_files[name]
    root, stripes = read_orc_stripes(path)
    expected_root = parse_type_string(case.schema)
    assert root == expected_root
    table = _input_table(case, root)
    opts = EncodeOptions(row_index_stride=case.stride, bloom_filter_fpp=case.fpp,
                        dictionary_key_size_threshold=case.threshold, timezone=case.zone,
                        bloom_filter_columns=set(range(root.max_column_id + 1))
                        if case.bloom == "*" else set())
    decisions: dict[int, bool] = {}
    offset = 0
    for java in stripes:
        rows = table.slice(offset, java.num_rows)
        offset += java.num_rows
        arr = pa.StructArray.from_arrays([c.combine_chunks() for c in rows.columns],
                                         fields=list(rows.schema))
        starts = np.arange(0, java.num_rows, case.stride) if case.stride else []
        encoded = encode_column(root, arr, starts, opts, dictionary_decisions=decisions)
        for c in flatten(encoded):
            compare_column(case.name, c, java)
    assert offset == table.num_rows
