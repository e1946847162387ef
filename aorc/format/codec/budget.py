"""The bytes decompression may produce: :class:`Budget`, shared by threads.

A reader gives each stripe a budget of ``max_decoded_bytes`` (:data:`DEFAULT_MAX_DECODED_BYTES`,
1 GiB): every stream decompressed for the stripe, on any thread, is counted against it, and
so are the sizes zstd chunks declare before a buffer of that size is allocated. The file's
metadata sections get a budget from the file's length (``aorc.format.tail.section_limit``),
whose breach is a damaged file. See ``docs/resources.md``.
"""

from __future__ import annotations

import threading

from aorc.errors import CorruptFileError, ResourceLimitError

__all__ = ["DEFAULT_MAX_DECODED_BYTES", "Budget"]

DEFAULT_MAX_DECODED_BYTES = 1 << 30
"""Default of the readers' ``max_decoded_bytes``: the most bytes the streams of one stripe may
decompress to (1 GiB)."""


class Budget:
    """The bytes decompression may still produce, shared by the threads that decompress the
    streams of one stripe (or one metadata section).

    Args:
        limit: the most bytes in all.
        what: what is limited, for the message (``"max_decoded_bytes=1073741824"``).
        corrupt: raise :class:`CorruptFileError` (a size the file cannot legitimately
            encode) instead of :class:`ResourceLimitError` (an explicit limit).
    """

    def __init__(self, limit: int, what: str, *, corrupt: bool = False) -> None:
        self.limit = limit
        self.left = limit
        self.what = what
        self.corrupt = corrupt
        self._lock = threading.Lock()

    def take(self, n: int) -> None:
        """Count ``n`` more bytes (before allocating them, when their number is known).

        Raises:
            ResourceLimitError: the bytes taken exceed the limit (CorruptFileError when
                ``corrupt``).
        """
        with self._lock:
            self.left -= n
            over = self.left < 0
        if over:
            self._refuse()

    def check(self, n: int) -> None:
        """Refuse a transient allocation of ``n`` bytes that would not fit in what is left
        (without counting it).

        Raises:
            ResourceLimitError: it would not fit (CorruptFileError when ``corrupt``).
        """
        if n > self.left:
            self._refuse()

    def _refuse(self) -> None:
        message = f"decoding needs more than {self.limit} bytes ({self.what})"
        raise CorruptFileError(message) if self.corrupt else ResourceLimitError(message)
