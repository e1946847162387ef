"""aorc as pyiceberg's ORC writer: a ``FileFormatModel`` for pyiceberg's ``FileFormatFactory``.

``import aorc.iceberg`` registers :class:`OrcFormatModel` (unless another ORC model was
registered first), so pyiceberg's own ``table.append(df)`` / ``table.overwrite(df)`` on a
table with ``write.format.default=orc`` write ORC through aorc, with the ORC appendix's
attributes and the metrics of :mod:`aorc.iceberg.metrics`. pyiceberg calls writers from its
worker threads and synchronously: :class:`OrcFormatWriter` runs aorc's async writer on
:mod:`aorc.sync`'s private event loop and writes through pyiceberg's ``OutputFile`` (its
FileIO decides where the bytes go). As with pyiceberg's Parquet writer, a write that fails
half-way can leave a partial file behind (never committed to the table).
"""

from __future__ import annotations

import asyncio
from typing import IO

import pyarrow as pa
from pyiceberg.io import OutputFile, OutputStream
from pyiceberg.io.fileformat import (
    DataFileStatistics,
    FileFormatFactory,
    FileFormatModel,
    FileFormatWriter,
)
from pyiceberg.manifest import FileFormat
from pyiceberg.schema import Schema
from pyiceberg.typedef import Properties
from pyiceberg.types import NestedField

from aorc import sync
from aorc.iceberg import config
from aorc.iceberg.schema import ICEBERG_ID, ICEBERG_REQUIRED, to_file_batches
from aorc.iceberg.write import write_one_file

__all__ = ["OrcFormatModel", "OrcFormatWriter", "PyIcebergOutput", "register"]


class PyIcebergOutput:
    """An :class:`aorc.io.output.Output` writing into a pyiceberg ``OutputFile``."""

    def __init__(self, output_file: OutputFile) -> None:
        self.path = output_file.location
        self._file = output_file
        self._stream: OutputStream | None = None

    def _open(self) -> IO[bytes]:
        if self._stream is None:
            self._stream = self._file.create(overwrite=True)
        return self._stream  # type: ignore[return-value]

    async def write(self, data: bytes | bytearray | memoryview) -> None:
        """Append bytes (in a worker thread: pyiceberg's streams block)."""
        await asyncio.to_thread(lambda: self._open().write(data))

    async def complete(self) -> None:
        """Close the stream: the file is complete."""
        await asyncio.to_thread(lambda: self._open().close())

    async def abort(self) -> None:
        """Close the stream (pyiceberg's OutputFile cannot delete what it wrote)."""
        stream, self._stream = self._stream, None
        if stream is not None:
            await asyncio.to_thread(stream.close)


class OrcFormatWriter(FileFormatWriter):
    """Writes one ORC data file for pyiceberg (see the module docstring)."""

    def __init__(self, output_file: OutputFile, file_schema: Schema,
                 properties: Properties) -> None:
        self._output_file = output_file
        self._schema = file_schema
        self._properties = dict(properties)
        self._tables: list[pa.Table] = []

    def write(self, table: pa.Table) -> None:
        """Take rows (written when the file is closed, in one pass)."""
        self._tables.append(table)

    def close(self) -> DataFileStatistics:
        """Write the file and return its statistics."""
        if self._result is not None:
            return self._result
        if not self._tables:
            raise ValueError("Cannot close a writer that was never written to")
        batches = to_file_batches(self._schema, self._tables)
        options = config.write_options(self._properties)
        _, stats = sync.run(write_one_file(PyIcebergOutput(self._output_file), self._schema,
                                           self._properties, batches, options))
        self._tables = []
        self._result = stats
        return stats


class OrcFormatModel(FileFormatModel):
    """pyiceberg's format model for ORC data files written by aorc."""

    @property
    def format(self) -> FileFormat:
        """``FileFormat.ORC``."""
        return FileFormat.ORC

    def file_extension(self) -> str:
        """``"orc"``.

        Returns:
            ``"orc"``.
        """
        return "orc"

    def create_writer(self, output_file: OutputFile, file_schema: Schema,
                      properties: Properties) -> OrcFormatWriter:
        """A writer of one data file.

        Args:
            output_file: pyiceberg's file to write.
            file_schema: the Iceberg schema of the file.
            properties: the table's properties (compression, stripe size, ...).

        Returns:
            An :class:`OrcFormatWriter`.
        """
        return OrcFormatWriter(output_file, file_schema, properties)

    def add_field_metadata(self, field: NestedField, metadata: dict[bytes, bytes],
                           include_field_ids: bool) -> None:
        """The Arrow field metadata pyiceberg's readers of ORC look at.

        Args:
            field: the Iceberg field.
            metadata: the Arrow field metadata to complete (in place).
            include_field_ids: whether to record the field id.
        """
        if include_field_ids:
            metadata[ICEBERG_ID.encode()] = str(field.field_id).encode()
        metadata[ICEBERG_REQUIRED.encode()] = str(field.required).lower().encode()


def register() -> bool:
    """Register :class:`OrcFormatModel` with pyiceberg (done by ``import aorc.iceberg``);
    False when an ORC model was registered already (it is left in place).

    Returns:
        True when this call registered the model.
    """
    if FileFormat.ORC in FileFormatFactory.available_formats():
        return False
    FileFormatFactory.register(OrcFormatModel())
    return True
