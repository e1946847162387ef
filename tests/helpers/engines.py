"""The distributed engines' tests' data and checks: one small events dataset (Hive folders
by ``day``, several stripes per file, ``id`` sorted so that a range filter prunes stripes)
and the S3 range bookkeeping that proves pruning."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import numpy as np
import pyarrow as pa
import pyarrow.dataset as pads

import aorc

__all__ = ["DAYS", "Encrypted", "Events", "IcebergEvents", "check_masked", "events_rows",
           "kill_once_before_rename", "orc_rows", "overlaps", "ranges_read", "sorted_rows",
           "stripe_spans", "upload", "visible_files", "write_encrypted", "write_events",
           "write_iceberg_events"]

DAYS = ("2024-06-01", "2024-06-02", "2024-06-03")
FILES_PER_DAY = 2
ROWS_PER_FILE = 6_000
STRIPE_SIZE = 24 * 1024


@dataclass(frozen=True)
class Events:
    """The dataset: its root, its files and everything as one pyarrow table."""

    root: Path
    files: list[Path]
    table: pa.Table  # rows in file order, day last (as pyarrow.dataset reads it)


def events_rows(start: int, n: int, seed: int) -> pa.Table:
    """``n`` events with ids from ``start`` (sorted)."""
    rng = np.random.default_rng(seed)
    return pa.table({
        "id": pa.array(np.arange(start, start + n), pa.int64()),
        "user": pa.array([f"u{int(x):05d}" for x in rng.integers(0, 50_000, n)]),
        "amount": pa.array(rng.normal(100, 30, n).round(2)),
        "kind": pa.array(rng.choice(["view", "click", "buy"], n).tolist()),
        "ok": pa.array(rng.random(n) < 0.9),
        "ts": pa.array((np.int64(1_717_200_000_000_000) + np.arange(n) * 1_000_000)
                       .astype("datetime64[us]")).cast(pa.timestamp("ns")),
    })


def write_events(root: Path) -> Events:
    """Write the dataset under ``root`` with aorc (bloom filters on ``user``)."""
    files = []
    start = 0
    for d, day in enumerate(DAYS):
        for i in range(FILES_PER_DAY):
            rows = events_rows(start, ROWS_PER_FILE, seed=d * 10 + i)
            path = root / f"day={day}" / f"part-{i}.orc"
            path.parent.mkdir(parents=True, exist_ok=True)
            aorc.sync.write_table(rows.to_batches(max_chunksize=1000), path,
                                  stripe_size=STRIPE_SIZE, row_index_stride=1000,
                                  bloom_filter_columns=("user",))
            files.append(path)
            start += ROWS_PER_FILE
    table = pads.dataset(str(root), format="orc", partitioning="hive").to_table()
    return Events(root, files, table)


@dataclass(frozen=True)
class Encrypted:
    """A file with ``user`` (masked by sha256) and ``amount`` (nullified) encrypted under
    the master key ``pii``; :attr:`table` holds its clear rows."""

    path: Path
    keys: aorc.InMemoryKeys
    table: pa.Table
    key_hex: str  # (to check that no repr or log shows it)


#: The master key of :func:`write_encrypted` (a test key).
PII_KEY = bytes(range(100, 116))


def write_encrypted(root: Path) -> Encrypted:
    """Write :class:`Encrypted`'s file under ``root`` (several stripes)."""
    keys = aorc.InMemoryKeys({"pii": PII_KEY})
    rows = events_rows(0, ROWS_PER_FILE, seed=99)
    path = root / "encrypted.orc"
    aorc.sync.write_table(rows.to_batches(max_chunksize=1000), path, stripe_size=STRIPE_SIZE,
                          row_index_stride=1000, encrypt="pii:user,amount",
                          masks="sha256:user", keys=keys)
    return Encrypted(path, keys, rows, PII_KEY.hex())


def orc_rows(files: list[str], keys: Any = None) -> pa.Table:
    """The rows of ``files`` read by aorc's own reader (with ``keys``, if any)."""
    tables = []
    for f in files:
        with aorc.sync.open_reader(f, keys=keys) as reader:
            tables.append(reader.read())
    return pa.concat_tables(tables)


def check_masked(got: pa.Table, enc: Encrypted, path: Path | None = None) -> None:
    """``got`` (all columns, any row order) holds ``enc``'s rows masked, as aorc's own reader
    without keys reads ``path`` (default ``enc.path``): ``user`` as sha256 digests,
    ``amount`` nulls, the rest clear."""
    with aorc.sync.open_reader(path or enc.path) as reader:
        masked = reader.read()
    got, want = sorted_rows(got), sorted_rows(masked)
    assert got.column("amount").null_count == got.num_rows > 0
    assert got.column("user").to_pylist() == want.column("user").to_pylist()
    assert set(got.column("user").to_pylist()).isdisjoint(enc.table.column("user").to_pylist())
    assert got.drop_columns(["user", "amount"]).equals(
        sorted_rows(enc.table).drop_columns(["user", "amount"]))


@dataclass(frozen=True)
class IcebergEvents:
    """An Iceberg table of events (ORC data files, partitioned by ``kind``) after one
    position delete; :attr:`table` holds its rows as pyiceberg's own scan reads them."""

    table: Any
    rows: pa.Table
    deleted: int


def write_iceberg_events(root: Path) -> IcebergEvents:
    """Make :class:`IcebergEvents` in a SQL catalog on SQLite under ``root``."""
    import asyncio

    import pyarrow.parquet as pq
    from pyiceberg.manifest import DataFileContent, FileFormat
    from pyiceberg.partitioning import PartitionField, PartitionSpec
    from pyiceberg.transforms import IdentityTransform

    import aorc.iceberg
    from helpers.iceberg import commit_delete_files, delete_file
    from helpers.iceberg_fixtures import local_catalog

    catalog = local_catalog(root)
    data = events_rows(0, 3 * ROWS_PER_FILE, seed=7).drop_columns(["ts"])
    table = catalog.create_table("db.events", data.schema)
    with table.update_spec() as spec:
        spec.add_field("kind", IdentityTransform(), "kind")
    assert table.spec() != PartitionSpec() and isinstance(table.spec().fields[0],
                                                         PartitionField)
    for part in range(3):
        asyncio.run(aorc.iceberg.append(table, data.slice(part * ROWS_PER_FILE,
                                                          ROWS_PER_FILE),
                                        stripe_size=STRIPE_SIZE))
    f = max((t.file for t in table.scan().plan_files()), key=lambda d: d.record_count)
    pairs = [(f.file_path, k) for k in range(0, f.record_count, 5)]
    path = root / "deletes.parquet"
    schema = pa.schema([pa.field("file_path", pa.string(), False,
                                 {b"PARQUET:field_id": b"2147483546"}),
                        pa.field("pos", pa.int64(), False,
                                 {b"PARQUET:field_id": b"2147483545"})])
    pq.write_table(pa.table({"file_path": [p for p, _ in pairs],
                             "pos": [k for _, k in pairs]}, schema=schema), path)
    commit_delete_files(table, [delete_file(table, f"file://{path}",
                                            DataFileContent.POSITION_DELETES, len(pairs),
                                            path.stat().st_size, FileFormat.PARQUET,
                                            f.partition)])
    table = catalog.load_table("db.events")
    theirs = table.scan().to_arrow()
    assert theirs.num_rows == data.num_rows - len(pairs)
    return IcebergEvents(table, theirs, len(pairs))


def sorted_rows(table: pa.Table, by: str = "id") -> pa.Table:
    """``table`` sorted by ``by`` with its chunks combined (engines return rows in
    task order)."""
    return table.sort_by(by).combine_chunks() if table.num_rows else table


def upload(client: object, bucket: str, events: Events) -> str:
    """The dataset's files put into ``bucket``; returns its ``s3://`` root."""
    for path in events.files:
        key = "events/" + path.relative_to(events.root).as_posix()
        client.put_object(Bucket=bucket, Key=key, Body=path.read_bytes())  # type: ignore[attr-defined]
    return f"s3://{bucket}/events"


def stripe_spans(path: Path) -> list[tuple[int, int]]:
    """(offset, end) of each stripe of a local file."""
    with aorc.sync.open_reader(path) as reader:
        return [(s.offset, s.offset + s.length) for s in reader.stripes]


def ranges_read(proxy: object, key: str, *, tails: bool = True) -> list[tuple[int, int]]:
    """The byte ranges of GETs of ``key`` through the S3 proxy ((start, end) exclusive; a
    tail read, ``bytes=-n``, as (-n, huge); ``tails=False``: without them)."""
    out = []
    for record in proxy.records("GetObject"):  # type: ignore[attr-defined]
        if not unquote(record.target.split("?")[0]).endswith(key):
            continue
        spec = record.headers.get("range") or record.headers.get("Range")
        if spec is None:
            out.append((0, 1 << 62))
            continue
        first, _, last = spec.removeprefix("bytes=").partition("-")
        if first == "":  # suffix range: the tail
            if tails:
                out.append((-int(last), 1 << 62))
        else:
            out.append((int(first), int(last) + 1 if last else 1 << 62))
    return out


def overlaps(ranges: list[tuple[int, int]], span: tuple[int, int], size: int) -> bool:
    """Whether a read range touches ``span`` of a file of ``size`` bytes."""
    for start, end in ranges:
        start = size + start if start < 0 else start
        if start < span[1] and span[0] < min(end, size):
            return True
    return False


def kill_once_before_rename(marker: str) -> None:
    """Installed in an engine's worker process: the first local file completion of any
    worker (the one that creates ``marker``) kills its process, the file's data written and
    its rename not done; later completions run as usual."""
    from aorc.io import output

    original = output.LocalOutput.complete
    if getattr(original, "kills", False):
        return

    async def complete(self: Any) -> None:
        try:
            os.close(os.open(marker, os.O_CREAT | os.O_EXCL))
        except FileExistsError:
            return await original(self)
        os._exit(1)

    complete.kills = True  # type: ignore[attr-defined]
    output.LocalOutput.complete = complete  # type: ignore[method-assign]


def visible_files(root: Path) -> list[str]:
    """The files under ``root`` a reader lists (hidden names left out), sorted."""
    return sorted(str(p) for p in root.rglob("*")
                  if p.is_file() and not any(part.startswith((".", "_"))
                                             for part in p.relative_to(root).parts))
