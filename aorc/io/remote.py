"""What the object stores share: reads pinned to one version, and streaming part uploads.

:class:`RemoteStore` is the read side of the REST stores (GCS, Azure Blob, HTTP(S)). A
subclass says how to send one ranged GET (and a HEAD, where the store has no suffix
ranges); this class turns those into the :class:`~aorc.io.base.BaseStore` hooks:

* the tail is one suffix-range GET (``Range: bytes=-N``), whose ``Content-Range`` gives the
  object's size; a store without suffix ranges (Azure) asks for ``[size - N, size)`` when the
  size is known (from a listing: :meth:`RemoteStore.expect_size`), else sends a HEAD first;
* the first response's version (ETag, generation) pins every later request, which the
  subclass sends with its precondition (``If-Match``, ``ifGenerationMatch``), so a replaced
  object fails with :class:`~aorc.errors.ObjectChangedError`; every response's version is
  also compared with the pinned one, so a server that ignores the precondition cannot mix
  two versions either;
* a server that ignores ``Range`` and sends the whole object (some HTTP servers, emulators)
  is detected: the object (up to ``max_unranged_bytes``) is kept and every later read is
  served from it, with one :class:`~aorc.errors.AorcWarning` (and a log line) per object
  and :attr:`IOStats.unranged` counted, instead of downloading it again for every range.

:class:`UploadOutput` is the write side of every object store (S3, GCS, Azure): the bytes of
a file are buffered; a file of at most one part is sent by one request when completed; a
longer one is sent in parts while the writer goes on (S3 multipart uploads, GCS resumable
uploads, Azure blocks), within a memory budget, and made visible by one final request. An
exception or a cancellation aborts it (shielded, so it runs to the end) and nothing appears.
The bytes waiting for their part are held by a :class:`~aorc.io.spool.PartBuffer`: in memory
by default, or spooled to a local folder (:meth:`UploadOutput.use_part_buffer`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Self

from aorc.errors import ObjectChangedError, SchemaError, StoreError, warn
from aorc.io.base import BaseStore, IOStats, StoreOptions
from aorc.io.pool import ClientLease
from aorc.io.spool import MemoryPartBuffer, PartBuffer

__all__ = [
    "DEFAULT_MAX_UNRANGED",
    "Ranged",
    "RemoteStore",
    "UploadOutput",
    "parse_content_range",
    "pop_if_match",
    "refuse_if_match",
]

logger = logging.getLogger(__name__)

#: Most bytes accepted from a server that ignores ``Range`` (the whole object, once).
DEFAULT_MAX_UNRANGED = 256 << 20
#: Objects already warned about (a server ignoring Range), so each is warned about once.
_WARNED: set[str] = set()
_MAX_WARNED = 4096


@dataclass
class Ranged:
    """One ranged GET's answer.

    Attributes:
        data: the bytes received.
        start: the offset of ``data[0]`` in the object.
        total: the object's size, when the response says it.
        version: the object's version (ETag, generation), when the response says it.
        whole: the server sent the whole object (200) instead of the range.
    """

    data: bytes
    start: int
    total: int | None
    version: str | None
    whole: bool = False


def parse_content_range(value: str | None) -> tuple[int, int, int | None] | None:
    """``(first, last, total)`` of a ``Content-Range: bytes a-b/n`` header (``total`` is
    ``None`` for ``*``), or ``None`` when absent or malformed."""
    if not value:
        return None
    unit, _, rest = value.strip().partition(" ")
    span, _, total = rest.partition("/")
    first, _, last = span.partition("-")
    if unit.lower() != "bytes" or not first.isdigit() or not last.isdigit():
        return None
    return int(first), int(last), int(total) if total.isdigit() else None


def pop_if_match(options: dict[str, Any], what: str = "an ETag string",
                 valid: Callable[[str], bool] = bool) -> str | None:
    """Take the ``if_match`` storage option (the version every read requires) out of
    ``options``; ``None`` when absent.

    Raises:
        SchemaError: not a string ``valid`` accepts (``what`` says what is expected).
    """
    version = options.pop("if_match", None)
    if version is not None and (not isinstance(version, str) or not valid(version)):
        raise SchemaError(f"storage option if_match must be {what}, got {version!r}")
    return version


def refuse_if_match(storage_options: Mapping[str, Any] | None) -> None:
    """Writes take no ``if_match``.

    Raises:
        SchemaError: ``storage_options`` has one.
    """
    if storage_options and "if_match" in storage_options:
        raise SchemaError("storage option if_match pins reads to an object's version; "
                          "it does not apply to writes")


class RemoteStore(BaseStore):
    """An object read with ranged GETs over HTTP, pinned to the version first seen.

    Subclasses implement :meth:`_get` (and :meth:`_head` when ``suffix_ranges`` is false)
    and count their requests in :attr:`stats` themselves.

    Attributes:
        etag: the version every read is pinned to (an ETag; a GCS generation), from the
            first response or the ``if_match`` storage option.
        suffix_ranges: whether the store serves ``Range: bytes=-N``.
    """

    suffix_ranges = True
    counts_own_requests = True
    #: What the ``if_match`` storage option must be (said in the message that refuses
    #: another value), and the check of a value.
    version_form: ClassVar[tuple[str, Callable[[str], bool]]] = ("an ETag string", bool)

    def __init__(self, path: str, options: StoreOptions | None = None, *,
                 version: str | None = None, max_unranged: int = DEFAULT_MAX_UNRANGED) -> None:
        super().__init__(path, options)
        self.etag: str | None = version
        self.max_unranged = max_unranged
        self._whole: bytes | None = None
        self._expected_size: int | None = None

    @classmethod
    def from_url(cls, url: str, storage_options: Mapping[str, Any] | None = None) -> Self:
        """The store of ``url`` with ``storage_options`` (see the store's module); with
        ``if_match``, every read, the first one too, requires that version.

        Raises:
            SchemaError: a malformed URL or a bad storage option.

        Args:
            url: the object's URL.
            storage_options: the store's settings.

        Returns:
            The store.
        """
        options = dict(storage_options or {})
        version = pop_if_match(options, *cls.version_form)  # before the rest is parsed
        return cls._for_url(url, options, version)

    @classmethod
    def _for_url(cls, url: str, options: dict[str, Any], version: str | None) -> Self:
        """The store of ``url`` with ``options`` (``if_match`` taken out), pinned to
        ``version``."""
        raise NotImplementedError

    # ----------------------------------------------------------------- subclass hooks

    async def _get(self, first: int | None, last: int | None, suffix: int | None,
                   action: str) -> Ranged | None:
        """One GET of ``[first, last]`` (inclusive) or of the last ``suffix`` bytes, pinned to
        :attr:`etag` when set; ``None`` when the range is not satisfiable (an empty object,
        or a start past the end)."""
        raise NotImplementedError

    async def _head(self) -> tuple[int, str | None]:
        """The object's size and version (one request), pinned to :attr:`etag` when set."""
        raise NotImplementedError

    # ----------------------------------------------------------------- helpers

    def _answer(self, response: Any, version: str | None) -> Ranged | None:
        """The :class:`Ranged` of a ranged GET's HTTP response (status, ``header()``,
        body): ``None`` for 416 (nothing satisfiable), the whole object for 200."""
        if response.status == 416:
            return None
        if response.status == 200:
            return Ranged(response.body, 0, len(response.body), version, whole=True)
        span = parse_content_range(response.header("content-range"))
        if span is None:
            raise StoreError(f"{self.path}: a partial response without a valid "
                             f"Content-Range")
        return Ranged(response.body, span[0], span[2], version)

    def expect_size(self, size: int) -> None:
        """The object's size as a listing gave it: a store without suffix ranges then reads
        the tail with one request instead of a HEAD and a GET (checked by the response)."""
        if size >= 0:
            self._expected_size = size

    def _pin(self, version: str | None) -> None:
        if version is None:
            return
        if self.etag is None:
            self.etag = version
        elif version != self.etag:
            raise ObjectChangedError(
                f"{self.path}: the object was replaced while it was being read (version "
                f"{version} instead of {self.etag}); open it again to read the new version")

    def _keep_whole(self, got: Ranged, asked: int) -> None:
        """The server sent everything: keep it, so later ranges need no request."""
        if self._whole is None and len(got.data) > asked:
            self.stats.unranged += 1
            message = (f"{self.path}: the server ignores Range requests; the whole object "
                       f"({len(got.data)} bytes) was downloaded for {asked} and later reads "
                       f"are served from it (at most max_unranged_bytes={self.max_unranged})")
            if self.path not in _WARNED:  # once per object (a dataset opens it repeatedly)
                if len(_WARNED) >= _MAX_WARNED:
                    _WARNED.clear()
                _WARNED.add(self.path)
                logger.warning("%s", message)
                warn(message)
        self._whole = got.data
        self.size = len(got.data)

    # ----------------------------------------------------------------- BaseStore hooks

    async def _read_tail(self, n: int) -> tuple[bytes, int]:
        if self._whole is not None:
            return self._whole[len(self._whole) - min(n, len(self._whole)):], len(self._whole)
        want = max(n, 1)
        if self.suffix_ranges:
            got = await self._get(None, None, want, "read the end of the object")
        else:
            size = self._expected_size
            if size is None:
                size, version = await self._head()
                self._pin(version)
            if size == 0:
                return b"", 0
            start = max(0, size - want)
            got = await self._get(start, size - 1, None, "read the end of the object")
            if got is not None and not got.whole and got.total is not None \
                    and got.total != size:  # the listing was stale: ask for the real tail
                self._pin(got.version)
                start = max(0, got.total - want)
                got = await self._get(start, got.total - 1, None, "read the end of the object")
        if got is None:  # nothing is satisfiable: the object is empty
            return b"", 0
        self._pin(got.version)
        if got.whole:
            self._keep_whole(got, want)
            return got.data[len(got.data) - min(n, len(got.data)):], len(got.data)
        size = got.total if got.total is not None else got.start + len(got.data)
        return got.data[len(got.data) - min(n, len(got.data)):], size

    async def _fetch(self, offset: int, length: int) -> bytes:
        if self._whole is not None:
            return self._whole[offset:offset + length]
        got = await self._get(offset, offset + length - 1, None,
                              f"read bytes [{offset}, {offset + length})")
        if got is None:  # the range starts beyond the end
            return b""
        self._pin(got.version)
        if got.whole:
            self._keep_whole(got, length)
            return got.data[offset:offset + length]
        if got.start != offset:
            raise StoreError(f"{self.path}: asked for bytes from {offset}, the server sent "
                             f"bytes from {got.start}")
        return got.data[:length]


class UploadOutput:
    """The bytes of one object being written: one request when small, parts otherwise.

    Subclasses implement the requests (:meth:`_client`, :meth:`_put_whole`,
    :meth:`_create_upload`, :meth:`_upload_part`, :meth:`_complete_upload`,
    :meth:`_abort_upload`) and :meth:`part_size`; this class buffers, sends full parts in the
    background (at most ``max_concurrency`` at once; ``1`` sends them in order), waits when
    the bytes buffered plus in flight pass the memory budget, and aborts on any failure.

    Attributes:
        path: the object's URL.
        stats: requests, bytes sent, retries and parts so far.
        bytes_written: bytes accepted by :meth:`write` so far.
        upload_id: the multipart upload's id (S3), session (GCS), once one was created.
        abort_error: why the last abort failed to clean up, if it did.
    """

    #: Most parts one upload may have.
    max_parts = 10_000
    #: Parts of one size before the size doubles (``0``: it never does).
    parts_per_doubling = 0
    #: The largest part the store takes.
    max_part_size = 1 << 62

    def __init__(self, path: str, *, max_concurrency: int, memory_budget: int,
                 part_size: int) -> None:
        self.path = path
        self._part_size = part_size
        self.stats = IOStats()
        self.bytes_written = 0
        self.upload_id: str | None = None
        self.abort_error: BaseException | None = None
        self._max_concurrency = max_concurrency
        self._memory_budget = memory_budget
        self._buffer: PartBuffer = MemoryPartBuffer()
        self._sent = 0
        self._lease: ClientLease | None = None
        self._create_task: asyncio.Task[str] | None = None
        self._abort_task: asyncio.Task[None] | None = None
        self._inflight: dict[asyncio.Task[None], int] = {}
        self._next_part = 1
        self._state = "open"  # open -> completing -> completed | aborted; open -> failed

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.path!r} {self._state}>"

    @classmethod
    def from_url(cls, url: str, storage_options: Mapping[str, Any] | None = None) -> Self:
        """The output of ``url`` with ``storage_options`` (see the store's module).

        Raises:
            SchemaError: a malformed URL or a bad storage option (``if_match`` among them).

        Args:
            url: the object's URL.
            storage_options: the store's settings.

        Returns:
            The output.
        """
        refuse_if_match(storage_options)
        return cls._for_url(url, dict(storage_options or {}))

    @classmethod
    def _for_url(cls, url: str, options: dict[str, Any]) -> Self:
        """The output of ``url`` with ``options``."""
        raise NotImplementedError

    # ----------------------------------------------------------------- subclass hooks

    def part_size(self, number: int) -> int:
        """The size of part ``number`` (1-based): the ``part_size`` setting, doubled every
        :attr:`parts_per_doubling` parts (if not 0), at most :attr:`max_part_size` (the last
        part may be smaller).

        Args:
            number: the part's number, 1-based.

        Returns:
            Its size in bytes.
        """
        doublings = (number - 1) // self.parts_per_doubling if self.parts_per_doubling else 0
        return min(self.max_part_size, self._part_size << doublings)

    async def _client(self) -> ClientLease:
        """Borrow the client (or session) the requests go through."""
        raise NotImplementedError

    async def _put_whole(self, data: bytes) -> None:
        """Send the whole object with one request, making it visible."""
        raise NotImplementedError

    async def _create_upload(self) -> str:
        """Start an upload of parts; its id."""
        raise NotImplementedError

    async def _upload_part(self, upload_id: str, number: int, offset: int, data: bytes,
                           total: int | None) -> None:
        """Send part ``number`` (at byte ``offset``); ``total`` is the object's size when
        this is the last part, else ``None``."""
        raise NotImplementedError

    async def _complete_upload(self, upload_id: str, total: int) -> None:
        """Make the uploaded parts the object (after the last part was sent)."""
        raise NotImplementedError

    async def _abort_upload(self, upload_id: str) -> None:
        """Drop the upload's parts; raise when that failed (it is logged)."""
        raise NotImplementedError

    # ----------------------------------------------------------------- sizes

    @property
    def buffered_bytes(self) -> int:
        """Bytes written but not yet in a part being uploaded."""
        return self._buffer.buffered

    @property
    def buffered_memory(self) -> int:
        """Of :attr:`buffered_bytes`, those held in memory (all of them, unless a spooling
        part buffer holds them on disk)."""
        return self._buffer.memory

    def use_part_buffer(self, buffer: PartBuffer) -> None:
        """Keep the bytes waiting for their part in ``buffer`` (e.g. a
        :class:`~aorc.io.spool.DiskPartBuffer`) instead of memory; before the first write.

        Raises:
            StoreError: bytes were written already.
        """
        if self.bytes_written:
            raise StoreError(f"{self.path}: the part buffer is chosen before the first write")
        self._buffer = buffer

    @property
    def uploads(self) -> list[asyncio.Future[None]]:
        """The part uploads running (to wait for one to finish; their errors are raised by
        the next :meth:`write` or :meth:`complete`)."""
        return [t for t in self._inflight if not t.done()]

    @property
    def in_flight_bytes(self) -> int:
        """Bytes of the part uploads currently running."""
        return sum(n for t, n in self._inflight.items() if not t.done())

    @property
    def memory_budget(self) -> int:
        """Bytes buffered in memory plus in flight beyond which :meth:`write` waits."""
        return max(self._memory_budget, 2 * self.part_size(self._next_part))

    @property
    def completed(self) -> bool:
        """Whether :meth:`complete` made the object visible (even when a cancellation
        interrupted its caller after the store had answered)."""
        return self._state == "completed"

    # ----------------------------------------------------------------- public API

    async def write(self, data: bytes | bytearray | memoryview) -> None:
        """Append ``data``; full parts start uploading in the background.

        Waits while the bytes buffered plus those being uploaded exceed the memory budget,
        and while every upload slot is busy.

        Raises:
            StoreError: an upload failed (a subclass says why). Call :meth:`abort` (the
                writer does).
        """
        self._check_open("write")
        chunk = data if isinstance(data, bytes) else bytes(data)
        if not chunk:
            return
        try:
            await self._buffer.write(chunk)
            self.bytes_written += len(chunk)
            self._reap()
            while self._buffer.buffered > self.part_size(self._next_part):
                await self._send_part(await self._take(self.part_size(self._next_part)), None)
            while self._inflight and (self._buffer.memory + self.in_flight_bytes
                                      > self.memory_budget):
                await self._wait_one()
        except BaseException:
            self._state = "failed"  # a part may be lost: only abort() is possible now
            raise

    async def complete(self) -> None:
        """Upload what is left and make the object visible.

        On failure the upload is aborted (no object, no parts) and the error raised.

        Raises:
            StoreError: an upload or the completion failed.
        """
        self._check_open("complete")
        self._state = "completing"
        try:
            await self._ensure_client()
            if self._create_task is None:
                final = self._put_whole(await self._take(self._buffer.buffered))
            else:
                if self._buffer.buffered:
                    await self._send_part(await self._take(self._buffer.buffered),
                                          self.bytes_written)
                while self._inflight:
                    await self._wait_one()
                final = self._complete_upload(await self._ensure_upload(), self.bytes_written)
            await self._finish(asyncio.ensure_future(final))
        except BaseException:
            await self.abort()
            raise
        self._state = "completed"
        self._buffer.clear()
        self._release()

    async def _finish(self, final: asyncio.Future[None]) -> None:
        """Await the request that makes the object visible. A cancellation cannot recall a
        request the store may already have carried out: it waits for the answer, so that
        :attr:`completed` says whether the object exists, then propagates."""
        try:
            await asyncio.shield(final)
        except asyncio.CancelledError:
            if not final.done():
                await _settle(final)
            if not final.cancelled() and final.exception() is None:
                self._state = "completed"
                self._release()
            raise

    async def abort(self) -> None:
        """Drop the object being written: cancel the part uploads and abort the upload, so
        nothing appears and no parts are left.

        The clean-up runs to the end even when the caller is cancelled. It never raises;
        a failed clean-up is logged and kept in :attr:`abort_error`. Safe to repeat.
        """
        self._buffer.clear()  # (its spooled segments too)
        if self._state == "completed":
            return
        self._state = "aborted"
        if self._abort_task is None:
            if self._lease is None:
                return
            self._abort_task = self._lease.detach(self._abort_sequence())
        await asyncio.shield(self._abort_task)

    # ----------------------------------------------------------------- internals

    def _check_open(self, action: str) -> None:
        if self._state == "aborted":
            raise StoreError(f"cannot {action} {self.path}: the write was aborted")
        if self._state == "failed":
            raise StoreError(f"cannot {action} {self.path}: an earlier write failed or was "
                             f"cancelled; abort() is all that is left")
        if self._state != "open":
            raise StoreError(f"cannot {action} {self.path}: the object is already "
                             f"{'being completed' if self._state == 'completing' else 'complete'}")

    async def _ensure_client(self) -> ClientLease:
        if self._lease is None:
            self._lease = await self._client()
        return self._lease

    def _release(self) -> None:
        if self._lease is not None:
            self._lease.release()
            self._lease = None

    async def _take(self, size: int) -> bytes:
        """The first ``size`` buffered bytes, removed from the buffer."""
        return await self._buffer.take(size)

    def _reap(self) -> None:
        """Forget finished uploads; raise the first failure among them."""
        for task in [t for t in self._inflight if t.done()]:
            del self._inflight[task]
            task.result()

    async def _wait_one(self) -> None:
        """Wait until an upload finishes; raise if one failed."""
        await asyncio.wait(list(self._inflight), return_when=asyncio.FIRST_COMPLETED)
        self._reap()

    async def _send_part(self, data: bytes, total: int | None) -> None:
        """Start uploading the next part once an upload slot is free."""
        number = self._next_part
        if number > self.max_parts:
            raise StoreError(f"{self.path}: the object needs more than {self.max_parts} parts")
        while len(self._inflight) >= self._max_concurrency:
            await self._wait_one()
        upload_id = await self._ensure_upload()
        self._next_part += 1
        offset, self._sent = self._sent, self._sent + len(data)
        task = asyncio.ensure_future(self._counted_part(upload_id, number, offset, data, total))
        self._inflight[task] = len(data)

    async def _counted_part(self, upload_id: str, number: int, offset: int, data: bytes,
                            total: int | None) -> None:
        await self._upload_part(upload_id, number, offset, data, total)
        self.stats.parts += 1

    async def _ensure_upload(self) -> str:
        """The upload's id, creating the upload on first use. The creation runs detached: a
        cancelled caller cannot lose the id (abort waits for it)."""
        if self.upload_id is None:
            lease = await self._ensure_client()
            if self._create_task is None:
                self._create_task = lease.detach(self._create_upload())
            self.upload_id = await asyncio.shield(self._create_task)
        return self.upload_id

    async def _abort_sequence(self) -> None:
        """Cancel the part uploads, then abort the upload if one was created."""
        tasks = list(self._inflight)
        self._inflight.clear()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        upload_id = self.upload_id
        if upload_id is None and self._create_task is not None:
            try:
                upload_id = await self._create_task
            except Exception:  # noqa: BLE001 - no upload was created: nothing to abort
                upload_id = None
        try:
            if upload_id is not None:
                await self._abort_upload(upload_id)
        except Exception as exc:  # noqa: BLE001 - reported, never raised over the cause
            self.abort_error = exc
            logger.warning("%s: aborting the upload failed: %s; its parts may remain until "
                           "the store's lifecycle rules remove them", self.path, exc)
        finally:
            self._release()


async def _settle(future: asyncio.Future[None]) -> None:
    """Wait until ``future`` is done, however often the caller is cancelled meanwhile (the
    cancellations are delivered afterwards by the caller's ``raise``)."""
    while not future.done():
        try:
            await asyncio.wait([future])
        except asyncio.CancelledError:
            continue
