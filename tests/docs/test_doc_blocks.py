"""Every code block of the README and the docs pages runs as written (issue 38; issue 33
item 9: from an empty folder). Each page runs in a fresh temporary folder, its blocks in
order and in one namespace, so a page's first block makes the files its later blocks read.
A page that names ``s3://`` buckets runs against moto's server (the AWS environment points
at it; the buckets exist and are empty). A block that cannot run carries a visible
``<!-- norun: reason -->`` line right before it; a block in another language than Python
must carry one too (``text`` blocks show output or a diagram)."""

from __future__ import annotations

import ast
import asyncio
import inspect
import json
import os
import re
import urllib.parse
from pathlib import Path
from typing import Any

import pytest
from helpers.doc_blocks import DISPLAY, ROOT, RUNNABLE, Block, blocks, pages
from helpers.store_fixtures import gcs_names

#: The pages with a block that runs (the others' blocks are all marked or display blocks).
PAGES = [p for p in pages() if any(b.lang in RUNNABLE and b.norun is None for b in blocks(p))]


def _ids(path: Path) -> str:
    return str(path.relative_to(ROOT))


def run_block(block: Block, namespace: dict[str, Any]) -> None:
    """Runs one Python block; top-level ``await`` runs on a fresh event loop."""
    code = compile(block.code, f"{block.page}:{block.line}", "exec",
                   flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    if code.co_flags & inspect.CO_COROUTINE:
        asyncio.run(eval(code, namespace))
    else:
        exec(code, namespace)


def _make_buckets(code: str, request: pytest.FixtureRequest) -> None:
    """Points the stores' environments at the test emulators (moto, gcp-storage-emulator,
    Azurite) and makes the buckets and containers the code names, empty."""
    buckets = sorted(set(re.findall(r"s3://([a-z0-9][a-z0-9.-]+)", code)))
    if buckets:
        client = request.getfixturevalue("s3_client")
        for bucket in buckets:
            client.create_bucket(Bucket=bucket)
    buckets = sorted(set(re.findall(r"gs://([a-z0-9][a-z0-9._-]+)", code)))
    if buckets:
        from helpers.store_fixtures import gcs_call

        emulator = request.getfixturevalue("gcs_emulator")
        request.getfixturevalue("gcs_env")
        for bucket in buckets:
            status, body = gcs_call(emulator, "POST", "/storage/v1/b?project=test",
                                    json.dumps({"name": bucket}).encode(),
                                    {"Content-Type": "application/json"})
            assert status in (200, 409), body
            for name in gcs_names(emulator, bucket):  # empty (the emulator is per session)
                gcs_call(emulator, "DELETE", f"/storage/v1/b/{bucket}/o/"
                         + urllib.parse.quote(name, safe=""))
    containers = sorted(set(re.findall(r"az://([a-z0-9][a-z0-9-]+)", code)))
    if containers:
        request.getfixturevalue("azure_env")
        service = request.getfixturevalue("azure_service")
        for name in containers:
            container = service.get_container_client(name)
            if container.exists():
                container.delete_container()
            service.create_container(name)


def test_every_block_is_runnable_or_says_why() -> None:
    unmarked = [f"{b.page}:{b.line} ({b.lang or 'no language'})"
                for p in pages() for b in blocks(p)
                if b.norun is None and b.lang not in RUNNABLE | DISPLAY]
    assert not unmarked, f"blocks neither runnable nor marked <!-- norun: reason -->: {unmarked}"


def test_examples_read_no_file_they_did_not_make() -> None:
    """Issue 33 item 9: the README's first examples write data.orc before reading it."""
    readme = [b for b in blocks(ROOT / "README.md") if b.lang == "python" and not b.norun]
    assert readme and "write_table" in readme[0].code
    first_read = readme[0].code.find("read_table")
    assert readme[0].code.find("write_table") < first_read


@pytest.mark.parametrize("page", PAGES, ids=_ids)
def test_page_blocks_run(page: Path, tmp_path: Path, request: pytest.FixtureRequest,
                         monkeypatch: pytest.MonkeyPatch) -> None:
    runnable = [b for b in blocks(page) if b.lang in RUNNABLE and b.norun is None]
    code = "".join(b.code for b in runnable)
    _make_buckets(code, request)
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, Any] = {"__name__": "__doc_block__"}
    for block in runnable:
        try:
            run_block(block, namespace)
        except Exception as exc:
            raise AssertionError(f"{block.page}:{block.line} failed: {exc!r}") from exc
    assert os.getcwd() == str(tmp_path)


def test_the_set_up_command_demo_writes_where_out_says(tmp_path: Path) -> None:
    """Issue 33 item 9: the README's demo command, ``examples/demo.py --out demo.orc``,
    leaves the file it wrote (which pyarrow.orc reads), and the next examples read it:
    ``examples/read_file.py demo.orc`` and ``examples/write_file.py OUT``."""
    import subprocess
    import sys

    import pyarrow.orc as po

    readme = (ROOT / "README.md").read_text()
    assert "examples/demo.py --out demo.orc" in readme
    env = {**os.environ, "PYTHONPATH": str(ROOT)}

    def run(*args: str) -> str:
        done = subprocess.run([sys.executable, *args], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        return done.stdout

    out = run(str(ROOT / "examples" / "demo.py"), "--rows", "2000", "--out", "demo.orc")
    assert "wrote demo.orc" in out and "pyarrow.orc (ORC C++) reads the same table" in out
    assert po.read_table(tmp_path / "demo.orc").num_rows == 2000
    shown = run(str(ROOT / "examples" / "read_file.py"), "demo.orc")
    assert "2,000" in shown or "2000" in shown, shown
    run(str(ROOT / "examples" / "write_file.py"), "written")
    written = sorted((tmp_path / "written").glob("*.orc"))
    assert written and all(po.read_table(p).num_rows > 0 for p in written)
