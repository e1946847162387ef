"""Stripe-copy merge of ORC files (aorc/write/merge.py): the merged file reads like the
concatenation in pyarrow.orc, pyorc and aorc (filtered reads and statistics included), for
files written by aorc and by ORC Java (the corpus); files that disagree are refused; a
failure leaves nothing behind."""

from __future__ import annotations

import asyncio
import pathlib

import numpy as np
import pyarrow as pa
import pyarrow.orc as po
import pytest

import aorc
from aorc.errors import UnsupportedFeatureError
from aorc.write.merge import MergePlan, merge_blocker, merge_files, read_tail

pyorc = pytest.importorskip("pyorc")


def events(n: int, seed: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    return pa.table({
        "id": pa.array(np.arange(seed * 1_000_000, seed * 1_000_000 + n, dtype=np.int64)),
        "name": pa.array(rng.choice(["ann", "bob", "cy", None], n).tolist(), pa.string()),
        "amount": pa.array(np.round(rng.random(n) * 100, 2)),
        "tags": pa.array([["a"] * int(k) for k in rng.integers(0, 3, n)],
                         pa.list_(pa.string())),
        "ts": pa.array(np.datetime64("2026-01-01", "us")
                        + rng.integers(0, 10**12, n).astype("timedelta64[us]")),
    })


async def write_parts(tmp_path: pathlib.Path, sizes: list[int], **options: object
                      ) -> tuple[list[str], list[pa.Table]]:
    paths, tables = [], []
    for k, n in enumerate(sizes):
        t = events(n, k + 1)
        path = str(tmp_path / f"part{k}.orc")
        await aorc.write_table(t, path, stripe_size=200_000, row_index_stride=1000,
                               bloom_filter_columns=["id"], **options)
        paths.append(path)
        tables.append(t)
    return paths, tables


async def test_merged_aorc_files_read_as_their_concatenation(tmp_path: pathlib.Path) -> None:
    paths, tables = await write_parts(tmp_path, [30_000, 1, 12_345])
    out = str(tmp_path / "merged.orc")
    result = await merge_files(paths, out)
    expected = pa.concat_tables(tables)
    assert result.num_rows == expected.num_rows
    assert result.size == pathlib.Path(out).stat().st_size
    stripes = sum(po.ORCFile(p).nstripes for p in paths)
    assert po.ORCFile(out).nstripes == stripes == len(result.stripe_offsets)
    got = po.ORCFile(out).read()
    assert got.select(["id", "name", "amount", "tags"]).equals(
        expected.select(["id", "name", "amount", "tags"]))
    assert got.column("ts").cast(pa.timestamp("us")).equals(expected.column("ts"))
    with pathlib.Path(out).open("rb") as f:
        rows = list(pyorc.Reader(f, column_names=["id"]))
    assert [r[0] for r in rows] == expected.column("id").to_pylist()
    # statistics: as one file written in one go (bytes on disk are the stripes' sums)
    async with aorc.open_reader(out) as reader:
        merged_stats = reader.statistics
        assert [s.offset for s in reader.stripes] == result.stripe_offsets
        back = await reader.read()
        assert back.column("id").to_pylist() == expected.column("id").to_pylist()
        # pushdown still works on copied stripes: bloom filters and row indexes
        hit = await reader.read(columns=["id"], filters=[("id", "==", 3_000_005)])
        assert hit.column("id").to_pylist() == [3_000_005]
        assert reader.scan_stats.row_groups_pruned_by_stats + \
            reader.scan_stats.stripes_pruned_by_stats > 0
    one = str(tmp_path / "one.orc")
    await aorc.write_table(expected, one, stripe_size=200_000, row_index_stride=1000)
    async with aorc.open_reader(one) as reader:
        direct = reader.statistics
    for a, b in zip(merged_stats, direct, strict=True):
        assert (a.num_values, a.has_null, a.minimum, a.maximum, a.sum) == \
            (b.num_values, b.has_null, b.minimum, b.maximum, b.sum)
    parts = []
    for p in paths:
        async with aorc.open_reader(p) as reader:
            parts.append(reader.statistics[1].bytes_on_disk)
    assert merged_stats[1].bytes_on_disk == sum(parts)


async def test_orc_java_files_merge(corpus: pathlib.Path, tmp_path: pathlib.Path) -> None:
    """A file ORC Java wrote (Hive's test1, zlib, with row indexes) merged with itself."""
    source = str(corpus / "files" / "TestOrcFile.test1.orc")
    out = str(tmp_path / "twice.orc")
    result = await merge_files([source, source], out)
    once = po.ORCFile(source).read()
    assert result.num_rows == 2 * once.num_rows
    assert po.ORCFile(out).read().equals(pa.concat_tables([once, once]))
    async with aorc.open_reader(source) as reader:
        writer = reader.writer
        single = await reader.read()
    async with aorc.open_reader(out) as reader:
        assert reader.writer == writer
        assert (await reader.read()).equals(pa.concat_tables([single, single]))


@pytest.mark.parametrize("change", ["compression", "stride", "schema", "block"])
async def test_files_that_disagree_are_refused(tmp_path: pathlib.Path, change: str) -> None:
    paths, _ = await write_parts(tmp_path, [100, 100])
    other = str(tmp_path / "other.orc")
    t = events(100, 9)
    options: dict[str, object] = {"stripe_size": 200_000, "row_index_stride": 1000,
                                  "bloom_filter_columns": ["id"]}
    if change == "compression":
        options["compression"] = "zlib"
    elif change == "stride":
        options["row_index_stride"] = 2000
    elif change == "block":
        options["compression_block_size"] = 64 * 1024
    else:
        t = t.rename_columns(["id", "name", "amount", "tags", "when"])
    await aorc.write_table(t, other, **options)  # type: ignore[arg-type]
    stores = [aorc.open_store(p) for p in [*paths, other]]
    tails = [await read_tail(s) for s in stores]
    for s in stores:
        await s.close()
    assert merge_blocker(tails[:2]) is None
    reason = merge_blocker(tails)
    assert reason is not None and "other.orc" in reason
    with pytest.raises(UnsupportedFeatureError, match="copying stripes"):
        MergePlan(tails)
    out = tmp_path / "out.orc"
    with pytest.raises(UnsupportedFeatureError):
        await merge_files([*paths, other], str(out))
    assert not out.exists()


async def test_cancelled_merge_leaves_nothing(tmp_path: pathlib.Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Cancel while the second file's stripes are being copied: no file, no temp file."""
    from aorc.write import merge

    paths, _ = await write_parts(tmp_path, [20_000, 20_000])
    reached = asyncio.Event()
    original = merge._copy
    calls = 0

    async def copy_then_wait(store, ranges, out):  # type: ignore[no-untyped-def]
        nonlocal calls
        calls += 1
        copied = await original(store, ranges, out)
        if calls == 2:
            reached.set()
            await asyncio.Event().wait()
        return copied

    monkeypatch.setattr(merge, "_copy", copy_then_wait)
    out = tmp_path / "merged.orc"
    task = asyncio.create_task(merge_files(paths, str(out)))
    await reached.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert sorted(p.name for p in tmp_path.iterdir()) == ["part0.orc", "part1.orc"]
