"""Decimal columns: per-value scales, exact rescaling, legacy and Decimal64 encodings."""

from __future__ import annotations

import decimal
import io

import numpy as np
import pyarrow as pa
import pyorc
import pytest
from helpers.corpus import CORPUS_ABSENT
from hypothesis import given, settings
from hypothesis import strategies as st
from stream_builders import direct_rle_v2, literal_rle_v1, make_streams, varints128
from stripe_source import CONFORMANCE, decode_file, pyarrow_orc_bytes, pyarrow_read, pyorc_bytes

from aorc.errors import CorruptFileError
from aorc.format._proto import orc_proto_pb2 as pb
from aorc.format.columns import DecodeOptions, decode_column
from aorc.format.columns.decimals import rescale
from aorc.format.types import parse_type_string

RNG = np.random.default_rng(5)
_WIDE = decimal.Context(prec=100)


def _dec(unscaled: int, scale: int) -> decimal.Decimal:
    """The decimal ``unscaled * 10**-scale``, exactly."""
    return decimal.Decimal(unscaled).scaleb(-scale, context=_WIDE)


def _random_decimals(precision: int, scale: int, n: int) -> list[decimal.Decimal | None]:
    out: list[decimal.Decimal | None] = []
    limit = 10**precision - 1
    for i in range(n):
        if i % 17 == 0:
            out.append(None)
            continue
        digits = int(RNG.integers(0, precision + 1))
        unscaled = int.from_bytes(RNG.bytes(16), "little") % (10**digits)
        unscaled = min(unscaled, limit) * (1 if RNG.random() < 0.5 else -1)
        out.append(_dec(unscaled, scale))
    out[1:5] = [_dec(limit, scale), _dec(-limit, scale), _dec(0, scale), _dec(1, scale)]
    return out


@pytest.mark.parametrize(("precision", "scale"), [(1, 0), (10, 5), (18, 2), (18, 18), (19, 3),
                                                  (38, 0), (38, 18), (38, 38)])
@pytest.mark.parametrize("version", ["0.11", "0.12"])
def test_matches_pyarrow(precision: int, scale: int, version: str) -> None:
    values = _random_decimals(precision, scale, 2000)
    table = pa.table({"d": pa.array(values, pa.decimal128(precision, scale))})
    data = pyarrow_orc_bytes(table, file_version=version)
    got = decode_file(data)
    assert got.equals(pyarrow_read(data))
    assert got.column("d").to_pylist() == values


def test_pyorc_decimals() -> None:
    rows = [(decimal.Decimal("-1000.50000"), decimal.Decimal("12345678.654745600000000000")),
            (None, decimal.Decimal("-99999999999999999999.999999999999999999")),
            (decimal.Decimal("0.00001"), None)]
    data = pyorc_bytes("struct<a:decimal(10,5),b:decimal(38,18)>", rows)
    got = decode_file(data)
    assert [tuple(r.values()) for r in got.to_pylist()] == list(pyorc.Reader(io.BytesIO(data)))


def _decode(values: list[int], scales: list[int], kind: str,
            nulls: list[bool] | None = None) -> pa.Array:
    streams = {(0, pb.Stream.DATA): varints128(values),
               (0, pb.Stream.SECONDARY): literal_rle_v1(scales, signed=True)}
    n = len(values)
    if nulls is not None:
        from stream_builders import bool_rle

        streams[0, pb.Stream.PRESENT] = bool_rle([not x for x in nulls])
        n = len(nulls)
    return decode_column(parse_type_string(kind), make_streams(streams,
                                                               [pb.ColumnEncoding.DIRECT]),
                         n, DecodeOptions())


def _truncated(unscaled: int, scale: int, target: int) -> int:
    """``unscaled * 10**-scale`` at ``target`` digits, truncated toward zero."""
    if target >= scale:
        return unscaled * 10 ** (target - scale)
    q = abs(unscaled) // 10 ** (scale - target)
    return q if unscaled >= 0 else -q


def test_java_trimmed_scales_are_rescaled() -> None:
    """ORC Java writes each value with trailing zeros trimmed: scales vary per row."""
    values = [15, -1, 123456789, 0, 5, -99999999999999999]
    scales = [1, 5, 5, 0, 0, 3]
    got = _decode(values, scales, "decimal(20,5)")
    want = [_dec(_truncated(v, s, 5), 5) for v, s in zip(values, scales, strict=False)]
    assert got.to_pylist() == want


def test_larger_scales_truncate_toward_zero() -> None:
    """A value with more digits than the type's scale is cut as ORC C++ cuts it."""
    values = [123456, -123456, 999, -999, 10**37 + 1]
    scales = [4, 4, 3, 3, 20]
    got = _decode(values, scales, "decimal(38,2)")
    assert [d.as_tuple() for d in got.to_pylist()] == \
        [_dec(_truncated(v, s, 2), 2).as_tuple()
         for v, s in zip(values, scales, strict=False)]


def test_rescale_with_nulls_and_wide_values() -> None:
    nulls = [False, True, False, True, True, False]
    values = [-(10**30) - 7, 17, 10**20]
    scales = [0, 3, 12]
    got = _decode(values, scales, "decimal(38,6)", nulls)
    it = iter(zip(values, scales, strict=False))
    want = []
    for is_null in nulls:
        if is_null:
            want.append(None)
        else:
            v, s = next(it)
            want.append(_dec(_truncated(v, s, 6), 6))
    assert got.to_pylist() == want


@pytest.mark.parametrize(("value", "scale", "kind"), [(10**30, 0, "decimal(38,10)"),
                                                      (10**10, 2, "decimal(10,2)"),
                                                      (-(10**10), 2, "decimal(10,2)"),
                                                      (10**20, 1, "decimal(20,1)"),
                                                      (-(10**37), 0, "decimal(37,0)")])
def test_more_digits_than_the_precision_is_corrupt(value: int, scale: int, kind: str) -> None:
    with pytest.raises(CorruptFileError, match="digits"):
        _decode([1, value], [scale, scale], kind)


def test_values_at_the_precision_limit() -> None:
    got = _decode([10**10 - 1, -(10**10) + 1, 10**37 - 1], [2, 2, 19], "decimal(38,2)")
    assert got.to_pylist() == [_dec(10**10 - 1, 2), _dec(-(10**10) + 1, 2), _dec(10**20 - 1, 2)]


def test_legacy_decimal_overflow_becomes_null() -> None:
    """Hive 0.11 decimal(0,0) reads at scale 10; a value past 38 digits is null there."""
    got = _decode([10**30, 5, -(10**29), -(10**30), 10**38, 10**38 - 1],
                  [0, 1, 2, 2, 20, 10], "decimal(0,0)")
    assert got.type == pa.decimal128(38, 10)
    assert got.to_pylist() == [None, _dec(5 * 10**9, 10), _dec(-(10**37), 10), None,
                               _dec(10**28, 10), _dec(10**38 - 1, 10)]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(-(2**126), 2**126 - 1), st.integers(-40, 60)),
                min_size=1, max_size=30), st.integers(0, 38))
def test_rescale_property(pairs: list[tuple[int, int]], target: int) -> None:
    """rescale() agrees with Python integers: exact products, truncated quotients."""
    words = np.array([[v & (2**64 - 1), (v >> 64) & (2**64 - 1)] for v, _ in pairs], np.uint64)
    scales = np.array([s for _, s in pairs], np.int64)
    out, overflow = rescale(words, scales, target)
    for i, (v, s) in enumerate(pairs):
        expected = _truncated(v, s, target)
        over = abs(expected) >= 10**38
        assert bool(overflow is not None and overflow[i]) == over
        if not over:
            got = int(out[i, 0]) | int(out[i, 1]) << 64
            got -= (got >> 127) << 128
            assert got == expected


@pytest.mark.parametrize("name", ["decimal64_v2.orc", "decimal64_v2_cplusplus.orc"])
def test_decimal64_files_match_pyarrow(name: str) -> None:
    """Version UNSTABLE-PRE-2.0: precision <= 18 stored as RLE v2 integers."""
    path = CONFORMANCE / "files" / name
    if not path.is_file():
        pytest.skip(CORPUS_ABSENT)
    data = path.read_bytes()
    assert decode_file(data).equals(pyarrow_read(data))


def test_decimal64_crafted() -> None:
    """With unstable_pre_2, decimal(10,2) DATA is signed RLE v2 and there is no SECONDARY."""
    values = [12345, -1, 0, 10**10 - 1, -(10**10) + 1]
    streams = make_streams({(0, pb.Stream.DATA): direct_rle_v2(values, signed=True)},
                           [pb.ColumnEncoding.DIRECT])  # RLE v2 whatever the encoding says
    arr = decode_column(parse_type_string("decimal(10,2)"), streams, len(values),
                        DecodeOptions(unstable_pre_2=True))
    assert arr.to_pylist() == [_dec(v, 2) for v in values]


def test_decimal64_wider_than_precision() -> None:
    streams = make_streams({(0, pb.Stream.DATA): direct_rle_v2([10**10], signed=True)},
                           [pb.ColumnEncoding.DIRECT_V2])
    with pytest.raises(CorruptFileError, match="digits"):
        decode_column(parse_type_string("decimal(10,2)"), streams, 1,
                      DecodeOptions(unstable_pre_2=True))


@pytest.mark.parametrize("seed", range(4))
def test_one_pass_and_general_way_agree(seed: int) -> None:
    """The one-pass kernel (every scale the type's, values within int64) against the general
    way, which a single other scale or a wider value sends the whole column to."""
    from aorc.format.codec import rle

    rng = np.random.default_rng(seed)
    n = 2000
    values = [int(v) for v in rng.integers(-(10**17), 10**17, n)]
    values[: 5] = [0, -1, 1, 10**18 - 1, -(10**18) + 1]
    values[n // 2] = -12345
    scales = [4] * n
    data = varints128(values)
    words, end = rle.decimals_at_scale(data, n, 0, np.array(scales), 4, 18)
    assert words is not None and end == len(data)
    general, general_end = rle.read_varint128_from(data, n, 0)
    assert np.array_equal(words, general) and general_end == end
    got = _decode(values, scales, "decimal(18,4)")
    assert got.to_pylist() == [_dec(v, 4) for v in values]
    # One row at another scale: the general way rescales it, the others stay.
    other = list(scales)
    other[n // 2] = 2
    assert rle.decimals_at_scale(data, n, 0, np.array(other), 4, 18)[0] is None
    got = _decode(values, other, "decimal(18,4)")
    assert got[n // 2].as_py() == _dec(values[n // 2] * 100, 4)
    # A value beyond int64, or beyond the precision: the kernel leaves it to the general way.
    assert rle.decimals_at_scale(varints128([1, 2**64]), 2, 0, np.array([0, 0]), 0, 38)[0] \
        is None
    assert rle.decimals_at_scale(varints128([10**10]), 1, 0, np.array([2]), 2, 10)[0] is None
    # Cut short: the kernel gives up and the general way reports the damage.
    assert rle.decimals_at_scale(data[:-1], n, 0, np.array(scales), 4, 18)[0] is None
    with pytest.raises(CorruptFileError):
        rle.read_varint128_from(data[:-1], n, 0)
