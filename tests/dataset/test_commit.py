"""aorc.dataset.commit: part files staged by tasks (hidden, not flushed), committed by the
driver (flushed together, renamed, folders flushed), staged files of lost attempts deleted.
Files are checked with pyarrow.orc and pyarrow.dataset's discovery."""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
import pyarrow.dataset as pads
import pyarrow.orc as po
import pytest

from aorc.dataset import commit
from aorc.dataset.parts import new_write_id
from aorc.errors import ObjectExistsError, ObjectNotFoundError, SchemaError
from aorc.sync import run

TABLE = pa.table({"a": list(range(10)), "p": ["x", "y"] * 5})


def files_under(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def stage(root: Path, write_id: str, task: int, attempt: str) -> list[tuple[str, str]]:
    return run(commit.stage_part_async(TABLE, str(root), write_id, task, attempt,
                                       partition_cols=["p"]))


def test_staged_files_are_hidden_until_committed(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    flushed: list[str] = []
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        flushed.append(os.readlink(f"/proc/self/fd/{fd}"))
        real_fsync(fd)

    monkeypatch.setattr(commit.os, "fsync", fsync)
    write_id = new_write_id()
    pairs = stage(tmp_path, write_id, 3, "a1") + stage(tmp_path, write_id, 4, "b2")
    assert len(pairs) == 4
    commit._flusher[0].submit(lambda: None).result()  # (one thread, in order: drained)
    # the staging process started flushing its files in the background
    assert sorted(flushed) == sorted(s for s, _ in pairs)
    flushed.clear()
    for staged, final in pairs:
        assert Path(staged).name.startswith(f".aorc-stage-{write_id}-")
        assert Path(final).name.startswith(f"part-{write_id}-0000")
        assert os.path.dirname(staged) == os.path.dirname(final)
    assert not os.path.exists(pairs[0][1])
    # hidden from discovery: pyarrow.dataset sees no file yet
    assert pads.dataset(str(tmp_path), format="orc").files == []
    files = commit.commit_staged(pairs, str(tmp_path))
    assert files == sorted(f for _, f in pairs)
    # every staged file, then the two partition folders and the root (and its parent)
    assert sorted(flushed[:4]) == sorted(s for s, _ in pairs)
    assert set(flushed[4:]) == {str(tmp_path), str(tmp_path / "p=x"), str(tmp_path / "p=y"),
                                str(tmp_path.parent)}
    assert files_under(tmp_path) == sorted(str(Path(f).relative_to(tmp_path)) for f in files)
    back = pads.dataset(str(tmp_path), format="orc", partitioning="hive").to_table()
    assert sorted(back.column("a").to_pylist()) == sorted(2 * TABLE.column("a").to_pylist())
    assert sum(po.ORCFile(f).nrows for f in files) == 2 * TABLE.num_rows


def test_lost_attempts_are_removed_by_write_id(tmp_path: Path) -> None:
    write_id, other = new_write_id(), new_write_id()
    lost = stage(tmp_path, write_id, 0, "dead")
    (tmp_path / "p=x" / f"..aorc-stage-{write_id}-dead-x.aorc-tmp-1").write_bytes(b"x")
    kept = stage(tmp_path, write_id, 0, "live")
    foreign = stage(tmp_path, other, 0, "live")
    assert [f for _, f in lost] == [f for _, f in kept]  # the same final names
    files = commit.commit_staged(kept, str(tmp_path))
    removed = commit.remove_staged([str(tmp_path), str(tmp_path / "p=x"),
                                    str(tmp_path / "p=y"), str(tmp_path / "gone")], write_id)
    assert len(removed) == 3
    assert sorted(files_under(tmp_path)) == sorted(
        [str(Path(f).relative_to(tmp_path)) for f in files]
        + [str(Path(s).relative_to(tmp_path)) for s, _ in foreign])
    assert commit.remove_staged_tree(str(tmp_path), other) != []
    assert files_under(tmp_path) == sorted(str(Path(f).relative_to(tmp_path)) for f in files)


def test_failed_write_tree_removal_drops_emptied_folders(tmp_path: Path) -> None:
    write_id = new_write_id()
    stage(tmp_path / "out", write_id, 0, "a")
    (tmp_path / "out" / "keep.txt").write_text("theirs")
    assert len(commit.remove_staged_tree(str(tmp_path / "out"), write_id)) == 2
    assert files_under(tmp_path) == ["out/keep.txt"]
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["keep.txt"]


def test_missing_staged_file_is_named(tmp_path: Path) -> None:
    write_id = new_write_id()
    pairs = stage(tmp_path, write_id, 0, "a")
    os.remove(pairs[1][0])
    with pytest.raises(ObjectNotFoundError, match="shared file system") as info:
        commit.commit_staged(pairs, str(tmp_path))
    assert pairs[1][0] in str(info.value)
    assert not os.path.exists(pairs[0][1])  # nothing renamed


def test_no_overwrite_refuses_an_existing_file(tmp_path: Path) -> None:
    write_id = new_write_id()
    pairs = stage(tmp_path, write_id, 0, "a")
    Path(pairs[1][1]).write_bytes(b"older")
    with pytest.raises(ObjectExistsError, match="overwrite=False"):
        commit.commit_staged(pairs, str(tmp_path), overwrite=False)
    assert Path(pairs[1][1]).read_bytes() == b"older"
    assert not os.path.exists(pairs[0][1])  # the one renamed before is removed again
    files = commit.commit_staged([pairs[1]], str(tmp_path))  # overwrite: replaced
    assert po.ORCFile(files[0]).nrows == 5


def test_names_and_options(tmp_path: Path) -> None:
    with pytest.raises(SchemaError, match="not a staged file"):
        commit.final_name("/x/part-1-00000-0.orc", "1")
    assert commit.final_name("file:///x/.aorc-stage-ab-c1-part-ab-00002-0.orc", "ab") == \
        "file:///x/part-ab-00002-0.orc"
    assert commit.local_commit("s3://bucket/x", None) is None
    assert commit.local_commit(str(tmp_path), {"overwrite": False}) == (True, False)
    with pytest.raises(SchemaError, match="fsync must be a bool"):
        commit.local_commit(str(tmp_path), {"fsync": "no"})
