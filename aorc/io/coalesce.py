"""Planning of ranged reads: merge nearby ranges into fewer requests, split results back.

Object stores charge a round trip per request, so ranges separated by small gaps are cheaper
to fetch as one request that also reads the gap. Very large ranges are cut into pieces that
can be fetched in parallel. This module only plans; it performs no I/O.

Example::

    plan = plan_ranges([(0, 10), (20, 5)], max_merge_distance=100)
    plan.requests                               # ((0, 25),)
    plan.split([data[0:25]])                    # [data[0:10], data[20:25]]
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

__all__ = [
    "DEFAULT_MAX_MERGE_DISTANCE",
    "DEFAULT_MAX_REQUEST_SIZE",
    "RangePlan",
    "plan_ranges",
]

#: Ranges whose gap is at most this many bytes are fetched by one request (as object_store).
DEFAULT_MAX_MERGE_DISTANCE = 1024 * 1024

#: No planned request is longer than this; longer ranges are split into several requests.
DEFAULT_MAX_REQUEST_SIZE = 64 * 1024 * 1024


@dataclass(frozen=True)
class _Piece:
    """Part of a requested range, found at ``start`` inside response ``request``."""

    request: int
    start: int
    length: int


@dataclass(frozen=True)
class RangePlan:
    """The requests that cover a list of byte ranges, and how to cut the ranges out of them.

    Attributes:
        ranges: the ranges asked for, ``(offset, length)``, in the caller's order.
        requests: the ``(offset, length)`` requests to issue, sorted by offset.
    """

    ranges: tuple[tuple[int, int], ...]
    requests: tuple[tuple[int, int], ...]
    _pieces: tuple[tuple[_Piece, ...], ...]

    @property
    def requested_bytes(self) -> int:
        """Total number of bytes the requests fetch (gaps included)."""
        return sum(length for _, length in self.requests)

    def split(self, responses: Sequence[bytes | bytearray | memoryview]) -> list[bytes]:
        """Cut the asked-for ranges out of the responses to :attr:`requests`.

        Args:
            responses: one buffer per request, in the order of :attr:`requests`, each exactly
                as long as its request.

        Returns:
            One ``bytes`` per range in :attr:`ranges`, in the same order. A range that is
            exactly one whole response is returned without copying when it is ``bytes``.

        Raises:
            ValueError: when the responses do not match the requests (a caller bug).
        """
        if len(responses) != len(self.requests):
            raise ValueError(f"expected {len(self.requests)} responses, got {len(responses)}")
        for (offset, length), resp in zip(self.requests, responses, strict=True):
            if len(resp) != length:
                raise ValueError(
                    f"response for [{offset}, {offset + length}) has {len(resp)} bytes")
        return [_assemble(pieces, responses) for pieces in self._pieces]


def _assemble(pieces: tuple[_Piece, ...],
              responses: Sequence[bytes | bytearray | memoryview]) -> bytes:
    if len(pieces) == 1:
        p = pieces[0]
        resp = responses[p.request]
        if p.start == 0 and p.length == len(resp) and isinstance(resp, bytes):
            return resp
        return bytes(memoryview(resp)[p.start:p.start + p.length])
    return b"".join(memoryview(responses[p.request])[p.start:p.start + p.length]
                    for p in pieces)


def _check_range(offset: int, length: int) -> None:
    if offset < 0 or length < 0:
        raise ValueError(f"invalid byte range: offset {offset}, length {length}")


def plan_ranges(
    ranges: Iterable[tuple[int, int]],
    *,
    max_merge_distance: int = DEFAULT_MAX_MERGE_DISTANCE,
    max_request_size: int = DEFAULT_MAX_REQUEST_SIZE,
    max_gap_ratio: float | None = None,
) -> RangePlan:
    """Plan the requests that fetch ``ranges`` with few round trips.

    Ranges are sorted by offset; a range (or a piece of one) joins the current request when
    the gap to it is at most ``max_merge_distance`` bytes and the request stays within
    ``max_request_size`` bytes. Ranges longer than ``max_request_size`` are cut into pieces.
    Overlapping and duplicate ranges are allowed; empty ranges need no request.

    Args:
        ranges: ``(offset, length)`` pairs, in any order.
        max_merge_distance: the largest gap, in bytes, read to save a request (0 merges only
            touching or overlapping ranges; a negative value never merges).
        max_request_size: the largest request, in bytes (at least 1).
        max_gap_ratio: when set, a gap is also read only when the request's gaps, this one
            included, stay within this many times its useful (asked-for) bytes, the next
            range's included: ``1.0`` never reads more gap than data.

    Returns:
        A :class:`RangePlan`.

    Raises:
        ValueError: for a negative offset or length, or ``max_request_size < 1``.
    """
    if max_request_size < 1:
        raise ValueError(f"max_request_size must be at least 1, got {max_request_size}")
    asked = tuple((int(o), int(n)) for o, n in ranges)
    # Cut every range into pieces no longer than the cap: (offset, length, range index).
    chunks: list[tuple[int, int, int]] = []
    for index, (offset, length) in enumerate(asked):
        _check_range(offset, length)
        for start in range(offset, offset + length, max_request_size):
            chunks.append((start, min(max_request_size, offset + length - start), index))
    chunks.sort()

    requests: list[list[int]] = []  # [start, end, useful bytes, gap bytes]
    placed: list[list[_Piece]] = [[] for _ in asked]
    for start, length, index in chunks:
        end = start + length
        if requests:
            cur = requests[-1]
            gap = start - cur[1]
            if (gap <= max_merge_distance
                    and max(cur[1], end) - cur[0] <= max_request_size
                    and (max_gap_ratio is None
                         or cur[3] + max(gap, 0) <= max_gap_ratio * (cur[2] + length))):
                cur[1] = max(cur[1], end)
                cur[2] += length
                cur[3] += max(gap, 0)
                placed[index].append(_Piece(len(requests) - 1, start - cur[0], length))
                continue
        requests.append([start, end, length, 0])
        placed[index].append(_Piece(len(requests) - 1, 0, length))
    # Pieces of one range were produced in offset order, and the sort keeps that order.
    return RangePlan(
        ranges=asked,
        requests=tuple((s, e - s) for s, e, _, _ in requests),
        _pieces=tuple(tuple(p) for p in placed),
    )
