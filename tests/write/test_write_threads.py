"""Parallel writing: the shared pool (``aorc.threads``) and the writer on several threads.

The bytes of a file must not depend on the thread count; that several threads really work
at once is shown with a barrier that only two concurrent encoder calls can pass (no timing).
"""

from __future__ import annotations

import datetime
import decimal
import pathlib
import threading
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.orc as po
import pytest

import aorc
from aorc.format.columns.encode import compound
from aorc.threads import pool_map, pool_size


def mixed_table(n: int, seed: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    mask = rng.random(n) < 0.1
    return pa.table({
        "i": pa.array(rng.integers(-1000, 1000, n), pa.int64(), mask=mask),
        "seq": pa.array(np.arange(n, dtype=np.int32)),
        "f": pa.array(rng.standard_normal(n)),
        "s": pa.array([f"k{v}" for v in rng.integers(0, 50, n)]),
        "u": pa.array([f"{v:x}-{i}" for i, v in enumerate(rng.integers(0, 1 << 40, n))]),
        "b": pa.array(rng.random(n) < 0.5),
        "ts": pa.array([datetime.datetime(2020, 1, 1) + datetime.timedelta(seconds=int(v))
                        for v in rng.integers(0, 10**8, n)], pa.timestamp("us")),
        "d": pa.array([decimal.Decimal(int(v)) / 100 for v in rng.integers(-10**6, 10**6, n)],
                      pa.decimal128(12, 2)),
        "l": pa.array([list(range(int(v))) for v in rng.integers(0, 4, n)],
                      pa.list_(pa.int32())),
        "m": pa.array([{"x": int(v), "y": f"y{v}"} for v in rng.integers(0, 9, n)]),
    })


# --------------------------------------------------------------------------- the pool

def test_pool_map_keeps_order_and_runs_in_the_caller_for_one_thread() -> None:
    items = list(range(50))
    assert pool_map(lambda x: x * x, items, 4) == [x * x for x in items]
    caller = threading.get_ident()
    seen = pool_map(lambda _: threading.get_ident(), items, 1)
    assert set(seen) == {caller}
    assert pool_map(lambda x: x, [], 8) == []


def test_pool_map_uses_several_threads() -> None:
    if pool_size() < 1:  # pragma: no cover - pool_size is at least 1
        pytest.skip("no pool")
    barrier = threading.Barrier(2, timeout=60)  # passed only by two threads at once
    idents: set[int] = set()

    def work(x: int) -> int:
        if x < 2:
            barrier.wait()
        idents.add(threading.get_ident())
        return x

    assert pool_map(work, list(range(10)), 2) == list(range(10))
    assert len(idents) >= 2


def test_pool_map_raises_the_first_error() -> None:
    def work(x: int) -> int:
        if x == 7:
            raise ValueError("seven")
        return x

    with pytest.raises(ValueError, match="seven"):
        pool_map(work, list(range(20)), 3)


def test_nested_pool_maps_do_not_deadlock() -> None:
    width = pool_size() + 3  # more outer tasks than workers, each mapping again

    def outer(x: int) -> int:
        return sum(pool_map(lambda y: x * y, list(range(10)), width))

    assert pool_map(outer, list(range(width)), width) == [45 * x for x in range(width)]


# --------------------------------------------------------------------------- the writer

@pytest.mark.parametrize("codec", ["zstd", "zlib", "snappy", "lz4", "none"])
async def test_bytes_do_not_depend_on_threads(tmp_path: pathlib.Path, codec: str) -> None:
    data = mixed_table(6000, seed=len(codec))
    options: dict[str, Any] = {"compression": codec, "stripe_size": 40_000,
                               "row_index_stride": 1000, "compression_block_size": 4096,
                               "bloom_filter_columns": ["i", "s", "m"]}
    files = {}
    for threads in (1, 2, 3, 8, True, False):
        path = tmp_path / f"{threads}.orc"
        await aorc.write_table(data, path, use_threads=threads, **options)
        files[threads] = path.read_bytes()
    reference = files[1]
    assert all(b == reference for b in files.values())
    f = po.ORCFile(str(tmp_path / "1.orc"))
    assert f.nstripes > 1
    assert f.read().equals(data.cast(f.schema))


async def test_columns_are_encoded_at_once(tmp_path: pathlib.Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    barrier = threading.Barrier(2, timeout=60)
    idents: set[int] = set()
    real = compound.encode_level

    def encode(level: Any, arr: Any) -> Any:
        if level.t.column_id in (1, 2):  # the first two fields meet at the barrier
            barrier.wait()
        idents.add(threading.get_ident())
        return real(level, arr)

    monkeypatch.setattr(compound, "encode_level", encode)
    data = mixed_table(2000, seed=3)
    await aorc.write_table(data, tmp_path / "x.orc", use_threads=2)
    assert len(idents) >= 2
    assert po.read_table(tmp_path / "x.orc").equals(data.cast(po.ORCFile(
        str(tmp_path / "x.orc")).schema))


async def test_an_encoder_error_on_a_thread_reaches_the_caller(
        tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    barrier = threading.Barrier(2, timeout=60)
    real = compound.encode_level
    failed: list[int] = []

    def encode(level: Any, arr: Any) -> Any:
        if level.t.column_id in (1, 2):  # on two threads at once; the second one fails
            barrier.wait()
        if level.t.column_id == 2:
            failed.append(threading.get_ident())
            raise aorc.SchemaError("planted failure")
        return real(level, arr)

    monkeypatch.setattr(compound, "encode_level", encode)
    with pytest.raises(aorc.SchemaError, match="planted failure"):
        await aorc.write_table(mixed_table(100, seed=4), tmp_path / "x.orc", use_threads=2)
    assert len(failed) == 1
    assert list(tmp_path.iterdir()) == []  # the file was abandoned


@pytest.mark.parametrize(("codec", "block"), [("zstd", 256 * 1024), ("zlib", 100_000),
                                              ("zstd", 65_536)])
async def test_long_streams_are_compressed_in_pieces_with_the_same_bytes(
        tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch, codec: str, block: int) -> None:
    """A stream longer than ``PIECE_BYTES`` is compressed in pieces of whole chunks on several
    threads; the file is the one a single thread writes (chunk boundaries and row-index
    positions included)."""
    from aorc.write import stripe

    rng = np.random.default_rng(block)
    n = 120_000
    data = pa.table({
        "hex": pa.array([f"{v:016x}" for v in rng.integers(0, 1 << 62, n)]),
        "few": pa.array(rng.integers(0, 3, n)),
        "f": pa.array(rng.standard_normal(n), mask=rng.random(n) < 0.2),
    })
    pieces: list[int] = []
    real = stripe.compress

    def counting(data: Any, opts: Any, kind: Any) -> bytes:
        pieces.append(len(data))
        return real(data, opts, kind)

    monkeypatch.setattr(stripe, "compress", counting)
    files = {}
    for threads in (1, 2):
        pieces.clear()
        path = tmp_path / f"{threads}.orc"
        await aorc.write_table(data, path, use_threads=threads, compression=codec,
                               compression_block_size=block, row_index_stride=1000)
        files[threads] = path.read_bytes()
        piece = max(1, stripe.PIECE_BYTES // block) * block
        if threads == 1:
            assert max(pieces) > piece  # the hex DATA stream, in one go
        else:  # ... in pieces of whole chunks
            assert max(pieces) == piece
    assert files[1] == files[2]
    assert po.read_table(tmp_path / "2.orc").equals(data)


@pytest.mark.parametrize("threads", [1, 2])
async def test_a_stripe_is_written_while_the_next_one_is_encoded(
        monkeypatch: pytest.MonkeyPatch, threads: int) -> None:
    """The sink holds the first stripe's write until the second stripe's encoding has
    started: the writer must not wait for a stripe to be written before encoding the next
    (a writer that did would never get there; the 60 s bound only turns that hang into a
    failure)."""
    import asyncio

    from aorc.write.writer import OrcWriter

    loop = asyncio.get_running_loop()
    second_encoding = asyncio.Event()
    started: list[int] = []
    real = OrcWriter._encode_stripe

    def encode(self: OrcWriter, batches: Any, rows: int) -> list[bytes]:
        started.append(rows)
        if len(started) == 2:
            loop.call_soon_threadsafe(second_encoding.set)
        return real(self, batches, rows)

    monkeypatch.setattr(OrcWriter, "_encode_stripe", encode)

    class GatedSink:
        path = "<gated>"

        def __init__(self) -> None:
            self.chunks: list[bytes] = []
            self.held = False

        async def write(self, data: bytes | bytearray | memoryview) -> None:
            if len(self.chunks) == 1:  # the first stripe, after the header
                await asyncio.wait_for(second_encoding.wait(), 60)
                self.held = True
            self.chunks.append(bytes(data))

        async def complete(self) -> None:
            pass

        async def abort(self) -> None:
            pass

    data = mixed_table(6000, seed=5)
    sink = GatedSink()
    await aorc.write_table(data, sink, stripe_size=40_000, row_index_stride=1000,  # type: ignore[arg-type]
                           use_threads=threads)
    assert sink.held and len(started) >= 3
    f = po.ORCFile(pa.BufferReader(b"".join(sink.chunks)))
    assert f.nstripes == len(started)
    assert f.read().equals(data.cast(f.schema))


async def test_stripes_are_encoded_on_the_encode_pool(
        tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A writer without an executor of its own encodes on :func:`aorc.threads.encode_pool`
    (threads on the main malloc arena), not on asyncio's default executor."""
    from aorc.write.writer import OrcWriter

    names: list[str] = []
    real = OrcWriter._encode_stripe

    def encode(self: OrcWriter, batches: Any, rows: int) -> list[bytes]:
        names.append(threading.current_thread().name)
        return real(self, batches, rows)

    monkeypatch.setattr(OrcWriter, "_encode_stripe", encode)
    data = mixed_table(3000, seed=9)
    path = tmp_path / "pool.orc"
    await aorc.write_table(data, path, stripe_size=40_000)
    assert len(names) >= 2
    assert all(name.startswith("aorc-encode_") for name in names), names
    assert po.ORCFile(str(path)).read().cast(data.schema).equals(data)


# --------------------------------------------------------------------------- nested columns

def nested_table(n: int, seed: int) -> pa.Table:
    """One top-level field (so the root has one task) whose struct holds a struct, a map, a
    list and a union: ids 1 row, 2 pair (3 a, 4 b), 5 attrs (6 key, 7 value), 8 items (9),
    10 choice (11 int, 12 string)."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(0, 5, n)
    offsets = pa.array(np.concatenate(([0], np.cumsum(lengths))).astype(np.int32))
    total = int(lengths.sum())
    words = np.array([f"key-{i}" for i in range(20)], dtype=object)
    pair = pa.StructArray.from_arrays(
        [pa.array(rng.integers(0, 1000, n)), pa.array(words[rng.integers(0, 20, n)], pa.string())],
        names=["a", "b"], mask=pa.array(rng.random(n) < 0.05))
    attrs = pa.MapArray.from_arrays(offsets, pa.array(words[rng.integers(0, 20, total)],
                                                      pa.string()),
                                    pa.array(rng.standard_normal(total)))
    items = pa.ListArray.from_arrays(offsets, pa.array(rng.integers(0, 1 << 40, total)))
    tags = rng.integers(0, 2, n).astype(np.int8)
    choice = pa.UnionArray.from_sparse(
        pa.array(tags), [pa.array(rng.integers(-50, 50, n)),
                         pa.array(words[rng.integers(0, 20, n)], pa.string())], ["i", "s"])
    row = pa.StructArray.from_arrays([pair, attrs, items, choice],
                                     names=["pair", "attrs", "items", "choice"])
    return pa.table({"row": row})


@pytest.mark.parametrize("pair", [(3, 4), (6, 7), (11, 12)], ids=["struct", "map", "union"])
async def test_nested_children_are_encoded_at_once(tmp_path: pathlib.Path,
                                                   monkeypatch: pytest.MonkeyPatch,
                                                   pair: tuple[int, int]) -> None:
    """A nested struct's fields, a map's keys and values and a union's branches are tasks of
    their own once they hold NESTED_TASK_BYTES: the two children pass a barrier that only two
    concurrent encoder calls can pass (the write's other thread takes the second one when it
    is done with its own), and the file is the one written on one thread."""
    data = nested_table(3000, seed=11)
    await aorc.write_table(data, tmp_path / "one.orc", use_threads=1, row_index_stride=1000)
    monkeypatch.setattr(compound, "NESTED_TASK_BYTES", 0)
    real = compound.encode_level
    met: set[int] = set()
    barrier = threading.Barrier(2, timeout=60)

    def encode(level: Any, arr: Any) -> Any:
        if level.t.column_id in pair:
            barrier.wait()
            met.add(threading.get_ident())
        return real(level, arr)

    monkeypatch.setattr(compound, "encode_level", encode)
    await aorc.write_table(data, tmp_path / "two.orc", use_threads=2, row_index_stride=1000)
    assert len(met) == 2
    assert (tmp_path / "two.orc").read_bytes() == (tmp_path / "one.orc").read_bytes()
    # (a sparse union reads back dense: compare the values)
    assert (await aorc.read_table(tmp_path / "two.orc")).to_pylist() == data.to_pylist()


async def test_small_nested_children_stay_in_one_task(tmp_path: pathlib.Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Below NESTED_TASK_BYTES a nested column's children are encoded in its own task: the
    only call of the pool is the root's (and that with one field runs in the caller)."""
    calls: list[int] = []
    real = compound.pool_map

    def counted(fn: Any, items: Any, threads: int, **kwargs: Any) -> Any:
        calls.append(len(items))
        return real(fn, items, threads, **kwargs)

    monkeypatch.setattr(compound, "pool_map", counted)
    data = nested_table(300, seed=12)
    assert sum(c.nbytes for c in data.column(0).chunk(0).flatten()) < compound.NESTED_TASK_BYTES
    await aorc.write_table(data, tmp_path / "x.orc", use_threads=2)
    assert calls == []
    monkeypatch.setattr(compound, "NESTED_TASK_BYTES", 0)
    await aorc.write_table(data, tmp_path / "y.orc", use_threads=2)
    assert sorted(calls) == [2, 2, 2, 4]  # pair, attrs, choice; the row
    assert (tmp_path / "x.orc").read_bytes() == (tmp_path / "y.orc").read_bytes()
