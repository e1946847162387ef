"""aorc.sink.plan: row grouping helpers (the routing codes and their stable order)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from aorc.sink.plan import Partitioner, group_order, small_codes, take_rows


@pytest.mark.parametrize(("count", "dtype"), [
    (1, np.uint8), (256, np.uint8), (257, np.uint16), (65_536, np.uint16),
    (65_537, np.uint32), (2**32, np.uint32), (2**32 + 1, np.int64)])
def test_small_codes_takes_the_narrowest_type_that_holds_every_code(count: int,
                                                                     dtype: type) -> None:
    codes = np.array([0, count - 1], dtype=np.int64)
    narrow = small_codes(codes, count)
    assert narrow.dtype == dtype
    assert narrow.tolist() == codes.tolist()  # nothing wrapped around


@pytest.mark.parametrize("count", [1, 3, 300, 70_000])
def test_group_order_is_numpys_stable_order(count: int) -> None:
    rng = np.random.default_rng(count)
    codes = rng.integers(0, count, 20_000)
    assert np.array_equal(group_order(codes), np.argsort(codes, kind="stable"))
    assert group_order(codes[:0]).tolist() == []


def test_routing_groups_index_the_paths() -> None:
    batch = pa.record_batch({"k": pa.array([f"v{i % 300}" for i in range(1_000)]),
                             "x": pa.array(range(1_000))})
    routing = Partitioner(batch.schema, ["k"], None, None, "UTC", False).route(batch)
    assert routing.groups.dtype == np.uint16  # 300 folders
    assert [routing.paths[g] for g in routing.groups.tolist()] == [
        f"k=v{i % 300}" for i in range(1_000)]


@pytest.mark.parametrize("threads", [1, 2, 4])
def test_take_rows_gives_compact_copies_of_each_group(threads: int) -> None:
    rng = np.random.default_rng(threads)
    n = 5_000
    batch = pa.record_batch({
        "i": pa.array(rng.integers(0, 100, n), mask=rng.random(n) < 0.1),
        "s": pa.array([f"s{v}" for v in rng.integers(0, 50, n)]),
        "l": pa.array([[int(v)] * int(v % 3) for v in rng.integers(0, 9, n)]),
    })
    codes = rng.integers(0, 3, n)
    order = group_order(codes)
    bounds = np.searchsorted(codes[order], np.arange(4))
    groups = [order[bounds[k]:bounds[k + 1]] for k in range(3)]
    pieces = take_rows(batch, groups, threads)
    assert [p.num_rows for p in pieces] == [len(g) for g in groups]
    for piece, rows in zip(pieces, groups, strict=True):
        assert piece.schema == batch.schema
        assert piece.equals(batch.take(pa.array(rows)))
        assert piece.column(1).buffers()[2].address != batch.column(1).buffers()[2].address
