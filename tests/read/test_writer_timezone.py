"""``use_writer_timezone=True`` (ORC-2213): ``timestamp`` columns read as the instants they
hold in the writer's zone, judged by pyorc (ORC C++) reading with the writer's zone as its
reader zone, which is what ORC C++'s ``setUseWriterTimezone`` does. The DST fall-back hour
shows why it matters: two instants an hour apart have the same wall clock."""

from __future__ import annotations

import datetime
import io
import zoneinfo

import pyarrow as pa
import pyorc
import pytest

import aorc.sync

UTC = datetime.UTC
BERLIN = zoneinfo.ZoneInfo("Europe/Berlin")
SCHEMA = "struct<t:timestamp,s:struct<u:timestamp>,l:array<timestamp>,i:int>"
INSTANTS = [datetime.datetime(2024, 10, 27, 0, 30, 0, 250000, tzinfo=UTC),  # 02:30 CEST
            datetime.datetime(2024, 10, 27, 1, 30, 0, 250000, tzinfo=UTC),  # 02:30 CET
            datetime.datetime(1901, 7, 1, 12, 0, 0, 1000, tzinfo=UTC),
            datetime.datetime(2262, 1, 1, tzinfo=UTC)]


def _berlin_file() -> bytes:
    buf = io.BytesIO()
    with pyorc.Writer(buf, SCHEMA, timezone=BERLIN,
                      struct_repr=pyorc.StructRepr.TUPLE) as writer:
        for i, at in enumerate(INSTANTS):
            writer.write((at, (at,), [at, None], i))
        writer.write((None, None, None, 9))
    return buf.getvalue()


def test_instants_match_orc_cpp_in_the_writer_zone() -> None:
    data = _berlin_file()
    peer = list(pyorc.Reader(io.BytesIO(data), timezone=BERLIN,
                             struct_repr=pyorc.StructRepr.TUPLE))
    expected = [None if r[0] is None else r[0].astimezone(UTC) for r in peer]
    assert expected[:4] == INSTANTS
    table = aorc.sync.read_table(data, use_writer_timezone=True, timestamp_unit="us")
    assert table.schema.field("t").type == pa.timestamp("us", "UTC")
    assert table.schema.field("s").type.field("u").type == pa.timestamp("us", "UTC")
    assert table.schema.field("l").type.value_type == pa.timestamp("us", "UTC")
    assert table.column("t").to_pylist() == expected
    assert [None if s is None else s["u"] for s in table.column("s").to_pylist()] == expected
    assert [None if v is None else v[0] for v in table.column("l").to_pylist()] == expected


def test_default_is_the_writer_wall_clock() -> None:
    """Without the option the two fall-back instants read as the same wall clock."""
    table = aorc.sync.read_table(_berlin_file(), timestamp_unit="us")
    walls = table.column("t").to_pylist()
    assert walls[0] == walls[1] == datetime.datetime(2024, 10, 27, 2, 30, 0, 250000)
    peer = [r[0] for r in pyorc.Reader(io.BytesIO(_berlin_file()),
                                       timezone=zoneinfo.ZoneInfo("UTC"),
                                       struct_repr=pyorc.StructRepr.TUPLE)]
    assert walls == [None if p is None else p.replace(tzinfo=None) for p in peer]


@pytest.mark.parametrize("unit", ["s", "ms", "us", "ns"])
def test_units_and_filters(unit: str) -> None:
    data = _berlin_file()  # 2262-01-01 still fits nanoseconds
    table = aorc.sync.read_table(data, use_writer_timezone=True, timestamp_unit=unit,
                                 columns=["t", "i"])
    assert table.schema.field("t").type == pa.timestamp(unit, "UTC")
    floor = {"s": 10**6, "ms": 10**3, "us": 1, "ns": 1}[unit]
    micros = table.column("t").cast(pa.timestamp("us", "UTC")).cast(pa.int64()).to_pylist()
    want = [int((at - datetime.datetime(1970, 1, 1, tzinfo=UTC)) / datetime.timedelta(
        microseconds=1)) // floor * floor for at in INSTANTS] + [None]
    assert micros == want
    with aorc.sync.open_reader(data, use_writer_timezone=True, timestamp_unit=unit) as r:
        assert r.schema.field("t").type == pa.timestamp(unit, "UTC")
        some = r.read(columns=["i"], filters=[("i", ">=", 1), ("i", "<=", 2)])
        assert some.column("i").to_pylist() == [1, 2]
