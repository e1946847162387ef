"""A dataset on GCS and Azure is listed flat first (aorc.dataset.prefixes), as on S3: one flat
listing when the first pages hold everything, else the delimiter listing of the root and one
flat listing per folder the pages did not finish. Counted from the emulators' request logs
(through the test proxy); the files are those of one full listing, and the rows equal
pyarrow.orc's reading of the same objects."""

from __future__ import annotations

import io
import urllib.parse
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.orc as pa_orc
import pytest

import aorc
from aorc.io import registry

PARTS = 6
FILES = 36  # six folders of six files


def table(i: int) -> pa.Table:
    rng = np.random.default_rng(i)
    return pa.table({"id": pa.array(np.arange(i * 10, i * 10 + 10, dtype=np.int64)),
                     "x": pa.array(rng.normal(size=10))})


def objects() -> list[tuple[str, bytes]]:
    out = []
    for i in range(FILES):
        buffer = io.BytesIO()
        pa_orc.write_table(table(i), buffer)
        out.append((f"events/p={i % PARTS}/part-{i:04d}.orc", buffer.getvalue()))
    return out


def expected() -> pa.Table:
    return pa.concat_tables([
        pa_orc.read_table(io.BytesIO(data)).append_column(
            "p", pa.array([int(name.split("=")[1].split("/")[0])] * 10, pa.int32()))
        for name, data in objects()]).sort_by("id")


def gcs_lists(proxy: Any) -> list[tuple[str, bool]]:
    """(prefix, delimited) of each object listing the proxy saw, in order."""
    out = []
    for r in proxy.log:
        path, _, query = r.target.partition("?")
        if r.method == "GET" and path.endswith("/o"):
            q = urllib.parse.parse_qs(query, keep_blank_values=True)
            out.append((q.get("prefix", [""])[0], "delimiter" in q))
    return out


def azure_lists(proxy: Any) -> list[tuple[str, bool]]:
    out = []
    for r in proxy.log:
        q = urllib.parse.parse_qs(r.target.partition("?")[2], keep_blank_values=True)
        if r.method == "GET" and q.get("comp") == ["list"]:
            out.append((q.get("prefix", [""])[0], "delimiter" in q))
    return out


@pytest.fixture
def gcs_root(gcs_bucket: str, gcs_emulator: str) -> str:
    from helpers.store_fixtures import gcs_put

    for name, data in objects():
        gcs_put(gcs_emulator, gcs_bucket, name, data)
    return f"gs://{gcs_bucket}/events"


@pytest.fixture
def azure_root(azure_container: str, azure_service: Any) -> str:
    container = azure_service.get_container_client(azure_container)
    for name, data in objects():
        container.upload_blob(name, data)
    return f"az://{azure_container}/events"


STORES = {"gcs": ("gcs_root", "gcs_proxy", gcs_lists, "aorc.io.gcs", "LIST_PAGE_SIZE"),
          "azure": ("azure_root", "azure_proxy", azure_lists, "aorc.io.azure",
                    "AZURE_PAGE_SIZE")}


@pytest.mark.parametrize("store", list(STORES))
async def test_a_small_dataset_is_one_flat_listing(store: str,
                                                   request: pytest.FixtureRequest) -> None:
    root_fixture, proxy_fixture, lists, _, _ = STORES[store]
    root = request.getfixturevalue(root_fixture)
    proxy = request.getfixturevalue(proxy_fixture)
    proxy.reset()
    ds = await aorc.open_dataset(root, schema_from="first")
    assert lists(proxy) == [("events/", False)]
    assert len(ds.files) == FILES
    got = await aorc.read_dataset(root)
    assert got.sort_by("id").equals(expected())


@pytest.mark.parametrize("store", list(STORES))
async def test_past_the_first_pages_the_folders_left_are_listed_at_once(
        store: str, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Pages of 5 names, 2 pages before fanning out: the 10 names listed finish p=0 (6
    names) and start p=1; then the root's delimiter listing, and p=1..p=5 listed flat (p=0
    is not listed again). The files are those of one full listing."""
    import importlib

    from aorc.dataset import prefixes

    root_fixture, proxy_fixture, lists, module, page_size = STORES[store]
    root = request.getfixturevalue(root_fixture)
    proxy = request.getfixturevalue(proxy_fixture)
    want = await registry.list_files(root)
    monkeypatch.setattr(importlib.import_module(module), page_size, 5)
    monkeypatch.setattr(prefixes, "FLAT_LIST_PAGES", 2)
    proxy.reset()
    ds = await aorc.open_dataset(root, schema_from="first")
    requests = lists(proxy)
    assert requests[:2] == [("events/", False)] * 2
    # The root's level: 6 folders, two pages of 5 on Azure; the GCS emulator counts only
    # objects, not folders, against maxResults (real GCS counts both), so one page there.
    delimited = [r for r in requests[2:] if r[1]]
    assert delimited == [("events/", True)] * (2 if store == "azure" else 1)
    rest = [r for r in requests[2:] if not r[1]]
    folders = [f"events/p={p}/" for p in range(1, PARTS)]
    assert sorted({prefix for prefix, _ in rest}) == folders
    assert len(rest) == len(folders) * 2  # 6 names each: two pages of 5
    assert [(f.path, f.size) for f in ds.files] == [(i.path, i.size) for i in want]
