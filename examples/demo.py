"""aorc demo: write a sample ORC file, read it back, and show what is inside.

Run: python examples/demo.py [--rows N] [--out PATH]

Without --out the file goes to a temporary folder that is deleted when the demo ends (the
demo says where); --out PATH keeps it there, e.g. for `aorc meta PATH`.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import pathlib
import tempfile

import numpy as np
import pyarrow as pa

import aorc


def sample_table(rows: int, seed: int = 7) -> pa.Table:
    """A small table with the kinds of columns an event pipeline produces."""
    rng = np.random.default_rng(seed)
    start = np.datetime64("2026-11-22T00:00:00", "ns")
    return pa.table(
        {
            "id": pa.array(np.arange(rows, dtype=np.int64)),
            "ts": pa.array(start + rng.integers(0, 86_400 * 10**9, rows).astype("timedelta64[ns]")),
            "country": pa.array(rng.choice(["DE", "FR", "US", "JP", "BR"], rows)),
            "amount": pa.array(np.round(rng.gamma(2.0, 30.0, rows), 2)),
            "ok": pa.array(rng.random(rows) > 0.1),
            "tags": pa.array([["a", "b"][: i % 3] for i in range(rows)], pa.list_(pa.string())),
        }
    )


async def main(rows: int, out: pathlib.Path, keep: bool = True) -> None:
    table = sample_table(rows)
    await aorc.write_table(
        table,
        out,
        compression="zstd",
        bloom_filter_columns=["country"],
        metadata={"source": "aorc demo"},
    )
    print(f"wrote {out} ({out.stat().st_size:,} bytes, {rows:,} rows)")
    if not keep:
        print("  (a temporary folder, deleted when the demo ends: pass --out PATH to keep "
              "the file)")

    async with aorc.open_reader(out) as reader:
        print(f"schema:      {reader.orc_type}")
        print(f"rows:        {reader.num_rows:,} in {reader.num_stripes} stripe(s)")
        print(f"compression: {reader.compression}; writer: {reader.writer}")
        print(f"metadata:    {reader.metadata}")
        back = await reader.read()
    assert back.equals(table), "read-back differs from what was written"
    print("read back: identical to the written table")
    from pyarrow import orc as pyarrow_orc  # a second, independent ORC reader (ORC C++)

    assert pyarrow_orc.read_table(str(out)).equals(table), "pyarrow.orc reads it differently"
    print("pyarrow.orc (ORC C++) reads the same table")

    us = await aorc.read_table(out, columns=["country", "amount"])
    totals: dict[str, float] = {}
    countries, amounts = us.column("country").to_pylist(), us.column("amount").to_pylist()
    for country, amount in zip(countries, amounts, strict=True):
        totals[country] = totals.get(country, 0.0) + amount
    for country, total in sorted(totals.items()):
        print(f"  {country}: {total:12,.2f}")
    print(f"done at {dt.datetime.now(dt.UTC):%H:%M:%S} UTC")
    if keep:
        print(f"the file is at {out.resolve()}; look inside with: aorc meta {out}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=100_000,
                        help="rows of the sample table (default: 100,000)")
    parser.add_argument("--out", type=pathlib.Path, default=None,
                        help="where to write the ORC file and keep it (default: a temporary "
                        "folder, deleted at the end)")
    ns = parser.parse_args()
    if ns.out is None:
        with tempfile.TemporaryDirectory() as tmp:
            asyncio.run(main(ns.rows, pathlib.Path(tmp) / "demo.orc", keep=False))
    else:
        asyncio.run(main(ns.rows, ns.out))
