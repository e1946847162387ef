"""S3Store against moto's HTTP server: one-request open, ranges, version pinning, errors,
retries through botocore, client reuse; and the S3 settings (S3Config)."""

from __future__ import annotations

import asyncio
import gc
import threading
import warnings
from typing import Any

import aiohttp
import pytest
from botocore.exceptions import ClientError
from helpers.s3proxy import Fault, Hold, S3Proxy, fail_first

from aorc.errors import (
    AccessDeniedError,
    CorruptFileError,
    ObjectChangedError,
    ObjectNotFoundError,
    RetriesExhaustedError,
    SchemaError,
    StoreError,
)
from aorc.io import S3Store, Store, close_clients, open_output, open_store, plan_ranges
from aorc.io.s3.clients import parse_timestamp
from aorc.io.s3.config import DEFAULT_PART_SIZE, S3Config, is_s3_url, parse_s3_url

DATA = bytes((i * 7919) % 251 for i in range(300_000))
TAIL = 16 * 1024


def put(client: Any, bucket: str, key: str, data: bytes) -> str:
    etag: str = client.put_object(Bucket=bucket, Key=key, Body=data)["ETag"]
    return etag


def via(proxy: S3Proxy, **extra: Any) -> dict[str, Any]:
    return {"endpoint_url": proxy.url, **extra}


# =========================================================================== settings

def test_parse_s3_url() -> None:
    assert parse_s3_url("s3://bkt/a/b.orc") == ("bkt", "a/b.orc")
    assert parse_s3_url("S3A://bkt/x?y#z") == ("bkt", "x?y#z")  # keys are taken verbatim
    assert is_s3_url("s3://b/k") and not is_s3_url("/tmp/s3://x") and not is_s3_url(b"s3://")
    for bad in ("s3://", "s3://bkt", "s3://bkt/", "s3:///key", "s3://bkt/dir/"):
        with pytest.raises(SchemaError, match="bucket and an object key"):
            parse_s3_url(bad)


def test_config_from_options() -> None:
    default = S3Config.from_options(None)
    assert default.store.max_concurrency == 8  # the local default is 10
    assert default.store.max_request_size == 8 * 1024 * 1024  # big stripes in parallel
    assert default.part_size == DEFAULT_PART_SIZE
    assert default.effective_memory_budget == 9 * DEFAULT_PART_SIZE
    assert default.checksum_algorithm == "CRC32"
    config = S3Config.from_options({
        "endpoint_url": "http://127.0.0.1:9", "region_name": "eu-west-1", "key": "AK",
        "secret": "SECRET", "token": "TOKEN", "retry_mode": "adaptive", "max_attempts": 7,
        "max_pool_connections": 5, "addressing_style": "path", "max_concurrency": 3,
        "max_merge_distance": 0, "part_size": 6 * 1024 * 1024, "checksum_algorithm": "sha256",
    })
    assert config.store.max_concurrency == 3 and config.store.max_merge_distance == 0
    assert config.checksum_algorithm == "SHA256"
    kwargs = config.botocore_config_kwargs()
    assert kwargs["retries"] == {"mode": "adaptive", "total_max_attempts": 7}
    assert kwargs["max_pool_connections"] == 5
    assert kwargs["s3"] == {"addressing_style": "path"}
    assert config.client_kwargs() == {
        "endpoint_url": "http://127.0.0.1:9", "region_name": "eu-west-1",
        "aws_access_key_id": "AK", "aws_secret_access_key": "SECRET",
        "aws_session_token": "TOKEN"}
    assert "SECRET" not in repr(config) and "TOKEN" not in repr(config)
    assert "SECRET" not in config.client_key()
    no_checksum = S3Config.from_options({"checksum_algorithm": None})
    assert no_checksum.botocore_config_kwargs()["request_checksum_calculation"] == "when_required"


@pytest.mark.parametrize(("options", "match"), [
    ({"bogus": 1}, "unknown storage option"),
    ({"part_size": 1024}, "part_size"),
    ({"retry_mode": "eager"}, "retry mode"),
    ({"max_attempts": 0}, "max_attempts"),
    ({"config": {"nonsense": 1}}, "botocore client config"),
    ({"key": "a"}, "together"),
    ({"region": "x", "region_name": "y"}, "twice"),
    ({"max_concurrency": 0}, "max_concurrency"),
    ({"checksum_algorithm": "MD5"}, "checksum_algorithm"),
    ({"response_checksum_validation": "never"}, "response_checksum_validation"),
    ({"fsync": True}, "unknown storage option"),
])
def test_config_rejections(options: dict[str, Any], match: str) -> None:
    with pytest.raises(SchemaError, match=match):
        S3Config.from_options(options)


def test_scalar_options_are_parsed_once() -> None:
    options = {"endpoint_url": "http://127.0.0.1:9", "max_concurrency": 3, "anon": True}
    first = S3Config.from_options(options)
    assert S3Config.from_options(dict(reversed(options.items()))) is first
    assert S3Config.from_options({**options, "max_concurrency": 4}) is not first
    # a botocore Config object is not a cache key: parsed each time, still right
    from botocore.config import Config
    with_config = S3Config.from_options({"config": Config(read_timeout=7)})
    assert with_config.botocore_config_kwargs()["read_timeout"] == 7
    with pytest.raises(SchemaError, match="max_concurrency"):  # errors are not cached away
        S3Config.from_options({"max_concurrency": 0})
    with pytest.raises(SchemaError, match="max_concurrency"):
        S3Config.from_options({"max_concurrency": 0})


def test_parameter_validation_is_off_unless_asked_for() -> None:
    assert S3Config.from_options({}).botocore_config_kwargs()["parameter_validation"] is False
    on = S3Config.from_options({"config": {"parameter_validation": True}})
    assert on.botocore_config_kwargs()["parameter_validation"] is True


def test_response_checksum_validation_option() -> None:
    kwargs = S3Config.from_options(
        {"response_checksum_validation": "when_required"}).botocore_config_kwargs()
    assert kwargs["response_checksum_validation"] == "when_required"
    assert "response_checksum_validation" not in S3Config.from_options(
        {}).botocore_config_kwargs()  # botocore's default: "when_supported"


@pytest.mark.parametrize("value", [
    "Wed, 25 Nov 2026 00:01:02 GMT", "2026-11-25T00:01:02.000Z", "2026-11-25T00:01:02Z",
    "2026-11-25T00:01:02+02:00", "2026-11-25T00:01:02", "1700000000", 1700000000,
    "Tue, 01 Mar 2022 23:59:59 GMT"])
def test_parse_timestamp_matches_botocore(value: Any,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    import botocore.utils

    want = botocore.utils.parse_timestamp(value)
    fallbacks: list[Any] = []
    original = botocore.utils.parse_timestamp
    monkeypatch.setattr(botocore.utils, "parse_timestamp",
                        lambda v: fallbacks.append(v) or original(v))
    got = parse_timestamp(value)
    assert got == want and got.utcoffset() == want.utcoffset()
    # S3's two forms (headers, XML bodies) never need botocore's slow parser
    fast = isinstance(value, str) and (value.endswith(" GMT") or "T" in value)
    assert fallbacks == ([] if fast else [value])


async def test_whole_object_checksums_are_asked_for_by_default(
        s3_client: Any, s3_bucket: str, s3_proxy: S3Proxy) -> None:
    """By default GetObject asks S3 for the object's checksum (botocore then verifies a
    whole object's bytes); ``response_checksum_validation="when_required"`` does not."""
    put(s3_client, s3_bucket, "small.bin", DATA[:1000])
    for options, asked in (({}, True),
                           ({"response_checksum_validation": "when_required"}, False)):
        s3_proxy.log.clear()
        async with open_store(f"s3://{s3_bucket}/small.bin", via(s3_proxy, **options)) as store:
            assert await store.read_tail(TAIL) == (DATA[:1000], 1000)
        (get,) = s3_proxy.records("GetObject")
        assert (get.headers.get("x-amz-checksum-mode") == "ENABLED") is asked


def test_client_key_follows_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    config = S3Config.from_options({})
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:1")
    first = config.client_key()
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:2")
    assert config.client_key() != first


def test_open_store_dispatches_s3() -> None:
    store = open_store("s3://bkt/dir/file.orc", {"max_concurrency": 3})
    assert isinstance(store, S3Store) and isinstance(store, Store)
    assert (store.bucket, store.key, store.path) == ("bkt", "dir/file.orc",
                                                     "s3://bkt/dir/file.orc")
    assert store.options.max_concurrency == 3
    assert open_store("s3a://bkt/k").options.max_concurrency == 8  # type: ignore[attr-defined]
    with pytest.raises(SchemaError, match="unknown storage option"):
        open_store("s3://bkt/k", {"fsync": False})


# =========================================================================== reading

async def test_open_is_one_suffix_request(s3_client: Any, s3_bucket: str,
                                          s3_proxy: S3Proxy) -> None:
    etag = put(s3_client, s3_bucket, "big.bin", DATA)
    async with open_store(f"s3://{s3_bucket}/big.bin", via(s3_proxy)) as store:
        tail, size = await store.read_tail(TAIL)
        assert (tail, size) == (DATA[-TAIL:], len(DATA))
        assert store.etag == etag  # type: ignore[attr-defined]
        assert store.stats.requests == 1 and store.stats.bytes == TAIL
    ops = [(r.operation, r.headers.get("range"), r.headers.get("if-match")) for r in s3_proxy.log]
    assert ops == [("GetObject", f"bytes=-{TAIL}", None)]  # no HEAD, no size lookup


async def test_small_object_comes_back_whole(s3_client: Any, s3_bucket: str,
                                             s3_proxy: S3Proxy) -> None:
    put(s3_client, s3_bucket, "small.bin", DATA[:1000])
    put(s3_client, s3_bucket, "empty.bin", b"")
    async with open_store(f"s3://{s3_bucket}/small.bin", via(s3_proxy)) as store:
        assert await store.read_tail(TAIL) == (DATA[:1000], 1000)
        assert await store.read_range(10, 20) == DATA[10:30]
        with pytest.raises(CorruptFileError, match="shorter"):
            await store.read_range(990, 20)
        with pytest.raises(CorruptFileError, match="shorter"):
            await store.read_range(5000, 20)  # wholly beyond the end (416 from S3)
    async with open_store(f"s3://{s3_bucket}/empty.bin", via(s3_proxy)) as store:
        assert await store.read_tail(TAIL) == (b"", 0)
    assert len(s3_proxy.log) == 5


async def test_ranges_are_coalesced_pinned_and_parallel(s3_client: Any, s3_bucket: str,
                                                        s3_proxy: S3Proxy) -> None:
    etag = put(s3_client, s3_bucket, "big.bin", DATA)
    ranges = [(0, 100), (150, 50), (100_000, 1000), (101_500, 10), (250_000, 40_000)]
    # More bytes than one request: not a burst (see test_small_batch_is_one_burst).
    options = via(s3_proxy, max_merge_distance=1000, max_concurrency=2,
                  max_request_size=40_000)
    expected_requests = plan_ranges(ranges, max_merge_distance=1000,
                                    max_request_size=40_000).requests
    assert len(expected_requests) == 3
    # The proxy holds the ranged requests until two of them have arrived: they are then
    # in flight together whatever the machine's speed (a latency let a client stalled
    # between its sends find the first request answered). A client that sends one at a
    # time never releases the hold: the 120 s bound (a hang guard) turns that into a failure.
    paired = threading.Event()
    held: list[str] = []

    def pair_up(request: Any) -> Hold | None:  # in the proxy's thread
        if request.operation != "GetObject":
            return None
        held.append(request.headers.get("range", ""))
        if len(held) == 2:
            paired.set()
        return Hold(paired)

    async with open_store(f"s3://{s3_bucket}/big.bin", options) as store:
        await store.read_tail(TAIL)
        s3_proxy.rules.append(pair_up)
        try:
            got = await asyncio.wait_for(store.read_ranges(ranges), 120)
        finally:
            paired.set()
        assert got == [DATA[o:o + n] for o, n in ranges]
        assert store.stats.requests == 4
    reads = s3_proxy.log[1:]
    assert sorted(r.headers["range"] for r in reads) == sorted(
        f"bytes={o}-{o + n - 1}" for o, n in expected_requests)
    assert all(r.headers.get("if-match") == etag for r in reads)
    # at most max_concurrency=2 at once, and really 2 at once
    events = sorted([(r.start, 1) for r in reads] + [(r.end, -1) for r in reads])
    level = peak = 0
    for _, step in events:
        level += step
        peak = max(peak, level)
    assert peak == 2


async def test_small_batch_is_one_burst(s3_client: Any, s3_bucket: str,
                                        s3_proxy: S3Proxy) -> None:
    """Ranges too far apart to merge, fetching less than one request's bytes in all: all
    their requests are in flight at once, beyond max_concurrency (one client-side event
    count: every request was sent before any answer arrived)."""
    put(s3_client, s3_bucket, "far.bin", DATA)
    ranges = [(i * 20_000, 100) for i in range(12)]
    store = CountingS3Store(s3_bucket, "far.bin",
                            S3Config.from_options(via(s3_proxy, max_concurrency=2)))
    async with store:
        await store.read_tail(TAIL)
        store.peak = 0
        got = await store.read_ranges(ranges)
    assert got == [DATA[o:o + n] for o, n in ranges]
    assert store.peak == 12 and store.sent_before_first_answer == 12
    assert len(s3_proxy.records("GetObject")) == 13


class CountingS3Store(S3Store):
    """Counts the requests in flight (sent, not yet answered) from the client's side."""

    peak = 0
    sent_before_first_answer = 0
    _inflight = 0
    _answered = False

    async def _fetch(self, offset: int, length: int) -> bytes:
        self._inflight += 1
        self.peak = max(self.peak, self._inflight)
        if not self._answered:
            self.sent_before_first_answer += 1
        try:
            return await super()._fetch(offset, length)
        finally:
            self._inflight -= 1
            self._answered = True


async def test_replaced_object_is_detected(s3_client: Any, s3_bucket: str) -> None:
    put(s3_client, s3_bucket, "obj.bin", DATA)
    async with open_store(f"s3://{s3_bucket}/obj.bin") as store:
        await store.read_tail(TAIL)
        assert await store.read_range(0, 10) == DATA[:10]
        put(s3_client, s3_bucket, "obj.bin", DATA[::-1])
        with pytest.raises(ObjectChangedError, match="replaced") as info:
            await store.read_range(0, 10)
        assert isinstance(info.value.__cause__, ClientError)


async def test_if_match_pins_the_first_read_too(s3_client: Any, s3_bucket: str,
                                                s3_proxy: S3Proxy) -> None:
    url = f"s3://{s3_bucket}/obj.bin"
    etag = put(s3_client, s3_bucket, "obj.bin", DATA)
    async with open_store(url, via(s3_proxy, if_match=etag)) as store:
        assert await store.read_tail(TAIL) == (DATA[-TAIL:], len(DATA))
        assert await store.read_range(0, 10) == DATA[:10]
    assert [r.headers.get("if-match") for r in s3_proxy.log] == [etag, etag]
    put(s3_client, s3_bucket, "obj.bin", DATA[::-1])  # a new version: the pin fails at once
    with pytest.raises(ObjectChangedError, match="if_match"):
        async with open_store(url, {"if_match": etag}) as store:
            await store.read_tail(TAIL)
    for bad in ("", 3, b"etag"):
        with pytest.raises(SchemaError, match="if_match"):
            open_store(url, {"if_match": bad})
    with pytest.raises(SchemaError, match="does not apply to writes"):
        open_output(url, {"if_match": etag})


async def test_missing_object_and_bucket(s3_client: Any, s3_bucket: str) -> None:
    with pytest.raises(ObjectNotFoundError, match="no such object") as info:
        async with open_store(f"s3://{s3_bucket}/nope.orc") as store:
            await store.read_tail(TAIL)
    assert isinstance(info.value.__cause__, ClientError)
    assert isinstance(info.value, FileNotFoundError)
    with pytest.raises(ObjectNotFoundError, match="no such bucket"):
        async with open_store("s3://no-such-bucket-here/x.orc") as store:
            await store.read_tail(TAIL)


async def test_access_denied(s3_client: Any, s3_bucket: str, s3_proxy: S3Proxy) -> None:
    put(s3_client, s3_bucket, "obj.bin", DATA)
    s3_proxy.rules.append(lambda request: Fault(403, "AccessDenied"))
    with pytest.raises(AccessDeniedError, match="access denied") as info:
        async with open_store(f"s3://{s3_bucket}/obj.bin", via(s3_proxy)) as store:
            await store.read_tail(TAIL)
    assert isinstance(info.value.__cause__, ClientError)
    assert len(s3_proxy.log) == 1  # not retried


async def test_transient_error_is_retried_by_default(s3_client: Any, s3_bucket: str,
                                                     s3_proxy: S3Proxy) -> None:
    """No retry settings anywhere: botocore's standard mode (not legacy) retries, with its
    real backoff."""
    put(s3_client, s3_bucket, "obj.bin", DATA)
    s3_proxy.rules.append(fail_first("GetObject", 1, 503, "ServiceUnavailable"))
    async with open_store(f"s3://{s3_bucket}/obj.bin", via(s3_proxy)) as store:
        assert await store.read_tail(TAIL) == (DATA[-TAIL:], len(DATA))
        assert store.stats.retries == 1
        headers = s3_proxy.log[-1].headers
        assert "attempt=2" in headers["amz-sdk-request"]
        assert "max=3" in headers["amz-sdk-request"]  # standard mode: 3 attempts
    assert [r.status for r in s3_proxy.log] == [503, 206]


async def test_transient_errors_are_retried(s3_client: Any, s3_bucket: str,
                                            s3_proxy: S3Proxy, fast_retries: list[float]
                                            ) -> None:
    put(s3_client, s3_bucket, "obj.bin", DATA)
    s3_proxy.rules.append(fail_first("GetObject", 2, 503, "ServiceUnavailable"))
    s3_proxy.rules.append(fail_first("GetObject", 1, 500, "InternalError"))
    options = via(s3_proxy, max_attempts=4)
    async with open_store(f"s3://{s3_bucket}/obj.bin", options) as store:
        assert await store.read_tail(TAIL) == (DATA[-TAIL:], len(DATA))
        assert await store.read_range(1000, 5000) == DATA[1000:6000]
        assert store.stats.requests == 2
        assert store.stats.retries == 3
    assert [r.status for r in s3_proxy.log] == [503, 503, 500, 206, 206]
    assert len(fast_retries) == 3  # each retry went through botocore's backoff


async def test_retries_exhausted(s3_client: Any, s3_bucket: str, s3_proxy: S3Proxy,
                                 fast_retries: list[float]) -> None:
    put(s3_client, s3_bucket, "obj.bin", DATA)
    s3_proxy.rules.append(lambda request: Fault(500, "InternalError"))
    options = via(s3_proxy, retry_mode="standard", max_attempts=2)
    with pytest.raises(RetriesExhaustedError, match="2 attempt") as info:
        async with open_store(f"s3://{s3_bucket}/obj.bin", options) as store:
            await store.read_tail(TAIL)
    assert isinstance(info.value.__cause__, ClientError)
    assert len(s3_proxy.log) == 2


async def test_connection_refused_is_retries_exhausted(s3_env: str) -> None:
    options = {"endpoint_url": "http://127.0.0.1:9", "max_attempts": 1}
    with pytest.raises(RetriesExhaustedError):
        async with open_store("s3://bkt/obj.bin", options) as store:
            await store.read_tail(TAIL)


async def test_clients_are_shared(s3_client: Any, s3_bucket: str, s3_proxy: S3Proxy) -> None:
    put(s3_client, s3_bucket, "obj.bin", DATA)
    url = f"s3://{s3_bucket}/obj.bin"
    stores = [open_store(url) for _ in range(3)] + [open_store(url, via(s3_proxy))]
    await asyncio.gather(*(s.read_tail(TAIL) for s in stores))  # type: ignore[attr-defined]
    clients = [s._lease.client for s in stores]  # type: ignore[attr-defined]
    assert clients[0] is clients[1] is clients[2]
    assert clients[3] is not clients[0]  # another endpoint, another client
    for store in stores:
        await store.close()
    async with open_store(url) as again:
        await again.read_tail(10)
        assert again._lease.client is clients[0]  # type: ignore[attr-defined]
    await close_clients()
    async with open_store(url) as fresh:  # a new client after close_clients
        assert await fresh.read_range(0, 3) == DATA[:3]
        assert fresh._lease.client is not clients[0]  # type: ignore[attr-defined]


def test_clients_close_with_the_loop(s3_client: Any, s3_bucket: str) -> None:
    """Under asyncio.run, clients left open are closed at loop shutdown: no ResourceWarning
    ("Unclosed client session") even for a store that was never closed."""
    put(s3_client, s3_bucket, "obj.bin", DATA)

    async def main() -> Store:
        store = open_store(f"s3://{s3_bucket}/obj.bin")
        assert (await store.read_tail(100))[1] == len(DATA)  # never closed on purpose
        return store

    def sessions() -> set[int]:  # (test servers in other threads keep their own sessions)
        # type(o), not isinstance(o): gc may hand back a weak proxy whose referent is
        # gone, and isinstance() on it raises ReferenceError (seen once in CI).
        return {id(o) for o in gc.get_objects()
                if issubclass(type(o), aiohttp.ClientSession) and not o.closed}

    before = sessions()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(2):
            store = asyncio.run(main())
            del store
            gc.collect()
            assert sessions() <= before
    assert [str(w.message) for w in caught] == []


async def test_missing_credentials_and_unknown_profile(s3_env: str,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    with pytest.raises(AccessDeniedError, match="no usable AWS credentials") as info:
        async with open_store("s3://bkt/obj.bin") as store:
            await store.read_tail(TAIL)
    assert info.value.__cause__ is not None
    with pytest.raises(StoreError, match="cannot create an S3 client") as info2:
        async with open_store("s3://bkt/obj.bin", {"profile": "no-such-profile"}) as store:
            await store.read_tail(TAIL)
    assert info2.value.__cause__ is not None


def test_settings_errors_never_show_secrets() -> None:
    """A secret of the wrong type, a botocore config holding one, credentials inside an
    endpoint URL: refused, without echoing the secret (issue 20, item 8)."""
    secret = "wJalrXUtnFEMI-K7MDENG-s3cr3t"
    cases: list[dict[str, Any]] = [
        {"aws_secret_access_key": 1234, "aws_access_key_id": "AKIA"},
        {"config": {"not_a_botocore_key": secret}},
        {"config": secret},
        {"endpoint_url": f"https://user:{secret}@minio.example.com"},
    ]
    for options in cases:
        with pytest.raises(SchemaError) as info:
            S3Config.from_options(options)
        assert secret not in str(info.value) and "1234" not in str(info.value), options
    assert secret not in repr(S3Config.from_options({"aws_access_key_id": "AKIA",
                                                     "aws_secret_access_key": secret}))
