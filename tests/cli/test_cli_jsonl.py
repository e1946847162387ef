"""JSON lines made column-wise (``aorc.cli.jsonl``): every line parses to what ``json.dumps``
of the row dict gave (the former path, kept as the oracle here), for every type the random
tables hold, with nulls, escapes, non-ASCII text, non-finite floats, duplicate names and old
dates; floats keep being floats."""

from __future__ import annotations

import decimal
import json
import math
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from helpers.random_tables import random_table
from hypothesis import given, settings
from hypothesis import strategies as st

from aorc.cli.jsonl import batch_jsonl as _jsonl
from aorc.cli.jsonl import jsonl_bytes, jsonl_text
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


# =========================================================================== the kernel

def _lines(arr: pa.Array, name: str = "v") -> list[str]:
    return jsonl_text([arr], [name], _column_values, _json_default).splitlines()


def _dumps(values: list[Any], name: str = "v") -> list[str]:
    """``json.dumps`` of each row, as the CLI always printed it (text, not only values)."""
    return [json.dumps({name: v}, default=_json_default) for v in values]


_ALPHABET = ([chr(c) for c in range(0x20)] + ['"', "\\", "/", "\x7f", "a", "Z", " ", "~",
             "é", "ß", "\x80", "\u07ff", "\u0800", "漢", "\ufffd", "\uffff", "\U00010000",
             "😀", "\U0010ffff"])


@pytest.mark.parametrize("seed", [11, 12, 13])
def test_string_escaping_is_json_dumps_exactly(seed: int) -> None:
    rng = np.random.default_rng(seed)
    texts: list[str | None] = []
    for _ in range(3000):
        if rng.random() < 0.05:
            texts.append(None)
            continue
        length = int(rng.integers(0, 24))
        texts.append("".join(_ALPHABET[int(i)] for i in rng.integers(0, len(_ALPHABET),
                                                                    length)))
    arr = pa.array(texts, pa.string())
    assert _lines(arr) == _dumps(texts)
    assert [json.loads(line)["v"] for line in _lines(arr)] == texts
    # a slice, large strings, and a clean column (copied without escaping)
    assert _lines(arr.slice(17, 900)) == _dumps(texts[17:917])
    assert _lines(arr.cast(pa.large_string())) == _dumps(texts)
    clean = [f"plain text {i}" for i in range(100)]
    assert _lines(pa.array(clean)) == _dumps(clean)


@settings(max_examples=300, derandomize=True, deadline=None)
@given(st.lists(st.one_of(st.none(), st.text()), max_size=30))
def test_any_text_round_trips(texts: list[str | None]) -> None:
    lines = _lines(pa.array(texts, pa.string())) if texts else []
    assert lines == _dumps(texts)
    assert [json.loads(line)["v"] for line in lines] == texts


def test_invalid_utf8_is_an_error() -> None:
    data = pa.py_buffer(b"ok\xff\xfe")
    offsets = pa.py_buffer(np.array([0, 2, 4], np.int32).tobytes())
    arr = pa.Array.from_buffers(pa.string(), 2, [None, offsets, data])
    with pytest.raises(ValueError, match="UTF-8"):
        jsonl_bytes([arr], ["v"], _column_values)


@pytest.mark.parametrize("kind", [pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint8(),
                                  pa.uint16(), pa.uint32(), pa.uint64()])
def test_integers_at_their_limits(kind: pa.DataType) -> None:
    info = np.iinfo(kind.to_pandas_dtype())
    values = [int(info.min), int(info.max), 0, None, 1, -1 if info.min < 0 else 2, 10, 99]
    assert _lines(pa.array(values, kind)) == _dumps(values)


@pytest.mark.parametrize("scale", [0, 1, 2, 4, 6, 7, 10])
def test_decimals_are_str_of_decimal(scale: int) -> None:
    rng = np.random.default_rng(scale)
    raw = [int(v) for v in rng.integers(-(10**18), 10**18, 300)]
    raw += [0, 1, -1, 10**37 + 12345, -(10**37) - 1, 2**64 + 1, -(2**64), 2**63, -(2**63)]
    exact = decimal.Context(prec=60)
    values = [decimal.Decimal(v).scaleb(-scale, exact) for v in raw] + [None]
    arr = pa.array(values, pa.decimal128(38, scale))
    assert arr.to_pylist() == values
    assert _lines(arr) == _dumps(values)
    assert _lines(arr.slice(3, 50)) == _dumps(values[3:53])
    assert _lines(arr.cast(pa.decimal256(40, scale))) == _dumps(values)


@pytest.mark.parametrize("unit", ["s", "ms", "us", "ns"])
@pytest.mark.parametrize("tz", [None, "UTC"])
def test_timestamps_are_isoformat(unit: str, tz: str | None) -> None:
    rng = np.random.default_rng(len(unit))
    per_second = {"s": 1, "ms": 10**3, "us": 10**6, "ns": 10**9}[unit]
    low, high = (-62135596800, 253402300799) if unit != "ns" else (-9 * 10**9, 9 * 10**9)
    ticks = list(rng.integers(low, high, 500) * per_second + rng.integers(0, per_second, 500))
    ticks += [0, -1, 1, low * per_second, high * per_second + per_second - 1]
    arr = pa.array([int(t) for t in ticks] + [None], pa.timestamp(unit, tz))
    assert _lines(arr) == [json.dumps({"v": v}) for v in _column_values(arr)]
    want = [None if v is None else v.isoformat() for v in arr.to_pylist()]
    if unit != "ns":
        assert [json.loads(line)["v"] for line in _lines(arr)] == want


def test_out_of_range_timestamps_fall_back() -> None:
    arr = pa.array([-62135596801, 0], pa.timestamp("s"))  # year 0: Python's path
    assert _lines(arr) == [json.dumps({"v": v}) for v in _column_values(arr)]


def test_booleans_floats_and_nulls_match_polars() -> None:
    pl = pytest.importorskip("polars")
    rng = np.random.default_rng(5)
    n = 2000
    valid = rng.random(n) > 0.2
    batch = pa.RecordBatch.from_pydict({
        "i": pa.array(rng.integers(-(2**62), 2**62, n), mask=~valid),
        "b": pa.array(rng.random(n) < 0.5, mask=~valid),
        "f": pa.array(rng.standard_normal(n) * 10.0 ** rng.integers(-20, 20, n), mask=~valid),
        "s": pa.array([None if not v else f"t\t{i}\"é😀" for i, v in enumerate(valid)]),
    })
    ours = [json.loads(line) for line in _jsonl(batch).splitlines()]
    theirs = [json.loads(line) for line in
              pl.from_arrow(pa.Table.from_batches([batch])).write_ndjson().splitlines()]
    assert ours == theirs
    assert all(isinstance(row["f"], float) for row in ours if row["f"] is not None)
