"""Opening a dataset's files lazily (aorc.dataset.discovery): open_dataset reads no tail when
it needs none (``schema=``), one for ``schema_from="first"``, every one for ``"all"``;
the tails kept stay within ``tail_cache_bytes`` (least recently used dropped); the row
counts and reads still work when tails were dropped. Requests counted from moto's log
through the proxy; rows compared with pyarrow.dataset."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.dataset as pads
import pyarrow.orc as pa_orc
import pytest

import aorc
from aorc.dataset.discovery import (
    COMPACT_OVERHEAD,
    STRIPE_OVERHEAD,
    TAIL_OVERHEAD,
    DatasetOptions,
    OpenedTail,
    TailCache,
    open_local_tail,
)
from aorc.io import IOStats

FILES = 24


def table(i: int) -> pa.Table:
    rng = np.random.default_rng(100 + i)
    return pa.table({"id": pa.array(np.arange(i * 5, i * 5 + 5, dtype=np.int64)),
                     "v": pa.array(rng.integers(0, 100, 5, dtype=np.int32))})


@pytest.fixture
def s3_root(s3_client: Any, s3_bucket: str) -> str:
    for i in range(FILES):
        out = io.BytesIO()
        pa_orc.write_table(table(i), out)
        s3_client.put_object(Bucket=s3_bucket, Key=f"t/k={i % 3}/f{i:03d}.orc",
                             Body=out.getvalue())
    return f"s3://{s3_bucket}/t/"


def gets(proxy: Any) -> int:
    return len(proxy.records("GetObject"))


async def test_open_reads_no_tail_with_a_schema(s3_root: str, s3_proxy: Any) -> None:
    schema = pa.schema([("id", pa.int64()), ("v", pa.int32())])
    ds = await aorc.open_dataset(s3_root, schema=schema,
                                 storage_options={"endpoint_url": s3_proxy.url})
    assert len(ds.files) == FILES
    assert gets(s3_proxy) == 0
    assert len(ds.tail_cache) == 0
    assert ds.num_rows is None
    assert await ds.count_rows() == FILES * 5
    assert gets(s3_proxy) == FILES
    assert ds.num_rows == FILES * 5


async def test_schema_from_first_reads_one_tail(s3_root: str, s3_proxy: Any) -> None:
    ds = await aorc.open_dataset(s3_root, schema_from="first",
                                 storage_options={"endpoint_url": s3_proxy.url})
    assert gets(s3_proxy) == 1
    assert ds.schema.names == ["id", "v", "k"]
    got = (await ds.read(filters=[("k", "==", 2)])).sort_by("id")
    assert gets(s3_proxy) == 1 + FILES // 3  # the first file (k=0) is not read again
    want = pa.concat_tables([table(i) for i in range(FILES) if i % 3 == 2])
    assert got.column("id").to_pylist() == want.column("id").to_pylist()
    assert got.column("v").to_pylist() == want.column("v").to_pylist()


async def test_schema_from_all_reads_every_tail_once(s3_root: str, s3_proxy: Any) -> None:
    ds = await aorc.open_dataset(s3_root, storage_options={"endpoint_url": s3_proxy.url})
    assert gets(s3_proxy) == FILES
    assert ds.num_rows == FILES * 5
    await ds.read(["v"])
    assert gets(s3_proxy) == FILES  # the small files were read whole with their tails


async def test_tail_budget_holds_and_dropped_tails_are_read_again(
        s3_root: str, s3_proxy: Any) -> None:
    probe = await aorc.open_dataset(s3_root, storage_options={"endpoint_url": s3_proxy.url})
    one = max(cost for _, cost in probe.tail_cache._tails.values())
    s3_proxy.reset()
    budget = 5 * one
    ds = await aorc.open_dataset(s3_root, storage_options={"endpoint_url": s3_proxy.url},
                                 tail_cache_bytes=budget)
    cache = ds.tail_cache
    assert 0 < len(cache) <= 5
    assert cache.kept_bytes == sum(TailCache.cost(t) for t, _ in cache._tails.values())
    assert cache.kept_bytes <= budget
    assert ds.num_rows == FILES * 5  # row counts outlive the tails
    kept = set(cache._tails)
    wanted = [f.path for f in ds.files if "/k=2/" in f.path]
    await ds.read(filters=[("k", "==", 2)])
    # the k=2 files whose tails were dropped are opened again, the kept ones are not
    assert gets(s3_proxy) == FILES + len([p for p in wanted if p not in kept])
    assert cache.kept_bytes <= budget


def test_tail_cache_drops_least_recently_used(tmp_path: Path) -> None:
    pa_orc.write_table(table(0), str(tmp_path / "f.orc"))
    parsed = open_local_tail(str(tmp_path / "f.orc"), DatasetOptions(None, 1, False, "ns", None),
                             IOStats()).tail

    def tail(n: int) -> OpenedTail:
        return OpenedTail(tail=parsed, data=b"x" * n, schema=pa.schema([]))

    one = TailCache.cost(tail(100))
    # the parsed form counts besides the bytes: at least TAIL_OVERHEAD, and the footer
    assert one >= 100 + TAIL_OVERHEAD + parsed.footer.ByteSize()
    assert TailCache.cost(tail(1100)) == one + 1000
    cache = TailCache(3 * one)
    for name in "abc":
        cache.put(name, tail(100))
    assert cache.get("a") is not None  # a becomes the most recent
    cache.put("d", tail(100))
    assert "b" not in cache and {"a", "c", "d"} <= set(cache._tails)
    cache.put("big", tail(10 * one))  # beyond the budget: not kept
    assert "big" not in cache and len(cache) == 3
    assert cache.kept_bytes == 3 * one
    empty = TailCache(0)
    empty.put("a", tail(1))
    assert len(empty) == 0 and empty.kept_bytes == 0


async def test_local_lazy_and_equal_to_pyarrow(tmp_path: Path) -> None:
    for i in range(FILES):
        path = tmp_path / f"k={i % 3}" / f"f{i:03d}.orc"
        path.parent.mkdir(exist_ok=True)
        pa_orc.write_table(table(i), str(path))
    ds = await aorc.open_dataset(str(tmp_path), schema_from="first", tail_cache_bytes=0)
    assert ds.io_stats.requests == 1 and len(ds.tail_cache) == 0
    want = pads.dataset(str(tmp_path), format="orc", partitioning="hive").to_table()
    got = await ds.read()
    assert ds.io_stats.requests == 1 + FILES
    assert got.sort_by("id").equals(want.sort_by("id").cast(got.schema))
    with pytest.raises(aorc.SchemaError, match="schema_from"):
        await aorc.open_dataset(str(tmp_path), schema_from="read")
    with pytest.raises(aorc.SchemaError, match="tail_cache_bytes"):
        await aorc.open_dataset(str(tmp_path), tail_cache_bytes=-1)


@pytest.mark.parametrize("how", ["open", "read"])
async def test_all_tails_open_with_max_open_files_tasks(monkeypatch: pytest.MonkeyPatch,
                                                        how: str) -> None:
    """schema_from="all" over 60 files on a store (memory://, so not the grouped local
    path) opens them from at most max_open_files tasks, not a task per file (both
    open_dataset and read_dataset's pruned files), with the schemas of all of them."""
    from aorc.dataset import read as dataset_module
    from aorc.io import registry

    for i in range(60):
        out = io.BytesIO()
        pa_orc.write_table(table(i) if i != 41 else table(i).append_column(
            "extra", pa.array(["e"] * 5)), out)
        sink = registry.open_output(f"memory://alltails/k={i % 3}/f{i:03d}.orc")
        await sink.write(out.getvalue())
        await sink.complete()
    most = 0
    real = dataset_module.open_tail

    async def counting(*args: Any, **kwargs: Any) -> Any:
        nonlocal most
        most = max(most, len(asyncio.all_tasks()))
        return await real(*args, **kwargs)

    monkeypatch.setattr(dataset_module, "open_tail", counting)
    before = len(asyncio.all_tasks())
    if how == "open":
        ds = await aorc.open_dataset("memory://alltails/", max_open_files=4)
        names = ds.schema.names
    else:
        got = await aorc.read_dataset("memory://alltails/", filters=[("k", "==", 0)],
                                      schema_from="all", max_open_files=4)
        names = got.column_names
    assert "extra" in names  # file 41 (k=2) counted
    # open: 4 tasks (and the gathering one); read: 4 reading (each with its reader's own
    # few), 4 opening pruned tails; a task per file was 60
    assert 0 < most - before <= (5 if how == "open" else 20), most - before


def test_a_whole_small_file_is_kept_slim_and_costs_less(tmp_path: Path) -> None:
    """The tail of a whole small file is kept without its PostScript and Footer messages
    (the read needs neither), and costs its bytes plus COMPACT_OVERHEAD, not the parsed
    form's estimate."""
    pa_orc.write_table(table(0), str(tmp_path / "f.orc"))
    opened = open_local_tail(str(tmp_path / "f.orc"), DatasetOptions(None, 1, False, "ns", None),
                             IOStats())
    assert len(opened.data) == opened.tail.file_length
    cache = TailCache(1 << 20)
    cache.put("f", opened)
    kept = cache.get("f")
    assert kept is not None and "footer" not in vars(kept.tail)
    assert kept.tail.footer == opened.tail.footer and kept.data is opened.data
    assert kept.schema is opened.schema
    parsed = opened.tail
    assert cache.kept_bytes == TailCache.cost(kept) == TailCache.cost(opened) == (
        len(opened.data) + len(parsed._metadata_bytes) + COMPACT_OVERHEAD + STRIPE_OVERHEAD)
    # what the parsed form would count: more (its Footer message is not held)
    assert cache.kept_bytes < (len(opened.data) + len(parsed._metadata_bytes) + TAIL_OVERHEAD
                               + 3 * parsed.footer.ByteSize() + STRIPE_OVERHEAD)


def test_a_pass_that_does_not_evict_keeps_the_first_tails(tmp_path: Path) -> None:
    """put(evict=False), as a pass over a dataset's small files keeps tails: once the
    budget is full, later tails are not kept and none is dropped (dropping the oldest
    would leave a later pass in the same order no tail at all)."""
    pa_orc.write_table(table(0), str(tmp_path / "f.orc"))
    opened = open_local_tail(str(tmp_path / "f.orc"), DatasetOptions(None, 1, False, "ns", None),
                             IOStats())
    one = TailCache.cost(OpenedTail(opened.tail.slim(opened.data), opened.data,
                                    opened.schema))
    cache = TailCache(3 * one)
    for name in "abcde":
        cache.put(name, opened, evict=False)
    assert list(cache._tails) == ["a", "b", "c"] and cache.kept_bytes == 3 * one
    cache.put("f", opened)  # the default drops the least recently used
    assert list(cache._tails) == ["b", "c", "f"]


async def test_open_then_read_many_small_files_keeps_the_first_tails(tmp_path: Path) -> None:
    """open_dataset of small local files with a budget for a third of their tails: the
    first files' tails are kept (slim) and reused by the read, the others read again; the
    rows equal pyarrow.dataset's."""
    for i in range(FILES):
        path = tmp_path / f"k={i % 3}" / f"f{i:03d}.orc"
        path.parent.mkdir(exist_ok=True)
        pa_orc.write_table(table(i), str(path))
    probe = await aorc.open_dataset(str(tmp_path))
    one = max(cost for _, cost in probe.tail_cache._tails.values())
    ds = await aorc.open_dataset(str(tmp_path), tail_cache_bytes=FILES // 3 * one)
    kept = list(ds.tail_cache._tails)
    assert kept == [f.path for f in ds.files[:FILES // 3]]
    assert all("footer" not in vars(t.tail) for t, _ in ds.tail_cache._tails.values())
    before = ds.io_stats.requests
    got = await ds.read()
    assert ds.io_stats.requests - before == FILES - len(kept)  # kept tails: no read
    assert list(ds.tail_cache._tails)[:len(kept)] == kept
    want = pads.dataset(str(tmp_path), format="orc", partitioning="hive").to_table()
    assert got.sort_by("id").to_pydict() == want.select(got.column_names).sort_by("id") \
        .cast(got.schema).to_pydict()


async def test_an_open_reads_the_column_limit_once_and_holds_every_file_to_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """AORC_MAX_COLUMNS, read once when the dataset opens (not for each of its files):
    a file declaring more columns is refused (or left out with exclude_invalid_files),
    and changing the variable after the open does not change what the open decided."""
    from aorc.errors import ResourceLimitError
    from aorc.format.tail import MAX_COLUMNS_ENV

    for i in range(3):
        pa_orc.write_table(table(i), str(tmp_path / f"part-{i}.orc"))  # 3 type ids each
    monkeypatch.setenv(MAX_COLUMNS_ENV, "2")
    with pytest.raises(ResourceLimitError, match="declares 3 columns"):
        await aorc.open_dataset(tmp_path)
    monkeypatch.setenv(MAX_COLUMNS_ENV, "3")
    opened = await aorc.open_dataset(tmp_path)
    assert (await opened.read()).equals(pads.dataset(tmp_path, format="orc").to_table())
    monkeypatch.setenv(MAX_COLUMNS_ENV, "x")  # the open's limit stands; a new open fails
    direct = open_local_tail(str(tmp_path / "part-0.orc"),
                             DatasetOptions(None, 1, False, "ns", None, max_columns=3),
                             IOStats())
    assert direct.tail.num_columns == 3
    with pytest.raises(ResourceLimitError, match="must be a positive integer"):
        await aorc.open_dataset(tmp_path)
