"""Listing a Hive transactional table: its partitions, and in each the files a reader sees.

The table's root is listed once (every store); each file is placed by its path below the
root: ``key=value`` partition folders, then an ACID folder (``base_N``, ``delta_...``,
``delete_delta_...``) holding ``bucket_N`` files, or an original file at the partition's top.
Hidden names (``_orc_acid_version``, ``_metadata_acid``, ``.hive-staging...``, ``_tmp...``)
are skipped by the listing; ``bucket_N_flush_length`` side files of streaming ingest are
paired with their bucket files (see :func:`flushed_length`).
"""

from __future__ import annotations

import struct
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from aorc.dataset.acid.layout import (
    FLUSH_SUFFIX,
    AcidDir,
    AcidFile,
    Snapshot,
    WriteIdList,
    original_bucket,
    parse_bucket_file,
    parse_dir,
    select,
)
from aorc.dataset.partitioning import parse_partition_path
from aorc.errors import CorruptFileError
from aorc.io import IOStats, registry

__all__ = ["Partition", "flushed_length", "list_table"]


@dataclass
class Partition:
    """One partition (or the whole table when it has none) and what a reader reads of it.

    Attributes:
        path: the partition's folder (the table root for an unpartitioned table).
        values: its ``key=value`` folder values (unescaped; ``None`` for Hive's default
            partition ``__HIVE_DEFAULT_PARTITION__``).
        snapshot: the folders chosen (see :func:`aorc.dataset.acid.layout.select`).
        data: the files of rows read, base first, then the deltas in Hive's order, or the
            original files in name order.
        deletes: the delete delta files read.
        flush_lengths: the ``_flush_length`` side file of each data file that has one.
    """

    path: str
    values: dict[str, str | None]
    snapshot: Snapshot
    data: list[AcidFile] = field(default_factory=list)
    deletes: list[AcidFile] = field(default_factory=list)
    flush_lengths: dict[str, AcidFile] = field(default_factory=dict)


def _relative(root: str, path: str) -> list[str]:
    base = root.rstrip("/")
    rest = path[len(base):] if path.startswith(base) else path
    return [p for p in rest.split("/") if p]


def _place(root: str, info: registry.FileInfo
           ) -> tuple[tuple[str, ...], AcidDir | None, str]:
    """The partition folders, the ACID folder (if any) and the name of a listed file."""
    parts = _relative(root, info.path)
    for i, part in enumerate(parts[:-1]):
        folder = parse_dir(part)
        if folder is not None:
            return tuple(parts[:i]), folder, parts[-1]
    return tuple(parts[:-1]), None, parts[-1]


async def list_table(root: str, ids: WriteIdList | None,
                     storage_options: Mapping[str, Any] | None, io: IOStats
                     ) -> list[Partition]:
    """The partitions of the table at ``root`` and the files a reader reads of each.

    Raises:
        ObjectNotFoundError: nothing exists at ``root``.
        SchemaError: a partition has bases but none valid for ``ids``.
    """
    listed = await registry.list_files(root, storage_options, io)
    groups: dict[tuple[str, ...], list[tuple[AcidDir | None, str, registry.FileInfo]]] = {}
    for info in listed:
        parts, folder, name = _place(root, info)
        groups.setdefault(parts, []).append((folder, name, info))
    partitions = []
    for parts, entries in sorted(groups.items()):
        path = "/".join([root.rstrip("/"), *parts]) if parts else root
        folders = sorted({f for f, _, _ in entries if f is not None})
        snap = select(folders, ids, path)
        values = parse_partition_path("/".join([*parts, "x"]))
        part = Partition(path, {k: (None if v == "__HIVE_DEFAULT_PARTITION__" else v)
                                for k, v in values.items()}, snap)
        side = {info.path[:-len(FLUSH_SUFFIX)]: info for f, name, info in entries
                if name.endswith(FLUSH_SUFFIX)}
        order = {d: i for i, d in enumerate([snap.base, *snap.deltas])}
        data: list[tuple[int, str, AcidFile]] = []
        for folder, name, info in entries:
            if name.endswith(FLUSH_SUFFIX) or not snap.reads(folder):
                continue
            bucket = (parse_bucket_file(name) if folder is not None else None)
            if bucket is None:
                bucket = original_bucket(name)
            entry = AcidFile(info.path, info.size, folder, bucket)
            if folder is not None and folder.kind == "delete_delta":
                part.deletes.append(entry)
            else:
                data.append((order.get(folder, -1), info.path, entry))
            if info.path in side:
                s = side[info.path]
                part.flush_lengths[info.path] = AcidFile(s.path, s.size, folder, bucket)
        part.data = [e for _, _, e in sorted(data, key=lambda d: (d[0], d[1]))]
        if part.data or part.deletes:
            partitions.append(part)
    return partitions


def flushed_length(data: bytes, where: str) -> int:
    """The length of a bucket file that its ``_flush_length`` side file says was flushed:
    the last of the big-endian 64-bit lengths the streaming writer appended (a partial last
    record, from a writer that died while appending, is ignored).

    Raises:
        CorruptFileError: the side file holds no whole length.
    """
    whole = len(data) // 8 * 8
    if whole == 0:
        raise CorruptFileError(f"{where}: the flush-length side file holds no length")
    (length,) = struct.unpack(">q", data[whole - 8:whole])
    if length < 0:
        raise CorruptFileError(f"{where}: negative flushed length {length}")
    return int(length)
