"""Time zone offsets for whole arrays of instants.

ORC timestamps are stored relative to the writer's time zone. Turning millions of them into
wall-clock times needs the zone's UTC offset at each instant, which :mod:`zoneinfo` answers one
value at a time. :class:`ZoneOffsets` tabulates a zone once — its transition instants and the
offset in force after each — so that a lookup is one ``np.searchsorted``. Transitions come from
the zone's TZif file; those after the file's last listed transition (zones with a recurring
daylight-saving rule) are found by sampling :mod:`zoneinfo` weekly and bisecting each change.
Offsets themselves always come from :mod:`zoneinfo`, so the table agrees with it.

Tabulating a zone with a daylight-saving rule takes tens of milliseconds, and every stripe
names its writer's zone: each distinct spelling of a name is resolved once per process, and
each zone (whatever the spelling that named it) tabulated once, in bounded caches.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib.resources
import os
import re
import struct
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone, tzinfo
from zoneinfo import TZPATH, ZoneInfo, ZoneInfoNotFoundError

import numpy as np
import numpy.typing as npt

from aorc.errors import CorruptFileError

__all__ = ["ZoneOffsets", "local_zone_name", "zone_offsets"]

#: The instants tabulated, in seconds since the epoch: a little more than the range of
#: timestamp[ns] (1677-09-21 to 2262-04-11). Lookups outside use the nearest end's offset.
RANGE_LOW = -9_300_000_000
RANGE_HIGH = 9_300_000_000

_SAMPLE_STEP = 14 * 86400

#: Java's three-letter zone ids (``java.time.ZoneId.SHORT_IDS``) that tzdata lacks.
_JAVA_SHORT_IDS = {
    "ACT": "Australia/Darwin", "AET": "Australia/Sydney",
    "AGT": "America/Argentina/Buenos_Aires", "ART": "Africa/Cairo", "AST": "America/Anchorage",
    "BET": "America/Sao_Paulo", "BST": "Asia/Dhaka", "CAT": "Africa/Harare",
    "CNT": "America/St_Johns", "CST": "America/Chicago", "CTT": "Asia/Shanghai",
    "EAT": "Africa/Addis_Ababa", "ECT": "Europe/Paris", "IET": "America/Indiana/Indianapolis",
    "IST": "Asia/Kolkata", "JST": "Asia/Tokyo", "MIT": "Pacific/Apia", "NET": "Asia/Yerevan",
    "NST": "Pacific/Auckland", "PLT": "Asia/Karachi", "PNT": "America/Phoenix",
    "PRT": "America/Puerto_Rico", "PST": "America/Los_Angeles", "SST": "Pacific/Guadalcanal",
    "VST": "Asia/Ho_Chi_Minh",
}
#: Longer names are refused unread (the longest zone id has about 30 characters).
_MAX_NAME = 256
_FIXED = re.compile(r"^(?:GMT|UTC|UT)?([+-])(\d{1,2})(?::?(\d{2}))?(?::?(\d{2}))?$")


@dataclass(frozen=True)
class ZoneOffsets:
    """A zone's UTC offsets as a step function of the instant.

    Attributes:
        name: the zone's name.
        transitions: sorted instants (seconds since the epoch, UTC) where the offset changes.
        offsets: seconds east of UTC; ``offsets[i]`` holds before ``transitions[i]``, the last
            one after the last transition (one more entry than ``transitions``).
        base_epoch: the instant of 2015-01-01 00:00:00 local time, ORC's timestamp origin.
    """

    name: str
    transitions: npt.NDArray[np.int64]
    offsets: npt.NDArray[np.int64]
    base_epoch: int

    def offsets_at(self, instants: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        """The UTC offset in seconds at each instant (seconds since the epoch)."""
        if len(self.transitions) == 0:
            return np.full(len(instants), self.offsets[0], np.int64)
        idx = np.searchsorted(self.transitions, instants, side="right")
        out: npt.NDArray[np.int64] = self.offsets[idx]
        return out

    def to_wall(self, instants: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        """Local wall-clock times (as seconds since a naive epoch) of UTC instants."""
        out: npt.NDArray[np.int64]
        if len(self.transitions) == 0:
            out = instants + self.offsets[0]
            return out
        if len(instants):
            lo, hi = np.searchsorted(self.transitions, [instants.min(), instants.max()],
                                     side="right")
            if lo == hi:  # one offset for the whole range
                out = instants + self.offsets[lo]
                return out
        out = instants + self.offsets_at(instants)
        return out


def local_zone_name() -> str | None:
    """The name of this machine's zone from ``TZ`` (``None``: use ``/etc/localtime``)."""
    tz = os.environ.get("TZ")
    if tz:
        return tz[1:] if tz.startswith(":") else tz
    return None


def zone_offsets(name: str | None) -> ZoneOffsets:
    """The offset table of a zone; ``None`` is the machine's local zone.

    Names are IANA zone ids, Java's three-letter ids (``PST``) and fixed offsets such as
    ``GMT+08:00``.

    Raises:
        CorruptFileError: the zone is unknown.
    """
    if name is None:
        name = local_zone_name()
        if name is not None:
            try:
                return _zone_offsets(name)
            except CorruptFileError:  # like the C library: an unknown TZ means UTC
                return _zone_offsets("UTC")
    return _zone_offsets(name)


@functools.lru_cache(maxsize=4096)
def _zone_offsets(name: str | None) -> ZoneOffsets:
    """The table of a zone as spelled in a file: resolved here, tabulated once per zone."""
    if name is not None and len(name) > _MAX_NAME:  # not cached: exceptions never are
        raise CorruptFileError(f"unknown time zone {name[:40]!r}... ({len(name)} characters)")
    zone, tzif = _resolve(name)
    label = name if name is not None else "localtime"
    table = _tabulate(zone, tzif)
    return table if table.name == label else dataclasses.replace(table, name=label)


@functools.lru_cache(maxsize=1024)
def _tabulate(zone: tzinfo, tzif: bytes | None) -> ZoneOffsets:
    """The offset table of a resolved zone (``tzif``: its TZif file, when found)."""
    label = str(zone)
    base = int(datetime(2015, 1, 1, tzinfo=zone).timestamp())
    if isinstance(zone, timezone):
        off = _offset(zone, 0)
        return ZoneOffsets(label, np.zeros(0, np.int64), np.array([off], np.int64), base)
    listed, has_rule = _tzif_transitions(tzif) if tzif is not None else ([], True)
    listed = [t for t in listed if RANGE_LOW < t < RANGE_HIGH]
    points = [(t, _offset(zone, t)) for t in listed]
    if has_rule:  # transitions after the listed ones follow a rule: find them
        points += _sample(zone, listed[-1] if listed else RANGE_LOW, RANGE_HIGH)
    first = _offset(zone, (listed[0] - 1) if listed else RANGE_LOW)
    transitions: list[int] = []
    offsets = [first]
    for t, off in points:
        if off != offsets[-1]:
            transitions.append(t)
            offsets.append(off)
    return ZoneOffsets(label, np.array(transitions, np.int64), np.array(offsets, np.int64), base)


def _resolve(name: str | None) -> tuple[tzinfo, bytes | None]:
    """The tzinfo of a zone name and its TZif bytes when they can be found."""
    if name is None:
        try:
            with open("/etc/localtime", "rb") as f:
                data = f.read()
            import io
            return ZoneInfo.from_file(io.BytesIO(data), key="localtime"), data
        except (OSError, ValueError):
            return UTC, None
    key = name.strip()
    fixed = _FIXED.match(key)
    if key.upper() in ("Z", "UTC", "GMT", "UT"):
        return UTC, None
    if fixed and not key.startswith(("Etc/", "etc/")):
        sign = -1 if fixed.group(1) == "-" else 1
        secs = int(fixed.group(2)) * 3600 + int(fixed.group(3) or 0) * 60 + int(fixed.group(4) or 0)
        if secs < 24 * 3600:
            return timezone(timedelta(seconds=sign * secs)), None
    for candidate in (key, _JAVA_SHORT_IDS.get(key.upper(), "")):
        if not candidate:
            continue
        try:
            zone = ZoneInfo(candidate)
        except (ZoneInfoNotFoundError, ValueError, OSError):  # OSError: e.g. name too long
            continue
        return zone, _tzif_bytes(candidate)
    raise CorruptFileError(f"unknown time zone {name!r}")


def _tzif_bytes(key: str) -> bytes | None:
    """The TZif file of a zone, found where :mod:`zoneinfo` looks for it."""
    parts = key.split("/")
    for root in TZPATH:
        path = os.path.join(root, *parts)
        if os.path.isfile(path):
            try:
                with open(path, "rb") as f:
                    return f.read()
            except OSError:
                pass
    try:
        res = importlib.resources.files("tzdata").joinpath("zoneinfo", *parts)
        return res.read_bytes()
    except (ModuleNotFoundError, OSError):
        return None


def _tzif_transitions(data: bytes) -> tuple[list[int], bool]:
    """Transition instants listed in a TZif file (RFC 8536), and whether a daylight-saving
    rule may add more after them (``([], True)`` when the file cannot be parsed)."""
    try:
        if data[:4] != b"TZif":
            return [], True
        counts = struct.unpack(">6l", data[20:44])
        isutcnt, isstdcnt, leapcnt, timecnt, typecnt, charcnt = counts
        if data[4] == 0:  # version 1: 32-bit times only, no rule
            return np.frombuffer(data, ">i4", timecnt, 44).astype(np.int64).tolist(), True
        skip = 44 + timecnt * 5 + typecnt * 6 + charcnt + leapcnt * 8 + isstdcnt + isutcnt
        if data[skip:skip + 4] != b"TZif":
            return [], True
        isutcnt, isstdcnt, leapcnt, timecnt, typecnt, charcnt = struct.unpack(
            ">6l", data[skip + 20:skip + 44])
        times = np.frombuffer(data, ">i8", timecnt, skip + 44).tolist()
        end = skip + 44 + timecnt * 9 + typecnt * 6 + charcnt + leapcnt * 12 + isstdcnt + isutcnt
        footer = data[end:].strip(b"\n")
        # A POSIX TZ string with a daylight-saving rule has a comma; one without is fixed.
        return times, b"," in footer or not footer
    except (struct.error, ValueError):
        return [], True


def _offset(zone: tzinfo, instant: int) -> int:
    """The zone's UTC offset in seconds at an instant."""
    off = datetime.fromtimestamp(instant, zone).utcoffset()
    return int(off.total_seconds()) if off is not None else 0


def _sample(zone: tzinfo, start: int, stop: int) -> list[tuple[int, int]]:
    """Transitions in ``(start, stop]`` found by weekly samples and bisection."""
    found = []
    prev_t, prev_off = start, _offset(zone, start)
    t = start
    while t < stop:
        t = min(t + _SAMPLE_STEP, stop)
        off = _offset(zone, t)
        if off != prev_off:
            lo, hi = prev_t, t  # offset(lo) == prev_off, offset(hi) == off
            while hi - lo > 1:
                mid = (lo + hi) // 2
                if _offset(zone, mid) == prev_off:
                    lo = mid
                else:
                    hi = mid
            found.append((hi, _offset(zone, hi)))
        prev_t, prev_off = t, off
    return found
