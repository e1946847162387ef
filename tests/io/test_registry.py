"""aorc.io.registry: the local listing (one scandir per folder) lists what a walk with
``os.walk``, ``os.path.islink`` and ``os.path.getsize`` lists, in the same order."""

from __future__ import annotations

import os
import pathlib
import random

import pytest

from aorc.io.registry import LocalScheme


def _reference(root: str) -> tuple[list[tuple[str, int]], list[str]]:
    """The listing as aorc made it before one scandir per folder (issue 31)."""
    out, links = [], []
    for folder, dirs, files in os.walk(root):
        links += [os.path.join(folder, d) for d in dirs
                  if not d.startswith((".", "_")) and os.path.islink(os.path.join(folder, d))]
        dirs[:] = sorted(d for d in dirs if not d.startswith((".", "_"))
                         and not os.path.islink(os.path.join(folder, d)))
        for name in sorted(files):
            if name.startswith((".", "_")):
                continue
            path = os.path.join(folder, name)
            if os.path.islink(path):
                links.append(path)
                continue
            size = os.path.getsize(path)
            if size:
                out.append((path, size))
    return out, sorted(links)


@pytest.mark.parametrize("seed", range(3))
def test_the_listing_is_os_walks(tmp_path: pathlib.Path, seed: int) -> None:
    rng = random.Random(seed)
    folders = [tmp_path]
    for i in range(12):
        name = rng.choice(["p=", "q=", ".hidden", "_tmp", "z", "A"]) + str(i)
        folders.append(rng.choice(folders) / name)
        folders[-1].mkdir()
    for _ in range(60):
        name = rng.choice(["part-", "x", ".crc", "_SUCCESS", "B"]) + str(rng.randrange(99))
        path = rng.choice(folders) / name
        path.write_bytes(b"o" * rng.choice([0, 1, 100]))
    target = tmp_path / "p=0" if (tmp_path / "p=0").exists() else folders[1]
    (tmp_path / "link-dir").symlink_to(target, target_is_directory=True)
    (rng.choice(folders) / "link-file").symlink_to(tmp_path / "missing")
    os.mkfifo(tmp_path / "fifo")  # neither file nor folder: size 0, left out
    found, links = LocalScheme._list_sync(str(tmp_path))
    assert ([(f.path, f.size) for f in found], sorted(links)) == _reference(str(tmp_path))
    assert found and links


def test_a_folder_that_cannot_be_listed_is_left_out(tmp_path: pathlib.Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "f").write_bytes(b"x")
    (tmp_path / "b").write_bytes(b"yy")
    locked = tmp_path / "c"
    locked.mkdir()
    (locked / "g").write_bytes(b"z")
    real = os.scandir
    refused = []

    def scandir(path: str) -> object:
        if path == str(locked):
            refused.append(path)
            raise PermissionError(13, "Permission denied", path)
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)
    found, _ = LocalScheme._list_sync(str(tmp_path))
    assert refused == [str(locked)]
    assert [(os.path.relpath(f.path, tmp_path), f.size) for f in found] == [("b", 2),
                                                                           ("a/f", 1)]
