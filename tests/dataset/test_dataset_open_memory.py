"""open_dataset's memory at scale (issue 23): a dataset of many small files opened with
``schema_from="all"`` in a child process (a fresh interpreter: see
tests/read/test_read_memory.py) holds little more per file than its listing, plus the
tails kept within ``tail_cache_bytes``.

The child first opens a two-file dataset (so that the imports and thread pools that an open
brings are in the baseline), then lists the big one (``aorc.io.list_files``) and opens it;
the peak resident set (``VmHWM``) of the open above that of the listing must stay within
``PER_FILE`` bytes per file plus the tail budget. Measured here (CPython 3.11, 2 cores) at
30,000 files: 6.6 MiB with a 1 MiB budget and 12.3 MiB with 8 MiB; before the per-file
records were made small (a dict of partition values per file, a pyarrow table of them, a
task and a schema per file), 24-25 MiB with either (both cases then failed).
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.orc as pa_orc
import pytest
from helpers.child_code import HWM

ROOT = Path(__file__).resolve().parents[2]
FILES = 30_000
PER_FILE = 300  # bytes per file above the listing (measured about 200)
MiB = 1 << 20

CHILD = r"""
import asyncio, json, sys
import aorc
from aorc.io import list_files
""" + HWM + r"""
async def main(small, root, budget):
    await aorc.open_dataset(small, schema_from="all")
    base = hwm()
    files = await list_files(root)
    listed = hwm() - base
    del files
    ds = await aorc.open_dataset(root, schema_from="all", tail_cache_bytes=budget)
    print(json.dumps({"files": len(ds.files), "list": listed, "open": hwm() - base,
                      "kept": ds.tail_cache.kept_bytes, "names": ds.schema.names}))

asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
"""


@pytest.fixture(scope="module")
def many_files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(a two-file dataset, a dataset of FILES copies of one small file in 50 folders)."""
    out = io.BytesIO()
    pa_orc.write_table(pa.table({"id": pa.array(range(100)), "x": pa.array([0.5] * 100)}),
                       out)
    data = out.getvalue()
    base = tmp_path_factory.mktemp("open_memory")
    small, big = base / "small", base / "big"
    for i in range(2):
        (small / f"p={i}").mkdir(parents=True)
        (small / f"p={i}" / "f.orc").write_bytes(data)
    for p in range(50):
        (big / f"p={p}").mkdir(parents=True)
    for i in range(FILES):
        (big / f"p={i % 50}" / f"f{i:06d}.orc").write_bytes(data)
    return small, big


@pytest.mark.parametrize("budget", [1 * MiB, 8 * MiB])
def test_open_all_memory_is_listing_plus_tail_budget(many_files: tuple[Path, Path],
                                                     budget: int) -> None:
    small, big = many_files
    done = subprocess.run([sys.executable, "-c", CHILD, str(small), str(big), str(budget)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300, check=True)
    got = json.loads(done.stdout.splitlines()[-1])
    assert got["files"] == FILES and got["names"] == ["id", "x", "p"]
    assert 0 < got["kept"] <= budget  # the tails kept fill the budget, no more
    growth = got["open"] - got["list"]
    assert growth <= PER_FILE * FILES + budget * 1.25, (growth / MiB, got)
