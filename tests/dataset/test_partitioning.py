"""Hive partition folders without Spark: the types inferred from folder values (Spark's rules,
checked against Spark 4.3's ``spark.read.orc`` on the same folders when these cases were
written; tests/spark/test_spark_partitions.py checks them live), their values, and the
folders' parsing below a root."""

from __future__ import annotations

import datetime
import decimal
import math
import os

import pyarrow as pa
import pytest

from aorc.dataset.partitioning import (
    PARTITION_TIMESTAMP,
    infer_partition_schema,
    normalize_filters,
    partition_table,
    partition_value,
    partition_values,
)
from aorc.errors import SchemaError

#: folder values (unescaped; None for __HIVE_DEFAULT_PARTITION__) -> (type, values)
CASES: dict[str, tuple[list[str | None], pa.DataType, list[object]]] = {
    "int": (["1", "-2", "007", "+5"], pa.int32(), [1, -2, 7, 5]),
    "long": (["1", "3000000000"], pa.int64(), [1, 3000000000]),
    "beyond long": (["1", "9223372036854775808"], pa.decimal128(19, 0),
                    [decimal.Decimal(1), decimal.Decimal(9223372036854775808)]),
    "exponent": (["1e5"], pa.decimal128(6, 0), [decimal.Decimal(100000)]),
    "40 digits": (["1" * 40], pa.float64(), [float("1" * 40)]),
    "double": (["1.5", "2"], pa.float64(), [1.5, 2.0]),
    "java doubles": (["Infinity", "1f", "2d", "0x1p3", " 1"], pa.float64(),
                     [math.inf, 1.0, 2.0, 8.0, 1.0]),
    "double and long": (["1.5", "3000000000"], pa.string(), ["1.5", "3000000000"]),
    "int and double": (["1", "2.5"], pa.float64(), [1.0, 2.5]),
    "int and decimal": (["1", "1e5"], pa.decimal128(10, 0),
                        [decimal.Decimal(1), decimal.Decimal(100000)]),
    "long and decimal": (["3000000000", "1e5"], pa.decimal128(20, 0),
                         [decimal.Decimal(3000000000), decimal.Decimal(100000)]),
    "date": (["2024-01-01", "2024-02-29"], pa.date32(),
             [datetime.date(2024, 1, 1), datetime.date(2024, 2, 29)]),
    "not a date": (["2024-02-30"], pa.string(), ["2024-02-30"]),
    "short date": (["2024-1-1"], pa.string(), ["2024-1-1"]),
    "timestamp": (["2024-01-01 10:00:00", "2024-01-01 10:00:00.5"], PARTITION_TIMESTAMP,
                  [datetime.datetime(2024, 1, 1, 10), datetime.datetime(2024, 1, 1, 10, 0, 0,
                                                                         500_000)]),
    "millis": (["2024-01-01 10:00:00.123"], pa.string(), ["2024-01-01 10:00:00.123"]),
    "iso T": (["2024-01-01T10:00:00"], pa.string(), ["2024-01-01T10:00:00"]),
    "date and timestamp": (["2024-01-01", "2024-01-02 10:00:00"], PARTITION_TIMESTAMP,
                           [datetime.datetime(2024, 1, 1), datetime.datetime(2024, 1, 2, 10)]),
    "int and date": (["1", "2024-01-01"], pa.string(), ["1", "2024-01-01"]),
    "int and string": (["1", "a"], pa.string(), ["1", "a"]),
    "booleans": (["true", "false"], pa.string(), ["true", "false"]),
    "python-only floats": (["inf", "nan", "1_0"], pa.string(), ["inf", "nan", "1_0"]),
    "null and int": ([None, "3"], pa.int32(), [None, 3]),
    "only nulls": ([None, None], pa.string(), [None, None]),
}


@pytest.mark.parametrize("name", list(CASES))
def test_inferred_types_and_values(name: str) -> None:
    texts, expected_type, expected = CASES[name]
    values = [{"k": t} for t in texts]
    paths = [f"f{i}" for i in range(len(texts))]
    schema = infer_partition_schema(values, paths)
    assert schema == pa.schema([("k", expected_type)])
    assert partition_table(values, schema, paths).column("k").to_pylist() == expected


def test_nan_is_a_double() -> None:
    values = [{"k": "NaN"}]
    schema = infer_partition_schema(values, ["f"])
    assert schema.field("k").type == pa.float64()
    assert math.isnan(partition_table(values, schema, ["f"]).column("k")[0].as_py())


def test_partition_value_rejects_what_spark_does_not_parse() -> None:
    assert partition_value("2024-01-01", PARTITION_TIMESTAMP) == datetime.datetime(2024, 1, 1)
    for text, t in (("1.5", pa.int32()), ("1.5", pa.decimal128(10, 0)), ("inf", pa.float64()),
                    ("2024-13-01", pa.date32()), ("x", PARTITION_TIMESTAMP)):
        with pytest.raises(ValueError):
            partition_value(text, t)


def test_given_types_still_take_what_arrow_casts() -> None:
    values = [{"ts": "2024-01-01T10:00:00.123456"}]  # not Spark's pattern: Arrow's cast
    given = pa.schema([("ts", pa.timestamp("us"))])
    schema = infer_partition_schema(values, ["f"], given)
    assert partition_table(values, schema, ["f"]).column("ts").to_pylist() == [
        datetime.datetime(2024, 1, 1, 10, 0, 0, 123456)]


def test_partition_values_below_a_root() -> None:
    root = "s3://b/data/"
    assert partition_values(root, "s3://b/data/a=1/b=x%3Dy/c=__HIVE_DEFAULT_PARTITION__/f.orc") \
        == {"a": "1", "b": "x=y", "c": None}
    assert list(partition_values(root, "s3://b/data/z=1/a=2/f.orc")) == ["z", "a"]  # order
    assert partition_values(root, "s3://b/data/f.orc") == {}
    assert partition_values("s3://b/data/f.orc", "s3://b/data/f.orc") == {}  # a file root
    assert partition_values("s3://b/dat", "s3://b/data/k=1/f.orc") == {}  # not below it
    assert partition_values(root, "s3://b/data/plain/k%2F1=v/f.orc") == {"k/1": "v"}
    local = os.path.join("/tmp", "root")
    assert partition_values(local, os.path.join(local, "k=1", "f.orc")) == {"k": "1"}


def test_normalize_filters_is_pyarrows_list_form() -> None:
    """One normaliser for datasets and aorc.spark: pyarrow's rule tells one conjunction
    from a list of them, so JSON's list terms are terms; ops in their canonical spelling."""
    assert normalize_filters(None) is None
    assert normalize_filters([["a", "==", 1]]) == [[("a", "==", 1)]]
    assert normalize_filters([("a", "=", 1), ("b", "IS NULL")]) == [
        [("a", "==", 1), ("b", "is null", None)]]
    assert normalize_filters([[("a", "not  in", [1])], [["b", "<", 2]]]) == [
        [("a", "not in", [1])], [("b", "<", 2)]]
    for bad in ([], "a", [("a", "~", 1)], [("a", "==")], [[]], [[("a", "==", 1)], "b"]):
        with pytest.raises(SchemaError):
            normalize_filters(bad)
