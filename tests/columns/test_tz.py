"""Zone offset tables against zoneinfo, one instant at a time."""

from __future__ import annotations

import datetime
import zlib
from zoneinfo import ZoneInfo

import numpy as np
import pytest

from aorc.errors import CorruptFileError
from aorc.format.columns._tz import RANGE_HIGH, RANGE_LOW, zone_offsets

ZONES = ["America/Los_Angeles", "US/Pacific", "Europe/Moscow", "Australia/Lord_Howe",
         "Africa/Casablanca", "America/Sao_Paulo", "Asia/Kolkata", "Pacific/Apia",
         "America/St_Johns", "Europe/Dublin"]


def _zoneinfo_offset(zone: ZoneInfo, instant: int) -> int:
    off = datetime.datetime.fromtimestamp(instant, zone).utcoffset()
    assert off is not None
    return int(off.total_seconds())


@pytest.mark.parametrize("name", ZONES)
def test_offsets_match_zoneinfo(name: str) -> None:
    table = zone_offsets(name)
    zone = ZoneInfo(name)
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    instants = rng.integers(RANGE_LOW + 1, RANGE_HIGH - 1, 3000)
    # Around every transition: the second before, at and after.
    near = np.concatenate([table.transitions - 1, table.transitions, table.transitions + 1])
    instants = np.concatenate([instants, near[(near > RANGE_LOW) & (near < RANGE_HIGH)]])
    got = table.offsets_at(instants)
    want = np.array([_zoneinfo_offset(zone, int(t)) for t in instants])
    assert np.array_equal(got, want)


def test_rule_based_transitions_continue_past_2037() -> None:
    table = zone_offsets("America/New_York")
    july_2200 = int(datetime.datetime(2200, 7, 1, tzinfo=datetime.UTC).timestamp())
    jan_2200 = int(datetime.datetime(2200, 1, 1, tzinfo=datetime.UTC).timestamp())
    assert table.offsets_at(np.array([july_2200, jan_2200])).tolist() == [-4 * 3600, -5 * 3600]


def test_base_epochs() -> None:
    """2015-01-01 00:00:00 local time, as an instant."""
    assert zone_offsets("UTC").base_epoch == 1_420_070_400
    assert zone_offsets("America/Los_Angeles").base_epoch == 1_420_070_400 + 8 * 3600
    assert zone_offsets("Asia/Kolkata").base_epoch == 1_420_070_400 - 5 * 3600 - 1800


@pytest.mark.parametrize(("name", "offset"), [("GMT+08:00", 8 * 3600), ("GMT-0530", -19800),
                                              ("UTC", 0), ("GMT", 0), ("Z", 0),
                                              ("Etc/GMT+3", -3 * 3600), ("EST", -5 * 3600)])
def test_fixed_offsets(name: str, offset: int) -> None:
    table = zone_offsets(name)
    assert table.offsets_at(np.array([0, 10**9, -(10**9)])).tolist() == [offset] * 3


def test_java_short_ids() -> None:
    """Java's three-letter ids (here PST) resolve as java.time.ZoneId.SHORT_IDS says."""
    assert np.array_equal(zone_offsets("PST").offsets, zone_offsets("America/Los_Angeles").offsets)


def test_to_wall_uses_one_offset_when_possible() -> None:
    table = zone_offsets("Europe/Dublin")
    summer = np.arange(1_720_000_000, 1_720_100_000, 1000)
    assert np.array_equal(table.to_wall(summer), summer + 3600)


def test_unknown_zone() -> None:
    with pytest.raises(CorruptFileError, match="Nowhere/Special"):
        zone_offsets("Nowhere/Special")


@pytest.mark.parametrize("name", ["x" * 300, "Europe", "America"])
def test_zone_names_the_file_system_rejects(name: str) -> None:
    """A writer time zone that is too long for a file name, or names a folder of the zone
    database, is an unknown zone (zoneinfo raises OSError for those)."""
    with pytest.raises(CorruptFileError, match="unknown time zone"):
        zone_offsets(name)
