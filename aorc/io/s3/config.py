"""Settings of S3 (and S3-compatible) stores: ``s3://`` URLs and ``storage_options``.

Connection settings follow the standard AWS configuration chain: whatever is not given in
``storage_options`` comes from the environment (``AWS_ENDPOINT_URL``, ``AWS_REGION``,
``AWS_ACCESS_KEY_ID``, ``AWS_PROFILE``, ``AWS_RETRY_MODE``, ``AWS_MAX_ATTEMPTS``, ...), the
shared config and credentials files and their profiles, as botocore resolves them.

``storage_options`` keys understood for ``s3://`` sources and destinations:

Connection (passed to botocore):
    ``endpoint_url``; ``region`` (or ``region_name``); ``aws_access_key_id`` (or ``key``),
    ``aws_secret_access_key`` (or ``secret``), ``aws_session_token`` (or ``token``);
    ``profile`` (or ``profile_name``); ``anon`` (bool: unsigned requests, for public
    buckets); ``verify`` (bool or a CA bundle path); ``config``: a ``botocore.config.Config``
    or a dict of its keyword arguments; and shortcuts into that config: ``retry_mode``
    (``"standard"`` or ``"adaptive"``; ``"legacy"`` also works), ``max_attempts`` (total
    attempts, first one included), ``retries`` (botocore's dict), ``max_pool_connections``,
    ``connect_timeout``, ``read_timeout``, ``addressing_style`` (``"path"``/``"virtual"``),
    ``response_checksum_validation`` (``"when_supported"``, botocore's default and aorc's:
    a response that carries a checksum -- S3 sends one when a GET returns a whole object
    that was uploaded with one, e.g. a small file read whole -- is verified, at the cost of
    a CRC32 of its bytes; ``"when_required"`` skips that check and relies on TCP's (and
    TLS's, over HTTPS) integrity checks alone).

Reading (aorc):
    ``max_merge_distance`` (1 MiB), ``max_gap_ratio`` (1.0: never more gap than data read
    to save a request), ``max_request_size`` (8 MiB: longer ranges are split
    into parallel requests), ``max_concurrency`` (requests in flight per open file, 8),
    ``engine`` (``"aiobotocore"``, the default, or ``"obstore"``: reads and listings through
    obstore, which costs less CPU per request; see :mod:`aorc.io.s3.obstore_client`; with it,
    ``retry_base_delay`` and ``retry_max_delay`` tune aorc's backoff); ``retry_budget``
    (20 s: a write request botocore gave up on is sent again for this long, see
    :mod:`aorc.io.s3.store`);
    ``max_burst`` (32: requests in flight for a batch of ranges too far apart to merge
    that fetches at most ``max_request_size`` bytes in all; see
    :class:`aorc.io.base.StoreOptions`); ``if_match`` (an ETag: every request of the read,
    the first one too, requires the object to have it, so a read of a version that is no
    longer there fails with :class:`~aorc.errors.ObjectChangedError`; one object's option,
    not a dataset's, and a reading option only); ``max_unranged_bytes`` (256 MiB: an
    S3-compatible store that ignores ``Range`` sends whole objects; one of at most this many
    bytes is kept and served from memory, with a warning; a larger one fails).

Writing (aorc):
    ``part_size`` (8 MiB, at least 5 MiB: S3's smallest part), ``max_concurrency`` (part
    uploads in flight, 8), ``memory_budget`` (bytes buffered plus in flight before
    ``write`` waits; default ``(max_concurrency + 1) * part_size``), ``checksum_algorithm``
    (``"CRC32"`` (default), ``"CRC32C"``, ``"SHA1"``, ``"SHA256"``, or ``None`` to send no
    additional checksum), ``overwrite`` (default true; ``False``: create only, with
    ``If-None-Match: *`` on the ``PutObject`` or ``CompleteMultipartUpload``, so an existing
    object makes the write fail with :class:`~aorc.errors.ObjectExistsError`).

Both sets are accepted on reads and on writes, so one dict can serve both (but for
``if_match``, which writes refuse).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast

from aorc.errors import SchemaError
from aorc.io.base import StoreOptions, masked_repr, take_aliases
from aorc.io.config import StoreConfig
from aorc.io.remote import DEFAULT_MAX_UNRANGED
from aorc.io.transport import RetryPolicy, endpoint_problem, redact_url

__all__ = [
    "DEFAULT_PART_SIZE",
    "DEFAULT_READ_ROUNDS",
    "DEFAULT_S3_CONCURRENCY",
    "DEFAULT_S3_REQUEST_SIZE",
    "ENGINES",
    "MAX_PARTS",
    "MAX_PART_SIZE",
    "MIN_PART_SIZE",
    "S3Config",
    "is_s3_url",
    "parse_s3_url",
    "s3_bucket_of",
]

#: Rounds of botocore's attempts a read request gets when the retries are not configured
#: (botocore's standard mode makes 3 attempts a round: 9 in all, as S3A's 7 and more).
DEFAULT_READ_ROUNDS = 3
#: Requests (reads) or part uploads (writes) in flight at once, per file.
DEFAULT_S3_CONCURRENCY = 8
#: Longest ranged GET: larger ranges (a whole big stripe) are split into pieces of this size
#: fetched in parallel, as one S3 connection alone transfers well below the network's speed.
DEFAULT_S3_REQUEST_SIZE = 8 * 1024 * 1024
#: Size of a multipart upload's parts (the last one may be shorter).
DEFAULT_PART_SIZE = 8 * 1024 * 1024
#: S3's smallest part (except the last one of an upload).
MIN_PART_SIZE = 5 * 1024 * 1024
#: S3's largest part.
MAX_PART_SIZE = 5 * 1024 * 1024 * 1024
#: S3's largest number of parts in one upload.
MAX_PARTS = 10_000
#: Connections per client (shared by every file read or written with the same settings).
DEFAULT_POOL_CONNECTIONS = 32
#: Checksums S3 accepts on uploads.
CHECKSUM_ALGORITHMS = ("CRC32", "CRC32C", "SHA1", "SHA256", "CRC64NVME")

_SCHEMES = ("s3://", "s3a://")

# storage option name -> S3Config field name
_ALIASES = {
    "endpoint_url": "endpoint_url",
    "region": "region", "region_name": "region",
    "aws_access_key_id": "access_key_id", "key": "access_key_id",
    "aws_secret_access_key": "secret_access_key", "secret": "secret_access_key",
    "aws_session_token": "session_token", "token": "session_token",
    "profile": "profile", "profile_name": "profile",
    "anon": "anon", "verify": "verify",
    "part_size": "part_size", "memory_budget": "memory_budget",
    "checksum_algorithm": "checksum_algorithm", "overwrite": "overwrite",
    "max_unranged_bytes": "max_unranged", "engine": "engine",
}
#: The clients S3 reads can go through (``engine`` storage option).
ENGINES = ("aiobotocore", "obstore")
# storage option name -> botocore Config keyword (shortcuts)
_CONFIG_SHORTCUTS = ("max_pool_connections", "connect_timeout", "read_timeout", "retries",
                     "response_checksum_validation")


def is_s3_url(source: object) -> bool:
    """Whether ``source`` is a string naming an S3 object (``s3://`` or ``s3a://``)."""
    return isinstance(source, str) and source[:6].lower().startswith(_SCHEMES)


def s3_bucket_of(url: str) -> tuple[str, str]:
    """The bucket and the key or prefix (possibly empty) of an ``s3://`` URL.

    Raises:
        SchemaError: no bucket, or credentials in the URL (never echoed).
    """
    bucket, _, key = url.partition("://")[2].partition("/")
    if "@" in bucket:
        raise SchemaError(f"an S3 URL must not hold credentials (user:password@), got "
                          f"{redact_url(url)!r}; pass them as storage options")
    if not bucket:
        raise SchemaError(f"an S3 URL must name a bucket, got {redact_url(url)!r}")
    return bucket, key


def parse_s3_url(url: str) -> tuple[str, str]:
    """Split ``s3://bucket/key`` into bucket and key.

    The key is taken verbatim (no percent-decoding; ``?`` and ``#`` are part of it).

    Raises:
        SchemaError: not an s3:// URL, or the bucket or key is missing.
    """
    if not is_s3_url(url):
        raise SchemaError(f"not an s3:// URL: {redact_url(url)!r}")
    bucket, _, key = url.split("://", 1)[1].partition("/")
    if bucket:
        s3_bucket_of(url)  # refuses credentials in the URL
    if not bucket or not key or key.endswith("/"):
        raise SchemaError(f"an S3 URL must name a bucket and an object key "
                          f"(s3://bucket/path/file.orc), got {redact_url(url)!r}")
    return bucket, key


def _positive_int(name: str, value: Any, low: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise SchemaError(f"storage option {name} must be an integer of at least {low}, "
                          f"got {value!r}")
    return value


def _optional_str(name: str, value: Any) -> str | None:
    if value is not None and not isinstance(value, str):  # the type only: it may be a secret
        raise SchemaError(f"storage option {name} must be a string, got a "
                          f"{type(value).__name__}")
    return value


@dataclass(frozen=True)
class S3Config(StoreConfig):
    """Everything needed to reach S3 objects and to tune reads and writes.

    Build it with :meth:`from_options`; fields left ``None`` come from the AWS chain.

    Attributes:
        endpoint_url: the service's URL (e.g. a MinIO or moto server).
        region: the region name.
        access_key_id: explicit credentials (all three or none).
        secret_access_key: explicit credentials.
        session_token: explicit credentials.
        profile: a profile of the shared AWS config files.
        anon: send unsigned requests.
        verify: TLS verification: ``False`` or a CA bundle path (``None``: botocore's).
        client_config: botocore ``Config`` keyword arguments.
        store: read tuning (coalescing, concurrency).
        part_size: bytes per uploaded part.
        memory_budget: most bytes a writer holds buffered plus in flight.
        checksum_algorithm: checksum sent with uploads, or ``None``.
        overwrite: a write replaces an existing object (``False``: it fails with
            :class:`~aorc.errors.ObjectExistsError` instead, checked atomically by S3).
        max_unranged: the most bytes accepted from a store that ignores ``Range``.
        engine: the client of reads and listings: ``"aiobotocore"`` or ``"obstore"``.
        retry: aorc's retry policy: of the obstore engine (``max_attempts``,
            ``retry_base_delay``, ``retry_max_delay``); with aiobotocore, which retries each
            request by its own, of resumed bodies and of writes past botocore's attempts,
            within ``retry_budget`` seconds.
        read_rounds: how many times a read request is handed to botocore (each time for
            its ``max_attempts``) before it fails: :data:`DEFAULT_READ_ROUNDS` unless the
            retries are configured (``max_attempts``, ``retry_mode``, ``retries``): then 1.
    """

    endpoint_url: str | None = None
    region: str | None = None
    access_key_id: str | None = None
    secret_access_key: str | None = None
    session_token: str | None = None
    profile: str | None = None
    anon: bool = False
    verify: bool | str | None = None
    client_config: tuple[tuple[str, Any], ...] = ()
    store: StoreOptions = dataclasses.field(default_factory=lambda: StoreOptions(
        max_concurrency=DEFAULT_S3_CONCURRENCY, max_request_size=DEFAULT_S3_REQUEST_SIZE))
    part_size: int = DEFAULT_PART_SIZE
    memory_budget: int | None = None
    checksum_algorithm: str | None = "CRC32"
    overwrite: bool = True
    max_unranged: int = DEFAULT_MAX_UNRANGED
    engine: str = "aiobotocore"
    retry: RetryPolicy = dataclasses.field(default_factory=RetryPolicy)
    read_rounds: int = DEFAULT_READ_ROUNDS

    def __post_init__(self) -> None:
        for name in ("endpoint_url", "region", "access_key_id", "secret_access_key",
                     "session_token", "profile"):
            _optional_str(name, getattr(self, name))
        if not isinstance(self.anon, bool):
            raise SchemaError(f"storage option anon must be a bool, got {self.anon!r}")
        if self.engine not in ENGINES:
            raise SchemaError(f"storage option engine must be one of {', '.join(ENGINES)}, "
                              f"got {self.engine!r}")
        if not isinstance(self.overwrite, bool):
            raise SchemaError(f"storage option overwrite must be a bool, got "
                              f"{self.overwrite!r}")
        _positive_int("max_unranged_bytes", self.max_unranged)
        problem = endpoint_problem(self.endpoint_url) if self.endpoint_url else None
        if problem is not None:
            raise SchemaError(f"storage option endpoint_url {problem}; got "
                              f"{redact_url(cast(str, self.endpoint_url))}; pass credentials "
                              f"as aws_access_key_id and aws_secret_access_key")
        if self.verify is not None and not isinstance(self.verify, (bool, str)):
            raise SchemaError(f"storage option verify must be a bool or a path, "
                              f"got {self.verify!r}")
        if (self.access_key_id is None) != (self.secret_access_key is None):
            raise SchemaError("storage options aws_access_key_id and aws_secret_access_key "
                              "must be given together")
        _positive_int("part_size", self.part_size, MIN_PART_SIZE)
        if self.part_size > MAX_PART_SIZE:
            raise SchemaError(f"storage option part_size must be at most {MAX_PART_SIZE} "
                              f"(5 GiB), got {self.part_size}")
        if self.memory_budget is not None:
            _positive_int("memory_budget", self.memory_budget)
        if self.checksum_algorithm is not None and (
                not isinstance(self.checksum_algorithm, str)
                or self.checksum_algorithm.upper() not in CHECKSUM_ALGORITHMS):
            raise SchemaError(f"storage option checksum_algorithm must be one of "
                              f"{', '.join(CHECKSUM_ALGORITHMS)} or None, "
                              f"got {self.checksum_algorithm!r}")

    @classmethod
    def _parse(cls, options: dict[str, Any]) -> S3Config:
        options.setdefault("max_concurrency", DEFAULT_S3_CONCURRENCY)
        options.setdefault("max_request_size", DEFAULT_S3_REQUEST_SIZE)
        store = StoreOptions.pop_from(options)
        configured = any(k in options for k in ("max_attempts", "retry_mode", "retries"))
        attempts = options.get("max_attempts")
        retry = RetryPolicy.pop_from({k: options.pop(k) for k in
                                      ("retry_base_delay", "retry_max_delay", "retry_budget")
                                      if k in options}
                                     | ({"max_attempts": attempts} if attempts is not None
                                        else {}))
        fields: dict[str, Any] = {"store": store, "retry": retry,
                                  "read_rounds": 1 if configured else DEFAULT_READ_ROUNDS}
        take_aliases(options, _ALIASES, fields)
        config = _client_config(options)
        if options:
            unknown = ", ".join(sorted(map(str, options)))
            raise SchemaError(f"unknown storage option(s) for s3: {unknown}")
        if isinstance(fields.get("checksum_algorithm"), str):
            fields["checksum_algorithm"] = fields["checksum_algorithm"].upper()
        return cls(client_config=tuple(sorted(config.items())), **fields)

    @property
    def effective_memory_budget(self) -> int:
        """The writer's memory budget: the option, or enough for every upload slot plus
        one part being filled."""
        if self.memory_budget is not None:
            return self.memory_budget
        return (self.store.max_concurrency + 1) * self.part_size

    def botocore_config_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for ``botocore.config.Config`` (aiobotocore's ``AioConfig``).

        Returns:
            The keyword arguments.
        """
        # aorc builds every request's parameters itself: botocore's check of them against
        # the service model (its parameter_validation, which the botocore docs suggest
        # turning off for speed) would only cost time on each request. A ``config``
        # option can turn it back on.
        kwargs: dict[str, Any] = {"max_pool_connections": DEFAULT_POOL_CONNECTIONS,
                                  "user_agent_extra": "aorc", "parameter_validation": False}
        kwargs.update(_thaw(dict(self.client_config)))
        if self.checksum_algorithm is None:  # no automatic CRC32 either
            kwargs.setdefault("request_checksum_calculation", "when_required")
        if self.anon:
            from botocore import UNSIGNED
            kwargs["signature_version"] = UNSIGNED
        return kwargs

    def client_kwargs(self) -> dict[str, Any]:
        """Keyword arguments of ``create_client`` other than ``config``.

        Returns:
            The keyword arguments.
        """
        kwargs: dict[str, Any] = {}
        if self.endpoint_url is not None:
            kwargs["endpoint_url"] = self.endpoint_url
        if self.region is not None:
            kwargs["region_name"] = self.region
        if self.access_key_id is not None:
            kwargs["aws_access_key_id"] = self.access_key_id
            kwargs["aws_secret_access_key"] = self.secret_access_key
            kwargs["aws_session_token"] = self.session_token
        if self.verify is not None:
            kwargs["verify"] = self.verify
        return kwargs

    def client_key(self) -> str:
        """A digest of everything that shapes a client: the connection settings and the
        ``AWS_*`` environment (so a changed environment gets a new client). Secrets are
        hashed, never stored in clear in the key.

        Returns:
            A hex digest.
        """
        environ = os.environ
        aws = tuple(sorted((k, environ[k]) for k in environ if k.startswith("AWS_")))
        return _client_key(self, aws)

    def __repr__(self) -> str:  # never print secrets
        return masked_repr(self, ("secret_access_key", "session_token"), {
            # the names only: proxies may hold credentials
            "client_config": lambda v: "{" + ", ".join(f"{k!r}: ..." for k, _ in v) + "}",
            "endpoint_url": lambda v: repr(redact_url(v)) if v else repr(v)})


def _client_key(config: S3Config, aws: tuple[tuple[str, str], ...]) -> str:
    parts = (config.endpoint_url, config.region, config.access_key_id,
             config.secret_access_key, config.session_token, config.profile, config.anon,
             config.verify, config.client_config, config.checksum_algorithm is None, aws)
    return _digest(repr(parts))


@functools.lru_cache(maxsize=64)
def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _client_config(options: dict[str, Any]) -> dict[str, Any]:
    """Take the botocore client config (``config`` and its shortcuts) out of ``options``."""
    raw = options.pop("config", None)
    config: dict[str, Any]
    if raw is None:
        config = {}
    elif isinstance(raw, Mapping):
        config = dict(raw)
    elif type(raw).__name__ in ("Config", "AioConfig"):
        config = {k: v for k, v in raw._user_provided_options.items()}
    else:
        raise SchemaError(f"storage option config must be a botocore Config or a dict, "
                          f"got {type(raw).__name__}")
    for name in _CONFIG_SHORTCUTS:
        if name in options:
            config[name] = options.pop(name)
    retries = dict(config.get("retries") or {})
    if "retry_mode" in options:
        retries["mode"] = options.pop("retry_mode")
    if "max_attempts" in options:
        retries["total_max_attempts"] = _positive_int("max_attempts",
                                                      options.pop("max_attempts"))
        retries.pop("max_attempts", None)
    if retries:
        mode = retries.get("mode")
        if mode is not None and mode not in ("standard", "adaptive", "legacy"):
            raise SchemaError(f"retry mode must be 'standard' or 'adaptive' (or 'legacy'), "
                              f"got {mode!r}")
        config["retries"] = retries
    for name in ("response_checksum_validation", "request_checksum_calculation"):
        if config.get(name, "when_supported") not in ("when_supported", "when_required"):
            raise SchemaError(f"{name} must be 'when_supported' or 'when_required', "
                              f"got {config[name]!r}")
    if "addressing_style" in options:
        style = options.pop("addressing_style")
        if style not in ("auto", "path", "virtual"):
            raise SchemaError(f"addressing_style must be 'auto', 'path' or 'virtual', "
                              f"got {style!r}")
        config["s3"] = {**dict(config.get("s3") or {}), "addressing_style": style}
    try:
        from botocore.config import Config
        Config(**config)  # validates the names and values now, not at the first request
    except Exception as exc:  # noqa: BLE001 - TypeError or botocore's configuration errors
        # the names only: a value may be a secret (a proxy's credentials, ...)
        raise SchemaError(f"invalid botocore client config (keys: "
                          f"{', '.join(sorted(map(str, config)))}): "
                          f"{type(exc).__name__}") from None
    frozen: dict[str, Any] = _freeze(config)
    return frozen


def _freeze(value: Any) -> Any:
    """Dicts as sorted tuples of pairs, lists as tuples: hashable and stable for keys."""
    if isinstance(value, Mapping):
        return {k: _freeze(v) for k, v in sorted(value.items())}
    if isinstance(value, list):
        return tuple(_freeze(v) for v in value)
    return value


def _thaw(config: dict[str, Any]) -> dict[str, Any]:
    """Copies of the nested dicts, so botocore may modify them."""
    return {k: (dict(v) if isinstance(v, Mapping) else v) for k, v in config.items()}
