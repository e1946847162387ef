"""Turning the rows of a Hive ACID file into the table's rows (no I/O).

A full-ACID file's rows are events ``struct<operation, originalTransaction, bucket, rowId,
currentTransaction, row: struct<...>>``. The table's rows are the ``row`` structs of the
insert events whose key ``(originalTransaction, bucket, rowId)`` no visible delete event
names, written by a visible write id. Original files (written before the table became
transactional) have no such columns: their rows get synthetic keys, as Hive 3 gives them
(write id 0, the bucket id of the file name, row ids numbered across the bucket's original
files in name order).

A :class:`DeleteSet` holds the keys of a partition's delete events, packed as 24-byte
fixed-size binary values so that membership is one Arrow hash lookup per batch and rows
keep their order.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from aorc.dataset.acid.layout import WriteIdList
from aorc.errors import UnsupportedFeatureError

__all__ = [
    "ACID_FIELDS",
    "ROW_ID",
    "ROW_ID_TYPE",
    "DeleteSet",
    "event_keys",
    "flatten_events",
    "insert_mask",
    "insert_rows",
    "is_acid_schema",
    "packed_keys",
    "synthetic_keys",
    "synthetic_row_ids",
]

#: The fields of a full-ACID event, in file order.
ACID_FIELDS = ("operation", "originalTransaction", "bucket", "rowId", "currentTransaction",
               "row")
#: The name of the column that carries each row's ACID identity, when asked for (Hive's own
#: virtual column name).
ROW_ID = "ROW__ID"
#: Its type: Hive 3's ``ROW__ID`` fields (the bucket is the stored property: Hive 3's
#: encoded ``BucketCodec`` value, Hive 2's bucket id), plus the write id of the event.
ROW_ID_TYPE = pa.struct([("writeid", pa.int64()), ("bucketid", pa.int32()),
                         ("rowid", pa.int64()), ("currentwriteid", pa.int64())])


def is_acid_schema(schema: pa.Schema) -> bool:
    """Whether a file's schema is that of full-ACID events."""
    return tuple(schema.names) == ACID_FIELDS


def _int64(column: pa.ChunkedArray | pa.Array) -> np.ndarray:
    arr = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    if arr.type != pa.int64():
        arr = arr.cast(pa.int64())
    return np.asarray(arr.to_numpy(zero_copy_only=False), dtype=np.int64)


def packed_keys(original: np.ndarray, bucket: np.ndarray, row_id: np.ndarray) -> pa.Array:
    """The keys ``(originalTransaction, bucket_key(bucket), rowId)`` as 24-byte values
    (``bucket`` is already mapped by :func:`bucket_key`)."""
    n = len(original)
    packed = np.empty((n, 3), dtype=np.int64)
    packed[:, 0], packed[:, 1], packed[:, 2] = original, bucket, row_id
    return pa.FixedSizeBinaryArray.from_buffers(pa.binary(24), n,
                                                [None, pa.py_buffer(packed.tobytes())])


def _keys_of_buckets(bucket: np.ndarray) -> np.ndarray:
    """:func:`~aorc.dataset.acid.layout.bucket_key` of every value."""
    if not len(bucket):
        return bucket.astype(np.int64)
    v1 = ((bucket >> 29) & 0x7) == 1
    out = bucket.astype(np.int64) * 4096
    out[v1] = ((bucket[v1] >> 16) & 0xFFF) * 4096 + (bucket[v1] & 0xFFF)
    return out


def event_keys(table: pa.Table) -> pa.Array:
    """The packed keys of a table of events (its ``originalTransaction``, ``bucket`` and
    ``rowId`` columns)."""
    return packed_keys(_int64(table.column("originalTransaction")),
                       _keys_of_buckets(_int64(table.column("bucket"))),
                       _int64(table.column("rowId")))


def synthetic_keys(bucket: int, first_row: int, n: int) -> pa.Array:
    """The packed keys of ``n`` rows of an original file of bucket ``bucket`` whose first
    row is the bucket's ``first_row``-th."""
    return packed_keys(np.zeros(n, np.int64), np.full(n, bucket * 4096, np.int64),
                       np.arange(first_row, first_row + n, dtype=np.int64))


class DeleteSet:
    """The delete events of one partition that a reader sees."""

    def __init__(self, keys: Sequence[pa.Array] = ()) -> None:
        parts = [np.frombuffer(k.buffers()[1], np.int64)[3 * k.offset:3 * (k.offset + len(k))]
                 for k in keys if len(k)]
        packed = (np.concatenate(parts).reshape(-1, 3) if parts
                  else np.empty((0, 3), np.int64))
        #: the sorted row ids deleted from each (write id, bucket key), each once
        self._rows: dict[tuple[int, int], np.ndarray] = {}
        for (write_id, bucket), rows in _groups(packed):
            rows = np.sort(rows)  # (np.unique hashes: several times slower)
            self._rows[(write_id, bucket)] = rows[np.concatenate([[True],
                                                                  rows[1:] != rows[:-1]])]
        self._count = sum(len(v) for v in self._rows.values())
        self._keys: pa.Array | None = None
        self._sources = (np.array(list(self._rows), np.int64) if self._rows
                         else np.empty((0, 2), np.int64))

    @property
    def keys(self) -> pa.Array | None:
        """The packed keys of the events (see :func:`packed_keys`), sorted, each once;
        ``None`` when there are none."""
        if self._keys is None and self._rows:
            self._keys = packed_keys(
                np.concatenate([np.full(len(r), w, np.int64) for (w, _), r in self._rows.items()]),
                np.concatenate([np.full(len(r), b, np.int64) for (_, b), r in self._rows.items()]),
                np.concatenate(list(self._rows.values())))
        return self._keys

    def __len__(self) -> int:
        return self._count

    def touches(self, write_ids: tuple[int, int], buckets: tuple[int, int]) -> bool:
        """Whether some event may name a row of a file whose ``originalTransaction`` and
        bucket keys lie in these (inclusive) ranges."""
        s = self._sources
        if not len(s):
            return False
        hit = ((s[:, 0] >= write_ids[0]) & (s[:, 0] <= write_ids[1])
               & (s[:, 1] >= buckets[0]) & (s[:, 1] <= buckets[1]))
        return bool(hit.any())

    @staticmethod
    def events(table: pa.Table, ids: WriteIdList | None, where: str) -> pa.Array:
        """The keys of the visible delete events of a delete delta file's ``table``."""
        ops = table.column("operation")
        if pc.any(pc.not_equal(ops, 2)).as_py():
            raise UnsupportedFeatureError(f"{where}: a delete delta holds events other than "
                                          f"deletes")
        if ids is not None:
            table = table.filter(_visible(table, ids))
        return event_keys(table)

    def row_ids(self, write_id: int, bucket: int) -> np.ndarray:
        """The sorted row ids deleted from the rows of ``write_id`` in bucket key
        ``bucket``."""
        return self._rows.get((write_id, bucket), np.empty(0, np.int64))

    def deleted_rows(self, write_id: int, bucket: int, row_ids: pa.ChunkedArray | pa.Array
                     ) -> np.ndarray | None:
        """The positions (sorted) of the rows (of one write id and bucket key) an event
        deletes, by a binary search of their row ids; ``None`` when there are none (the
        rows need no filtering)."""
        gone = self.row_ids(write_id, bucket)
        if not len(gone):
            return None
        chunks = row_ids.chunks if isinstance(row_ids, pa.ChunkedArray) else [row_ids]
        found, start = [], 0
        for c in chunks:
            if len(c):
                at = _deleted_row_ids(_int64(c), gone)
                if len(at):
                    found.append(at + start)
            start += len(c)
        return np.concatenate(found) if found else None

    def kept_rows(self, write_id: int, bucket: int, row_ids: pa.ChunkedArray | pa.Array
                  ) -> pa.Array | None:
        """The mask of the rows (of one write id and bucket key) no event deletes (see
        :meth:`deleted_rows`); ``None`` when every row is kept."""
        gone = self.deleted_rows(write_id, bucket, row_ids)
        if gone is None:
            return None
        keep = np.ones(len(row_ids), dtype=bool)
        keep[gone] = False
        return pa.array(keep)

    def kept(self, keys: pa.Array) -> pa.Array | None:
        """The mask of the rows (by their packed keys) no delete event names, ``None``
        when every row is kept (no event names one of them)."""
        if self.keys is None or not len(keys):
            return None
        named = pc.is_in(keys, value_set=self.keys)
        return pc.invert(named) if named.true_count else None


def _groups(packed: np.ndarray) -> list[tuple[tuple[int, int], np.ndarray]]:
    """The row ids of packed keys by (write id, bucket key), in key order: one stable sort
    of a combined key when write ids and bucket keys fit in 63 bits (always, in practice),
    else a sort on both."""
    if not len(packed):
        return []
    w, b = packed[:, 0], packed[:, 1]
    if w.min() >= 0 and w.max() < (1 << 39) and b.min() >= 0 and b.max() < (1 << 24):
        combined = (w << 24) | b
        order = np.argsort(combined, kind="stable")
        combined, rows = combined[order], packed[order, 2]
        starts = np.concatenate([[0], np.flatnonzero(combined[1:] != combined[:-1]) + 1])
        ends = np.concatenate([starts[1:], [len(combined)]])
        return [((int(combined[a] >> 24), int(combined[a] & 0xFFFFFF)), rows[a:e])
                for a, e in zip(starts, ends, strict=True)]
    packed = packed[np.lexsort((packed[:, 1], packed[:, 0]))]
    change = np.flatnonzero((np.diff(packed[:, 0]) != 0) | (np.diff(packed[:, 1]) != 0))
    starts = np.concatenate([[0], change + 1])
    ends = np.concatenate([change + 1, [len(packed)]])
    return [((int(packed[a, 0]), int(packed[a, 1])), packed[a:e, 2])
            for a, e in zip(starts, ends, strict=True)]


def _deleted_row_ids(ids: np.ndarray, gone: np.ndarray) -> np.ndarray:
    """The positions (sorted) of the row ids in ``gone`` (sorted): by the ids' range first
    when they are ascending, as Hive writes them."""
    n = len(ids)
    if bool((ids[1:] > ids[:-1]).all()):
        inside = gone[np.searchsorted(gone, ids[0]):np.searchsorted(gone, ids[-1], "right")]
        if ids[-1] - ids[0] == n - 1:  # consecutive: a row id is its position
            at: np.ndarray = inside - ids[0]
            return at
        at = np.searchsorted(ids, inside)  # some rows filtered out: the few deleted ids
        hit: np.ndarray = at[ids[at] == inside]
        return hit
    at = np.searchsorted(gone, ids)
    return np.flatnonzero(gone[np.minimum(at, len(gone) - 1)] == ids)


def _visible(table: pa.Table, ids: WriteIdList) -> pa.Array:
    """The mask of the events whose ``currentTransaction`` is visible."""
    current = table.column("currentTransaction")
    hidden = pa.array(ids.invalid_ids(), pa.int64())
    mask = pc.invert(pc.is_in(current, value_set=hidden))
    if ids.high_watermark < (1 << 63) - 1:
        mask = pc.and_(mask, pc.less_equal(current, ids.high_watermark))
    return mask.combine_chunks() if isinstance(mask, pa.ChunkedArray) else mask


def insert_mask(table: pa.Table, ids: WriteIdList | None, deletes: DeleteSet | None,
                where: str) -> pa.Array | None:
    """The mask of the visible, undeleted insert events of a full-ACID file's ``table``
    (its event columns, possibly some of them); rows are checked against ``ids`` when the
    table has their ``currentTransaction``. ``None`` when every row is kept.

    Raises:
        UnsupportedFeatureError: the file holds update or delete events (tables written
            before Hive 2.2's split update), which aorc does not merge.
    """
    ops = table.column("operation") if "operation" in table.column_names else None
    if ops is not None and table.num_rows and pc.any(pc.not_equal(ops, 0)).as_py():
        raise UnsupportedFeatureError(
            f"{where}: update or delete events in an insert delta (a table written before "
            f"Hive 2.2's split update, 'transactional_properties'='legacy'): run a major "
            f"compaction in Hive first")
    masks = []
    if ids is not None and "currentTransaction" in table.column_names:
        masks.append(_visible(table, ids))
    kept = deletes.kept(event_keys(table)) if deletes is not None and len(deletes) else None
    if kept is not None:
        masks.append(kept)
    if not masks:
        return None
    mask = masks[0]
    for m in masks[1:]:
        mask = pc.and_(mask, m)
    return mask


def insert_rows(table: pa.Table, ids: WriteIdList | None, deletes: DeleteSet | None,
                where: str) -> pa.Table:
    """``table`` filtered by :func:`insert_mask`.

    Raises:
        UnsupportedFeatureError: as :func:`insert_mask`.
    """
    mask = insert_mask(table, ids, deletes, where)
    return table if mask is None else table.filter(mask)


def flatten_events(table: pa.Table, names: Sequence[str], row_id: bool) -> pa.Table:
    """The ``row`` struct's fields ``names`` as columns (``ROW__ID`` first when asked; a
    placeholder column of nulls when neither, to keep the number of rows)."""
    if not names and not row_id:
        return pa.table({"__aorc_rows": pa.nulls(table.num_rows)})
    chunks = table.column("row").chunks if names else []
    columns: list[pa.Array | pa.ChunkedArray] = []
    fields: list[pa.Field] = []
    if row_id:
        columns.append(_row_id_array(table))
        fields.append(pa.field(ROW_ID, ROW_ID_TYPE))
    struct_type = table.schema.field("row").type if names else pa.struct([])
    for name in names:
        idx = struct_type.get_field_index(name)
        t = struct_type.field(idx).type
        # each chunk's child as it is (no copy); insert events never have a null row
        columns.append(pa.chunked_array([c.field(idx) for c in chunks], t))
        fields.append(pa.field(name, t))
    return pa.Table.from_arrays(columns, schema=pa.schema(fields))


def _row_id_array(table: pa.Table) -> pa.Array:
    def col(name: str, t: pa.DataType) -> pa.Array:
        return table.column(name).combine_chunks().cast(t)

    return pa.StructArray.from_arrays(
        [col("originalTransaction", pa.int64()), col("bucket", pa.int32()),
         col("rowId", pa.int64()), col("currentTransaction", pa.int64())],
        fields=list(ROW_ID_TYPE))


def synthetic_row_ids(bucket: int, first_row: int, n: int, stored_bucket: int) -> pa.Array:
    """The ``ROW__ID`` of ``n`` rows of an original file (write id 0, ``stored_bucket``
    as the bucket property Hive gives them, row ids from ``first_row``)."""
    zeros = pa.array(np.zeros(n, np.int64))
    return pa.StructArray.from_arrays(
        [zeros, pa.array(np.full(n, stored_bucket, np.int32)),
         pa.array(np.arange(first_row, first_row + n, dtype=np.int64)), zeros],
        fields=list(ROW_ID_TYPE))
