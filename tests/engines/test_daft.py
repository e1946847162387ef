"""aorc.daft on Daft's native runner: reads compared with pyarrow (Daft 0.7 has no ORC
reader of its own), Daft's pushdowns (columns in the order asked, filters, limit), pruning
proven on moto's S3, writes (Hive folders, options, retries, a process killed mid-write)."""

from __future__ import annotations

import asyncio
import datetime
import os
import subprocess
import sys
import textwrap
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
    orc_rows,
    overlaps,
    ranges_read,
    sorted_rows,
    stripe_spans,
    upload,
    visible_files,
)

daft = pytest.importorskip("daft")

from daft.io.pushdowns import Pushdowns  # noqa: E402

import aorc  # noqa: E402
import aorc.daft  # noqa: E402
from aorc.errors import SchemaError  # noqa: E402


def arrow(df: Any) -> pa.Table:
    """The DataFrame's rows, strings as pyarrow reads them (Daft's are large strings)."""
    table = df.to_arrow()
    fields = [pa.field(f.name, pa.string()) if pa.types.is_large_string(f.type) else f
              for f in table.schema]
    return table.cast(pa.schema(fields))


def test_read_file_matches_pyarrow(events: Events) -> None:
    path = str(events.files[0])
    got = arrow(aorc.daft.read_orc(path, split_bytes=1))
    assert sorted_rows(got).equals(po.read_table(path))


def test_read_dataset_filters_columns_in_order(events: Events) -> None:
    filters = [("day", "in", ["2024-06-01", "2024-06-03"]), ("id", ">=", 4_000),
               ("amount", ">", 90.0)]
    df = aorc.daft.read_orc(str(events.root), columns=["amount", "day", "id"],
                            filters=filters, split_bytes=1)
    got = sorted_rows(arrow(df))
    expr = (pads.field("day").isin(["2024-06-01", "2024-06-03"]) & (pads.field("id") >= 4_000)
            & (pads.field("amount") > 90.0))
    want = sorted_rows(events.table.filter(expr).select(["amount", "day", "id"]))
    assert got.column_names == ["amount", "day", "id"]
    assert got.num_rows == want.num_rows > 0
    assert got.select(["amount", "id"]).equals(want.select(["amount", "id"]))
    assert got.column("day").to_pylist() == [datetime.date.fromisoformat(str(d))
                                             for d in want.column("day").to_pylist()]


def test_pushdowns_columns_order_count_and_limit(events: Events) -> None:
    files = [str(f) for f in events.files[:3]]
    source = aorc.daft.OrcDataSource(files, split_bytes=1)
    got = arrow(source.read().select("kind", "id"))
    assert got.column_names == ["kind", "id"]
    assert source.plans[-1].schema.names == ["id", "kind"]  # pushed (in the source's order)
    want = pa.concat_tables([po.read_table(f).select(["kind", "id"]) for f in files])
    assert sorted_rows(got).equals(sorted_rows(want))
    rows = sum(po.ORCFile(f).nrows for f in files)
    assert source.read().count_rows() == rows
    assert len(source.plans[-1].schema) <= 1  # counted on one column at most
    with pytest.raises(SchemaError):
        aorc.daft.read_orc(files, columns=[])

    async def tasks(pushdowns: Pushdowns) -> tuple[int, int]:
        made, read = 0, 0
        async for task in source.get_tasks(pushdowns):
            made += 1
            async for batch in task.read():
                read += len(batch)
        return made, read

    assert asyncio.run(tasks(Pushdowns(columns=[]))) == (len(source.plans[-1].splits), rows)
    assert asyncio.run(tasks(Pushdowns(limit=10))) == (1, 10)  # no task past the limit
    assert arrow(source.read().limit(10)).num_rows == 10


def test_small_stripes_reach_daft_in_large_batches(tmp_path: Path) -> None:
    # Stripes of a few hundred rows: one Daft batch per stripe made a micro-partition apiece.
    table = pa.table({"id": pa.array(range(12_000), pa.int64())})
    path = tmp_path / "small.orc"
    aorc.sync.write_table(table.to_batches(max_chunksize=1_000), path, stripe_size=1_000)
    stripes = po.ORCFile(str(path)).nstripes
    assert stripes >= 8

    async def batches(source: Any, pushdowns: Pushdowns) -> list[int]:
        sizes = []
        async for task in source.get_tasks(pushdowns):
            async for batch in task.read():
                sizes.append(len(batch))
        return sizes

    source = aorc.daft.OrcDataSource(str(path))
    assert asyncio.run(batches(source, Pushdowns())) == [12_000]
    assert asyncio.run(batches(source, Pushdowns(limit=2_500))) == [2_500]
    small = aorc.daft.OrcDataSource(str(path))
    monkey = pytest.MonkeyPatch()
    monkey.setattr(aorc.daft.orc, "BATCH_ROWS", 5_000)
    try:
        sizes = asyncio.run(batches(small, Pushdowns()))
    finally:
        monkey.undo()
    assert sum(sizes) == 12_000 and 2 <= len(sizes) < stripes
    assert all(n >= 5_000 for n in sizes[:-1])
    assert arrow(aorc.daft.read_orc(str(path))).equals(table)


def test_filter_pushdown_prunes_on_s3(events: Events, s3_client: Any, s3_bucket: str,
                                      s3_proxy: Any) -> None:
    root = upload(s3_client, s3_bucket, events)
    options = {"endpoint_url": s3_proxy.url, "key": "testing", "secret": "testing",
               "region": "us-east-1"}
    source = aorc.daft.OrcDataSource(root, storage_options=options, split_bytes=1)
    s3_proxy.log.clear()
    df = source.read()
    got = arrow(df.where((df["id"] >= 6_000) & (df["id"] < 7_000)).select("id", "user"))
    assert sorted(got.column("id").to_pylist()) == list(range(6_000, 7_000))
    plan = source.plans[-1]
    assert plan.expression is not None  # Daft's filter reached the reads
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


def test_write_hive_with_options_matches_pyarrow(events: Events, tmp_path: Path) -> None:
    df = aorc.daft.read_orc(str(events.root), split_bytes=1)
    files = aorc.daft.write_orc(df, tmp_path / "out", partition_cols=["day"],
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


def test_retried_write_writes_the_same_files_once(tmp_path: Path) -> None:
    from daft.recordbatch import MicroPartition

    sink = aorc.daft.OrcDataSink(tmp_path, partition_cols=["p"])
    part = MicroPartition.from_arrow(pa.table({"a": [1, 2, 3], "p": ["x", "y", "x"]}))
    first = [r.result for r in sink.write(iter([part]))]
    again = [r.result for r in sink.write(iter([part]))]
    assert first == again and first[0]
    assert visible_files(tmp_path) == sorted(first[0])


def test_process_killed_mid_write_leaves_no_partial_file(events: Events,
                                                         tmp_path: Path) -> None:
    out, marker = tmp_path / "out", tmp_path / "killed"
    code = textwrap.dedent(f"""
        import aorc.daft
        from helpers.engines import kill_once_before_rename
        kill_once_before_rename({str(marker)!r})
        df = aorc.daft.read_orc({str(events.root)!r}, split_bytes=1)
        print(aorc.daft.write_orc(df, {str(out)!r}, partition_cols=["day"]))
    """)
    tests = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tests.parent), str(tests)])}
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         timeout=300, check=False)
    assert run.returncode == 1 and marker.exists()  # killed before its first rename
    assert any(p.name.startswith(".") for p in out.rglob("*aorc-tmp*"))
    assert visible_files(out) == []
    again = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                           timeout=300, check=True, text=True)
    files = visible_files(out)
    assert files and repr(files) in again.stdout
    back = pads.dataset(str(out), format="orc", partitioning="hive").to_table()
    assert sorted_rows(back).column("id").equals(sorted_rows(events.table).column("id"))


def test_encrypted_columns_read_with_keys(encrypted: Encrypted, tmp_path: Path) -> None:
    path = str(encrypted.path)
    source = aorc.daft.OrcDataSource(path, keys=encrypted.keys, split_bytes=1)
    assert encrypted.key_hex not in repr(source) + repr(source._plan)
    want = sorted_rows(encrypted.table)
    assert sorted_rows(arrow(source.read())).equals(want)
    check_masked(arrow(aorc.daft.read_orc(path, split_bytes=1)), encrypted)
    df = source.read()
    user = encrypted.table.column("user")[1234].as_py()
    got = arrow(df.where(df["user"] == user))  # pushed: pruned on decrypted statistics
    assert got.column("id").to_pylist() == [r["id"] for r in encrypted.table.to_pylist()
                                            if r["user"] == user]
    files = aorc.daft.write_orc(source.read(), tmp_path / "out", encrypt="pii:user,amount",
                                masks="sha256:user", keys=encrypted.keys)
    assert sorted_rows(orc_rows(files, encrypted.keys)).equals(want)
    assert orc_rows(files).column("amount").null_count == want.num_rows


def test_iceberg_table_as_source(iceberg_events: IcebergEvents) -> None:
    table, theirs = iceberg_events.table, iceberg_events.rows
    assert sorted_rows(arrow(aorc.daft.read_orc(table))).equals(sorted_rows(theirs))
    got = sorted_rows(arrow(aorc.daft.read_orc(table, columns=["amount", "id"],
                                               filters=[("kind", "==", "buy")])))
    want = table.scan(row_filter="kind == 'buy'", selected_fields=("id", "amount")).to_arrow()
    assert got.equals(sorted_rows(want).select(["amount", "id"]))
    source = aorc.daft.OrcDataSource(table)
    df = source.read()
    got = arrow(df.where(df["id"] < 100).select("user", "id"))
    assert got.column_names == ["user", "id"]
    assert sorted(got.column("id").to_pylist()) == sorted(
        i for i in theirs.column("id").to_pylist() if i < 100)
    assert len(source.plans[-1].tasks) < len(source._plan.tasks)  # files pruned by metrics
    assert source.read().count_rows() == theirs.num_rows
    assert arrow(source.read().limit(10)).num_rows == 10
