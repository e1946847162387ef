"""``filters=`` as a pyarrow.compute.Expression (issue 13, item 3) and filter mistakes
(item 4). Rows are judged by pyarrow.dataset reading the same ORC file with the same
expression; pruning by comparing with the equivalent list filters."""

from __future__ import annotations

import asyncio
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pytest

import aorc
from aorc.filters.expression import split_expression

ROWS = 20_000


@pytest.fixture(scope="module")
def sorted_file(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, pa.Table]:
    rng = np.random.default_rng(13)
    key = np.arange(ROWS)
    table = pa.table({
        "key": key,
        "amount": pa.array(rng.normal(100, 30, ROWS), mask=rng.random(ROWS) < 0.05),
        "name": pa.array([f"n{i % 37}" for i in key]),
        "address": pa.array([{"city": ["Oslo", "Rome", "Lima"][i % 3], "zip": i % 100}
                             for i in key]),
    })
    path = tmp_path_factory.mktemp("expr") / "sorted.orc"
    asyncio.run(aorc.write_table(table, path, row_index_stride=1000, stripe_size=64 * 1024))
    return path, table


EXPRESSIONS = [
    pc.field("key") < 1500,
    (pc.field("key") >= 3000) & (pc.field("amount") > 100),
    (pc.field("key") < 100) | (pc.field("key") > 19_900),
    pc.field("key").isin([5, 7000, 19_999]),
    ~(pc.field("key") >= 200),
    pc.field("amount").is_null() & (pc.field("key") < 5000),
    ~pc.field("amount").is_valid(),
    (pc.field("address", "city") == "Rome") & (pc.field("key") < 900),
    pc.utf8_length(pc.field("name")) == 3,  # no ORC predicate: rows only
    (pc.field("key") * 2 < 50) | (pc.field("name") == "n3"),
    (pc.field("key") < 2000) & pc.starts_with(pc.field("name"), "n1"),
    pc.field("amount") > pc.field("key"),  # two columns: rows only
    pa.scalar(10) > pc.field("key"),  # literal first
]


@pytest.mark.parametrize("expression", EXPRESSIONS, ids=str)
async def test_rows_match_pyarrow_dataset(sorted_file: tuple[Path, pa.Table],
                                          expression: pc.Expression) -> None:
    path, _ = sorted_file
    expected = ds.dataset(path, format="orc").to_table(filter=expression)
    got = await aorc.read_table(path, filters=expression)
    assert got.num_rows == expected.num_rows
    assert got.equals(expected.select(got.schema.names).cast(got.schema))
    some = await aorc.read_table(path, columns=["name"], filters=expression)
    assert some.column("name").equals(expected.column("name"))
    async with aorc.open_reader(path) as reader:
        batches = [b async for b in reader.iter_batches(["key"], batch_size=333,
                                                        filters=expression)]
    assert sum(b.num_rows for b in batches) == expected.num_rows


@pytest.mark.parametrize(("expression", "filters"), [
    ((pc.field("key") < 1500) & (pc.utf8_length(pc.field("name")) == 3),
     [("key", "<", 1500)]),
    ((pc.field("key") < 100) | (pc.field("key") > 19_900),
     [[("key", "<", 100)], [("key", ">", 19_900)]]),
    (pc.field("key").isin([5, 7000]) & (pc.field("amount") * 0 == 0), [("key", "in", [5, 7000])]),
    (~(pc.field("key") >= 200), [("key", "<", 200)]),
])
async def test_pruning_as_list_filters(sorted_file: tuple[Path, pa.Table],
                                       expression: pc.Expression, filters: list) -> None:
    path, _ = sorted_file
    async with aorc.open_reader(path) as reader:
        await reader.read(["key"], filters=expression)
        by_expression = reader.scan_stats
    async with aorc.open_reader(path) as reader:
        await reader.read(["key"], filters=filters)
        by_list = reader.scan_stats
    assert by_expression.stripes_pruned_by_stats + by_expression.row_groups_pruned_by_stats > 0
    for name in ("stripes_total", "stripes_pruned_by_stats", "row_groups_pruned_by_stats",
                 "row_groups_read", "rows_read"):
        assert getattr(by_expression, name) == getattr(by_list, name), name


def test_unprunable_parts_are_not_guessed() -> None:
    parts = split_expression((pc.field("a") + 1 > 3) | (pc.field("b") == 1))
    assert parts.implied is None and parts.names == ("a", "b")
    parts = split_expression(~pc.field("a").isin([1]) & (pc.field("b") != 2))
    assert parts.implied is not None and [leaf[:2] for leaf in parts.implied[0]] == [("b", "!=")]


async def test_expression_unknown_column(sorted_file: tuple[Path, pa.Table]) -> None:
    path, _ = sorted_file
    with pytest.raises(aorc.SchemaError, match=r"'contry'.*key, amount, name, address"):
        await aorc.read_table(path, filters=pc.field("contry") == "NO")


# --------------------------------------------------------------------------- mistakes

@pytest.mark.parametrize(("op", "hint"), [("==", "is null"), ("!=", "is not null"),
                                          ("<", "is null")])
async def test_comparison_with_none(sorted_file: tuple[Path, pa.Table], op: str,
                                    hint: str) -> None:
    path, _ = sorted_file
    with pytest.raises(aorc.SchemaError, match=f"'amount', '{hint}'"):
        await aorc.read_table(path, filters=[("amount", op, None)])
    nulls = await aorc.read_table(path, filters=[("amount", hint)])
    assert nulls.num_rows > 0


async def test_unknown_filter_column_lists_columns(sorted_file: tuple[Path, pa.Table]) -> None:
    path, _ = sorted_file
    with pytest.raises(aorc.SchemaError,
                       match=r"'contry'.*key, amount, name, address, address\.city"):
        await aorc.read_table(path, filters=[("contry", "==", "NO")])


async def test_spark_planning_takes_expressions(tmp_path: Path) -> None:
    """aorc.spark's planner (the part without a JVM) prunes and filters with expressions."""
    spark_module = pytest.importorskip("aorc.spark")
    reader = pytest.importorskip("aorc.spark.reader")
    parts = []
    for day in (1, 2):
        table = pa.table({"id": np.arange(day * 10_000, day * 10_000 + 10_000),
                          "v": np.arange(10_000) % 7})
        folder = tmp_path / f"dt={day}"
        await aorc.write_table(table, folder / "part.orc", stripe_size=32 * 1024,
                               row_index_stride=1000)
        parts.append(table)
    expression = (pc.field("id") < 10_500) & (pc.field("v") * 2 == 4)
    schema, splits = await spark_module.plan_read(str(tmp_path), filters=expression,
                                                  split_bytes=1)
    _, everything = await spark_module.plan_read(str(tmp_path), split_bytes=1)
    assert 0 < len(splits) < len(everything)  # stripes pruned by the implied id < 10500
    rows = []
    for split in splits:
        rows += [b async for b in reader.read_split(split, None, schema, None)]
    got = pa.Table.from_batches(rows).column("id").to_pylist()
    expected = pa.concat_tables(parts).filter(expression).column("id").to_pylist()
    assert sorted(got) == expected
    with pytest.raises(aorc.SchemaError, match="partition columns"):
        await spark_module.plan_read(str(tmp_path), filters=pc.field("dt") == 1)
