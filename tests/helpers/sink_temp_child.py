"""A sink process for tests/sink/test_sink_temporaries.py: streams seeded rows of one stream
into a local folder with RollingSink until a hidden temporary file of that stream exists on
disk, prints ``ready`` and waits (for its SIGKILL, or for its stdin to close).

Usage: ``python sink_temp_child.py FOLDER TOPIC PARTITION``.
"""

from __future__ import annotations

import asyncio
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))

import numpy as np  # noqa: E402
import pyarrow as pa  # noqa: E402

from aorc.sink import RollingSink  # noqa: E402

SCHEMA = pa.schema([("offset", pa.int64()), ("payload", pa.binary())])


def rows(start: int, n: int, seed: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    return pa.table({"offset": pa.array(range(start, start + n), pa.int64()),
                     "payload": [rng.bytes(512) for _ in range(n)]}, schema=SCHEMA)


def temporaries(folder: pathlib.Path, topic: str, partition: int) -> list[pathlib.Path]:
    return [p for p in (folder.iterdir() if folder.is_dir() else [])
            if p.name.startswith(f".{topic}+{partition}+") and ".aorc-tmp-" in p.name]


async def main(folder: pathlib.Path, topic: str, partition: int) -> None:
    sink = RollingSink(folder, SCHEMA, time_partitioning=None, max_age=None,
                       stripe_size=4096, compression="none")
    await sink.__aenter__()
    start = 0
    before = set(temporaries(folder, topic, partition))  # a crashed run's, maybe
    while not set(temporaries(folder, topic, partition)) - before:  # a stripe reached disk
        await sink.write(rows(start, 64, start), topic=topic, partition=partition,
                         offsets="offset")
        start += 64
    print("ready", flush=True)
    await asyncio.to_thread(sys.stdin.read)  # the parent kills us (or closes stdin)
    await sink.abort()


if __name__ == "__main__":
    asyncio.run(main(pathlib.Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])))
