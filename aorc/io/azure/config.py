"""Settings and credentials of Azure Blob Storage (and ADLS Gen2): ``az://``, ``abfs://`` and
``abfss://`` URLs, ``storage_options``, and the signing of requests.

URL forms:

* ``az://container/path/file.orc``: the account comes from the settings (connection string,
  ``account_name``, ``AZURE_STORAGE_ACCOUNT_NAME``);
* ``abfs[s]://container@account.dfs.core.windows.net/path/file.orc`` (Spark's and Hadoop's
  form for ADLS Gen2; also ``az://container@account.blob.core.windows.net/...``): the account
  comes from the host. aorc talks to the Blob endpoint
  (``https://account.blob.core.windows.net``), which serves accounts with the hierarchical
  namespace on or off alike (directories of such accounts list as empty blobs, which are
  skipped).

Credentials, first found wins:

1. ``storage_options``: ``credential`` (an ``azure.identity`` credential, or any object
   with ``get_token(scope)``, sync or async), ``account_key``, ``sas_token``, ``client_id``
   + ``client_secret`` + ``tenant_id`` (a service principal, through azure-identity),
   ``anon=True`` (public containers), ``connection_string``;
2. the environment: ``AZURE_STORAGE_CONNECTION_STRING``, then ``AZURE_STORAGE_ACCOUNT_KEY``
   (or ``AZURE_STORAGE_KEY``), then ``AZURE_STORAGE_SAS_TOKEN``;
3. Azure AD through ``azure.identity.DefaultAzureCredential`` (environment service
   principal, workload identity, managed identity, Azure CLI...), when azure-identity is
   installed (``pip install 'aorc[azure]'``).

Account keys sign each request (Shared Key); SAS tokens are appended to each request's URL;
Azure AD tokens are sent as bearer tokens and refreshed before they expire. None of them
appears in a message, a ``repr`` or a log line.

``storage_options`` keys understood:

Connection:
    the credentials above; ``account_name`` (or ``account``); ``endpoint_url`` (or
    ``endpoint``: the Blob endpoint, ``https://<account>.blob.core.windows.net`` by default,
    e.g. Azurite's ``http://127.0.0.1:10000/devstoreaccount1``); ``use_emulator`` (Azurite's
    well-known local endpoint and account); ``verify``, ``connect_timeout``,
    ``read_timeout``, ``max_pool_connections``; ``max_attempts`` (5), ``retry_base_delay``
    (0.1 s), ``retry_max_delay`` (10 s), ``retry_budget`` (20 s: writes are retried past
    ``max_attempts`` for this long).

Reading:
    ``max_merge_distance``, ``max_gap_ratio``, ``max_request_size`` (8 MiB),
    ``max_concurrency`` (8), ``max_burst`` (see :class:`aorc.io.base.StoreOptions`);
    ``if_match`` (an ETag every read requires); ``max_unranged_bytes``.

Writing:
    ``part_size`` (8 MiB: the blocks of a large blob; doubled every 5,000 blocks),
    ``max_concurrency`` (8 blocks in flight), ``memory_budget`` (default
    ``(max_concurrency + 1) * part_size``), ``overwrite`` (default true; ``False``: create
    only, with ``If-None-Match: *``, so an existing blob makes the write fail with
    :class:`~aorc.errors.ObjectExistsError`).
"""

from __future__ import annotations

import asyncio
import base64
import email.utils
import hashlib
import hmac
import inspect
import os
import threading
import time
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from aorc.errors import AccessDeniedError, SchemaError
from aorc.io.base import masked_repr
from aorc.io.config import UploadConfig
from aorc.io.transport import endpoint_problem, redact_url

__all__ = [
    "API_VERSION",
    "AZURITE_ACCOUNT",
    "AZURITE_KEY",
    "AzureAuth",
    "AzureConfig",
    "AzureLocation",
    "auth_for",
    "parse_azure_url",
    "parse_connection_string",
    "shared_key",
]

#: The Blob service version of every request.
API_VERSION = "2023-11-03"
#: Azurite's well-known development account and key (public, documented by Microsoft).
AZURITE_ACCOUNT = "devstoreaccount1"
AZURITE_KEY = ("Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/"
               "KBHBeksoGMGw==")
#: OAuth scope of Azure Storage.
SCOPE = "https://storage.azure.com/.default"
#: Azure's largest block.
MAX_BLOCK_SIZE = 4000 * 1024 * 1024

_ALIASES = {
    "account_name": "account_name", "account": "account_name",
    "account_key": "account_key", "sas_token": "sas_token",
    "connection_string": "connection_string", "credential": "credential",
    "client_id": "client_id", "client_secret": "client_secret", "tenant_id": "tenant_id",
    "anon": "anon", "endpoint_url": "endpoint", "endpoint": "endpoint",
    "use_emulator": "use_emulator", "part_size": "part_size",
    "memory_budget": "memory_budget", "overwrite": "overwrite",
    "max_unranged_bytes": "max_unranged",
}
_SECRET_FIELDS = ("account_key", "sas_token", "connection_string", "credential",
                  "client_secret")


@dataclass(frozen=True)
class AzureLocation:
    """Where a URL points: container, blob name and the account the URL names (if any)."""

    container: str
    name: str
    account: str | None


def parse_azure_url(url: str, *, folder: bool = False) -> AzureLocation:
    """Split an ``az://``, ``abfs://`` or ``abfss://`` URL.

    Args:
        url: the URL.
        folder: the URL may name a container or prefix rather than a blob.

    Raises:
        SchemaError: not such a URL, or no container or blob name.
    """
    scheme, sep, rest = url.partition("://")
    if not sep or scheme.lower() not in ("az", "abfs", "abfss"):
        raise SchemaError(f"not an Azure URL (az://, abfs://, abfss://): {redact_url(url)!r}")
    netloc, _, name = rest.partition("/")
    container, at, host = netloc.partition("@")
    account = host.split(".", 1)[0] if at else None
    if at and not account:
        raise SchemaError(f"an Azure URL's host must name the account "
                          f"(container@account.dfs.core.windows.net), got {redact_url(url)!r}")
    if not container or (not folder and (not name or name.endswith("/"))):
        raise SchemaError(f"an Azure URL must name a container and a blob "
                          f"(az://container/path/file.orc or abfss://container@account.dfs."
                          f"core.windows.net/path/file.orc), got {redact_url(url)!r}")
    return AzureLocation(container, name, account)


def parse_connection_string(text: str) -> dict[str, str]:
    """The ``Key=Value`` pairs of a storage connection string (keys as written).

    Raises:
        SchemaError: a malformed string (the message never shows its values).
    """
    pairs: dict[str, str] = {}
    for part in text.split(";"):
        if not part.strip():
            continue
        key, sep, value = part.partition("=")
        if not sep or not key.strip():
            raise SchemaError("the Azure connection string is malformed (expected "
                              "Key=Value pairs separated by ';')")
        pairs[key.strip()] = value.strip()
    if pairs.get("UseDevelopmentStorage", "").lower() == "true":
        pairs = {"AccountName": AZURITE_ACCOUNT, "AccountKey": AZURITE_KEY,
                 "BlobEndpoint": f"http://127.0.0.1:10000/{AZURITE_ACCOUNT}", **pairs}
    return pairs


def _from_environment() -> dict[str, Any]:
    environ = os.environ
    if environ.get("AZURE_STORAGE_CONNECTION_STRING"):
        return {"connection_string": environ["AZURE_STORAGE_CONNECTION_STRING"]}
    found: dict[str, Any] = {}
    account = environ.get("AZURE_STORAGE_ACCOUNT_NAME") or environ.get("AZURE_STORAGE_ACCOUNT")
    if account:
        found["account_name"] = account
    key = environ.get("AZURE_STORAGE_ACCOUNT_KEY") or environ.get("AZURE_STORAGE_KEY")
    if key:
        found["account_key"] = key
    elif environ.get("AZURE_STORAGE_SAS_TOKEN"):
        found["sas_token"] = environ["AZURE_STORAGE_SAS_TOKEN"]
    return found


@dataclass(frozen=True)
class AzureConfig(UploadConfig, scheme="az", aliases=_ALIASES,
                  environment=("AZURE_STORAGE",)):
    """Everything needed to reach Azure blobs and to tune reads and writes.

    Build it with :meth:`from_options`; see the module docstring for the fields' meaning.
    """

    account_name: str | None = None
    account_key: str | None = None
    sas_token: str | None = None
    connection_string: str | None = None
    credential: Any = None
    client_id: str | None = None
    client_secret: str | None = None
    tenant_id: str | None = None
    anon: bool = False
    endpoint: str | None = None
    use_emulator: bool = False

    def __post_init__(self) -> None:
        for name in ("account_name", "account_key", "sas_token", "connection_string",
                     "client_id", "client_secret", "tenant_id", "endpoint"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, str):
                raise SchemaError(f"storage option {name} must be a string, got a "
                                  f"{type(value).__name__}")
        for name in ("anon", "use_emulator"):
            if not isinstance(getattr(self, name), bool):
                raise SchemaError(f"storage option {name} must be a bool")
        if self.endpoint is not None and ("://" not in self.endpoint
                                          or endpoint_problem(self.endpoint) is not None):
            raise SchemaError(f"storage option endpoint_url must be a URL without "
                              f"credentials, query or fragment, got "
                              f"{redact_url(self.endpoint)!r}")
        if self.account_key is not None:
            try:
                base64.b64decode(self.account_key, validate=True)
            except ValueError:
                raise SchemaError("storage option account_key is not valid base64 (the "
                                  "value is not shown)") from None
        if self.credential is not None and not hasattr(self.credential, "get_token"):
            raise SchemaError(f"storage option credential must have get_token(scope) (an "
                              f"azure.identity credential), got a "
                              f"{type(self.credential).__name__}")
        super().__post_init__()
        if self.part_size > MAX_BLOCK_SIZE:
            raise SchemaError(f"storage option part_size must be an integer between 1 and "
                              f"{MAX_BLOCK_SIZE} for Azure, got {self.part_size}")

    @classmethod
    def _parse(cls, options: dict[str, Any]) -> AzureConfig:
        fields = cls._fields(options)
        if not any(fields.get(k) for k in ("credential", "account_key", "sas_token",
                                           "client_secret", "anon", "connection_string",
                                           "use_emulator")):
            for name, value in _from_environment().items():
                fields.setdefault(name, value)
        return cls(**_apply_connection_string(fields))

    @property
    def effective_memory_budget(self) -> int:
        """The writer's memory budget: the option, or every block slot plus one."""
        if self.memory_budget is not None:
            return self.memory_budget
        return (self.store.max_concurrency + 1) * self.part_size

    def blob_endpoint(self, account: str | None) -> tuple[str, str]:
        """The Blob endpoint (no trailing slash) and account for a URL naming ``account``.

        Raises:
            SchemaError: no account is known, or the URL's differs from the settings'.

        Args:
            account: the account named by the URL, if any.

        Returns:
            ``(endpoint, account)``.
        """
        known = self.account_name
        if account and known and account != known:
            raise SchemaError(f"the URL names the storage account {account!r} but the "
                              f"settings are for {known!r}")
        name = known or account
        if not name:
            raise SchemaError("no Azure storage account: use an abfss://container@account."
                              "dfs.core.windows.net/... URL, or set account_name, a "
                              "connection string or AZURE_STORAGE_ACCOUNT_NAME")
        if self.endpoint:
            return self.endpoint.rstrip("/"), name
        return f"https://{name}.blob.core.windows.net", name

    def auth_key(self) -> str:
        """A digest of what decides the credentials (secrets hashed, never kept in clear).

        Returns:
            A hex digest.
        """
        credential = f"object:{id(self.credential)}" if self.credential is not None else None
        text = repr((self.account_name, self.account_key, self.sas_token, credential,
                     self.client_id, self.client_secret, self.tenant_id, self.anon))
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()

    def __repr__(self) -> str:  # never print secrets
        return masked_repr(self, _SECRET_FIELDS)


def _apply_connection_string(fields: dict[str, Any]) -> dict[str, Any]:
    """Fill account, key, SAS and endpoint from a connection string (or ``use_emulator``),
    without overriding what was given explicitly."""
    text = fields.get("connection_string")
    if fields.get("use_emulator") and not text:
        text = "UseDevelopmentStorage=true"
    if not text:
        return fields
    if not isinstance(text, str):
        raise SchemaError("storage option connection_string must be a string")
    pairs = parse_connection_string(text)
    out = dict(fields)
    if "AccountName" in pairs:
        out.setdefault("account_name", pairs["AccountName"])
    if "AccountKey" in pairs and not out.get("sas_token") and not out.get("credential"):
        out.setdefault("account_key", pairs["AccountKey"])
    if "SharedAccessSignature" in pairs and not out.get("account_key"):
        out.setdefault("sas_token", pairs["SharedAccessSignature"])
    if "BlobEndpoint" in pairs:
        out.setdefault("endpoint", pairs["BlobEndpoint"])
    elif "AccountName" in pairs:
        protocol = pairs.get("DefaultEndpointsProtocol", "https")
        suffix = pairs.get("EndpointSuffix", "core.windows.net")
        out.setdefault("endpoint", f"{protocol}://{pairs['AccountName']}.blob.{suffix}")
    if not out.get("account_name") and out.get("endpoint"):
        parsed = urllib.parse.urlsplit(out["endpoint"])
        first = parsed.path.strip("/").split("/")[0] if parsed.path.strip("/") else ""
        out["account_name"] = first or (parsed.hostname or "").split(".", 1)[0] or None
    return out


# =========================================================================== signing

def _canonical_headers(headers: Mapping[str, str]) -> str:
    names = sorted((k.lower(), " ".join(v.split())) for k, v in headers.items()
                   if k.lower().startswith("x-ms-"))
    return "".join(f"{name}:{value}\n" for name, value in names)


def _canonical_resource(account: str, url: str) -> str:
    parts = urllib.parse.urlsplit(url)
    resource = f"/{account}{parts.path or '/'}"
    query: dict[str, list[str]] = {}
    for name, value in urllib.parse.parse_qsl(parts.query, keep_blank_values=True):
        query.setdefault(name.lower(), []).append(value)
    for name in sorted(query):
        resource += f"\n{name}:{','.join(sorted(query[name]))}"
    return resource


def shared_key(account: str, key: str, method: str, url: str,
               headers: Mapping[str, str]) -> str:
    """The ``Authorization`` value of a request signed with an account key (Shared Key)."""
    lower = {k.lower(): v for k, v in headers.items()}
    length = lower.get("content-length", "")
    fields = [method, lower.get("content-encoding", ""), lower.get("content-language", ""),
              "" if length == "0" else length, lower.get("content-md5", ""),
              lower.get("content-type", ""), "", lower.get("if-modified-since", ""),
              lower.get("if-match", ""), lower.get("if-none-match", ""),
              lower.get("if-unmodified-since", ""), lower.get("range", "")]
    text = "\n".join(fields) + "\n" + _canonical_headers(headers) + \
        _canonical_resource(account, url)
    digest = hmac.new(base64.b64decode(key), text.encode("utf-8"), hashlib.sha256).digest()
    return f"SharedKey {account}:{base64.b64encode(digest).decode()}"


class AzureAuth:
    """Signs a configuration's requests (Shared Key, SAS, Azure AD, or nothing).

    One per distinct credentials (:func:`auth_for`); tokens are cached until five minutes
    before they expire.
    """

    def __init__(self, config: AzureConfig, account: str) -> None:
        self._config = config
        self._account = account
        self._credential = config.credential
        self._token: str | None = None
        self._expires = 0.0
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return "<AzureAuth>"

    async def sign(self, method: str, url: str, headers: dict[str, str]) -> str:
        """Complete ``headers`` (date, version, authorization); the URL to send."""
        headers["x-ms-date"] = email.utils.formatdate(usegmt=True)
        headers["x-ms-version"] = API_VERSION
        config = self._config
        if config.anon:
            return url
        if config.account_key:
            headers["Authorization"] = shared_key(self._account, config.account_key, method,
                                                  url, headers)
            return url
        if config.sas_token:
            sas = config.sas_token.lstrip("?")
            return url + ("&" if "?" in url else "?") + sas
        headers["Authorization"] = f"Bearer {await self._bearer()}"
        return url

    async def _bearer(self) -> str:
        if self._token is not None and time.time() < self._expires - 300:
            return self._token
        credential = self._credential or await asyncio.to_thread(self._default_credential)
        try:
            if inspect.iscoroutinefunction(credential.get_token):
                got = await credential.get_token(SCOPE)
            else:  # a synchronous credential blocks (HTTP): in a worker thread
                got = await asyncio.to_thread(credential.get_token, SCOPE)
        except Exception as exc:  # noqa: BLE001 - azure.identity's errors
            raise AccessDeniedError(f"cannot get an Azure AD token ({type(exc).__name__}); "
                                    f"check the credential's configuration") from None
        self._token = str(got.token)
        self._expires = float(getattr(got, "expires_on", time.time() + 600))
        return self._token

    def _default_credential(self) -> Any:
        with self._lock:
            if self._credential is not None:
                return self._credential
            config = self._config
            try:
                import importlib
                identity: Any = importlib.import_module("azure.identity")
            except ImportError:
                raise AccessDeniedError(
                    "no Azure credentials: set AZURE_STORAGE_CONNECTION_STRING, an "
                    "account key or a SAS token, pass anon=True for a public container, or "
                    "install azure-identity (pip install 'aorc[azure]') for Azure AD") \
                    from None
            if config.client_secret:
                if not (config.client_id and config.tenant_id):
                    raise SchemaError("storage options client_id, client_secret and "
                                      "tenant_id must be given together")
                self._credential = identity.ClientSecretCredential(
                    config.tenant_id, config.client_id, config.client_secret)
            else:
                self._credential = identity.DefaultAzureCredential()
            return self._credential


_auths: dict[tuple[str, str], AzureAuth] = {}
_auths_lock = threading.Lock()


def auth_for(config: AzureConfig, account: str) -> AzureAuth:
    """The shared :class:`AzureAuth` of ``config``'s credentials for ``account``."""
    key = (config.auth_key(), account)
    with _auths_lock:
        auth = _auths.get(key)
        if auth is None:
            if len(_auths) >= 64:
                _auths.pop(next(iter(_auths)))
            auth = _auths[key] = AzureAuth(config, account)
        return auth
