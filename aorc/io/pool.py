"""Network clients shared by the files of an event loop: one per distinct connection settings.

Creating a client is costly (botocore loads its service model; an HTTP session opens a
connection pool and may fetch a token), so every store keeps its clients here, created once
per event loop and per *key* (a digest of the settings that shape the client) and lent to
each file opened with those settings. A client and its connections belong to the loop that
created it.

The clients of a loop are closed when the loop shuts down through ``asyncio.run`` (or an
``asyncio.Runner``): the pool registers an async generator with the loop, and the loop
closes its async generators (``loop.shutdown_asyncgens()``) before it closes itself. A loop
driven otherwise should call :func:`close_clients` before it stops, or aiohttp warns about
unclosed sessions. Clean-up requests that must outlive a cancelled caller (aborting an
upload) run as *detached* tasks, which the shutdown waits for before closing the clients.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import AsyncGenerator, Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "MAX_IDLE_CLIENTS",
    "ClientFactory",
    "ClientLease",
    "acquire",
    "close_clients",
    "detach",
]

#: Idle clients kept per loop beyond which the least recently used idle ones are closed.
MAX_IDLE_CLIENTS = 8

#: Creates a client: returns it and the coroutine function that closes it.
ClientFactory = Callable[[], Awaitable[tuple[Any, Callable[[], Awaitable[Any]]]]]


@dataclass
class _Entry:
    client: Any
    closer: Callable[[], Awaitable[Any]]
    users: int = 0


@dataclass
class _LoopPool:
    """The clients (and detached tasks) of one event loop."""

    entries: dict[str, _Entry] = field(default_factory=dict)
    creating: dict[str, asyncio.Future[_Entry]] = field(default_factory=dict)
    detached: set[asyncio.Task[Any]] = field(default_factory=set)
    closer: AsyncGenerator[None, None] | None = None
    closed: bool = False

    async def acquire(self, key: str, factory: ClientFactory) -> Any:
        while True:
            entry = self.entries.get(key)
            if entry is not None:
                entry.users += 1
                self.entries[key] = self.entries.pop(key)  # most recently used last
                return entry.client
            pending = self.creating.get(key)
            if pending is None:
                break
            try:  # another file is creating the same client: share its outcome
                await asyncio.shield(pending)
            except asyncio.CancelledError:
                if not pending.cancelled():
                    raise  # this caller was cancelled
                # the creator was cancelled: create it here instead
        future: asyncio.Future[_Entry] = asyncio.get_running_loop().create_future()
        self.creating[key] = future
        try:
            client, closer = await factory()
        except BaseException as exc:
            if isinstance(exc, asyncio.CancelledError):
                future.cancel()
            else:
                future.set_exception(exc)
                future.exception()  # marked retrieved: the waiters (if any) get it too
            raise
        finally:
            del self.creating[key]
        entry = _Entry(client, closer)
        if not future.done():
            future.set_result(entry)
        self.entries[key] = entry
        entry.users += 1
        self._evict()
        return client

    def release(self, key: str) -> None:
        entry = self.entries.get(key)
        if entry is not None and entry.users > 0:
            entry.users -= 1
            self._evict()

    def _evict(self) -> None:
        idle = [k for k, e in self.entries.items() if e.users == 0]
        for key in idle[:max(0, len(idle) - MAX_IDLE_CLIENTS)]:
            entry = self.entries.pop(key)
            self.detach(entry.closer())

    def detach(self, coro: Coroutine[Any, Any, Any] | Awaitable[Any]) -> asyncio.Task[Any]:
        task = asyncio.ensure_future(coro)
        self.detached.add(task)
        task.add_done_callback(self.detached.discard)
        return task

    async def aclose(self) -> None:
        if self.closed:
            return
        self.closed = True
        while self.detached:  # aborts of uploads still running go out first
            await asyncio.gather(*list(self.detached), return_exceptions=True)
        entries, self.entries = list(self.entries.values()), {}
        for entry in entries:
            try:
                await entry.closer()
            except Exception:  # noqa: BLE001, S110 - closing is best effort at shutdown
                pass


_pools: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _LoopPool] = (
    weakref.WeakKeyDictionary())


async def _close_at_shutdown(pool: _LoopPool) -> AsyncGenerator[None, None]:
    """Suspended for the life of the loop; the loop's shutdown closes it, closing the pool."""
    try:
        yield
    finally:
        loop = asyncio.get_running_loop()
        if _pools.get(loop) is pool:
            del _pools[loop]
        await pool.aclose()


async def _current_pool() -> _LoopPool:
    loop = asyncio.get_running_loop()
    pool = _pools.get(loop)
    if pool is None or pool.closed:
        pool = _LoopPool()
        _pools[loop] = pool
        pool.closer = _close_at_shutdown(pool)
        await pool.closer.__anext__()  # registers it with the loop's shutdown_asyncgens
    return pool


class ClientLease:
    """A client borrowed from the loop's pool; :meth:`release` gives it back.

    Attributes:
        client: the client.
    """

    def __init__(self, pool: _LoopPool, key: str, client: Any) -> None:
        self._pool = pool
        self._key = key
        self.client = client
        self._released = False

    def release(self) -> None:
        """Return the client to the pool (it stays open for the next file)."""
        if not self._released:
            self._released = True
            self._pool.release(self._key)

    def detach(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        """Run ``coro`` as a task that the loop's shutdown waits for before closing the
        clients (for clean-up requests that must outlive a cancelled caller)."""
        return self._pool.detach(coro)


async def acquire(key: str, factory: ClientFactory) -> ClientLease:
    """Borrow the running loop's client for ``key``, creating it with ``factory`` on first
    use. ``key`` must name the kind of client too (``"s3:<digest>"``, ``"http:<digest>"``)."""
    pool = await _current_pool()
    client = await pool.acquire(key, factory)
    return ClientLease(pool, key, client)


async def detach(coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
    """Run ``coro`` as a detached task of the running loop's pool (see the module)."""
    return (await _current_pool()).detach(coro)


async def close_clients() -> None:
    """Close the running loop's clients (S3, GCS, Azure, HTTP) and their connections.

    Not needed under ``asyncio.run`` (its shutdown does it); call it before stopping a loop
    driven in another way. Files opened later create new clients.
    """
    loop = asyncio.get_running_loop()
    pool = _pools.pop(loop, None)
    if pool is not None:
        await pool.aclose()
        if pool.closer is not None:
            await pool.closer.aclose()
