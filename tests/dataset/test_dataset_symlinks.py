"""Local dataset listings never follow symbolic links: a link to a folder or a file outside
the dataset's root (or a loop back to it) is skipped, with an AorcWarning naming it, so a
listing stays inside its root and rows are never read from elsewhere silently. A link named
directly is still read."""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
import pyarrow.orc as po
import pytest

import aorc
from aorc.io import registry


def _layout(tmp_path: Path) -> Path:
    root, outside = tmp_path / "ds", tmp_path / "outside"
    (root / "k=1").mkdir(parents=True)
    (outside / "k=2").mkdir(parents=True)
    po.write_table(pa.table({"v": [1, 2]}), str(root / "k=1" / "a.orc"))
    po.write_table(pa.table({"v": [20]}), str(outside / "k=2" / "b.orc"))
    po.write_table(pa.table({"v": [30]}), str(outside / "c.orc"))
    os.symlink(outside / "k=2", root / "k=2")            # a folder out of the root
    os.symlink(outside / "c.orc", root / "k=1" / "c.orc")  # a file out of the root
    os.symlink(root, root / "k=1" / "loop")               # a loop back to the root
    return root


async def test_dataset_listing_does_not_follow_links(tmp_path: Path) -> None:
    root = _layout(tmp_path)
    with pytest.warns(aorc.AorcWarning, match="symbolic link") as caught:
        table = await aorc.read_dataset(root)
    assert sorted(table.column("v").to_pylist()) == [1, 2]
    told = " ".join(str(w.message) for w in caught)
    assert "k=2" in told and "c.orc" in told and "loop" in told
    # the warning is attributed to a frame outside aorc (aorc.errors.warn: the caller's
    # line, or the line that runs the loop), not to aorc's internals
    inside = str(Path(aorc.__file__).parent)
    assert not [w.filename for w in caught if w.filename.startswith(inside)]
    with pytest.warns(aorc.AorcWarning, match="3 symbolic link"):
        found = await registry.list_files(str(root))
    assert [Path(f.path).name for f in found] == ["a.orc"]


async def test_a_link_named_directly_is_read(tmp_path: Path) -> None:
    root = _layout(tmp_path)
    linked = await aorc.read_table(root / "k=1" / "c.orc")
    assert linked.column("v").to_pylist() == [30]
    via_link = await aorc.read_dataset(root / "k=2")
    assert via_link.column("v").to_pylist() == [20]
