"""iter_batches streams: a dataset several times larger than the allowed memory growth is
read in a child process whose peak RSS growth is measured (files in flight are bounded)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.orc as pa_orc
from helpers.child_code import HWM

ROOT = Path(__file__).resolve().parents[2]
FILES, ROWS = 24, 500_000  # 8 MB of Arrow data per file, 192 MB in all

# The peak is VmHWM, this process's own: not ru_maxrss, which Linux carries over fork and
# execve, so that under a test process whose peak is larger than the child's the growth
# measured was 0 whatever the reader held (the test then checked nothing).
CHILD = textwrap.dedent("""
    import asyncio, sys
    import aorc

""") + HWM + textwrap.dedent("""

    async def main(root):
        ds = await aorc.open_dataset(root, max_open_files=2)
        base = hwm()
        rows = 0
        async for batch in ds.iter_batches(batch_size=65_536):
            rows += batch.num_rows
        print(rows, hwm() - base)

    asyncio.run(main(sys.argv[1]))
""")


def test_iter_batches_memory_is_bounded(tmp_path: Path) -> None:
    rng = np.random.default_rng(11)
    for i in range(FILES):
        table = pa.table({"a": rng.integers(0, 2**62, ROWS), "b": rng.random(ROWS)})
        folder = tmp_path / f"p={i % 4}"
        folder.mkdir(exist_ok=True)
        pa_orc.write_table(table, str(folder / f"f{i}.orc"))
    total = FILES * ROWS * 16
    done = subprocess.run([sys.executable, "-c", CHILD, str(tmp_path)], cwd=ROOT,
                          capture_output=True, text=True, timeout=300, check=True)
    rows, growth = map(int, done.stdout.split())
    assert rows == FILES * ROWS
    assert growth < total / 3, (growth, total)  # about 43-47 MB here, of 192 MB read
