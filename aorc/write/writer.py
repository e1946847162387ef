"""The async write driver: the only writer code that awaits.

Write a whole table::

    await aorc.write_table(table, "data.orc", compression="zstd")

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
(:mod:`aorc.format.columns.encode`, :mod:`aorc.write.stripe`), and the stripe's bytes are written
to the sink as soon as they are ready, while ``write`` goes on filling the next buffer. When
the next buffer is full before the previous stripe is out, ``write`` waits (backpressure): at
most one stripe is buffered, one is being encoded or written, so memory stays bounded by
about two stripes of Arrow data plus one encoded stripe. A stripe never holds more than
:data:`MAX_ARROW_FACTOR` times ``stripe_size`` (nor :data:`MAX_STRIPE_ARROW_BYTES`) of Arrow
data, however well the data compresses.
"""

from __future__ import annotations

import asyncio
import math
import zoneinfo
from collections.abc import Iterable, Mapping
from types import TracebackType
from typing import Any, TypeAlias

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from aorc.errors import AorcError, SchemaError
from aorc.format.codec.compression import MAX_BLOCK_SIZE, CompressionKind
from aorc.format.columns.encode import WriteOptions, encode_column
from aorc.format.types import (
    OrcType,
    TypeKind,
    from_arrow_schema,
    from_arrow_type,
    parse_type_string,
    to_arrow_schema,
    to_arrow_type,
    type_string,
    widen_arrow_type,
)
from aorc.format.types import (
    resolve_column as _resolve_column,
)
from aorc.io import open_output
from aorc.io.base import IOStats
from aorc.io.output import Destination, Output
from aorc.write.file import FileAssembler
from aorc.write.stripe import assemble_stripe

__all__ = [
    "DEFAULT_OPTIONS",
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
#: ORC Java's smallest row index stride.
MIN_ROW_INDEX_STRIDE = 1000

#: The options and their defaults (as pyarrow.orc names them).
DEFAULT_OPTIONS: dict[str, Any] = {
    "compression": "zstd",
    "compression_block_size": 256 * 1024,
    "stripe_size": 64 * 1024 * 1024,
    "row_index_stride": 10_000,
    "dictionary_key_size_threshold": 0.8,
    "bloom_filter_columns": None,
    "bloom_filter_fpp": 0.01,
    "metadata": None,
    "timezone": "UTC",
}

_CODECS = {
    "zstd": CompressionKind.ZSTD, "zlib": CompressionKind.ZLIB,
    "snappy": CompressionKind.SNAPPY, "lz4": CompressionKind.LZ4,
    "none": CompressionKind.NONE, "uncompressed": CompressionKind.NONE,
}

#: What :meth:`OrcWriter.write` and :func:`write_table` take (or a pandas DataFrame).
Data: TypeAlias = "pa.Table | pa.RecordBatch"


# =========================================================================== options

def _int_option(name: str, value: Any, low: int, high: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise SchemaError(f"{name} must be an integer, got {value!r}")
    number = int(value)
    if number < low or (high is not None and number > high):
        bound = f"at least {low}" if high is None else f"between {low} and {high}"
        raise SchemaError(f"{name} must be {bound}, got {number}")
    return number


def _float_option(name: str, value: Any, low: float, high: float, *,
                  open_low: bool = False, open_high: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)):
        raise SchemaError(f"{name} must be a number, got {value!r}")
    number = float(value)
    too_low = number <= low if open_low else number < low
    too_high = number >= high if open_high else number > high
    if math.isnan(number) or too_low or too_high:
        lo, hi = "(" if open_low else "[", ")" if open_high else "]"
        raise SchemaError(f"{name} must be in {lo}{low}, {high}{hi}, got {number}")
    return number


def _compression(value: Any) -> CompressionKind:
    if isinstance(value, CompressionKind):
        kind = value
    elif isinstance(value, str) and value.lower() in _CODECS:
        kind = _CODECS[value.lower()]
    elif value is None:
        kind = CompressionKind.NONE
    else:
        raise SchemaError(f"compression must be one of {', '.join(map(repr, _CODECS))}, "
                          f"got {value!r}")
    if kind not in _CODECS.values():
        raise SchemaError(f"aorc cannot write {kind.name} compression")
    return kind


def _stride(value: Any) -> int:
    stride = _int_option("row_index_stride", value, 0)
    if 0 < stride < MIN_ROW_INDEX_STRIDE:
        raise SchemaError(f"row_index_stride must be 0 (no row index) or at least "
                          f"{MIN_ROW_INDEX_STRIDE}, as in ORC Java; got {stride}")
    return stride


def _timezone(value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise SchemaError(f"timezone must be a time zone name such as 'UTC', got {value!r}")
    try:
        zoneinfo.ZoneInfo(value)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError) as exc:
        raise SchemaError(f"unknown time zone {value!r}") from exc
    return value


def _bloom_columns(root: OrcType, value: Any) -> set[int]:
    if value is None:
        return set()
    if isinstance(value, str) or not isinstance(value, Iterable):
        raise SchemaError("bloom_filter_columns must be a list of column names, "
                          f"got {value!r}")
    ids: set[int] = set()
    for name in value:
        if not isinstance(name, str):
            raise SchemaError(f"bloom_filter_columns must hold column names, got {name!r}")
        ids.update(_column_subtree(root, name))
    return ids


def _column_subtree(root: OrcType, name: str) -> set[int]:
    """The ids of the column called ``name`` (dotted for nested) and of its descendants, as
    ORC Java's ``orc.bloom.filter.columns`` selects them."""
    node = _resolve_column(root, name)
    return set(range(node.column_id, node.max_column_id + 1))


def _user_metadata(value: Any) -> dict[str, bytes]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise SchemaError(f"metadata must be a dict of str to bytes or str, got {value!r}")
    out = {}
    for key, item in value.items():
        if isinstance(key, bytes):
            key = key.decode("utf-8")
        if not isinstance(key, str):
            raise SchemaError(f"metadata keys must be strings, got {key!r}")
        if isinstance(item, str):
            item = item.encode("utf-8")
        if not isinstance(item, (bytes, bytearray, memoryview)):
            raise SchemaError(f"metadata value of {key!r} must be bytes or str, got "
                              f"{type(item).__name__}")
        out[key] = bytes(item)
    return out


def parse_write_options(root: OrcType, options: Mapping[str, Any], *,
                        caller: str = "open_writer") -> tuple[WriteOptions, dict[str, bytes]]:
    """Check the keyword options of :func:`write_table` / :func:`open_writer`.

    Args:
        root: the file's schema (to resolve ``bloom_filter_columns``).
        options: the options given; missing ones take :data:`DEFAULT_OPTIONS`.
        caller: the function name used in the message about an unknown option.

    Returns:
        The encoder options and the user metadata.

    Raises:
        SchemaError: an unknown option or a bad value.
    """
    unknown = sorted(set(options) - set(DEFAULT_OPTIONS))
    if unknown:
        raise SchemaError(f"{caller}() got an unexpected keyword argument {unknown[0]!r} "
                          f"(options: {', '.join(DEFAULT_OPTIONS)})")
    o = {**DEFAULT_OPTIONS, **options}
    opts = WriteOptions(
        compression=_compression(o["compression"]),
        compression_block_size=_int_option("compression_block_size",
                                           o["compression_block_size"], 1, MAX_BLOCK_SIZE),
        stripe_size=_int_option("stripe_size", o["stripe_size"], 1),
        row_index_stride=_stride(o["row_index_stride"]),
        dictionary_key_size_threshold=_float_option(
            "dictionary_key_size_threshold", o["dictionary_key_size_threshold"], 0.0, 1.0),
        bloom_filter_columns=_bloom_columns(root, o["bloom_filter_columns"]),
        bloom_filter_fpp=_float_option("bloom_filter_fpp", o["bloom_filter_fpp"], 0.0, 1.0,
                                       open_low=True, open_high=True),
        timezone=_timezone(o["timezone"]),
    )
    return opts, _user_metadata(o["metadata"])


# =========================================================================== schemas

def resolve_schema(schema: pa.Schema | str | OrcType) -> tuple[pa.Schema, OrcType]:
    """The Arrow schema batches must have and the ORC type tree of the file.

    Raises:
        SchemaError: the schema cannot be written as ORC, or its root is not a struct.
    """
    if isinstance(schema, pa.Schema):
        widened = pa.schema([f.with_type(widen_arrow_type(f.type)) for f in schema],
                            metadata=schema.metadata)
        return widened, from_arrow_schema(widened)
    if isinstance(schema, str):
        orc_type = parse_type_string(schema)
    elif isinstance(schema, OrcType):
        orc_type = parse_type_string(type_string(schema))  # renumbered from 0
    else:
        raise SchemaError(f"schema must be a pyarrow.Schema or an ORC type string, got "
                          f"{type(schema).__name__}")
    if orc_type.kind != TypeKind.STRUCT:
        raise SchemaError(f"the root of an ORC schema to write must be a struct, got "
                          f"{type_string(orc_type)}")
    return to_arrow_schema(orc_type), orc_type


def _canonical(field: pa.Field) -> pa.DataType:
    """The Arrow type aorc reads back for a field: equal for types written alike."""
    return to_arrow_type(from_arrow_type(field.type, field.metadata))


def as_record_batches(data: Any) -> list[pa.RecordBatch]:
    """The record batches of a Table, a RecordBatch or a pandas DataFrame.

    Raises:
        SchemaError: for any other object.
    """
    if isinstance(data, pa.RecordBatch):
        return [data]
    table = data if isinstance(data, pa.Table) else _from_pandas(data)
    batches: list[pa.RecordBatch] = table.to_batches()
    return batches


def _from_pandas(data: Any) -> pa.Table:
    if type(data).__module__.startswith("pandas") and type(data).__name__ == "DataFrame":
        return pa.Table.from_pandas(data, preserve_index=False)
    raise SchemaError(f"can only write a pyarrow Table or RecordBatch (or a pandas "
                      f"DataFrame), got {type(data).__name__}")


def conform(batch: pa.RecordBatch, schema: pa.Schema) -> pa.RecordBatch:
    """``batch`` with the writer's schema: same names; types equal, or written alike (large
    and view strings, dictionaries, other timestamp units, ...), which are cast.

    Raises:
        SchemaError: names or types differ, or a cast fails.
    """
    if batch.schema.names != schema.names:
        raise SchemaError(f"the data's columns {batch.schema.names} differ from the "
                          f"writer's schema {schema.names}")
    if batch.schema.equals(schema):
        return batch
    arrays = []
    for i, want in enumerate(schema):
        got = batch.schema.field(i)
        arr = batch.column(i)
        if got.type != want.type:
            if _canonical(got) != _canonical(want):
                raise SchemaError(f"column {want.name!r} has type {got.type}, the writer's "
                                  f"schema says {want.type}")
            try:
                arr = arr.cast(want.type, safe=True)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as exc:
                raise _cast_error(want.name, arr, want.type, exc) from exc
        arrays.append(arr)
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


def _uint64_max(arr: pa.Array | pa.ChunkedArray) -> int | None:
    """The largest uint64 value in ``arr`` and its nested children (None when none)."""
    t = arr.type
    if t == pa.uint64():
        value = pc.max(arr).as_py()
        return int(value) if value is not None else None
    if isinstance(arr, pa.ChunkedArray):
        parts = [_uint64_max(c) for c in arr.chunks]
    elif pa.types.is_struct(t):
        parts = [_uint64_max(arr.field(i)) for i in range(t.num_fields)]
    elif pa.types.is_map(t):
        parts = [_uint64_max(arr.keys), _uint64_max(arr.items)]
    elif pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        parts = [_uint64_max(arr.flatten())]
    elif pa.types.is_dictionary(t):
        parts = [_uint64_max(arr.dictionary)]
    else:
        return None
    found = [p for p in parts if p is not None]
    return max(found) if found else None


def _cast_error(name: str, arr: pa.Array, want: pa.DataType, exc: Exception) -> SchemaError:
    """The SchemaError for a failed cast of column ``name`` (naming the value that does not
    fit when uint64 values exceed ORC's bigint)."""
    largest = _uint64_max(arr)
    if largest is not None and largest > 2**63 - 1:
        return SchemaError(f"column {name!r}: uint64 is written as ORC bigint, which holds at "
                           f"most {2**63 - 1}, but the column holds {largest}")
    return SchemaError(f"column {name!r}: cannot convert {arr.type} to {want}: {exc}")


# =========================================================================== the writer

class OrcWriter:
    """Writes one ORC file from Arrow record batches; get one from :func:`open_writer`.

    Use it as an async context manager: the file is completed when the block exits without
    an error and abandoned (nothing visible) otherwise. Without ``async with``, call
    :meth:`close` to complete the file or :meth:`abort` to abandon it.

    Attributes:
        schema: the Arrow schema the data must have.
        orc_type: the file's ORC type tree.
        options: the encoder options.
        user_metadata: the footer's user metadata.
        num_rows: rows accepted so far.
        peak_memory: the most bytes held at once so far: Arrow bytes buffered or being
            encoded plus encoded bytes waiting to be written.
    """

    def __init__(self, dest: Destination, schema: pa.Schema | str | OrcType, *,
                 storage_options: Mapping[str, Any] | None = None,
                 _caller: str = "open_writer", **options: Any) -> None:
        self.schema, self.orc_type = resolve_schema(schema)
        self.options, self.user_metadata = parse_write_options(self.orc_type, options,
                                                               caller=_caller)
        self._sink: Output = open_output(dest, storage_options)
        self._assembler = FileAssembler(self.orc_type, self.options, self.user_metadata)
        self._buffer: list[pa.RecordBatch] = []
        self._buffered_rows = 0
        self._buffered_bytes = 0
        self._job: asyncio.Task[None] | None = None
        self._job_bytes = 0
        self._arrow_total = 0
        self._encoded_total = 0
        self._dictionary_decisions: dict[int, bool] = {}
        self._lock = asyncio.Lock()
        self._state = "new"  # new -> open -> closed | failed | aborted
        self.num_rows = 0
        self.peak_memory = 0

    # ----------------------------------------------------------------- properties

    @property
    def path(self) -> str:
        """The destination's printable name."""
        return self._sink.path

    @property
    def io_stats(self) -> IOStats | None:
        """Requests, bytes, retries and parts the destination store has seen (object stores);
        None for sinks that do not count them (local files, memory)."""
        stats = getattr(self._sink, "stats", None)
        return stats if isinstance(stats, IOStats) else None

    @property
    def num_stripes(self) -> int:
        """Stripes finished so far."""
        return self._assembler.num_stripes

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
        return max(1, int(min(target, MAX_ARROW_FACTOR * size, MAX_STRIPE_ARROW_BYTES)))

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

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc: BaseException | None, tb: TracebackType | None) -> None:
        if exc_type is None:
            await self.close()
        else:
            await self.abort()

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
                await self._sink.write(self._assembler.header())
            except BaseException:
                await self._fail()  # (__aexit__ does not run when __aenter__ fails)
                raise

    async def write(self, data: Data | Any) -> None:
        """Append rows: a pyarrow Table or RecordBatch (or a pandas DataFrame).

        Returns when the rows are buffered; waits while the buffer is full and the previous
        stripe is still being encoded or written. Any error other than a schema mismatch (or a
        cancellation) abandons the file.

        Raises:
            SchemaError: the data's column names or types do not match :attr:`schema` (the
                writer stays usable).
            AorcError: the writer is closed, or broken by an earlier error.
            StoreError: writing a finished stripe failed.
        """
        batches = [conform(b, self.schema) for b in as_record_batches(data)]
        async with self._lock:
            await self._start()
            try:
                for batch in batches:
                    await self._add(batch)
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
                tail = await asyncio.to_thread(self._assembler.finish)
                await self._sink.write(tail)
                await self._sink.complete()
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
        self._buffer.clear()
        self._buffered_bytes = self._buffered_rows = self._job_bytes = 0
        try:
            if job is not None:
                if not job.done():
                    job.cancel()
                    await asyncio.wait([job])
                if not job.cancelled():
                    job.exception()  # retrieved: it was reported already, or is moot now
        finally:
            await self._sink.abort()

    # ----------------------------------------------------------------- buffering

    def _note_memory(self) -> None:
        self.peak_memory = max(self.peak_memory, self._buffered_bytes + self._job_bytes)

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
        """Hand the buffered rows to a new stripe job, once the previous job is done."""
        if not self._buffered_rows:
            return
        await self._wait_job()
        batches, rows, nbytes = self._buffer, self._buffered_rows, self._buffered_bytes
        self._buffer, self._buffered_rows, self._buffered_bytes = [], 0, 0
        self._job_bytes = nbytes
        self._job = asyncio.create_task(self._stripe_job(batches, rows, nbytes))

    async def _wait_job(self) -> None:
        job = self._job
        if job is not None:
            await asyncio.shield(job)  # a cancelled caller leaves the job to _discard
            self._job = None

    async def _stripe_job(self, batches: list[pa.RecordBatch], rows: int, nbytes: int) -> None:
        data = await asyncio.to_thread(self._encode_stripe, batches, rows)
        del batches
        self._arrow_total += nbytes
        self._encoded_total += len(data)
        self._job_bytes = len(data)
        self._note_memory()
        await self._sink.write(data)
        self._job_bytes = 0

    def _encode_stripe(self, batches: list[pa.RecordBatch], rows: int) -> bytes:
        """Encode and assemble one stripe (in a worker thread); returns its bytes."""
        table = pa.Table.from_batches(batches, schema=self.schema)
        batches.clear()
        fields = list(self.schema)
        if fields:
            root = pa.StructArray.from_arrays(
                [table.column(i).combine_chunks() for i in range(len(fields))], fields=fields)
        else:
            root = pa.StructArray.from_buffers(pa.struct([]), rows, [None], children=[])
        del table
        stride = self.options.row_index_stride
        starts = (np.arange(0, rows, stride, dtype=np.int64) if stride
                  else np.zeros(0, dtype=np.int64))
        encoded = encode_column(self.orc_type, root, starts, self.options,
                                dictionary_decisions=self._dictionary_decisions)
        del root
        stripe = assemble_stripe(encoded, rows, len(starts), self.options)
        return self._assembler.add_stripe(stripe)


# =========================================================================== API

def open_writer(dest: Destination, schema: pa.Schema | str | OrcType, *,
                storage_options: Mapping[str, Any] | None = None,
                **options: Any) -> OrcWriter:
    """A writer of one ORC file, to use with ``async with``.

    Args:
        dest: a local path, a ``file://`` URI, an ``s3://bucket/key`` URI or a
            :class:`aorc.io.output.Sink`.
        schema: a pyarrow schema, or an ORC type string (``"struct<a:int,b:string>"``).
        storage_options: settings of the destination store.
        **options: as pyarrow.orc names them: ``compression`` ("zstd" (default), "zlib",
            "snappy", "lz4", "none"/"uncompressed"), ``compression_block_size`` (256 KiB),
            ``stripe_size`` (64 MiB), ``row_index_stride`` (10000; 0 for no row index),
            ``dictionary_key_size_threshold`` (0.8), ``bloom_filter_columns`` (column names,
            dotted for nested columns), ``bloom_filter_fpp`` (0.01), ``metadata`` (dict of
            str to bytes or str), ``timezone`` (the zone naive timestamps are in, "UTC").

    Returns:
        The writer; ``await writer.write(batch)`` inside the ``async with`` block.

    Raises:
        SchemaError: an unknown option, a bad option value or a schema ORC cannot hold.
        UnsupportedFeatureError: a URL scheme aorc cannot write to (e.g. gs://).
    """
    return OrcWriter(dest, schema, storage_options=storage_options, **options)


async def write_table(table: Data | Any, dest: Destination, *,
                      storage_options: Mapping[str, Any] | None = None,
                      **options: Any) -> None:
    """Write a pyarrow Table or RecordBatch (or a pandas DataFrame) as an ORC file.

    Args:
        table: the data; its schema becomes the file's schema.
        dest: a local path, a ``file://`` URI, an ``s3://bucket/key`` URI or a
            :class:`aorc.io.output.Sink`.
        storage_options: settings of the destination store.
        **options: the options of :func:`open_writer`.

    Raises:
        SchemaError: an unknown option, a bad option value or a type ORC cannot hold.
        StoreError: writing failed (nothing is left at the destination).
    """
    if not isinstance(table, (pa.Table, pa.RecordBatch)):
        table = _from_pandas(table)
    writer = OrcWriter(dest, table.schema, storage_options=storage_options, _caller="write_table",
                       **options)
    async with writer:
        await writer.write(table)
