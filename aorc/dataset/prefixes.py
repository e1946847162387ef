"""Listing a dataset's root by its Hive partition folders.

A folder (or object-store prefix) of ``key=value`` folders is listed level by level with
the stores' delimiter listings (:func:`aorc.io.registry.list_level`: ``Delimiter=/`` on S3,
``delimiter=/`` on GCS and Azure, one ``scandir`` locally), the folders of a level
concurrently. With a partition filter, a folder whose value no conjunction of the filter
can match is never listed, nor anything below it. Without one, the root's flat listing comes
first: when it ends within :data:`FLAT_LIST_PAGES` pages (a dataset of up to a few
thousand objects) it is the whole listing, one request a page; when more follow, the
top-level folders it did not finish are listed whole at once (one flat listing each, after
one delimiter listing of the root), since for large trees concurrency wins over paging
through one listing. Locally (and in memory) the flat listing is the one walk of
:func:`aorc.io.registry.list_files`; on S3, GCS and Azure it is the schemes'
``listing_head``; a store without one lists each top-level folder at once. Other roots (a
file, a list's files, a layout without ``key=value`` folders) keep the flat recursive
listing of
:func:`aorc.io.registry.list_files`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa

from aorc.dataset.partitioning import (
    Clauses,
    infer_partition_schema,
    parse_partition_path,
    partition_table,
    surviving_rows,
)
from aorc.errors import ObjectNotFoundError
from aorc.io import IOStats, registry
from aorc.io.base import gather_or_cancel
from aorc.io.listing import FileInfo

__all__ = ["FLAT_LIST_PAGES", "list_root"]

#: Pages (of 1,000 keys on S3) of a root's flat listing read before the listing turns to
#: one listing per top-level folder, all at once (see the module's docstring).
FLAT_LIST_PAGES = 4


async def list_root(root: str | os.PathLike[str], storage_options: Mapping[str, Any] | None,
                    io: IOStats, clauses: Clauses | None, given: pa.Schema | None,
                    by_partition: bool, single: bool = True) -> list[FileInfo]:
    """The files under ``root`` (see the module's docstring): listed by partition when
    ``by_partition`` and the root is a folder (or, ``single``, a URL that may name a
    prefix), leaving out the partitions that ``clauses`` rule out (their types ``given``
    or inferred from each level's values).

    Raises:
        ObjectNotFoundError: nothing exists at ``root``.
    """
    text = os.fspath(root)
    folder = await registry.is_folder(text)
    if not by_partition or not (folder or (single and registry.is_remote(text))):
        return await registry.list_files(text, storage_options, io)
    lister = _Lister(storage_options, io, clauses, given)
    if clauses is None:
        flat = await lister.flat_first(text)
        if flat is not None:
            return flat
    found = await lister.walk(text, None if clauses is None else list(range(len(clauses))))
    if not found and not lister.any_folder:
        return await registry.list_files(text, storage_options, io)  # a file, or nothing
    return found


class _Lister:
    def __init__(self, storage_options: Mapping[str, Any] | None, io: IOStats,
                 clauses: Clauses | None, given: pa.Schema | None) -> None:
        self.storage_options = storage_options
        self.io = io
        self.clauses = clauses
        self.given = given
        self.any_folder = False

    async def walk(self, prefix: str, alive: list[int] | None) -> list[FileInfo]:
        """The files under ``prefix``, whose partition folders so far leave the
        conjunctions ``alive`` possible (``None``: no filter)."""
        level = await registry.list_level(prefix, self.storage_options, self.io)
        self.any_folder = self.any_folder or bool(level.folders)
        kept: list[tuple[str, list[int] | None]] = []
        named = [(f, _key_value(f)) for f in level.folders]
        plain = [f for f, kv in named if kv is None]
        hive = [(f, kv) for f, kv in named if kv is not None]
        if alive is not None and hive:
            kept = self._prune(hive, alive)
        else:
            kept = [(f, alive) for f, _ in hive]
        kept += [(f, alive) for f in plain]
        kept.sort()
        deeper = await gather_or_cancel([
            self.walk(f, left) if left is not None else self._flat(f) for f, left in kept])
        return list(level.files) + [info for found in deeper for info in found]

    async def flat_first(self, root: str) -> list[FileInfo] | None:
        """Everything under ``root`` by its flat listing first (see the module's
        docstring); ``None`` when the store's listing has no pages to stop after."""
        scheme = registry.scheme_for(root)
        if not scheme.remote:
            return await registry.list_files(root, self.storage_options, self.io)
        head = getattr(scheme, "listing_head", None)
        if head is None:
            return None
        found: list[FileInfo]
        found, more = await head(root, self.storage_options, self.io, FLAT_LIST_PAGES)
        if not more:  # all of it (none: a file named without "/", or nothing there)
            return found or await registry.list_files(root, self.storage_options, self.io)
        if not found:
            return None
        # the folders the pages finished are done; the others are listed whole, at once
        level = await registry.list_level(root, self.storage_options, self.io)
        last = found[-1].path
        todo = [f for f in level.folders if not f < last or last.startswith(f)]
        start = min(todo, default=None)
        on_top = {i.path for i in level.files}  # the root's own files: from its level
        done = [i for i in found
                if (start is None or i.path < start) and i.path not in on_top]
        rest = await gather_or_cancel([self._flat(f) for f in todo])
        every = done + list(level.files) + [i for found in rest for i in found]
        return sorted(every, key=lambda i: i.path)

    async def _flat(self, prefix: str) -> list[FileInfo]:
        try:
            return await registry.list_files(prefix, self.storage_options, self.io)
        except ObjectNotFoundError:
            return []  # emptied since its level was listed

    def _prune(self, hive: Sequence[tuple[str, tuple[str, str | None]]], alive: list[int]
               ) -> list[tuple[str, list[int] | None]]:
        """The folders of a level some conjunction in ``alive`` can match, each with the
        conjunctions it leaves."""
        assert self.clauses is not None
        survivors: dict[int, list[int]] = {i: [] for i in range(len(hive))}
        by_key: dict[str, list[int]] = {}
        for i, (_, (key, _)) in enumerate(hive):
            by_key.setdefault(key, []).append(i)
        for key, rows in by_key.items():
            raw = [{key: hive[i][1][1]} for i in rows]
            paths = [hive[i][0] for i in rows]
            schema = infer_partition_schema(raw, paths, self.given)
            table = partition_table(raw, schema, paths)
            for c in alive:
                terms = [t for t in self.clauses[c] if t[0] == key]
                ok = surviving_rows(table, terms) if terms else range(len(rows))
                for j in ok:
                    survivors[rows[j]].append(c)
        return [(hive[i][0], left) for i, left in survivors.items() if left]


def _key_value(folder: str) -> tuple[str, str | None] | None:
    """A folder URL's ``(key, value)`` when its name is ``key=value``, else ``None``."""
    name = folder.rstrip("/" + os.sep).replace(os.sep, "/").rpartition("/")[2]
    values = parse_partition_path(name + "/f")
    return next(iter(values.items())) if values else None
