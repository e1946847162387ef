"""The sans-I/O read plan, without any I/O: which byte ranges it asks for, and decoding the
bytes pushed back (compared with pyarrow.orc reading the same file)."""

from __future__ import annotations

import io

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.orc as pa_orc
import pytest

from aorc.errors import CorruptFileError, SchemaError
from aorc.filters.predicate import parse_filters
from aorc.format.projection import select_columns
from aorc.format.stripe import parse_stripe_footer, stream_layout
from aorc.format.tail import FileTail, parse_tail
from aorc.read.common import merge_ranges
from aorc.read.footers import FooterCache
from aorc.read.plan import GroupPlan, NeedsData, ReadPlan

ROWS = 60_000
STRIDE = 1_000

INDEX_KINDS = {"ROW_INDEX": 6, "BLOOM_FILTER": 7, "BLOOM_FILTER_UTF8": 8}


@pytest.fixture(scope="module")
def sample() -> tuple[bytes, pa.Table]:
    """A zstd file of several stripes with a row index and a bloom filter on ``key``
    (sorted), written by ORC C++ (pyarrow)."""
    rng = np.random.default_rng(7)
    table = pa.table({
        "key": pa.array(np.arange(ROWS, dtype=np.int64)),
        "value": pa.array(rng.standard_normal(ROWS)),
        "text": pa.array([f"t{v}" for v in rng.integers(0, 10**9, ROWS)]),
        "small": pa.array(rng.integers(0, 100, ROWS, dtype=np.int32),
                          mask=rng.random(ROWS) < 0.1),
    })
    out = io.BytesIO()
    pa_orc.write_table(table, out, compression="zstd", stripe_size=256 * 1024,
                       row_index_stride=STRIDE, bloom_filter_columns=[1])
    return out.getvalue(), table


def tail_of(data: bytes) -> FileTail:
    tail = parse_tail(data, len(data))
    assert isinstance(tail, FileTail)
    return tail


def make_plan(data: bytes, columns: list[str] | None = None, filters: object = None,
              **kwargs: object) -> ReadPlan:
    tail = tail_of(data)
    return ReadPlan(tail, select_columns(tail.schema, columns), path="sample.orc",
                    predicate=parse_filters(filters, tail.schema), **kwargs)  # type: ignore[arg-type]


def drive(group: GroupPlan, data: bytes) -> list[NeedsData]:
    """Answer every request of a group from ``data``; the rounds it asked for."""
    rounds = []
    while (need := group.needs()) is not None:
        rounds.append(need)
        group.push(need.ranges, [data[o:o + n] for o, n in need.ranges])
    return rounds


def read_all(plan: ReadPlan, data: bytes) -> tuple[pa.Table, list[list[NeedsData]]]:
    batches, rounds = [], []
    for group in plan.groups():
        rounds.append(drive(group, data))
        for job in group.jobs():
            batches.extend(job.run())
    return pa.Table.from_batches(batches, schema=plan.schema()), rounds


def streams_of(data: bytes, tail: FileTail, index: int) -> dict[tuple[int, int], tuple[int, int]]:
    """(column, kind) -> (offset, length) of a stripe's streams, read from the file."""
    stripe = tail.stripes[index]
    raw = data[stripe.footer_offset:stripe.footer_offset + stripe.footer_length]
    footer = parse_stripe_footer(raw, tail, stripe)
    return {(s.column, s.kind): (s.offset, s.length) for s in stream_layout(stripe, footer)}


def inside(r: tuple[int, int], s: tuple[int, int]) -> bool:
    return s[0] <= r[0] and r[0] + r[1] <= s[0] + s[1]


def overlap(r: tuple[int, int], s: tuple[int, int]) -> bool:
    return r[0] < s[0] + s[1] and s[0] < r[0] + r[1]


def test_sample_has_several_stripes(sample: tuple[bytes, pa.Table]) -> None:
    data, _ = sample
    assert len(tail_of(data).stripes) >= 3


def test_whole_read_asks_for_each_group_whole_and_decodes_it(
        sample: tuple[bytes, pa.Table]) -> None:
    data, table = sample
    plan = make_plan(data, group_bytes=1)  # one stripe per group
    got, rounds = read_all(plan, data)
    assert got.equals(pa_orc.read_table(io.BytesIO(data)))
    assert got.equals(table)
    stripes = tail_of(data).stripes
    assert [[r.ranges for r in g] for g in rounds] == [
        [((s.offset, s.length),)] for s in stripes]


def test_column_read_asks_for_footers_then_only_the_selected_streams(
        sample: tuple[bytes, pa.Table]) -> None:
    data, table = sample
    tail = tail_of(data)
    plan = make_plan(data, ["value"], group_bytes=1, whole_read_bytes=0)
    got, rounds = read_all(plan, data)
    assert got.equals(table.select(["value"]))
    first = rounds[0]
    assert len(first) == 2 and not first[0].coalesce  # footers, never merged
    footers = {(s.footer_offset, s.footer_length) for s in tail.stripes}
    assert set(first[0].ranges) <= footers and len(first[0].ranges) > 1  # looks ahead
    streams = streams_of(data, tail, 0)
    value = [r for (c, kind), r in streams.items() if c == 2 and kind in (0, 1)]
    assert set(first[1].ranges) == {r for r in value if r[1]}
    # Later groups find their footers fetched ahead: one round, the data.
    assert [len(g) for g in rounds[1:]] == [1] * (len(rounds) - 1)


def test_known_footers_skip_the_footer_round(sample: tuple[bytes, pa.Table]) -> None:
    """Plans sharing a FooterCache (a reader's): the second asks for no footer, and a
    filtered one for the index streams it needs, not the whole index region."""
    data, table = sample
    tail = tail_of(data)
    cache = FooterCache()
    read_all(make_plan(data, ["value"], whole_read_bytes=0, footers=cache), data)
    assert len(cache) == len(tail.stripes)
    plan = make_plan(data, ["text"], [("key", "==", 12_345)], whole_read_bytes=0,
                     footers=cache)
    got, rounds = read_all(plan, data)
    assert got.equals(table.filter(pc.equal(table["key"], 12_345)).select(["text"]))
    (needs,) = rounds  # one stripe survives
    assert len(needs) == 2 and all(n.coalesce for n in needs)  # index streams, data
    footers = {(s.footer_offset, s.footer_length) for s in tail.stripes}
    assert not footers & {r for n in needs for r in n.ranges}
    (stripe,) = [s for s in tail.stripes if inside(needs[0].ranges[0], (s.offset, s.length))]
    streams = streams_of(data, tail, stripe.index)
    kinds = INDEX_KINDS["ROW_INDEX"], INDEX_KINDS["BLOOM_FILTER_UTF8"]
    wanted = {streams[1, k] for k in kinds} | {streams[3, INDEX_KINDS["ROW_INDEX"]]}
    assert merge_ranges(needs[0].ranges) == merge_ranges(list(wanted))


def test_stripes_selects_stripes(sample: tuple[bytes, pa.Table]) -> None:
    data, table = sample
    tail = tail_of(data)
    plan = make_plan(data, stripes=[2, 1])
    got, rounds = read_all(plan, data)
    s1, s2 = tail.stripes[1], tail.stripes[2]
    start = s1.num_rows and tail.stripes[0].num_rows
    assert got.equals(table.slice(start, s1.num_rows + s2.num_rows))
    asked = [r for g in rounds for need in g for r in need.ranges]
    assert asked == [(s1.offset, s2.end - s1.offset)]  # one group, read whole
    with pytest.raises(SchemaError, match="no stripe 99"):
        make_plan(data, stripes=[99])


def test_point_lookup_asks_for_footer_and_index_then_the_row_group(
        sample: tuple[bytes, pa.Table]) -> None:
    data, table = sample
    tail = tail_of(data)
    key = 31_234
    plan = make_plan(data, filters=[("key", "==", key)], whole_read_bytes=100_000)
    got, rounds = read_all(plan, data)
    assert got.equals(table.filter(pc.equal(table["key"], key)))
    assert len(rounds) == 1 and len(rounds[0]) == 2  # footer + index streams, then data
    (stripe,) = [s for s in tail.stripes if s.offset in {o for o, _ in rounds[0][0].ranges}]
    assert set(rounds[0][0].ranges) == {(stripe.footer_offset, stripe.footer_length),
                                        (stripe.offset, stripe.index_length)}
    # Data: only the compression chunks of the surviving row group in each stream.
    data_bytes = sum(n for _, n in rounds[0][1].ranges)
    assert 0 < data_bytes < stripe.data_length / 2
    assert plan.stats.row_groups_read == 1


@pytest.mark.parametrize(("filters", "bloom"), [([("key", "==", 31_234)], True),
                                               ([("key", "in", [5, 31_234])], True),
                                               ([("key", ">", 59_990)], False)])
def test_index_round_asks_only_for_needed_index_streams(
        sample: tuple[bytes, pa.Table], filters: object, bloom: bool) -> None:
    """With index regions too large to fetch whole: row indexes of the filter and decoded
    columns, bloom filters only for == and in."""
    data, table = sample
    tail = tail_of(data)
    plan = make_plan(data, ["key"], filters, whole_read_bytes=0, group_bytes=1)
    got, rounds = read_all(plan, data)
    mask = parse_filters(filters, tail.schema).row_mask(table.to_batches()[0])  # type: ignore[union-attr]
    assert got.equals(table.filter(mask).select(["key"]))
    for group, g_rounds in zip(plan.groups(), rounds, strict=True):
        assert len(g_rounds) == 3, "footers, index streams, data"
        streams = streams_of(data, tail, group.stripes[0].index)
        kinds = {kind for r in g_rounds[1].ranges for (c, kind), s in streams.items()
                 if c == 1 and s[1] and overlap(r, s)}
        assert INDEX_KINDS["ROW_INDEX"] in kinds
        assert (INDEX_KINDS["BLOOM_FILTER_UTF8"] in kinds) == bloom
        others = [kind for r in g_rounds[1].ranges for (c, kind), s in streams.items()
                  if c not in (0, 1) and s[1] and overlap(r, s)]
        assert not others  # no index stream of another column


def test_jobs_before_all_bytes_are_pushed_is_a_driver_bug(
        sample: tuple[bytes, pa.Table]) -> None:
    data, _ = sample
    group = make_plan(data).groups()[0]
    with pytest.raises(RuntimeError):
        group.jobs()


def test_damaged_footer_fails_its_stripe_only(sample: tuple[bytes, pa.Table]) -> None:
    data, table = sample
    tail = tail_of(data)
    bad = tail.stripes[1]
    damaged = bytearray(data)
    damaged[bad.footer_offset:bad.footer_offset + bad.footer_length] = (
        b"\xff" * bad.footer_length)
    plan = make_plan(bytes(damaged), group_bytes=10**9)
    (group,) = plan.groups()
    drive(group, bytes(damaged))
    jobs = group.jobs()
    assert jobs[0].run()[0].num_rows == tail.stripes[0].num_rows
    with pytest.raises(CorruptFileError, match=r"sample\.orc.*stripe 1"):
        jobs[1].run()
    assert sum(b.num_rows for b in jobs[2].run()) == tail.stripes[2].num_rows


def test_parts_decode_independently(sample: tuple[bytes, pa.Table]) -> None:
    """A stripe's parts (one per top-level column) may run in any order."""
    data, table = sample
    plan = make_plan(data, ["text", "key"], group_bytes=1)
    group = plan.groups()[0]
    drive(group, data)
    (job,) = group.jobs()
    parts = job.prepare()
    assert len(parts) == 2
    results = [None, None]
    for i in (1, 0):
        results[i] = parts[i]()
    (batch,) = job.assemble(results)
    rows = tail_of(data).stripes[0].num_rows
    assert pa.Table.from_batches([batch]).equals(table.select(["key", "text"]).slice(0, rows))


def test_decode_weights_count_each_type_per_row_and_the_stored_bytes() -> None:
    from aorc.format._proto import orc_proto_pb2 as pb
    from aorc.format.stripe import StreamInfo
    from aorc.format.types import parse_type_string
    from aorc.read.common import ROW_WORK, decode_weights

    root = parse_type_string("struct<a:string,b:boolean,c:timestamp,d:bigint>")
    streams = {(c, pb.Stream.DATA): StreamInfo(c, pb.Stream.DATA, 0, 1000 * c)
               for c in range(1, 5)}
    tops = list(root.children)
    assert decode_weights(streams, tops) == [1000, 2000, 3000, 4000]
    got = decode_weights(streams, tops, 500)
    assert got == [500 * ROW_WORK[t.kind] + 250 * t.column_id for t in tops]
    # A short string column outweighs a long boolean one of the same rows.
    assert got[0] > got[1]


@pytest.mark.parametrize("columns", [None, ["small", "key"], ["text"]])
def test_decode_whole_equals_the_rounds(sample: tuple[bytes, pa.Table],
                                        columns: list[str] | None) -> None:
    """decode_whole (a small file's bytes all at hand: one go, no rounds) gives the batches
    the push decoder gives, stripe by stripe, for ORC C++'s file of several stripes."""
    data, table = sample
    plan = make_plan(data, columns)
    assert len(plan.tail.stripes) > 1
    batches = plan.decode_whole(data)
    assert batches is not None and len(batches) == len(plan.tail.stripes)
    pushed, _ = read_all(make_plan(data, columns), data)
    got = pa.Table.from_batches(batches)
    assert got.equals(pushed)
    want = table if columns is None else table.select(
        [n for n in table.column_names if n in columns])
    assert got.equals(want)


def test_decode_whole_only_of_the_whole_file_unfiltered(sample: tuple[bytes, pa.Table]) -> None:
    data, _ = sample
    assert make_plan(data, ["key"]).decode_whole(data[1:]) is None
    assert make_plan(data, ["key"], [("key", "<", 10)]).decode_whole(data) is None


def test_decode_whole_names_the_file_and_stripe(sample: tuple[bytes, pa.Table]) -> None:
    data, _ = sample
    tail = tail_of(data)
    s = tail.stripes[1]
    broken = bytearray(data)
    broken[s.footer_offset:s.footer_offset + s.footer_length] = b"\xff" * s.footer_length
    with pytest.raises(CorruptFileError, match=r"sample\.orc.*stripe 1"):
        make_plan(bytes(broken), ["key"]).decode_whole(bytes(broken))
