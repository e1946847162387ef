"""pyiceberg's own ``table.append``/``overwrite`` on a table with write.format.default=orc
writes ORC through aorc (import aorc.iceberg registers the FileFormatModel): pyiceberg's
scan returns what was appended, for every partition transform (pyiceberg-core computes
bucket and truncate); the partitions equal those pyiceberg computes for its own Parquet
files of the same rows."""

from __future__ import annotations

import pytest
from helpers.iceberg import core_schema, rows, table_data
from pyiceberg.io.fileformat import FileFormatFactory  # noqa: I001
from pyiceberg.manifest import FileFormat
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.transforms import (
    BucketTransform,
    DayTransform,
    HourTransform,
    IdentityTransform,
    MonthTransform,
    TruncateTransform,
    YearTransform,
)

import aorc
import aorc.iceberg
from aorc.iceberg.config import store_path

SPECS = {
    "unpartitioned": [],
    "identity": [(10, IdentityTransform(), "s")],
    "day": [(8, DayTransform(), "ts_day")],
    "hour_month": [(8, HourTransform(), "ts_hour"), (7, MonthTransform(), "dt_month")],
    "year": [(9, YearTransform(), "tz_year")],
    "bucket": [(3, BucketTransform(8), "l_bucket"), (10, BucketTransform(3), "s_bucket")],
    "truncate": [(10, TruncateTransform(2), "s_trunc"), (2, TruncateTransform(1000), "i_t")],
}


def _spec(name: str) -> PartitionSpec:
    return PartitionSpec(*[PartitionField(src, 1000 + k, tr, n)
                           for k, (src, tr, n) in enumerate(SPECS[name])])


def test_orc_model_is_registered() -> None:
    model = FileFormatFactory.get(FileFormat.ORC)
    assert isinstance(model, aorc.iceberg.OrcFormatModel)
    assert aorc.iceberg.register() is False  # (already registered: left in place)


@pytest.mark.parametrize("spec", list(SPECS))
def test_pyiceberg_append_writes_orc_through_aorc(catalog: object, spec: str) -> None:
    data = table_data(core_schema(), 700, seed=3)
    orc = catalog.create_table("db.orc", core_schema(), partition_spec=_spec(spec),  # type: ignore[attr-defined]
                               properties={"write.format.default": "orc"})
    parquet = catalog.create_table("db.parquet", core_schema(), partition_spec=_spec(spec))  # type: ignore[attr-defined]
    orc.append(data)
    parquet.append(data)
    files = [t.file for t in orc.scan().plan_files()]
    assert files and all(f.file_format == FileFormat.ORC and f.file_path.endswith(".orc")
                         for f in files)
    for f in files[:3]:  # written by aorc, with Iceberg ids
        with aorc.sync.open_reader(store_path(f.file_path)) as reader:
            assert reader.writer.code == 7
            assert dict(reader.orc_schema.children[0].attributes)["iceberg.id"] == "1"
            assert reader.num_rows == f.record_count
    got = orc.scan().to_arrow()
    # pyiceberg 0.12's own conversion turns null maps of structs into empty maps (see
    # helpers.iceberg.rows) before any writer, for its Parquet files too: ORC through aorc
    # equals Parquet through pyarrow, and the appended data on every other column
    assert rows(got, "l") == rows(parquet.scan().to_arrow(), "l")
    assert rows(got.drop_columns(["mp"]), "l") == rows(data.drop_columns(["mp"]), "l")
    partitions = sorted((str(f.partition), f.record_count) for f in files)
    oracle = sorted((str(t.file.partition), t.file.record_count)
                    for t in parquet.scan().plan_files())
    assert partitions == oracle


def test_pyiceberg_overwrite(catalog: object) -> None:
    table = catalog.create_table("db.t", core_schema(), partition_spec=_spec("day"),  # type: ignore[attr-defined]
                                 properties={"write.format.default": "orc"})
    table.append(table_data(core_schema(), 200, seed=1))
    second = table_data(core_schema(), 50, seed=2)
    table.overwrite(second)
    got = table.scan().to_arrow().drop_columns(["mp"])
    assert rows(got, "l") == rows(second.drop_columns(["mp"]), "l")
