"""Timestamp encoders: writer zones, Java's second rounding, statistics, bloom filters."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

import numpy as np
import pyarrow as pa
import pytest
from encode_helpers import K, check_positions, decode, group_slices, round_trip, stream

from aorc.errors import SchemaError
from aorc.format.codec import rle
from aorc.format.codec.bloom import thomas_wang_hash64
from aorc.format.columns.encode import EncodeOptions, encode_column
from aorc.format.types import OrcType, TypeKind

NS = 10**9
BASE_UTC = 1_420_070_400  # 2015-01-01 00:00:00 UTC


def _java_seconds(ns: int) -> int:
    """Seconds as ORC Java writes them: its millisecond value divided toward zero."""
    millis = ns // 10**6
    return int(millis / 1000) if millis < 0 else millis // 1000


@pytest.mark.parametrize("unit", ["s", "ms", "us", "ns"])
def test_utc_round_trip_and_streams(unit: str) -> None:
    rng = np.random.default_rng(len(unit))
    per_second = {"s": 1, "ms": 10**3, "us": 10**6, "ns": 10**9}[unit]
    n = 5000
    seconds = rng.integers(-9_000_000_000, 9_000_000_000, n)
    fraction = rng.integers(0, per_second, n)
    raw = seconds * per_second + fraction
    raw[::7] = seconds[::7] * per_second  # whole seconds too
    arr = pa.array(raw, pa.timestamp(unit))
    arr = pa.array(np.where(rng.random(n) < 0.1, None, arr.to_pylist()), pa.timestamp(unit))
    starts = np.arange(0, n, 999)
    enc, back = round_trip(OrcType(TypeKind.TIMESTAMP), arr, starts,
                           EncodeOptions(bloom_filter_columns={0}))
    ns = arr.cast(pa.timestamp("ns"), safe=False) if unit != "ns" else arr
    ns_values = np.asarray(arr.drop_null().cast(pa.int64()), np.int64) * (NS // per_second)
    in_quirk = (ns_values > -NS) & (ns_values < 0) & (ns_values % NS >= 10**6)
    assert not in_quirk.any()
    assert back.cast(pa.int64()).equals(ns.cast(pa.int64()))
    count = len(ns_values)
    data = rle.read_int_rle_v2(stream(enc, K.DATA).data, count, True)
    assert data.tolist() == [_java_seconds(int(v)) - BASE_UTC for v in ns_values.tolist()]
    valid_before = np.concatenate(([0], np.cumsum(arr.is_valid().to_numpy(
        zero_copy_only=False))))[starts]
    check_positions(stream(enc, K.DATA), "signed", count, valid_before)
    check_positions(stream(enc, K.SECONDARY), "unsigned", count, valid_before)
    for g, sl in enumerate(group_slices(n, starts)):
        part = [int(v) * (NS // per_second) for v in
                arr[sl].drop_null().cast(pa.int64()).to_pylist()]
        st = enc.row_group_stats[g].timestampStatistics
        keys = sorted((v // 10**6, v % 10**6) for v in part)
        (low_ms, low_ns), (high_ms, high_ns) = keys[0], keys[-1]
        assert (st.minimumUtc, st.maximumUtc) == (low_ms, high_ms)
        assert st.minimumNanos == (low_ns + 1 if low_ns else 0)
        assert st.maximumNanos == (high_ns + 1 if high_ns != 999_999 else 0)
        assert not st.HasField("minimum") and not st.HasField("maximum")
        assert enc.bloom_filters is not None
        assert enc.bloom_filters[g].test_hashes(
            thomas_wang_hash64(np.array([k[0] for k in keys], np.int64))).all()


def test_negative_fractions_as_java_writes_them() -> None:
    values = [-1_500_000_000, -2 * NS + 1, -NS, -999_999_999, -1000, -1, 0, NS - 1]
    arr = pa.array(values, pa.timestamp("ns"))
    enc, back = round_trip(OrcType(TypeKind.TIMESTAMP), arr)
    data = rle.read_int_rle_v2(stream(enc, K.DATA).data, len(values), True)
    assert data.tolist() == [_java_seconds(v) - BASE_UTC for v in values]
    got = back.cast(pa.int64()).to_pylist()
    for v, g in zip(values, got, strict=True):
        # ORC Java cannot represent (-1 s, 0) with a millisecond or more of fraction: both
        # ORC readers see such a value one second late, and so does aorc's
        expected = v + NS if -NS < v < 0 and (v % NS) >= 10**6 else v
        assert g == expected
    st = enc.stripe_stats.timestampStatistics
    assert st.minimumUtc == -2000 and st.minimumNanos == 1 + 1  # -2 s + 1 ns
    # -1 ns counts as +999.999999 ms in Java's arithmetic, like 1 s - 1 ns; 999999 sub-ms
    # nanos are the default maximum and not stored
    assert st.maximumUtc == 999 and not st.HasField("maximumNanos")


@pytest.mark.parametrize("zone", ["America/New_York", "Asia/Kolkata", "Europe/London"])
def test_writer_zone(zone: str) -> None:
    tz = ZoneInfo(zone)
    rng = np.random.default_rng(5)
    walls = rng.integers(-2_000_000_000, 4_000_000_000, 3000)
    opts = EncodeOptions(timezone=zone)
    arr = pa.array(walls * NS + 123, pa.timestamp("ns"))
    enc = encode_column(OrcType(TypeKind.TIMESTAMP), arr, [0], opts)
    data = rle.read_int_rle_v2(stream(enc, K.DATA).data, len(walls), True)
    base = int(dt.datetime(2015, 1, 1, tzinfo=tz).timestamp())
    back = decode(OrcType(TypeKind.TIMESTAMP), enc, len(walls), zone).cast(pa.int64())
    checked = 0
    for wall, stored, got in zip(walls.tolist(), data.tolist(), back.to_pylist(), strict=True):
        naive = dt.datetime(1970, 1, 1) + dt.timedelta(seconds=wall)
        local = naive.replace(tzinfo=tz)  # fold=0: the earlier of two, as java.time
        if local.astimezone(dt.UTC).astimezone(tz).replace(tzinfo=None) != naive:
            continue  # a wall time a gap skips: see test_gap_and_overlap
        assert stored + base == int(local.timestamp())
        assert got == wall * NS + 123
        checked += 1
    assert checked > 2900
    st = enc.stripe_stats.timestampStatistics
    assert st.minimumUtc == int(walls.min()) * 1000 and st.maximumUtc == int(walls.max()) * 1000


def test_gap_and_overlap() -> None:
    zone = "America/New_York"
    gap = dt.datetime(2021, 3, 14, 2, 30)  # does not exist: moves forward an hour
    overlap = dt.datetime(2021, 11, 7, 1, 30)  # twice: the earlier (daylight) instant
    walls = [int((w - dt.datetime(1970, 1, 1)).total_seconds()) for w in (gap, overlap)]
    arr = pa.array([w * NS for w in walls], pa.timestamp("ns"))
    enc = encode_column(OrcType(TypeKind.TIMESTAMP), arr, [0], EncodeOptions(timezone=zone))
    back = decode(OrcType(TypeKind.TIMESTAMP), enc, 2, zone).cast(pa.int64()).to_pylist()
    assert back == [(walls[0] + 3600) * NS, walls[1] * NS]
    data = rle.read_int_rle_v2(stream(enc, K.DATA).data, 2, True)
    base = int(dt.datetime(2015, 1, 1, tzinfo=ZoneInfo(zone)).timestamp())
    assert int(data[1]) + base == int(overlap.replace(tzinfo=ZoneInfo(zone), fold=0).timestamp())


def test_instant_kind_is_utc_based() -> None:
    values = [0, 1_600_000_000 * NS + 5, -86_400 * NS]
    arr = pa.array(values, pa.timestamp("ns", tz="Asia/Tokyo"))
    opts = EncodeOptions(timezone="America/New_York")  # ignored for instants
    enc = encode_column(OrcType(TypeKind.TIMESTAMP_INSTANT), arr, [0], opts)
    data = rle.read_int_rle_v2(stream(enc, K.DATA).data, 3, True)
    assert data.tolist() == [v // NS - BASE_UTC for v in values]
    back = decode(OrcType(TypeKind.TIMESTAMP_INSTANT), enc, 3, "America/New_York")
    assert back.cast(pa.int64()).to_pylist() == values
    assert enc.stripe_stats.timestampStatistics.minimumUtc == -86_400_000


def test_all_null_and_empty() -> None:
    enc, back = round_trip(OrcType(TypeKind.TIMESTAMP), pa.nulls(4, pa.timestamp("us")), [0, 2])
    assert back.null_count == 4
    assert [s.kind for s in enc.streams] == [K.PRESENT, K.DATA, K.SECONDARY]
    st = enc.stripe_stats
    assert st.numberOfValues == 0 and st.HasField("timestampStatistics")
    assert not st.timestampStatistics.HasField("minimumUtc")


def test_aware_values_in_a_plain_timestamp_column() -> None:
    instant = 1_600_000_000  # 2020-09-13 12:26:40 UTC, 08:26:40 in New York
    arr = pa.array([instant * NS], pa.timestamp("ns", tz="UTC"))
    zone = "America/New_York"
    enc = encode_column(OrcType(TypeKind.TIMESTAMP), arr, [0], EncodeOptions(timezone=zone))
    back = decode(OrcType(TypeKind.TIMESTAMP), enc, 1, zone).cast(pa.int64()).to_pylist()
    assert back == [(instant - 4 * 3600) * NS]  # the wall clock in the writer's zone


def test_unknown_zone() -> None:
    with pytest.raises(SchemaError):
        encode_column(OrcType(TypeKind.TIMESTAMP), pa.array([0], pa.timestamp("s")), [0],
                      EncodeOptions(timezone="Mars/Olympus_Mons"))
