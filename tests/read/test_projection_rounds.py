"""A read of a few columns fetches several stripes per round trip: groups of stripes are
joined by the bytes the projection fetches (known from the footers fetched ahead), not cut by
stripe size, so a two-column read of a many-stripe file takes a few rounds, not one or two per
stripe; the bytes held at once stay within the group size, and the values are pyarrow.orc's.
Rounds are counted by causality (``helpers.rounds``), not by the clock."""

from __future__ import annotations

import collections
import io

import numpy as np
import pyarrow as pa
import pyarrow.orc as po
import pytest
from helpers.rounds import RoundStore

import aorc
from aorc.format.projection import select_columns
from aorc.format.tail import FileTail, parse_tail
from aorc.read import plan as read_plan
from aorc.read import reader as read_module

ROWS = 300_000
STRIPE = 1024 * 1024


@pytest.fixture(scope="module")
def wide_file(tmp_path_factory: pytest.TempPathFactory) -> tuple[bytes, pa.Table]:
    """Eight columns in 17 stripes of 1 MiB (written by aorc, uncompressed, so that stripe
    sizes are predictable): two int32 columns are about a seventh of each stripe."""
    rng = np.random.default_rng(7)
    t = pa.table({
        "a": pa.array(rng.integers(0, 2**31 - 1, ROWS, dtype=np.int32)),
        "b": pa.array(rng.integers(0, 2**31 - 1, ROWS, dtype=np.int32)),
        **{f"w{i}": pa.array(rng.standard_normal(ROWS)) for i in range(6)},
    })
    path = tmp_path_factory.mktemp("wide") / "wide.orc"
    aorc.sync.write_table(t, path, stripe_size=STRIPE, compression="none")
    return path.read_bytes(), t


async def _read(data: bytes, columns: list[str] | None, *,
                stream: bool = False) -> tuple[pa.Table, RoundStore]:
    store = RoundStore(data)
    async with aorc.open_reader(store) as reader:
        if stream:
            batches = [b async for b in reader.iter_batches(columns, batch_size=50_000)]
            table = pa.Table.from_batches(batches)
        else:
            table = await reader.read(columns)
    return table, store


@pytest.mark.parametrize("stream", [False, True], ids=["read", "iter_batches"])
async def test_two_columns_take_a_few_rounds(wide_file: tuple[bytes, pa.Table],
                                             monkeypatch: pytest.MonkeyPatch,
                                             stream: bool) -> None:
    data, table = wide_file
    assert po.ORCFile(io.BytesIO(data)).nstripes == 17
    monkeypatch.setattr(read_module, "GROUP_BYTES", 4 * STRIPE)
    got, store = await _read(data, ["a", "b"], stream=stream)
    assert got.equals(po.read_table(io.BytesIO(data), columns=["a", "b"]))
    assert got.equals(table.select(["a", "b"]))
    # The tail; the first group's footers with the next 16 (two waves of the store's 10
    # concurrent requests); the first group's data (4 stripes: nothing measured yet, so by
    # stripe size); then the other 13 stripes' two columns (about 2 MiB) in one round.
    # Cut by stripe size, those 13 took four more rounds (8 in all).
    assert store.rounds <= 5, store.rounds
    # every data request stays within the group's budget
    data_bytes = collections.Counter[int]()
    for number, offset, length in store.requests:
        if offset >= 0:
            data_bytes[number] += length
    assert max(data_bytes.values()) <= 4 * STRIPE + 64 * 1024


async def test_whole_reads_are_grouped_by_stripe_size(wide_file: tuple[bytes, pa.Table],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """All columns: a projection's share is the whole stripe, nothing is joined."""
    data, table = wide_file
    monkeypatch.setattr(read_module, "GROUP_BYTES", 4 * STRIPE)
    got, store = await _read(data, None)
    assert got.equals(table)
    per_round = collections.Counter(r for r, offset, _ in store.requests if offset >= 0)
    sizes = collections.Counter[int]()
    for number, offset, length in store.requests:
        if offset >= 0:
            sizes[number] += length
    assert max(sizes.values()) <= 4 * STRIPE + 64 * 1024
    assert len(per_round) >= 5  # about 20 MiB in groups of at most 4 MiB


def test_next_group_joins_by_projected_bytes(wide_file: tuple[bytes, pa.Table]) -> None:
    """The planner alone: before any footer is known a stripe counts whole; once footers
    are known, groups are joined up to ``group_bytes`` of the selected streams."""
    data, _ = wide_file
    tail = parse_tail(data, len(data))
    assert isinstance(tail, FileTail)
    plan = read_plan.ReadPlan(tail, select_columns(tail.schema, ["a"]), path="wide.orc",
                              group_bytes=2 * STRIPE, whole_read_bytes=0)
    queue = collections.deque(plan.groups())
    n = len(queue)
    first = plan.next_group(queue)
    assert len(first.stripes) == 1 and len(queue) == n - 1  # nothing known: by stripe size
    while (need := first.needs()) is not None:  # the footer round fetches footers ahead
        first.push(need.ranges, [data[o:o + k] for o, k in need.ranges])
    first.jobs()
    second = plan.next_group(queue)
    assert len(second.stripes) > 4  # column a is about 1/16 of a stripe
    projected = sum(plan._fetched_estimate(s) for s in second.stripes)
    assert projected <= 2 * STRIPE
    assert [s.index for s in second.stripes] == list(
        range(second.stripes[0].index, second.stripes[-1].index + 1))
