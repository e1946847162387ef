"""Spark reads the widened unsigned and half-float columns aorc writes (issue 13, item 1)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

import aorc

pytestmark = [pytest.mark.spark]


def test_spark_reads_widened_columns(spark: Any, tmp_path: Path) -> None:
    table = pa.table({
        "u8": pa.array([0, 255, None], pa.uint8()),
        "u16": pa.array([0, 65535, 3], pa.uint16()),
        "u32": pa.array([0, 2**32 - 1, None], pa.uint32()),
        "u64": pa.array([0, 2**63 - 1, 9], pa.uint64()),
        "f16": pa.array(np.array([1.5, -65504.0, 0.0009765625], np.float16)),
    })
    path = tmp_path / "w.orc"
    asyncio.run(aorc.write_table(table, path))
    df = spark.read.orc(str(path))
    assert [(f.name, f.dataType.simpleString()) for f in df.schema.fields] == [
        ("u8", "smallint"), ("u16", "int"), ("u32", "bigint"), ("u64", "bigint"),
        ("f16", "float")]
    rows = [r.asDict() for r in df.collect()]
    assert rows == table.to_pylist()
