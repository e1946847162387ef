"""The independent LZO1X implementation aorc's LZO decoder is checked against: lzallright
(a Rust port of lzokay, on PyPI with wheels; in the test extra). python-lzo (liblzo2) needs
liblzo2's C headers to build, which PyPI does not carry, so it is not used.

With ``CI=true`` a missing peer fails the run (see ``tests/conftest.py``); elsewhere the tests
that need it skip.
"""

from __future__ import annotations

import importlib.util
from typing import Any

import pytest

__all__ = ["LzoPeer", "available", "lzo_peer"]

MODULE = "lzallright"


def available() -> bool:
    """Whether the peer is installed."""
    return importlib.util.find_spec(MODULE) is not None


class LzoPeer:
    """Raw LZO1X blocks (no header), as ORC stores them."""

    name = "lzallright (lzokay)"

    def __init__(self, module: Any) -> None:
        self._codec = module.LZOCompressor()

    def compress(self, data: bytes) -> bytes:
        return bytes(self._codec.compress(data))

    def decompress(self, block: bytes, size: int) -> bytes:
        return bytes(self._codec.decompress(block, output_size_hint=size))


def lzo_peer() -> LzoPeer:
    """The peer; skips the test when it is not installed."""
    return LzoPeer(pytest.importorskip(MODULE))
