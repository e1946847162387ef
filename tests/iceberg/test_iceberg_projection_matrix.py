"""aorc.iceberg reads against pyiceberg's own scan for a generated matrix of filter columns and
selected columns (issue 31): filters on top-level and nested primitive columns, selected or
not; selections of primitives, structs (whole or by dotted name), lists and maps. Every read
gives pyiceberg's rows, and no pyiceberg exception reaches the user unwrapped."""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

import pyarrow as pa
import pytest
from helpers.iceberg import core_schema, rows, table_data
from pyiceberg.expressions import (
    BooleanExpression,
    EqualTo,
    GreaterThanOrEqual,
    IsNull,
    LessThan,
    NotNull,
)

import aorc.iceberg
from aorc.errors import AorcError, SchemaError

#: Filters (aorc's list form, and pyiceberg's expression of it), on columns of every depth.
FILTERS: dict[str, tuple[list[tuple[Any, ...]], BooleanExpression]] = {
    "l>=0": ([("l", ">=", 0)], GreaterThanOrEqual("l", 0)),
    "s==ab": ([("s", "==", "ab")], EqualTo("s", "ab")),
    "st.x<500": ([("st.x", "<", 500)], LessThan("st.x", 500)),
    "i is null": ([("i", "is null")], IsNull("i")),
    "dt not null": ([("dt", "is not null")], NotNull("dt")),
}
#: Single columns of every kind, and their pairs with a list, a map and a struct field.
SINGLES = ["l", "i", "s", "dt", "st", "st.x", "st.y", "lst", "mp"]
SELECTIONS = [[c] for c in SINGLES] + [
    list(p) for p in itertools.combinations(["lst", "mp", "st.y", "s"], 2)] + [
    ["lst", "mp", "st", "l"]]


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> Any:
    from helpers.iceberg_fixtures import local_catalog

    catalog = local_catalog(tmp_path_factory.mktemp("matrix"))
    table = catalog.create_table("db.matrix", core_schema())
    for seed in (11, 12):  # two data files
        asyncio.run(aorc.iceberg.append(table, table_data(table.schema(), 300, seed=seed)))
    return table


def _key(selection: list[str]) -> str | None:
    """A column to sort both results by, when the selection has a unique one."""
    return "l" if "l" in selection else None


@pytest.mark.parametrize("selection", SELECTIONS, ids=["+".join(s) for s in SELECTIONS])
@pytest.mark.parametrize("name", list(FILTERS))
def test_any_filter_with_any_selection_reads_what_pyiceberg_reads(
        table: Any, name: str, selection: list[str]) -> None:
    ours_filter, theirs_filter = FILTERS[name]
    theirs = table.scan(row_filter=theirs_filter, selected_fields=tuple(selection)).to_arrow()
    ours = asyncio.run(aorc.iceberg.read_table(table, filters=ours_filter, columns=selection))
    assert ours.schema.names == theirs.schema.names
    assert ours.num_rows == theirs.num_rows
    key = _key(selection)
    if key is not None:
        assert rows(ours, key, null_maps_empty=True) == rows(theirs, key, null_maps_empty=True)
    else:  # no unique key selected: the same rows as multisets
        ours_rows = sorted(map(repr, rows(ours, null_maps_empty=True)))
        theirs_rows = sorted(map(repr, rows(theirs, null_maps_empty=True)))
        assert ours_rows == theirs_rows


def test_the_matrix_covers_the_reported_case(table: Any) -> None:
    """The issue's case: a filter on a column not returned, with a list column returned."""
    theirs = table.scan(row_filter=EqualTo("s", "ab"), selected_fields=("l", "lst")).to_arrow()
    ours = asyncio.run(aorc.iceberg.read_table(table, filters=[("s", "==", "ab")],
                                               columns=["l", "lst"]))
    assert theirs.num_rows > 0
    assert rows(ours, "l") == rows(theirs, "l")


@pytest.mark.parametrize("kwargs", [
    {"columns": ["no_such_column"]},
    {"columns": ["st.nope"]},
    {"filters": [("no_such_column", "==", 1)]},
    {"filters": [("l", "==", "not a number")]},
], ids=["unknown column", "unknown nested", "unknown filter column", "bad literal"])
def test_bad_requests_are_aorc_errors(table: Any, kwargs: dict[str, Any]) -> None:
    with pytest.raises(AorcError) as caught:
        asyncio.run(aorc.iceberg.read_table(table, **kwargs))
    assert isinstance(caught.value, SchemaError), repr(caught.value)


def test_results_are_arrow_tables(table: Any) -> None:
    out = asyncio.run(aorc.iceberg.read_table(table, columns=["lst"], filters=[("l", ">", 0)]))
    assert isinstance(out, pa.Table) and out.schema.names == ["lst"]
