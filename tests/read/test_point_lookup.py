"""Point lookups: three sequential round trips (tail; footer and index streams of the
surviving stripe; its surviving row group), only the bytes they need, on a store that counts
requests and on S3 (moto's server); a second lookup on the same reader (warm: the stripe's
footer is kept) takes two, the index streams its filter needs and the row group. Rounds are
counted by causality, not by the clock: a request belongs to the round after the latest one
that had completed when it was issued."""

from __future__ import annotations

import io
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.orc as po
import pytest
from helpers.rounds import RoundS3Store, RoundStore
from helpers.s3proxy import S3Proxy

import aorc
from aorc.errors import ObjectChangedError
from aorc.io import StoreOptions
from aorc.io.s3.config import DEFAULT_S3_CONCURRENCY, S3Config
from aorc.read.common import merge_ranges

ROWS = 400_000
KEY = 271_828


def write_file(bloom_columns: list[int]) -> tuple[bytes, pa.Table]:
    """Several zstd stripes: a sorted ``id``, a ``uuid``-like string column, a double and
    an int column, with bloom filters on the given column ids."""
    rng = np.random.default_rng(11)
    t = pa.table({
        "id": pa.array(np.arange(ROWS, dtype=np.int64)),
        "uuid": pa.array([f"{v:032x}" for v in rng.integers(0, 2**62, ROWS)]),
        "value": pa.array(rng.standard_normal(ROWS)),
        "small": pa.array(rng.integers(0, 100, ROWS, dtype=np.int32)),
    })
    out = io.BytesIO()
    po.write_table(t, out, compression="zstd", stripe_size=2 * 1024 * 1024,
                   bloom_filter_columns=bloom_columns)
    return out.getvalue(), t


@pytest.fixture(scope="module")
def lookup_file() -> tuple[bytes, pa.Table]:
    """Bloom filters on ``id`` and ``uuid`` (ORC column ids 1 and 2)."""
    return write_file([1, 2])


@pytest.fixture(scope="module")
def wide_file() -> tuple[bytes, pa.Table]:
    """A sorted ``id`` and twelve columns with nulls: a row group spans more streams than
    S3's 8 requests in flight."""
    rng = np.random.default_rng(12)
    columns = {"id": pa.array(np.arange(ROWS, dtype=np.int64))}
    for i in range(12):
        values = rng.integers(0, 2**40, ROWS) if i % 2 else rng.standard_normal(ROWS)
        columns[f"c{i}"] = pa.array(values, mask=rng.random(ROWS) < 0.1)
    t = pa.table(columns)
    out = io.BytesIO()
    po.write_table(t, out, compression="zstd", stripe_size=4 * 1024 * 1024,
                   bloom_filter_columns=[1])
    return out.getvalue(), t


@pytest.fixture(scope="module")
def uuid_bloom_file() -> tuple[bytes, pa.Table]:
    """A bloom filter on ``uuid`` only: its large streams lie between the row indexes of
    ``id`` and of the other columns."""
    return write_file([2])


async def lookup(store: Any, filters: list[Any], columns: list[str] | None = None,
                 **options: Any) -> tuple[pa.Table, aorc.OrcReader]:
    async with aorc.open_reader(store, storage_options=options or None) as reader:
        return await reader.read(columns, filters=filters), reader


async def stripe_footer(data: bytes, index: int) -> Any:
    """A stripe footer, read through another reader (not counted)."""
    async with aorc.open_reader(data) as reader:
        return await reader.read_stripe_footer(index)


async def test_point_lookup_takes_three_rounds(lookup_file: tuple[bytes, pa.Table]) -> None:
    data, t = lookup_file
    store = RoundStore(data)
    got, reader = await lookup(store, [("id", "==", KEY)])
    assert got.equals(t.filter(pc.equal(t["id"], KEY)))
    assert len(reader.stripes) >= 4
    assert store.rounds == 3
    (stripe,) = [s for s in reader.stripes if s.offset <= store.requests[2][1] < s.offset
                 + s.length]
    second = [(o, n) for r, o, n in store.requests if r == 2]
    assert sorted(second) == [(stripe.offset, stripe.index_length),
                              (stripe.offset + stripe.index_length + stripe.data_length,
                               stripe.footer_length)]
    third = [(o, n) for r, o, n in store.requests if r == 3]
    assert len(third) <= 8  # a few streams per column (wide files: test_wide_point_lookup_*)
    assert all(stripe.offset + stripe.index_length <= o
               and o + n <= stripe.offset + stripe.index_length + stripe.data_length
               for o, n in third)
    # The surviving row group (10,000 of the stripe's rows) and its compression chunks:
    # far less than the stripe.
    assert sum(n for o, n in third) < stripe.data_length / 4
    assert reader.scan_stats.row_groups_read == 1


async def test_no_gap_larger_than_the_wanted_bytes_is_read(
        uuid_bloom_file: tuple[bytes, pa.Table], monkeypatch: pytest.MonkeyPatch) -> None:
    """With index streams fetched one by one (a group whose index streams are too large
    to fetch whole): the bloom filter stream of ``uuid`` between the row indexes of ``id``
    and ``small`` is not pulled in by the 1 MiB merge distance."""
    import aorc.read.reader

    monkeypatch.setattr(aorc.read.reader, "WHOLE_READ_BYTES", 0)
    data, t = uuid_bloom_file
    store = RoundStore(data)
    got, reader = await lookup(store, [("id", "==", KEY)], ["id", "small"])
    assert got.equals(t.filter(pc.equal(t["id"], KEY)).select(["id", "small"]))
    assert store.rounds == 4  # tail, footer, index streams, data
    index = [(o, n) for r, o, n in store.requests if r == 3]
    (stripe,) = [s for s in reader.stripes if s.offset <= index[0][0] < s.offset + s.length]
    footer = await stripe_footer(data, stripe.index)
    (bloom,) = [s for s in footer.streams if s.kind == "BLOOM_FILTER_UTF8" and s.column == 2]
    assert bloom.length > 10_000
    for o, n in index:
        assert o + n <= bloom.offset or o >= bloom.offset + bloom.length
    wanted = sum(s.length for s in footer.streams
                 if s.kind == "ROW_INDEX" and s.column in (1, 4))
    assert sum(n for _, n in index) == wanted


async def test_range_filter_reads_no_bloom_filter(lookup_file: tuple[bytes, pa.Table],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    import aorc.read.reader

    monkeypatch.setattr(aorc.read.reader, "WHOLE_READ_BYTES", 0)
    data, t = lookup_file
    store = RoundStore(data)
    got, reader = await lookup(store, [("id", ">=", ROWS - 5)], ["id"])
    assert got.equals(t.filter(pc.greater_equal(t["id"], ROWS - 5)).select(["id"]))
    last = reader.stripes[-1]
    footer = await stripe_footer(data, last.index)
    blooms = [s for s in footer.streams if s.kind == "BLOOM_FILTER_UTF8" and s.length]
    assert blooms
    for _, o, n in store.requests:
        assert not any(o < s.offset + s.length and s.offset < o + n for s in blooms)


async def test_point_lookup_on_s3(s3_client: Any, s3_bucket: str, s3_proxy: S3Proxy,
                                  lookup_file: tuple[bytes, pa.Table]) -> None:
    """Over S3 the lookup sends the requests the counting store saw, and receives the
    same bytes."""
    data, t = lookup_file
    s3_client.put_object(Bucket=s3_bucket, Key="lookup.orc", Body=data)
    counted = RoundStore(data)
    await lookup(counted, [("id", "==", KEY)])
    got, reader = await lookup(f"s3://{s3_bucket}/lookup.orc", [("id", "==", KEY)],
                               endpoint_url=s3_proxy.url)
    assert got.equals(t.filter(pc.equal(t["id"], KEY)))
    assert len(s3_proxy.records("GetObject")) == len(counted.requests) <= 1 + 2 + 8
    assert reader.io_stats.requests == len(counted.requests)
    tail = 16384
    assert reader.io_stats.bytes == tail + sum(n for r, _, n in counted.requests if r > 1)


def check_wide_lookup(requests: list[tuple[int, int, int]], rounds: int) -> None:
    """Three rounds: the data round's requests (more than S3's max_concurrency) were all
    sent before any of them was answered -- one wave, not two."""
    data = [(o, n) for r, o, n in requests if r >= 3]
    assert len(data) > DEFAULT_S3_CONCURRENCY
    assert rounds == 3, f"the {len(data)} data requests went out in {rounds - 2} waves"


async def test_wide_point_lookup_is_one_wave(wide_file: tuple[bytes, pa.Table]) -> None:
    data, t = wide_file
    store = RoundStore(data, StoreOptions(max_concurrency=DEFAULT_S3_CONCURRENCY))
    got, reader = await lookup(store, [("id", "==", KEY)])
    assert got.equals(t.filter(pc.equal(t["id"], KEY)))
    assert reader.scan_stats.row_groups_read == 1
    check_wide_lookup(store.requests, store.rounds)


async def test_wide_point_lookup_on_s3_is_one_wave(
        s3_client: Any, s3_bucket: str, s3_proxy: S3Proxy,
        wide_file: tuple[bytes, pa.Table]) -> None:
    """On S3 (its default concurrency), counted by the store and by the proxy."""
    data, t = wide_file
    s3_client.put_object(Bucket=s3_bucket, Key="wide.orc", Body=data)
    store = RoundS3Store(s3_bucket, "wide.orc",
                         S3Config.from_options({"endpoint_url": s3_proxy.url}))
    got, reader = await lookup(store, [("id", "==", KEY)])
    assert got.equals(t.filter(pc.equal(t["id"], KEY)))
    check_wide_lookup(store.requests, store.rounds)
    assert len(s3_proxy.records("GetObject")) == len(store.requests)


# =========================================================================== warm lookups

def stripe_of(reader: aorc.OrcReader, row: int) -> Any:
    """The stripe holding row ``row`` (``id`` is the row number)."""
    start = 0
    for s in reader.stripes:
        if start <= row < start + s.num_rows:
            return s, start
        start += s.num_rows
    raise AssertionError(row)


def other_key(reader: aorc.OrcReader) -> int:
    """A key in KEY's stripe but in another row group."""
    stripe, start = stripe_of(reader, KEY)
    key = KEY + 2 * reader.row_index_stride
    assert key < start + stripe.num_rows
    return key


def footer_range(stripe: Any) -> tuple[int, int]:
    return stripe.offset + stripe.index_length + stripe.data_length, stripe.footer_length


@pytest.mark.parametrize(("op", "columns", "kinds"), [
    ("==", ["id"], {(1, "ROW_INDEX"), (1, "BLOOM_FILTER_UTF8")}),
    ("==", ["id", "small"], {(1, "ROW_INDEX"), (1, "BLOOM_FILTER_UTF8"), (4, "ROW_INDEX")}),
    (">=", ["id"], {(1, "ROW_INDEX")}),  # a range: no bloom filter
])
async def test_warm_lookup_fetches_only_the_index_streams_it_needs(
        lookup_file: tuple[bytes, pa.Table], op: str, columns: list[str],
        kinds: set[tuple[int, str]]) -> None:
    """The second lookup on a reader sends no footer request and no whole index region:
    the index streams its filter needs (row indexes of the filter and read columns, the
    bloom filter for ``==``), then the row group."""
    data, t = lookup_file
    store = RoundStore(data)
    async with aorc.open_reader(store) as reader:
        first = await reader.read(filters=[("id", "==", KEY)])
        key = other_key(reader)
        store._start_recording()
        filters = [("id", op, key)] if op == "==" else [("id", ">=", key),
                                                        ("id", "<", key + 3)]
        got = await reader.read(columns, filters=filters)
        stripe, _ = stripe_of(reader, KEY)
        footer = await stripe_footer(data, stripe.index)
    assert first.equals(t.filter(pc.equal(t["id"], KEY)))
    mask = pc.equal(t["id"], key) if op == "==" else pc.and_(
        pc.greater_equal(t["id"], key), pc.less(t["id"], key + 3))
    assert got.equals(t.filter(mask).select(columns))
    assert got.num_rows == (1 if op == "==" else 3)
    assert store.rounds == 2  # the index streams, the row group: no tail, no footer
    footers = {footer_range(s) for s in reader.stripes}
    assert not footers & {(o, n) for _, o, n in store.requests}
    index = [(o, n) for r, o, n in store.requests if r == 1]
    wanted = [(s.offset, s.length) for s in footer.streams if (s.column, s.kind) in kinds]
    assert merge_ranges(index) == merge_ranges(wanted)
    assert sum(n for _, n in index) == sum(n for _, n in wanted) < stripe.index_length
    data_area = (stripe.offset + stripe.index_length, stripe.data_length)
    assert all(data_area[0] <= o and o + n <= sum(data_area)
               for r, o, n in store.requests if r == 2)


async def test_warm_lookup_in_a_stripe_not_read_yet_fetches_its_footer(
        lookup_file: tuple[bytes, pa.Table]) -> None:
    """Only the footers of stripes read before are known: another stripe's lookup fetches
    its footer (and index region) first, without the tail."""
    data, t = lookup_file
    store = RoundStore(data)
    async with aorc.open_reader(store) as reader:
        await reader.read(filters=[("id", "==", KEY)])
        stripe, start = stripe_of(reader, KEY)
        key = start - 5  # the previous stripe (the last is small: read whole)
        store._start_recording()
        got = await reader.read(filters=[("id", "==", key)])
        other, _ = stripe_of(reader, key)
    assert got.equals(t.filter(pc.equal(t["id"], key)))
    assert store.rounds == 2  # footer and index region, the row group
    assert footer_range(other) in {(o, n) for r, o, n in store.requests if r == 1}


async def test_lookup_after_the_version_changes_fetches_the_footer_again(
        lookup_file: tuple[bytes, pa.Table]) -> None:
    """Footers are kept for the ETag the store is pinned to: another one drops them."""
    data, t = lookup_file
    store = RoundStore(data)
    store.etag = '"v1"'  # type: ignore[attr-defined]
    async with aorc.open_reader(store) as reader:
        assert reader.etag == '"v1"'
        await reader.read(filters=[("id", "==", KEY)])
        stripe, _ = stripe_of(reader, KEY)
        store._start_recording()
        await reader.read(filters=[("id", "==", other_key(reader))])
        assert footer_range(stripe) not in {(o, n) for _, o, n in store.requests}
        store.etag = '"v2"'  # type: ignore[attr-defined]
        store._start_recording()
        got = await reader.read(filters=[("id", "==", KEY)])
        assert footer_range(stripe) in {(o, n) for _, o, n in store.requests}
    assert got.equals(t.filter(pc.equal(t["id"], KEY)))


async def test_warm_point_lookup_on_s3(s3_client: Any, s3_bucket: str, s3_proxy: S3Proxy,
                                       lookup_file: tuple[bytes, pa.Table]) -> None:
    """Over S3 the warm lookup sends the requests the counting store saw."""
    data, t = lookup_file
    s3_client.put_object(Bucket=s3_bucket, Key="warm.orc", Body=data)
    counted = RoundStore(data)
    async with aorc.open_reader(counted) as reader:
        await reader.read(filters=[("id", "==", KEY)])
        key = other_key(reader)
        counted._start_recording()
        await reader.read(filters=[("id", "==", key)])
    options = {"endpoint_url": s3_proxy.url}
    async with aorc.open_reader(f"s3://{s3_bucket}/warm.orc",
                                storage_options=options) as reader:
        await reader.read(filters=[("id", "==", KEY)])
        s3_proxy.reset()
        before = reader.io_stats.snapshot()
        got = await reader.read(filters=[("id", "==", key)])
        requests = reader.io_stats.requests - before.requests
        nbytes = reader.io_stats.bytes - before.bytes
    assert got.equals(t.filter(pc.equal(t["id"], key)))
    assert counted.rounds == 2
    gets = s3_proxy.records("GetObject")
    assert len(gets) == requests == len(counted.requests)
    assert nbytes == sum(n for _, _, n in counted.requests)
    headers = [{k.lower(): v for k, v in r.headers.items()} for r in gets]
    assert all(h.get("if-match") == reader.etag for h in headers)  # pinned to the version
    sent = sorted((int(a), int(b) - int(a) + 1) for a, b in (
        h["range"].removeprefix("bytes=").split("-") for h in headers))
    assert sent == sorted((o, n) for _, o, n in counted.requests)
    assert not {footer_range(s) for s in reader.stripes} & set(sent)


async def test_warm_lookup_of_a_replaced_object_fails(
        s3_client: Any, s3_bucket: str, s3_proxy: S3Proxy,
        lookup_file: tuple[bytes, pa.Table], uuid_bloom_file: tuple[bytes, pa.Table]) -> None:
    """The kept footer is never used with another version's bytes: the object replaced
    between two lookups, the second fails (every request is pinned to the first ETag)."""
    data, _ = lookup_file
    s3_client.put_object(Bucket=s3_bucket, Key="replaced.orc", Body=data)
    options = {"endpoint_url": s3_proxy.url}
    async with aorc.open_reader(f"s3://{s3_bucket}/replaced.orc",
                                storage_options=options) as reader:
        await reader.read(filters=[("id", "==", KEY)])
        key = other_key(reader)
        s3_client.put_object(Bucket=s3_bucket, Key="replaced.orc", Body=uuid_bloom_file[0])
        with pytest.raises(ObjectChangedError):
            await reader.read(filters=[("id", "==", key)])
