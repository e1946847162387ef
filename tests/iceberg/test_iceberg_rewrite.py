"""aorc.iceberg.rewrite_files: small files merged per partition and swapped in by one snapshot
-- by stripe copy (metrics merged, equal to those recomputed from the rows) or by re-encoding
(files that disagree, delete files); every row is read the same before and after by pyiceberg
and aorc; a concurrent deletion of an input fails the rewrite and leaves no new file."""

from __future__ import annotations

import asyncio
import pathlib
from typing import Any

import pyarrow as pa
import pytest
from helpers.iceberg import (
    commit_delete_files,
    core_schema,
    decode_bound,
    delete_file,
    python_bound,
    recompute_metrics,
    rows,
    table_data,
)
from pyiceberg.exceptions import ValidationException  # noqa: I001
from pyiceberg.manifest import DataFileContent, FileFormat
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import index_by_id
from pyiceberg.transforms import IdentityTransform
from pyiceberg.types import StringType

import aorc
import aorc.iceberg
from aorc.iceberg.config import store_path

SPEC = PartitionSpec(PartitionField(10, 1000, IdentityTransform(), "s"))


def files_of(table: Any) -> list[Any]:
    return [t.file for t in table.scan().plan_files()]


def test_stripe_copy_keeps_every_row_and_merges_metrics(catalog: Any) -> None:
    table = catalog.create_table("db.t", core_schema(), partition_spec=SPEC)
    parts = [table_data(core_schema(), 400, seed=k) for k in range(4)]
    for p in parts:
        asyncio.run(aorc.iceberg.append(table, p))
    before = table.scan().to_arrow()
    small = len(files_of(table))
    partitions = len({v for p in parts for v in p.column("s").to_pylist()})  # (null too)
    result = asyncio.run(aorc.iceberg.rewrite_files(table, target_size=64 << 20))
    assert result.snapshot is not None and result.re_encoded == 0
    assert result.stripe_copied == result.added == partitions
    assert result.rewritten == small == 4 * partitions
    assert result.snapshot.summary["aorc.rewrite"] == "true"
    after = files_of(table)
    assert len(after) == partitions
    assert rows(table.scan().to_arrow(), "l", null_maps_empty=True) == \
        rows(before, "l", null_maps_empty=True)
    everything = pa.concat_tables(parts)
    assert rows(asyncio.run(aorc.iceberg.read_table(table)), "l") == rows(everything, "l")
    schema = table.schema()
    types = {fid: f.field_type for fid, f in index_by_id(schema).items()}
    for f in after:  # merged metrics = the rows' own
        [value] = {v for v in f.partition}
        mine = everything.filter(pa.compute.equal(everything.column("s"), value)) \
            if value is not None else everything.filter(everything.column("s").is_null())
        want = recompute_metrics(schema, mine)
        assert dict(f.value_counts) == want["value_counts"]
        assert dict(f.null_value_counts) == want["null_value_counts"]
        assert dict(f.nan_value_counts) == want["nan_value_counts"]
        got = {k: decode_bound(types[k], v) for k, v in f.lower_bounds.items()}
        assert got == {k: python_bound(types[k], v)
                       for k, v in want["lower_bounds"].items()}
        with aorc.sync.open_reader(store_path(f.file_path)) as reader:
            assert f.split_offsets == [s.offset for s in reader.stripes]
            assert reader.num_rows == f.record_count


def test_re_encodes_where_files_disagree_or_deletes_apply(catalog: Any,
                                                          tmp_path: pathlib.Path) -> None:
    table = catalog.create_table("db.t", core_schema())
    asyncio.run(aorc.iceberg.append(table, table_data(core_schema(), 300, seed=1)))
    asyncio.run(aorc.iceberg.append(table, table_data(core_schema(), 300, seed=2),
                                    compression="snappy"))  # another codec
    result = asyncio.run(aorc.iceberg.rewrite_files(table, target_size=64 << 20))
    assert (result.re_encoded, result.stripe_copied, result.rewritten) == (1, 0, 2)
    assert "codec" in result.reasons[0]
    with table.update_schema() as u:  # evolve, then delete rows of the next files
        u.add_column("extra", StringType())
    asyncio.run(aorc.iceberg.append(table, table_data(core_schema(), 100, seed=3)))
    f = max(files_of(table), key=lambda d: d.record_count)
    path = tmp_path / "pos.parquet"
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"file_path": [f.file_path] * 10, "pos": list(range(10))},
                            schema=pa.schema([
                                pa.field("file_path", pa.string(), False,
                                         {b"PARQUET:field_id": b"2147483546"}),
                                pa.field("pos", pa.int64(), False,
                                         {b"PARQUET:field_id": b"2147483545"})])), path)
    commit_delete_files(table, [delete_file(table, f"file://{path}",
                                            DataFileContent.POSITION_DELETES, 10,
                                            path.stat().st_size, FileFormat.PARQUET,
                                            f.partition)])
    before = asyncio.run(aorc.iceberg.read_table(table))
    assert before.num_rows == 690
    result = asyncio.run(aorc.iceberg.rewrite_files(table, target_size=64 << 20))
    assert result.re_encoded == 1 and "delete files apply" in result.reasons[0]
    after = asyncio.run(aorc.iceberg.read_table(table))
    assert rows(after, "l") == rows(before, "l")
    assert rows(table.scan().to_arrow(), "l", null_maps_empty=True) == \
        rows(before, "l", null_maps_empty=True)


def test_concurrent_delete_fails_the_rewrite(catalog: Any, tmp_path: pathlib.Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Another writer removes an input between the plan and the commit: pyiceberg's
    validation refuses the swap, and the file the rewrite wrote is deleted."""
    from aorc.iceberg import rewrite

    table = catalog.create_table("db.t", core_schema())
    for seed in (1, 2):
        asyncio.run(aorc.iceberg.append(table, table_data(core_schema(), 100, seed=seed)))
    other = catalog.load_table("db.t")
    written: list[str] = []
    original = rewrite._stripe_copy

    async def copy_then_delete(table_: Any, bin_: Any, path: str, store: Any) -> Any:
        out = await original(table_, bin_, path, store)
        written.append(path)
        victim = bin_[0].file
        with other.transaction() as tx, \
                tx.update_snapshot().overwrite() as overwrite:
            overwrite.delete_data_file(victim)
        return out

    monkeypatch.setattr(rewrite, "_stripe_copy", copy_then_delete)
    with pytest.raises(ValidationException):
        asyncio.run(aorc.iceberg.rewrite_files(table, target_size=64 << 20))
    assert written and not pathlib.Path(written[0].removeprefix("file://")).exists()
    table.refresh()
    assert asyncio.run(aorc.iceberg.read_table(table)).num_rows == 100
