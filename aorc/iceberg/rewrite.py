"""Compaction inside an Iceberg table: small ORC data files merged into large ones and
swapped in by one atomic snapshot (``rewrite_files``).

Files are chosen among the data files that may hold rows matching ``where`` (all by
default): those below ``min_file_size`` (75 % of the target, as Iceberg's
``RewriteDataFiles``), grouped by partition spec and partition, packed in file-path order
into bins of at most ``target_size`` bytes; a bin of at least ``min_input_files`` files
becomes one new file in the same partition:

- by copying stripes (:mod:`aorc.write.merge`) when the files agree on their ORC type,
  codec, writer and the rest (files aorc wrote with the same options do) and no delete file
  applies to them: nothing is decoded, and the new file's metrics are the inputs' merged
  (counts added, bounds widened);
- otherwise by re-encoding: the rows are read with aorc (deletes applied, the table's
  current schema) and written as a new file with the table's ``write.orc.*`` options.

The commit replaces the inputs with the outputs in one snapshot (readers see every row
exactly once before and after), validated against concurrent commits by pyiceberg (an input
deleted meanwhile, or new deletes for it, fail the rewrite; the new files are then deleted).
Its operation is ``overwrite`` with ``aorc.rewrite=true`` in the summary: pyiceberg 0.12
cannot write the summary of a ``replace`` snapshot (Iceberg Java's compaction operation),
so incremental readers that skip ``replace`` snapshots see this one as a change.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pyiceberg.conversions import from_bytes
from pyiceberg.exceptions import CommitFailedException, ValidationException
from pyiceberg.expressions import AlwaysTrue
from pyiceberg.manifest import DataFile, DataFileContent, FileFormat
from pyiceberg.schema import Schema
from pyiceberg.table import Table
from pyiceberg.table.snapshots import Snapshot
from pyiceberg.types import PrimitiveType

from aorc.errors import UnsupportedFeatureError
from aorc.iceberg import config
from aorc.iceberg.filters import iceberg_filter
from aorc.iceberg.read import FileTask, IcebergScan, plan_tasks
from aorc.iceberg.schema import field_ids, to_file_batches
from aorc.iceberg.write import (
    WrittenFile,
    commit,
    data_file,
    delete_written,
    write_one_file,
)
from aorc.io.base import gather_or_cancel
from aorc.read.reader import open_reader
from aorc.write.merge import merge_files

__all__ = ["MIN_FILE_SHARE", "RewriteResult", "rewrite_files"]

#: Files at most this share of the target size are rewritten (Iceberg's default).
MIN_FILE_SHARE = 0.75
_FILES_AT_ONCE = 4


@dataclass
class RewriteResult:
    """What a rewrite did.

    Attributes:
        snapshot: the snapshot that swapped the files (None: nothing to rewrite).
        rewritten: data files replaced.
        added: data files written.
        stripe_copied: added files made by copying stripes.
        re_encoded: added files made by re-encoding rows.
        bytes_before: size of the replaced files.
        bytes_after: size of the new files.
    """

    snapshot: Snapshot | None = None
    rewritten: int = 0
    added: int = 0
    stripe_copied: int = 0
    re_encoded: int = 0
    bytes_before: int = 0
    bytes_after: int = 0
    reasons: list[str] = field(default_factory=list)


class _Key:
    """A partition path for pyiceberg's location provider (``to_path``)."""

    def __init__(self, path: str) -> None:
        self._path = path

    def to_path(self) -> str:
        return self._path


def _bins(tasks: list[FileTask], target: int, min_size: int, min_files: int
          ) -> list[list[FileTask]]:
    groups: dict[tuple[int, Any], list[FileTask]] = {}
    for t in tasks:
        if t.file.file_format == FileFormat.ORC and t.file.file_size_in_bytes < min_size:
            groups.setdefault((t.file.spec_id, t.file.partition), []).append(t)
    out = []
    for group in groups.values():
        group.sort(key=lambda t: t.file.file_path)
        current: list[FileTask] = []
        size = 0
        for t in group:
            if current and size + t.file.file_size_in_bytes > target:
                out.append(current)
                current, size = [], 0
            current.append(t)
            size += t.file.file_size_in_bytes
        out.append(current)
    return [b for b in out if len(b) >= min_files]


def _merged_metrics(schema: Schema, files: Sequence[DataFile]) -> dict[str, Any]:
    """Counts added and bounds widened over files (a metric missing in one is dropped)."""
    out: dict[str, Any] = {}
    for name in ("value_counts", "null_value_counts", "nan_value_counts"):
        maps = [dict(getattr(f, name) or {}) for f in files]
        keys = set.intersection(*(set(m) for m in maps)) if maps else set()
        out[name] = {k: sum(m[k] for m in maps) for k in keys}
    for name, pick in (("lower_bounds", min), ("upper_bounds", max)):
        maps = [dict(getattr(f, name) or {}) for f in files]
        keys = set.intersection(*(set(m) for m in maps)) if maps else set()
        merged = {}
        for k in keys:
            try:
                t = schema.find_field(k).field_type
            except ValueError:
                continue
            if isinstance(t, PrimitiveType):
                merged[k] = pick((m[k] for m in maps), key=_sort_key(t))
        out[name] = merged
    return out


def _sort_key(t: PrimitiveType) -> Any:
    def key(value: bytes) -> Any:
        return from_bytes(t, value)
    return key


async def _stripe_copy(table: Table, bin_: list[FileTask], path: str,
                       store: Mapping[str, Any]) -> DataFile:
    meta = table.metadata
    result = await merge_files([config.store_path(t.file.file_path) for t in bin_],
                               config.store_path(path), storage_options=store, metadata={})
    async with open_reader(config.store_path(path), storage_options=store) as reader:
        ids = field_ids(reader.orc_schema, meta.name_mapping(), path).ids
    sizes = {fid: s.bytes_on_disk for cid, fid in ids.items()
             if (s := result.statistics[cid]).bytes_on_disk is not None}
    first = bin_[0].file
    return DataFile.from_args(
        _table_format_version=meta.format_version, content=DataFileContent.DATA,
        file_path=path, file_format=FileFormat.ORC, partition=first.partition,
        file_size_in_bytes=result.size, sort_order_id=None, spec_id=first.spec_id,
        equality_ids=None, key_metadata=None, record_count=result.num_rows,
        column_sizes=sizes, split_offsets=result.stripe_offsets,
        **_merged_metrics(meta.schema(), [t.file for t in bin_]))


async def _re_encode(table: Table, scan: IcebergScan, bin_: list[FileTask], path: str,
                     store: Mapping[str, Any], options: Any) -> DataFile:
    meta = table.metadata
    schema = meta.schema()
    batches = []
    for task in bin_:
        async for batch in scan.read_file(task):
            batches.extend(to_file_batches(schema, batch))
    size, stats = await write_one_file(config.store_path(path), schema, meta.properties,
                                       batches, options, store)
    first = bin_[0].file
    return data_file(table, WrittenFile(path, size, stats, first.partition),
                     spec_id=first.spec_id)


async def rewrite_files(table: Table, *, target_size: int | None = None, where: Any = None,
                        min_file_size: int | None = None, min_input_files: int = 2,
                        storage_options: Mapping[str, Any] | None = None,
                        snapshot_properties: Mapping[str, str] | None = None
                        ) -> RewriteResult:
    """Merge a table's small ORC data files into files of about ``target_size`` bytes and
    replace them in one snapshot (see the module docstring).

    Args:
        table: a pyiceberg table.
        target_size: the largest new file, in bytes (default: the table's
            ``write.target-file-size-bytes``, 512 MiB).
        where: only files that may hold rows matching this filter (any form
            :func:`aorc.iceberg.read_table` takes; e.g. a partition's day).
        min_file_size: files below this size are candidates (default: 75 % of
            ``target_size``).
        min_input_files: a partition's files are merged only when at least this many fit
            into one new file.
        storage_options: settings of the table's store (default: from its FileIO).
        snapshot_properties: extra entries for the snapshot's summary.

    Returns:
        What was done (``snapshot`` None when no partition had files to merge).

    Raises:
        ValidationException: a concurrent commit removed or deleted rows of an input (the new
            files are deleted; run the rewrite again).
    """
    meta = table.metadata
    target = target_size if target_size is not None else config.target_file_size(
        meta.properties)
    minimum = min_file_size if min_file_size is not None else int(target * MIN_FILE_SHARE)
    store = config.storage_options(meta.location, table.io.properties, storage_options)
    row_filter = iceberg_filter(where) if where is not None else AlwaysTrue()
    tasks = await asyncio.to_thread(plan_tasks, meta, table.io, row_filter, None)
    bins = _bins(tasks, target, minimum, max(2, min_input_files))
    result = RewriteResult()
    if not bins:
        return result
    scan = IcebergScan(table.scan(), store)
    options = config.write_options(meta.properties)
    provider = table.location_provider()
    specs = meta.specs()
    write_id = uuid.uuid4()
    semaphore = asyncio.Semaphore(_FILES_AT_ONCE)
    added: list[DataFile] = []

    async def one(k: int, bin_: list[FileTask]) -> None:
        first = bin_[0].file
        spec = specs[first.spec_id]
        key = _Key(spec.partition_to_path(first.partition, meta.schema())) \
            if not spec.is_unpartitioned() else None
        path = provider.new_data_location(f"00000-{k}-{write_id}.orc", key)  # type: ignore[arg-type]
        async with semaphore:
            reason = "delete files apply" if any(
                t.position_deletes or t.equality_deletes for t in bin_) else None
            if reason is None:
                try:
                    added.append(await _stripe_copy(table, bin_, path, store))
                    result.stripe_copied += 1
                    return
                except UnsupportedFeatureError as exc:
                    reason = str(exc)
            result.reasons.append(f"{path}: re-encoded: {reason}")
            added.append(await _re_encode(table, scan, bin_, path, store, options))
            result.re_encoded += 1

    replaced = [t.file for b in bins for t in b]

    def stage(tx: Any, props: dict[str, str]) -> None:
        with tx.update_snapshot(snapshot_properties=props).overwrite() as swap:
            for f in replaced:
                swap.delete_data_file(f)
            for f in added:
                swap.append_data_file(f)

    try:
        await gather_or_cancel([one(k, b) for k, b in enumerate(bins)])
    except BaseException:
        await delete_written([f.file_path for f in added], store)
        raise
    try:
        result.snapshot = await commit(table, stage, snapshot_properties={
            **(snapshot_properties or {}), "aorc.rewrite": "true"})
    except (CommitFailedException, ValidationException):  # (not committed: drop the files)
        await delete_written([f.file_path for f in added], store)
        raise
    result.rewritten = len(replaced)
    result.added = len(added)
    result.bytes_before = sum(f.file_size_in_bytes for f in replaced)
    result.bytes_after = sum(f.file_size_in_bytes for f in added)
    return result


