"""write_dataset of a stream far larger than its budget holds about the budget (issue 22).

A child process (a fresh interpreter: the parent's heap would hide or add growth) writes a
generated stream of 3M rows x 6 columns (144 MB of Arrow data, made batch by batch) into 24
partitions with ``max_memory`` of 16 MiB, and reports its peak resident memory (``VmHWM``)
growth over what it held before the call (after a small warm-up write). The promise is the
budget plus 100 MiB (allocators' retention, the encoder's scratch, a batch of input and its
partition copies); measured: +49 MiB. Writing the whole stream as one Table, as
``write_dataset`` did before it streamed, holds the rows twice (the table and the
partitions' copies): about 290 MB, over the bound.
(``benchmarks/bench_write_dataset.py`` measures 10M rows and the time against pyarrow.)
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import pytest
from helpers.child_code import HWM

MiB = 1 << 20
REPO = pathlib.Path(__file__).resolve().parents[2]

CHILD = r"""
import asyncio, json, sys
import numpy as np
import pyarrow as pa
import aorc

""" + HWM + r"""
ROWS, BATCH, KEYS = int(sys.argv[2]), 65_536, 24

def source(seen):
    rng = np.random.default_rng(22)
    for start in range(0, ROWS, BATCH):
        n = min(BATCH, ROWS - start)
        seen[0] += n
        yield pa.record_batch({
            "k": rng.integers(0, KEYS, n), "a": np.arange(start, start + n),
            "b": rng.random(n), "c": rng.integers(0, 1 << 40, n),
            "d": rng.normal(size=n), "e": rng.integers(0, 1000, n)})

async def main(out, budget):
    # A small write first: what every write loads once (modules, thread pools) is not
    # what this call holds.
    await aorc.write_dataset(next(source([0])).slice(0, 1000), out + "-warm",
                             partition_cols=["k"])
    seen = [0]
    base = hwm()
    written = await aorc.write_dataset(source(seen), out, partition_cols=["k"],
                                       max_memory=budget)
    print(json.dumps({"growth": hwm() - base, "rows": seen[0], "files": len(written)}))

asyncio.run(main(sys.argv[1], int(sys.argv[3])))
"""


def write_in_child(out: pathlib.Path, rows: int, budget: int) -> dict[str, int]:
    result = subprocess.run(
        [sys.executable, "-c", CHILD, str(out), str(rows), str(budget)], cwd=REPO,
        capture_output=True, check=True,
        text=True, env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=600)
    report: dict[str, int] = json.loads(result.stdout)
    return report


@pytest.mark.slow
def test_a_stream_far_larger_than_the_budget_holds_about_the_budget(
        tmp_path: pathlib.Path) -> None:
    import pyarrow.dataset as pads

    rows, budget = 3_000_000, 16 * MiB
    report = write_in_child(tmp_path / "ds", rows, budget)
    assert report["rows"] == rows
    assert report["growth"] <= budget + 100 * MiB, report["growth"] // MiB
    back = pads.dataset(str(tmp_path / "ds"), format="orc", partitioning="hive")
    assert back.count_rows() == rows
    assert len({os.path.dirname(f) for f in back.files}) == 24
