"""Stores that record each request with its causal round trip (for tests of how many
sequential rounds a read takes): a request belongs to the round after the latest one that
had completed when it was issued, so rounds are counted by causality, not by the clock."""

from __future__ import annotations

import asyncio

from aorc.io import S3Store, StoreOptions
from aorc.io.memory import MemoryStore
from aorc.io.s3.config import S3Config

__all__ = ["RoundRecorder", "RoundS3Store", "RoundStore"]


class RoundRecorder:
    """Mixed into a store: records each request with its causal round (one more than the
    highest round among the requests completed before it was sent)."""

    #: Yield once before fetching, so that the requests sent with this one start first (a
    #: memory store would otherwise complete each before the next is sent).
    settle = False

    def _start_recording(self) -> None:
        self.requests: list[tuple[int, int, int]] = []  # (round, offset, length)
        self._done = 0  # the highest round among completed requests

    async def _read_tail(self, n: int) -> tuple[bytes, int]:
        self.requests.append((self._done + 1, -n, n))
        out: tuple[bytes, int] = await super()._read_tail(n)  # type: ignore[misc]
        self._done = max(self._done, 1)
        return out

    async def _fetch(self, offset: int, length: int) -> bytes:
        number = self._done + 1
        self.requests.append((number, offset, length))
        if self.settle:
            await asyncio.sleep(0)
        out: bytes = await super()._fetch(offset, length)  # type: ignore[misc]
        self._done = max(self._done, number)
        return out

    @property
    def rounds(self) -> int:
        return max(r for r, _, _ in self.requests)


class RoundStore(RoundRecorder, MemoryStore):
    """A memory store that records each request with its causal round."""

    settle = True

    def __init__(self, data: bytes, options: StoreOptions | None = None) -> None:
        super().__init__(data, path="<rounds>", options=options)
        self._start_recording()


class RoundS3Store(RoundRecorder, S3Store):
    """An S3 store that records each request with its causal round."""

    def __init__(self, bucket: str, key: str, config: S3Config) -> None:
        super().__init__(bucket, key, config)
        self._start_recording()
