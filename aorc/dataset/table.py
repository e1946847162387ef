"""One call for one file or a dataset: :func:`read_table` tells them apart (see
:func:`aorc.dataset.discovery.file_or_dataset`) and reads either into an Arrow table."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

import pyarrow as pa

from aorc.dataset.discovery import DatasetSource, file_or_dataset
from aorc.dataset.entry import read_dataset
from aorc.errors import SchemaError
from aorc.format.codec.budget import DEFAULT_MAX_DECODED_BYTES
from aorc.io import Source
from aorc.keys import KeyProvider
from aorc.read.reader import open_reader

__all__ = ["read_table"]


async def read_table(source: Source | DatasetSource, *, columns: Sequence[str] | None = None,
                     filters: Any = None,
                     storage_options: Mapping[str, Any] | None = None,
                     timestamp_unit: str = "ns", use_threads: bool | int = True,
                     stripes: Sequence[int] | None = None,
                     read_dictionary: Sequence[str] | None = None,
                     max_decoded_bytes: int = DEFAULT_MAX_DECODED_BYTES,
                     keys: KeyProvider | None = None,
                     use_writer_timezone: bool = False) -> pa.Table:
    """Read a whole ORC file (or some of its columns, or the rows matching ``filters``) into
    an Arrow table.

    Args:
        source: as for :func:`aorc.open_reader`; a folder, an object-store prefix (with or
            without a trailing ``/``) or a list of files is read as a dataset (see
            :func:`read_dataset`).
        columns: top-level column names or dotted nested paths, in the order wanted;
            ``None`` reads all.
        filters: as for :meth:`aorc.OrcReader.iter_batches`, e.g. ``[("id", "==", 42)]``,
            or a :class:`pyarrow.compute.Expression`.
        storage_options: as for :func:`aorc.open_reader`.
        timestamp_unit: as for :func:`aorc.open_reader`.
        use_threads: for one file, as for :meth:`aorc.OrcReader.read` (decode stripes and
            columns on several threads); the files of a dataset are read concurrently.
        stripes: for one file, the stripes to read (see :meth:`aorc.OrcReader.read`).
        read_dictionary: string or binary columns read as Arrow dictionaries, as
            :func:`aorc.open_reader` (the name of ``pyarrow.parquet.read_table``'s option).
        max_decoded_bytes: the most bytes the decompressed streams of one stripe may take,
            as :func:`aorc.open_reader` (default 1 GiB; more raises
            :class:`aorc.ResourceLimitError`).
        keys: a key provider for encrypted columns, as for :func:`aorc.open_reader`.
        use_writer_timezone: ``timestamp`` columns as the instants they hold in the
            writer's time zone, as for :func:`aorc.open_reader`.

    Raises:
        SchemaError: ``stripes`` given for a dataset, or as :meth:`aorc.OrcReader.read`.
        ResourceLimitError: a stripe needs more than ``max_decoded_bytes``.

    Returns:
        The rows read, as a ``pyarrow.Table``.
    """
    async def one_file() -> pa.Table:
        async with open_reader(cast(Source, source), storage_options=storage_options,
                               timestamp_unit=timestamp_unit,
                               read_dictionary=read_dictionary,
                               max_decoded_bytes=max_decoded_bytes, keys=keys,
                               use_writer_timezone=use_writer_timezone) as reader:
            return await reader.read(columns, filters=filters, use_threads=use_threads,
                                     stripes=stripes)

    async def dataset() -> pa.Table:
        if stripes is not None:
            raise SchemaError("stripes= selects stripes of one file; this is a dataset")
        return await read_dataset(cast(DatasetSource, source), columns=columns,
                                  filters=filters, storage_options=storage_options,
                                  timestamp_unit=timestamp_unit,
                                  read_dictionary=read_dictionary,
                                  max_decoded_bytes=max_decoded_bytes, keys=keys,
                                  use_writer_timezone=use_writer_timezone)

    table: pa.Table = await file_or_dataset(source, one_file, dataset)
    return table
