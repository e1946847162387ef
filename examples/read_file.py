"""Read an ORC file with aorc: print what the file says about itself, then stream its rows.

Usage::

    python examples/read_file.py data.orc [column ...]

Without a file argument, the example writes a small file with pyarrow first and reads that.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path

import pyarrow as pa
import pyarrow.orc

import aorc


def make_sample(folder: Path) -> Path:
    """Write a small ORC file to read."""
    n = 50_000
    table = pa.table({
        "id": pa.array(range(n)),
        "name": pa.array([f"item-{i % 1000}" for i in range(n)]),
        "price": pa.array([i * 0.25 for i in range(n)]),
    })
    path = folder / "sample.orc"
    pyarrow.orc.write_table(table, str(path), stripe_size=256 * 1024, compression="zstd")
    return path


async def show(path: str, columns: list[str] | None) -> None:
    async with aorc.open_reader(path) as reader:
        writer = reader.writer
        print(f"file:        {reader.path}")
        print(f"format:      ORC {reader.file_version}, written by {writer.name} "
              f"({writer.software_version or 'version not recorded'})")
        print(f"compression: {reader.compression}, blocks of {reader.compression_block_size}")
        print(f"rows:        {reader.num_rows} in {reader.num_stripes} stripe(s)")
        print(f"schema:      {reader.orc_type}")
        for key, value in reader.metadata.items():
            print(f"metadata:    {key} ({len(value)} bytes)")
        names = reader.column_names()
        for column_id, stats in enumerate(reader.statistics[1:], start=1):
            print(f"  {names[column_id]}: min={stats.minimum!r} max={stats.maximum!r} "
                  f"values={stats.num_values} nulls={stats.has_null}")
        print(f"I/O to open: {reader.io_stats.requests} request(s), "
              f"{reader.io_stats.bytes} bytes")

        rows = 0
        async for batch in reader.iter_batches(columns=columns, batch_size=20_000):
            if rows == 0:
                print("first rows:", batch.slice(0, 3).to_pylist())
            rows += batch.num_rows
        print(f"read {rows} rows; I/O in total: {reader.io_stats.requests} request(s), "
              f"{reader.io_stats.bytes} bytes")


def main() -> None:
    columns = sys.argv[2:] or None
    if len(sys.argv) > 1:
        asyncio.run(show(sys.argv[1], columns))
        return
    with tempfile.TemporaryDirectory() as folder:
        asyncio.run(show(str(make_sample(Path(folder))), columns))


if __name__ == "__main__":
    main()
