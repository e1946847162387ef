"""JSON lines made column-wise (``aorc.cli.jsonl``): every line parses to what ``json.dumps``
of the row dict gave (the former path, kept as the oracle here), for every type the random
tables hold, with nulls, escapes, non-ASCII text, non-finite floats, duplicate names and old
dates; floats keep being floats."""

from __future__ import annotations

import json
import math
from typing import Any

import pyarrow as pa
import pytest
from helpers.random_tables import random_table

from aorc.cli.jsonl import batch_jsonl as _jsonl
from aorc.cli.jsonl import jsonl_text
from aorc.cli.values import column_values as _column_values
from aorc.cli.values import json_default as _json_default


def _oracle(batch: pa.RecordBatch) -> list[Any]:
    """What the CLI printed before: ``json.dumps`` of each row's dict."""
    columns = [_column_values(batch.column(i)) for i in range(batch.num_columns)]
    rows = [dict(zip(batch.schema.names, row, strict=True)) for row in zip(*columns, strict=True)]
    return [json.loads(json.dumps(row, default=_json_default)) for row in rows]


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_every_type_matches_json_dumps_of_the_row(seed: int) -> None:
    table = random_table(seed, 500)
    for batch in table.to_batches(max_chunksize=200):
        text = _jsonl(batch)
        assert text.endswith("\n") and text.count("\n") == batch.num_rows
        got = [json.loads(line) for line in text.splitlines()]
        want = _oracle(batch)
        for g, w in zip(got, want, strict=True):
            assert _same(g, w), (g, w)


def test_strings_escapes_floats_and_names() -> None:
    batch = pa.RecordBatch.from_pydict({
        "s": ["plain", 'quote " and \\ slash', "tab\tnew\nline\x01", "é ü 漢 😀", None, ""],
        "f": [1.0, 0.1, 1e16, -2.5e-7, None, 3.0],
        "g": [float("nan"), 1.0, float("inf"), None, 2.0, -0.0],
        "b": [True, False, None, True, False, True],
        "d": pa.array([0, -719162, 2932896, None, 19000, 1], pa.date32()),
        "i": pa.array([2**63 - 1, -(2**63), 0, None, 7, -1], pa.int64()),
    })
    text = _jsonl(batch)
    got = [json.loads(line) for line in text.splitlines()]
    want = _oracle(batch)
    for g, w in zip(got, want, strict=True):
        assert _same(g, w), (g, w)
    assert all(isinstance(row["f"], float) for row in got if row["f"] is not None)
    assert text.isascii()  # non-ASCII escaped, as json.dumps does by default
    dup = jsonl_text([pa.array([1, 2]), pa.array([3, 4])], ["a", "a"], _column_values)
    assert dup == "".join(json.dumps(dict([("a", x), ("a", y)])) + "\n"
                          for x, y in [(1, 3), (2, 4)])
    assert jsonl_text([pa.array([], pa.int64())], ["a"], _column_values) == ""
