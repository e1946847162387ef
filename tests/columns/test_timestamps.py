"""Timestamp columns: writer time zones, pre-1970 values, nanoseconds, the reader's zone."""

from __future__ import annotations

import datetime
import io
import json
import os
import subprocess
import sys
from pathlib import Path
from zoneinfo import ZoneInfo

import numpy as np
import pyarrow as pa
import pyorc
import pytest
from helpers.varints import format_nanos
from stream_builders import bool_rle, literal_rle_v1, make_streams
from stripe_source import decode_file, pyarrow_orc_bytes, pyarrow_read, pyorc_bytes, stripes

from aorc.errors import CorruptFileError, SchemaError, UnsupportedFeatureError
from aorc.format._proto import orc_proto_pb2 as pb
from aorc.format.columns import DecodeOptions, DictStripeStreams, decode_column, decode_stripe
from aorc.format.columns.timestamps import decode_nanos
from aorc.format.types import parse_type_string

RNG = np.random.default_rng(3)
BASE_UTC = 1_420_070_400  # 2015-01-01 00:00:00 UTC
ZONES = ["UTC", "America/New_York", "Asia/Kolkata", "Australia/Lord_Howe", "Europe/London"]


@pytest.mark.parametrize("version", ["0.11", "0.12"])
def test_pyarrow_values_round_trip(version: str) -> None:
    """pyarrow.orc (ORC C++, writer zone UTC) values, negative ones with fractions included."""
    n = 4000
    ns = RNG.integers(-(2**62), 2**62, n)
    ns[:12] = [-1, -999_999, -1_000_000, -1_000_001, -1_500_000_000, 0, 1, 999_999_999,
               -10**9, -(10**9) - 1, 10**18, -(10**18) + 7]
    mask = RNG.random(n) < 0.2
    table = pa.table({"ts": pa.array(ns.astype("datetime64[ns]"), mask=mask)})
    data = pyarrow_orc_bytes(table, file_version=version)
    got = decode_file(data)
    assert got.equals(pyarrow_read(data))
    assert got.column("ts").cast(pa.int64()).to_pylist() == \
        [None if m else int(v) for v, m in zip(ns, mask, strict=False)]


def _wall_rows(zone: str) -> list[tuple]:
    tz = ZoneInfo(zone)
    rows = []
    for i in range(400):
        instant = int(RNG.integers(-2_200_000_000, 4_000_000_000))
        aware = datetime.datetime.fromtimestamp(instant, tz).replace(microsecond=i * 997 % 10**6)
        rows.append((aware, aware))
    rows.append((None, None))
    return rows


@pytest.mark.parametrize("zone", ZONES)
def test_writer_zone_gives_its_wall_clock(zone: str) -> None:
    """pyorc writes instants in a writer zone; the column reads as that zone's wall clock,
    and timestamp with local time zone as the UTC instant."""
    rows = _wall_rows(zone)
    schema = "struct<ts:timestamp,tsi:timestamp with local time zone>"
    data = pyorc_bytes(schema, rows, timezone=ZoneInfo(zone))
    assert stripes(data)[1][0].streams.writer_timezone == zone
    got = decode_file(data).to_pylist()
    for (aware, _), row in zip(rows, got, strict=False):
        if aware is None:
            assert row == {"ts": None, "tsi": None}
            continue
        assert row["ts"] == aware.replace(tzinfo=None)
        assert row["tsi"] == aware.astimezone(datetime.UTC)
    assert decode_file(data).equals(pyarrow_read(data))
    peer = list(pyorc.Reader(io.BytesIO(data), timezone=ZoneInfo(zone)))
    assert [r[0] and r[0].replace(tzinfo=None) for r in peer] == [r["ts"] for r in got]


def _without_writer_zone(data: bytes) -> tuple:
    tail, parts = stripes(data)
    s = parts[0].streams
    return tail, DictStripeStreams(s.streams, s.encodings, None), parts[0].num_rows


def test_missing_writer_zone_uses_the_reader_zone() -> None:
    """Without a writer zone the data is read in the reader's zone (as ORC Java and C++)."""
    zone = "America/New_York"
    rows = _wall_rows(zone)
    data = pyorc_bytes("struct<ts:timestamp>", rows, timezone=ZoneInfo(zone))
    tail, streams, n = _without_writer_zone(data)
    as_written = decode_file(data)
    opts = DecodeOptions(reader_timezone=zone)
    assert decode_stripe(tail.schema, None, streams, n, opts).column(0).equals(
        as_written.column(0).chunk(0))
    # Read in UTC instead, the stored seconds count from 2015-01-01 00:00 UTC.
    seconds = literal_values(streams, 1, pb.Stream.DATA, n - 1)
    utc = decode_stripe(tail.schema, None, streams, n, DecodeOptions(reader_timezone="UTC"))
    got = utc.column(0).cast(pa.int64()).to_pylist()[:-1]
    want = []
    for s, (aware, _) in zip(seconds, rows, strict=False):
        instant, nanos = s + BASE_UTC, aware.microsecond * 1000
        want.append((instant - (instant < 0 and nanos > 999_999)) * 10**9 + nanos)
    assert got == want


def literal_values(streams: DictStripeStreams, column: int, kind: int, n: int) -> list[int]:
    from aorc.format.codec.rle import decode_ints

    kind_v = streams.encoding(column).kind
    version = 2 if kind_v in (pb.ColumnEncoding.DIRECT_V2, pb.ColumnEncoding.DICTIONARY_V2) else 1
    return decode_ints(streams.stream(column, kind), n, True, version).tolist()


_CHILD = """
import json, sys
sys.path[:0] = {paths!r}
from stripe_source import stripes
from aorc.format.columns import DecodeOptions, DictStripeStreams, decode_stripe
data = open({path!r}, "rb").read()
tail, parts = stripes(data)
s = parts[0].streams
out = []
for zone in (s.writer_timezone, None):
    streams = DictStripeStreams(s.streams, s.encodings, zone)
    batch = decode_stripe(tail.schema, None, streams, parts[0].num_rows, DecodeOptions())
    out.append([v.value if v.is_valid else None for v in batch.column(0)])
print(json.dumps(out))
"""


def _decode_in_zone(tmp_path: Path, data: bytes, tz: str) -> tuple[list, list]:
    """Decode in a process with ``TZ=tz``, with and without the writer zone."""
    path = tmp_path / "ts.orc"
    path.write_bytes(data)
    here = Path(__file__).resolve().parent
    code = _CHILD.format(paths=[str(here), str(here.parents[1])], path=str(path))
    env = dict(os.environ, TZ=tz)
    out = subprocess.run([sys.executable, "-c", code], env=env, check=True,
                         capture_output=True, text=True)
    with_zone, without_zone = json.loads(out.stdout)
    return with_zone, without_zone


def test_machine_zone_matters_only_without_writer_zone(tmp_path: Path) -> None:
    """Run in processes with different TZ: a recorded writer zone gives the same values
    everywhere; without one, the local zone (TZ) takes its place."""
    zone = "America/New_York"
    data = pyorc_bytes("struct<ts:timestamp>", _wall_rows(zone), timezone=ZoneInfo(zone))
    expected = decode_file(data).column(0).cast(pa.int64()).to_pylist()
    for tz in ("Asia/Tokyo", zone):
        with_zone, without_zone = _decode_in_zone(tmp_path, data, tz)
        assert with_zone == expected
        assert (without_zone == expected) == (tz == zone)


# --------------------------------------------------------------------------- Java semantics

def _java_write(instant_ns: int) -> tuple[int, int]:
    """What ORC Java's writer stores (writer zone UTC) for an instant: seconds truncated
    from the floor milliseconds, and the nanosecond of the second."""
    millis = instant_ns // 10**6
    seconds = int(millis / 1000) if millis >= 0 else -((-millis) // 1000)
    return seconds - BASE_UTC, instant_ns % 10**9


def _decode_raw(seconds: list[int], raw_nanos: list[int], zone: str | None = "UTC",
                kind: str = "timestamp") -> pa.Array:
    streams = make_streams({(0, pb.Stream.DATA): literal_rle_v1(seconds, signed=True),
                            (0, pb.Stream.SECONDARY): literal_rle_v1(raw_nanos, signed=False)},
                           [pb.ColumnEncoding.DIRECT], zone)
    return decode_column(parse_type_string(kind), streams, len(seconds), DecodeOptions())


def test_java_written_pre_1970_values() -> None:
    """Java truncates negative seconds toward zero; the reader takes the extra second back
    (seconds < 0 and nanos > 999999) and recovers the instant."""
    instants = [-4_500_000_000, -4_000_500_000, -4_000_000_500, -5_000_000_000, -1_000_000_001,
                -2_208_988_799_999_999_999 // 1000 * 1000, 123_456_789_123, -86_400 * 10**9 + 1]
    written = [_java_write(i) for i in instants]
    got = _decode_raw([s for s, _ in written], [format_nanos(n) for _, n in written])
    assert got.cast(pa.int64()).to_pylist() == instants


def test_java_sub_millisecond_values_just_before_the_epoch() -> None:
    """Between -1 s and 0 Java stores seconds 0: readers (Java and C++ alike) then see a
    positive time, and so does aorc, to read those files as their writer reads them."""
    seconds, nanos = _java_write(-500)
    assert seconds == -BASE_UTC
    got = _decode_raw([seconds], [format_nanos(nanos)])
    assert got.cast(pa.int64()).to_pylist() == [999_999_500]


def test_decode_nanos() -> None:
    values = [0, 1, 999_999_999, 1000, 100_000, 500_000_000, 120, 10**8, 7 * 10**8, 123_000]
    raw = np.array([format_nanos(v) for v in values], np.int64)
    assert raw[3] == 0x0A and raw[4] == 0x0C  # the examples of ORC's writer
    assert decode_nanos(raw).tolist() == values
    negative = np.array([(-5 << 3) | 7, -123 << 3], np.int64)  # ORC C++ negative nanos
    assert decode_nanos(negative).tolist() == [-500_000_000, -123]


def test_nanos_out_of_range_is_corrupt() -> None:
    with pytest.raises(CorruptFileError, match="SECONDARY"):
        _decode_raw([0], [(10**9) << 3])


@pytest.mark.parametrize(("seconds", "raw_nanos"), [
    (-11_676_096_000, 0),  # 1600
    (2**63 // 10**9 + 1, 0),
    (2**63 // 10**9, format_nanos(854_775_808)),  # one past the int64 maximum
    (-(2**63) // 10**9, 0),  # 145224192 ns before the int64 minimum
])
def test_out_of_arrow_range_is_refused(seconds: int, raw_nanos: int) -> None:
    with pytest.raises(UnsupportedFeatureError, match="timestamp"):
        _decode_raw([seconds - BASE_UTC], [raw_nanos])


def test_int64_extremes_read_back() -> None:
    """The ends of timestamp[ns], as ORC C++ writes them (negative nanos) and as ORC Java
    does (seconds truncated, positive nanos)."""
    low, high = -(2**63), 2**63 - 1
    seconds = [high // 10**9, -(-low // 10**9), -(-low // 10**9)]
    nanos = [high % 10**9, -(-low % 10**9), low % 10**9]
    raw = [format_nanos(n) if n >= 0 else (n << 3) for n in nanos]
    got = _decode_raw([s - BASE_UTC for s in seconds], raw)
    assert got.cast(pa.int64()).to_pylist() == [high, low, low]


def test_unknown_writer_zone() -> None:
    with pytest.raises(CorruptFileError, match="Mars/Olympus"):
        _decode_raw([0], [0], zone="Mars/Olympus")


def test_unknown_reader_zone() -> None:
    streams = make_streams({(0, pb.Stream.DATA): literal_rle_v1([0], signed=True),
                            (0, pb.Stream.SECONDARY): literal_rle_v1([0], signed=False)},
                           [pb.ColumnEncoding.DIRECT])
    with pytest.raises(SchemaError, match="Mars/Olympus"):
        decode_column(parse_type_string("timestamp"), streams, 1,
                      DecodeOptions(reader_timezone="Mars/Olympus"))


@pytest.mark.parametrize("zone", ["GMT+08:00", "PST", "Etc/GMT-3", "UTC"])
def test_java_style_zone_names(zone: str) -> None:
    got = _decode_raw([0], [0], zone=zone).cast(pa.int64()).to_pylist()
    assert got == [BASE_UTC * 10**9]  # the stored zero is midnight wall clock in any zone


def test_instant_ignores_the_writer_zone() -> None:
    got = _decode_raw([10], [0], zone="Asia/Tokyo", kind="timestamp with local time zone")
    assert got.type == pa.timestamp("ns", tz="UTC")
    assert got.cast(pa.int64()).to_pylist() == [(BASE_UTC + 10) * 10**9]


@pytest.mark.parametrize(("seed", "zone", "kind"), [
    (0, "UTC", "timestamp"), (1, "America/New_York", "timestamp"),
    (2, "Asia/Kolkata", "timestamp"), (3, "Europe/Berlin", "timestamp with local time zone"),
    (4, "Australia/Lord_Howe", "timestamp")])
def test_one_pass_equals_the_general_way(seed: int, zone: str, kind: str,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The one-pass kernel against the general way (the kernel turned off), on seeded
    instants from 1900 to 2100 with every kind of fraction, nulls, and zones with and
    without daylight saving."""
    from aorc.format.codec import rle

    rng = np.random.default_rng(seed)
    n = 3000
    instants = rng.integers(-2_208_988_800 * 10**9, 4_102_444_800 * 10**9, n)
    instants[::7] = instants[::7] // 10**9 * 10**9  # whole seconds
    instants[1::7] = instants[1::7] // 10**6 * 10**6  # milliseconds
    written = [_java_write(int(i)) for i in instants]
    nulls = rng.random(n) < 0.15
    present = [w for w, null in zip(written, nulls, strict=True) if not null]

    def decode() -> pa.Array:
        streams = make_streams(
            {(0, pb.Stream.DATA): literal_rle_v1([s for s, _ in present], signed=True),
             (0, pb.Stream.SECONDARY): literal_rle_v1([format_nanos(v) for _, v in present],
                                                      signed=False),
             (0, pb.Stream.PRESENT): bool_rle([not x for x in nulls])},
            [pb.ColumnEncoding.DIRECT], zone)
        return decode_column(parse_type_string(kind), streams, n, DecodeOptions())

    calls: list[bool] = []
    real = rle.timestamps_ns

    def counted(*args: object, **kwargs: object) -> object:
        out = real(*args, **kwargs)  # type: ignore[arg-type]
        calls.append(out is not None)
        return out

    monkeypatch.setattr(rle, "timestamps_ns", counted)
    fast = decode()
    monkeypatch.setattr(rle, "timestamps_ns", lambda *a, **k: None)
    general = decode()
    assert calls == [True] and fast.equals(general) and fast.null_count == int(nulls.sum())
    if zone == "UTC" and kind == "timestamp":
        want = [None if null else int(i) for i, null in zip(instants, nulls, strict=True)]
        assert fast.cast(pa.int64()).to_pylist() == want


def test_one_pass_leaves_ranges_and_old_julian_times_to_the_general_way() -> None:
    from aorc.format.codec import rle

    zone = [np.zeros(0, np.int64), np.zeros(1, np.int64)]
    ok = rle.timestamps_ns(np.array([0]), np.array([0]), None, 1, 0, *zone)
    assert ok is not None and ok.tolist() == [0]
    too_far = np.array([2**63 // 10**9 + 1])
    assert rle.timestamps_ns(too_far, np.array([0]), None, 1, 0, *zone) is None
    bad_nanos = np.array([(10**9) << 3])
    assert rle.timestamps_ns(np.array([0]), bad_nanos, None, 1, 0, *zone) is None
    assert rle.timestamps_ns(np.array([-10**10]), np.array([0]), None, 1, 0, *zone,
                             floor=-10**9) is None
    assert rle.timestamps_ns(np.array([0, 1]), np.array([0]), None, 2, 0, *zone) is None
