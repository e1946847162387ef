"""aorc's bloom filters are the bit sets ORC Java's writer builds for the same values.

For every row group of every bloom-filtered column, ORC Java's own filter class
(``org.apache.orc.util.BloomFilterUtf8``, sized from the row index stride and fpp as its
writer sizes it) is filled with the group's values the way ORC Java's tree writers add them
(``addLong`` for integers and dates, ``addDouble`` for doubles and floats cast to float,
``addBytes`` for strings and binary, ``addString`` of the HiveDecimal text for decimals, the
writer's UTC milliseconds for timestamps; nothing for booleans), and its bit set must equal
the one ORC Java reads from the file (``readRowIndex`` + ``BloomFilterIO.deserialize``).
Murmur3 hashes of random bytes are compared with ORC Java's ``Murmur3.hash64`` too.
"""

from __future__ import annotations

from decimal import Decimal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from aorc.format.codec import bloom

pytestmark = pytest.mark.spark

STRIDE = 1000
ROWS = 2600


def _with_nulls(rng: np.random.Generator, values: pa.Array) -> pa.Array:
    mask = pa.array(rng.random(len(values)) < 0.15)
    return pc.if_else(mask, pa.nulls(len(values), values.type), values)


def bloom_table(seed: int, rows: int) -> pa.Table:
    """Columns of every kind ORC writes bloom filters for, with duplicates and nulls."""
    rng = np.random.default_rng(seed)
    ints = rng.integers(-(2**31), 2**31, rows)
    ints[rng.random(rows) < 0.3] = rng.integers(-5, 5)
    doubles = rng.standard_normal(rows) * 10.0 ** rng.integers(-5, 30, rows)
    pick = rng.random(rows) < 0.05
    doubles[pick] = rng.choice([np.nan, 0.0, -0.0, np.inf, -np.inf, 1.0], int(pick.sum()))
    words = ["", "a", "é", "日本", "\U0001f600", "x" * 40, "ORC", "orc "]
    strings = [words[i % len(words)] + (str(i % 97) if i % 3 else "") for i in
               rng.integers(0, 10**6, rows)]
    seconds = rng.integers(-(2**33), 2**33, rows)
    nanos = rng.choice([0, 1, 999_999_999, 500_000_000, 123_456_789, 1_000_000], rows)
    ts = seconds * 10**9 + nanos
    near_epoch = rng.random(rows) < 0.1
    ts[near_epoch] = rng.integers(-2 * 10**9, 10**9, int(near_epoch.sum()))
    unscaled = rng.integers(-(10**9), 10**9, rows)
    columns = {
        "tiny": pa.array(rng.integers(-128, 128, rows), pa.int8()),
        "small": pa.array(rng.integers(-(2**15), 2**15, rows), pa.int16()),
        "int": pa.array(ints.astype(np.int32)),
        "bigint": pa.array(rng.integers(-(2**63), 2**63 - 1, rows)),
        "double": pa.array(doubles),
        "float": pa.array(doubles.astype(np.float32)),
        "string": pa.array(strings),
        "binary": pa.array([s.encode() + b"\x00\xff" for s in strings], pa.binary()),
        "date": pa.array(rng.integers(-700_000, 700_000, rows).astype(np.int32), pa.date32()),
        "ts": pa.array(ts, pa.timestamp("ns")),
        "dec_small": pa.array([Decimal(u).scaleb(-2) for u in unscaled.tolist()],
                              pa.decimal128(12, 2)),
        "dec_big": pa.array([Decimal(u * 10**20 + u % 7).scaleb(-6) for u in unscaled.tolist()],
                            pa.decimal128(38, 6)),
        "bool": pa.array(rng.random(rows) < 0.5),
    }
    return pa.table({name: _with_nulls(rng, arr) for name, arr in columns.items()})


def _java_timestamp_millis(ns: np.ndarray) -> np.ndarray:
    """The milliseconds ORC Java's timestamp writer adds to bloom filters (writer zone UTC):
    the seconds of the floor milliseconds truncated toward zero, plus the millisecond digits
    of the nanoseconds, minus a second when that is negative with nanoseconds > 999999."""
    time = np.floor_divide(ns, 10**6)
    nanos = np.mod(ns, 10**9)
    secs = np.where(time < 0, -((-time) // 1000), time // 1000)  # Java's long division
    millis = secs * 1000 + nanos // 10**6
    return np.where((millis < 0) & (nanos > 999_999), millis - 1000, millis)


def java_filter(jvm_orc, arr: pa.Array, fpp: float):
    """ORC Java's filter for the values of one row group of one column."""
    bf = jvm_orc.new_bloom_filter(STRIDE, fpp)
    values = arr.drop_null()
    t = arr.type
    if pa.types.is_boolean(t):
        pass  # ORC Java's boolean writer adds nothing to its filters
    elif pa.types.is_integer(t):
        jvm_orc.bloom_add_longs(bf, values.cast(pa.int64()).to_numpy())
    elif pa.types.is_date32(t):
        jvm_orc.bloom_add_longs(bf, values.cast(pa.int32()).to_numpy().astype(np.int64))
    elif pa.types.is_floating(t):
        jvm_orc.bloom_add_doubles(bf, values.to_numpy().astype(np.float64),
                                  as_float=pa.types.is_float32(t))
    elif pa.types.is_string(t):
        jvm_orc.bloom_add_bytes(bf, [v.encode("utf-8") for v in values.to_pylist()])
    elif pa.types.is_binary(t):
        jvm_orc.bloom_add_bytes(bf, values.to_pylist())
    elif pa.types.is_timestamp(t):
        ns = values.cast(pa.int64()).to_numpy()
        jvm_orc.bloom_add_longs(bf, _java_timestamp_millis(ns))
    elif pa.types.is_decimal(t):
        jvm_orc.bloom_add_decimals(bf, [str(v) for v in values.to_pylist()])
    else:
        raise TypeError(t)
    return jvm_orc.bloom(bf)


@pytest.mark.parametrize("fpp", [None, 0.05])
def test_bloom_filters_match_java(jvm_orc, write_orc, tmp_path, fpp):
    table = bloom_table(31, ROWS)
    options = {} if fpp is None else {"bloom_filter_fpp": fpp}
    path = tmp_path / "bloom.orc"
    write_orc(table, path, bloom_filter_columns=table.column_names, row_index_stride=STRIDE,
              **options)
    # without an fpp, aorc must use ORC Java's default (orc.bloom.filter.fpp)
    java_default = float(jvm_orc.orc.OrcConf.BLOOM_FILTER_FPP.getDefaultValue())
    expected_fpp = java_default if fpp is None else fpp
    stripe_rows = jvm_orc.file_info(path)["stripe_rows"]
    columns = list(range(1, table.num_columns + 1))
    problems: list[str] = []  # every mismatch, so one run shows all columns
    start = 0
    for s, rows in enumerate(stripe_rows):
        index = jvm_orc.row_index(path, s, columns, blooms=True, stats=False)
        for col, name in zip(columns, table.column_names, strict=True):
            got = index[col]
            if got["bloom_kind"] != "BLOOM_FILTER_UTF8":
                problems.append(f"stripe {s}, {name!r}: stream kind {got['bloom_kind']}")
                continue
            groups = range(start, start + rows, STRIDE)
            assert len(got["blooms"]) == len(groups), f"stripe {s}, {name}: filters per group"
            for g, (first, filt) in enumerate(zip(groups, got["blooms"], strict=True)):
                where = f"stripe {s}, row group {g}, column {name!r}"
                part = table.column(name).slice(first, min(STRIDE, start + rows - first))
                want = java_filter(jvm_orc, part.combine_chunks(), expected_fpp)
                problems += _compare(filt, want, where)
        start += rows
    assert not problems, "\n".join(problems)


def _compare(got, want, where: str) -> list[str]:
    if got is None:
        return [f"{where}: ORC Java rejected the filter"]
    if (got.num_hash_functions, got.num_bits) != (want.num_hash_functions, want.num_bits):
        return [f"{where}: k={got.num_hash_functions} m={got.num_bits}, ORC Java would write "
                f"k={want.num_hash_functions} m={want.num_bits}"]
    differ = np.flatnonzero(got.words != want.words)
    if differ.size:
        return [f"{where}: {differ.size} of {want.words.size} words differ (first {differ[:3]})"]
    return []


def test_murmur3_hash64_matches_java(jvm_orc):
    rng = np.random.default_rng(7)
    lengths = np.concatenate([np.arange(0, 33), rng.integers(0, 300, 400)])
    values = [rng.bytes(int(n)) for n in lengths]
    values += [b"", b"hello", b"hello world", b"0123456789abcdef", "日本😀".encode()]
    java = jvm_orc.murmur3_hash64_many(values)
    ours = [bloom.murmur3_hash64(v) for v in values]
    assert java.tolist() == ours
    offsets = np.concatenate([[0], np.cumsum([len(v) for v in values])]).astype(np.int64)
    assert bloom.murmur3_hash64_many(offsets, b"".join(values)).tolist() == java.tolist()
    assert jvm_orc.murmur3_hash64(b"hello") == 4118559451821261121
