"""RollingSink into an Iceberg table: one snapshot per cut holding the stream positions, and
exactly once through crashes -- the sink's crash plan (consumer errors, lost commits,
refused and cancelled uploads, seeded and counted in events) on moto-S3, SIGKILL between an
upload and its commit and between the table commit and the consumer's offset commit (in a
child process), and two sink processes committing to one table at once."""

from __future__ import annotations

import datetime
import json
import pathlib
import subprocess
import sys
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from helpers.iceberg_fixtures import local_catalog
from helpers.sink_stream import (
    TOPIC,
    EventLog,
    plan_crashes,
    run_with_crashes,
)
from pyiceberg.partitioning import PartitionField, PartitionSpec  # noqa: I001
from pyiceberg.schema import Schema
from pyiceberg.transforms import HourTransform
from pyiceberg.types import (
    BinaryType,
    DoubleType,
    IntegerType,
    LongType,
    NestedField,
    StringType,
    TimestampType,
)

import aorc.iceberg
from aorc.iceberg.config import store_path
from aorc.iceberg.sink import offsets_in_summary
from aorc.sink import RollingSink, SinkCommit

CHILD = pathlib.Path(__file__).resolve().parents[1] / "helpers" / "iceberg_sink_child.py"


def events_table(catalog: Any) -> Any:
    schema = Schema(NestedField(1, "partition", IntegerType()),
                    NestedField(2, "offset", LongType()), NestedField(3, "ts", TimestampType()),
                    NestedField(4, "region", StringType()), NestedField(5, "amount", DoubleType()),
                    NestedField(6, "payload", BinaryType()))
    return catalog.create_table("db.events", schema, partition_spec=PartitionSpec(
        PartitionField(3, 1000, HourTransform(), "ts_hour")))


def check_exactly_once(table: Any, log: EventLog, streams: list[int] | None = None) -> None:
    """Every event of the streams is in the table once (pyiceberg's scan), in files named by
    stream position, in its hour's partition; every file the table references exists."""
    table.refresh()
    got = table.scan(selected_fields=("partition", "offset")).to_arrow()
    keys = np.sort((got.column("partition").to_numpy().astype(np.int64) << 40)
                   | got.column("offset").to_numpy())
    streams = list(range(log.streams)) if streams is None else streams
    expected = np.sort(np.concatenate([(np.int64(p) << 40) | log.tables[p].column(
        "offset").to_numpy() for p in streams]))
    assert len(keys) == len(np.unique(keys)), "events stored twice"
    assert np.array_equal(keys, expected), "events missing"
    for task in table.scan().plan_files():
        f = task.file
        name = f.file_path.rsplit("/", 1)[1]
        assert name.startswith(f"{TOPIC}+") and name.endswith(".orc"), name
        assert pathlib.Path(store_path(f.file_path)).exists() or \
            f.file_path.startswith("s3://")


def test_each_cut_is_one_snapshot_with_positions(catalog: Any) -> None:
    table = events_table(catalog)
    log = EventLog(streams=2, per_stream=6_000, seed=3)
    commits: list[SinkCommit] = []

    async def on_commit(c: SinkCommit) -> None:
        commits.append(c)

    async def run() -> dict[tuple[str, int], int]:
        async with RollingSink(table, max_rows=2_500, event_time="ts",
                               max_event_span=datetime.timedelta(minutes=5),
                               on_commit=on_commit, storage_options={"fsync": False}) as sink:
            for p in range(2):
                for b in log.tables[p].to_batches(max_chunksize=1_000):
                    await sink.write(b, topic=TOPIC, partition=p, offsets="offset")
        return await sink.committed_offsets()

    positions = aorc.sync.run(run())
    assert positions == {(TOPIC, p): int(log.tables[p].column("offset")[-1].as_py())
                         for p in range(2)}
    snapshots = table.metadata.snapshots
    assert 2 <= len(snapshots) <= len(commits)  # (cuts meanwhile share a snapshot)
    last = {}
    for s in snapshots:  # positions only grow along the chain
        for key, offset in offsets_in_summary(s.summary.additional_properties).items():
            assert offset >= last.get(key, -1)
            last[key] = offset
    assert last == positions
    check_exactly_once(table, log)
    hours = {str(t.file.partition) for t in table.scan().plan_files()}
    assert len(hours) >= 2  # the events cross hours (late ones too)


@pytest.mark.slow
async def test_crashes_count_every_event_once_on_s3(s3_catalog: Any, s3_proxy: Any) -> None:
    """The sink's crash plan (helpers/sink_stream.py) with a table as the target: after each
    crash the next attempt restarts from the consumer's committed offsets, which may lag the
    table's (a "commit" crash loses the consumer's commit after the table commit): the sink
    drops what the table has."""
    table = events_table(s3_catalog)
    log = EventLog(streams=3, per_stream=100_000, seed=7)  # (enough batches for the plan)
    options = {"storage_options": {"endpoint_url": s3_proxy.url, "part_size": 5 << 20},
               "event_time": "ts", "max_rows": 30_000,
               "max_event_span": datetime.timedelta(minutes=8),
               "memory_budget": 16 << 20, "compression": "lz4"}
    kinds = ["commit", "source", "store", "cancel", "commit", "store"]
    plans = plan_crashes(np.random.default_rng([2027, 0]), kinds)
    outcome = await run_with_crashes(log, table, options, plans, seed=2027, proxy=s3_proxy)
    assert [c.split(":")[0] for c in outcome.crashes] == kinds, outcome.crashes
    assert not [c for c in outcome.crashes if "not reached" in c], outcome.crashes
    check_exactly_once(table, log)
    restored = await aorc.iceberg.IcebergTarget(table).restore()
    assert restored == {(TOPIC, p): int(log.tables[p].column("offset")[-1].as_py())
                        for p in range(3)}


def _child(cfg: dict[str, Any], tmp: pathlib.Path, name: str) -> subprocess.Popen[str]:
    path = tmp / f"{name}.json"
    path.write_text(json.dumps(cfg))
    return subprocess.Popen([sys.executable, str(CHILD), str(path)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _orphans(root: pathlib.Path, table: Any) -> set[str]:
    table.refresh()
    referenced = {store_path(t.file.file_path) for t in table.scan().plan_files()}
    files = {str(p) for p in (root / "warehouse").rglob("*.orc")}
    return files - referenced


@pytest.mark.slow
def test_sigkill_between_upload_and_commit_and_after_the_commit(tmp_path: pathlib.Path
                                                                ) -> None:
    root = tmp_path / "catalog"
    table = events_table(local_catalog(root))
    kafka = tmp_path / "kafka.json"
    base = {"catalog": str(root), "total_streams": 3, "per_stream": 12_000, "seed": 5,
            "streams": [0, 1, 2], "kafka": str(kafka)}
    log = EventLog(streams=3, per_stream=12_000, seed=5)
    # 1. killed as its third commit starts: that cut's files are complete, unreferenced
    p = _child({**base, "kill": "before_commit", "at": 3, "attempt": 1}, tmp_path, "a1")
    _, err = p.communicate(timeout=600)
    assert p.returncode == -9, err
    assert _orphans(root, table), "the killed cut left complete, unreferenced files"
    assert len(table.metadata.snapshots) >= 1
    # 2. killed in the consumer's callback after a table commit: the table is ahead
    p = _child({**base, "kill": "after_commit", "at": 2, "attempt": 2}, tmp_path, "a2")
    _, err = p.communicate(timeout=600)
    assert p.returncode == -9, err
    ahead = aorc.sync.run(aorc.iceberg.IcebergTarget(table).restore())
    consumer = json.loads(kafka.read_text())
    assert any(ahead.get((TOPIC, int(k)), -1) > v for k, v in consumer.items()), \
        (ahead, consumer)
    # 3. runs to the end from the consumer's (older) offsets: the sink skips what the
    # table has, and replaces the orphans of attempt 1 by files of the same names
    p = _child({**base, "attempt": 3}, tmp_path, "a3")
    out, err = p.communicate(timeout=600)
    assert p.returncode == 0, err
    assert json.loads(out.splitlines()[-1])["rows_skipped"] > 0
    check_exactly_once(table, log)


@pytest.mark.slow
def test_two_sink_processes_commit_to_one_table(tmp_path: pathlib.Path) -> None:
    """Two processes, two streams each, start from the same table state (a barrier) and
    commit concurrently: their conflicts are retried on the refreshed table; every event is
    in the table once, each process's positions in its own snapshots."""
    root = tmp_path / "catalog"
    table = events_table(local_catalog(root))
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    base = {"catalog": str(root), "total_streams": 4, "per_stream": 10_000, "seed": 9,
            "barrier": str(barrier), "peers": ["A", "B"]}
    procs = [_child({**base, "name": name, "streams": streams,
                     "kafka": str(tmp_path / f"{name}.kafka")}, tmp_path, name)
             for name, streams in (("A", [0, 1]), ("B", [2, 3]))]
    results = []
    for p in procs:
        out, err = p.communicate(timeout=900)
        assert p.returncode == 0, err
        results.append(json.loads(out.splitlines()[-1]))
    assert sum(r["retries"] for r in results) >= 1, results  # (they did conflict)
    log = EventLog(streams=4, per_stream=10_000, seed=9)
    check_exactly_once(table, log)
    writers = {}
    for s in table.metadata.snapshots:
        props = s.summary.additional_properties
        for (_, p) in offsets_in_summary(props):
            writers.setdefault(p, set()).add(props["writer"])
    assert writers == {0: {"A"}, 1: {"A"}, 2: {"B"}, 3: {"B"}}


def test_not_a_target() -> None:
    with pytest.raises(aorc.SchemaError, match="cannot write to a dict"):
        RollingSink({"not": "a table"}, pa.schema([("a", pa.int64())]))
