"""Write ORC files with aorc: a whole table at once, then a stream of batches.

Usage::

    python examples/write_file.py [output folder]

Without a folder the files go to a temporary folder that is removed at the end. Each file is
read back with aorc and pyarrow.orc to show that both see the same rows.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path

import pyarrow as pa
import pyarrow.orc

import aorc


def make_table(start: int, n: int) -> pa.Table:
    """Some rows of an orders table."""
    ids = range(start, start + n)
    return pa.table({
        "id": pa.array(ids, pa.int64()),
        "customer": pa.array([f"customer-{i % 997}" for i in ids]),
        "amount": pa.array([round(i * 0.37 % 1000, 2) for i in ids]),
        "tags": pa.array([[f"t{i % 5}"] * (i % 3) for i in ids], pa.list_(pa.string())),
    })


async def batches(total: int, size: int) -> AsyncIterator[pa.RecordBatch]:
    """A slow producer, e.g. rows arriving from a network service."""
    for start in range(0, total, size):
        await asyncio.sleep(0)  # stand-in for awaiting the next message
        yield make_table(start, min(size, total - start)).to_batches()[0]


async def write_examples(folder: Path) -> None:
    # 1. A whole table: options are named as in pyarrow.orc.write_table.
    table = make_table(0, 100_000)
    whole = folder / "orders.orc"
    await aorc.write_table(
        table, whole,
        compression="zstd",                    # also "zlib", "snappy", "lz4", "none"
        row_index_stride=10_000,               # 0: no row index
        bloom_filter_columns=["customer"],     # filters per row group, for point lookups
        metadata={"source": "examples/write_file.py"},
    )
    print(f"{whole.name}: {whole.stat().st_size} bytes")

    # 2. A stream of batches. The file appears only when the block ends without an error;
    #    stripes are encoded in a worker thread and written out as soon as they are ready.
    streamed = folder / "orders-streamed.orc"
    async with aorc.open_writer(streamed, table.schema, stripe_size=1024 * 1024,
                                compression="lz4") as writer:
        async for batch in batches(total=300_000, size=5_000):
            await writer.write(batch)
    print(f"{streamed.name}: {writer.num_rows} rows in {writer.num_stripes} stripes, "
          f"{writer.bytes_written} bytes")

    # 3. An error inside the block leaves nothing behind.
    failed = folder / "never.orc"
    try:
        async with aorc.open_writer(failed, "struct<id:bigint,note:string>") as writer:
            await writer.write(pa.table({"id": [1, 2], "note": ["a", "b"]}))
            raise RuntimeError("the producer failed")
    except RuntimeError as exc:
        print(f"{failed.name}: not written ({exc}); exists: {failed.exists()}")

    # Read back with aorc and with pyarrow.
    for path in (whole, streamed):
        ours = await aorc.read_table(path)
        theirs = pyarrow.orc.read_table(str(path))
        print(f"{path.name}: aorc and pyarrow read the same {ours.num_rows} rows: "
              f"{ours.equals(theirs)}")


def main() -> None:
    if len(sys.argv) > 1:
        asyncio.run(write_examples(Path(sys.argv[1])))
        return
    with tempfile.TemporaryDirectory() as folder:
        asyncio.run(write_examples(Path(folder)))


if __name__ == "__main__":
    main()
