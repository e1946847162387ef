"""What is particular to Azure (the store-level suite covers the common promises): URL forms
(``az://``, ``abfs[s]://container@account.dfs.core.windows.net``), connection strings, the
credentials (Shared Key, SAS, Azure AD tokens), secrets kept out of messages, and ADLS Gen2
directories in listings; against Azurite, with azure-storage-blob as the independent peer.
"""

from __future__ import annotations

import datetime
import io
from typing import Any

import pyarrow as pa
import pyarrow.orc as po
import pytest
from helpers.s3proxy import S3Proxy
from helpers.store_fixtures import AZURITE_ACCOUNT, AZURITE_KEY

import aorc
from aorc.errors import AccessDeniedError, ObjectNotFoundError, SchemaError
from aorc.io import open_store, registry
from aorc.io.azure.config import AzureConfig, parse_azure_url, parse_connection_string

TABLE = pa.table({"id": pa.array(range(20_000), pa.int64())})


def orc_bytes(table: pa.Table = TABLE) -> bytes:
    sink = io.BytesIO()
    po.write_table(table, sink)
    return sink.getvalue()


def test_url_forms() -> None:
    assert parse_azure_url("az://c/a/x.orc") == parse_azure_url("az://c/a/x.orc")
    loc = parse_azure_url("abfss://lake@acct.dfs.core.windows.net/a/x.orc")
    assert (loc.container, loc.name, loc.account) == ("lake", "a/x.orc", "acct")
    loc = parse_azure_url("az://c/x y#z.orc")
    assert (loc.container, loc.name, loc.account) == ("c", "x y#z.orc", None)
    for bad in ("az://", "az://c", "az://c/", "abfss://@acct.dfs.core.windows.net/x",
                "s3://c/x"):
        with pytest.raises(SchemaError):
            parse_azure_url(bad)
    config = AzureConfig.from_options({"account_name": "acct", "anon": True})
    assert config.blob_endpoint("acct") == ("https://acct.blob.core.windows.net", "acct")
    with pytest.raises(SchemaError, match="names the storage account 'other'"):
        config.blob_endpoint("other")


def test_connection_strings_and_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("AZURE_STORAGE_CONNECTION_STRING", "AZURE_STORAGE_ACCOUNT_NAME",
                 "AZURE_STORAGE_ACCOUNT_KEY", "AZURE_STORAGE_SAS_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    text = (f"DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={AZURITE_KEY};"
            "EndpointSuffix=core.windows.net")
    config = AzureConfig.from_options({"connection_string": text})
    assert (config.account_name, config.account_key) == ("acct", AZURITE_KEY)
    assert config.endpoint == "https://acct.blob.core.windows.net"
    sas = AzureConfig.from_options({"connection_string": "BlobEndpoint=https://x.blob.core."
                                    "windows.net;SharedAccessSignature=sv=1&sig=abc"})
    assert sas.sas_token == "sv=1&sig=abc" and sas.account_name == "x"
    dev = AzureConfig.from_options({"use_emulator": True})
    assert dev.endpoint == f"http://127.0.0.1:10000/{AZURITE_ACCOUNT}"
    assert parse_connection_string("UseDevelopmentStorage=true")["AccountKey"] == AZURITE_KEY
    with pytest.raises(SchemaError, match="malformed") as info:
        AzureConfig.from_options({"connection_string": "AccountKey"})
    monkeypatch.setenv("AZURE_STORAGE_ACCOUNT_NAME", "envacct")
    monkeypatch.setenv("AZURE_STORAGE_ACCOUNT_KEY", AZURITE_KEY)
    env = AzureConfig.from_options({})
    assert (env.account_name, env.account_key) == ("envacct", AZURITE_KEY)
    for text in (repr(config), repr(sas), repr(env)):  # secrets are never shown
        assert AZURITE_KEY not in text and "sig=abc" not in text and "***" in text
    with pytest.raises(SchemaError, match="not valid base64") as info:
        AzureConfig.from_options({"account_name": "a", "account_key": "not base64 $ecret"})
    assert "$ecret" not in str(info.value)
    with pytest.raises(SchemaError, match="unknown storage option.*bogus"):
        AzureConfig.from_options({"bogus": 1})


async def test_abfss_urls_and_adls_directories(azure_container: str, azure_service: Any,
                                               azure_proxy: S3Proxy) -> None:
    """abfss:// names the account in its host; with the hierarchical namespace on, ADLS Gen2
    lists directories as empty blobs marked hdi_isfolder: they are skipped."""
    container = azure_service.get_container_client(azure_container)
    container.upload_blob("lake/dt=1/a.orc", orc_bytes(TABLE.slice(0, 10)))
    container.upload_blob("lake/dt=2/b.orc", orc_bytes(TABLE.slice(10, 5)))
    for folder in ("lake", "lake/dt=1", "lake/dt=2"):
        container.upload_blob(folder, b"", metadata={"hdi_isfolder": "true"})
    root = f"abfss://{azure_container}@{AZURITE_ACCOUNT}.dfs.core.windows.net/lake/"
    got = await aorc.read_dataset(root)
    assert got.column("id").to_pylist() == list(range(15))
    assert got.column("dt").to_pylist() == [1] * 10 + [2] * 5
    files = await registry.list_files(root)
    assert [f.path.rsplit("/", 2)[-2:] for f in files] == [["dt=1", "a.orc"], ["dt=2", "b.orc"]]


async def test_sas_token(azure_container: str, azure_service: Any, azure_proxy: S3Proxy,
                         azure_env: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A SAS token (made by azure-storage-blob) is appended to every request's URL and never
    shown; without the key."""
    from azure.storage.blob import AccountSasPermissions, ResourceTypes, generate_account_sas

    sas = generate_account_sas(AZURITE_ACCOUNT, AZURITE_KEY,
                               ResourceTypes(container=True, object=True),
                               AccountSasPermissions(read=True, write=True, list=True,
                                                     delete=True, create=True, add=True),
                               expiry=datetime.datetime.now(datetime.UTC)
                               + datetime.timedelta(hours=1))
    monkeypatch.delenv("AZURE_STORAGE_CONNECTION_STRING")
    options = {"account_name": AZURITE_ACCOUNT, "sas_token": sas,
               "endpoint_url": f"{azure_proxy.url}/{AZURITE_ACCOUNT}"}
    url = f"az://{azure_container}/sas/t.orc"
    await aorc.write_table(TABLE, url, storage_options=options)
    assert (await aorc.read_table(url, storage_options=options)).equals(TABLE)
    assert azure_proxy.log and all("sig=" in r.target and "authorization" not in r.headers
                                   for r in azure_proxy.log)
    signature = sas.split("sig=")[1].split("&")[0]
    with pytest.raises(ObjectNotFoundError) as info:
        await aorc.read_table(f"az://{azure_container}/sas/missing.orc", storage_options=options)
    assert signature not in str(info.value) and "sig=" not in str(info.value)
    store = open_store(url, options)
    assert signature not in repr(store) and signature not in repr(store.config)  # type: ignore[attr-defined]


class _Credential:
    """An Azure AD credential (azure.identity's shape): a fixed token, counted."""

    def __init__(self, token: str) -> None:
        self.token = token
        self.calls = 0

    def get_token(self, *scopes: str) -> Any:
        import time
        from types import SimpleNamespace
        self.calls += 1
        assert scopes == ("https://storage.azure.com/.default",)
        return SimpleNamespace(token=self.token, expires_on=int(time.time()) + 3600)


async def test_azure_ad_token(azure_container: str, azure_proxy: S3Proxy,
                              monkeypatch: pytest.MonkeyPatch) -> None:
    """An Azure AD credential's token goes out as a bearer token, fetched once while valid.
    Azurite accepts OAuth only over HTTPS, so here it refuses the requests: the test checks
    what was sent and that the refusal is an AccessDeniedError that does not show the
    token."""
    monkeypatch.delenv("AZURE_STORAGE_CONNECTION_STRING")
    credential = _Credential("eyJ0eXAiOiJKV1QiLCJhbGciOi.secret-part")
    options = {"credential": credential, "account_name": AZURITE_ACCOUNT,
               "endpoint_url": f"{azure_proxy.url}/{AZURITE_ACCOUNT}"}
    for _ in range(2):
        with pytest.raises(AccessDeniedError) as info:
            await aorc.read_table(f"az://{azure_container}/t.orc", storage_options=options)
        assert credential.token not in str(info.value)
    assert credential.calls == 1
    assert azure_proxy.log and all(
        r.headers.get("authorization") == f"Bearer {credential.token}" for r in azure_proxy.log)
    assert credential.token not in repr(AzureConfig.from_options(options))
