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


async def test_files_wait_for_the_stale_cleaning(tmp_path: Path,
                                                 monkeypatch: Any) -> None:
    """Two cuts of a stream finish their files concurrently: the second file must not create
    its temporary while the first one's cleaning lists the folder (it would be taken for
    stale and removed). The cleaning is held by an event until the second file asked."""
    import asyncio
    import threading

    from aorc.sink import files as sink_files
    listing, release = threading.Event(), threading.Event()
    real = sink_files._remove_matching

    def held(folder: str, pattern: Any) -> list[str]:
        listing.set()
        assert release.wait(60)
        return real(folder, pattern)
    monkeypatch.setattr(sink_files, "_remove_matching", held)
    stale = sink_files.StaleTemporaries()
    first = asyncio.ensure_future(stale.clean(str(tmp_path / "t+0+00000000000000000000.orc"),
                                              {}))
    assert await asyncio.to_thread(listing.wait, 60)
    second = asyncio.ensure_future(stale.clean(str(tmp_path / "t+0+00000000000000000010.orc"),
                                               {}))
    try:
        await asyncio.sleep(0)  # (the second file asked)
        await asyncio.sleep(0)
        assert not second.done()  # it waits for the listing under way
    finally:
        release.set()
    await asyncio.wait_for(asyncio.gather(first, second), 60)
