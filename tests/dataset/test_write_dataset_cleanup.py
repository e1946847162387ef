"""write_dataset leaves nothing after a failure or a cancellation, even when a file's
completion was under way (a local rename, an S3 PUT or CompleteMultipartUpload whose answer
is held or lost). Faults are triggered by events (a file is complete, the proxy holds its
answer), never by timers."""

from __future__ import annotations

import asyncio
import os
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from helpers.s3proxy import Fault, HoldReply, ProxyRequest, S3Proxy

import aorc
from aorc.io.output import LocalOutput


def _table(rows: int = 4, payload: int = 8) -> pa.Table:
    rng = np.random.default_rng(20)
    return pa.table({"k": [i % 2 for i in range(rows)],
                     "v": [rng.bytes(payload) for _ in range(rows)]})


def _local_files(root: Path) -> list[str]:
    return sorted(os.path.join(d, f) for d, _, files in os.walk(root) for f in files)


async def _until(event: threading.Event, task: asyncio.Future[Any]) -> None:
    """Wait until ``event`` is set (in a thread) or ``task`` ends, whichever comes first."""
    waiter = asyncio.ensure_future(asyncio.to_thread(event.wait))
    await asyncio.wait([waiter, task], return_when=asyncio.FIRST_COMPLETED)
    assert event.is_set(), f"the event never came; the task ended: {task}"
    await waiter


async def test_cancelled_while_a_local_file_is_renamed(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The first file is renamed into place while the call is cancelled: it is deleted too
    (before, it was left: the writer knew it was complete but write_dataset did not)."""
    renamed, gate = threading.Event(), threading.Event()
    original = LocalOutput._complete_sync

    def holding(self: LocalOutput) -> None:
        original(self)
        if not renamed.is_set():
            renamed.set()
            gate.wait()

    monkeypatch.setattr(LocalOutput, "_complete_sync", holding)
    root = tmp_path / "out"
    task = asyncio.ensure_future(aorc.write_dataset(_table(), root, partition_cols=["k"],
                                                    max_concurrency=2))
    try:
        await _until(renamed, task)
        assert _local_files(root)  # a file is visible while its writer holds
        task.cancel()
    finally:
        gate.set()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert _local_files(root) == []
    assert not os.path.exists(root / "k=0") and not os.path.exists(root / "k=1")


def _s3_keys(s3_client: Any, bucket: str) -> list[str]:
    listed = s3_client.list_objects_v2(Bucket=bucket).get("Contents", [])
    uploads = s3_client.list_multipart_uploads(Bucket=bucket).get("Uploads", [])
    return sorted([o["Key"] for o in listed] + [f"upload:{u['Key']}" for u in uploads])


def _first(operation: str, action: Any) -> Any:
    """A proxy rule applying ``action`` to the first request of ``operation``."""
    used = threading.Event()

    def rule(request: ProxyRequest) -> Any:
        if request.operation == operation and not used.is_set():
            used.set()
            return action
        return None
    return rule


@pytest.mark.parametrize("multipart", [False, True], ids=["put", "multipart"])
async def test_cancelled_while_s3_holds_the_completion(s3_client: Any, s3_bucket: str,
                                                       s3_proxy: S3Proxy,
                                                       multipart: bool) -> None:
    """The store has made the first object visible but holds its answer when the call is
    cancelled: the completion's outcome is awaited and the object deleted."""
    hold = HoldReply(gate=threading.Event())
    operation = "CompleteMultipartUpload" if multipart else "PutObject"
    s3_proxy.rules.append(_first(operation, hold))
    options = {"endpoint_url": s3_proxy.url}
    if multipart:  # 6 MiB of incompressible bytes per file, 5 MiB parts
        table, options["part_size"] = _table(rows=12, payload=1 << 20), 5 << 20
        kw: dict[str, Any] = {"compression": "none"}
    else:
        table, kw = _table(), {}
    task = asyncio.ensure_future(aorc.write_dataset(
        table, f"s3://{s3_bucket}/ds", partition_cols=["k"], storage_options=options,
        max_concurrency=2, **kw))
    try:
        await _until(hold.arrived, task)
        visible = [k for k in _s3_keys(s3_client, s3_bucket) if not k.startswith("upload:")]
        assert visible  # an object exists while the store holds its answer
        task.cancel()
    finally:
        hold.gate.set()  # type: ignore[union-attr]
    with pytest.raises(asyncio.CancelledError):
        await task
    assert _s3_keys(s3_client, s3_bucket) == []


async def test_s3_answer_lost_after_the_object_was_written(s3_client: Any, s3_bucket: str,
                                                           s3_proxy: S3Proxy) -> None:
    """The second file's PUT takes effect but the client gets an error (the answer was
    lost): both the first file and the second one are deleted."""
    puts = {"n": 0}

    def second_put(request: ProxyRequest) -> Any:
        if request.operation == "PutObject":
            puts["n"] += 1
            if puts["n"] == 2:
                return HoldReply(fault=Fault(403, "AccessDenied"))
        return None

    s3_proxy.rules.append(second_put)
    with pytest.raises(aorc.StoreError):
        await aorc.write_dataset(_table(), f"s3://{s3_bucket}/ds", partition_cols=["k"],
                                 storage_options={"endpoint_url": s3_proxy.url},
                                 max_concurrency=1)
    assert puts["n"] == 2
    assert _s3_keys(s3_client, s3_bucket) == []
