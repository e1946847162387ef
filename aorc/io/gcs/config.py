"""Settings and credentials of Google Cloud Storage: ``gs://`` URLs and ``storage_options``.

Credentials follow Google's standard chain (application default credentials), unless
``storage_options`` say otherwise:

1. ``STORAGE_EMULATOR_HOST`` in the environment (``host:port`` or a URL): requests go to that
   emulator, unauthenticated (as Google's own client libraries do);
2. ``token``: ``"anon"`` (unauthenticated requests, for public buckets), an OAuth 2 access
   token (a string), or a ``google.auth`` credentials object; ``credentials``: the path (or
   the parsed dict) of a service-account or authorized-user JSON key file;
3. otherwise ``google.auth.default()``: ``GOOGLE_APPLICATION_CREDENTIALS``, the gcloud
   CLI's application default credentials, then the metadata server of GCE, GKE, Cloud Run
   (needs the ``gcs`` extra: ``pip install 'aorc[gcs]'``, which installs google-auth).

Tokens are refreshed in a worker thread before they expire. Neither a token nor a key ever
appears in a message, a ``repr`` or a log line.

``storage_options`` keys understood for ``gs://`` and ``gcs://``:

Connection:
    ``endpoint_url`` (or ``endpoint``: the JSON API's base URL, default
    ``https://storage.googleapis.com``); ``token``; ``credentials``; ``anon`` (bool, as
    ``token="anon"``); ``project`` (or ``user_project``: the project billed for requester
    pays buckets); ``verify``, ``connect_timeout``, ``read_timeout``,
    ``max_pool_connections``; ``max_attempts`` (5: attempts of one request, the first
    included), ``retry_base_delay`` (0.1 s), ``retry_max_delay`` (10 s): transient failures
    (429, 5xx, broken connections) are retried with exponential backoff and full jitter;
    ``retry_budget`` (20 s): writes are retried past ``max_attempts`` for this long.

Reading:
    ``max_merge_distance``, ``max_gap_ratio``, ``max_request_size`` (8 MiB),
    ``max_concurrency`` (8), ``max_burst`` (see :class:`aorc.io.base.StoreOptions`);
    ``if_match``: a generation every read requires (a read of a generation that is no
    longer live fails with :class:`~aorc.errors.ObjectChangedError`);
    ``max_unranged_bytes`` (256 MiB, see :mod:`aorc.io.remote`).

Writing:
    ``part_size`` (8 MiB, a multiple of 256 KiB: the chunks of a resumable upload);
    ``memory_budget`` (bytes buffered plus in flight before ``write`` waits; default two
    chunks); ``overwrite`` (default true; ``False``: create only, with
    ``ifGenerationMatch=0``, so an existing object makes the write fail with
    :class:`~aorc.errors.ObjectExistsError`).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from aorc.errors import AccessDeniedError, SchemaError
from aorc.io.base import masked_repr
from aorc.io.config import DEFAULT_REST_PART_SIZE, UploadConfig
from aorc.io.transport import endpoint_problem, redact_url

__all__ = ["CHUNK_GRANULARITY", "DEFAULT_CHUNK_SIZE", "DEFAULT_ENDPOINT", "SCOPE", "GCSAuth",
           "GCSConfig", "auth_for", "parse_gcs_url"]

#: Google's JSON API.
DEFAULT_ENDPOINT = "https://storage.googleapis.com"
#: OAuth scope of the requests.
SCOPE = "https://www.googleapis.com/auth/devstorage.read_write"
#: Chunks of a resumable upload (but the last) are multiples of this many bytes.
CHUNK_GRANULARITY = 256 * 1024
#: Chunk of a resumable upload.
DEFAULT_CHUNK_SIZE = DEFAULT_REST_PART_SIZE

_ALIASES = {
    "endpoint_url": "endpoint", "endpoint": "endpoint", "token": "token",
    "credentials": "credentials", "anon": "anon", "project": "user_project",
    "user_project": "user_project", "part_size": "part_size",
    "memory_budget": "memory_budget", "overwrite": "overwrite",
    "max_unranged_bytes": "max_unranged",
}


def parse_gcs_url(url: str) -> tuple[str, str]:
    """Split ``gs://bucket/name`` (or ``gcs://``) into bucket and object name (verbatim).

    Raises:
        SchemaError: not such a URL, or no bucket or name.
    """
    scheme, sep, rest = url.partition("://")
    if not sep or scheme.lower() not in ("gs", "gcs"):
        raise SchemaError(f"not a gs:// URL: {redact_url(url)!r}")
    bucket, _, name = rest.partition("/")
    if not bucket or not name or name.endswith("/"):
        raise SchemaError(f"a GCS URL must name a bucket and an object "
                          f"(gs://bucket/path/file.orc), got {redact_url(url)!r}")
    return bucket, name


def _emulator() -> str | None:
    host = os.environ.get("STORAGE_EMULATOR_HOST")
    if not host:
        return None
    return host.rstrip("/") if "://" in host else f"http://{host.rstrip('/')}"


@dataclass(frozen=True)
class GCSConfig(UploadConfig, scheme="gs", aliases=_ALIASES,
                environment=("STORAGE_EMULATOR_HOST",)):
    """Everything needed to reach GCS objects and to tune reads and writes.

    Build it with :meth:`from_options`.

    Attributes:
        endpoint: the JSON API's base URL.
        token: ``None`` (the default chain), ``"anon"``, an access token or a credentials
            object.
        credentials: a key file's path or parsed dict.
        user_project: the project billed (requester pays), or ``None``.
        emulator: requests go to ``STORAGE_EMULATOR_HOST``, unauthenticated.
        http: connection settings.
        retry: the retry policy.
        store: read tuning.
        part_size: bytes per chunk of a resumable upload.
        memory_budget: most bytes a writer holds buffered plus in flight.
        overwrite: a write replaces an existing object.
        max_unranged: the most bytes accepted from a server that ignores ``Range``.
    """

    endpoint: str = DEFAULT_ENDPOINT
    token: Any = None
    credentials: Any = None
    user_project: str | None = None
    emulator: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.endpoint, str) or "://" not in self.endpoint:
            raise SchemaError("storage option endpoint_url must be a URL such as "
                              "https://storage.googleapis.com")
        problem = endpoint_problem(self.endpoint)
        if problem is not None:
            raise SchemaError(f"storage option endpoint_url {problem}: "
                              f"{redact_url(self.endpoint)}")
        if self.credentials is not None and not isinstance(
                self.credentials, (str, os.PathLike, Mapping)):
            raise SchemaError(f"storage option credentials must be a key file's path or "
                              f"its parsed dict, got a {type(self.credentials).__name__}")
        if self.user_project is not None and not isinstance(self.user_project, str):
            raise SchemaError("storage option project must be a string")
        if not isinstance(self.emulator, bool):
            raise SchemaError("storage option emulator must be a bool")
        super().__post_init__()
        if self.part_size % CHUNK_GRANULARITY:
            raise SchemaError(f"storage option part_size must be a positive multiple of "
                              f"{CHUNK_GRANULARITY} (256 KiB) for GCS, got {self.part_size}")

    @classmethod
    def _parse(cls, options: dict[str, Any]) -> GCSConfig:
        fields = cls._fields(options)
        if fields.pop("anon", False) is True:
            fields.setdefault("token", "anon")
        emulator = _emulator()
        if "endpoint" not in fields and emulator is not None:
            fields["endpoint"] = emulator
            fields["emulator"] = True
        if isinstance(fields.get("endpoint"), str):
            fields["endpoint"] = fields["endpoint"].rstrip("/")
        return cls(**fields)

    @property
    def effective_memory_budget(self) -> int:
        """The writer's budget: the option, or one chunk sent while the next is filled."""
        return self.memory_budget if self.memory_budget is not None else 2 * self.part_size

    def auth_key(self) -> str:
        """A digest of what decides the credentials (secrets hashed, never kept in clear).

        Returns:
            A hex digest.
        """
        token = self.token
        if token is not None and not isinstance(token, str):
            token = f"object:{id(token)}"
        credentials = self.credentials
        if isinstance(credentials, Mapping):
            credentials = json.dumps(credentials, sort_keys=True, default=str)
        text = repr((self.emulator, token, os.fspath(credentials) if isinstance(
            credentials, os.PathLike) else credentials,
            os.environ.get("GOOGLE_APPLICATION_CREDENTIALS")))
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()

    def __repr__(self) -> str:  # never print secrets
        return masked_repr(self, ("token", "credentials"))


class GCSAuth:
    """The ``Authorization`` header of a configuration's requests, refreshed as needed.

    One per distinct credentials (:func:`auth_for`); thread-safe, usable from any loop.
    """

    def __init__(self, config: GCSConfig) -> None:
        self._config = config
        self._lock = threading.Lock()
        self._credentials: Any = None
        self._static: str | None = None
        token = config.token
        if config.emulator and token is None and config.credentials is None:
            token = "anon"
        if isinstance(token, str):
            self._static = "" if token == "anon" else token
        elif token is not None:
            self._credentials = token

    def __repr__(self) -> str:
        return "<GCSAuth>"

    async def headers(self) -> dict[str, str]:
        """``{"Authorization": "Bearer ..."}``, or nothing for anonymous requests.

        Raises:
            AccessDeniedError: no credentials could be found or refreshed.
        """
        if self._static is not None:
            return {"Authorization": f"Bearer {self._static}"} if self._static else {}
        credentials = self._credentials
        if credentials is None or not getattr(credentials, "valid", False):
            credentials = await asyncio.to_thread(self._refresh)
        return {"Authorization": f"Bearer {credentials.token}"}

    def _refresh(self) -> Any:
        with self._lock:
            if self._credentials is None:
                self._credentials = self._load()
            credentials = self._credentials
            if not getattr(credentials, "valid", False):
                try:
                    from google.auth.transport.requests import Request
                    credentials.refresh(Request())
                except Exception as exc:  # noqa: BLE001 - google.auth's errors, requests'
                    raise AccessDeniedError(
                        f"cannot get a GCS access token from the {self._source()}: "
                        f"{type(exc).__name__}") from None
            return credentials

    def _source(self) -> str:
        if self._config.credentials is not None:
            return "credentials given in storage_options"
        if self._config.token is not None:
            return "credentials object given as token"
        return "application default credentials"

    def _load(self) -> Any:
        try:
            import google.auth as google_auth
        except ImportError:
            raise AccessDeniedError(
                "reading gs:// URLs with Google's credentials needs google-auth: "
                "pip install 'aorc[gcs]' (or pass storage_options token='anon' for public "
                "buckets, or set STORAGE_EMULATOR_HOST for an emulator)") from None
        credentials = self._config.credentials
        auth: Any = google_auth  # partly untyped
        try:
            if isinstance(credentials, Mapping):
                loaded, _ = auth.load_credentials_from_dict(dict(credentials), scopes=[SCOPE])
            elif credentials is not None:
                loaded, _ = auth.load_credentials_from_file(os.fspath(credentials),
                                                            scopes=[SCOPE])
            else:
                loaded, _ = auth.default(scopes=[SCOPE])
        except Exception as exc:  # noqa: BLE001 - DefaultCredentialsError and parse errors
            raise AccessDeniedError(
                f"no usable GCS credentials ({type(exc).__name__}): set "
                f"GOOGLE_APPLICATION_CREDENTIALS, run 'gcloud auth application-default "
                f"login', or pass storage_options credentials=... or token=...") from None
        return loaded


_auths: dict[str, GCSAuth] = {}
_auths_lock = threading.Lock()


def auth_for(config: GCSConfig) -> GCSAuth:
    """The shared :class:`GCSAuth` of ``config``'s credentials."""
    key = config.auth_key()
    with _auths_lock:
        auth = _auths.get(key)
        if auth is None:
            if len(_auths) >= 64:
                _auths.pop(next(iter(_auths)))
            auth = _auths[key] = GCSAuth(config)
        return auth
