"""The async write driver: the only writer code that awaits.

Write a whole table::

    await aorc.write_table(table, "data.orc", compression="zstd")

Options are an :class:`aorc.WriteOptions` (``options=``), keywords, or both (keywords
override the object's fields); see :mod:`aorc.options`.

or stream batches::

    async with aorc.open_writer("data.orc", schema) as writer:
        async for batch in source:
            await writer.write(batch)

The file becomes visible only when the ``async with`` block exits without an error; on an
exception or a cancellation nothing is left behind (see :mod:`aorc.io.output`).

How data flows: :meth:`OrcWriter.write` slices the incoming record batches into a buffer of
about one stripe. A stripe's size is estimated from the Arrow buffers' sizes times the ratio
of encoded (compressed) bytes to Arrow bytes seen in the stripes written so far (ORC Java
likewise estimates the stripe from its buffers' memory): when the estimate reaches
``stripe_size`` the buffered rows are encoded as one stripe in a worker thread
(:mod:`aorc.format.columns.encode`, :mod:`aorc.write.stripe`; with ``use_threads``, the stripe's
columns are encoded and compressed at once on the shared pool of :mod:`aorc.threads`), and
the stripe's bytes are written to the output as soon as they are ready, while ``write`` goes on
filling the next buffer. When the next buffer is full, ``write`` waits until the previous
stripe is encoded, hands the buffer to a new encoding, and waits until the previous stripe is
written (backpressure): its writing overlaps the new stripe's encoding, and at most one stripe
is buffered (or written) while one is being encoded, so memory stays bounded by about two
stripes of Arrow data plus one encoded stripe.
A stripe never holds more than :data:`MAX_ARROW_FACTOR` times ``stripe_size`` (nor
:data:`MAX_STRIPE_ARROW_BYTES`) of Arrow data, however well the data compresses.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import math
from collections.abc import Mapping
from types import TracebackType
from typing import Any, TypeAlias

import pyarrow as pa

from aorc.errors import AorcError, SchemaError
from aorc.format.arrow import conform, resolve_schema
from aorc.format.columns.encode import EncodeOptions
from aorc.format.encryption.spec import plan_encryption
from aorc.format.statistics import ColumnStatistics
from aorc.format.types import OrcType
from aorc.io import open_output
from aorc.io.base import IOStats
from aorc.io.output import Destination, Output
from aorc.keys import KeyProvider
from aorc.options import WriteOptions
from aorc.threads import encode_pool
from aorc.write.encrypted import EncryptedFileAssembler, open_encryption
from aorc.write.file import AssembledFile, FileAssembler
from aorc.write.inputs import RecordInput, record_input
from aorc.write.stripe import EncodedStripe, encode_stripe

__all__ = [
    "DEFAULT_OPTIONS",
    "IN_FLIGHT_COPIES",
    "CloseOrAbort",
    "OrcWriter",
    "WriteOptions",
    "open_writer",
    "parse_write_options",
    "write_table",
]

#: A stripe holds at most this many times ``stripe_size`` bytes of Arrow data.
MAX_ARROW_FACTOR = 4
#: ... and never more than this many bytes of Arrow data (Arrow's 32-bit string offsets).
MAX_STRIPE_ARROW_BYTES = 1 << 30
#: Encoded bytes per Arrow byte assumed before the first stripe is written.
INITIAL_RATIO = 1.0
#: Copies of an object-store part being uploaded: the part, and the HTTP client's copy.
IN_FLIGHT_COPIES = 2
#: The options and their defaults (as pyarrow.orc names them), from :class:`WriteOptions`.
DEFAULT_OPTIONS: dict[str, Any] = {
    name: getattr(WriteOptions(), name) for name in WriteOptions.names()}

#: What :meth:`OrcWriter.write` and :func:`write_table` take: also pandas DataFrames, Arrow
#: PyCapsule streams and arrays (Polars, DuckDB), iterables and async iterables of batches
#: (see :mod:`aorc.write.inputs`).
Data: TypeAlias = "pa.Table | pa.RecordBatch | pa.RecordBatchReader"


def parse_write_options(root: OrcType, options: Mapping[str, Any], *,
                        caller: str = "open_writer") -> tuple[EncodeOptions, dict[str, bytes]]:
    """Check keyword options (kept for callers of earlier versions; see
    :meth:`WriteOptions.create` and :meth:`WriteOptions.resolve`).

    Returns:
        The encoder options and the user metadata.

    Raises:
        SchemaError: an unknown option or a bad value.
    """
    opts = WriteOptions.create(None, options, caller=caller)
    return opts.resolve(root), dict(opts.metadata)


# =========================================================================== the writer

class CloseOrAbort:
    """An async context manager that closes (completes what it writes) when its block exits
    cleanly and aborts when the block raises."""

    async def close(self) -> None:
        """Complete the output."""
        raise NotImplementedError

    async def abort(self) -> None:
        """Give the output up."""
        raise NotImplementedError

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc: BaseException | None, tb: TracebackType | None) -> None:
        if exc_type is None:
            await self.close()
        else:
            await self.abort()


class OrcWriter(AssembledFile, CloseOrAbort):
    """Writes one ORC file from Arrow record batches; get one from :func:`open_writer`.

    Use it as an async context manager: the file is completed when the block exits without
    an error and abandoned (nothing visible) otherwise. Without ``async with``, call
    :meth:`close` to complete the file or :meth:`abort` to abandon it.

    Attributes:
        schema: the Arrow schema the data must have.
        orc_type: the file's ORC type tree.
        options: the write options (keywords applied).
        encode_options: the options resolved against the schema, as the encoders read them.
        user_metadata: the footer's user metadata.
        num_rows: rows accepted so far.
        peak_memory: the most bytes held at once so far: Arrow bytes buffered or being
            encoded plus encoded bytes waiting to be written.
    """

    def __init__(self, dest: Destination, schema: pa.Schema | str | OrcType,
                 options: WriteOptions | None = None, *,
                 storage_options: Mapping[str, Any] | None = None,
                 _caller: str = "open_writer", keys: KeyProvider | None = None,
                 **keywords: Any) -> None:
        self.schema, self.orc_type = resolve_schema(schema)
        self.options = WriteOptions.create(options, keywords, caller=_caller)
        self.encode_options = self.options.resolve(self.orc_type)
        self._encryption = plan_encryption(self.orc_type, self.options.encrypt,
                                           self.options.masks)
        self._keys = keys
        if self._encryption is None and self.options.masks:
            raise SchemaError("masks= applies to encrypted columns: set encrypt= too")
        if self._encryption is not None and keys is None:
            raise SchemaError("encrypt= needs keys= (a key provider such as aorc.InMemoryKeys)")
        self.user_metadata = dict(self.options.metadata)
        self._output: Output = open_output(dest, storage_options)
        self._assembler = FileAssembler(self.orc_type, self.encode_options,
                                        self.user_metadata)
        self._buffer: list[pa.RecordBatch] = []
        self._buffered_rows = 0
        self._buffered_bytes = 0
        self._job: asyncio.Task[None] | None = None  # the newest stripe: encode, then write
        self._encoding: asyncio.Future[list[bytes]] | None = None  # ... its encoding
        self._encoding_bytes = 0  # Arrow bytes of the stripe being encoded
        self._encoding_arrow = 0  # Arrow bytes of the last stripe handed to encoding
        self._writing_bytes = 0  # encoded bytes of stripes waiting to be written
        self._arrow_total = 0
        self._encoded_total = 0
        self._dictionary_decisions: dict[int, bool] = {}
        self._lock = asyncio.Lock()
        self._state = "new"  # new -> open -> closed | failed | aborted
        self.num_rows = 0
        self.peak_memory = 0
        #: The most Arrow bytes a stripe holds, besides the limits of the module docstring
        #: (set by writers that share a memory budget among many files; None: no more).
        self.stripe_arrow_limit: int | None = None
        #: Where stripes are encoded (None: :func:`aorc.threads.encode_pool`). Writers that share
        #: a memory budget share one thread: fewer threads allocating, fewer heaps holding
        #: freed memory.
        self.executor: concurrent.futures.Executor | None = None

    # ----------------------------------------------------------------- properties

    @property
    def path(self) -> str:
        """The destination's printable name."""
        return self._output.path

    @property
    def io_stats(self) -> IOStats | None:
        """Requests, bytes, retries and parts the destination store has seen (object stores);
        None for outputs that do not count them (local files, memory)."""
        stats = getattr(self._output, "stats", None)
        return stats if isinstance(stats, IOStats) else None

    @property
    def completed(self) -> bool:
        """Whether the file is visible at its destination: true after :meth:`close`, and
        also when a cancellation interrupted :meth:`close` after the store had made the file
        visible (a rename or a final request cannot be recalled)."""
        completed = getattr(self._output, "completed", None)
        return completed if isinstance(completed, bool) else self._state == "closed"

    def column_statistics(self) -> list[ColumnStatistics]:
        """The file's column statistics (by ORC column id) over the stripes written so far:
        after :meth:`close`, those of the file's footer.

        Returns:
            One :class:`aorc.ColumnStatistics` per ORC column id.
        """
        return self._assembler.column_statistics()

    @property
    def bytes_written(self) -> int:
        """Bytes of the file produced so far (header, finished stripes and, once closed,
        the tail)."""
        return self._assembler.position

    @property
    def stripe_capacity(self) -> int:
        """Arrow bytes buffered before the next stripe is cut (see the module docstring)."""
        size = self.options.stripe_size
        ratio = self._encoded_total / self._arrow_total if self._arrow_total else INITIAL_RATIO
        target = size / ratio if ratio > 0 else math.inf
        limit = self.stripe_arrow_limit or MAX_STRIPE_ARROW_BYTES
        return max(1, int(min(target, MAX_ARROW_FACTOR * size, MAX_STRIPE_ARROW_BYTES,
                              limit)))

    @property
    def buffered_bytes(self) -> int:
        """Arrow bytes of the rows buffered for the next stripe (a function of the rows
        written and the options, not of timing)."""
        return self._buffered_bytes

    @property
    def memory(self) -> int:
        """Bytes this writer holds now: rows buffered, a stripe being encoded, encoded bytes
        waiting to be written, and what the destination buffers (an object store's part
        being filled, and the parts being uploaded, counted twice: the HTTP client copies
        the body)."""
        out = self._output
        held = (int(getattr(out, "buffered_bytes", 0))
                + IN_FLIGHT_COPIES * int(getattr(out, "in_flight_bytes", 0)))
        return self._buffered_bytes + self._encoding_bytes + self._writing_bytes + held

    @property
    def stripes_pending(self) -> bool:
        """Whether a stripe handed to encoding is not yet written."""
        return self._job is not None and not self._job.done()

    async def settle(self) -> None:
        """Wait until the stripes handed to encoding are written (the buffered rows stay
        buffered).

        Raises:
            StoreError: writing a stripe failed (the writer is then broken).
        """
        async with self._lock:
            job = self._job
            if self._state != "open" or job is None:
                return
            try:
                await asyncio.shield(job)  # (kept: the next stripe counts its ratio)
            except BaseException:
                await self._fail()
                raise

    @property
    def memory_limit(self) -> int:
        """The bound :attr:`peak_memory` stays under (unless one row alone is larger): one
        stripe buffered, one being encoded, one encoded stripe being written."""
        cap = min(MAX_ARROW_FACTOR * self.options.stripe_size, MAX_STRIPE_ARROW_BYTES)
        return 3 * cap

    # ----------------------------------------------------------------- life cycle

    async def __aenter__(self) -> OrcWriter:
        async with self._lock:
            await self._start()
        return self

    def _check_usable(self, action: str) -> None:
        if self._state == "failed":
            raise AorcError(f"cannot {action} {self.path}: an earlier error or cancellation "
                            "broke this writer; the file was not written")
        if self._state in ("closed", "aborted"):
            raise AorcError(f"cannot {action} {self.path}: the writer is {self._state}")

    async def _start(self) -> None:
        self._check_usable("write")
        if self._state == "new":
            self._state = "open"
            try:
                if self._encryption is not None:
                    local = await open_encryption(self._encryption, self._keys)
                    self._assembler = EncryptedFileAssembler(
                        self.orc_type, self.encode_options, self._encryption, local,
                        self.user_metadata)
                await self._output.write(self._assembler.header())
            except BaseException:
                await self._fail()  # (__aexit__ does not run when __aenter__ fails)
                raise

    async def write(self, data: Data | Any) -> None:
        """Append rows: a pyarrow Table, RecordBatch or RecordBatchReader, a pandas
        DataFrame, an object exporting the Arrow PyCapsule interface (a Polars DataFrame, a
        DuckDB relation, ...), or an iterable or async iterable of batches or tables (see
        :mod:`aorc.write.inputs`).

        In-memory data returns when the rows are buffered; waits while the buffer is full
        and the previous stripe is still being encoded or written. A stream is read batch by
        batch while its stripes are written (its rows need not fit in memory) and returns
        once it is exhausted. Any error other than a schema mismatch found before a row was
        taken (or a cancellation) abandons the file.

        Raises:
            InputTypeError: ``data`` is of no accepted kind (the writer stays usable).
            SchemaError: the data's column names or types do not match :attr:`schema` (the
                writer stays usable, unless a batch of a stream after the first rows was
                taken: then the file is abandoned).
            AorcError: the writer is closed, or broken by an earlier error.
            StoreError: writing a finished stripe failed.

        Args:
            data: the rows to append (see above for the kinds accepted).
        """
        rows = record_input(data, self.schema)
        if rows.is_stream:
            async with rows:
                await self._write_stream(rows)
            return
        assert rows.batches is not None
        batches = [conform(b, self.schema) for b in rows.batches]
        async with self._lock:
            await self._start()
            try:
                for batch in batches:
                    await self._add(batch)
            except BaseException:
                await self._fail()
                raise

    async def _write_stream(self, rows: RecordInput) -> None:
        """Append the batches of an open stream as they come (under the lock: the rows of
        one call stay together)."""
        if rows.schema is not None:  # a mismatch is found before any row is taken
            conform(pa.RecordBatch.from_pylist([], schema=rows.schema), self.schema)
        async with self._lock:
            await self._start()
            try:
                async for batch in rows:
                    await self._add(conform(batch, self.schema))
            except BaseException:
                await self._fail()
                raise

    async def close(self) -> None:
        """Write the buffered rows and the file's tail and make the file visible.

        Calling it again does nothing. On failure the file is abandoned.

        Raises:
            AorcError: the writer was aborted or broken by an earlier error.
            StoreError: writing or completing the file failed.
        """
        if self._state == "closed":
            return
        async with self._lock:
            self._check_usable("close")
            try:
                await self._start()
                await self._flush()
                await self._wait_job()
                tail = await asyncio.get_running_loop().run_in_executor(
                    self.executor or encode_pool(), self._assembler.finish)
                await self._output.write(tail)
                await self._output.complete()
            except BaseException:
                await self._fail()
                raise
            self._state = "closed"

    async def abort(self) -> None:
        """Abandon the file: nothing is left at the destination. Safe to call repeatedly."""
        if self._state in ("closed", "aborted"):
            return
        self._state = "aborted"
        await self._discard()

    async def _fail(self) -> None:
        """An error or a cancellation broke the writer: abandon the file at once."""
        self._state = "failed"
        await self._discard()

    async def _discard(self) -> None:
        job, self._job = self._job, None
        self._encoding = None
        self._buffer.clear()
        self._buffered_bytes = self._buffered_rows = 0
        self._encoding_bytes = self._writing_bytes = 0
        try:
            if job is not None:
                if not job.done():
                    job.cancel()
                    await asyncio.wait([job])
                if not job.cancelled():
                    job.exception()  # retrieved: it was reported already, or is moot now
        finally:
            await self._output.abort()

    # ----------------------------------------------------------------- buffering

    def _note_memory(self) -> None:
        self.peak_memory = max(self.peak_memory, self._buffered_bytes + self._encoding_bytes
                               + self._writing_bytes)

    async def _add(self, batch: pa.RecordBatch) -> None:
        """Buffer ``batch``, cutting stripes whenever the buffer reaches its capacity."""
        while batch.num_rows:
            capacity = self.stripe_capacity
            room = capacity - self._buffered_bytes
            nbytes = batch.nbytes
            take = batch.num_rows
            if nbytes > room:
                take = max(1, min(take, int(room * batch.num_rows / nbytes)))
            piece = batch if take == batch.num_rows else batch.slice(0, take)
            batch = batch.slice(take)
            self._buffer.append(piece)
            self._buffered_rows += take
            self._buffered_bytes += piece.nbytes
            self.num_rows += take
            self._note_memory()
            if self._buffered_bytes >= capacity or batch.num_rows:
                await self._flush()

    async def _flush(self) -> None:
        """Hand the buffered rows to a new stripe job once the previous stripe is encoded,
        and return once the previous stripe is written: its writing overlaps the new
        stripe's encoding, while the next buffer fills only when it is out (so memory holds
        what it held before: one stripe buffered or being written, one being encoded)."""
        if not self._buffered_rows:
            return
        if self._encoding is not None:
            # (a cancelled caller leaves the encoding to _discard)
            encoded = await asyncio.shield(self._encoding)
            # The ratio that sizes the next stripes counts the stripes encoded before this
            # one, whatever the threads' timing (the file's bytes must not depend on it).
            self._arrow_total += self._encoding_arrow
            self._encoded_total += sum(len(piece) for piece in encoded)
        batches, rows, nbytes = self._buffer, self._buffered_rows, self._buffered_bytes
        self._buffer, self._buffered_rows, self._buffered_bytes = [], 0, 0
        self._encoding_bytes = self._encoding_arrow = nbytes
        previous = self._job
        self._encoding = asyncio.get_running_loop().run_in_executor(
            self.executor or encode_pool(), self._encode_stripe, batches, rows)
        self._job = asyncio.create_task(
            self._stripe_job(self._encoding, previous))
        if previous is not None:
            await asyncio.shield(previous)

    async def _wait_job(self) -> None:
        job = self._job
        if job is not None:
            await asyncio.shield(job)  # a cancelled caller leaves the job to _discard
            self._job = None
            self._encoding = None

    async def _stripe_job(self, encoding: asyncio.Future[list[bytes]],
                          previous: asyncio.Task[None] | None) -> None:
        """Write one stripe once it is encoded and the stripes before it are written."""
        pieces = await encoding
        size = sum(len(piece) for piece in pieces)
        self._encoding_bytes = 0
        self._writing_bytes += size
        self._note_memory()
        if previous is not None:
            await previous
        for piece in pieces:
            await self._output.write(piece)
        self._writing_bytes -= size

    def _encode_stripe(self, batches: list[pa.RecordBatch], rows: int) -> list[bytes]:
        """Encode and assemble one stripe (in a worker thread); returns its bytes in
        pieces."""
        assembler = self._assembler
        stripe: EncodedStripe
        if isinstance(assembler, EncryptedFileAssembler):
            stripe = assembler.encode(self.orc_type, self.schema, batches, rows,
                                      self.encode_options, self._dictionary_decisions)
        else:
            stripe = encode_stripe(self.orc_type, self.schema, batches, rows,
                                   self.encode_options, self._dictionary_decisions)
        assembler.record_stripe(stripe)
        return stripe.pieces()


# =========================================================================== API

def open_writer(dest: Destination, schema: pa.Schema | str | OrcType,
                options: WriteOptions | None = None, *,
                storage_options: Mapping[str, Any] | None = None,
                keys: KeyProvider | None = None, **keywords: Any) -> OrcWriter:
    """A writer of one ORC file, to use with ``async with``.

    Args:
        dest: a local path, a ``file://`` URI, an ``s3://bucket/key`` URI or a
            :class:`aorc.io.output.Sink`.
        schema: a pyarrow schema, or an ORC type string (``"struct<a:int,b:string>"``).
        options: an :class:`aorc.WriteOptions` (default: the defaults).
        storage_options: settings of the destination store.
        keys: the key provider of the master keys ``encrypt`` names (see
            :class:`aorc.InMemoryKeys`); needed with ``encrypt``.
        **keywords: any field of :class:`aorc.WriteOptions`, overriding ``options``:
            ``compression`` ("zstd" (default), "zlib", "snappy", "lz4", "none"/"uncompressed"),
            ``compression_block_size`` (256 KiB), ``stripe_size`` (64 MiB),
            ``row_index_stride`` (10000; 0 for no row index), ``dictionary_key_size_threshold``
            (0.8), ``bloom_filter_columns`` (column names, dotted for nested columns),
            ``bloom_filter_fpp`` (0.01), ``metadata`` (dict of str to bytes or str),
            ``timezone`` (the zone naive timestamps are in, "UTC"), ``use_threads`` (True: one
            thread per CPU; False or an integer).

    Returns:
        The writer; ``await writer.write(batch)`` inside the ``async with`` block.

    Raises:
        SchemaError: an unknown option, a bad option value or a schema ORC cannot hold.
        UnsupportedFeatureError: a URL scheme aorc cannot write to (e.g. gs://).
    """
    return OrcWriter(dest, schema, options, storage_options=storage_options, keys=keys,
                     **keywords)


async def write_table(table: Data | Any, dest: Destination, options: WriteOptions | None = None,
                      *, schema: pa.Schema | str | OrcType | None = None,
                      storage_options: Mapping[str, Any] | None = None,
                      keys: KeyProvider | None = None, **keywords: Any) -> None:
    """Write rows as an ORC file: a pyarrow Table, RecordBatch or RecordBatchReader, a
    pandas DataFrame, an object exporting the Arrow PyCapsule interface (a Polars DataFrame,
    a DuckDB relation, an aorc reader, ...), or an iterable or async iterable of batches or
    tables (see :mod:`aorc.write.inputs`). A stream is written as it is read: its rows need
    not fit in memory.

    Args:
        table: the data; its schema becomes the file's schema (for an iterable, the first
            batch's) unless ``schema`` is given.
        dest: a local path, a ``file://`` URI, an ``s3://bucket/key`` URI or a
            :class:`aorc.io.output.Sink`.
        options: an :class:`aorc.WriteOptions` (default: the defaults).
        schema: the file's schema (a pyarrow schema or an ORC type string); the data must
            have it, and pandas DataFrames are converted to it (as
            ``pyarrow.Table.from_pandas(df, schema=...)``: what a column of dicts, or of
            mixed values, needs). Default: the data's own.
        storage_options: settings of the destination store.
        keys: the key provider for ``encrypt`` (see :func:`open_writer`).
        **keywords: fields of :class:`aorc.WriteOptions`, overriding ``options`` (see
            :func:`open_writer`).

    Raises:
        InputTypeError: ``table`` is of no accepted kind (nothing is written).
        SchemaError: an unknown option, a bad option value, a type ORC cannot hold, batches
            of differing schemas, an empty iterable (which has no schema), or a pandas
            column pyarrow cannot convert (named, with the fix).
        StoreError: writing failed (nothing is left at the destination).
    """
    given = resolve_schema(schema)[0] if schema is not None else None
    rows = record_input(table, given)
    async with rows:
        if rows.schema is None and given is None:
            raise SchemaError("an empty iterable has no schema to write: pass schema=, or a "
                              "RecordBatchReader (which has one)")
        writer = OrcWriter(dest, schema if schema is not None else rows.schema, options,
                           storage_options=storage_options, _caller="write_table", keys=keys,
                           **keywords)
        async with writer:
            if rows.is_stream:
                await writer._write_stream(rows)
            else:
                await writer.write(rows)
