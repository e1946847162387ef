"""The one-pass value kernels of ``aorc.format.codec._encode_values`` against plain Python
written from their definitions (ORC Java's TimestampTreeWriter arithmetic, HiveDecimal's
trimming, Decimal64 statistics), on seeded random values with the edge cases drawn in."""

from __future__ import annotations

import bisect

import numpy as np
import pytest
from helpers.varints import format_nanos

from aorc.format.codec._encode_v2 import RleV2Stream
from aorc.format.codec._encode_values import (
    decimal64_group_stats,
    group_true_counts,
    timestamp_parts,
    trim_decimal64,
)
from aorc.format.codec.rle import write_int_rle_v2_with_positions
from aorc.format.columns._tz import zone_offsets
from aorc.format.columns.encode.base import value_pieces

MAX_SECONDS = (2**63 - 1) // 1000 - 1
MAX_DECIMAL64 = 10**18 - 1


def _groups(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Ascending groups covering 0..n, some empty."""
    cuts = np.sort(rng.integers(0, n + 1, rng.integers(0, 12)))
    starts = np.concatenate(([0], cuts)).astype(np.int64)
    ends = np.concatenate((cuts, [n])).astype(np.int64)
    return starts, ends


def _expected_timestamps(raw, per_second, zone, to_instant, to_wall):
    local = [int(t) + max(int(a), int(b)) for t, a, b in
             zip(zone.transitions, zone.offsets[:-1], zone.offsets[1:], strict=True)]
    transitions = [int(t) for t in zone.transitions]
    offsets = [int(o) for o in zone.offsets]
    data, secondary, millis, subs = [], [], [], []
    for x in raw.tolist():
        sec, frac = divmod(x, per_second)
        nanos = frac * (10**9 // per_second)
        inst = sec - offsets[bisect.bisect_right(local, sec)] if to_instant else sec
        if inst < 0 and nanos >= 10**6:
            inst += 1
        data.append(inst - zone.base_epoch)
        secondary.append(format_nanos(nanos))
        ms = inst * 1000 + nanos // 10**6
        if ms < 0 and nanos > 999_999:
            ms -= 1000
        if to_wall:
            ms += 1000 * offsets[bisect.bisect_right(transitions, ms // 1000)]
        millis.append(ms)
        subs.append(nanos % 10**6)
    return data, secondary, millis, subs


@pytest.mark.parametrize("seed", range(12))
def test_timestamp_parts_match_javas_arithmetic(seed: int) -> None:
    rng = np.random.default_rng(seed)
    unit = ["s", "ms", "us", "ns"][seed % 4]
    per_second = {"s": 1, "ms": 10**3, "us": 10**6, "ns": 10**9}[unit]
    zone = zone_offsets(["UTC", "America/New_York", "Asia/Kolkata", "Europe/Berlin"][seed // 3])
    to_instant, to_wall = bool(seed % 2), bool(seed % 3)
    n = int(rng.integers(0, 3000))
    seconds = rng.integers(-4_000_000_000, 4_000_000_000, n)
    seconds[: n // 10] = rng.integers(-2, 2, n // 10)  # around the epoch: Java's rounding
    if len(zone.transitions):  # on and around the zone's transitions: gaps and overlaps
        k = n // 5 - n // 10
        seconds[n // 10: n // 5] = (rng.choice(zone.transitions, k)
                                    + rng.integers(-7200, 7200, k))
    fraction = rng.integers(0, per_second, n) if per_second > 1 else np.zeros(n, np.int64)
    fraction[::7] = fraction[::7] // max(per_second // 1000, 1) * max(per_second // 1000, 1)
    raw = seconds * per_second + fraction
    starts, ends = _groups(rng, n)
    wall_bounds = (zone.transitions + np.maximum(zone.offsets[:-1], zone.offsets[1:])
                   if len(zone.transitions) else zone.transitions)
    low, high, low_sub, high_sub = (np.zeros(len(starts), np.int64) for _ in range(4))
    nonempty = np.zeros(len(starts), np.bool_)
    got: list[list[int]] = [[], [], []]
    piece = int(rng.integers(1, 700))  # a column in pieces merges each group's extremes
    for a, b, piece_starts, piece_ends in value_pieces(n, starts, ends, piece):
        data, secondary, millis, bad = timestamp_parts(
            raw[a:b], per_second, MAX_SECONDS, zone.base_epoch, wall_bounds, zone.offsets,
            to_instant, zone.transitions, zone.offsets, to_wall, piece_starts, piece_ends,
            True, low, high, low_sub, high_sub, nonempty)
        assert bad == -1 and millis is not None
        for part, values in zip(got, (data, secondary, millis), strict=True):
            part.extend(values.tolist())
    e_data, e_secondary, e_millis, e_subs = _expected_timestamps(raw, per_second, zone,
                                                                 to_instant, to_wall)
    assert got == [e_data, e_secondary, e_millis]
    for g, (a, b) in enumerate(zip(starts.tolist(), ends.tolist(), strict=True)):
        assert bool(nonempty[g]) == (b > a)
        if b > a:
            pairs = list(zip(e_millis[a:b], e_subs[a:b], strict=True))
            assert (low[g], low_sub[g]) == min(pairs)
            assert (high[g], high_sub[g]) == max(pairs)


@pytest.mark.parametrize("unit", [10**3, 10**6, 10**9])
def test_timestamp_parts_at_javas_rounding_edges(unit: int) -> None:
    """Around the epoch, a millisecond of fraction (exactly) moves the seconds and not less."""
    zone = zone_offsets("UTC")
    per_ms = unit // 1000
    edges = [-unit + per_ms, -unit + per_ms - 1 if per_ms > 1 else -unit, -unit, -1, 0,
             1, per_ms, -2 * unit + 999 * per_ms, -2 * unit + 999 * per_ms + per_ms - 1]
    raw = np.array(edges, np.int64)
    starts, ends = np.array([0], np.int64), np.array([len(raw)], np.int64)
    data, secondary, millis, _ = timestamp_parts(
        raw, unit, MAX_SECONDS, zone.base_epoch, zone.transitions, zone.offsets, False,
        zone.transitions, zone.offsets, False, starts, ends, True, *_no_stats(1))
    e_data, e_secondary, e_millis, _ = _expected_timestamps(raw, unit, zone, False, False)
    assert (data.tolist(), secondary.tolist(), millis.tolist()) == (e_data, e_secondary,
                                                                     e_millis)
    assert data[0] - data[2] == 1  # one millisecond before -1 s rounds toward zero


def _no_stats(k: int = 0) -> list[np.ndarray]:
    return [*(np.zeros(k, np.int64) for _ in range(4)), np.zeros(k, np.bool_)]


def test_timestamp_parts_without_millis_or_groups() -> None:
    zone = zone_offsets("UTC")
    raw = np.array([0, -1, 1_500_000, -1_500_000], np.int64)
    out = timestamp_parts(raw, 10**6, MAX_SECONDS, zone.base_epoch, zone.transitions,
                          zone.offsets, False, zone.transitions, zone.offsets, False,
                          np.zeros(0, np.int64), np.zeros(0, np.int64), False, *_no_stats())
    data, secondary, millis, bad = out
    assert millis is None and bad == -1
    e_data, e_secondary, _, _ = _expected_timestamps(raw, 10**6, zone, False, False)
    assert data.tolist() == e_data and secondary.tolist() == e_secondary


@pytest.mark.parametrize("value", [(MAX_SECONDS + 1) * 1000, -(MAX_SECONDS + 1) * 1000 - 1,
                                   np.iinfo(np.int64).min, np.iinfo(np.int64).max])
def test_timestamp_parts_reports_the_first_value_out_of_range(value: int) -> None:
    zone = zone_offsets("UTC")
    raw = np.array([5, 6, value, 7, value], np.int64)
    starts, ends = np.array([0, 2], np.int64), np.array([2, 5], np.int64)
    *_, bad = timestamp_parts(raw, 1000, MAX_SECONDS, zone.base_epoch, zone.transitions,
                              zone.offsets, False, zone.transitions, zone.offsets, False,
                              starts, ends, True, *_no_stats(2))
    assert bad == 2


@pytest.mark.parametrize(("starts", "ends"), [([0, 3], [4, 5]), ([2], [1]), ([0], [9]),
                                              ([-1], [2]), ([0, 1], [1])])
def test_timestamp_parts_refuses_bad_groups(starts: list[int], ends: list[int]) -> None:
    zone = zone_offsets("UTC")
    with pytest.raises(ValueError):
        timestamp_parts(np.arange(5, dtype=np.int64), 1, MAX_SECONDS, zone.base_epoch,
                        zone.transitions, zone.offsets, False, zone.transitions, zone.offsets,
                        False, np.array(starts, np.int64), np.array(ends, np.int64), False,
                        *_no_stats(len(starts)))


def test_timestamp_parts_refuses_a_unit_that_does_not_divide_a_second() -> None:
    zone = zone_offsets("UTC")
    with pytest.raises(ValueError, match="divide a second"):
        timestamp_parts(np.zeros(1, np.int64), 7, MAX_SECONDS, 0, zone.transitions,
                        zone.offsets, False, zone.transitions, zone.offsets, False,
                        np.zeros(0, np.int64), np.zeros(0, np.int64), False, *_no_stats())


def test_timestamp_parts_refuses_statistics_of_another_length() -> None:
    zone = zone_offsets("UTC")
    with pytest.raises(ValueError, match="one int64 entry per group"):
        timestamp_parts(np.zeros(3, np.int64), 1, MAX_SECONDS, 0, zone.transitions,
                        zone.offsets, False, zone.transitions, zone.offsets, False,
                        np.array([0]), np.array([3]), False, *_no_stats(2))


def _words(values: list[int]) -> np.ndarray:
    return np.array([[v & (2**64 - 1), (v >> 64) & (2**64 - 1)] for v in values], np.uint64)


@pytest.mark.parametrize("seed", range(8))
def test_trim_decimal64_matches_hive_decimal(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    scale = int(rng.integers(0, 39))
    n = int(rng.integers(0, 2000))
    values = [int(v) for v in rng.integers(-(10**17), 10**17, n)]
    for i in range(0, n, 3):
        values[i] = values[i] // 10**int(rng.integers(0, 8)) * 10**int(rng.integers(0, 8))
    for i in range(1, n, 11):
        values[i] = int(rng.integers(-(10**15), 10**15)) * 10**20  # beyond 64 bits
    for i in range(2, n, 13):
        values[i] = 0
    if n > 4:
        values[3:5] = [2**63 - 1, -(2**63)]
    trimmed, scales, wide = trim_decimal64(_words(values), scale)
    fits = [-(2**63) <= v < 2**63 for v in values]
    assert wide.tolist() == [i for i, ok in enumerate(fits) if not ok]
    for i, v in enumerate(values):
        if not fits[i]:
            assert scales[i] == scale
            assert trimmed[i].tolist() == _words([v])[0].tolist()
            continue
        removed = scale if v == 0 else 0
        while v and removed < scale and v % 10 == 0:
            v //= 10
            removed += 1
        assert scales[i] == scale - removed
        assert trimmed[i].tolist() == _words([0 if values[i] == 0 else v])[0].tolist()


def test_trim_decimal64_refuses_bad_shapes_and_scales() -> None:
    with pytest.raises(ValueError):
        trim_decimal64(np.zeros((3, 3), np.uint64), 2)
    with pytest.raises(ValueError):
        trim_decimal64(np.zeros((3, 2), np.uint64), 39)


@pytest.mark.parametrize("seed", range(8))
def test_decimal64_group_stats_keep_javas_sum_limit(seed: int) -> None:
    rng = np.random.default_rng(200 + seed)
    n = int(rng.integers(0, 3000))
    big = seed % 2 == 0  # values near the 18-digit limit: running sums leave it
    bound = 10**18 - 1 if big else 10**12
    values = rng.integers(-bound, bound, n, dtype=np.int64)
    starts, ends = _groups(rng, n)
    words = _words(values.tolist())[:, :]  # a strided low-word view is read in place
    low, high, sums, has_sum, nonempty = decimal64_group_stats(words, starts, ends,
                                                               MAX_DECIMAL64)
    for g, (a, b) in enumerate(zip(starts.tolist(), ends.tolist(), strict=True)):
        assert bool(nonempty[g]) == (b > a)
        if b == a:
            continue
        part = values[a:b].tolist()
        running, inside = 0, True
        for v in part:
            running += v
            inside = inside and abs(running) <= MAX_DECIMAL64
        assert (low[g], high[g]) == (min(part), max(part))
        assert bool(has_sum[g]) == inside
        assert sums[g] == (running if inside else 0)
    if big and n > 100:
        assert not has_sum.all()  # the case the limit is for was drawn


def test_decimal64_group_stats_at_the_limit() -> None:
    values = np.array([MAX_DECIMAL64, -MAX_DECIMAL64, MAX_DECIMAL64, MAX_DECIMAL64, 1, 3],
                      np.int64)
    starts, ends = np.array([0, 1, 3, 5]), np.array([1, 3, 5, 6])
    _, _, sums, has_sum, _ = decimal64_group_stats(_words(values.tolist()), starts, ends,
                                                   MAX_DECIMAL64)
    assert has_sum.tolist() == [True, True, False, True]
    assert sums.tolist() == [MAX_DECIMAL64, 0, 0, 3]


def test_decimal64_group_stats_refuse_groups_outside_the_values() -> None:
    with pytest.raises(ValueError):
        decimal64_group_stats(np.zeros((3, 2), np.uint64), np.array([0]), np.array([4]),
                              MAX_DECIMAL64)
    with pytest.raises(ValueError):
        decimal64_group_stats(np.zeros(3, np.int64), np.array([0]), np.array([3]),
                              MAX_DECIMAL64)


@pytest.mark.parametrize("seed", range(6))
def test_group_true_counts(seed: int) -> None:
    rng = np.random.default_rng(300 + seed)
    n = int(rng.integers(0, 5000))
    values = rng.random(n) < rng.random()
    starts, ends = _groups(rng, n)
    counts = group_true_counts(values, starts, ends)
    assert counts.tolist() == [int(values[a:b].sum()) for a, b in
                               zip(starts.tolist(), ends.tolist(), strict=True)]
    with pytest.raises(ValueError):
        group_true_counts(values, np.array([0]), np.array([n + 1]))


@pytest.mark.parametrize("seed", range(10))
def test_rle_v2_stream_in_pieces_is_the_whole_encoding(seed: int) -> None:
    rng = np.random.default_rng(400 + seed)
    n = int(rng.integers(0, 6000))
    kind = seed % 3  # runs, deltas and patched outliers: every RLE v2 sub-encoding
    if kind == 0:
        values = np.repeat(rng.integers(-50, 50, n // 7 + 1), 7)[:n]
    elif kind == 1:
        values = np.cumsum(rng.integers(0, 3, n))
    else:
        values = rng.integers(0, 1000, n)
        values[rng.random(n) < 0.02] = 2**40
    values = values.astype(np.int64)
    signed = bool(seed % 2)
    bounds = np.unique(rng.integers(0, n + 1, rng.integers(0, 20)))
    stream = RleV2Stream(signed, bounds, n)
    cuts = np.unique(np.concatenate(([0, n], rng.integers(0, n + 1, 6))))
    for a, b in zip(cuts[:-1], cuts[1:], strict=True):
        stream.write(values[a:b])
    data, positions = stream.finish()
    whole, whole_positions = write_int_rle_v2_with_positions(values, signed, bounds)
    assert data == whole
    assert positions.tolist() == whole_positions.tolist()


def test_rle_v2_stream_counts_its_values() -> None:
    stream = RleV2Stream(True, [0], 3)
    stream.write(np.array([1, 2], np.int64))
    with pytest.raises(ValueError, match="2 of the 3"):
        stream.finish()
    with pytest.raises(ValueError, match="more values"):
        stream.write(np.array([1, 2], np.int64))
    stream.write(np.array([3], np.int64))
    assert stream.finish()[0] == write_int_rle_v2_with_positions([1, 2, 3], True, [0])[0]
    with pytest.raises(ValueError):
        stream.finish()


def test_value_pieces_clip_the_groups() -> None:
    starts, ends = np.array([0, 3, 3, 8]), np.array([3, 3, 8, 10])
    pieces = [(a, b, s.tolist(), e.tolist()) for a, b, s, e in
              value_pieces(10, starts, ends, 4)]
    assert pieces == [(0, 4, [0, 3, 3, 4], [3, 3, 4, 4]), (4, 8, [0, 0, 0, 4], [0, 0, 4, 4]),
                      (8, 10, [0, 0, 0, 0], [0, 0, 0, 2])]
    assert list(value_pieces(0, starts[:0], ends[:0])) == []
