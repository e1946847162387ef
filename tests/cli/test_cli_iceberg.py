"""The CLI on Iceberg tables: meta, head, cat and count on iceberg://CATALOG/NAMESPACE.TABLE,
the catalog configured by pyiceberg's environment variables."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pyarrow as pa
import pytest
from helpers.cli import assert_one_line_error, run

pytest.importorskip("pyiceberg")

from pyiceberg.partitioning import PartitionField, PartitionSpec  # noqa: E402,I001
from pyiceberg.schema import Schema  # noqa: E402
from pyiceberg.transforms import IdentityTransform  # noqa: E402
from pyiceberg.types import DoubleType, LongType, NestedField, StringType  # noqa: E402

import aorc.iceberg  # noqa: E402


@pytest.fixture
def table(catalog: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    for key, value in catalog.properties.items():
        monkeypatch.setenv(f"PYICEBERG_CATALOG__AORC__{key.upper()}", value)
    monkeypatch.setenv("PYICEBERG_CATALOG__AORC__TYPE", "sql")
    schema = Schema(NestedField(1, "id", LongType()), NestedField(2, "region", StringType()),
                    NestedField(3, "amount", DoubleType()))
    t = catalog.create_table("db.sales", schema, partition_spec=PartitionSpec(
        PartitionField(2, 1000, IdentityTransform(), "region")))
    data = pa.table({"id": list(range(10)), "region": ["eu", "us"] * 5,
                     "amount": [float(i) for i in range(10)]})
    asyncio.run(aorc.iceberg.append(t, data, snapshot_properties={
        "aorc.offsets.events.0": "41"}))
    return t


def test_meta(table: Any) -> None:
    result = run("meta", "iceberg://aorc/db.sales")
    assert result.returncode == 0, result.stderr
    assert "table: db.sales" in result.stdout
    assert "partition spec: region=identity(2)" in result.stdout
    assert "1: id long" in result.stdout
    assert "stream positions (RollingSink): events.0=41" in result.stdout
    info = json.loads(run("meta", "iceberg://aorc/db.sales", "--json").stdout)
    assert info["current_snapshot"]["summary"]["total-records"] == "10"
    assert [f["name"] for f in info["schema"]] == ["id", "region", "amount"]


def test_head_cat_count(table: Any) -> None:
    head = run("head", "iceberg://aorc/db.sales", "-n", "3", "--filter", "region == us",
               "--columns", "id,amount")
    assert head.returncode == 0, head.stderr
    got = [json.loads(line) for line in head.stdout.splitlines()]
    assert len(got) == 3 and all(r["id"] % 2 == 1 and set(r) == {"id", "amount"} for r in got)
    cat = run("cat", "iceberg://aorc/db.sales", "--format", "csv", "--filter", "amount >= 8")
    assert sorted(cat.stdout.splitlines()) == sorted(['"id","region","amount"', '8,"eu",8',
                                                      '9,"us",9'])
    count = run("count", "iceberg://aorc/db.sales", "--filter", "region == eu")
    assert count.stdout.splitlines()[:2] == ["rows: 5", "files: 1"]
    assert run("count", "iceberg://aorc/db.sales").stdout.splitlines()[:2] == \
        ["rows: 10", "files: 2"]


def test_errors(table: Any) -> None:
    assert_one_line_error(run("meta", "iceberg://aorc/db.nope"), "no such table")
    assert_one_line_error(run("meta", "iceberg://other/db.sales"), "no Iceberg catalog 'other'")
    assert_one_line_error(run("head", "iceberg://aorc"), "iceberg://<catalog>/")
