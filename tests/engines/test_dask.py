"""aorc.dask on a real LocalCluster (2 worker processes): reads compared with pyarrow and
with Dask's own ``read_orc``, pruning proven on moto's S3, writes (Hive folders, options,
retries, a worker killed mid-write)."""

from __future__ import annotations

import datetime
import os
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

dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")

import aorc  # noqa: E402
import aorc.dask  # noqa: E402
from aorc.dataset.splits import plan_splits  # noqa: E402


@pytest.fixture(scope="module")
def client(worker_env: None) -> Iterator[Any]:
    """A LocalCluster of 2 worker processes (1 thread each), for the whole module."""
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None, silence_logs=50)
    c = distributed.Client(cluster)
    try:
        yield c
    finally:
        c.close()
        cluster.close()


def table_of(df: Any) -> pa.Table:
    return pa.Table.from_pandas(df.compute(), preserve_index=False)


def same(got: pa.Table, want: pa.Table) -> bool:
    """Equal values in the same column order, once ``want`` has ``got``'s types (pandas
    holds strings as large strings)."""
    return got.column_names == want.column_names and got.equals(want.cast(got.schema))


def test_read_file_matches_pyarrow_and_dask(client: Any, events: Events) -> None:
    path = events.files[0]
    got = table_of(aorc.dask.read_orc(str(path), split_bytes=1))
    want = po.read_table(path)
    assert same(got, want)
    theirs = pa.Table.from_pandas(dd.read_orc(str(path)).compute(), preserve_index=False)
    assert same(got, theirs)


def test_read_dataset_filters_columns_in_order(client: Any, events: Events) -> None:
    filters = [("day", "in", ["2024-06-01", "2024-06-03"]), ("id", ">=", 4_000),
               ("amount", ">", 90.0)]
    df = aorc.dask.read_orc(str(events.root), columns=["amount", "day", "id"],
                            filters=filters, split_bytes=1)
    assert list(df.columns) == ["amount", "day", "id"]
    got = sorted_rows(table_of(df))
    expr = (pads.field("day").isin(["2024-06-01", "2024-06-03"]) & (pads.field("id") >= 4_000)
            & (pads.field("amount") > 90.0))
    want = sorted_rows(events.table.filter(expr).select(["amount", "day", "id"]))
    assert got.num_rows == want.num_rows > 0
    assert got.column("id").equals(want.column("id"))
    assert got.column("amount").equals(want.column("amount"))
    assert got.column("day").to_pylist() == [str(d) for d in want.column("day").to_pylist()]


def test_read_list_of_files_and_empty_projection(client: Any, events: Events) -> None:
    files = [str(f) for f in events.files[:3]]
    df = aorc.dask.read_orc(files, columns=["user", "id"], split_bytes=1)
    want = pa.concat_tables([po.read_table(f).select(["user", "id"]) for f in files])
    assert same(sorted_rows(table_of(df)), sorted_rows(want))
    empty = aorc.dask.read_orc(str(events.root), columns=[], split_bytes=1)
    assert list(empty.columns) == []
    assert len(empty) == events.table.num_rows


def test_dask_projection_is_pushed_into_the_reads(client: Any, events: Events) -> None:
    df = aorc.dask.read_orc(str(events.root), split_bytes=1)
    projected = df[["kind", "id"]]
    nodes = [e for e in projected.optimize(fuse=False).expr.walk()
             if type(e).__name__ == "FromMapProjectable"]
    assert nodes and sorted(nodes[0].operand("columns")) == ["id", "kind"]  # only these
    got = sorted_rows(table_of(projected))
    assert same(got, sorted_rows(events.table).select(["kind", "id"]))


def test_pruned_stripes_and_files_are_never_tasks_nor_read(
        client: Any, events: Events, s3_client: Any, s3_bucket: str, s3_proxy: Any) -> None:
    root = upload(s3_client, s3_bucket, events)
    options = {"endpoint_url": s3_proxy.url, "key": "testing", "secret": "testing",
               "region": "us-east-1"}
    # ids 6000..6999 lie in the first stripe(s) of day 1's second file only
    filters = [("id", ">=", 6_000), ("id", "<", 7_000)]
    plan = aorc.sync.run(plan_splits(root, filters=filters, storage_options=options,
                                     split_bytes=1))
    assert {s.uri.rsplit("/", 1)[1] for s in plan.splits} == {"part-1.orc"}
    assert {s.partition for s in plan.splits} == {(("day", datetime.date(2024, 6, 1)),)}
    s3_proxy.log.clear()
    df = aorc.dask.read_orc(root, columns=["id", "user"], filters=filters,
                            storage_options=options, split_bytes=1)
    assert df.npartitions == len(plan.splits)
    got = table_of(df)
    assert sorted(got.column("id").to_pylist()) == list(range(6_000, 7_000))
    for path in events.files:
        key = path.relative_to(events.root).as_posix()
        kept = {st for s in plan.splits if s.uri.endswith(key) for st in s.stripes}
        spans = stripe_spans(path)
        reads = ranges_read(s3_proxy, key)
        data_reads = ranges_read(s3_proxy, key, tails=False)
        size = path.stat().st_size
        for i, span in enumerate(spans):  # tails hold the last stripe of small files
            if i in kept:
                assert overlaps(reads, span, size), (key, i)
            else:
                assert not overlaps(data_reads, span, size), (key, i)
        if not kept:  # a pruned file: its tail only, read while planning
            assert reads and not data_reads, key
    total = sum(int(r.headers.get("content-length", 0)) for r in s3_proxy.log)
    assert total < sum(p.stat().st_size for p in events.files) / 2


def test_write_hive_with_options_matches_pyarrow(client: Any, events: Events,
                                                 tmp_path: Path) -> None:
    df = aorc.dask.read_orc(str(events.root), split_bytes=1)
    files = aorc.dask.to_orc(df, tmp_path / "out", partition_cols=["day"],
                             options=aorc.WriteOptions(compression="zstd"),
                             row_index_stride=2000)
    assert len(files) == len(set(files)) > 1
    for f in files:
        assert Path(f).name.startswith("part-") and "/day=" in f
        peer = po.ORCFile(f)  # pyarrow reads the options back
        assert (peer.compression, peer.row_index_stride) == ("ZSTD", 2000)
    back = pads.dataset(str(tmp_path / "out"), format="orc", partitioning="hive").to_table()
    assert sorted_rows(back.select(events.table.column_names)).equals(
        sorted_rows(events.table))


def test_write_and_read_back_on_s3(client: Any, events: Events, s3_client: Any,
                                   s3_bucket: str, s3_env: str) -> None:
    options = {"endpoint_url": s3_env, "key": "testing", "secret": "testing",
               "region": "us-east-1"}
    df = aorc.dask.read_orc(str(events.root), columns=["id", "kind", "day"])
    files = aorc.dask.to_orc(df, f"s3://{s3_bucket}/out", partition_cols=["day"],
                             storage_options=options)
    listed = s3_client.list_objects_v2(Bucket=s3_bucket, Prefix="out/")["Contents"]
    assert sorted(f"s3://{s3_bucket}/{o['Key']}" for o in listed) == files
    assert not s3_client.list_multipart_uploads(Bucket=s3_bucket).get("Uploads")
    back = table_of(aorc.dask.read_orc(f"s3://{s3_bucket}/out", columns=["id", "kind"],
                                       storage_options=options))
    assert same(sorted_rows(back), sorted_rows(events.table).select(["id", "kind"]))


def test_retried_partition_writes_the_same_files_once(tmp_path: Path) -> None:
    from aorc.dask.orc import _write_partition

    pdf = pa.table({"a": [1, 2, 3], "p": ["x", "y", "x"]}).to_pandas()
    first = _write_partition(pdf, "w1", str(tmp_path), ["p"], None, None, {},
                             partition_info={"number": 4})
    again = _write_partition(pdf, "w1", str(tmp_path), ["p"], None, None, {},
                             partition_info={"number": 4})
    assert first["path"].tolist() == again["path"].tolist()
    on_disk = sorted(str(p) for p in tmp_path.rglob("*.orc"))
    assert on_disk == sorted(first["path"].tolist())
    assert all("-00004-" in Path(p).name for p in on_disk)


def test_worker_killed_mid_write_leaves_no_partial_file(client: Any, events: Events,
                                                        tmp_path: Path) -> None:
    marker = str(tmp_path / "killed")
    client.run(kill_once_before_rename, marker)
    df = aorc.dask.read_orc(str(events.root), split_bytes=1)
    files = aorc.dask.to_orc(df, tmp_path / "out", partition_cols=["day"])
    assert os.path.exists(marker)  # the kill happened, its temporary file left behind
    assert any(p.name.startswith(".") for p in (tmp_path / "out").rglob("*aorc-tmp*"))
    assert visible_files(tmp_path / "out") == sorted(files)
    back = pads.dataset(str(tmp_path / "out"), format="orc", partitioning="hive").to_table()
    assert back.num_rows == events.table.num_rows
    assert sorted_rows(back).column("id").equals(sorted_rows(events.table).column("id"))


def test_encrypted_columns_read_with_keys_in_workers(client: Any, encrypted: Encrypted,
                                                     tmp_path: Path) -> None:
    path = str(encrypted.path)
    df = aorc.dask.read_orc(path, keys=encrypted.keys, split_bytes=1)
    assert df.npartitions > 1  # several worker tasks, each decrypting
    want = sorted_rows(encrypted.table)
    assert same(sorted_rows(table_of(df)), want)
    masked = table_of(aorc.dask.read_orc(path, split_bytes=1))
    check_masked(masked.cast(want.schema), encrypted)
    files = aorc.dask.to_orc(df, tmp_path / "out", encrypt="pii:user,amount",
                             masks="sha256:user", keys=encrypted.keys)
    assert sorted_rows(orc_rows(files, encrypted.keys)).equals(want)
    assert orc_rows(files).column("amount").null_count == want.num_rows


def test_iceberg_table_as_source(client: Any, iceberg_events: IcebergEvents) -> None:
    table, theirs = iceberg_events.table, iceberg_events.rows
    df = aorc.dask.read_orc(table, split_bytes=1)
    assert df.npartitions > 1
    assert same(sorted_rows(table_of(df)), sorted_rows(theirs))  # (deletes applied)
    df = aorc.dask.read_orc(table, columns=["amount", "id"], filters="kind == 'buy'")
    assert list(df.columns) == ["amount", "id"]
    want = table.scan(row_filter="kind == 'buy'", selected_fields=("id", "amount")).to_arrow()
    assert same(sorted_rows(table_of(df)), sorted_rows(want).select(["amount", "id"]))
    projected = aorc.dask.read_orc(table, split_bytes=1)[["user", "id"]]
    assert same(sorted_rows(table_of(projected)), sorted_rows(theirs).select(["user", "id"]))
    assert len(aorc.dask.read_orc(table, columns=[])) == theirs.num_rows
