"""HTTP(S) URLs, read-only: public datasets, presigned S3 / GCS / Azure SAS URLs, any server
that answers ranged GETs (:class:`HTTPStore`, :class:`HTTPScheme`).

Opening a file is one GET of a suffix range (``Range: bytes=-N``); its ``Content-Range``
gives the size. The response's validator pins every later request: a strong ``ETag`` is sent
back as ``If-Match`` (a replaced file answers 412 and the read fails with
:class:`~aorc.errors.ObjectChangedError`); a weak ETag or a ``Last-Modified`` date is
compared with every later response's, so two versions are never mixed either way (a server
without either cannot be pinned). A server that ignores ``Range`` sends the whole file once;
it is kept (up to ``max_unranged_bytes``) and served from memory, with a warning.

There is no listing: a URL ending with ``/`` is refused; a list of file URLs is a dataset.
Writing is refused (:class:`~aorc.errors.UnsupportedFeatureError`).

``storage_options`` keys: ``headers`` (extra request headers, e.g. ``Authorization``; never
shown in messages), ``verify``, ``connect_timeout``, ``read_timeout``,
``max_pool_connections``, ``max_attempts``, ``retry_base_delay``, ``retry_max_delay`` (see
:mod:`aorc.io.transport`), the read tuning of :class:`aorc.io.base.StoreOptions`
(``max_request_size`` 8 MiB, ``max_concurrency`` 8 by default), ``if_match`` (a validator
to require) and ``max_unranged_bytes`` (256 MiB).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from aorc.errors import SchemaError, UnsupportedFeatureError
from aorc.io.config import RestConfig
from aorc.io.listing import ReadOnlyScheme
from aorc.io.remote import Ranged, RemoteStore
from aorc.io.transport import Response, acquire_session, redact_url, send

__all__ = ["HTTPConfig", "HTTPScheme", "HTTPStore"]

_LAST_MODIFIED = "last-modified:"
_ALIASES = {"headers": "headers", "max_unranged_bytes": "max_unranged"}


@dataclass(frozen=True)
class HTTPConfig(RestConfig, scheme="http(s)", aliases=_ALIASES):
    """Settings of HTTP(S) reads (see the module docstring).

    Attributes:
        headers: extra request headers (as ``(name, value)`` pairs).
        http: connection settings.
        retry: the retry policy.
        store: read tuning.
        max_unranged: the most bytes accepted from a server that ignores ``Range``.
    """

    headers: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        limit = self.max_unranged
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise SchemaError("storage option max_unranged_bytes must be a positive integer")

    @classmethod
    def _parse(cls, options: dict[str, Any]) -> HTTPConfig:
        fields = cls._fields(options)
        headers = fields.pop("headers", None) or {}
        if not isinstance(headers, Mapping) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in headers.items()):
            raise SchemaError("storage option headers must be a dict of strings")
        return cls(headers=tuple(sorted(headers.items())), **fields)

    def __repr__(self) -> str:  # header values may be secrets
        names = ", ".join(name for name, _ in self.headers)
        return f"HTTPConfig(headers=[{names}], store={self.store!r}, retry={self.retry!r})"


def _validator(response: Response) -> str | None:
    etag = response.header("etag")
    if etag:
        return etag
    modified = response.header("last-modified")
    return _LAST_MODIFIED + modified if modified else None


class HTTPStore(RemoteStore):
    """One file behind an HTTP(S) URL, read with ranged GETs.

    Args:
        url: the file's URL (a query string, such as a presigned URL's, is kept).
        config: settings.
        version: a validator (ETag) to require.
    """

    version_form = ("a string", bool)

    def __init__(self, url: str, config: HTTPConfig | None = None,
                 version: str | None = None) -> None:
        self.config = config or HTTPConfig()
        super().__init__(redact_url(url), self.config.store, version=version,
                         max_unranged=self.config.max_unranged)
        self.url = url
        self._lease: Any = None

    def __repr__(self) -> str:
        return f"<HTTPStore {self.path!r}>"

    @classmethod
    def _for_url(cls, url: str, options: dict[str, Any], version: str | None) -> HTTPStore:
        if url.split("?", 1)[0].endswith("/") or not url.partition("://")[2].strip("/"):
            raise SchemaError(f"an HTTP(S) URL must name a file, got {redact_url(url)!r}")
        return cls(url, HTTPConfig.from_options(options), version=version)

    async def _open(self) -> None:
        self._lease = await acquire_session(self.config.http)

    async def _close(self) -> None:
        if self._lease is not None:
            self._lease.release()
            self._lease = None

    def _pinned(self) -> dict[str, str]:
        version = self.etag
        if version is None:
            return {}
        if version.startswith(_LAST_MODIFIED):
            return {"If-Unmodified-Since": version[len(_LAST_MODIFIED):]}
        if version.startswith("W/"):
            return {}  # If-Match compares strongly: a weak ETag is checked on each response
        return {"If-Match": version}

    async def _get(self, first: int | None, last: int | None, suffix: int | None,
                   action: str) -> Ranged | None:
        byte_range = f"bytes=-{suffix}" if suffix is not None else f"bytes={first}-{last}"
        headers = {**dict(self.config.headers), "Range": byte_range, **self._pinned()}
        response = await send(self._lease.client, "GET", self.url, path=self.path,
                              action=action, stats=self.stats, retry=self.config.retry,
                              headers=headers, accept=(200, 206, 416),
                              max_unranged=self.max_unranged)
        return self._answer(response, _validator(response))


class HTTPScheme(ReadOnlyScheme):
    """``http://`` and ``https://`` URLs: read-only, no listing."""

    def check_options(self, storage_options: Mapping[str, Any]) -> None:
        """Parse the HTTP settings."""
        HTTPConfig.from_options({k: v for k, v in storage_options.items() if k != "if_match"})

    def open_input(self, url: str, storage_options: Mapping[str, Any] | None) -> HTTPStore:
        return HTTPStore.from_url(url, storage_options)

    def open_output(self, url: str, storage_options: Mapping[str, Any] | None) -> Any:
        raise UnsupportedFeatureError(f"HTTP(S) URLs are read-only: cannot write "
                                      f"{redact_url(url)}; write to s3://, gs://, az:// or "
                                      f"a local path")

    async def delete(self, url: str, storage_options: Mapping[str, Any] | None) -> None:
        raise UnsupportedFeatureError(f"HTTP(S) URLs are read-only: cannot delete "
                                      f"{redact_url(url)}")
