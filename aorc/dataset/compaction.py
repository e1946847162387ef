"""Compaction of a dataset's small files: each partition folder's small ORC files merged into
files near a target size, crash-safe.

:func:`compact` lists the dataset (as :func:`aorc.open_dataset` does; ``filters`` on
partition columns choose the folders), takes in each folder the files smaller than
``min_size``, in path order, into bins of at most ``target_size`` bytes, and merges every bin
of two or more files into one new file in the same folder:

- by copying their stripes as they are (:func:`aorc.write.merge.merge_files`: no value is
  decoded; statistics, indexes and bloom filters stay valid) when the files agree on their
  type, codec, block size, row-index stride, version and writer, as ORC Java's
  ``OrcFile.mergeFiles`` and Hive's ``CONCATENATE`` require;
- otherwise by reading them as one dataset (schemas unified by name, as reads do) and
  writing the rows again with ``options``.

Files with encrypted columns are merged by stripe copy only, and only given ``keys=`` holding
every key they name (as ORC Java's ``OrcFile.mergeFiles``: each source's stripe ids and local
keys carried, the statistics encrypted again under new local keys); without keys, or when
they cannot be stripe-copied, they are left as they are with a warning (re-encoding would
keep only their masked copies).

Rows keep the files' path order. Crash safety comes from a journal per merge, a small JSON
object under the dataset's hidden ``_aorc_compact/`` folder (readers, Spark and Hive skip
``_`` names), written before the merged file and deleted last:

1. write the journal (the merged file's name and its inputs);
2. write the merged file (visible only once complete, as every aorc output);
3. delete the inputs; 4. delete the journal.

Every run first completes what a journal left: if its merged file exists, the inputs still
there are deleted (roll forward), else the journal is dropped (roll back: the inputs were
never touched). So after a crash at any point, the next run leaves every row readable
exactly once. Between steps 2 and 3 a concurrent reader that lists the folder can see the
merged rows and some of their inputs' rows twice; an Iceberg table
(:func:`aorc.iceberg.rewrite_files`) swaps files atomically instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import posixpath
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from aorc.dataset.discovery import DatasetFile
from aorc.dataset.entry import open_dataset
from aorc.dataset.plan import dataset_filter
from aorc.errors import (
    AorcError,
    CorruptFileError,
    ObjectNotFoundError,
    SchemaError,
    UnsupportedFeatureError,
    warn,
)
from aorc.io import open_output, registry
from aorc.io.base import gather_or_cancel
from aorc.keys import KeyProvider
from aorc.options import WriteOptions
from aorc.progress import ProgressHook, ProgressTracker, tracker
from aorc.read.reader import open_reader
from aorc.write.merge import merge_files
from aorc.write.writer import open_writer

__all__ = ["DEFAULT_TARGET_SIZE", "JOURNAL_FOLDER", "CompactResult", "compact"]

#: The size compacted files aim at (as Iceberg's default target file size, 128 MiB).
DEFAULT_TARGET_SIZE = 128 << 20
#: The hidden folder under the dataset's root that holds the journals of merges under way.
JOURNAL_FOLDER = "_aorc_compact"
_JOURNAL_VERSION = 1
#: Journals larger than this are not aorc's (they list at most a bin of file names).
_JOURNAL_MAX = 16 << 20


@dataclass
class CompactResult:
    """What :func:`compact` did.

    Attributes:
        written: the merged files, sorted.
        removed: the input files deleted (merged into ``written``, or by a recovered
            merge), sorted.
        stripe_copied: merges done by copying stripes.
        re_encoded: merges done by decoding and encoding the rows again.
        recovered: journals of earlier, interrupted runs completed or rolled back first.
        skipped: bins left as they were, with the reason (files whose schemas cannot be
            unified; a file that is not ORC).
    """

    written: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    stripe_copied: int = 0
    re_encoded: int = 0
    recovered: int = 0
    skipped: list[tuple[list[str], str]] = field(default_factory=list)


def _step(name: str) -> None:
    """Called after each step of a merge (``"journal"``, ``"written"``, ``"deleted"`` after
    each input, ``"done"``): a seam for tests that interrupt a compaction there."""


def _root_text(source: object) -> str:
    if isinstance(source, (str, os.PathLike)):
        return os.fspath(source)
    raise SchemaError("compact takes one folder or prefix (the dataset's root), got "
                      f"{type(source).__name__}")


def _relative(root: str, path: str) -> str:
    base = root.rstrip("/") + "/"
    if not path.startswith(base):
        raise SchemaError(f"{path} is not under the dataset's root {root}")
    return path[len(base):]


def _bins(files: Sequence[DatasetFile], target_size: int,
          min_size: int) -> list[list[DatasetFile]]:
    """Each folder's small files, in path order, in bins of at most ``target_size`` bytes;
    only bins of two files or more."""
    folders: dict[str, list[DatasetFile]] = {}
    for f in sorted(files, key=lambda f: f.path):
        if f.size < min_size:
            folders.setdefault(posixpath.dirname(f.path.replace(os.sep, "/")), []).append(f)
    out: list[list[DatasetFile]] = []
    for small in folders.values():
        current: list[DatasetFile] = []
        size = 0
        for f in small:
            if current and size + f.size > target_size:
                out.append(current)
                current, size = [], 0
            current.append(f)
            size += f.size
        out.append(current)
    return [b for b in out if len(b) >= 2]


async def _read_journal(url: str, storage_options: Mapping[str, Any] | None
                        ) -> dict[str, Any] | None:
    store = registry.open_input(url, storage_options)
    try:
        data, size = await store.read_tail(_JOURNAL_MAX)
    except ObjectNotFoundError:
        return None
    finally:
        await store.close()
    try:
        journal = json.loads(data) if size <= _JOURNAL_MAX else None
    except ValueError:
        journal = None
    if (not isinstance(journal, dict) or journal.get("version") != _JOURNAL_VERSION
            or not isinstance(journal.get("output"), str)
            or not isinstance(journal.get("inputs"), list)
            or not all(isinstance(i, str) for i in journal["inputs"])):
        raise CorruptFileError(f"{url}: not a journal of aorc.compact; remove it if no "
                               "compaction is running")
    return journal


async def _write_small(url: str, data: bytes, storage_options: Mapping[str, Any] | None) -> None:
    await registry.make_parents(url)
    out = open_output(url, storage_options)
    try:
        await out.write(data)
        await out.complete()
    except BaseException:
        await out.abort()
        raise


async def _exists(url: str, storage_options: Mapping[str, Any] | None) -> bool:
    store = registry.open_input(url, storage_options)
    try:
        await store.read_tail(1)
        return True
    except ObjectNotFoundError:
        return False
    finally:
        await store.close()


async def _finish(root: str, journal_url: str, journal: dict[str, Any],
                  storage_options: Mapping[str, Any] | None, result: CompactResult) -> None:
    """Roll a journal's merge forward (its output exists: delete the inputs) or back."""
    output = registry.join(root, journal["output"])
    if await _exists(output, storage_options):
        for name in journal["inputs"]:
            path = registry.join(root, name)
            await registry.delete(path, storage_options)
            result.removed.append(path)
            _step("deleted")
    await registry.delete(journal_url, storage_options)


async def _recover(root: str, storage_options: Mapping[str, Any] | None,
                   result: CompactResult) -> None:
    folder = registry.join(root, JOURNAL_FOLDER)
    try:
        journals = await registry.list_files(folder + "/", storage_options)
    except ObjectNotFoundError:
        return
    for info in journals:
        if not info.path.endswith(".json"):
            continue
        journal = await _read_journal(info.path, storage_options)
        if journal is not None:
            await _finish(root, info.path, journal, storage_options, result)
            result.recovered += 1


async def _re_encode(paths: list[str], output: str, storage_options: Mapping[str, Any] | None,
                     options: WriteOptions, why: str = "") -> None:
    """Read the files as one dataset and write it again (``why``: the reason a stripe copy
    could not be done, told when encrypted files cannot be re-encoded either)."""
    dataset = await open_dataset(paths, partitioning=None, storage_options=storage_options)
    for path in paths:  # re-encoding reads masked copies: it would lose encrypted values
        cached = dataset.tail_cache.get(path)
        if cached is None:
            async with open_reader(path, storage_options=storage_options) as reader:
                encrypted = reader.encryption is not None
        else:
            encrypted = cached.tail.has_encryption
        if encrypted:
            raise SchemaError(f"{path}: encrypted columns are not re-encoded (it would keep "
                              f"only their masked copies), and {why or 'no stripe copy'}")
    writer = open_writer(output, dataset.schema, options=options,
                         storage_options=storage_options)
    async with writer:
        async with contextlib.aclosing(dataset.iter_batches()) as batches:
            async for batch in batches:
                await writer.write(batch)


async def _merge(root: str, bin_: list[DatasetFile], number: int, run_id: str,
                 storage_options: Mapping[str, Any] | None, options: WriteOptions,
                 limit: asyncio.Semaphore, result: CompactResult,
                 progress: ProgressTracker | None, keys: KeyProvider | None = None) -> None:
    async with limit:
        paths = [f.path for f in bin_]
        folder = posixpath.dirname(_relative(root, paths[0].replace(os.sep, "/")))
        name = posixpath.join(folder, f"compact-{run_id}-{number}.orc") if folder else \
            f"compact-{run_id}-{number}.orc"
        output = registry.join(root, name)
        journal_url = registry.join(root, JOURNAL_FOLDER, f"{run_id}-{number}.json")
        journal = {"version": _JOURNAL_VERSION, "output": name,
                   "inputs": [_relative(root, p.replace(os.sep, "/")) for p in paths]}
        await _write_small(journal_url, json.dumps(journal).encode(), storage_options)
        _step("journal")
        try:
            try:
                await merge_files(paths, output, storage_options=storage_options, keys=keys)
                copied = True
            except UnsupportedFeatureError as exc:
                await _re_encode(paths, output, storage_options, options, str(exc))
                copied = False
        except (SchemaError, CorruptFileError) as exc:  # nothing was written: roll back
            await registry.delete(journal_url, storage_options)
            warn(f"compact: left {len(paths)} files in {folder or root} as they "
                          f"are: {exc}")
            result.skipped.append((paths, str(exc)))
            return
        except Exception:
            # The merged file is not there (outputs are atomic): drop the journal.
            with contextlib.suppress(AorcError):
                await registry.delete(journal_url, storage_options)
            raise
        _step("written")
        result.written.append(output)
        if copied:
            result.stripe_copied += 1
        else:
            result.re_encoded += 1
        await _finish(root, journal_url, journal, storage_options, result)
        _step("done")
        if progress is not None:
            progress.advance(len(paths))


async def compact(source: str | os.PathLike[str], *, target_size: int = DEFAULT_TARGET_SIZE,
                  min_size: int | None = None, filters: Any = None,
                  partitioning: Any = "hive",
                  storage_options: Mapping[str, Any] | None = None,
                  max_concurrency: int = 4, options: WriteOptions | None = None,
                  progress: ProgressHook | None = None, keys: KeyProvider | None = None,
                  **write_options: Any) -> CompactResult:
    """Merge each partition folder's small files into files near ``target_size`` (see the
    module's docstring for the steps, the crash safety and what readers may see).

    Args:
        source: the dataset's root folder or prefix.
        target_size: the largest sum of input sizes merged into one file.
        min_size: files this size or larger are left alone (default: three quarters of
            ``target_size``, as Iceberg's ``min-file-size-bytes``).
        filters: partition filters choosing the folders compacted (list form or an
            expression, on partition columns only).
        partitioning: as for :func:`aorc.open_dataset`.
        storage_options: store settings (see :func:`aorc.io.open_store`).
        max_concurrency: merges run at once.
        options: writer options for files that are re-encoded (an
            :class:`aorc.WriteOptions`); stripe copies keep the inputs' encoding.
        progress: a hook told of the input files merged (unit ``"files"``), a callable
            taking an :class:`aorc.ProgressEvent` or a tqdm-like bar.
        keys: a key provider holding every key of the files with encrypted columns, which
            are merged by stripe copy only with it (see above).
        **write_options: fields of :class:`aorc.WriteOptions`, overriding ``options``.

    Returns:
        A :class:`CompactResult`.

    Raises:
        SchemaError: bad arguments, or ``filters`` naming a data column.
        CorruptFileError: a journal in ``_aorc_compact/`` that is not aorc's.
        StoreError: a failed read, write or delete (the journal then lets the next run
            complete or undo the merge under way).
    """
    root = _root_text(source)
    if not isinstance(target_size, int) or target_size < 1:
        raise SchemaError(f"target_size must be a positive integer, got {target_size!r}")
    min_size = target_size * 3 // 4 if min_size is None else min_size
    if not isinstance(min_size, int) or min_size < 0:
        raise SchemaError(f"min_size must be a non-negative integer, got {min_size!r}")
    if not isinstance(max_concurrency, int) or max_concurrency < 1:
        raise SchemaError(f"max_concurrency must be a positive integer, got "
                          f"{max_concurrency!r}")
    write = WriteOptions.create(options, write_options, caller="compact")
    result = CompactResult()
    await _recover(root, storage_options, result)
    dataset = await open_dataset(root, partitioning=partitioning,
                                 storage_options=storage_options)
    if filters is not None:
        unknown = _data_columns(filters, dataset.partition_schema.names)
        if unknown:
            raise SchemaError(f"compact filters choose partition folders; {unknown} are "
                              "not partition columns")
    files = dataset.files_matching(filters)
    bins = _bins(files, target_size, min_size)
    counter = tracker(progress, "compact", "files", sum(len(b) for b in bins))
    run_id = uuid.uuid4().hex[:12]
    limit = asyncio.Semaphore(max_concurrency)
    await gather_or_cancel([_merge(root, b, i, run_id, storage_options, write, limit, result,
                                   counter, keys) for i, b in enumerate(bins)])
    result.written.sort()
    result.removed.sort()
    return result


def _data_columns(filters: Any, partition_names: Sequence[str]) -> list[str]:
    """The columns ``filters`` names that are not partition columns."""
    names = dataset_filter(filters).names
    return sorted(n for n in names if n not in partition_names)
