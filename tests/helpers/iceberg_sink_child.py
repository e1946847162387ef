"""A sink process for tests/iceberg/test_iceberg_sink.py: streams some partitions of a seeded
event log into an Iceberg table (SqlCatalog on SQLite, local warehouse) with RollingSink,
as a Kafka consumer would, and dies by SIGKILL at a planned event.

Usage: ``python iceberg_sink_child.py CONFIG.json``. The config names the catalog folder,
the streams to write, the "Kafka" offsets file (what this consumer commits after each
RollingSink commit, read back at start: the consumer resumes after it), and optionally:

- ``kill``: ``"before_commit"`` (SIGKILL when the n-th table commit is about to start: the
  cut's files are complete on the store, no snapshot references them) or ``"after_commit"``
  (SIGKILL in the n-th ``on_commit``, after the table commit, before the consumer's own
  offset commit), with ``at`` = n;
- ``barrier``: a folder where each process announces that it has read the table's positions
  (``<name>.ready``) and waits until every named peer has too, so that their commits start
  from the same table state and conflict;
- ``name``: written into every snapshot summary (``writer``).

Prints one JSON line at the end: the commit retries pyiceberg logged and the rows skipped.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import pathlib
import signal
import sys
from typing import Any

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))

import numpy as np  # noqa: E402

from aorc.iceberg.sink import IcebergTarget  # noqa: E402
from aorc.sink import RollingSink, SinkCommit  # noqa: E402
from helpers.iceberg_fixtures import CATALOG_NAME  # noqa: E402
from helpers.sink_stream import TOPIC, EventLog  # noqa: E402


class _Retries(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        if "retrying" in record.getMessage():
            self.count += 1


def _die() -> None:
    sys.stdout.flush()
    os.kill(os.getpid(), signal.SIGKILL)


async def run(cfg: dict[str, Any]) -> dict[str, Any]:
    from pyiceberg.catalog.sql import SqlCatalog

    root = pathlib.Path(cfg["catalog"])
    catalog = SqlCatalog(CATALOG_NAME, uri=f"sqlite:///{root}/catalog.db",
                         warehouse=f"file://{root}/warehouse")
    table = catalog.load_table("db.events")
    log = EventLog(streams=cfg["total_streams"], per_stream=cfg["per_stream"],
                   seed=cfg["seed"])
    kafka = pathlib.Path(cfg["kafka"])
    committed = {int(k): v for k, v in json.loads(kafka.read_text()).items()} \
        if kafka.exists() else {}
    mine = cfg["streams"]
    for p in range(log.streams):
        committed.setdefault(p, -1)
    kill, at = cfg.get("kill"), cfg.get("at", 0)
    target = IcebergTarget(table, snapshot_properties={"writer": cfg.get("name", "")})
    commits = 0
    if kill == "before_commit":
        original = target._commit_batch

        async def commit_batch(batch: list[Any]) -> None:
            nonlocal commits
            commits += 1
            if commits == at:
                _die()
            await original(batch)

        target._commit_batch = commit_batch  # type: ignore[method-assign]

    calls = 0

    async def on_commit(c: SinkCommit) -> None:  # the consumer's own offset commit
        nonlocal calls
        calls += 1
        if kill == "after_commit" and calls == at:
            _die()
        committed[c.partition] = max(committed[c.partition], c.offset)
        kafka.write_text(json.dumps(committed))

    rng = np.random.default_rng([cfg["seed"], cfg.get("attempt", 0)])
    sink = RollingSink(target, on_commit=on_commit, event_time="ts", max_rows=4_000,
                       storage_options={"fsync": False})
    async with sink:
        positions = await sink.committed_offsets()
        if cfg.get("barrier"):
            folder = pathlib.Path(cfg["barrier"])
            (folder / f"{cfg['name']}.ready").write_text(json.dumps(
                {f"{t}.{p}": o for (t, p), o in positions.items()}))
            while not all((folder / f"{peer}.ready").exists() for peer in cfg["peers"]):
                await asyncio.sleep(0.02)  # polls a condition: the outcome does not depend on it
        start = {p: committed[p] if p in mine else 10**18 for p in committed}
        for p, batch, offsets in log.batches_from(start, rng, sizes=(500, 3_000)):
            await sink.write(batch, topic=TOPIC, partition=p, offsets=offsets)
    return {"rows_skipped": sink.stats.rows_skipped, "commits": sink.stats.commits,
            "snapshots": target.snapshots}


def main() -> None:
    cfg = json.loads(pathlib.Path(sys.argv[1]).read_text())
    retries = _Retries()
    logging.getLogger("pyiceberg").addHandler(retries)
    result = asyncio.run(run(cfg))
    result["retries"] = retries.count
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
