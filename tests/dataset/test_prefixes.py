"""Listing a dataset by its partition folders (aorc.dataset.prefixes): a partition filter
lists only the ``key=value`` folders it can match (counted from moto's request log through
the proxy, and from ``os.scandir`` calls locally), and the rows equal pyarrow.dataset's."""

from __future__ import annotations

import io
import os
import urllib.parse
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as pads
import pyarrow.orc as pa_orc
import pytest

import aorc

PARTS = 6
DAYS = 3


def small_table(i: int) -> pa.Table:
    rng = np.random.default_rng(i)
    return pa.table({"id": pa.array(np.arange(i * 10, i * 10 + 10, dtype=np.int64)),
                     "x": pa.array(rng.normal(size=10))})


def keys(files: int) -> list[tuple[str, pa.Table]]:
    return [(f"p={i % PARTS}/d={i // PARTS % DAYS}/part-{i:04d}.orc", small_table(i))
            for i in range(files)]


@pytest.fixture(scope="module")
def local_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("hive")
    for key, table in keys(72):
        path = root / key
        path.parent.mkdir(parents=True, exist_ok=True)
        pa_orc.write_table(table, str(path))
    return root


def pyarrow_read(root: str, expr: Any, columns: list[str] | None = None) -> pa.Table:
    ds = pads.dataset(root, format="orc", partitioning="hive")
    return ds.to_table(filter=expr, columns=columns)


def same(got: pa.Table, want: pa.Table) -> None:
    got, want = got.sort_by("id"), want.sort_by("id")
    assert got.column_names == want.column_names
    for name in got.column_names:
        assert got.column(name).to_pylist() == want.column(name).to_pylist(), name


@pytest.fixture
def scandirs(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The folders listed locally (os.scandir, which os.walk uses too)."""
    seen: list[str] = []
    real = os.scandir

    def counting(path: Any = ".") -> Any:
        seen.append(os.fspath(path).rstrip(os.sep))
        return real(path)

    monkeypatch.setattr(os, "scandir", counting)
    return seen


async def test_local_filter_lists_only_matching_folders(local_root: Path,
                                                        scandirs: list[str]) -> None:
    got = await aorc.read_dataset(str(local_root), filters=[("p", "==", 2)])
    root = str(local_root)
    assert scandirs[0] == root
    listed = set(scandirs[1:])
    assert listed == {os.path.join(root, "p=2"),
                      *(os.path.join(root, "p=2", f"d={d}") for d in range(DAYS))}
    same(got, pyarrow_read(root, pc.field("p") == 2))


async def test_local_or_of_conjunctions_keeps_each_branch(local_root: Path,
                                                          scandirs: list[str]) -> None:
    filters = [[("p", "==", 1), ("d", "==", 0)], [("p", "==", 4), ("d", ">=", 1)]]
    got = await aorc.read_dataset(str(local_root), filters=filters)
    root = str(local_root)
    leaves = {s for s in scandirs if os.path.basename(s).startswith("d=")}
    assert leaves == {os.path.join(root, "p=1", "d=0"), os.path.join(root, "p=4", "d=1"),
                      os.path.join(root, "p=4", "d=2")}
    expr = (((pc.field("p") == 1) & (pc.field("d") == 0))
            | ((pc.field("p") == 4) & (pc.field("d") >= 1)))
    same(got, pyarrow_read(root, expr))


async def test_local_without_filter_lists_everything(local_root: Path) -> None:
    ds = await aorc.open_dataset(str(local_root))
    assert len(ds.files) == 72
    same(await ds.read(), pyarrow_read(str(local_root), None))
    same(await ds.read(["id", "p"], filters=[("d", "in", [0, 2]), ("x", ">", 0)]),
         pyarrow_read(str(local_root), pc.field("d").isin([0, 2]) & (pc.field("x") > 0),
                      ["id", "p"]))


async def test_local_filter_on_data_column_only_lists_all(local_root: Path,
                                                          scandirs: list[str]) -> None:
    got = await aorc.read_dataset(str(local_root), filters=[("x", ">", 0.5)])
    assert len({s for s in scandirs if os.path.basename(s).startswith("d=")}) == PARTS * DAYS
    same(got, pyarrow_read(str(local_root), pc.field("x") > 0.5))


# ----------------------------------------------------------------------------- S3


@pytest.fixture
def s3_root(s3_client: Any, s3_bucket: str) -> str:
    for key, table in keys(36):
        out = io.BytesIO()
        pa_orc.write_table(table, out)
        s3_client.put_object(Bucket=s3_bucket, Key=f"events/{key}", Body=out.getvalue())
    return f"s3://{s3_bucket}/events"


def list_requests(proxy: Any) -> list[tuple[str, bool]]:
    """(prefix, delimited) of each ListObjectsV2 request logged by the proxy, in order."""
    queries = [urllib.parse.parse_qs(urllib.parse.urlsplit(r.target).query,
                                     keep_blank_values=True)
               for r in proxy.log if r.method == "GET"]
    return [(q.get("prefix", [""])[0], "delimiter" in q) for q in queries if "list-type" in q]


def listed_prefixes(proxy: Any) -> list[str]:
    """The prefixes of the ListObjectsV2 requests logged by the proxy."""
    return [prefix for prefix, _ in list_requests(proxy)]


@pytest.mark.parametrize("engine", ["aiobotocore", "obstore"])
async def test_s3_filter_lists_only_matching_prefixes(s3_root: str, s3_proxy: Any,
                                                      engine: str) -> None:
    if engine == "obstore":
        pytest.importorskip("obstore")
    options = {"endpoint_url": s3_proxy.url, "engine": engine}
    got = await aorc.read_dataset(s3_root, filters=[("p", "==", 3), ("d", "==", 1)],
                                  storage_options=options)
    prefixes = listed_prefixes(s3_proxy)
    assert prefixes == ["events/", "events/p=3/", "events/p=3/d=1/"]
    assert got.num_rows == 20
    assert sorted(got.column("id").to_pylist()) == sorted(
        [v for i in range(36) if i % PARTS == 3 and i // PARTS % DAYS == 1
         for v in range(i * 10, i * 10 + 10)])


@pytest.mark.parametrize("engine", ["aiobotocore", "obstore"])
async def test_s3_without_filter_lists_flat_when_small(s3_root: str, s3_proxy: Any,
                                                       engine: str) -> None:
    """36 objects: one flat listing (one page), not one listing per partition."""
    if engine == "obstore":
        pytest.importorskip("obstore")
    options = {"endpoint_url": s3_proxy.url, "engine": engine}
    ds = await aorc.open_dataset(s3_root, storage_options=options, schema_from="first")
    assert list_requests(s3_proxy) == [("events/", False)]
    assert len(ds.files) == 36
    assert [f.path for f in ds.files] == sorted(f.path for f in ds.files)
    assert (await ds.count_rows()) == 360
    got = await aorc.read_dataset(s3_root, storage_options=options)
    same(got, pa.concat_tables([t.append_column("p", pa.array([i % PARTS] * 10, pa.int32()))
                                .append_column("d", pa.array([i // PARTS % DAYS] * 10,
                                                             pa.int32()))
                                for i, (_, t) in enumerate(keys(36))]))


async def test_s3_without_filter_fans_out_past_the_first_pages(
        s3_root: str, s3_proxy: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Pages of 5 keys, 2 pages before fanning out: the 10 keys listed finish p=0 (6 keys)
    and start p=1; then the delimiter listing of the root and one flat listing of each of
    p=1..p=5, all at once (pages of 5 there too). The files are those of one full listing."""
    from aorc.dataset import prefixes
    from aorc.io import registry

    options = {"endpoint_url": s3_proxy.url}
    want = await registry.list_files(s3_root, options)
    s3_proxy.reset()
    monkeypatch.setattr(registry, "LIST_PAGE_SIZE", 5)
    monkeypatch.setattr(prefixes, "FLAT_LIST_PAGES", 2)
    ds = await aorc.open_dataset(s3_root, storage_options=options, schema_from="first")
    requests = list_requests(s3_proxy)
    assert requests[:2] == [("events/", False), ("events/", False)]
    # the root's level: 6 folders in pages of 5
    assert [r for r in requests[2:] if r[1]] == [("events/", True)] * 2
    rest = [r for r in requests[2:] if not r[1]]
    folders = [f"events/p={p}/" for p in range(1, PARTS)]
    assert sorted(set(prefix for prefix, _ in rest)) == folders  # p=0 is not listed again
    assert len(rest) == len(folders) * 2  # 6 keys each: two pages of 5
    assert [(f.path, f.size) for f in ds.files] == [(i.path, i.size) for i in want]


async def test_local_without_filter_scans_each_folder_once(local_root: Path,
                                                           scandirs: list[str]) -> None:
    ds = await aorc.open_dataset(str(local_root), schema_from="first")
    root = str(local_root)
    assert len(ds.files) == 72
    folders = [root, *(os.path.join(root, f"p={p}") for p in range(PARTS)),
               *(os.path.join(root, f"p={p}", f"d={d}") for p in range(PARTS)
                 for d in range(DAYS))]
    assert sorted(scandirs) == sorted(folders)


async def test_local_filter_matching_nothing_keeps_the_schema(local_root: Path) -> None:
    got = await aorc.read_dataset(str(local_root), filters=[("p", "==", 99)])
    want = pyarrow_read(str(local_root), pc.field("p") == 99)
    assert got.num_rows == want.num_rows == 0
    assert got.column_names == want.column_names


async def test_memory_store_filter_lists_matching_prefixes(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from aorc.io import registry

    for key, t in keys(18):
        out = io.BytesIO()
        pa_orc.write_table(t, out)
        sink = registry.open_output(f"memory://prefixes/{key}")
        await sink.write(out.getvalue())
        await sink.complete()
    listed: list[str] = []
    real = registry.list_level

    async def counting(url: Any, *args: Any) -> Any:
        listed.append(str(url))
        return await real(url, *args)

    monkeypatch.setattr(registry, "list_level", counting)
    got = await aorc.read_dataset("memory://prefixes/", filters=[("d", "==", 2),
                                                                 ("p", "in", [0, 5])])
    assert sorted(listed) == sorted(["memory://prefixes/", "memory://prefixes/p=0/",
                                     "memory://prefixes/p=5/", "memory://prefixes/p=0/d=2/",
                                     "memory://prefixes/p=5/d=2/"])
    assert sorted(got.column("id").to_pylist()) == sorted(
        v for i in range(18) if i % PARTS in (0, 5) and i // PARTS % DAYS == 2
        for v in range(i * 10, i * 10 + 10))
