"""Events into an Iceberg table with ORC data files, end to end, on the local disk.

Needs the iceberg extra (``pip install -e '.[iceberg]'``). Run::

    python examples/iceberg_events.py [FOLDER]

It creates pyiceberg's SQL catalog (SQLite) and a warehouse in FOLDER (default: a temporary
folder), a table partitioned by day, then:

1. appends a batch of events with ``aorc.iceberg.append`` (one snapshot);
2. streams more events into it exactly once with ``aorc.sink.RollingSink`` (one snapshot
   per cut, the stream positions in its summary);
3. reads one day with a filter with ``aorc.iceberg.read_table`` (pushdown inside the
   files) and checks the answer against pyiceberg's own scan;
4. compacts the small files of the stream with ``aorc.iceberg.rewrite_files``;

and prints what it did. The same table is readable with ``aorc head
iceberg://demo/db.events`` once the catalog is configured for pyiceberg (printed at the end).
"""

from __future__ import annotations

import asyncio
import datetime
import sys
import tempfile
from pathlib import Path

import numpy as np
import pyarrow as pa

import aorc.iceberg
from aorc.sink import RollingSink


def events(n: int, start: int, seed: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    t0 = np.datetime64("2026-11-20T00:00:00", "us")
    return pa.table({
        "offset": pa.array(np.arange(start, start + n, dtype=np.int64)),
        "ts": pa.array(t0 + (np.arange(start, start + n) * 20_000_000).astype(
            "timedelta64[us]")),
        "region": pa.array(np.array(["eu", "us", "ap"])[rng.integers(0, 3, n)]),
        "amount": pa.array(np.round(rng.random(n) * 100, 2)),
    })


async def main(folder: Path) -> None:
    from pyiceberg.catalog.sql import SqlCatalog
    from pyiceberg.partitioning import PartitionField, PartitionSpec
    from pyiceberg.schema import Schema
    from pyiceberg.transforms import DayTransform
    from pyiceberg.types import DoubleType, LongType, NestedField, StringType, TimestampType

    catalog = SqlCatalog("demo", uri=f"sqlite:///{folder}/catalog.db",
                         warehouse=f"file://{folder}/warehouse")
    catalog.create_namespace("db")
    schema = Schema(NestedField(1, "offset", LongType()), NestedField(2, "ts", TimestampType()),
                    NestedField(3, "region", StringType()),
                    NestedField(4, "amount", DoubleType()))
    table = catalog.create_table("db.events", schema, partition_spec=PartitionSpec(
        PartitionField(2, 1000, DayTransform(), "ts_day")),
        properties={"write.format.default": "orc", "write.orc.compression-codec": "zstd"})

    # 1. one append, one snapshot
    snapshot = await aorc.iceberg.append(table, events(10_000, 0, seed=1))
    print(f"appended {snapshot.summary['added-records']} rows in "
          f"{snapshot.summary['added-data-files']} ORC files")

    # 2. a stream, exactly once: a restart would resume after the positions it committed
    async with RollingSink(table, max_rows=3_000) as sink:
        more = events(20_000, 10_000, seed=2)
        for batch in more.to_batches(max_chunksize=1_000):
            await sink.write(batch, topic="events", partition=0, offsets="offset")
    print(f"streamed 20000 rows: positions in the table {await sink.committed_offsets()}")

    # 3. one day, one region: pruned by partition, then by stripe and row group statistics
    day = [("ts", ">=", datetime.datetime(2026, 11, 21)),
           ("ts", "<", datetime.datetime(2026, 11, 22)), ("region", "==", "eu")]
    ours = await aorc.iceberg.read_table(table, filters=day, columns=["offset", "amount"])
    theirs = table.scan(row_filter="ts >= '2026-11-21T00:00:00' and ts < '2026-11-22T00:00:00'"
                        " and region = 'eu'", selected_fields=("offset", "amount")).to_arrow()
    assert sorted(ours.column("offset").to_pylist()) == sorted(
        theirs.column("offset").to_pylist())
    print(f"one day in eu: {ours.num_rows} rows (pyiceberg's scan agrees)")

    # 4. compaction: the stream's small files merged by copying their stripes
    result = await aorc.iceberg.rewrite_files(table, target_size=64 << 20)
    print(f"rewrite: {result.rewritten} files -> {result.added} "
          f"({result.stripe_copied} by stripe copy, {result.re_encoded} re-encoded)")
    total = await aorc.iceberg.read_table(table, columns=["offset"])
    assert sorted(total.column("offset").to_pylist()) == list(range(30_000))
    print("every row once: 30000")
    print("\nto look at it from the command line:\n"
          f"  export PYICEBERG_CATALOG__DEMO__TYPE=sql\n"
          f"  export PYICEBERG_CATALOG__DEMO__URI=sqlite:///{folder}/catalog.db\n"
          f"  export PYICEBERG_CATALOG__DEMO__WAREHOUSE=file://{folder}/warehouse\n"
          "  aorc meta iceberg://demo/db.events")


if __name__ == "__main__":
    if len(sys.argv) > 1:
        target = Path(sys.argv[1])
        target.mkdir(parents=True, exist_ok=True)
        asyncio.run(main(target))
    else:
        with tempfile.TemporaryDirectory() as tmp:
            asyncio.run(main(Path(tmp)))
