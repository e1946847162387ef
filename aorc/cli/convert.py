"""The work behind ``aorc convert`` and ``aorc cat``: reading CSV, JSON lines, Parquet, Arrow
IPC and ORC inputs batch by batch, writing ORC through :func:`aorc.open_writer` (or Parquet,
CSV, JSON lines or Arrow IPC through :mod:`aorc.cli.export`), and a progress bar.

Inputs are local paths or store URLs. ORC inputs are read with aorc (from stores directly);
CSV, JSON lines, Parquet and Arrow inputs on stores are first copied to a temporary local file with
aorc's S3 store (pyarrow's readers need a file), which is removed afterwards. CSV and JSON
inputs may be compressed (``.gz``, ``.bz2``, ``.zst``, ``.lz4`` by their extension).

Types come from the input (CSV and JSON: inferred from the first block of rows) unless
``schema`` gives an ORC type string, e.g. ``struct<id:bigint,name:varchar(20)>``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import tempfile
import time
from collections.abc import AsyncGenerator, AsyncIterator, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, BinaryIO, TextIO

import pyarrow as pa

from aorc.cli.export import BatchWriter, check_output_options, output_format
from aorc.dataset.discovery import file_or_dataset, is_dataset_source
from aorc.dataset.entry import open_dataset
from aorc.dataset.read import Dataset
from aorc.errors import AorcError, CorruptFileError, ObjectNotFoundError, SchemaError
from aorc.format.types import parse_type_string, to_arrow_schema
from aorc.io import open_store
from aorc.io.registry import is_remote
from aorc.keys import KeyProvider
from aorc.options import WriteOptions
from aorc.progress import ProgressHook, ProgressTracker
from aorc.read.reader import OrcReader, open_reader
from aorc.write.writer import open_writer

__all__ = [
    "FORMATS",
    "ConvertResult",
    "CsvOptions",
    "Progress",
    "convert",
    "detect_format",
    "input_format",
    "isatty",
    "options_for",
]

#: Input formats and the file extensions that select them.
FORMATS: dict[str, tuple[str, ...]] = {
    "csv": (".csv", ".tsv", ".txt"),
    "jsonl": (".jsonl", ".ndjson", ".json"),
    "parquet": (".parquet", ".pq", ".parq"),
    "arrow": (".arrow", ".feather", ".ipc", ".arrows"),
    "orc": (".orc",),
}
_COMPRESSION = {".gz": "gzip", ".bz2": "bz2", ".zst": "zstd", ".lz4": "lz4"}
#: Bytes per ranged request when copying an S3 input to a local file.
DOWNLOAD_CHUNK = 8 * 1024 * 1024
#: Rows per batch read from Parquet and ORC inputs.
BATCH_ROWS = 65_536
#: Bytes per block read from CSV and JSON inputs.
BLOCK_BYTES = 1 << 20


# =========================================================================== progress

def _size_text(n: float, unit: str) -> str:
    if unit != "B":
        return f"{n:,.0f} {unit}"
    for suffix in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or suffix == "TiB":
            return f"{n:.0f} {suffix}" if suffix == "B" else f"{n:.1f} {suffix}"
        n /= 1024
    return f"{n:.1f} TiB"  # pragma: no cover


class Progress:
    """A one-line progress bar on a terminal (nothing when the stream is not a TTY).

    Args:
        label: what is being done.
        total: the amount of work (``None``: unknown, no bar, just a counter).
        unit: ``"B"`` for bytes or a word such as ``"rows"``.
        stream: where to draw; standard error by default.
        enabled: force on or off; default: whether ``stream`` is a TTY.
        hook: a caller's progress hook, told of the same counts (unit ``"bytes"`` for
            ``"B"``).
    """

    def __init__(self, label: str, total: int | None, unit: str = "B", *,
                 stream: TextIO | None = None, enabled: bool | None = None,
                 hook: ProgressTracker | None = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = isatty(self.stream) if enabled is None else enabled
        self.label, self.total, self.unit = label, total, unit
        self.done = 0
        self.hook = hook
        if hook is not None:
            hook.unit = "bytes" if unit == "B" else unit
            if total is not None:
                hook.set_total(total)
        self._start = time.monotonic()
        self._drawn = 0.0
        self._drawn_done: int | None = None

    def update(self, n: int) -> None:
        """Count ``n`` more units done."""
        self.done += n
        if self.hook is not None:
            self.hook.advance(n)
        now = time.monotonic()
        if self.enabled and now - self._drawn >= 0.1:
            self._draw(now)

    def set(self, done: int) -> None:
        """Set the units done so far."""
        self.update(done - self.done)

    def _draw(self, now: float) -> None:
        self._drawn, self._drawn_done = now, self.done
        elapsed = max(now - self._start, 1e-9)
        rate = f"{_size_text(self.done / elapsed, self.unit)}/s"
        if self.total:
            share = min(1.0, self.done / self.total)
            bar = "#" * int(share * 30)
            text = (f"{self.label} [{bar:<30}] {share * 100:5.1f}% "
                    f"{_size_text(self.done, self.unit)} / {_size_text(self.total, self.unit)} "
                    f"{rate}")
        else:
            text = f"{self.label} {_size_text(self.done, self.unit)} {rate}"
        self.stream.write("\r" + text + "\x1b[K")
        self.stream.flush()

    def close(self) -> None:
        """Draw the final state (unless it is on the line already) and end the line."""
        if self.enabled and self._drawn:
            if self._drawn_done != self.done:
                self._draw(time.monotonic())
            self.stream.write("\n")
            self.stream.flush()


def isatty(stream: TextIO) -> bool:
    """Whether ``stream`` is a terminal (false for streams that cannot tell)."""
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


# =========================================================================== inputs

def detect_format(path: str) -> str:
    """The input format from a file name's extension (before any compression suffix).

    Raises:
        SchemaError: the extension names no known format.
    """
    name = path.rsplit("/", 1)[-1].lower()
    stem, ext = os.path.splitext(name)
    if ext in _COMPRESSION:
        stem, ext = os.path.splitext(stem)
    for fmt, extensions in FORMATS.items():
        if ext in extensions:
            return fmt
    raise SchemaError(f"cannot tell the format of {path} from its extension; use --from "
                      f"({', '.join(FORMATS)})")


class _CountingFile:
    """A binary file that counts the bytes read from it (for the progress bar)."""

    def __init__(self, f: BinaryIO) -> None:
        self._f = f
        self.count = 0
        self.closed = False

    def read(self, n: int = -1) -> bytes:
        data = self._f.read(n)
        self.count += len(data)
        return data

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return False

    def close(self) -> None:
        self.closed = True
        self._f.close()


def _text_stream(path: str, counter: _CountingFile) -> pa.NativeFile:
    ext = os.path.splitext(path.lower())[1]
    raw = pa.PythonFile(counter, mode="r")
    if ext in _COMPRESSION:
        return pa.CompressedInputStream(raw, _COMPRESSION[ext])
    return raw


#: The CSV fields read as null by default: pyarrow.csv's list without its spellings of NaN
#: (``NaN``, ``nan``, ``-NaN``, ``-nan``), which read as the float NaN that ``aorc cat
#: --format csv`` and ``aorc convert x.orc x.csv`` write for it.
DEFAULT_NULL_VALUES = ("", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "1.#IND",
                       "1.#QNAN", "N/A", "NA", "NULL", "n/a", "null")


@dataclass(frozen=True)
class CsvOptions:
    """How CSV text is parsed.

    Attributes:
        delimiter: the field delimiter.
        null_values: fields that mean null (``None``: :data:`DEFAULT_NULL_VALUES`,
            ``""``, ``NULL``, ``null``, ``NA``, ``N/A``, ...; NaN is a float). They apply to
            non-string columns, and to string columns with ``strings_can_be_null``; an
            empty field of a non-string column is null in any case (unless
            ``strings_can_be_null`` is set with a list that leaves ``""`` out).
        strings_can_be_null: string columns also read ``null_values`` as null (otherwise
            an empty field is ``""`` and ``null`` is the text ``"null"``).
    """

    delimiter: str = ","
    null_values: tuple[str, ...] | None = None
    strings_can_be_null: bool = False


def _one_column(path: str, name: str, read: Any, parse: Any) -> bool:
    """Whether the CSV file at ``path`` has one column (its first block, parsed apart)."""
    from pyarrow import csv
    try:
        with open(path, "rb") as f:
            probe = csv.open_csv(_text_stream(name, _CountingFile(f)), read_options=read,
                                 parse_options=parse)
            return len(probe.schema) == 1
    except (pa.ArrowInvalid, OSError):
        return False  # the real read says what is wrong


def _csv_batches(path: str, name: str, schema: pa.Schema | None, options: CsvOptions,
                 counter: _CountingFile) -> Iterator[pa.RecordBatch]:
    from pyarrow import csv

    extra: dict[str, Any] = {"strings_can_be_null": options.strings_can_be_null}
    nulls = list(DEFAULT_NULL_VALUES if options.null_values is None else options.null_values)
    if not options.strings_can_be_null and "" not in nulls:
        nulls.append("")  # an empty field of a non-string column is always null
    extra["null_values"] = nulls
    convert = csv.ConvertOptions(column_types=dict(zip(schema.names, schema.types,
                                                       strict=True)) if schema else None,
                                 **extra)
    read = csv.ReadOptions(block_size=BLOCK_BYTES)
    parse = csv.ParseOptions(delimiter=options.delimiter)
    if _one_column(path, name, read, parse):
        # A blank line of a one-column file is a row of one empty field (a null that
        # ``aorc convert x.orc x.csv`` wrote): pyarrow would drop it. In a wider file a
        # blank line is no row and is skipped, as pyarrow does.
        parse = csv.ParseOptions(delimiter=options.delimiter, ignore_empty_lines=False)
    reader = csv.open_csv(_text_stream(name, counter), read_options=read,
                          parse_options=parse, convert_options=convert)
    yield pa.RecordBatch.from_pylist([], schema=reader.schema)  # the schema, even if empty
    yield from reader


def _json_batches(path: str, name: str, schema: pa.Schema | None,
                  counter: _CountingFile) -> Iterator[pa.RecordBatch]:
    from pyarrow import json

    parse = json.ParseOptions(explicit_schema=schema, unexpected_field_behavior="infer")
    reader = json.open_json(_text_stream(name, counter),
                            read_options=json.ReadOptions(block_size=BLOCK_BYTES),
                            parse_options=parse)
    yield pa.RecordBatch.from_pylist([], schema=reader.schema)
    yield from reader


def _arrow_batches(path: str) -> Iterator[pa.RecordBatch]:
    """An Arrow IPC file (Feather version 2) or stream, told apart by the file's magic."""
    with open(path, "rb") as probe:
        is_file = probe.read(6) == b"ARROW1"
    with pa.memory_map(path) as source:
        if is_file:
            reader = pa.ipc.open_file(source)
            yield pa.RecordBatch.from_pylist([], schema=reader.schema)
            for i in range(reader.num_record_batches):
                yield reader.get_batch(i)
        else:
            stream = pa.ipc.open_stream(source)
            yield pa.RecordBatch.from_pylist([], schema=stream.schema)
            yield from stream


def _parquet_batches(path: str) -> Iterator[pa.RecordBatch]:
    import pyarrow.parquet as pq

    with pq.ParquetFile(path) as f:
        yield pa.RecordBatch.from_pylist([], schema=f.schema_arrow)
        yield from f.iter_batches(batch_size=BATCH_ROWS)


@dataclass
class _Input:
    """Batches of a local CSV/JSON/Parquet file, read in a worker thread, with progress."""

    path: str
    name: str
    fmt: str
    schema: pa.Schema | None
    csv: CsvOptions

    def total(self) -> tuple[int | None, str]:
        if self.fmt == "parquet":
            import pyarrow.parquet as pq
            with pq.ParquetFile(self.path) as f:
                return f.metadata.num_rows, "rows"
        if self.fmt == "arrow":
            return None, "rows"
        return os.path.getsize(self.path), "B"

    async def batches(self, progress: Progress) -> AsyncIterator[pa.RecordBatch]:
        with open(self.path, "rb") as f:
            counter = _CountingFile(f)
            if self.fmt == "csv":
                it = _csv_batches(self.path, self.name, self.schema, self.csv, counter)
            elif self.fmt == "jsonl":
                it = _json_batches(self.path, self.name, self.schema, counter)
            elif self.fmt == "arrow":
                it = _arrow_batches(self.path)
            else:
                it = _parquet_batches(self.path)
            done = object()
            while True:
                batch = await asyncio.to_thread(next, it, done)
                if batch is done:
                    return
                assert isinstance(batch, pa.RecordBatch)
                if self.fmt in ("parquet", "arrow"):
                    progress.update(batch.num_rows)
                else:
                    progress.set(counter.count)
                yield batch


async def _download(uri: str, storage_options: Mapping[str, Any] | None,
                    progress_enabled: bool | None, suffix: str) -> str:
    """Copy an S3 object to a temporary local file; returns its path."""
    store = open_store(uri, storage_options)
    fd, path = tempfile.mkstemp(prefix="aorc-convert-", suffix=suffix)
    try:
        with os.fdopen(fd, "wb") as out:
            _, size = await store.read_tail(1)
            progress = Progress(f"downloading {uri}", size, enabled=progress_enabled)
            for start in range(0, size, 4 * DOWNLOAD_CHUNK):
                end = min(size, start + 4 * DOWNLOAD_CHUNK)
                ranges = [(o, min(DOWNLOAD_CHUNK, end - o))
                          for o in range(start, end, DOWNLOAD_CHUNK)]
                for data in await store.read_ranges(ranges):
                    out.write(data)
                    progress.update(len(data))
            progress.close()
    except BaseException:
        os.unlink(path)
        raise
    finally:
        await store.close()
    return path


# =========================================================================== converting

@dataclass
class ConvertResult:
    """What :func:`convert` did."""

    rows: int
    bytes_written: int
    schema: pa.Schema


_WIDER = {pa.uint8(): pa.int16(), pa.uint16(): pa.int32(), pa.uint32(): pa.int64(),
          pa.uint64(): pa.int64(), pa.float16(): pa.float32(), pa.null(): pa.string()}


def _writable(schema: pa.Schema) -> pa.Schema:
    """``schema`` with types ORC has no exact match for widened (unsigned integers, half
    floats, all-null columns)."""
    return pa.schema([f.with_type(_WIDER.get(f.type, f.type)) for f in schema])


def _cast(batch: pa.RecordBatch, schema: pa.Schema, name: str) -> pa.RecordBatch:
    if batch.schema.equals(schema):
        return batch
    try:
        if batch.schema.names != schema.names:
            batch = batch.select(schema.names)
        return batch.cast(schema)
    except (KeyError, pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as exc:
        raise SchemaError(f"{name}: cannot convert the rows to the schema {schema}: "
                          f"{exc}") from exc


async def input_format(src: str, storage_options: Mapping[str, Any] | None) -> str:
    """The input format of ``src`` from its extension; without a known one, ``orc`` when it
    is a folder, a prefix or an ORC file (as :func:`aorc.read_table` decides "file or
    dataset"; Hive's files have no extension).

    Raises:
        SchemaError: the extension names no format and ``src`` is no ORC file or dataset.
    """
    try:
        return detect_format(src)
    except SchemaError:
        if await is_dataset_source(src):
            return "orc"
        try:
            async with open_reader(src, storage_options=storage_options):
                return "orc"
        except ObjectNotFoundError:
            if is_remote(src):
                return "orc"  # a prefix, or nothing: the dataset's listing says which
        except CorruptFileError:
            pass
        raise


async def _orc_batches(src: str, storage_options: Mapping[str, Any] | None,
                       progress_enabled: bool | None, hook: ProgressTracker | None
                       ) -> AsyncGenerator[pa.RecordBatch, None]:
    """The batches of the ORC file, folder or prefix ``src`` names (decided as
    :func:`aorc.read_table` decides); the first one is empty and carries the schema."""
    async def one_file() -> OrcReader:
        return await open_reader(src, storage_options=storage_options)

    async def dataset() -> Dataset:
        return await open_dataset(src, storage_options=storage_options)

    opened: OrcReader | Dataset = await file_or_dataset(src, one_file, dataset)
    try:
        progress = Progress(f"converting {src}", opened.num_rows, "rows",
                            enabled=progress_enabled, hook=hook)
        yield pa.RecordBatch.from_pylist([], schema=opened.schema)
        async with contextlib.aclosing(opened.iter_batches(batch_size=BATCH_ROWS)) as it:
            async for batch in it:
                progress.update(batch.num_rows)
                yield batch
        progress.close()
    finally:
        if isinstance(opened, OrcReader):
            await opened.close()


async def _batches(src: str, fmt: str, schema: pa.Schema | None, csv: CsvOptions,
                   storage_options: Mapping[str, Any] | None, progress_enabled: bool | None,
                   hook: ProgressTracker | None) -> AsyncGenerator[pa.RecordBatch, None]:
    """The input's batches; the first one is empty and carries the schema."""
    if fmt == "orc":
        async for batch in _orc_batches(src, storage_options, progress_enabled, hook):
            yield batch
        return
    suffix = "".join(os.path.splitext(src.rsplit("/", 1)[-1])[1:])
    local = (await _download(src, storage_options, progress_enabled, suffix)
             if is_remote(src) else src)
    try:
        source = _Input(local, src, fmt, schema, csv)
        total, unit = await asyncio.to_thread(source.total)
        progress = Progress(f"converting {src}", total, unit, enabled=progress_enabled,
                            hook=hook)
        async for batch in source.batches(progress):
            yield batch
        progress.close()
    finally:
        if local != src:
            os.unlink(local)


async def convert(src: str, dest: str, *, fmt: str | None = None, schema: str | None = None,
                  delimiter: str = ",", storage_options: Mapping[str, Any] | None = None,
                  progress: bool | ProgressHook | None = None,
                  null_values: Sequence[str] | None = None,
                  strings_can_be_null: bool = False, options: WriteOptions | None = None,
                  to: str | None = None, keys: KeyProvider | None = None,
                  **write_options: Any) -> ConvertResult:
    """Convert a CSV, JSON lines, Parquet, Arrow IPC or ORC file to an ORC, Parquet, CSV,
    JSON lines or Arrow IPC file, batch by batch.

    Args:
        src: the input: a local path or a store URL (``s3://``, ...); an ORC input may be a
            folder or a prefix, read as a dataset (decided as :func:`aorc.read_table`
            decides).
        dest: the output: a local path or a store URL (written atomically: nothing is
            left there when the conversion fails).
        fmt: the input format (``csv``, ``jsonl``, ``parquet``, ``arrow``, ``orc``);
            default: from the extension of ``src``.
        to: the output format (``orc``, ``parquet``, ``csv``, ``jsonl``, ``arrow`` for the
            Arrow IPC file format, ``arrows`` for its stream format); default: from the
            extension of ``dest`` (see :data:`aorc.cli.export.OUTPUT_FORMATS`).
        schema: an ORC type string for the output (CSV and JSON inputs are parsed with it).
        delimiter: the CSV field delimiter (of a CSV input; of a CSV output too when it is
            not the default ``,``; a ``.tsv`` output is tab-separated otherwise).
        null_values: CSV fields read as null (default: :data:`DEFAULT_NULL_VALUES`,
            pyarrow.csv's list less its spellings of NaN; see :class:`CsvOptions`).
        strings_can_be_null: CSV string columns read ``null_values`` as null too.
        storage_options: store settings (see :func:`aorc.io.open_store`), for the remote
            side(s); for both sides when neither is remote.
        progress: ``True``/``False``: show a progress bar on standard error, or not
            (default: when it is a terminal); or a hook (a callable taking an
            :class:`aorc.ProgressEvent`, or a tqdm-like bar; see :mod:`aorc.progress`),
            told of the rows converted (bytes for CSV and JSON inputs), with no bar.
        options: an :class:`aorc.WriteOptions` for an ORC output (default: the defaults).
        keys: the key provider of ``encrypt`` (ORC output).
        **write_options: fields of :class:`aorc.WriteOptions`, overriding ``options``; for
            other outputs only ``compression`` (Parquet: zstd, zlib, snappy, lz4, none;
            Arrow: zstd, lz4, none) and ``compression_level`` (Parquet).

    Raises:
        SchemaError: an unknown output format or extension, or writer options the output
            format does not take (raised before anything is read or written).
        AorcError: unreadable input, bad options, a failed write (nothing is left at
            ``dest``).
    """
    out_fmt = output_format(dest, to)
    if out_fmt != "orc":
        check_output_options(out_fmt, write_options)
        if options is not None:
            raise SchemaError(f"options (WriteOptions) apply to ORC output only; the output "
                              f"is {out_fmt}")
    write = WriteOptions.create(options, write_options if out_fmt == "orc" else {},
                                caller="convert")
    bar = progress if progress is None or isinstance(progress, bool) else False
    hook = None if progress is None or isinstance(progress, bool) else \
        ProgressTracker(progress, "convert", "rows")
    src_options = options_for(src, storage_options, src, dest)
    fmt = fmt or await input_format(src, src_options)
    if fmt not in FORMATS:
        raise SchemaError(f"unknown input format {fmt!r} (expected one of {', '.join(FORMATS)})")
    out_type = parse_type_string(schema) if schema else None
    wanted = to_arrow_schema(out_type) if out_type is not None else None
    dest_options = options_for(dest, storage_options, src, dest)
    csv = CsvOptions(delimiter, tuple(null_values) if null_values is not None else None,
                     strings_can_be_null)
    async with contextlib.aclosing(_batches(src, fmt, wanted, csv, src_options,
                                            bar, hook)) as it:
        first = await anext(it)
        if out_fmt != "orc":
            target = wanted if wanted is not None else first.schema
            export = BatchWriter(dest, out_fmt, target, write_options, dest_options,
                                 None if delimiter == "," else delimiter)
            return await _write_all(it, export, target, src)
        target = wanted if wanted is not None else _writable(first.schema)
        writer = open_writer(dest, schema if schema else target, write,
                             storage_options=dest_options, keys=keys)
        return await _write_all(it, writer, target, src)


async def _write_all(batches: AsyncIterator[pa.RecordBatch], writer: Any, target: pa.Schema,
                     src: str) -> ConvertResult:
    rows = 0
    async with writer:
        async for batch in batches:
            await writer.write(_cast(batch, target, src))
            rows += batch.num_rows
    return ConvertResult(rows, writer.bytes_written, target)


def options_for(path: str, options: Mapping[str, Any] | None,
                *paths: str) -> Mapping[str, Any] | None:
    """The storage options for ``path`` among ``paths``: S3 settings go to the ``s3://``
    ones only; when none is on S3 they all get them (so a bad option is still reported)."""
    if not options or is_remote(path) or not any(is_remote(p) for p in paths):
        return options
    return None


def arrow_error(exc: pa.ArrowException, name: str, *,
                suggest_schema: bool = True) -> AorcError:
    """An :class:`AorcError` for a pyarrow error raised while reading ``name``: a type
    error suggests ``--schema`` (when one was given: that a value does not fit it)."""
    text = " ".join(str(exc).split())
    lowered = text.lower()
    hint = ""
    if "conversion error" in lowered or "changed" in lowered:
        hint = (" (use --schema to give the column types)" if suggest_schema else
                " (a value does not have the type --schema gives its column)")
        if "number to string" in lowered or "string to number" in lowered:
            hint = hint[:-1] + ("; a JSON number column reads non-finite values written "
                                "NaN, Infinity and -Infinity, unquoted)")
    return AorcError(f"{name}: {text}{hint}")
