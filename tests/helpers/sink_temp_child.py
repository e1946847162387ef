"""A sink process for tests/sink/test_sink_temporaries.py: streams seeded rows of one stream
into a local folder (or an ``s3://`` prefix: moto, through the AWS environment) with
RollingSink until a hidden temporary file (an incomplete multipart upload) of that stream
exists, prints ``ready`` and waits (for its SIGKILL, or for its stdin to close).

Usage: ``python sink_temp_child.py FOLDER TOPIC PARTITION``.
"""

from __future__ import annotations

import asyncio
import pathlib
import sys
from typing import Any

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))

import numpy as np  # noqa: E402
import pyarrow as pa  # noqa: E402

from aorc.sink import RollingSink  # noqa: E402

SCHEMA = pa.schema([("offset", pa.int64()), ("payload", pa.binary())])


def rows(start: int, n: int, seed: int, size: int = 512) -> pa.Table:
    rng = np.random.default_rng(seed)
    return pa.table({"offset": pa.array(range(start, start + n), pa.int64()),
                     "payload": [rng.bytes(size) for _ in range(n)]}, schema=SCHEMA)


def uploads(prefix: str, topic: str, partition: int) -> list[str]:
    """The incomplete multipart uploads of the stream's files under ``s3://bucket/prefix``."""
    import boto3

    bucket, _, key = prefix.removeprefix("s3://").partition("/")
    client = boto3.client("s3")
    found = client.list_multipart_uploads(Bucket=bucket, Prefix=f"{key}/{topic}+{partition}+")
    return sorted(u["UploadId"] for u in found.get("Uploads", []))


def temporaries(folder: pathlib.Path, topic: str, partition: int) -> list[pathlib.Path]:
    return [p for p in (folder.iterdir() if folder.is_dir() else [])
            if p.name.startswith(f".{topic}+{partition}+") and ".aorc-tmp-" in p.name]


async def main(target: str, topic: str, partition: int) -> None:
    remote = target.startswith("s3://")

    def pending() -> set[Any]:
        if remote:
            return set(uploads(target, topic, partition))
        return set(temporaries(pathlib.Path(target), topic, partition))

    sink = RollingSink(target, SCHEMA, time_partitioning=None, max_age=None,
                       stripe_size=4096, compression="none")
    await sink.__aenter__()
    start = 0
    before = pending()  # a crashed run's, maybe
    while not pending() - before:  # until a stripe reached the disk (a part the store)
        await sink.write(rows(start, 64, start, 65536 if remote else 512), topic=topic,
                         partition=partition, offsets="offset")
        start += 64
    print("ready", flush=True)
    await asyncio.to_thread(sys.stdin.read)  # the parent kills us (or closes stdin)
    await sink.abort()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
