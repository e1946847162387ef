"""Parallel decoding (``use_threads``) and stripe selection (``stripes=``) through the
public reader: same rows as pyarrow.orc, parts on the decode pool, concurrency bounded."""

from __future__ import annotations

import io
import threading
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.orc as po
import pytest

import aorc
import aorc.read.common
import aorc.read.plan
import aorc.read.pushdown
import aorc.read.reader
import aorc.threads
from aorc.errors import SchemaError

ROWS = 50_000


@pytest.fixture(scope="module")
def multi() -> tuple[bytes, pa.Table]:
    rng = np.random.default_rng(3)
    t = pa.table({
        "a": pa.array(np.arange(ROWS, dtype=np.int64)),
        "b": pa.array(rng.standard_normal(ROWS)),
        "c": pa.array([f"s{v}" for v in rng.integers(0, 500, ROWS)]),
        "d": pa.array(rng.integers(0, 9, ROWS, dtype=np.int8), mask=rng.random(ROWS) < 0.2),
    })
    out = io.BytesIO()
    po.write_table(t, out, compression="zlib", stripe_size=64 * 1024, row_index_stride=1000,
                   bloom_filter_columns=[3], bloom_filter_fpp=0.001)  # on c
    return out.getvalue(), t


@pytest.mark.parametrize("use_threads", [False, True, 1, 2, 64])
async def test_same_rows_whatever_the_threads(multi: tuple[bytes, pa.Table],
                                              use_threads: bool | int) -> None:
    data, t = multi
    want = po.read_table(io.BytesIO(data))
    assert (await aorc.read_table(data, use_threads=use_threads)).equals(want)
    got = await aorc.read_table(data, columns=["c", "a"], use_threads=use_threads)
    assert got.equals(want.select(["c", "a"]))  # the order asked for
    filters = [("a", ">=", 40_500), ("d", "==", 3)]
    got = await aorc.read_table(data, filters=filters, use_threads=use_threads)
    assert got.equals(t.filter(pc.and_(pc.greater_equal(t["a"], 40_500),
                                       pc.equal(t["d"], 3))))
    async with aorc.open_reader(data) as reader:
        # Within every stripe's and row group's min and max, in no bloom filter: stripes
        # are kept, all their row groups pruned (a stripe with nothing to decode).
        got = await reader.read(filters=[("c", "==", "s2500x")], use_threads=use_threads)
        assert got.num_rows == 0 and got.schema == want.schema
        stats = reader.scan_stats
        assert stats.stripes_pruned_by_stats == 0 and stats.row_groups_read == 0
        assert stats.row_groups_pruned_by_bloom > 0


@pytest.mark.parametrize("bad", [0, -1, "2", 1.5, None])
async def test_bad_use_threads(multi: tuple[bytes, pa.Table], bad: Any) -> None:
    data, _ = multi
    async with aorc.open_reader(data) as reader:
        with pytest.raises(SchemaError, match="use_threads"):
            reader.iter_batches(use_threads=bad)


def _recording(monkeypatch: pytest.MonkeyPatch, barrier: threading.Barrier | None,
               module: Any = aorc.read.plan) -> dict[str, Any]:
    """Wrap the column decoder of ``module`` (the unfiltered plan's or the filtered scan's):
    record threads and the most parts running at once; with a barrier, each part waits
    until that many parts run together."""
    seen: dict[str, Any] = {"threads": set(), "now": 0, "most": 0}
    lock = threading.Lock()
    real = module.decode_level

    def decode_level(*args: Any) -> Any:
        with lock:
            seen["threads"].add(threading.current_thread().name)
            seen["now"] += 1
            seen["most"] = max(seen["most"], seen["now"])
        try:
            if barrier is not None:
                barrier.wait()
            return real(*args)
        finally:
            with lock:
                seen["now"] -= 1

    monkeypatch.setattr(module, "decode_level", decode_level)
    return seen


async def test_one_thread_decodes_one_part_at_a_time(
        multi: tuple[bytes, pa.Table], monkeypatch: pytest.MonkeyPatch) -> None:
    data, t = multi
    seen = _recording(monkeypatch, None)
    got = await aorc.read_table(data, use_threads=1)
    assert got.equals(t)
    assert seen["most"] == 1
    assert all(name.startswith("aorc") for name in seen["threads"])  # the shared pool's


async def test_two_threads_decode_two_parts_at_once(
        multi: tuple[bytes, pa.Table], monkeypatch: pytest.MonkeyPatch) -> None:
    if aorc.threads.pool_size() < 2:
        pytest.skip("one CPU: the pool has one thread")
    data, t = multi
    # Every part waits for a second one: this read completes only if parts run in pairs
    # (5 columns per stripe, and the pool pairs them across stripes). The timeout only
    # guards against a hang.
    seen = _recording(monkeypatch, threading.Barrier(2, timeout=60))
    got = await aorc.read_table(data, use_threads=2)
    assert got.equals(t)
    assert seen["most"] == 2
    assert len(seen["threads"]) == 2


async def test_stripes_of_different_groups_decode_at_once(
        multi: tuple[bytes, pa.Table], monkeypatch: pytest.MonkeyPatch) -> None:
    if aorc.threads.pool_size() < 2:
        pytest.skip("one CPU: the pool has one thread")
    data, t = multi
    # One stripe per group and one column: every part waits for a second one, so this read
    # completes only if the next group's stripe starts while the current one decodes.
    monkeypatch.setattr(aorc.read.reader, "GROUP_BYTES", 1)
    monkeypatch.setattr(aorc.read.reader, "WHOLE_READ_BYTES", 0)
    seen = _recording(monkeypatch, threading.Barrier(2, timeout=30))
    async with aorc.open_reader(data) as reader:
        pairs = reader.num_stripes // 2 * 2  # every part finds a partner
        assert pairs >= 2
        got = await reader.read(["a"], stripes=range(pairs), use_threads=2)
        rows = sum(s.num_rows for s in reader.stripes[:pairs])
    assert got.equals(t.select(["a"]).slice(0, rows))
    assert seen["most"] == 2


def _one_stripe(t: pa.Table) -> bytes:
    out = io.BytesIO()
    po.write_table(t, out, compression="zlib", row_index_stride=1000)
    assert po.ORCFile(io.BytesIO(out.getvalue())).nstripes == 1
    return out.getvalue()


@pytest.mark.parametrize("filters", [[("a", ">=", 0)], [("a", ">=", 40_500)]],
                         ids=["every-row-group", "a-run"])
async def test_a_filtered_stripe_decodes_its_columns_at_once(
        multi: tuple[bytes, pa.Table], monkeypatch: pytest.MonkeyPatch,
        filters: list[Any]) -> None:
    if aorc.threads.pool_size() < 2:
        pytest.skip("one CPU: the pool has one thread")
    _, t = multi
    data = _one_stripe(t)
    # One stripe, four columns: each column's decoding waits for a second one, so this read
    # completes only if the filtered stripe's columns decode two at a time.
    seen = _recording(monkeypatch, threading.Barrier(2, timeout=60), aorc.read.pushdown)
    got = await aorc.read_table(data, filters=filters, use_threads=2)
    assert got.equals(t.filter(pc.greater_equal(t["a"], filters[0][2])))
    assert seen["most"] == 2 and len(seen["threads"]) == 2


async def test_a_filtered_stripe_on_one_thread_decodes_a_column_at_a_time(
        multi: tuple[bytes, pa.Table], monkeypatch: pytest.MonkeyPatch) -> None:
    _, t = multi
    seen = _recording(monkeypatch, None, aorc.read.pushdown)
    got = await aorc.read_table(_one_stripe(t), filters=[("d", "==", 3)], use_threads=1)
    assert got.equals(t.filter(pc.equal(t["d"], 3)))
    assert seen["most"] == 1 and len(seen["threads"]) == 1


@pytest.mark.parametrize("use_threads", [1, 2])
async def test_long_streams_are_decompressed_in_pieces(
        multi: tuple[bytes, pa.Table], monkeypatch: pytest.MonkeyPatch,
        use_threads: int) -> None:
    data, _ = multi
    calls: list[int] = []
    real = aorc.read.common.pool_map

    def pool_map(fn: Any, items: Any, threads: int) -> Any:
        calls.append(len(items))
        return real(fn, items, threads)

    monkeypatch.setattr(aorc.read.common, "pool_map", pool_map)
    monkeypatch.setattr(aorc.read.common, "PARALLEL_DECOMPRESS_BYTES", 1000)
    got = await aorc.read_table(data, use_threads=use_threads)
    assert got.equals(po.read_table(io.BytesIO(data)))
    if use_threads == 1:
        assert calls == []
    else:  # every stream of 1000 bytes or more, in up to 4 pieces
        assert len(calls) > 3 and all(2 <= n <= 4 for n in calls)


async def test_zstd_streams_are_decompressed_into_one_buffer(
        monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(12)
    t = pa.table({"s": [f"{v:x}-{v * 7:x}" for v in rng.integers(0, 1 << 62, 40_000).tolist()],
                  "i": rng.integers(0, 1 << 40, 40_000)})
    out = io.BytesIO()
    po.write_table(t, out, compression="zstd")
    into: list[int] = []
    real = aorc.read.common.decompress_into

    def decompress_into(data: Any, kind: Any, block_size: int, target: Any) -> None:
        into.append(len(target))
        real(data, kind, block_size, target)

    monkeypatch.setattr(aorc.read.common, "decompress_into", decompress_into)
    monkeypatch.setattr(aorc.read.common, "PARALLEL_DECOMPRESS_BYTES", 1000)
    got = await aorc.read_table(out.getvalue(), use_threads=2)
    assert got.equals(po.read_table(io.BytesIO(out.getvalue())))
    assert len(into) >= 4 and min(into) > 0  # pieces of several streams, each in place


async def test_a_stripe_is_one_pool_task_whose_threads_share_the_columns(
        monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(11)
    t = pa.table({f"c{i}": rng.integers(0, 1 << (i % 40 + 2), 20_000) for i in range(60)})
    out = io.BytesIO()
    po.write_table(t, out, compression="zstd", stripe_size=64 * 1024)
    stripes: list[int] = []
    real = aorc.read.reader.decode_stripe

    async def decode_stripe(job: aorc.read.plan.StripeJob, threads: int) -> Any:
        stripes.append(job.index)
        return await real(job, threads)

    monkeypatch.setattr(aorc.read.reader, "decode_stripe", decode_stripe)
    got = await aorc.read_table(out.getvalue(), use_threads=2)
    assert got.equals(po.read_table(io.BytesIO(out.getvalue())))
    # One hand-over from the event loop per stripe (was one per bundle of columns).
    assert len(stripes) >= 2 and sorted(stripes) == list(range(len(stripes)))


async def test_stripes_reads_the_chosen_stripes(multi: tuple[bytes, pa.Table]) -> None:
    data, t = multi
    async with aorc.open_reader(data) as reader:
        stripes = reader.stripes
        assert len(stripes) >= 3
        starts = np.cumsum([0] + [s.num_rows for s in stripes])
        got = await reader.read(stripes=[2, 0])
        want = pa.concat_tables([t.slice(starts[0], stripes[0].num_rows),
                                 t.slice(starts[2], stripes[2].num_rows)])
        assert got.equals(want)
        batches = [b async for b in reader.iter_batches(
            ["a"], filters=[("a", "<", int(starts[1]) + 10)], stripes=[1, 2])]
        assert pa.Table.from_batches(batches).column("a").to_pylist() == list(
            range(int(starts[1]), int(starts[1]) + 10))
        assert (await reader.read(stripes=[])).num_rows == 0
        with pytest.raises(SchemaError, match="no stripe"):
            await reader.read(stripes=[len(stripes)])
