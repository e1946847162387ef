"""``columns=`` returns columns in the order asked for, as pyarrow.parquet does (issue 13,
item 2): read_table, OrcReader.read, iter_batches (filtered or not) and the CLI."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import aorc
from aorc.cli.main import main

TABLE = pa.table({"id": [1, 2, 3], "name": ["a", "b", "c"], "score": [0.5, 1.5, 2.5],
                  "address": [{"city": "x", "zip": "1"}] * 3})
ORDERS = [["score", "id", "name"], ["name", "address.city", "id"], ["address", "score"],
          ["id", "score"], ["score", "score", "id"]]


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    orc, parquet = tmp_path / "t.orc", tmp_path / "t.parquet"
    pq.write_table(TABLE, parquet)
    import asyncio
    asyncio.run(aorc.write_table(TABLE, orc))
    return orc, parquet


def parquet_names(parquet: Path, columns: list[str]) -> list[str]:
    """The peer's order; a dotted path gives its top-level struct in aorc (pyarrow.parquet
    names the leaf instead), so the comparison is by top-level column."""
    tops = [c.split(".")[0] for c in columns]
    return list(dict.fromkeys(pq.read_table(parquet, columns=tops).schema.names))


@pytest.mark.parametrize("columns", ORDERS)
async def test_order_as_asked(files: tuple[Path, Path], columns: list[str]) -> None:
    orc, parquet = files
    expected = parquet_names(parquet, columns)
    table = await aorc.read_table(orc, columns=columns)
    assert table.schema.names == expected
    filtered = await aorc.read_table(orc, columns=columns, filters=[("id", ">=", 2)])
    assert filtered.schema.names == expected and filtered.num_rows == 2
    async with aorc.open_reader(orc) as reader:
        assert (await reader.read(columns)).schema.names == expected
        empty = await reader.read(columns, filters=[("id", ">", 99)])
        assert empty.schema.names == expected and empty.num_rows == 0
        for filters in (None, [("id", "<", 3)]):
            batches = [b async for b in reader.iter_batches(columns, filters=filters)]
            assert batches and all(b.schema.names == expected for b in batches)


def test_cli_columns_order(files: tuple[Path, Path]) -> None:
    orc, _ = files
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["head", str(orc), "--columns", "score,id"]) == 0
    first = json.loads(out.getvalue().splitlines()[0])
    assert list(first) == ["score", "id"]
