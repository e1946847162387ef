"""Open files of :class:`aorc.sink.RollingSink`: rows encoded stripe by stripe as they arrive,
the bytes streamed to the store (a temporary local file, or the parts of an S3 multipart
upload), the file completed only when the sink says so.

Everything that decides where a stripe or a file ends is a function of the rows given to the
file and of the options, never of timing or of how the rows were batched: a stripe ends at the
first row whose estimated size (:func:`aorc.sink.plan.row_sizes`) takes the stripe to its
capacity, and the capacity depends on the encoded sizes of the file's previous stripes. A
replay of the same records therefore encodes the same stripes and writes the same bytes --
unless memory pressure shrank stripes (:mod:`aorc.sink.memory`), which depends on what else
is open.

What a file holds in memory (:attr:`OpenSinkFile.memory`): the rows of its current stripe,
the stripe being encoded (rows plus an estimate of the encoder's output), and what its
destination holds in memory (S3: the bytes not yet in a part, unless they are spooled to
disk, and the parts being uploaded). Under memory pressure the sink scales the stripe
capacity down (:attr:`OpenSinkFile.scale`, see :mod:`aorc.sink.memory`).
"""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import Awaitable, Mapping, Sequence
from concurrent.futures import Executor
from typing import Any

import numpy as np
import pyarrow as pa

from aorc.errors import SchemaError
from aorc.format.columns.encode import EncodeOptions
from aorc.format.encryption.spec import EncryptionPlan, plan_encryption
from aorc.format.types import OrcType
from aorc.io import open_output, registry
from aorc.io.output import TEMP_MARKER, Output
from aorc.keys import KeyProvider
from aorc.options import WriteOptions
from aorc.sink.plan import OpenFile, Routing, held_bytes
from aorc.sink.results import SinkFile
from aorc.sink.target import CommittedFile, FileMetrics
from aorc.write.encrypted import EncryptedFileAssembler, open_encryption
from aorc.write.file import AssembledFile, FileAssembler
from aorc.write.stripe import encode_stripe

__all__ = [
    "MAX_STRIPE_FACTOR",
    "MIN_STRIPE_TARGET",
    "STRIPE_FLOOR",
    "OpenSinkFile",
    "StaleTemporaries",
    "abort_files",
    "all_or_cancel",
    "committed_file",
    "default_stripe_target",
    "scaled_capacity",
    "sink_encryption",
    "stripe_point",
    "tail_allowance",
]

#: A stripe's rows are at most this many times the stripe target (in estimated bytes).
MAX_STRIPE_FACTOR = 4
#: The smallest default stripe target.
MIN_STRIPE_TARGET = 1 << 20
#: The largest default stripe target (the writer's default ``stripe_size``).
MAX_STRIPE_TARGET = 64 << 20
#: Copies of a part being uploaded: the part, and the HTTP client's copy of the body.
IN_FLIGHT_COPIES = 2
#: Memory pressure shrinks no stripe below this many estimated bytes of rows (a few thousand
#: small rows; see :mod:`aorc.sink.memory`).
STRIPE_FLOOR = 32 << 10
#: Pieces of rows a file keeps before they are merged into one.
COMPACT_PIECES = 32


def default_stripe_target(max_bytes: int | None) -> int:
    """Encoded bytes per stripe when ``stripe_size`` is not given: a sixteenth of
    ``max_bytes`` (files end within a stripe or two of ``max_bytes``; each open file holds
    one stripe's rows), between 1 and 64 MiB."""
    if max_bytes is None:
        return MAX_STRIPE_TARGET
    return max(MIN_STRIPE_TARGET, min(MAX_STRIPE_TARGET, max_bytes // 16))


def scaled_capacity(capacity: int, scale: float) -> int:
    """``capacity`` times ``scale``, but not below :data:`STRIPE_FLOOR` (nor above
    ``capacity``)."""
    if scale >= 1.0:
        return capacity
    return max(min(capacity, STRIPE_FLOOR), int(capacity * scale))


def tail_allowance(num_columns: int, num_stripes: int) -> int:
    """A generous estimate of a file's tail (footer, statistics, postscript) in bytes."""
    return 1024 + 96 * num_columns * (num_stripes + 2)


class StaleTemporaries:
    """Removes the temporary files a killed sink left (SIGKILL: no abort ran), once per
    stream and folder, before the stream's first file there is written: hidden local files,
    or the incomplete multipart uploads of S3.

    Only names this sink's files of the same stream would have are removed:
    ``.<topic>+<partition>+<20 digits>.orc.aorc-tmp-<12 hex>`` (topics are escaped, so the
    ``+``-separated prefix is exact). One sink at a time writes a stream (the sink's
    documented requirement), so these belong to a dead run; other streams' temporaries,
    which another live sink on the folder may be writing, are never touched.
    """

    def __init__(self) -> None:
        self._done: dict[tuple[str, str], asyncio.Future[None]] = {}
        self.removed: list[str] = []

    async def clean(self, uri: str, storage_options: Mapping[str, Any]) -> None:
        """Remove the stale temporaries of the stream of file ``uri`` in its folder (the
        first time this stream writes there): hidden local files, or S3's incomplete
        multipart uploads of the stream's keys. Every file of the stream waits until that
        is done: a file created while the folder is being listed would be taken for stale
        (two cuts of a stream finish their files concurrently)."""
        scheme = registry.scheme_for(uri)
        if isinstance(scheme, registry.LocalScheme):
            folder, name = os.path.split(scheme.path_of(uri))
        else:
            folder, _, name = uri.rpartition("/")
        stream = name.rsplit("+", 1)[0] + "+"  # "<topic>+<partition>+"
        task = self._done.get((folder, stream))
        if task is None:
            task = self._done[(folder, stream)] = asyncio.ensure_future(self._clean(
                isinstance(scheme, registry.LocalScheme), folder, stream, storage_options))
        await asyncio.shield(task)

    async def _clean(self, local: bool, folder: str, stream: str,
                     storage_options: Mapping[str, Any]) -> None:
        if not local:
            pattern = re.compile(re.escape(stream) + r"\d{20}\.orc")
            self.removed += await registry.abort_uploads(f"{folder}/{stream}", pattern,
                                                         storage_options)
            return
        pattern = re.compile(r"\." + re.escape(stream) + r"\d{20}\.orc"
                             + re.escape(TEMP_MARKER) + r"[0-9a-f]{12}")
        self.removed += await asyncio.to_thread(_remove_matching, folder, pattern)


def _remove_matching(folder: str, pattern: re.Pattern[str]) -> list[str]:
    removed = []
    try:
        names = os.listdir(folder)
    except OSError:  # no folder yet: nothing stale
        return []
    for name in names:
        if pattern.fullmatch(name):
            try:
                os.remove(os.path.join(folder, name))
                removed.append(os.path.join(folder, name))
            except OSError:  # gone already, or not ours to remove: leave it
                pass
    return removed


class OpenSinkFile(AssembledFile):
    """One file being written by the sink (see the module docstring).

    Args:
        uri: the destination (local path or ``s3://``).
        orc_type: the file's ORC type tree.
        schema: the Arrow schema of the rows.
        options: the encoder options.
        metadata: the footer's user metadata (the sink adds the last offset at the end).
        storage_options: settings of the store.
        stripe_target: encoded bytes per stripe aimed at.
        executor: where stripes are encoded (default: the loop's default executor). The sink
            gives its files one thread: fewer threads allocating means fewer allocator
            arenas and heaps holding freed memory.
        metrics: a target's metrics of the file (:class:`aorc.sink.target.FileMetrics`),
            shown every row when its stripe is encoded (in the encoder's thread).
        stale: the sink's :class:`StaleTemporaries`, cleaned before the first write.
        spooling: gives the file's upload its part buffer before the first write (an
            object with an async ``attach(output)``: :class:`aorc.sink.memory.Spooling`).
    """

    def __init__(self, uri: str, orc_type: OrcType, schema: pa.Schema, options: EncodeOptions,
                 metadata: Mapping[str, bytes], storage_options: Mapping[str, Any],
                 stripe_target: int, executor: Executor | None = None,
                 metrics: FileMetrics | None = None,
                 stale: StaleTemporaries | None = None, spooling: Any = None,
                 encryption: tuple[EncryptionPlan, KeyProvider] | None = None) -> None:
        self.uri = uri
        self._encryption = encryption  # the assembler becomes encrypted at the first stripe
        self._spooling = spooling
        self.scale = 1.0          # the sink's memory pressure: stripes end early below 1
        self._stale = stale
        self.metrics = metrics
        self._executor = executor
        self.schema = schema
        self._orc_type = orc_type
        self._options = options
        self._assembler = FileAssembler(orc_type, options, metadata)
        self._storage_options = dict(storage_options)
        self._out: Output | None = None
        self._target = stripe_target
        self._pieces: list[pa.RecordBatch] = []
        self._decisions: dict[int, bool] = {}
        self._header = b""
        self.rows_bytes = 0       # held bytes of the current stripe's rows
        self.stripe_rows = 0
        self.stripe_est = 0       # estimated bytes of the current stripe's rows
        self.est_total = 0        # estimated bytes of the stripes encoded so far
        self.encoded_total = 0    # their encoded bytes
        self.last_stripe = 0      # encoded bytes of the last stripe
        self.encoding = 0         # bytes of a stripe being encoded (rows + output)
        self.num_rows = 0
        self.state = "open"       # open -> finished -> completed | aborted

    # ----------------------------------------------------------------- sizes

    @property
    def base_capacity(self) -> int:
        """Estimated bytes of rows after which the current stripe is full, without memory
        pressure."""
        ratio = self.encoded_total / self.est_total if self.est_total else 1.0
        target = self._target / ratio if ratio > 0 else float(self._target)
        return max(1, int(min(target, MAX_STRIPE_FACTOR * self._target)))

    @property
    def capacity(self) -> int:
        """The capacity scaled by :attr:`scale`, down to ``floor`` at least (see
        :func:`scaled_capacity`)."""
        return scaled_capacity(self.base_capacity, self.scale)

    @property
    def shrunk(self) -> bool:
        """Whether the current stripe is full only because memory pressure shrank it."""
        return self.stripe_est < self.base_capacity

    @property
    def size(self) -> int:
        """Bytes of the file produced so far (header and encoded stripes)."""
        return self._assembler.position

    @property
    def retries(self) -> int:
        """Requests the store retried for this file so far (0 for local files)."""
        stats = getattr(self._out, "stats", None)
        return int(getattr(stats, "retries", 0))

    def column_sizes(self) -> list[int | None]:
        """Bytes on disk of each ORC column (by column id) over the stripes so far."""
        return [s.bytes_on_disk for s in self._assembler.column_statistics()]

    def expected_size(self) -> int:
        """The file's size if one more stripe like the last one and the tail were added."""
        return self.size + self.last_stripe + tail_allowance(len(self.schema),
                                                             self.num_stripes)

    @property
    def memory(self) -> int:
        """Bytes this file holds: current rows, a stripe being encoded, the store's buffers."""
        out = self._out
        held = 0
        if out is not None:  # a part in flight is held twice: by us and by the HTTP client
            held = (int(getattr(out, "buffered_memory", getattr(out, "buffered_bytes", 0)))
                    + IN_FLIGHT_COPIES * int(getattr(out, "in_flight_bytes", 0)))
        return self.rows_bytes + self.encoding + held

    @property
    def in_flight(self) -> tuple[int, list[asyncio.Future[None]]]:
        """Bytes of the parts being uploaded and their uploads (none for local files)."""
        out = self._out
        if out is None:
            return 0, []
        return int(getattr(out, "in_flight_bytes", 0)), list(getattr(out, "uploads", []))

    # ----------------------------------------------------------------- rows

    def add(self, batch: pa.RecordBatch, est: int) -> int:
        """Add rows to the current stripe; returns the change of held bytes."""
        before = self.rows_bytes
        self._pieces.append(batch)
        self.rows_bytes += held_bytes(batch)
        self.stripe_rows += batch.num_rows
        self.stripe_est += est
        self.num_rows += batch.num_rows
        if len(self._pieces) > COMPACT_PIECES:
            merged = pa.concat_batches(self._pieces)
            self._pieces = [merged]
            self.rows_bytes = held_bytes(merged)
        return self.rows_bytes - before

    @property
    def encode_cost(self) -> int:
        """The bytes encoding the current stripe adds (its estimated encoded size)."""
        ratio = self.encoded_total / self.est_total if self.est_total else 1.0
        return int(self.stripe_est * ratio)

    @property
    def send_cost(self) -> int:
        """The most bytes encoding and sending the current stripe adds: its encoded size,
        and the HTTP client's copy of a part when the stripe fills one."""
        cost = self.encode_cost
        part = getattr(getattr(self._out, "config", None), "part_size", None)
        if part is not None and int(getattr(self._out, "buffered_bytes", 0)) + cost > part:
            cost += self._parts_cost(cost)
        return cost

    def _parts_cost(self, cost: int) -> int:
        """What sending the buffered bytes and ``cost`` more as parts adds: the HTTP
        client's copy of bytes in memory, both copies of bytes read back from a spool."""
        buffered = int(getattr(self._out, "buffered_bytes", 0))
        in_memory = int(getattr(self._out, "buffered_memory", buffered))
        return ((IN_FLIGHT_COPIES - 1) * (in_memory + cost)
                + IN_FLIGHT_COPIES * (buffered - in_memory))

    @property
    def finish_cost(self) -> int:
        """The most bytes finishing the file adds: its last stripe's encoded size and the
        HTTP client's copy of the last part."""
        cost = self.encode_cost
        if getattr(self._out, "config", None) is not None:
            cost += self._parts_cost(cost)
        return cost

    @property
    def full(self) -> bool:
        """Whether the current stripe reached its capacity."""
        return self.stripe_rows > 0 and self.stripe_est >= self.capacity

    async def flush_stripe(self) -> None:
        """Encode the current stripe (in a worker thread) and send its bytes to the store."""
        if not self.stripe_rows:
            return
        pieces, rows, est = self._pieces, self.stripe_rows, self.stripe_est
        self.encoding = self.rows_bytes + self.encode_cost
        self._pieces, self.stripe_rows, self.stripe_est = [], 0, 0
        self.rows_bytes = 0
        try:
            await self._keyed()
            self._start()
            data = await asyncio.get_running_loop().run_in_executor(
                self._executor, self._encode, pieces, rows)
            del pieces
            self.encoding = 0  # the bytes now belong to the destination's buffer
            self.est_total += est
            self.encoded_total += len(data)
            self.last_stripe = len(data)
            await self._send(data)
        finally:
            self.encoding = 0

    async def _keyed(self) -> None:
        """With ``encrypt``, before the first stripe: the file's local keys and an
        encrypting assembler."""
        if self._encryption is not None and not isinstance(self._assembler,
                                                           EncryptedFileAssembler):
            plan, keys = self._encryption
            self._assembler = EncryptedFileAssembler(
                self._orc_type, self._options, plan, await open_encryption(plan, keys),
                self._assembler.user_metadata)

    def _start(self) -> None:
        if self.size == 0:
            self._header = self._assembler.header()  # written with the first bytes

    async def _send(self, data: bytes) -> None:
        if self._out is None:
            if self._stale is not None:
                await self._stale.clean(self.uri, self._storage_options)
            await registry.make_parents(self.uri)
            out = open_output(self.uri, self._storage_options)
            if self._spooling is not None:
                await self._spooling.attach(out)
            self._out = out
            await self._out.write(self._header)
        await self._out.write(data)

    def _encode(self, pieces: list[pa.RecordBatch], rows: int) -> bytes:
        """Encode and assemble one stripe (in a worker thread); returns its bytes."""
        if self.metrics is not None:
            for piece in pieces:
                self.metrics.add(piece)
        assembler = self._assembler
        stripe = (assembler.encode(self._orc_type, self.schema, pieces, rows, self._options,
                                   self._decisions)
                  if isinstance(assembler, EncryptedFileAssembler) else
                  encode_stripe(self._orc_type, self.schema, pieces, rows, self._options,
                                self._decisions))
        data = assembler.add_stripe(stripe)
        del stripe
        pa.default_memory_pool().release_unused()
        return data

    # ----------------------------------------------------------------- life cycle

    async def finish(self, metadata: Mapping[str, bytes]) -> None:
        """Encode the last stripe and send the tail (with ``metadata`` added to the footer's
        user metadata); the file is not visible until :meth:`complete`."""
        await self.flush_stripe()
        await self._keyed()
        self._start()
        self._assembler.user_metadata.update(metadata)
        tail = await asyncio.to_thread(self._assembler.finish)
        await self._send(tail)
        self.state = "finished"

    async def complete(self) -> None:
        """Make the file visible (rename or ``CompleteMultipartUpload``)."""
        assert self._out is not None and self.state == "finished"
        await self._out.complete()
        self.state = "completed"

    async def abort(self) -> None:
        """Drop the file: nothing is left on the store. Safe to repeat."""
        if self.state in ("completed", "aborted"):
            return
        self.state = "aborted"
        self._pieces = []
        self.rows_bytes = 0
        if self._out is not None:
            await self._out.abort()


def committed_file(written: SinkFile, f: OpenFile) -> CommittedFile:
    """What a target commits of a complete file."""
    w = f.writer
    return CommittedFile(written, w.metrics, w.column_sizes(), w.stripe_offsets)


async def all_or_cancel(coros: list[Awaitable[None]]) -> None:
    """Run ``coros`` concurrently; on the first failure cancel the others and raise.

    Not :func:`aorc.io.base.gather_or_cancel`, on purpose: of the failures it sees, that one
    raises the earliest in request order (deterministic errors for reads), possibly a later
    failure or one a sibling raised while being cancelled; a cut reports the failure that
    came first, its root cause."""
    tasks = [asyncio.ensure_future(c) for c in coros]
    try:
        await asyncio.gather(*tasks)
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise


async def abort_files(files: Sequence[OpenFile]) -> None:
    """Abort the files' writes (nothing partial is left), whatever happens to the caller."""
    writers = [f.writer for f in files if f.writer is not None]
    if writers:
        await asyncio.shield(asyncio.gather(*(w.abort() for w in writers),
                                            return_exceptions=True))


def stripe_point(files: Mapping[str, Any], routing: Routing, pos: int, end: int,
                 initial_capacity: int) -> int | None:
    """The first row in ``pos:end`` with which a file's current stripe becomes full (the
    stripe then ends after it), or None. ``files`` maps folders to objects with a ``writer``
    (an :class:`OpenSinkFile` or None for a file not opened yet)."""
    g = routing.groups[pos:end]
    if not len(g):
        return None
    order = np.argsort(g, kind="stable")  # (groups are small codes: a radix sort)
    sg = g[order]
    starts = np.flatnonzero(np.r_[True, sg[1:] != sg[:-1]])
    counts = np.diff(np.r_[starts, len(sg)])
    have, cap = [], []
    for k in sg[starts].tolist():
        f = files.get(routing.paths[k])
        w = getattr(f, "writer", None)
        have.append(w.stripe_est if w is not None else 0)
        cap.append(w.capacity if w is not None else initial_capacity)
    sizes = routing.sizes[pos:end][order]
    cum = np.cumsum(sizes)
    base = np.repeat(cum[starts] - sizes[starts], counts)
    full = (np.repeat(np.array(have, np.int64), counts) + cum - base
            >= np.repeat(np.array(cap, np.int64), counts))
    hit = np.flatnonzero(full)
    return pos + int(order[hit].min()) if len(hit) else None


def sink_encryption(orc_type: OrcType, options: WriteOptions, keys: Any
                    ) -> tuple[EncryptionPlan, KeyProvider] | None:
    """The variants ``options.encrypt`` makes and the key provider for them (``None``
    without ``encrypt``).

    Raises:
        SchemaError: ``encrypt`` without ``keys``, or a bad ``encrypt``/``masks``.
    """
    plan = plan_encryption(orc_type, options.encrypt, options.masks)
    if plan is None:
        return None
    if keys is None:
        raise SchemaError("encrypt= needs keys= (a key provider such as aorc.InMemoryKeys)")
    return plan, keys
