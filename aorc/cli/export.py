"""The outputs of ``aorc convert`` other than ORC: Parquet, CSV, JSON lines and Arrow IPC
(file or stream), written batch by batch through pyarrow's writers into an aorc output
(:func:`aorc.io.open_output`: a local file written beside the target and renamed over it, or
an object uploaded in parts), so that nothing is left at the destination when a conversion
fails.

The output format comes from the destination's extension (:data:`OUTPUT_FORMATS`) or is
given; an unknown extension is refused before anything is read or written.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import pyarrow as pa

from aorc.cli.jsonl import batch_jsonl_bytes
from aorc.cli.values import csv_column
from aorc.errors import SchemaError
from aorc.io import open_output
from aorc.io.output import Output

__all__ = [
    "OUTPUT_FORMATS",
    "OUTPUT_OPTIONS",
    "BatchWriter",
    "check_output_options",
    "output_format",
]

#: Output formats and the file extensions that select them (``arrow``: the Arrow IPC file
#: format, which Feather version 2 is; ``arrows``: the Arrow IPC stream format).
OUTPUT_FORMATS: dict[str, tuple[str, ...]] = {
    "orc": (".orc",),
    "parquet": (".parquet", ".pq", ".parq"),
    "csv": (".csv", ".tsv"),
    "jsonl": (".jsonl", ".ndjson", ".json"),
    "arrow": (".arrow", ".feather", ".ipc"),
    "arrows": (".arrows",),
}
#: The writer options each non-ORC output takes (ORC takes every :class:`aorc.WriteOptions`
#: field).
OUTPUT_OPTIONS: dict[str, frozenset[str]] = {
    "parquet": frozenset({"compression", "compression_level"}),
    "csv": frozenset(),
    "jsonl": frozenset(),
    "arrow": frozenset({"compression"}),
    "arrows": frozenset({"compression"}),
}
_PARQUET_CODECS = {"zstd": "zstd", "zlib": "gzip", "snappy": "snappy", "lz4": "lz4",
                   "none": "none"}
_IPC_CODECS = {"zstd": "zstd", "lz4": "lz4", "none": None}
#: Bytes gathered from pyarrow's writer before they are handed to the output.
FLUSH_BYTES = 8 << 20


def output_format(dest: str, to: str | None = None) -> str:
    """The output format: ``to`` when given, else the one ``dest``'s extension names.

    Raises:
        SchemaError: ``to`` is no known format, or the extension names none.
    """
    if to is not None:
        if to not in OUTPUT_FORMATS:
            raise SchemaError(f"unknown output format {to!r} (expected one of "
                              f"{', '.join(OUTPUT_FORMATS)})")
        return to
    ext = os.path.splitext(dest.rsplit("/", 1)[-1].lower())[1]
    for fmt, extensions in OUTPUT_FORMATS.items():
        if ext in extensions:
            return fmt
    known = " ".join(e for exts in OUTPUT_FORMATS.values() for e in exts)
    raise SchemaError(f"cannot tell the output format of {dest} from its extension "
                      f"{ext or '(none)'!r}; known: {known}; or give --to "
                      f"({', '.join(OUTPUT_FORMATS)})")


def check_output_options(fmt: str, given: Mapping[str, Any]) -> None:
    """Refuse writer options that ``fmt`` does not take, and codecs it does not have.

    Raises:
        SchemaError: naming the first option that does not apply.
    """
    if fmt == "orc":
        return
    for name in given:
        if name not in OUTPUT_OPTIONS[fmt]:
            flag = "--" + name.replace("_", "-").replace("use-threads", "threads")
            raise SchemaError(f"{flag} applies to ORC output only; the output is {fmt}"
                              + (" (which takes --compression)" if OUTPUT_OPTIONS[fmt] else ""))
    codec = given.get("compression")
    codecs = _PARQUET_CODECS if fmt == "parquet" else _IPC_CODECS
    if codec is not None and codec not in codecs:
        raise SchemaError(f"--compression {codec} is not available for {fmt} output "
                          f"(choose from {', '.join(codecs)})")


class _Chunks:
    """A write-only file that keeps what pyarrow's writers write, to be taken in chunks."""

    def __init__(self) -> None:
        self.parts: list[bytes] = []
        self.pending = 0
        self.position = 0
        self.closed = False

    def write(self, data: Any) -> int:
        chunk = bytes(data)
        self.parts.append(chunk)
        self.pending += len(chunk)
        self.position += len(chunk)
        return len(chunk)

    def tell(self) -> int:
        return self.position

    def flush(self) -> None:
        pass

    def writable(self) -> bool:
        return True

    def close(self) -> None:
        self.closed = True

    def take(self) -> bytes:
        data = b"".join(self.parts)
        self.parts, self.pending = [], 0
        return data


class BatchWriter:
    """Record batches written as one Parquet, CSV, JSON lines or Arrow IPC file.

    Use as ``async with BatchWriter(...) as w: await w.write(batch)``: the file appears at
    ``dest`` when the block ends without an error, and nothing does otherwise.

    Args:
        dest: a local path or a store URL.
        fmt: one of :data:`OUTPUT_FORMATS` but ``orc``.
        schema: the batches' schema.
        options: writer options (see :data:`OUTPUT_OPTIONS`).
        storage_options: store settings for ``dest``.
        delimiter: the CSV field delimiter (default: a tab for ``.tsv``, else a comma).
    """

    def __init__(self, dest: str, fmt: str, schema: pa.Schema,
                 options: Mapping[str, Any] | None = None,
                 storage_options: Mapping[str, Any] | None = None,
                 delimiter: str | None = None) -> None:
        options = dict(options or {})
        check_output_options(fmt, options)
        self.fmt, self.schema, self.bytes_written = fmt, schema, 0
        self._sink = _Chunks()
        self._text_schema = schema
        self._writer = self._open(dest, fmt, schema, options, delimiter)
        self._output: Output = open_output(dest, storage_options)

    def _open(self, dest: str, fmt: str, schema: pa.Schema, options: dict[str, Any],
              delimiter: str | None) -> Any:
        codec = options.get("compression")
        if fmt == "parquet":
            import pyarrow.parquet as pq
            return pq.ParquetWriter(self._sink, schema,
                                    compression=_PARQUET_CODECS[codec or "snappy"],
                                    compression_level=options.get("compression_level"))
        if fmt in ("arrow", "arrows"):
            ipc = pa.ipc.IpcWriteOptions(compression=_IPC_CODECS[codec or "none"])
            new = pa.ipc.new_file if fmt == "arrow" else pa.ipc.new_stream
            return new(self._sink, schema, options=ipc)
        if fmt == "csv":
            from pyarrow import csv
            empty = pa.RecordBatch.from_pylist([], schema=schema)
            text_schema = pa.schema([f.with_type(csv_column(c).type)
                                     for f, c in zip(schema, empty.columns, strict=True)])
            if delimiter is None:
                delimiter = "\t" if dest.lower().endswith(".tsv") else ","
            self._text_schema = text_schema
            return csv.CSVWriter(self._sink, text_schema, write_options=csv.WriteOptions(
                quoting_style="needed", delimiter=delimiter))
        if fmt == "jsonl":
            return None
        raise SchemaError(f"unknown output format {fmt!r}")  # pragma: no cover

    async def __aenter__(self) -> BatchWriter:
        return self

    async def __aexit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is None:
            await self._finish()
        else:
            await self._output.abort()

    async def write(self, batch: pa.RecordBatch) -> None:
        """Append ``batch`` (of the writer's schema)."""
        if self.fmt == "jsonl":
            self._sink.write(batch_jsonl_bytes(batch))
        elif self.fmt == "csv":
            self._writer.write_batch(pa.RecordBatch.from_arrays(
                [csv_column(c) for c in batch.columns], schema=self._text_schema))
        else:
            self._writer.write_batch(batch)
        if self._sink.pending >= FLUSH_BYTES:
            await self._flush()

    async def _flush(self) -> None:
        data = self._sink.take()
        if data:
            await self._output.write(data)
            self.bytes_written += len(data)

    async def _finish(self) -> None:
        try:
            if self._writer is not None:
                self._writer.close()
            await self._flush()
        except BaseException:
            await self._output.abort()
            raise
        await self._output.complete()
