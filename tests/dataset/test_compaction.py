"""aorc.compact: each partition folder's small files merged into files near the target size
(stripe copy when the files agree, re-encoding otherwise), checked with pyarrow.orc and
pyarrow.dataset as peers; crash safety: a compaction interrupted after any step (an
exception that skips every clean-up, as a crash does, and a real SIGKILL of a child process
at the moment it announces a step) leaves every row readable exactly once after the next
run; filters choose folders; progress; bad journals; S3 (moto)."""

from __future__ import annotations

import io
import json
import os
import pathlib
import signal
import subprocess
import sys
import textwrap
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.dataset as pads
import pyarrow.orc as po
import pytest

import aorc
import aorc.dataset.compaction as compaction
from aorc.errors import CorruptFileError, SchemaError

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _events(n: int = 2_400, seed: int = 5) -> pa.Table:
    rng = np.random.default_rng(seed)
    return pa.table({
        "id": pa.array(np.arange(n, dtype=np.int64)),
        "day": pa.array([f"d{1 + i % 3}" for i in range(n)]),
        "amount": pa.array(rng.standard_normal(n)),
        "name": pa.array([f"user-{v}" for v in rng.integers(0, 50, n)]),
    })


async def _small_files(root: pathlib.Path, table: pa.Table | None = None,
                       rows_per_file: int = 100) -> pa.Table:
    table = table if table is not None else _events()
    await aorc.write_dataset(table, root, partition_cols=["day"],
                             max_rows_per_file=rows_per_file)
    return table


def _orc_files(root: pathlib.Path) -> list[pathlib.Path]:
    return sorted(p for p in root.rglob("*.orc") if not any(
        part.startswith(("_", ".")) for part in p.relative_to(root).parts))


def _rows(table: pa.Table) -> list[dict[str, Any]]:
    return table.select(["id", "day", "amount", "name"]).sort_by("id").to_pylist()


def _peer_rows(root: pathlib.Path) -> list[dict[str, Any]]:
    """The dataset as pyarrow.dataset (ORC C++) reads it."""
    ds = pads.dataset(root, format="orc", partitioning="hive")
    table = ds.to_table()
    return table.set_column(table.schema.get_field_index("day"), "day",
                            table["day"].cast(pa.string())).select(
        ["id", "day", "amount", "name"]).sort_by("id").to_pylist()


async def test_small_files_are_merged_by_stripe_copy(tmp_path: pathlib.Path) -> None:
    root = tmp_path / "ds"
    table = await _small_files(root)
    before = _orc_files(root)
    assert len(before) == 24  # 3 days x 8 files of 100 rows
    ids_before = {p: po.read_table(p, columns=["id"])["id"].to_pylist() for p in before}
    size = max(p.stat().st_size for p in before)
    result = await aorc.compact(root, target_size=4 * size + 1)
    after = _orc_files(root)
    assert len(after) == 6  # each day's 8 files in two files of 4
    assert result.stripe_copied == 6 and result.re_encoded == 0
    assert sorted(result.removed) == sorted(map(str, before))
    assert sorted(result.written) == sorted(map(str, after))
    assert _peer_rows(root) == _rows(table)
    assert _rows(await aorc.read_dataset(root)) == _rows(table)
    for path in after:  # every merged file: its inputs' stripes, in their path order
        merged = po.ORCFile(path)
        assert merged.nstripes == 4 and merged.nrows == 400
        ids = merged.read(columns=["id"])["id"].to_pylist()
        inputs = sorted(p for p, some in ids_before.items() if set(some) <= set(ids))
        assert len(inputs) == 4
        assert ids == [i for p in inputs for i in ids_before[p]]
    # pushdown on the merged files still prunes by statistics
    reader = await aorc.open_reader(after[0])
    async with reader:
        got = await reader.read(filters=[("id", "==", -1)])
        assert got.num_rows == 0 and reader.scan_stats.stripes_pruned_by_stats == 4
    assert not (root / compaction.JOURNAL_FOLDER).exists() or not any(
        (root / compaction.JOURNAL_FOLDER).iterdir())


async def test_large_files_are_left_alone_and_single_files_too(tmp_path: pathlib.Path) -> None:
    root = tmp_path / "ds"
    await _small_files(root, rows_per_file=800)  # one file per day
    before = _orc_files(root)
    result = await aorc.compact(root, target_size=1 << 30)
    assert _orc_files(root) == before
    assert result.written == [] and result.removed == []
    size = min(p.stat().st_size for p in before)
    await _small_files(root, rows_per_file=100)  # now 1 big + 8 small per day
    result = await aorc.compact(root, target_size=1 << 30, min_size=size)
    assert result.stripe_copied == 3 and len(_orc_files(root)) == 6


async def test_files_that_disagree_are_re_encoded(tmp_path: pathlib.Path) -> None:
    """Files written by pyarrow.orc (ORC C++) and by aorc cannot be stripe-copied together
    (different writers): the bin is read and written again."""
    root = tmp_path / "ds" / "day=a"
    root.mkdir(parents=True)
    table = _events(600).drop_columns(["day"])
    po.write_table(table.slice(0, 300), root / "peer.orc")
    await aorc.write_table(table.slice(300), root / "mine.orc")
    result = await aorc.compact(tmp_path / "ds", target_size=1 << 30, compression="zlib")
    assert result.re_encoded == 1 and result.stripe_copied == 0
    [merged] = _orc_files(tmp_path / "ds")
    back = po.read_table(merged)
    assert back.sort_by("id").equals(table.sort_by("id"))
    assert po.ORCFile(merged).compression == "ZLIB"


async def test_filters_choose_partition_folders(tmp_path: pathlib.Path) -> None:
    root = tmp_path / "ds"
    table = await _small_files(root)
    events: list[aorc.ProgressEvent] = []
    result = await aorc.compact(root, target_size=1 << 30,
                                filters=[("day", "==", "d2")], progress=events.append)
    assert result.stripe_copied == 1
    assert {pathlib.Path(p).parent.name for p in result.written} == {"day=d2"}
    assert len(_orc_files(root)) == 1 + 16
    assert [e.done for e in events] == [8] and events[-1].total == 8
    assert _rows(await aorc.read_dataset(root)) == _rows(table)
    with pytest.raises(SchemaError, match="amount"):
        await aorc.compact(root, filters=[("amount", ">", 0)])


async def test_bad_arguments_and_journals(tmp_path: pathlib.Path) -> None:
    root = tmp_path / "ds"
    await _small_files(root)
    for kwargs in ({"target_size": 0}, {"min_size": -1}, {"max_concurrency": 0}):
        with pytest.raises(SchemaError):
            await aorc.compact(root, **kwargs)
    with pytest.raises(SchemaError, match="one folder"):
        await aorc.compact([str(root)])  # type: ignore[arg-type]
    journal = root / compaction.JOURNAL_FOLDER / "x.json"
    journal.parent.mkdir()
    journal.write_text('{"what": 1}')
    with pytest.raises(CorruptFileError, match="not a journal"):
        await aorc.compact(root)


class Crash(BaseException):
    """Stands for the process dying: no clean-up code (``except Exception``) runs."""


def _count_steps(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    seen: list[str] = []
    monkeypatch.setattr(compaction, "_step", seen.append)
    return seen


async def test_a_crash_after_any_step_leaves_every_row_once(tmp_path: pathlib.Path,
                                                            monkeypatch: pytest.MonkeyPatch
                                                            ) -> None:
    table = _events(900)
    clean = tmp_path / "clean"
    await _small_files(clean, table)
    steps = _count_steps(monkeypatch)
    size = max(p.stat().st_size for p in _orc_files(clean))
    await aorc.compact(clean, target_size=2 * size + 1, max_concurrency=1)
    expected_files = len(_orc_files(clean))
    # per merge of 2 files: journal, written, deleted, deleted, done
    assert steps[:5] == ["journal", "written", "deleted", "deleted", "done"]
    assert len(steps) == 15 and expected_files == 6  # per day: 2 files merged, 1 left
    for crash_at in range(len(steps)):
        root = tmp_path / f"crash{crash_at}"
        await _small_files(root, table)
        calls = {"n": 0}

        def step(name: str, crash_at: int = crash_at, calls: dict[str, int] = calls) -> None:
            calls["n"] += 1
            if calls["n"] == crash_at + 1:
                raise Crash(name)

        monkeypatch.setattr(compaction, "_step", step)
        with pytest.raises(Crash):
            await aorc.compact(root, target_size=2 * size + 1, max_concurrency=1)
        assert calls["n"] == crash_at + 1  # the planned crash happened
        monkeypatch.setattr(compaction, "_step", lambda name: None)
        result = await aorc.compact(root, target_size=2 * size + 1, max_concurrency=1)
        # a journal is left by a crash at any step but the last (it is deleted before)
        assert result.recovered == (steps[crash_at] != "done"), crash_at
        assert _rows(await aorc.read_dataset(root)) == _rows(table), crash_at
        assert _peer_rows(root) == _rows(table), crash_at
        assert len(_orc_files(root)) == expected_files, crash_at
        assert not any((root / compaction.JOURNAL_FOLDER).iterdir())


CHILD = textwrap.dedent("""
    import asyncio, sys
    import aorc, aorc.dataset.compaction as compaction

    def step(name):
        if name == sys.argv[2]:
            print(name, flush=True)  # the parent kills this process when it reads this
            sys.stdin.read()  # and never returns

    compaction._step = step
    asyncio.run(aorc.compact(sys.argv[1], target_size=int(sys.argv[3]), max_concurrency=1))
""")


@pytest.mark.parametrize("kill_at", ["journal", "written", "deleted"])
async def test_sigkill_during_a_compaction(tmp_path: pathlib.Path, kill_at: str) -> None:
    table = _events(900)
    root = tmp_path / "ds"
    await _small_files(root, table)
    target = 2 * max(p.stat().st_size for p in _orc_files(root)) + 1
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(root), kill_at, str(target)],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=ROOT,
                             env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        assert child.stdout is not None
        line = child.stdout.readline().decode().strip()
        assert line == kill_at, line  # the child is held at that step
        child.send_signal(signal.SIGKILL)
    finally:
        child.wait()
        if child.stdin is not None:
            child.stdin.close()
        if child.stdout is not None:
            child.stdout.close()
    assert child.returncode == -signal.SIGKILL
    journals = list((root / compaction.JOURNAL_FOLDER).iterdir())
    assert len(journals) == 1 and json.loads(journals[0].read_text())["inputs"]
    result = await aorc.compact(root, target_size=target, max_concurrency=1)
    assert result.recovered == 1
    assert _rows(await aorc.read_dataset(root)) == _rows(table)
    assert _peer_rows(root) == _rows(table)
    assert not any((root / compaction.JOURNAL_FOLDER).iterdir())


async def test_compaction_on_s3(s3_bucket: str, s3_env: str, s3_client: Any) -> None:
    prefix = f"s3://{s3_bucket}/lake"
    table = _events(1_200)
    await aorc.write_dataset(table, prefix, partition_cols=["day"], max_rows_per_file=100)
    result = await aorc.compact(prefix, target_size=1 << 30)
    assert result.stripe_copied == 3 and len(result.removed) == 12
    keys = sorted(o["Key"] for o in s3_client.list_objects_v2(Bucket=s3_bucket)["Contents"])
    assert len(keys) == 3 and all(k.startswith("lake/day=") for k in keys)
    assert _rows(await aorc.read_dataset(prefix)) == _rows(table)
    for key in keys:  # pyarrow.orc reads every merged object
        body = s3_client.get_object(Bucket=s3_bucket, Key=key)["Body"].read()
        assert po.ORCFile(io.BytesIO(body)).nrows == 400

