"""aorc.ray on a real local Ray (``ray.init(num_cpus=2)``, once per module): reads compared
with pyarrow and with Ray's own ``read_orc``, Ray's projection and predicate pushdowns (the
cases Ray's own attempt broke: an empty projection keeps the row count, columns come in the
order asked), pruning proven on moto's S3, writes (Hive folders, options, retries, a worker
killed mid-write)."""

from __future__ import annotations

import datetime
import json
import logging
import os
import subprocess
import sys
import textwrap
import threading
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.dataset as pads
import pyarrow.orc as po
import pytest
from helpers.engines import (
    Encrypted,
    Events,
    IcebergEvents,
    check_masked,
    kill_once_before_rename,
    orc_rows,
    overlaps,
    ranges_read,
    sorted_rows,
    stripe_spans,
    upload,
    visible_files,
)

ray = pytest.importorskip("ray")
pytest.importorskip("ray.data")

from ray.data.expressions import col  # noqa: E402

import aorc  # noqa: E402
import aorc.ray  # noqa: E402

# Ray's own deprecation warnings (its DataContext's deprecated settings, ...), not aorc's
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning:ray.*",
                                        "ignore::FutureWarning:ray.*")


@pytest.fixture(scope="module")
def ray_session(worker_env: None) -> Iterator[None]:
    """A local Ray of 2 CPUs for the whole module."""
    ray.init(num_cpus=2, include_dashboard=False, logging_level=logging.ERROR,
             log_to_driver=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        context = ray.data.DataContext.get_current()
        context.enable_progress_bars = False
    try:
        yield
    finally:
        ray.shutdown()


@pytest.fixture
def planned(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The plans of the read tasks made on the driver (after Ray's pushdowns)."""
    seen: list[Any] = []
    original = aorc.ray.OrcDatasource.get_read_tasks

    def get_read_tasks(self: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append(self.plan)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(aorc.ray.OrcDatasource, "get_read_tasks", get_read_tasks)
    return seen


def table_of(ds: Any) -> pa.Table:
    refs = ds.to_arrow_refs()
    tables = [t for t in ray.get(refs) if t.num_rows]
    return pa.concat_tables(tables) if tables else pa.table({})


def test_read_file_matches_pyarrow_and_ray(ray_session: None, events: Events) -> None:
    path = str(events.files[0])
    got = table_of(aorc.ray.read_orc(path, split_bytes=1))
    assert sorted_rows(got).equals(po.read_table(path))
    theirs = table_of(ray.data.read_orc(path))
    assert sorted_rows(got).equals(sorted_rows(theirs))


def test_read_dataset_filters_columns_in_order(ray_session: None, events: Events) -> None:
    filters = [("day", "in", ["2024-06-01", "2024-06-03"]), ("id", ">=", 4_000),
               ("amount", ">", 90.0)]
    ds = aorc.ray.read_orc(str(events.root), columns=["amount", "day", "id"],
                           filters=filters, split_bytes=1)
    got = sorted_rows(table_of(ds))
    expr = (pads.field("day").isin(["2024-06-01", "2024-06-03"]) & (pads.field("id") >= 4_000)
            & (pads.field("amount") > 90.0))
    want = sorted_rows(events.table.filter(expr).select(["amount", "day", "id"]))
    assert got.column_names == ["amount", "day", "id"]
    assert got.num_rows == want.num_rows > 0
    assert got.select(["amount", "id"]).equals(want.select(["amount", "id"]))
    assert got.column("day").to_pylist() == [datetime.date.fromisoformat(str(d))
                                             for d in want.column("day").to_pylist()]


def test_projection_pushdown_order_and_empty(ray_session: None, events: Events,
                                             planned: list[Any]) -> None:
    files = [str(f) for f in events.files[:3]]
    ds = aorc.ray.read_orc(files, split_bytes=1)
    got = table_of(ds.select_columns(["kind", "id"]))
    assert ["kind", "id"] in [p.schema.names for p in planned]  # pushed into the reads
    assert got.column_names == ["kind", "id"]
    want = pa.concat_tables([po.read_table(f).select(["kind", "id"]) for f in files])
    assert sorted_rows(got).equals(sorted_rows(want))
    rows = sum(po.ORCFile(f).nrows for f in files)
    assert ds.select_columns([]).count() == rows
    assert aorc.ray.read_orc(files, columns=[]).count() == rows
    assert ds.count() == rows


def test_predicate_pushdown_prunes_on_s3(ray_session: None, events: Events, s3_client: Any,
                                         s3_bucket: str, s3_proxy: Any,
                                         planned: list[Any]) -> None:
    root = upload(s3_client, s3_bucket, events)
    options = {"endpoint_url": s3_proxy.url, "key": "testing", "secret": "testing",
               "region": "us-east-1"}
    ds = aorc.ray.read_orc(root, storage_options=options, split_bytes=1)
    s3_proxy.log.clear()
    got = table_of(ds.filter(expr=(col("id") >= 6_000) & (col("id") < 7_000))
                   .select_columns(["id", "user"]))
    assert sorted(got.column("id").to_pylist()) == list(range(6_000, 7_000))
    pushed = [p for p in planned if p.expression is not None]
    assert pushed  # Ray's filter reached the reads
    plan = pushed[-1]
    assert {s.uri.rsplit("/", 1)[1] for s in plan.splits} == {"part-1.orc"}
    for path in events.files:
        key = path.relative_to(events.root).as_posix()
        kept = {st for s in plan.splits if s.uri.endswith(key) for st in s.stripes}
        data_reads = ranges_read(s3_proxy, key, tails=False)
        size = path.stat().st_size
        for i, span in enumerate(stripe_spans(path)):
            if i not in kept:
                assert not overlaps(data_reads, span, size), (key, i)
        if not kept:
            assert not data_reads, key


def test_write_hive_with_options_matches_pyarrow(ray_session: None, events: Events,
                                                 tmp_path: Path) -> None:
    ds = aorc.ray.read_orc(str(events.root), split_bytes=1)
    files = aorc.ray.write_orc(ds, tmp_path / "out", partition_cols=["day"],
                               options=aorc.WriteOptions(compression="zstd"),
                               row_index_stride=2000)
    assert len(files) == len(set(files)) > 1
    assert visible_files(tmp_path / "out") == files
    for f in files:
        peer = po.ORCFile(f)
        assert (peer.compression, peer.row_index_stride) == ("ZSTD", 2000)
    back = pads.dataset(str(tmp_path / "out"), format="orc", partitioning="hive").to_table()
    assert sorted_rows(back.select(events.table.column_names)).equals(
        sorted_rows(events.table))


def test_task_off_the_driver_writes_the_same_files_once(tmp_path: Path) -> None:
    # (no on_write_start: the task commits its own files, as one on another node does)
    sink = aorc.ray.OrcDatasink(tmp_path, partition_cols=["p"])
    block = pa.table({"a": [1, 2, 3], "p": ["x", "y", "x"]})

    class Ctx:
        task_idx = 7

    first = sink.write([block], Ctx())
    again = sink.write([block], Ctx())
    assert first == again
    assert all(staged is None for staged, _ in first)
    assert visible_files(tmp_path) == sorted(f for _, f in first) == hidden_files(
        tmp_path, everything=True)
    assert all("-00007-" in Path(f).name for _, f in first)


def hidden_files(root: Path, everything: bool = False) -> list[str]:
    """The files under ``root`` with a hidden name (``everything``: all files), sorted."""
    return sorted(str(p) for p in root.rglob("*")
                  if p.is_file() and (everything or p.name.startswith(".")))


class WatchedSink(aorc.ray.OrcDatasink):
    """A sink noting what its folder holds when the driver commits (or fails)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.before_commit: tuple[list[str], list[str]] | None = None
        self.failed: list[str] | None = None

    def on_write_complete(self, write_result: Any) -> None:
        root = Path(self._dest)
        self.before_commit = (visible_files(root), hidden_files(root))
        super().on_write_complete(write_result)

    def on_write_failed(self, error: Exception) -> None:
        self.failed = hidden_files(Path(self._dest))
        super().on_write_failed(error)


def check_written(sink: aorc.ray.OrcDatasink, out: Path, table: pa.Table) -> None:
    """Every file of the write visible once, readable by pyarrow with the right rows, and
    nothing hidden left."""
    assert sink.files and len(set(sink.files)) == len(sink.files)
    assert visible_files(out) == sink.files
    assert hidden_files(out) == []
    assert sum(po.ORCFile(f).nrows for f in sink.files) == table.num_rows
    back = pads.dataset(str(out), format="orc", partitioning="hive").to_table()
    assert sorted_rows(back.select(table.column_names)).equals(sorted_rows(table))


def test_files_appear_when_the_driver_commits(ray_session: None, events: Events,
                                              tmp_path: Path) -> None:
    sink = WatchedSink(tmp_path / "out", partition_cols=["day"])
    ray.data.from_arrow(events.table).repartition(4).write_datasink(sink)
    assert sink.before_commit is not None
    visible, staged = sink.before_commit
    assert visible == []  # nothing under a final name before the commit
    assert len(staged) == len(sink.files) > 4  # every file staged, hidden
    assert all(Path(s).name.startswith(".aorc-stage-") for s in staged)
    check_written(sink, tmp_path / "out", events.table)


class ElsewhereSink(WatchedSink):
    """A sink whose driver is on another node than every task (as on a cluster)."""

    def on_write_start(self, schema: Any = None) -> None:
        super().on_write_start(schema)
        assert self._driver_node is not None
        self._driver_node = "a-node-of-another-machine"


def test_tasks_on_other_nodes_complete_their_own_files(ray_session: None, events: Events,
                                                       tmp_path: Path) -> None:
    sink = ElsewhereSink(tmp_path / "out", partition_cols=["day"])
    ray.data.from_arrow(events.table).repartition(4).write_datasink(sink)
    assert sink.before_commit is not None
    # nothing staged: each task flushed and renamed its files itself
    assert sink.before_commit == (sink.files, [])
    check_written(sink, tmp_path / "out", events.table)


def fail_on(batch: pa.Table, failing_id: int, out: str) -> pa.Table:
    """A map raising on the batch holding ``failing_id``, once another task has staged its
    files (so that the failed write has staged files to delete)."""
    if failing_id in batch.column("id").to_pylist():
        for _ in range(6000):  # (bounded: the other tasks do stage theirs)
            if any(".aorc-tmp-" not in p.name for p in Path(out).rglob(".aorc-stage-*")):
                break
            threading.Event().wait(0.01)
        raise ValueError("planned failure")
    return batch


def test_failed_task_leaves_no_file(ray_session: None, events: Events,
                                    tmp_path: Path) -> None:
    out = tmp_path / "out"
    sink = WatchedSink(out, partition_cols=["day"])
    failing = int(events.table.column("id")[events.table.num_rows - 1].as_py())
    ds = ray.data.from_arrow(events.table).repartition(4).map_batches(
        fail_on, batch_format="pyarrow", fn_kwargs={"failing_id": failing, "out": str(out)})
    with pytest.raises(Exception, match="planned failure"):
        ds.write_datasink(sink)
    assert sink.failed  # staged files were there when the write failed
    assert visible_files(out) == [] and hidden_files(out) == []
    assert sink.files == []


class DyingSink(WatchedSink):
    """A sink whose first task to finish staging kills its worker (once, across workers):
    Ray retries the task, whose first attempt's files stay staged."""

    def __init__(self, marker: str, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.marker = marker

    def write(self, blocks: Any, ctx: Any) -> Any:
        written = super().write(blocks, ctx)
        try:
            fd = os.open(self.marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            return written
        os.write(fd, json.dumps(written).encode())
        os.close(fd)
        os._exit(1)


def test_retried_task_writes_each_final_file_once(ray_session: None, events: Events,
                                                  tmp_path: Path) -> None:
    marker = tmp_path / "died"
    sink = DyingSink(str(marker), tmp_path / "out", partition_cols=["day"])
    ray.data.from_arrow(events.table).repartition(4).write_datasink(sink)
    lost = json.loads(marker.read_text())  # the attempt that died, its files staged
    assert lost and all(staged is not None for staged, _ in lost)
    assert sink.before_commit is not None
    assert set(s for s, _ in lost) <= set(sink.before_commit[1])
    assert {f for _, f in lost} <= set(sink.files)  # its retry wrote the same names
    assert not any(os.path.exists(s) for s, _ in lost)
    check_written(sink, tmp_path / "out", events.table)


class KillingSink(WatchedSink):
    """A sink whose first completed file kills its worker (once, across workers)."""

    def __init__(self, marker: str, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.marker = marker

    def write(self, blocks: Any, ctx: Any) -> Any:
        kill_once_before_rename(self.marker)
        return super().write(blocks, ctx)


def test_worker_killed_mid_write_leaves_no_partial_file(ray_session: None, events: Events,
                                                        tmp_path: Path) -> None:
    marker = str(tmp_path / "killed")
    sink = KillingSink(marker, tmp_path / "out", partition_cols=["day"])
    aorc.ray.read_orc(str(events.root), split_bytes=1).write_datasink(sink)
    assert os.path.exists(marker)  # the kill happened, its temporary file left behind
    assert sink.before_commit is not None
    assert any("aorc-tmp" in Path(p).name for p in sink.before_commit[1])
    check_written(sink, tmp_path / "out", events.table)


def test_encrypted_columns_read_with_keys_in_workers(ray_session: None, encrypted: Encrypted,
                                                     tmp_path: Path) -> None:
    path = str(encrypted.path)
    source = aorc.ray.OrcDatasource(path, keys=encrypted.keys, split_bytes=1)
    assert len(source.plan.splits) > 1  # several tasks, each decrypting in its worker
    assert encrypted.key_hex not in repr(source) + repr(source.plan)
    ds = aorc.ray.read_orc(path, keys=encrypted.keys, split_bytes=1)
    assert sorted_rows(table_of(ds)).equals(sorted_rows(encrypted.table))
    check_masked(table_of(aorc.ray.read_orc(path, split_bytes=1)), encrypted)
    # a filter on an encrypted column prunes and filters on the decrypted values
    user = encrypted.table.column("user")[1234].as_py()
    got = table_of(aorc.ray.read_orc(path, keys=encrypted.keys, filters=[("user", "==", user)]))
    assert got.column("id").to_pylist() == [r["id"] for r in encrypted.table.to_pylist()
                                            if r["user"] == user]
    # written encrypted by the workers
    files = aorc.ray.write_orc(ds, tmp_path / "out", encrypt="pii:user,amount",
                               masks="sha256:user", keys=encrypted.keys)
    assert sorted_rows(orc_rows(files, encrypted.keys)).equals(sorted_rows(encrypted.table))
    masked = orc_rows(files)
    assert masked.column("amount").null_count == masked.num_rows


def test_iceberg_table_as_source(ray_session: None, iceberg_events: IcebergEvents,
                                 planned: list[Any]) -> None:
    table, theirs = iceberg_events.table, iceberg_events.rows
    got = table_of(aorc.ray.read_orc(table))
    assert sorted_rows(got).equals(sorted_rows(theirs))  # (deletes applied)
    ds = aorc.ray.read_orc(table, columns=["amount", "id"], filters=[("kind", "==", "buy")])
    got = sorted_rows(table_of(ds))
    want = sorted_rows(table.scan(row_filter="kind == 'buy'",
                                  selected_fields=("id", "amount")).to_arrow())
    assert got.column_names == ["amount", "id"] and got.num_rows == want.num_rows > 0
    assert got.equals(want.select(["amount", "id"]))
    assert len(planned[-1].tasks) == 3  # the other kinds' files pruned by partition
    whole = aorc.ray.read_orc(table)
    assert whole.select_columns([]).count() == theirs.num_rows
    got = table_of(whole.select_columns(["ok", "user"]))
    assert got.column_names == ["ok", "user"]
    assert sorted(got.column("user").to_pylist()) == sorted(theirs.column("user").to_pylist())
    got = table_of(whole.filter(expr=col("id") < 100))
    assert sorted(got.column("id").to_pylist()) == sorted(
        i for i in theirs.column("id").to_pylist() if i < 100)


def test_daft_on_the_ray_runner(ray_session: None, events: Events, tmp_path: Path) -> None:
    """Daft's Ray runner (a process runs one Daft runner: a child, attached to this module's
    Ray) reads and writes through aorc.daft in Ray's workers."""
    pytest.importorskip("daft")
    out = tmp_path / "out"
    code = textwrap.dedent(f"""
        import json
        import daft
        import aorc.daft
        daft.set_runner_ray(address={ray.get_runtime_context().gcs_address!r})
        df = aorc.daft.read_orc({str(events.root)!r}, split_bytes=1)
        got = df.where(df["id"] >= 4_000).select("id", "user").to_arrow()
        files = aorc.daft.write_orc(aorc.daft.read_orc({str(events.root)!r},
                                                       columns=["id", "kind"]),
                                    {str(out)!r}, partition_cols=["kind"])
        print(json.dumps({{"runner": daft.get_or_infer_runner_type(), "files": files,
                          "ids": got.column("id").to_pylist(),
                          "users": got.column("user").to_pylist()}}))
    """)
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300, check=False, env=os.environ.copy())
    assert run.returncode == 0, run.stderr[-3000:]
    result = json.loads(run.stdout.strip().splitlines()[-1])
    assert result["runner"] == "ray"
    want = sorted_rows(events.table.filter(pads.field("id") >= 4_000))
    got = sorted(zip(result["ids"], result["users"], strict=True))
    assert got == list(zip(want.column("id").to_pylist(), want.column("user").to_pylist(),
                           strict=True))
    assert visible_files(out) == sorted(result["files"]) and result["files"]
    back = pads.dataset(str(out), format="orc", partitioning="hive").to_table()
    assert sorted(back.column("id").to_pylist()) == events.table.column("id").to_pylist()
