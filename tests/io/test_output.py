"""Sinks: atomic local files, memory, open_output."""

from __future__ import annotations

import asyncio
import os
import pathlib
import threading

import pytest

from aorc.errors import (
    AccessDeniedError,
    SchemaError,
    StoreError,
    UnsupportedFeatureError,
)
from aorc.io import open_output
from aorc.io.output import TEMP_MARKER, LocalOutput, MemoryOutput, Output


def listing(directory: pathlib.Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir())


def temp_files(directory: pathlib.Path) -> list[str]:
    return [n for n in listing(directory) if TEMP_MARKER in n]


async def test_local_sink_is_invisible_until_complete(tmp_path: pathlib.Path) -> None:
    target = tmp_path / "out.orc"
    sink = LocalOutput(target)
    assert listing(tmp_path) == []  # nothing is created before the first write
    await sink.write(b"ORC")
    await sink.write(memoryview(b"-stripe-"))
    await sink.write(bytearray(b"tail"))
    names = listing(tmp_path)
    assert names == [f".out.orc{TEMP_MARKER}{names[0].rsplit('-', 1)[1]}"]
    assert not target.exists()
    assert (tmp_path / names[0]).read_bytes() == b"ORC-stripe-tail"
    await sink.complete()
    assert listing(tmp_path) == ["out.orc"]
    assert target.read_bytes() == b"ORC-stripe-tail"
    assert sink.bytes_written == len(b"ORC-stripe-tail")


async def test_complete_replaces_an_existing_file(tmp_path: pathlib.Path) -> None:
    target = tmp_path / "out.orc"
    target.write_bytes(b"old contents")
    sink = LocalOutput(target, fsync=False)
    await sink.write(b"new")
    assert target.read_bytes() == b"old contents"
    await sink.complete()
    assert target.read_bytes() == b"new"
    assert listing(tmp_path) == ["out.orc"]


async def test_abort_removes_the_temporary_file_and_keeps_the_target(
        tmp_path: pathlib.Path) -> None:
    target = tmp_path / "out.orc"
    target.write_bytes(b"old contents")
    sink = LocalOutput(target)
    await sink.write(b"partial")
    assert len(temp_files(tmp_path)) == 1
    await sink.abort()
    await sink.abort()  # idempotent
    assert listing(tmp_path) == ["out.orc"]
    assert target.read_bytes() == b"old contents"
    with pytest.raises(StoreError, match="aborted"):
        await sink.write(b"more")
    with pytest.raises(StoreError, match="aborted"):
        await sink.complete()


async def test_abort_before_any_write_leaves_nothing(tmp_path: pathlib.Path) -> None:
    sink = LocalOutput(tmp_path / "out.orc")
    await sink.abort()
    assert listing(tmp_path) == []


async def test_complete_without_writes_creates_an_empty_file(tmp_path: pathlib.Path) -> None:
    sink = LocalOutput(tmp_path / "out.orc")
    await sink.complete()
    assert (tmp_path / "out.orc").read_bytes() == b""
    await sink.abort()  # after completion: nothing to do
    assert listing(tmp_path) == ["out.orc"]
    with pytest.raises(StoreError, match="complete"):
        await sink.write(b"x")


async def test_missing_directories_are_created(tmp_path: pathlib.Path) -> None:
    sink = LocalOutput(tmp_path / "missing" / "deeper" / "out.orc")
    assert not (tmp_path / "missing").exists()  # nothing happens before the first write
    await sink.write(b"ORC")
    await sink.complete()
    assert (tmp_path / "missing" / "deeper" / "out.orc").read_bytes() == b"ORC"


async def test_parent_that_is_a_file(tmp_path: pathlib.Path) -> None:
    (tmp_path / "plain").write_bytes(b"x")
    sink = LocalOutput(tmp_path / "plain" / "out.orc")
    with pytest.raises(StoreError, match="plain"):
        await sink.write(b"ORC")
    await sink.abort()


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0,
                    reason="root ignores directory permissions")
async def test_read_only_directory(tmp_path: pathlib.Path) -> None:  # pragma: no cover
    tmp_path.chmod(0o500)
    try:
        with pytest.raises(AccessDeniedError):
            await LocalOutput(tmp_path / "out.orc").write(b"ORC")
    finally:
        tmp_path.chmod(0o700)


async def test_target_is_a_directory(tmp_path: pathlib.Path) -> None:
    (tmp_path / "dir.orc").mkdir()
    sink = LocalOutput(tmp_path / "dir.orc")
    with pytest.raises(StoreError, match="dir.orc"):
        await sink.write(b"ORC")
    await sink.abort()
    assert listing(tmp_path) == ["dir.orc"]
    with pytest.raises(SchemaError, match="directory"):
        LocalOutput(str(tmp_path) + os.sep)


async def test_abort_waits_for_a_cancelled_write(tmp_path: pathlib.Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """A write cancelled while its thread runs must not recreate or leave the temp file."""
    started, release = threading.Event(), threading.Event()
    original = LocalOutput._write_sync

    def held_write(self: LocalOutput, data: bytes) -> None:
        started.set()
        release.wait()  # still running when the cancellation arrives
        original(self, data)

    monkeypatch.setattr(LocalOutput, "_write_sync", held_write)
    sink = LocalOutput(tmp_path / "out.orc")
    task = asyncio.ensure_future(sink.write(b"data"))
    await asyncio.to_thread(started.wait)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    release.set()  # the thread now writes; abort must wait for it, then clean up
    await sink.abort()
    assert listing(tmp_path) == []


async def test_memory_sink() -> None:
    sink = MemoryOutput()
    await sink.write(b"ab")
    await sink.write(memoryview(b"cd"))
    assert sink.bytes_written == 4
    with pytest.raises(StoreError, match="not complete"):
        sink.getvalue()
    await sink.complete()
    assert sink.completed
    assert sink.getvalue() == b"abcd"
    with pytest.raises(StoreError):
        await sink.write(b"x")

    aborted = MemoryOutput()
    await aborted.write(b"ab")
    await aborted.abort()
    assert aborted.bytes_written == 0
    with pytest.raises(StoreError, match="aborted"):
        aborted.getvalue()


def test_sinks_implement_the_protocol(tmp_path: pathlib.Path) -> None:
    assert isinstance(MemoryOutput(), Output)
    assert isinstance(LocalOutput(tmp_path / "x.orc"), Output)


def test_open_sink_destinations(tmp_path: pathlib.Path) -> None:
    target = tmp_path / "out.orc"
    for dest in (str(target), target, target.as_uri(), "file://localhost" + str(target)):
        sink = open_output(dest)
        assert isinstance(sink, LocalOutput)
        assert os.path.abspath(sink.path) == str(target)
    memory = MemoryOutput()
    assert open_output(memory) is memory
    assert open_output(str(target), {"fsync": False})._fsync is False  # type: ignore[attr-defined]


def test_open_output_refusals(tmp_path: pathlib.Path) -> None:
    with pytest.raises(UnsupportedFeatureError, match="read-only"):
        open_output("https://example.com/x.orc?sig=secret")
    with pytest.raises(UnsupportedFeatureError, match="scheme"):
        open_output("ftp://example.com/x.orc")
    with pytest.raises(UnsupportedFeatureError, match="another host"):
        open_output("file://elsewhere/x.orc")
    with pytest.raises(SchemaError, match="unknown storage option"):
        open_output(str(tmp_path / "x.orc"), {"region": "x"})
    with pytest.raises(SchemaError, match="fsync"):
        open_output(str(tmp_path / "x.orc"), {"fsync": "yes"})
    with pytest.raises(SchemaError, match="existing output"):
        open_output(MemoryOutput(), {"fsync": False})
    with pytest.raises(SchemaError, match="cannot write to a int"):
        open_output(42)  # type: ignore[arg-type]


async def test_cancelled_complete_reports_the_outcome(tmp_path: pathlib.Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A rename under way finishes despite a cancellation; the sink then counts as complete
    and abort leaves the file, so its state matches the disk."""
    started, release = threading.Event(), threading.Event()
    original = LocalOutput._complete_sync

    def held_complete(self: LocalOutput) -> None:
        started.set()
        release.wait()  # still running when the cancellation arrives
        original(self)

    monkeypatch.setattr(LocalOutput, "_complete_sync", held_complete)
    sink = LocalOutput(tmp_path / "out.orc")
    await sink.write(b"data")
    task = asyncio.ensure_future(sink.complete())
    await asyncio.to_thread(started.wait)
    task.cancel()
    await asyncio.sleep(0)  # the task receives the cancellation while the rename is held
    assert not task.done()  # the rename under way is waited for
    release.set()
    with pytest.raises(asyncio.CancelledError):
        await task
    await sink.abort()
    assert listing(tmp_path) == ["out.orc"]
    assert (tmp_path / "out.orc").read_bytes() == b"data"


async def test_create_only_local_and_memory(tmp_path: pathlib.Path) -> None:
    """overwrite=False: the finished file is linked into place, atomically refused when the
    target exists (which stays as it was); the temporary file is removed either way."""
    from aorc.errors import ObjectExistsError
    from aorc.io import registry

    target = tmp_path / "t.bin"
    for data in (b"first", b"second"):
        out = open_output(str(target), {"overwrite": False})
        await out.write(data)
        if data == b"first":
            await out.complete()
        else:
            with pytest.raises(ObjectExistsError, match="already exists"):
                await out.complete()
    assert target.read_bytes() == b"first"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.bin"]
    url = "memory://create-only/t.bin"
    registry.scheme_for(url).files.pop(url, None)  # type: ignore[attr-defined]
    for data in (b"first", b"second"):
        out = open_output(url, {"overwrite": False})
        await out.write(data)
        if data == b"first":
            await out.complete()
        else:
            with pytest.raises(ObjectExistsError):
                await out.complete()
    assert registry.scheme_for(url).files[url] == b"first"  # type: ignore[attr-defined]
    with pytest.raises(SchemaError, match="overwrite must be a bool"):
        open_output(str(target), {"overwrite": "no"})
