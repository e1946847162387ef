"""Boolean, integer and date columns against pyarrow.orc, and hybrid-calendar rebasing."""

from __future__ import annotations

import datetime

import numpy as np
import pyarrow as pa
import pytest
from stream_builders import literal_rle_v1, make_streams
from stripe_source import decode_file, pyarrow_orc_bytes, pyarrow_read, stripes

from aorc.errors import CorruptFileError
from aorc.format._proto import orc_proto_pb2 as pb
from aorc.format.columns import DecodeOptions, decode_column
from aorc.format.columns.integers import GREGORIAN_START_DAY, hybrid_to_proleptic_days
from aorc.format.types import parse_type_string

RNG = np.random.default_rng(20240601)
N = 5000


def _ints(dtype: type, kind: str) -> np.ndarray:
    info = np.iinfo(dtype)
    if kind == "random":
        return RNG.integers(info.min, info.max, N, endpoint=True, dtype=dtype)
    if kind == "small":
        return RNG.integers(-3, 4, N).astype(dtype)
    if kind == "runs":
        return np.repeat(RNG.integers(-50, 50, N // 100), 100).astype(dtype)
    if kind == "delta":
        return (np.arange(N) * 3 - 7000).astype(dtype)
    return np.array([info.min, info.max, 0, -1, 1] * (N // 5), dtype)  # extremes


def _mask(kind: str) -> np.ndarray | None:
    if kind == "none":
        return None
    if kind == "all":
        return np.ones(N, np.bool_)
    if kind == "runs":
        return np.repeat(RNG.random(N // 50) < 0.5, 50)
    return RNG.random(N) < 0.3


def _table(kind: str, nulls: str) -> pa.Table:
    mask = _mask(nulls)
    cols = {}
    for name, dtype in (("i8", np.int8), ("i16", np.int16), ("i32", np.int32), ("i64", np.int64)):
        cols[name] = pa.array(_ints(dtype, kind), mask=mask)
    cols["b"] = pa.array(_ints(np.int8, kind) % 2 == 0, mask=mask)
    days = _ints(np.int32, kind) % 3_000_000 - 1_500_000  # years -2137 .. 6077
    cols["d"] = pa.array(days, mask=mask).cast(pa.date32())
    return pa.table(cols)


@pytest.mark.parametrize("version", ["0.11", "0.12"])
@pytest.mark.parametrize("kind", ["random", "small", "runs", "delta", "extremes"])
@pytest.mark.parametrize("nulls", ["none", "some", "runs", "all"])
def test_matches_pyarrow(version: str, kind: str, nulls: str) -> None:
    """Every integer type, RLE v1 (0.11) and v2 (0.12), with and without nulls."""
    data = pyarrow_orc_bytes(_table(kind, nulls), file_version=version, stripe_size=64 * 1024)
    got = decode_file(data)
    want = pyarrow_read(data)
    assert got.schema == want.schema
    assert got.equals(want)


def test_several_stripes_and_encodings() -> None:
    """Small stripes: many stripes, each decoded on its own; encodings are the expected RLE."""
    table = _table("random", "some")
    data = pyarrow_orc_bytes(table, file_version="0.11", stripe_size=4096, batch_size=256)
    _, parts = stripes(data)
    assert len(parts) > 2
    assert parts[0].streams.encoding(3).kind == pb.ColumnEncoding.DIRECT
    assert decode_file(data).equals(pyarrow_read(data))


def test_decode_column_of_a_bare_root() -> None:
    """decode_column on a non-struct root type with n = row count."""
    t = parse_type_string("bigint")
    values = [5, -3, 7, 7, 7, 7, 2**63 - 1]
    streams = make_streams({(0, pb.Stream.DATA): literal_rle_v1(values, signed=True)},
                           [pb.ColumnEncoding.DIRECT])
    arr = decode_column(t, streams, len(values), DecodeOptions())
    assert arr.to_pylist() == values


def test_truncated_data_names_the_column() -> None:
    t = parse_type_string("struct<a:int>")
    streams = make_streams({(1, pb.Stream.DATA): literal_rle_v1([1, 2, 3], signed=True)},
                           [pb.ColumnEncoding.DIRECT] * 2)
    with pytest.raises(CorruptFileError, match=r"column 1 \(int\), DATA"):
        decode_column(t, streams, 10, DecodeOptions())


def test_missing_data_stream() -> None:
    t = parse_type_string("struct<a:boolean>")
    streams = make_streams({}, [pb.ColumnEncoding.DIRECT] * 2)
    with pytest.raises(CorruptFileError, match="column 1 .*DATA.*missing"):
        decode_column(t, streams, 3, DecodeOptions())


def test_count_beyond_stream_capacity_is_refused() -> None:
    """A count no stream of that size can hold is refused before allocating."""
    t = parse_type_string("struct<a:bigint>")
    streams = make_streams({(1, pb.Stream.DATA): b"\x00\x00"}, [pb.ColumnEncoding.DIRECT_V2] * 2)
    with pytest.raises(CorruptFileError, match="cannot hold"):
        decode_column(t, streams, 10**12, DecodeOptions())


def test_unknown_encoding_kind() -> None:
    t = parse_type_string("struct<a:int>")
    enc = pb.ColumnEncoding()
    enc.ParseFromString(b"\x08\x07")  # kind 7 is no ColumnEncoding.Kind
    streams = make_streams({(1, pb.Stream.DATA): b"\x00\x02"}, [pb.ColumnEncoding(), enc])
    with pytest.raises(CorruptFileError, match="column 1"):
        decode_column(t, streams, 1, DecodeOptions())


# --------------------------------------------------------------------------- calendars

def _julian_to_hybrid_day(y: int, m: int, d: int) -> int:
    """Days since 1970-01-01 of a Julian calendar date (Julian day number formula, whose
    divisions truncate; all but the first have positive operands here)."""
    jdn = 367 * y - (7 * (y + 5001 + int((m - 9) / 7))) // 4 + (275 * m) // 9 + d + 1729777
    return jdn - 2440588


def _proleptic_day(y: int, m: int, d: int) -> int:
    return datetime.date(y, m, d).toordinal() - datetime.date(1970, 1, 1).toordinal()


JULIAN_DATES = [(1582, 10, 4), (1582, 1, 1), (1500, 2, 28), (1500, 3, 1), (1000, 6, 15),
                (200, 2, 28), (200, 3, 1), (1, 1, 1), (1, 12, 31), (1200, 2, 29)]


def test_hybrid_days_rebase_to_the_same_julian_fields() -> None:
    hybrid = np.array([_julian_to_hybrid_day(*ymd) for ymd in JULIAN_DATES], np.int64)
    assert _julian_to_hybrid_day(1582, 10, 4) == GREGORIAN_START_DAY - 1
    got = hybrid_to_proleptic_days(hybrid).tolist()
    assert got == [_proleptic_day(*ymd) for ymd in JULIAN_DATES]


def test_julian_leap_day_missing_in_gregorian_becomes_march_first() -> None:
    got = hybrid_to_proleptic_days(np.array([_julian_to_hybrid_day(1500, 2, 29)], np.int64))
    assert got.tolist() == [_proleptic_day(1500, 3, 1)]


def test_days_from_gregorian_reform_on_are_unchanged() -> None:
    days = np.arange(GREGORIAN_START_DAY, GREGORIAN_START_DAY + 1000, 7, dtype=np.int64)
    assert hybrid_to_proleptic_days(days).tolist() == days.tolist()


@pytest.mark.parametrize("calendar", [pb.UNKNOWN_CALENDAR, pb.JULIAN_GREGORIAN,
                                      pb.PROLEPTIC_GREGORIAN])
def test_date_column_rebases_only_julian_gregorian_files(calendar: int) -> None:
    hybrid = [_julian_to_hybrid_day(*ymd) for ymd in JULIAN_DATES] + [0, 19000]
    t = parse_type_string("date")
    streams = make_streams({(0, pb.Stream.DATA): literal_rle_v1(hybrid, signed=True)},
                           [pb.ColumnEncoding.DIRECT])
    arr = decode_column(t, streams, len(hybrid), DecodeOptions(calendar=calendar))
    days = arr.cast(pa.int32()).to_pylist()
    if calendar == pb.JULIAN_GREGORIAN:
        assert days == [_proleptic_day(*ymd) for ymd in JULIAN_DATES] + [0, 19000]
    else:
        assert days == hybrid
