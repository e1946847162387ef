"""Pieces every read path shares: the buffer of fetched bytes, grouping stripes, error
context, and a stripe's streams decompressed on first use. Synchronous; no I/O."""

from __future__ import annotations

import asyncio
import bisect
import collections
import struct
import zlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NoReturn, Protocol, TypeVar

import numpy as np
from google.protobuf.message import DecodeError

from aorc.errors import AorcError, CorruptFileError, ResourceLimitError, SchemaError
from aorc.format._proto import orc_proto_pb2 as pb
from aorc.format.codec.compression import (
    DEFAULT_MAX_DECODED_BYTES,
    Budget,
    CompressionKind,
    SizeMismatch,
    decompress_into,
    decompress_stream,
    decompressed_chunks,
    recorded_size,
    split_chunks,
)
from aorc.format.encryption import stream_bytes
from aorc.format.stripe import StreamInfo
from aorc.format.tail import FileTail, StripeInfo
from aorc.format.types import OrcType, TypeKind
from aorc.threads import pool_map

__all__ = [
    "DECODE_FAILURES",
    "INLINE_BYTES",
    "PARALLEL_DECOMPRESS_BYTES",
    "FetchedBytes",
    "LazyStreams",
    "WholeFile",
    "add_context",
    "check_max_decoded_bytes",
    "decode_weights",
    "group_stripes",
    "guarded",
    "merge_ranges",
    "prefixed",
    "raise_in_context",
    "run_light",
    "stream_kind_name",
    "stripes_text",
]

T = TypeVar("T")

#: Parsing a file tail or pushing a round's bytes to a read plan runs in the event loop's
#: thread when it concerns at most this many bytes (well under a millisecond of work: a thread
#: hop would cost more, and more still while the decode pool holds the GIL), else on a worker
#: thread.
INLINE_BYTES = 128 * 1024


async def run_light(light: bool, func: Callable[..., T], *args: Any) -> T:
    """``func(*args)`` in this thread when ``light``, else through :func:`asyncio.to_thread`."""
    if light:
        return func(*args)
    return await asyncio.to_thread(func, *args)


#: Exceptions that, escaping a decoder, mean a damaged file (a last safety net: decoders are
#: meant to raise CorruptFileError themselves).
DECODE_FAILURES = (IndexError, KeyError, ValueError, OverflowError, struct.error, DecodeError,
                   zlib.error)


# =========================================================================== errors

def check_max_decoded_bytes(value: Any) -> int:
    """Check a reader's ``max_decoded_bytes`` (a positive integer).

    Raises:
        SchemaError: another value.
    """
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise SchemaError(f"max_decoded_bytes must be a positive integer, got {value!r}")
    return value


def prefixed(exc: AorcError, prefix: str) -> AorcError:
    """A new exception of the same class whose message is ``prefix: message`` (for a class
    with another constructor, ``exc`` itself with ``prefix`` as a note)."""
    try:
        new = type(exc)(f"{prefix}: {exc}")
    except TypeError:
        exc.add_note(prefix)
        return exc
    if isinstance(exc, OSError) and isinstance(new, OSError):
        new.errno = exc.errno
    return new


def add_context(exc: AorcError, path: str, stripes: str | None = None) -> AorcError:
    """``exc`` again, same class, with the file (and stripe) in front of its message.

    Parts already in the message are not repeated, and an error that already received
    context is returned unchanged. The caller raises the result ``from exc``.
    """
    if getattr(exc, "_aorc_context", False):
        return exc
    message = str(exc)
    missing = [part for part in (path, stripes) if part and part not in message]
    new = prefixed(exc, ", ".join(missing)) if missing else exc
    new._aorc_context = True  # type: ignore[attr-defined]
    return new


def raise_in_context(exc: AorcError, path: str, stripes: str | None = None) -> NoReturn:
    """Raise ``exc`` with the file (and stripe) in front of its message (see
    :func:`add_context`), from ``exc`` when that made a new error.

    Raises:
        AorcError: ``exc``, or the same class with context.
    """
    new = add_context(exc, path, stripes)
    if new is exc:
        raise exc
    raise new from exc


def guarded(path: str, stripes: str | None, func: Callable[..., T], *args: Any) -> T:
    """Run ``func``; AorcErrors gain the file and stripe as context, stray decoder
    exceptions become CorruptFileError and a MemoryError (a whole stripe of more rows than
    memory holds) ResourceLimitError, keeping the original as the cause."""
    try:
        return func(*args)
    except AorcError as exc:
        raise_in_context(exc, path, stripes)
    except DECODE_FAILURES as exc:
        where = ", ".join(p for p in (path, stripes) if p)
        new: AorcError = CorruptFileError(f"{where}: {type(exc).__name__}: {exc}")
        new._aorc_context = True  # type: ignore[attr-defined]
        raise new from exc
    except MemoryError as exc:  # an allocation refused before anything was written to it
        where = ", ".join(p for p in (path, stripes) if p)
        new = ResourceLimitError(
            f"{where}: the decoded data does not fit in memory ({exc or 'MemoryError'}); read "
            "fewer columns or stripes, or stream the rows with iter_batches(batch_size=...), "
            "which decodes a stripe in slices of that many rows")
        new._aorc_context = True  # type: ignore[attr-defined]
        raise new from exc


def stripes_text(group: Sequence[StripeInfo]) -> str:
    """``"stripe 3"`` or ``"stripes 3-5"`` for a run of stripes."""
    first, last = group[0].index, group[-1].index
    return f"stripe {first}" if first == last else f"stripes {first}-{last}"


def stream_kind_name(kind: int) -> str:
    """The ORC name of a stream kind (``"UNKNOWN(n)"`` for others)."""
    try:
        return str(pb.Stream.Kind.Name(kind))
    except ValueError:
        return f"UNKNOWN({kind})"


# =========================================================================== byte ranges

class FetchedBytes:
    """Byte ranges of a file fetched so far; slices are looked up by absolute offset."""

    def __init__(self, pieces: Sequence[tuple[int, bytes | memoryview]] = ()) -> None:
        self._starts: list[int] = []
        self._views: list[memoryview] = []
        self.add(pieces)

    def add(self, pieces: Sequence[tuple[int, bytes | memoryview]]) -> None:
        """Add fetched ``(offset, bytes)`` pieces."""
        for offset, data in pieces:
            i = bisect.bisect_right(self._starts, offset)
            self._starts.insert(i, offset)
            self._views.insert(i, memoryview(data))

    def _find(self, offset: int, length: int) -> memoryview | None:
        i = bisect.bisect_right(self._starts, offset) - 1
        while i >= 0:
            start, view = self._starts[i], self._views[i]
            if offset + length <= start + len(view):
                return view[offset - start:offset - start + length]
            i -= 1
        return None

    def covers(self, offset: int, length: int) -> bool:
        """Whether ``[offset, offset + length)`` lies in one fetched piece."""
        return length == 0 or self._find(offset, length) is not None

    def get(self, offset: int, length: int) -> memoryview:
        """The bytes ``[offset, offset + length)``.

        Raises:
            CorruptFileError: they were not fetched (a planning error).
        """
        if length == 0:
            return memoryview(b"")
        view = self._find(offset, length)
        if view is None:
            raise CorruptFileError(f"bytes [{offset}, {offset + length}) were not fetched")
        return view

    def missing(self, ranges: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
        """The ranges not yet fetched."""
        return [(o, n) for o, n in ranges if not self.covers(o, n)]


class WholeFile(FetchedBytes):
    """The :class:`FetchedBytes` of a whole file at hand (a small file read in one go)."""

    def __init__(self, data: bytes | memoryview) -> None:  # noqa: D107 - as the class says
        self._view = memoryview(data)
        super().__init__()

    def _find(self, offset: int, length: int) -> memoryview | None:
        if offset < 0 or offset + length > len(self._view):
            return None
        return self._view[offset:offset + length]


def merge_ranges(ranges: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """Overlapping or touching ``(offset, length)`` ranges merged, sorted."""
    merged: list[list[int]] = []
    for start, length in sorted(r for r in ranges if r[1] > 0):
        end = start + length
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return [(a, b - a) for a, b in merged]


class _Stripe(Protocol):
    @property
    def index(self) -> int: ...

    @property
    def length(self) -> int: ...


S = TypeVar("S", bound=_Stripe)


def group_stripes(stripes: Sequence[S], max_bytes: int) -> list[list[S]]:
    """Runs of consecutive stripes (by index) of at most ``max_bytes`` in total (at least one
    stripe each), in the given order (of :class:`aorc.format.tail.StripeInfo` or
    :class:`aorc.read.reader.StripeMetadata`)."""
    groups: list[list[S]] = []
    size = 0
    for stripe in stripes:
        if (groups and groups[-1][-1].index + 1 == stripe.index
                and size + stripe.length <= max_bytes):
            groups[-1].append(stripe)
            size += stripe.length
        else:
            groups.append([stripe])
            size = stripe.length
    return groups


#: The decoding work of a value, in nanoseconds, by type (measured single-threaded on the
#: 2M-row events file: a string about 20, a double 10 with its nulls, a timestamp 9, a
#: random int64 5, an int32 3, a boolean 1); the stored bytes count a quarter of a
#: nanosecond each on top. Without the per-row part a short string column (100 values,
#: highly compressed) weighed a seventh of a UUID column and took as long to decode.
ROW_WORK = {TypeKind.BOOLEAN: 1, TypeKind.BYTE: 2, TypeKind.SHORT: 2, TypeKind.INT: 3,
            TypeKind.LONG: 5, TypeKind.FLOAT: 5, TypeKind.DOUBLE: 10, TypeKind.STRING: 20,
            TypeKind.VARCHAR: 20, TypeKind.CHAR: 20, TypeKind.BINARY: 20, TypeKind.GEOMETRY: 20,
            TypeKind.GEOGRAPHY: 20,
            TypeKind.TIMESTAMP: 9, TypeKind.TIMESTAMP_INSTANT: 9, TypeKind.DATE: 3,
            TypeKind.DECIMAL: 15}
#: The per-row work of a type not in :data:`ROW_WORK` (struct, list, map, union).
OTHER_ROW_WORK = 2


def decode_weights(streams: Mapping[tuple[int, int], StreamInfo],
                   tops: Sequence[OrcType], rows: int = 0) -> list[int]:
    """An estimate of the work of decoding each column of ``tops`` with its descendants, to
    start the longest first: :data:`ROW_WORK` per row (``rows``, the stripe's) of each
    column of the subtree plus a quarter per stored byte; with ``rows`` 0, the stored
    bytes alone."""
    stored: collections.Counter[int] = collections.Counter()
    for (column, _), info in streams.items():
        stored[column] += info.length
    out = []
    for t in tops:
        data = sum(stored[i] for i in range(t.column_id, t.max_column_id + 1))
        if not rows:
            out.append(data)
            continue
        per_row = sum(ROW_WORK.get(c.kind, OTHER_ROW_WORK) for c in _subtree(t))
        out.append(rows * per_row + data // 4)
    return out


def _subtree(t: OrcType) -> list[OrcType]:
    out, todo = [], [t]
    while todo:
        node = todo.pop()
        out.append(node)
        todo.extend(node.children)
    return out


# =========================================================================== streams

#: Compressed streams at least this long are decompressed in pieces on several threads.
PARALLEL_DECOMPRESS_BYTES = 2 << 20


class LazyStreams:
    """A stripe's streams (a :class:`aorc.format.columns.StripeStreams`), decompressed whole on
    first use. Different columns may be read from different threads at once.

    The decompressed bytes of all the stripe's streams together are bounded by
    ``max_decoded_bytes`` (:attr:`budget`, shared by the threads): past it,
    :class:`~aorc.errors.ResourceLimitError`, raised before a stream whose chunks record their
    sizes is allocated, or after at most one chunk per thread beyond the limit otherwise."""

    def __init__(self, footer: pb.StripeFooter, streams: Mapping[tuple[int, int], StreamInfo],
                 fetched: FetchedBytes, tail: FileTail, *, threads: int = 1,
                 max_decoded_bytes: int = DEFAULT_MAX_DECODED_BYTES) -> None:
        self.budget = Budget(max_decoded_bytes,
                             f"max_decoded_bytes={max_decoded_bytes} for one stripe")
        self._footer = footer
        self._streams = streams
        self._fetched = fetched
        self._tail = tail
        self._threads = threads
        self._plain: dict[tuple[int, int], bytes | memoryview] = {}
        tz = footer.writerTimezone if footer.HasField("writerTimezone") else None
        self.writer_timezone = tz or None

    def stream(self, column: int, kind: int) -> bytes | memoryview | None:
        """The decompressed stream, None when the stripe has none."""
        key = (column, kind)
        plain = self._plain.get(key)
        if plain is None:
            s = self._streams.get(key)
            if s is None:
                return None
            raw = self._fetched.get(s.offset, s.length)
            try:
                plain = self._decompress(memoryview(stream_bytes(s, raw)))
            except AorcError as exc:
                what = f"column {column} {stream_kind_name(kind)} stream"
                raise prefixed(exc, what) from exc
            self._plain[key] = plain
        return plain

    def _decompress(self, raw: memoryview) -> bytes | memoryview:
        kind, block_size = self._tail.compression, self._tail.block_size
        if (self._threads > 1 and len(raw) >= PARALLEL_DECOMPRESS_BYTES
                and kind != CompressionKind.NONE):
            # A long stream (a column of long strings, say) would keep one thread busy long
            # after the stripe's other columns are done: its chunks are independent, so
            # pieces of them are decompressed on the stripe's threads.
            pieces = split_chunks(raw, block_size, 2 * self._threads)
            if len(pieces) > 1:
                into = self._decompress_into(pieces)
                if into is not None:
                    return into
                parts = pool_map(
                    lambda piece: decompressed_chunks(piece, kind, block_size, self.budget),
                    pieces, self._threads)
                return b"".join(chunk for part in parts for chunk in part)  # one copy
        return decompress_stream(raw, kind, block_size, self.budget)

    def _decompress_into(self, pieces: list[memoryview]) -> memoryview | None:
        """Decompress the pieces straight into one buffer when every chunk records its size
        (zstd, the usual codec): the stream is held once, not as parts and their join.

        The recorded sizes are taken from the budget before the buffer is allocated, and the
        buffer is not zero-filled: memory that damaged chunks only claim is never touched.
        Sizes beyond the budget are not trusted: the chunks are then decompressed one by one
        (which finds damage at the first bad chunk, or the limit when the data is real)."""
        kind, block_size = self._tail.compression, self._tail.block_size
        sizes = [recorded_size(piece, kind, block_size) for piece in pieces]
        if any(size is None for size in sizes):
            return None
        total = sum(s for s in sizes if s is not None)
        if total > self.budget.left:
            return None
        self.budget.take(total)
        out = np.empty(total, np.uint8).data
        jobs, at = [], 0
        for piece, size in zip(pieces, sizes, strict=True):
            assert size is not None
            jobs.append((piece, out[at:at + size]))
            at += size
        try:
            pool_map(lambda job: decompress_into(job[0], kind, block_size, job[1]), jobs,
                     self._threads)
        except SizeMismatch:
            self.budget.take(-total)  # given back: the stream is decompressed the other way
            return None  # a chunk of several zstd frames: decompressed the other way
        return out

    def encoding(self, column: int) -> pb.ColumnEncoding:
        """The column's encoding.

        Raises:
            CorruptFileError: the stripe footer has no encoding for the column.
        """
        columns = self._footer.columns
        if not 0 <= column < len(columns):
            raise CorruptFileError(f"stripe footer has {len(columns)} column encodings, "
                                   f"none for column {column}")
        encoding: pb.ColumnEncoding = columns[column]
        return encoding
