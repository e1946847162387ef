"""The store protocol that the drivers read through, and the logic all stores share.

A store is one open object (a local file, an S3 object, a buffer). It answers three kinds of
reads: the tail of the object (one request that also reveals the object's size, so a reader
can start without a separate size lookup), one byte range, and a batch of byte ranges, which
it coalesces (see :mod:`aorc.io.coalesce`) and fetches with bounded concurrency.

Concrete stores subclass :class:`BaseStore` and implement ``_open``, ``_read_tail``,
``_fetch`` and ``_close``; the base class counts requests in :class:`IOStats`, checks
arguments, turns short reads into errors and runs batches of requests.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Protocol, TypeVar, runtime_checkable

from aorc.errors import CorruptFileError, SchemaError, StoreError
from aorc.io.coalesce import DEFAULT_MAX_MERGE_DISTANCE, DEFAULT_MAX_REQUEST_SIZE, plan_ranges

__all__ = [
    "DEFAULT_MAX_BURST",
    "DEFAULT_MAX_CONCURRENCY",
    "BaseStore",
    "IOStats",
    "Store",
    "StoreOptions",
]

T = TypeVar("T")
A = TypeVar("A")

#: Requests in flight at once per store (object_store's default).
DEFAULT_MAX_CONCURRENCY = 10
#: Requests in flight at once for the small rounds of a store (see :class:`StoreOptions`);
#: the connections of one S3 client's pool.
DEFAULT_MAX_BURST = 32


@dataclass
class IOStats:
    """Counters of the I/O a store performed.

    Attributes:
        requests: requests issued to the underlying file or object (for an S3 upload:
            every API call, parts included).
        bytes: bytes received (reads, including the gaps read to merge nearby ranges) or
            sent (writes).
        retries: requests repeated after a transient failure.
        parts: multipart upload parts sent (writes to object stores).
        unranged: objects a server sent whole although a range was asked for (it ignores
            ``Range``; each is downloaded once and warned about with an
            :class:`~aorc.errors.AorcWarning`).
    """

    requests: int = 0
    bytes: int = 0
    retries: int = 0
    parts: int = 0
    unranged: int = 0

    def snapshot(self) -> IOStats:
        """A copy of the current counts.

        Returns:
            A new :class:`IOStats`.
        """
        return dataclasses.replace(self)

    def __sub__(self, other: IOStats) -> IOStats:
        return IOStats(self.requests - other.requests, self.bytes - other.bytes,
                       self.retries - other.retries, self.parts - other.parts,
                       self.unranged - other.unranged)


@dataclass(frozen=True)
class StoreOptions:
    """Tuning shared by all stores; built from ``storage_options``.

    Attributes:
        max_merge_distance: ranges closer than this many bytes are fetched by one request.
        max_request_size: no single request is longer than this many bytes.
        max_concurrency: at most this many requests are in flight at once.
        max_gap_ratio: two ranges are fetched by one request only when the gap between
            them is at most this many times the bytes asked for in that request (default
            1.0: never fetch more gap than data).
        max_burst: a batch of ranges (:meth:`BaseStore.read_ranges`) whose requests fetch
            at most ``max_request_size`` bytes in all -- ranges too far apart to merge, such
            as a point lookup's row group in every column -- takes one of the
            ``max_concurrency`` slots, as the one request it could have been, and sends its
            requests at once, at most this many in flight for all such batches of the store
            (default 32), so that it costs one round trip.
    """

    max_merge_distance: int = DEFAULT_MAX_MERGE_DISTANCE
    max_request_size: int = DEFAULT_MAX_REQUEST_SIZE
    max_concurrency: int = DEFAULT_MAX_CONCURRENCY
    max_gap_ratio: float = 1.0
    max_burst: int = DEFAULT_MAX_BURST

    def __post_init__(self) -> None:
        if (isinstance(self.max_gap_ratio, bool)
                or not isinstance(self.max_gap_ratio, (int, float))
                or not self.max_gap_ratio >= 0):
            raise SchemaError("storage option max_gap_ratio must be a number >= 0, "
                              f"got {self.max_gap_ratio!r}")
        for name in ("max_request_size", "max_concurrency", "max_burst"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise SchemaError(f"storage option {name} must be a positive integer, "
                                  f"got {value!r}")
        if not isinstance(self.max_merge_distance, int):
            raise SchemaError("storage option max_merge_distance must be an integer, "
                              f"got {self.max_merge_distance!r}")

    @classmethod
    def pop_from(cls, options: dict[str, Any], **defaults: Any) -> StoreOptions:
        """Take this class's keys out of ``options`` (a mutable copy) and build the options;
        ``defaults`` replace the class's defaults for the keys ``options`` does not give.

        Args:
            options: the storage options, a mutable copy (its keys of this class are removed).
            **defaults: defaults replacing the class's own.

        Returns:
            The options.
        """
        names = [f.name for f in dataclasses.fields(cls)]
        return cls(**{**defaults, **{name: options.pop(name) for name in names
                                     if name in options}})


def check_no_options_left(options: Mapping[str, Any], store: str) -> None:
    """Raise SchemaError naming the storage options a store did not understand."""
    if options:
        unknown = ", ".join(sorted(map(str, options)))
        raise SchemaError(f"unknown storage option(s) for {store}: {unknown}")


async def map_bounded(items: Sequence[A], work: Callable[[A], Awaitable[T]], limit: int
                      ) -> list[T]:
    """``[await work(x) for x in items]``, at most ``limit`` at once: ``limit`` tasks take
    the items in turn, so that 100,000 items make ``limit`` tasks, not 100,000 (each a
    coroutine and a task held until the last is done). The first failure cancels the
    others, as :func:`gather_or_cancel`."""
    results: list[T | None] = [None] * len(items)
    pending = iter(range(len(items)))

    async def worker() -> None:
        for i in pending:
            results[i] = await work(items[i])

    await gather_or_cancel([worker() for _ in range(min(max(1, limit), len(items)))])
    return results  # type: ignore[return-value]  # every slot was filled


async def gather_or_cancel(coros: Sequence[Coroutine[Any, Any, T]]) -> list[T]:
    """Run coroutines concurrently and return their results in order.

    Unlike :func:`asyncio.gather`, the first failure cancels the others (and waits for them)
    before it is raised, so no request outlives the call and no exception goes unretrieved.
    No coroutines give an empty list.
    """
    if not coros:
        return []
    tasks = [asyncio.ensure_future(c) for c in coros]
    try:
        done, pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
    except BaseException:  # cancelled from outside
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
    if pending:
        for t in pending:
            t.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
    errors = [e for t in tasks if t.done() and not t.cancelled()
              and (e := t.exception()) is not None]
    if errors:  # the first failure in request order; the others are retrieved and dropped
        raise errors[0]
    return [t.result() for t in tasks]


@runtime_checkable
class Store(Protocol):
    """One open object that aorc reads from.

    Attributes:
        path: a printable name of the object, used in error messages.
        stats: counters of the I/O performed so far.
    """

    path: str
    stats: IOStats

    async def read_tail(self, n: int) -> tuple[bytes, int]:
        """Return the last ``n`` bytes (all of them if the object is shorter) and the
        object's size, with one request.

        Args:
            n: how many bytes from the end.

        Returns:
            ``(bytes, size of the object)``.
        """
        ...

    async def read_range(self, offset: int, length: int) -> bytes:
        """Return ``length`` bytes starting at ``offset``.

        Args:
            offset: the first byte.
            length: how many bytes.

        Returns:
            The bytes.
        """
        ...

    async def read_ranges(self, ranges: Sequence[tuple[int, int]]) -> list[bytes]:
        """Return the bytes of each ``(offset, length)`` range, in order; nearby ranges are
        fetched together and requests run concurrently.

        Args:
            ranges: ``(offset, length)`` pairs.

        Returns:
            The bytes of each range, in the order given.
        """
        ...

    async def close(self) -> None:
        """Release the object; further reads fail."""
        ...


class BaseStore:
    """Shared behaviour of the concrete stores: counting, checking, coalescing, concurrency.

    Subclasses implement :meth:`_open`, :meth:`_read_tail`, :meth:`_fetch` and
    :meth:`_close`. The object is opened lazily by the first read (or ``async with``).
    A store whose hooks count their own requests and bytes in :attr:`stats` (one hook call
    may send several requests, or none) sets ``counts_own_requests``.
    """

    counts_own_requests = False

    def __init__(self, path: str, options: StoreOptions | None = None) -> None:
        self.path = path
        self.options = options or StoreOptions()
        self.stats = IOStats()
        self.size: int | None = None
        self._semaphore = asyncio.Semaphore(self.options.max_concurrency)
        self._burst = asyncio.Semaphore(self.options.max_burst)
        self._open_lock = asyncio.Lock()
        self._opened = False
        self._closed = False

    # ----------------------------------------------------------------- subclass hooks

    async def _open(self) -> None:
        """Open the underlying object; raise StoreError subclasses on failure."""

    async def _read_tail(self, n: int) -> tuple[bytes, int]:
        """One request returning the last ``min(n, size)`` bytes and the size."""
        raise NotImplementedError

    async def _fetch(self, offset: int, length: int) -> bytes:
        """One request for ``[offset, offset + length)``; may return fewer bytes at the end."""
        raise NotImplementedError

    async def _close(self) -> None:
        """Release the underlying object."""

    # ----------------------------------------------------------------- public API

    async def __aenter__(self) -> BaseStore:
        await self._ensure_open()
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc: BaseException | None, tb: TracebackType | None) -> None:
        await self.close()

    async def _ensure_open(self) -> None:
        if self._closed:
            raise StoreError(f"{self.path}: the store is closed")
        if self._opened:
            return
        async with self._open_lock:
            if not self._opened:
                await self._open()
                self._opened = True

    async def read_tail(self, n: int) -> tuple[bytes, int]:
        """Return the last ``n`` bytes of the object (all if shorter) and its size.

        This is a single request. Raises StoreError subclasses on store failures.

        Args:
            n: how many bytes from the end.

        Returns:
            ``(bytes, size of the object)``.

        Raises:
            ValueError: ``n`` is negative.
            StoreError: the store failed (its subclasses: not found, access denied, ...).
        """
        if n < 0:
            raise ValueError(f"tail length must not be negative, got {n}")
        await self._ensure_open()
        async with self._semaphore:
            data, size = await self._read_tail(n)
        self.size = size
        if not self.counts_own_requests:
            self.stats.requests += 1
            self.stats.bytes += len(data)
        return data, size

    async def read_range(self, offset: int, length: int) -> bytes:
        """Return exactly ``length`` bytes at ``offset``, as one request.

        Raises:
            CorruptFileError: when the object ends before the range does (a truncated file
                or metadata pointing past its end).

        Args:
            offset: the first byte.
            length: how many bytes.

        Returns:
            The bytes.
        """
        return await self._request(offset, length, self._semaphore)

    async def _request(self, offset: int, length: int, slots: asyncio.Semaphore) -> bytes:
        """One request, sent once one of ``slots`` is free."""
        if offset < 0 or length < 0:
            raise ValueError(f"invalid byte range: offset {offset}, length {length}")
        if length == 0:
            return b""
        await self._ensure_open()
        async with slots:
            data = await self._fetch(offset, length)
        if not self.counts_own_requests:
            self.stats.requests += 1
            self.stats.bytes += len(data)
        if len(data) != length:
            raise CorruptFileError(
                f"{self.path}: reading bytes [{offset}, {offset + length}) returned only "
                f"{len(data)} bytes; the file is shorter than its metadata says"
                + (f" ({self.size} bytes)" if self.size is not None else ""))
        return data

    async def read_ranges(self, ranges: Sequence[tuple[int, int]]) -> list[bytes]:
        """Return the bytes of each ``(offset, length)`` range, in the order given.

        Ranges closer than ``max_merge_distance`` are fetched by one request, unless the
        gap is larger than ``max_gap_ratio`` times the bytes asked for in it (see
        :func:`aorc.io.coalesce.plan_ranges`); at most ``max_concurrency`` requests are in
        flight, except that requests fetching at most ``max_request_size`` bytes in all go
        out at once as a burst (see ``max_burst`` in :class:`StoreOptions`). If one request
        fails the others are cancelled and the error is raised.

        Args:
            ranges: ``(offset, length)`` pairs.

        Returns:
            The bytes of each range, in the order given.
        """
        plan = plan_ranges(ranges, max_merge_distance=self.options.max_merge_distance,
                           max_request_size=self.options.max_request_size,
                           max_gap_ratio=self.options.max_gap_ratio)
        if not plan.requests:
            return [b"" for _ in plan.ranges]
        if len(plan.requests) == 1:
            responses = [await self.read_range(*plan.requests[0])]
        elif plan.requested_bytes <= self.options.max_request_size:
            await self._ensure_open()
            async with self._semaphore:  # the slot of the one request it could have been
                responses = await gather_or_cancel(
                    [self._request(o, n, self._burst) for o, n in plan.requests])
        else:
            responses = await gather_or_cancel(
                [self.read_range(o, n) for o, n in plan.requests])
        return plan.split(responses)

    async def close(self) -> None:
        """Release the object. Closing twice is harmless."""
        if self._closed:
            return
        self._closed = True
        if self._opened:
            await self._close()

    @property
    def closed(self) -> bool:
        """True once :meth:`close` was called."""
        return self._closed

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.path!r}>"
