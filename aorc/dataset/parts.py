"""Writing an engine task's rows as part files whose names the task's number decides.

The engine front ends (:mod:`aorc.ray`, :mod:`aorc.dask`, :mod:`aorc.daft`) write each task's
rows with :func:`write_part`: the files are named from one id per write (made once by the
driver, :func:`new_write_id`) and the task's number, so a task that an engine retries writes
the same names again (each file replaced whole, never a second copy), and every file appears
only when complete (local files are renamed into place, S3 objects completed), so a task
that fails or is killed leaves no visible partial file.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa

from aorc.dataset.write import write_dataset
from aorc.errors import SchemaError
from aorc.options import WriteOptions

__all__ = ["new_write_id", "part_template", "write_part", "write_part_async"]


def new_write_id() -> str:
    """A random id naming the files of one write (made once, on the driver)."""
    return uuid.uuid4().hex[:16]


def part_template(write_id: str, task: int) -> str:
    """The ``basename_template`` of task ``task``'s files: ``part-<id>-<task>-<i>.orc``."""
    if task < 0:
        raise SchemaError(f"a task number is not negative, got {task}")
    return f"part-{write_id}-{task:05d}-{{i}}.orc"


async def write_part_async(table: pa.Table, dest: str, write_id: str, task: int, *,
                           partition_cols: Sequence[str] | None = None,
                           storage_options: Mapping[str, Any] | None = None,
                           options: WriteOptions | None = None,
                           write_options: Mapping[str, Any] | None = None) -> list[str]:
    """Write one task's rows under ``dest`` (Hive folders by ``partition_cols``), on the
    caller's event loop (an engine worker runs it on a loop it keeps, whose store clients
    its next tasks reuse).

    Returns:
        The files written (none for no rows).

    Raises:
        SchemaError: bad options or a type ORC cannot hold.
        StoreError: the write failed (its files are removed).
    """
    if not table.num_rows:
        return []
    return await write_dataset(
        table, dest, partition_cols=list(partition_cols or []),
        basename_template=part_template(write_id, task), storage_options=storage_options,
        options=options, **dict(write_options or {}))


def write_part(table: pa.Table, dest: str, write_id: str, task: int, *,
               partition_cols: Sequence[str] | None = None,
               storage_options: Mapping[str, Any] | None = None,
               options: WriteOptions | None = None,
               write_options: Mapping[str, Any] | None = None) -> list[str]:
    """:func:`write_part_async` in a new event loop (for a synchronous caller without a loop
    of its own).

    Returns:
        The files written (none for no rows).

    Raises:
        SchemaError: bad options or a type ORC cannot hold.
        StoreError: the write failed (its files are removed).
    """
    return asyncio.run(write_part_async(
        table, dest, write_id, task, partition_cols=partition_cols,
        storage_options=storage_options, options=options, write_options=write_options))
