"""The folders and files of a Hive transactional (ACID) table, and which of them a reader
sees (no I/O).

A partition of a transactional table holds ``base_N`` folders (a compaction or an insert
overwrite up to write id N; Hive 3 adds ``_vT``, the compactor's visibility transaction),
``delta_MIN_MAX[_STMT]`` folders of inserted rows and ``delete_delta_MIN_MAX[_STMT]``
folders of delete events (Hive 2.2+ "split update": an update is a delete and an insert),
each holding ``bucket_NNNNN`` files (``bucket_NNNNN_A`` for a task attempt), and, in tables
that became transactional later, "original" files (``000000_0``, ``000000_0_copy_1``) at the
partition's top. :func:`select` picks what Hive's ``AcidUtils.getAcidState`` picks: the
newest base that the write-id list allows, the deltas above it (a compacted
``delta_1_10`` before the ``delta_5_5`` it covers), every statement of a multi-statement
transaction, and the original files only when there is no base.

Write ids (transaction ids before Hive 3) are judged by a :class:`WriteIdList`, parsed from
Hive's own string form: Hive 3's ``ValidReaderWriteIdList`` (``db.table:HWM:MINOPEN:OPEN:
ABORTED``) or Hive 2's ``ValidReadTxnList`` (``HWM:MINOPEN:OPEN:ABORTED``), the id lists
comma-separated.

Hive 3 writes the ``bucket`` field of every event as a ``BucketCodec`` V1 property (bits
29-31 the codec version 1, bits 16-27 the bucket id, bits 0-11 the statement id); Hive 2
wrote the bucket id itself. :func:`bucket_key` maps both to one comparable number.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from aorc.errors import SchemaError

__all__ = [
    "FLUSH_SUFFIX",
    "AcidDir",
    "AcidFile",
    "Snapshot",
    "WriteIdList",
    "bucket_key",
    "original_bucket",
    "parse_bucket_file",
    "parse_dir",
    "select",
]

_BASE = re.compile(r"base_(\d+)(?:_v(\d+))?")
_DELTA = re.compile(r"(delta|delete_delta)_(\d+)_(\d+)(?:_(\d+))?(?:_v(\d+))?")
_BUCKET = re.compile(r"bucket_(\d+)(?:_(\d+))?")
#: Hive's original (pre-transactional) file names: ``000000_0``, ``000001_0_copy_2``; and
#: the files of insert-only tables' folders, named the same way.
_ORIGINAL = re.compile(r"(\d+)_(\d+)(?:_copy_(\d+))?(?:\.\w+)?")
FLUSH_SUFFIX = "_flush_length"
_MAX = (1 << 63) - 1


@dataclass(frozen=True, order=True)
class AcidDir:
    """A parsed ``base_N``, ``delta_MIN_MAX[_STMT]`` or ``delete_delta_...`` folder name.

    Attributes:
        kind: ``"base"``, ``"delta"`` or ``"delete_delta"``.
        min_write_id: the first write id (a base's N).
        max_write_id: the last write id (a base's N).
        statement_id: the statement id, ``-1`` when the name has none.
        visibility_txn: Hive 3's ``_vT`` suffix, ``0`` when none.
        name: the folder name.
    """

    kind: str
    min_write_id: int
    max_write_id: int
    statement_id: int = -1
    visibility_txn: int = 0
    name: str = ""


def parse_dir(name: str) -> AcidDir | None:
    """The :class:`AcidDir` of a folder name, ``None`` when it is no ACID folder."""
    m = _BASE.fullmatch(name)
    if m:
        n = int(m.group(1))
        return AcidDir("base", n, n, -1, int(m.group(2) or 0), name)
    m = _DELTA.fullmatch(name)
    if m:
        return AcidDir(m.group(1), int(m.group(2)), int(m.group(3)),
                       int(m.group(4)) if m.group(4) is not None else -1,
                       int(m.group(5) or 0), name)
    return None


def parse_bucket_file(name: str) -> int | None:
    """The bucket id of a ``bucket_NNNNN`` or ``bucket_NNNNN_ATTEMPT`` file name (``None``
    for another name, such as a ``_flush_length`` side file)."""
    m = _BUCKET.fullmatch(name)
    return int(m.group(1)) if m else None


def original_bucket(name: str) -> int | None:
    """The bucket id of an original file name (``000003_0`` -> 3, ``000003_0_copy_1`` -> 3),
    ``None`` when the name is not of that form."""
    m = _ORIGINAL.fullmatch(name)
    return int(m.group(1)) if m else None


def bucket_key(value: int) -> int:
    """A number identifying a stored ``bucket`` value across codecs: Hive 3's V1 property
    (version bits 001) becomes ``bucket_id * 4096 + statement_id``, Hive 2's plain bucket id
    ``bucket_id * 4096``; original files' rows (bucket id from the file name, statement 0)
    compare equal to delete events of either form."""
    if (value >> 29) & 0x7 == 1:
        return ((value >> 16) & 0xFFF) * 4096 + (value & 0xFFF)
    return value * 4096


@dataclass(frozen=True)
class WriteIdList:
    """Which write ids a reader sees: Hive's valid write-id (or transaction) list.

    Attributes:
        high_watermark: the highest write id allocated; ids above it are not visible.
        open_ids: ids at or below the watermark still open (not visible).
        aborted_ids: ids at or below the watermark that were aborted (not visible).
        min_open: the lowest open id (``2**63 - 1`` when none is open).
        table: the ``db.table`` name of Hive 3's form (``None`` for Hive 2's).
    """

    high_watermark: int = _MAX
    open_ids: frozenset[int] = field(default_factory=frozenset)
    aborted_ids: frozenset[int] = field(default_factory=frozenset)
    min_open: int = _MAX
    table: str | None = None

    @classmethod
    def parse(cls, text: str) -> WriteIdList:
        """Parse Hive's string form: ``db.table:HWM:MINOPEN:OPEN:ABORTED`` (Hive 3's
        ``ValidReaderWriteIdList.writeToString``) or ``HWM:MINOPEN:OPEN:ABORTED`` (Hive 2's
        ``ValidReadTxnList``); trailing empty lists may be left out.

        Raises:
            SchemaError: the text is not of either form.
        """
        if not isinstance(text, str):
            raise SchemaError(f"valid_write_ids must be Hive's string form, got {text!r}")
        parts = text.strip().split(":")
        table = None
        if parts and parts[0] and not parts[0].lstrip("-").isdigit():
            table, parts = parts[0], parts[1:]
        try:
            if len(parts) < 2 or len(parts) > 4:
                raise ValueError("wrong number of fields")
            hwm, min_open = int(parts[0]), int(parts[1])
            ids = [frozenset(int(x) for x in p.split(",") if x) for p in
                   (parts[2:] + ["", ""])[:2]]
        except ValueError as exc:
            raise SchemaError(
                f"valid_write_ids {text!r} is not Hive's form 'db.table:highWatermark:"
                f"minOpenWriteId:openIds:abortedIds' (or Hive 2's 'highWatermark:minOpenTxn:"
                f"openIds:abortedIds'): {exc}") from exc
        return cls(hwm, ids[0], ids[1], min(min_open, min(ids[0], default=_MAX)), table)

    def is_valid(self, write_id: int) -> bool:
        """Whether the rows of ``write_id`` are visible (committed)."""
        return (write_id <= self.high_watermark and write_id not in self.open_ids
                and write_id not in self.aborted_ids)

    def invalid_ids(self) -> list[int]:
        """The open and aborted ids at or below the watermark, sorted."""
        return sorted(self.open_ids | self.aborted_ids)

    def range_validity(self, low: int, high: int) -> str:
        """``"all"``, ``"some"`` or ``"none"``: how many of ``low..high`` are visible."""
        if low > self.high_watermark:
            return "none"
        top = min(high, self.high_watermark)
        invalid = sum(1 for i in self.open_ids | self.aborted_ids if low <= i <= top)
        valid = top - low + 1 - invalid
        if valid <= 0:
            return "none"
        return "all" if valid == high - low + 1 else "some"

    def is_valid_base(self, write_id: int) -> bool:
        """Whether a ``base_N`` may be read: every write id up to N resolved and N not
        above the watermark (Hive's ``isValidBase``)."""
        return write_id < self.min_open and write_id <= self.high_watermark


@dataclass(frozen=True)
class AcidFile:
    """One file of a partition's listing.

    Attributes:
        path: its path or URL.
        size: its size in bytes.
        folder: the ACID folder it is in (``None`` for an original file).
        bucket: its bucket id (from its name), ``None`` when the name has none.
    """

    path: str
    size: int
    folder: AcidDir | None
    bucket: int | None


@dataclass
class Snapshot:
    """What a reader reads of one partition (see :func:`select`).

    Attributes:
        base: the base folder read, if any.
        deltas: the insert delta folders read, in Hive's order.
        delete_deltas: the delete delta folders read.
        originals: whether the original files are read (no base).
        obsolete: the folders left out (older bases, covered or invalid deltas).
    """

    base: AcidDir | None = None
    deltas: list[AcidDir] = field(default_factory=list)
    delete_deltas: list[AcidDir] = field(default_factory=list)
    originals: bool = True
    obsolete: list[AcidDir] = field(default_factory=list)

    def reads(self, folder: AcidDir | None) -> bool:
        """Whether files of ``folder`` (``None``: an original file) are read."""
        if folder is None:
            return self.originals
        return folder == self.base or folder in self.deltas or folder in self.delete_deltas


def _delta_order(d: AcidDir) -> tuple[int, int, int, int]:
    # Hive's ParsedDelta order: min ascending, max descending (a compacted delta first),
    # statement ascending (none first), inserts before deletes
    return (d.min_write_id, -d.max_write_id, d.statement_id, d.kind == "delete_delta")


def select(folders: list[AcidDir], ids: WriteIdList | None, where: str = "") -> Snapshot:
    """The folders a reader sees, as Hive's ``AcidUtils.getAcidState`` chooses them.

    Args:
        folders: the partition's ACID folders.
        ids: the valid write ids; ``None`` treats every write id as committed.
        where: the partition, for messages.

    Raises:
        SchemaError: bases exist but none is valid for ``ids`` (Hive's "not enough
            history available").
    """
    check = ids if ids is not None else WriteIdList()
    snap = Snapshot()
    bases = sorted((f for f in folders if f.kind == "base"), key=lambda b: -b.max_write_id)
    for b in bases:
        if snap.base is None and check.is_valid_base(b.max_write_id):
            snap.base = b
        else:
            snap.obsolete.append(b)
    if bases and snap.base is None:
        raise SchemaError(
            f"{where or 'the table'}: no base folder is valid for the write-id list "
            f"(oldest {bases[-1].name}): not enough history to read it (Hive says the same)")
    current = snap.base.max_write_id if snap.base is not None else 0
    snap.originals = snap.base is None
    last_stmt, prev = -1, None
    for d in sorted((f for f in folders if f.kind != "base"), key=_delta_order):
        keep = False
        if d.max_write_id > current:
            if check.range_validity(d.min_write_id, d.max_write_id) != "none":
                keep, current, last_stmt = True, d.max_write_id, d.statement_id
        elif d.max_write_id == current and last_stmt >= 0 and prev is not None \
                and d.min_write_id == prev.min_write_id:
            keep = True  # another statement of the same transaction
        elif prev is not None and (d.min_write_id, d.max_write_id, d.statement_id) == \
                (prev.min_write_id, prev.max_write_id, prev.statement_id):
            keep = True  # the delete delta of the delta just taken
        if keep:
            (snap.delete_deltas if d.kind == "delete_delta" else snap.deltas).append(d)
            prev = d
        else:
            snap.obsolete.append(d)
    return snap
