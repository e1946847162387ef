"""A sink killed by SIGKILL leaves its hidden temporary file; the next sink writing the same
stream into the same folder removes the stale temporaries of that stream (named
``.<topic>+<partition>+<offset>.orc.aorc-tmp-<hex>``), and never those of another stream,
which may belong to another live sink process on the same folder. Crashes are SIGKILLs sent
when the child says (through its stdout) that its temporary file exists."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import aorc
from aorc.sink import RollingSink

CHILD = Path(__file__).resolve().parents[1] / "helpers" / "sink_temp_child.py"
sys.path.insert(0, str(CHILD.parent))

from sink_temp_child import SCHEMA, rows, temporaries, uploads  # noqa: E402


def start_child(folder: Path | str, topic: str, partition: int) -> subprocess.Popen[str]:
    child = subprocess.Popen([sys.executable, str(CHILD), str(folder), topic, str(partition)],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None
    line = child.stdout.readline()  # the event: a temporary file exists
    assert line.strip() == "ready", f"the child failed: {line!r}"
    return child


def kill(child: subprocess.Popen[str]) -> None:
    child.kill()
    child.wait()
    for stream in (child.stdin, child.stdout):
        if stream is not None:
            stream.close()


async def test_stale_temporaries_of_the_stream_are_removed(tmp_path: Path) -> None:
    folder = tmp_path / "events"
    for _ in range(2):  # two crashes: the second run removed the first one's temporary
        kill(start_child(folder, "t", 0))
    assert len(temporaries(folder, "t", 0)) == 1  # (they piled up: 2)
    other = start_child(folder, "t", 1)  # another live sink on the folder, another stream
    try:
        theirs = temporaries(folder, "t", 1)
        assert len(theirs) == 1
        async with RollingSink(folder, SCHEMA, time_partitioning=None) as sink:
            await sink.write(rows(0, 100, 0), topic="t", partition=0, offsets="offset")
        assert temporaries(folder, "t", 0) == []  # the stale ones are gone
        assert temporaries(folder, "t", 1) == theirs  # the live sink's file is untouched
        back = await aorc.read_dataset(folder)
        assert sorted(back.column("offset").to_pylist()) == list(range(100))
    finally:
        kill(other)


async def test_stale_uploads_of_the_stream_are_aborted(s3_client: Any, s3_bucket: str) -> None:
    """The same on S3: a killed sink's incomplete multipart uploads of the stream are
    aborted by the next sink writing it; another live sink's upload stays."""
    prefix = f"s3://{s3_bucket}/events"
    for _ in range(2):
        kill(start_child(prefix, "t", 0))
    assert len(uploads(prefix, "t", 0)) == 1  # (they piled up: 2)
    other = start_child(prefix, "t", 1)
    try:
        theirs = uploads(prefix, "t", 1)
        assert len(theirs) == 1
        async with RollingSink(prefix, SCHEMA, time_partitioning=None) as sink:
            await sink.write(rows(0, 100, 0), topic="t", partition=0, offsets="offset")
        assert uploads(prefix, "t", 0) == []
        assert uploads(prefix, "t", 1) == theirs
        back = await aorc.read_dataset(prefix)
        assert sorted(back.column("offset").to_pylist()) == list(range(100))
    finally:
        kill(other)
