"""Stripe footers kept by a reader across its reads, within a byte budget.

A read plan (:mod:`aorc.read.plan`) must parse a stripe's footer before it can locate the
stripe's streams; without this cache every read of a reader fetched the footers again (and a
filtered read the stripes' whole index regions with them, as the index streams it needs are
only known once the footer is parsed). A :class:`FooterCache` belongs to one
:class:`~aorc.read.reader.OrcReader`, hence to one file version: the reader's store pins
every request to the ETag it saw at open (S3), so any byte that disagrees with a cached
footer fails with :class:`~aorc.errors.ObjectChangedError` before it is decoded, and
:meth:`FooterCache.pin` empties the cache if the store's ETag is ever another one.

It keeps the footers as stored (compressed protobuf bytes), not their parsed layouts: the
bytes' size is exact (``sys.getsizeof``) where a parsed footer's is not (protobuf's own
memory is invisible to Python), and small: a parsed layout (the ``pb.StripeFooter`` and a
:class:`~aorc.format.stripe.StreamInfo` per stream) takes 20-60 times the stored bytes
(Python's part alone: 1.6 KB for the 84-byte footer of 4 zstd columns, 67 KB for 1.1 KB of
200 columns), so a budget keeps that many times more stripes. Parsing again costs 17 us
(4 columns) to 0.7 ms (200 columns) per stripe, against the 20 ms or more of the round trip
it saves. Only footers that parsed are put here (a damaged one is fetched again and fails
again, naming its stripe, at every read). The least recently used are dropped first.
Thread-safe: plans push on worker threads.
"""

from __future__ import annotations

import sys
import threading
from collections import OrderedDict

__all__ = ["ENTRY_OVERHEAD", "FOOTER_CACHE_BYTES", "FooterCache"]

#: The bytes of stripe footers a reader keeps (counted as :meth:`FooterCache.cost` says):
#: 1 MiB holds the footers of thousands of stripes of a few columns, or of about a hundred
#: stripes of 200 columns; a footer larger than the budget is not kept.
FOOTER_CACHE_BYTES = 1024 * 1024
#: What a footer costs besides its ``bytes`` object: the dictionary's slot and link and
#: the key (measured with tracemalloc in tests/read/test_footers.py).
ENTRY_OVERHEAD = 160


class FooterCache:
    """Raw stripe footers by stripe index, least recently used dropped beyond ``budget``.

    Args:
        budget: the most bytes kept (see :meth:`cost`); 0 keeps nothing.
    """

    def __init__(self, budget: int = FOOTER_CACHE_BYTES) -> None:
        self.budget = budget
        self._raw: OrderedDict[int, bytes] = OrderedDict()
        self._nbytes = 0
        self._version: str | None = None
        self._lock = threading.Lock()

    @staticmethod
    def cost(raw: bytes) -> int:
        """What keeping ``raw`` costs: the ``bytes`` object and :data:`ENTRY_OVERHEAD`."""
        return sys.getsizeof(raw) + ENTRY_OVERHEAD

    @property
    def nbytes(self) -> int:
        """The bytes kept, as :meth:`cost` counts them (at most ``budget``)."""
        return self._nbytes

    def __len__(self) -> int:
        return len(self._raw)

    def __contains__(self, index: object) -> bool:
        return index in self._raw

    def size(self, index: int) -> int:
        """The stored length of stripe ``index``'s footer; 0 when it is not kept."""
        raw = self._raw.get(index)
        return 0 if raw is None else len(raw)

    def get(self, index: int) -> bytes | None:
        """Stripe ``index``'s footer (now the most recently used), or ``None``."""
        with self._lock:
            raw = self._raw.get(index)
            if raw is not None:
                self._raw.move_to_end(index)
            return raw

    def put(self, index: int, raw: bytes | memoryview) -> None:
        """Keep stripe ``index``'s footer, which parsed (copied: ``raw`` may be a view of a
        larger buffer), dropping the least recently used beyond the budget."""
        kept = bytes(raw)
        cost = self.cost(kept)
        with self._lock:
            self._drop(index)
            if cost > self.budget:
                return
            self._raw[index] = kept
            self._nbytes += cost
            while self._nbytes > self.budget:
                self._drop(next(iter(self._raw)))

    def discard(self, index: int) -> None:
        """Forget stripe ``index``'s footer."""
        with self._lock:
            self._drop(index)

    def pin(self, version: str | None) -> None:
        """The footers are those of the file version ``version`` (the store's ETag, or
        ``None``): all are dropped when it is not the version they were read from."""
        with self._lock:
            if version != self._version:
                self._raw.clear()
                self._nbytes = 0
                self._version = version

    def _drop(self, index: int) -> None:
        raw = self._raw.pop(index, None)
        if raw is not None:
            self._nbytes -= self.cost(raw)
