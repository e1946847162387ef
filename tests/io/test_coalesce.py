"""Range planning: merging, caps, order, splitting back."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aorc.io.coalesce import DEFAULT_MAX_MERGE_DISTANCE, DEFAULT_MAX_REQUEST_SIZE, plan_ranges


def fetch(data: bytes, requests: tuple[tuple[int, int], ...]) -> list[bytes]:
    return [data[o:o + n] for o, n in requests]


def test_defaults_match_object_store() -> None:
    assert DEFAULT_MAX_MERGE_DISTANCE == 1 << 20
    assert DEFAULT_MAX_REQUEST_SIZE == 64 << 20


def test_gap_at_distance_merges_and_one_more_byte_does_not() -> None:
    merged = plan_ranges([(0, 10), (110, 10)], max_merge_distance=100)
    assert merged.requests == ((0, 120),)
    apart = plan_ranges([(0, 10), (111, 10)], max_merge_distance=100)
    assert apart.requests == ((0, 10), (111, 10))


def test_touching_ranges_merge_with_zero_distance() -> None:
    assert plan_ranges([(0, 5), (5, 5)], max_merge_distance=0).requests == ((0, 10),)
    assert plan_ranges([(0, 5), (5, 5)], max_merge_distance=-1).requests == ((0, 5), (5, 5))


def test_cap_stops_merging() -> None:
    plan = plan_ranges([(0, 40), (50, 40), (100, 40)], max_merge_distance=100,
                       max_request_size=100)
    assert plan.requests == ((0, 90), (100, 40))


def test_long_range_is_split_at_the_cap_and_reassembled() -> None:
    data = bytes(range(256)) * 4
    plan = plan_ranges([(3, 1000)], max_request_size=300)
    assert plan.requests == ((3, 300), (303, 300), (603, 300), (903, 100))
    assert plan.split(fetch(data, plan.requests)) == [data[3:1003]]


def test_order_preserved_and_overlaps_and_duplicates() -> None:
    data = bytes(range(200))
    ranges = [(150, 20), (0, 10), (5, 10), (150, 20), (40, 0), (60, 30)]
    plan = plan_ranges(ranges, max_merge_distance=10)
    assert plan.requests == ((0, 15), (60, 30), (150, 20))
    assert plan.split(fetch(data, plan.requests)) == [data[o:o + n] for o, n in ranges]


def test_empty_inputs() -> None:
    assert plan_ranges([]).requests == ()
    plan = plan_ranges([(7, 0)])
    assert plan.requests == ()
    assert plan.split([]) == [b""]


def test_single_whole_response_is_not_copied() -> None:
    resp = b"x" * 50
    plan = plan_ranges([(10, 50)])
    assert plan.split([resp])[0] is resp


@pytest.mark.parametrize("bad", [(-1, 5), (0, -1)])
def test_negative_ranges_rejected(bad: tuple[int, int]) -> None:
    with pytest.raises(ValueError):
        plan_ranges([bad])


def test_split_checks_responses() -> None:
    plan = plan_ranges([(0, 10)])
    with pytest.raises(ValueError):
        plan.split([])
    with pytest.raises(ValueError):
        plan.split([b"short"])


ranges_st = st.lists(st.tuples(st.integers(0, 2000), st.integers(0, 300)), max_size=30)


@settings(max_examples=300, deadline=None)
@given(ranges=ranges_st, distance=st.integers(-1, 200), cap=st.integers(1, 500))
def test_plan_covers_every_byte_and_splits_exactly(
        ranges: list[tuple[int, int]], distance: int, cap: int) -> None:
    data = bytes(i * 7 % 251 for i in range(2400))
    plan = plan_ranges(ranges, max_merge_distance=distance, max_request_size=cap)
    requests = plan.requests
    assert list(requests) == sorted(requests)
    assert all(0 < n <= cap for _, n in requests)
    covered = set()
    for o, n in requests:
        covered.update(range(o, o + n))
    for o, n in ranges:
        assert set(range(o, o + n)) <= covered
    # Requests begin and end on asked-for bytes: only gaps between ranges are wasted.
    asked = set()
    for o, n in ranges:
        asked.update(range(o, o + n))
    for o, n in requests:
        assert o in asked and o + n - 1 in asked
    # Greedy merging is maximal: neighbours close enough and small enough were merged.
    for (o1, n1), (o2, n2) in zip(requests, requests[1:], strict=False):
        assert o2 - (o1 + n1) > distance or o2 + n2 - o1 > cap
    assert plan.split(fetch(data, requests)) == [data[o:o + n] for o, n in ranges]


def test_gap_ratio_never_reads_more_gap_than_useful_bytes() -> None:
    """A 1 MiB merge distance must not pull a large unwanted stream in between two small
    wanted ones (issue 14: bloom filters of other columns between row indexes)."""
    small = [(0, 1000), (500_000, 1000)]
    assert len(plan_ranges(small).requests) == 1  # within the merge distance
    assert plan_ranges(small, max_gap_ratio=1.0).requests == ((0, 1000), (500_000, 1000))
    joined = plan_ranges([(0, 300), (400, 200)], max_gap_ratio=1.0)
    assert joined.requests == ((0, 600),)  # gap 100 <= 500 useful bytes
    chained = plan_ranges([(0, 100), (150, 100), (400, 250)], max_gap_ratio=1.0)
    assert chained.requests == ((0, 650),)  # gaps 200 <= 450 useful bytes
    capped = plan_ranges([(0, 100), (150, 100), (500, 50)], max_gap_ratio=1.0)
    assert capped.requests == ((0, 250), (500, 50))  # gaps 50 + 250 > 250 useful bytes


@given(ranges=st.lists(st.tuples(st.integers(0, 10_000), st.integers(1, 500)), max_size=30),
       ratio=st.sampled_from([0.0, 0.5, 1.0, 2.0]))
def test_gap_ratio_bounds_the_bytes_read(ranges: list[tuple[int, int]], ratio: float) -> None:
    plan = plan_ranges(ranges, max_gap_ratio=ratio)
    useful = sum(n for _, n in ranges)
    assert plan.requested_bytes <= (1 + ratio) * useful
