"""batch_stream: every accepted input as one lazy async stream of batches and a schema."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import pandas as pd
import pyarrow as pa
import pytest

import aorc
from aorc.write.batches import batch_stream

BATCHES = [pa.record_batch({"a": [1, 2], "b": ["x", "y"]}),
           pa.record_batch({"a": [3], "b": ["z"]})]
ROWS = [{"a": 1, "b": "x"}, {"a": 2, "b": "y"}, {"a": 3, "b": "z"}]


async def _rows(data: Any) -> tuple[pa.Schema, int | None, list[dict[str, Any]]]:
    stream = await batch_stream(data)
    rows = [r async for b in stream.batches for r in b.to_pylist()]
    return stream.schema, stream.num_rows, rows


async def _agen() -> AsyncIterator[pa.RecordBatch]:
    for b in BATCHES:
        yield b


@pytest.mark.parametrize("make, known", [
    (lambda: pa.Table.from_batches(BATCHES), 3),
    (lambda: BATCHES[0], 2),
    (lambda: pd.DataFrame({"a": [1, 2, 3], "b": ["x", "y", "z"]}), 3),
    (lambda: pa.RecordBatchReader.from_batches(BATCHES[0].schema, iter(BATCHES)), None),
    (lambda: iter(BATCHES), None),
    (lambda: [pa.Table.from_batches([b]) for b in BATCHES], 3),  # a list is in memory
    (_agen, None),
], ids=["table", "batch", "pandas", "reader", "iterator", "tables", "async"])
async def test_each_kind_streams_its_rows(make: Any, known: int | None) -> None:
    schema, num_rows, rows = await _rows(make())
    assert schema.names == ["a", "b"] and num_rows == known
    assert rows == (ROWS[:2] if known == 2 else ROWS)


async def test_a_generator_is_pulled_one_item_at_a_time() -> None:
    pulled: list[int] = []

    def gen() -> Iterator[pa.RecordBatch]:
        for i, b in enumerate(BATCHES):
            pulled.append(i)
            yield b

    stream = await batch_stream(gen())
    assert pulled == [0]  # the first item gives the schema
    first = await anext(stream.batches)
    assert first.num_rows == 2 and pulled == [0]
    await anext(stream.batches)
    assert pulled == [0, 1]


async def test_aclose_runs_the_generators_finally() -> None:
    closed: list[str] = []

    def gen() -> Iterator[pa.RecordBatch]:
        try:
            yield from BATCHES
        finally:
            closed.append("sync")

    async def agen() -> AsyncIterator[pa.RecordBatch]:
        try:
            for b in BATCHES:
                yield b
        finally:
            closed.append("async")

    for source in (gen(), agen()):
        stream = await batch_stream(source)
        await anext(stream.batches)
        await stream.aclose()
    assert closed == ["sync", "async"]


async def test_empty_iterables_have_an_empty_schema() -> None:
    assert (await _rows(iter([])))[0] == pa.schema([])
    assert (await _rows(_empty()))[0] == pa.schema([])


async def _empty() -> AsyncIterator[pa.RecordBatch]:
    return
    yield


@pytest.mark.parametrize("data", [1, "abc", b"abc", {"a": [1]}, [1, 2]])
async def test_other_inputs_are_refused(data: Any) -> None:
    with pytest.raises(aorc.InputTypeError, match="RecordBatch"):
        await batch_stream(data)


async def test_a_bad_item_later_in_the_stream_is_refused() -> None:
    stream = await batch_stream(iter([BATCHES[0], "oops"]))
    await anext(stream.batches)
    with pytest.raises(aorc.InputTypeError, match="str"):
        await anext(stream.batches)
