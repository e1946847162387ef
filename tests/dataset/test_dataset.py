"""Datasets without Spark: schema evolution, given schemas, bad input, write_dataset's
behaviours, the registry's listing, streaming. Peers: pyarrow.orc writes the old files
and pyarrow.dataset reads what aorc writes; the Spark comparisons are in
tests/spark/test_spark_dataset.py."""

from __future__ import annotations

import contextlib
import datetime
import decimal
import os
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.dataset as pads
import pyarrow.orc as pa_orc
import pytest

import aorc
from aorc.io import registry


def put(path: Path, table: pa.Table) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    pa_orc.write_table(table, str(path))


async def test_evolution_widening_and_missing_nested_fields(tmp_path: Path) -> None:
    old = pa.table({
        "id": pa.array([1, 2], pa.int8()),
        "f": pa.array([1.5, 2.5], pa.float32()),
        "d": pa.array([decimal.Decimal("1.5"), None], pa.decimal128(5, 1)),
        "s": pa.array([{"a": 1}, None], pa.struct([("a", pa.int32())])),
    })
    new = pa.table({
        "id": pa.array([3], pa.int64()),
        "f": pa.array([3.25], pa.float64()),
        "d": pa.array([decimal.Decimal("123456.25")], pa.decimal128(10, 2)),
        "s": pa.array([{"a": 5, "b": "x"}], pa.struct([("a", pa.int32()), ("b", pa.string())])),
        "extra": ["e"],
    })
    put(tmp_path / "a.orc", old)
    put(tmp_path / "b.orc", new)
    ds = await aorc.open_dataset(tmp_path)
    assert ds.schema == pa.schema([
        ("id", pa.int64()), ("f", pa.float64()), ("d", pa.decimal128(10, 2)),
        ("s", pa.struct([("a", pa.int32()), ("b", pa.string())])), ("extra", pa.string())])
    rows = (await ds.read()).to_pylist()
    assert rows == [
        {"id": 1, "f": 1.5, "d": decimal.Decimal("1.50"), "s": {"a": 1, "b": None},
         "extra": None},
        {"id": 2, "f": 2.5, "d": None, "s": None, "extra": None},
        {"id": 3, "f": 3.25, "d": decimal.Decimal("123456.25"), "s": {"a": 5, "b": "x"},
         "extra": "e"},
    ]
    assert (await ds.read(filters=[("extra", "is null")])).num_rows == 2
    assert (await ds.read(filters=[("s.b", "==", "x")])).column("id").to_pylist() == [3]
    assert await ds.count_rows([("id", ">", 1)]) == 2


async def test_evolution_inside_lists_and_maps(tmp_path: Path) -> None:
    inner_old = pa.struct([("a", pa.int32())])
    inner_new = pa.struct([("a", pa.int64()), ("b", pa.string())])
    old = pa.table({
        "l": pa.array([[{"a": 1}, None], None, []], pa.list_(inner_old)),
        "m": pa.array([[("k", {"a": 2})], [], None], pa.map_(pa.string(), inner_old)),
    })
    new = pa.table({
        "l": pa.array([[{"a": 3, "b": "x"}]], pa.list_(inner_new)),
        "m": pa.array([[("z", {"a": 4, "b": "y"})]], pa.map_(pa.string(), inner_new)),
    })
    put(tmp_path / "a.orc", old)
    put(tmp_path / "b.orc", new)
    ds = await aorc.open_dataset(tmp_path)
    assert ds.schema == pa.schema([("l", pa.list_(inner_new)),
                                   ("m", pa.map_(pa.string(), inner_new))])
    got = await ds.read()
    got.validate(full=True)
    assert got.to_pylist() == [
        {"l": [{"a": 1, "b": None}, None], "m": [("k", {"a": 2, "b": None})]},
        {"l": None, "m": []},
        {"l": [], "m": None},
        {"l": [{"a": 3, "b": "x"}], "m": [("z", {"a": 4, "b": "y"})]},
    ]
    batches = [b async for b in ds.iter_batches(batch_size=1)]  # sliced on the way
    assert pa.Table.from_batches(batches).to_pylist() == got.to_pylist()


async def test_incompatible_change_names_file_and_column(tmp_path: Path) -> None:
    put(tmp_path / "a.orc", pa.table({"id": [1], "v": pa.array([1], pa.int32())}))
    put(tmp_path / "b.orc", pa.table({"id": [2], "v": ["text"]}))
    with pytest.raises(aorc.SchemaError, match=r"b\.orc.*'v'"):
        await aorc.open_dataset(tmp_path)
    with pytest.raises(aorc.SchemaError, match=r"b\.orc.*'v'"):
        await aorc.read_dataset(tmp_path, schema=pa.schema([("id", pa.int64()),
                                                            ("v", pa.int64())]))


async def test_given_schema_and_positional_columns(tmp_path: Path) -> None:
    put(tmp_path / "old.orc", pa.table({"_col0": [1, 2], "_col1": ["a", "b"]}))
    put(tmp_path / "new.orc", pa.table({"name": ["c"], "id": [3], "dropped": [0.5]}))
    schema = pa.schema([("id", pa.int64()), ("name", pa.string()), ("new", pa.int16())])
    table = await aorc.read_dataset(tmp_path, schema=schema)
    assert table.schema == schema
    assert sorted(table.to_pylist(), key=lambda r: r["id"]) == [
        {"id": 1, "name": "a", "new": None}, {"id": 2, "name": "b", "new": None},
        {"id": 3, "name": "c", "new": None}]
    assert (await aorc.read_dataset(tmp_path, schema=schema,
                                    filters=[("name", "in", ["b", "c"])])).num_rows == 2


async def test_partition_types_nulls_escapes(tmp_path: Path) -> None:
    for folder in ("n=1/dt=2026-11-22/s=a%2Fb", "n=3000000000/dt=2026-11-23/s=c",
                   "n=__HIVE_DEFAULT_PARTITION__/dt=2026-11-23/s=__HIVE_DEFAULT_PARTITION__"):
        put(tmp_path / folder / "f.orc", pa.table({"x": [1]}))
    ds = await aorc.open_dataset(tmp_path)
    assert ds.partition_schema == pa.schema([("n", pa.int64()), ("dt", pa.date32()),
                                             ("s", pa.string())])
    rows = (await ds.read(columns=["n", "s"])).to_pylist()
    assert rows == [{"n": 1, "s": "a/b"}, {"n": 3000000000, "s": "c"}, {"n": None, "s": None}]
    given = pa.schema([("n", pa.int8())])
    with pytest.raises(aorc.SchemaError, match="3000000000|does not fit"):
        await aorc.open_dataset(tmp_path, partitioning=given)


async def test_bad_inputs(tmp_path: Path) -> None:
    put(tmp_path / "ok.orc", pa.table({"x": [1, 2]}))
    (tmp_path / "junk.orc").write_bytes(b"this is not an ORC file at all" * 10)
    (tmp_path / "_SUCCESS").write_bytes(b"")
    (tmp_path / ".hidden.crc").write_bytes(b"xx")
    with pytest.raises(aorc.CorruptFileError, match="junk.orc"):
        await aorc.read_dataset(tmp_path)
    table = await aorc.read_dataset(tmp_path, exclude_invalid_files=True)
    assert table.column("x").to_pylist() == [1, 2]
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(aorc.SchemaError):
        await aorc.read_dataset(empty)
    schema = pa.schema([("x", pa.int64())])
    assert (await aorc.read_dataset(empty, schema=schema)).schema == schema
    with pytest.raises(aorc.ObjectNotFoundError):
        await aorc.read_dataset(tmp_path / "missing")
    with pytest.raises(aorc.SchemaError, match="no column"):
        await aorc.read_dataset(tmp_path, exclude_invalid_files=True, columns=["nope"])
    put(tmp_path / "deep" / "k=1" / "f.orc", pa.table({"x": [1]}))
    put(tmp_path / "deep" / "f.orc", pa.table({"x": [1]}))
    with pytest.raises(aorc.SchemaError, match="conflicting partition"):
        await aorc.read_dataset(tmp_path / "deep")


async def test_read_table_accepts_folder_and_list(tmp_path: Path) -> None:
    put(tmp_path / "a.orc", pa.table({"x": [1]}))
    put(tmp_path / "b.orc", pa.table({"x": [2]}))
    assert (await aorc.read_table(tmp_path)).column("x").to_pylist() == [1, 2]
    files = [str(tmp_path / "b.orc"), str(tmp_path / "a.orc")]
    assert sorted((await aorc.read_table(files)).column("x").to_pylist()) == [1, 2]


async def test_iter_batches_streams_with_bounded_files(tmp_path: Path) -> None:
    for i in range(12):
        put(tmp_path / f"p={i % 3}" / f"f{i:02d}.orc",
            pa.table({"x": pa.array(range(i * 100, i * 100 + 100), pa.int64())}))
    ds = await aorc.open_dataset(tmp_path, max_open_files=2)
    seen = 0
    async with contextlib.aclosing(ds.iter_batches(batch_size=30)) as it:
        async for batch in it:
            seen += batch.num_rows
            assert batch.num_rows <= 30
            if seen >= 250:
                break
    assert seen >= 250
    total = [b async for b in ds.iter_batches(filters=[("p", "==", 1)])]
    assert sum(b.num_rows for b in total) == 400


async def test_write_dataset_behaviours(tmp_path: Path) -> None:
    table = pa.table({"k": ["a", "b", None, "a"], "v": [1, 2, 3, 4]})
    root = tmp_path / "ds"
    first = await aorc.write_dataset(table, root, partition_cols=["k"],
                                     basename_template="chunk-{i}-{uuid}.orc")
    assert {Path(p).parent.name for p in first} == {"k=a", "k=b",
                                                    "k=__HIVE_DEFAULT_PARTITION__"}
    assert all(Path(p).name.startswith("chunk-") for p in first)
    assert pa_orc.read_table(first[0]).column_names == ["v"]  # partition column left out
    await aorc.write_dataset(table, root, partition_cols=["k"])  # append
    assert await (await aorc.open_dataset(root)).count_rows() == 8
    with pytest.raises(aorc.StoreError, match="error"):
        await aorc.write_dataset(table, root, partition_cols=["k"],
                                 existing_data_behavior="error")
    replaced = await aorc.write_dataset(pa.table({"k": ["a"], "v": [9]}), root,
                                        partition_cols=["k"],
                                        existing_data_behavior="delete_matching")
    result = await aorc.read_dataset(root, filters=[("k", "==", "a")])
    assert result.column("v").to_pylist() == [9]
    assert os.listdir(root / "k=a") == [Path(replaced[0]).name]
    assert await (await aorc.open_dataset(root)).count_rows() == 5
    many = await aorc.write_dataset(pa.table({"v": range(25)}), tmp_path / "flat",
                                    max_rows_per_file=10)
    assert [pa_orc.read_table(p).num_rows for p in many] == [10, 10, 5] or \
        sorted(pa_orc.read_table(p).num_rows for p in many) == [5, 10, 10]
    read_back = pads.dataset(str(tmp_path / "flat"), format="orc").to_table()
    assert sorted(read_back.column("v").to_pylist()) == list(range(25))
    with pytest.raises(aorc.SchemaError):
        await aorc.write_dataset(table, root, partition_cols=["nope"])
    with pytest.raises(aorc.SchemaError):
        await aorc.write_dataset(table, root, basename_template="no-index.orc")


async def test_write_dataset_failure_leaves_no_file(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The third file's write fails: the two completed files are deleted, nothing partial
    is visible."""
    import aorc.dataset.write as wd

    calls = {"n": 0}
    original = wd.open_writer

    def failing(uri: str, schema: pa.Schema, **kw: Any) -> Any:
        calls["n"] += 1
        if calls["n"] == 3:
            raise aorc.StoreError(f"{uri}: injected failure")
        return original(uri, schema, **kw)

    monkeypatch.setattr(wd, "open_writer", failing)
    table = pa.table({"k": [1, 2, 3, 4], "v": [1, 2, 3, 4]})
    with pytest.raises(aorc.StoreError, match="injected"):
        await aorc.write_dataset(table, tmp_path / "out", partition_cols=["k"],
                                 max_concurrency=1)
    assert calls["n"] == 3
    left = [f for _, _, files in os.walk(tmp_path / "out") for f in files]
    assert left == []


async def test_s3_listing_paginates_and_write_dataset(s3_client: Any, s3_bucket: str,
                                                     s3_proxy: Any) -> None:
    options = {"endpoint_url": s3_proxy.url}
    for i in range(1001):
        s3_client.put_object(Bucket=s3_bucket, Key=f"many/x{i:04d}", Body=b"1")
    s3_client.put_object(Bucket=s3_bucket, Key="many/_SUCCESS", Body=b"")
    s3_proxy.log.clear()
    stats = aorc.IOStats()
    found = await registry.list_files(f"s3://{s3_bucket}/many", options, stats)
    assert len(found) == 1001 and all(f.size == 1 for f in found)
    assert stats.requests == 2
    assert [r.operation for r in s3_proxy.log] == ["GET bucket", "GET bucket"]
    table = pa.table({"k": [1, 1, 2], "v": ["a", "b", "c"]})
    written = await aorc.write_dataset(table, f"s3://{s3_bucket}/ds", partition_cols=["k"],
                                       storage_options=options)
    assert all(w.startswith(f"s3://{s3_bucket}/ds/k=") for w in written)
    back = await aorc.read_dataset(f"s3://{s3_bucket}/ds/", storage_options=options)
    assert sorted(back.to_pylist(), key=lambda r: r["v"]) == [
        {"v": "a", "k": 1}, {"v": "b", "k": 1}, {"v": "c", "k": 2}]
    await aorc.write_dataset(pa.table({"k": [1], "v": ["z"]}), f"s3://{s3_bucket}/ds",
                             partition_cols=["k"], storage_options=options,
                             existing_data_behavior="delete_matching")
    back = await aorc.read_table(f"s3://{s3_bucket}/ds", storage_options=options)
    assert sorted(back.column("v").to_pylist()) == ["c", "z"]


async def test_memory_scheme_round_trip() -> None:
    written = await aorc.write_dataset(pa.table({"k": [1, 2], "v": [3, 4]}), "memory://mem/ds",
                                       partition_cols=["k"])
    assert written[0].startswith("memory://mem/ds/k=1/")
    table = await aorc.read_dataset("memory://mem/ds")
    assert table.to_pylist() == [{"v": 3, "k": 1}, {"v": 4, "k": 2}]
    for path in written:
        await registry.delete(path)


async def test_write_dataset_failure_names_files_it_could_not_delete(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import aorc.dataset.write as wd

    calls = {"writes": 0, "deletes": 0}
    original = wd.open_writer

    def failing(uri: str, schema: pa.Schema, **kw: Any) -> Any:
        calls["writes"] += 1
        if calls["writes"] == 2:
            raise aorc.StoreError(f"{uri}: injected failure")
        return original(uri, schema, **kw)

    async def cannot_delete(url: str, storage_options: Any = None) -> None:
        calls["deletes"] += 1
        raise aorc.AccessDeniedError(f"{url}: injected denial")

    monkeypatch.setattr(wd, "open_writer", failing)
    monkeypatch.setattr(wd.registry, "delete", cannot_delete)
    with pytest.raises(aorc.StoreError, match="injected failure") as info:
        await aorc.write_dataset(pa.table({"k": [1, 2], "v": [1, 2]}), tmp_path / "out",
                                 partition_cols=["k"], max_concurrency=1)
    assert calls == {"writes": 2, "deletes": 1}
    notes = " ".join(getattr(info.value, "__notes__", []))
    assert "could not delete" in notes and "k=1" in notes


async def test_iter_batches_skips_invalid_files_when_asked(tmp_path: Path) -> None:
    put(tmp_path / "a.orc", pa.table({"x": [1, 2]}))
    (tmp_path / "b.orc").write_bytes(b"not orc" * 40)
    schema = pa.schema([("x", pa.int64())])
    ds = await aorc.open_dataset(tmp_path, schema=schema, exclude_invalid_files=True)
    assert sum(b.num_rows for b in [b async for b in ds.iter_batches()]) == 2
    strict = await aorc.open_dataset(tmp_path, schema=schema)
    with pytest.raises(aorc.CorruptFileError, match="b.orc"):
        [b async for b in strict.iter_batches()]


async def test_partition_filter_keeps_columns_of_pruned_files(tmp_path: Path) -> None:
    """``schema_from="all"``, as Spark's mergeSchema (schema from every footer, then the
    filter): a column found only in a pruned partition's file reads as nulls, as
    open_dataset(...).read(...) returns; the default (``"read"``) leaves it out."""
    put(tmp_path / "k=1" / "a.orc", pa.table({"id": pa.array([1, 2], pa.int64())}))
    put(tmp_path / "k=2" / "b.orc", pa.table({"id": pa.array([3], pa.int64()),
                                              "extra": ["e"]}))
    filters = [("k", "==", 1)]
    got = await aorc.read_dataset(tmp_path, filters=filters, schema_from="all")
    assert got.schema == pa.schema([("id", pa.int64()), ("extra", pa.string()),
                                    ("k", pa.int32())])
    assert got.to_pylist() == [{"id": 1, "extra": None, "k": 1},
                               {"id": 2, "extra": None, "k": 1}]
    assert got.equals(await (await aorc.open_dataset(tmp_path)).read(filters=filters))
    for only_read in (await aorc.read_dataset(tmp_path, filters=filters),
                      await aorc.read_table(tmp_path, filters=filters)):
        assert only_read.to_pylist() == [{"id": 1, "k": 1}, {"id": 2, "k": 1}]
    with pytest.raises(aorc.SchemaError, match="schema_from"):
        await aorc.read_dataset(tmp_path, schema_from="some")


async def test_pruned_files_cost_their_tail_only(s3_client: Any, s3_bucket: str,
                                                 s3_proxy: Any) -> None:
    """On S3: a pruned file is read for its schema with one tail request (never its data);
    by default (``schema_from="read"``) it gets no request at all."""
    import io as _io

    def upload(key: str, table: pa.Table) -> bytes:
        out = _io.BytesIO()
        pa_orc.write_table(table, out)
        s3_client.put_object(Bucket=s3_bucket, Key=key, Body=out.getvalue())
        return out.getvalue()

    rows = 40_000  # larger than one tail read (16 KiB)
    upload("ds/k=1/a.orc", pa.table({"id": pa.array(range(rows), pa.int64())}))
    pruned = upload("ds/k=2/b.orc", pa.table({"id": pa.array(range(rows), pa.int64()),
                                              "extra": [str(i) for i in range(rows)]}))
    assert len(pruned) > 16 * 1024
    options = {"endpoint_url": s3_proxy.url}
    for schema_from, pruned_gets in (("all", 1), ("read", 0)):
        s3_proxy.log.clear()
        got = await aorc.read_dataset(f"s3://{s3_bucket}/ds", filters=[("k", "==", 1)],
                                      storage_options=options, schema_from=schema_from)
        assert got.num_rows == rows and ("extra" in got.column_names) == (schema_from == "all")
        gets = [r for r in s3_proxy.log if r.operation == "GetObject"]
        assert sum("k%3D2" in r.target or "k=2" in r.target for r in gets) == pruned_gets
        assert all(r.headers["range"].startswith("bytes=-") for r in gets
                   if "k%3D2" in r.target or "k=2" in r.target)


async def test_s3_reads_are_pinned_to_the_version_of_the_tail(s3_client: Any, s3_bucket: str,
                                                              s3_proxy: Any) -> None:
    """A dataset reads each file's data at the ETag its tail came from: every GET after the
    tail carries ``If-Match``, and a file replaced between ``open_dataset`` (which keeps the
    tails) and a read fails with ObjectChangedError instead of being decoded under the old
    tail. Files are above the 4 MiB that are read whole with their tail."""
    import io as _io

    from aorc.dataset.discovery import SMALL_FILE_BYTES

    def orc_bytes(seed: int) -> bytes:
        rng = np.random.default_rng(seed)
        out = _io.BytesIO()
        pa_orc.write_table(pa.table({"v": rng.integers(0, 1 << 62, 700_000)}), out,
                           compression="uncompressed")
        assert out.tell() > SMALL_FILE_BYTES
        return out.getvalue()

    options = {"endpoint_url": s3_proxy.url}
    s3_client.put_object(Bucket=s3_bucket, Key="pin/k=1/a.orc", Body=orc_bytes(1))
    etag = s3_client.head_object(Bucket=s3_bucket, Key="pin/k=1/a.orc")["ETag"]

    s3_proxy.log.clear()
    got = await aorc.read_dataset(f"s3://{s3_bucket}/pin", storage_options=options)
    assert got.num_rows == 700_000
    gets = [r for r in s3_proxy.log if r.operation == "GetObject"]
    tails = [r for r in gets if r.headers["range"].startswith("bytes=-")]
    data = [r for r in gets if not r.headers["range"].startswith("bytes=-")]
    assert len(tails) == 1 and data
    assert all(r.headers.get("if-match") == etag for r in data), [r.headers for r in data]

    dataset = await aorc.open_dataset(f"s3://{s3_bucket}/pin", storage_options=options)
    s3_client.put_object(Bucket=s3_bucket, Key="pin/k=1/a.orc", Body=orc_bytes(2))
    assert s3_client.head_object(Bucket=s3_bucket, Key="pin/k=1/a.orc")["ETag"] != etag
    with pytest.raises(aorc.ObjectChangedError):
        await dataset.read()


@pytest.mark.parametrize(("folders", "given", "text", "typed"), [
    (["2024-01-01", "2024-01-02", "2024-02-01"], None, "2024-01-02", datetime.date(2024, 1, 2)),
    (["2024-01-01 10%3A00%3A00", "2024-01-01 11%3A00%3A00"], None, "2024-01-01 11:00:00",
     datetime.datetime(2024, 1, 1, 11)),
    (["9223372036854775808", "9223372036854775809"], None, "9223372036854775809",
     decimal.Decimal(9223372036854775809)),
    (["1", "2", "30"], None, "2", 2),
    # a given type: texts Spark's grammar does not take are cast by Arrow, as the folders are
    (["1", "2", "30"], pa.schema([("k", pa.int16())]), "2", 2),
    (["2024-01-01", "2024-01-02"], pa.schema([("k", pa.timestamp("ms"))]), "2024-01-02",
     datetime.datetime(2024, 1, 2)),
])
async def test_text_filter_values_on_typed_partition_columns(
        tmp_path: Path, folders: list[str], given: pa.Schema | None, text: str,
        typed: Any) -> None:
    """A text filter value on a typed partition column means what the folder's text means:
    each op selects the same files with the text as with the typed value (a user's
    ``("dt", "==", "2024-01-01")`` on a date column, a JSON filter)."""
    for i, folder in enumerate(folders):
        put(tmp_path / f"k={folder}" / "a.orc", pa.table({"v": [i]}))
    schema = None if given is None else pa.schema([("v", pa.int64()), *given])

    async def rows(value: Any, op: str) -> list[int]:
        got = await aorc.read_dataset(tmp_path, filters=[("k", op, value)], schema=schema)
        return sorted(got.column("v").to_pylist())

    for op in ("==", "!=", "<", ">=", "in"):
        value_text, value_typed = ([text], [typed]) if op == "in" else (text, typed)
        assert await rows(value_text, op) == await rows(value_typed, op), op
    assert await rows(text, "==") == [folders.index(next(
        f for f in folders if f.replace("%3A", ":") == text))]
    with pytest.raises(aorc.SchemaError, match="partition columns"):
        await rows("not a value", "==")
