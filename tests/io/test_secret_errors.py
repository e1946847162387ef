"""No secret reaches an error message, a repr or a log line: sentinel secrets go through every
store's wrong-type, bad-option and bad-URL paths (and the CLI's ``-S``), and the sentinel
must not appear in ``str(exc)``, ``repr(exc)``, the notes, the exception chain or the logs.
No request reaches a server: every case fails while the options or the URL are parsed, or
on a closed local port."""

from __future__ import annotations

import io
import logging
import traceback
from contextlib import redirect_stderr
from typing import Any

import pytest

import aorc
from aorc.cli.main import main as cli_main
from aorc.io import registry

SECRET = "Sentinel-Secret-7f3a9c"
NUMBER = 987654321987  # a secret given with the wrong type (``-S secret=987654321987``)
B64 = "U2VudGluZWxLZXk5OTk="  # an account key must be base64
SECRETS = (SECRET, str(NUMBER), "Sentinel%2DSecret", B64)


def _chain(exc: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    todo: list[BaseException | None] = [exc]
    while todo:
        e = todo.pop()
        if e is None or any(e is s for s in seen):
            continue
        seen.append(e)
        todo += [e.__cause__, e.__context__]
        todo += list(getattr(e, "exceptions", []))
    return seen


def _texts(exc: BaseException) -> str:
    parts = []
    for e in _chain(exc):
        parts += [str(e), repr(e), *getattr(e, "__notes__", []), repr(getattr(e, "args", ()))]
    parts.append("".join(traceback.format_exception(exc)))
    return "\n".join(parts)


def _assert_clean(text: str) -> None:
    for secret in SECRETS:
        at = text.find(secret)
        assert at < 0, f"a secret leaked: ...{text[max(0, at - 200):at + 40]}..."


# (url, storage options); each must be refused, and never echo a secret
S3 = "s3://bucket/key.orc"
GS = "gs://bucket/key.orc"
AZ = "az://container/key.orc"
HTTP = "https://example.invalid/f.orc"
CASES: dict[str, tuple[str, dict[str, Any]]] = {
    "s3-secret-int": (S3, {"key": "AKIA", "secret": NUMBER}),
    "s3-secret-list": (S3, {"key": "AKIA", "secret": [SECRET]}),
    "s3-secret-alone": (S3, {"secret": SECRET}),
    "s3-token-int": (S3, {"key": "AKIA", "secret": "x", "token": NUMBER}),
    "s3-token-dict": (S3, {"key": "AKIA", "secret": "x", "token": {"t": SECRET}}),
    "s3-key-int": (S3, {"key": NUMBER, "secret": SECRET}),
    "s3-endpoint-userinfo": (S3, {"endpoint_url": f"http://user:{SECRET}@127.0.0.1:1"}),
    "s3-endpoint-query": (S3, {"endpoint_url": f"http://127.0.0.1:1/?X-Amz-Signature={SECRET}"}),
    "s3-endpoint-int": (S3, {"endpoint_url": NUMBER}),
    "s3-config-bad-key": (S3, {"config": {"bogus": SECRET}}),
    "s3-config-proxies": (S3, {"config": {"proxies": SECRET}}),
    "s3-config-proxies-bad": (S3, {"config": {"proxies": {"https": f"http://u:{SECRET}@p"},
                                              "bogus": 1}}),
    "s3-config-not-dict": (S3, {"config": SECRET}),
    "s3-unknown-option": (S3, {"aws_secret_acess_key": SECRET}),
    "s3-unknown-option-int": (S3, {"aws_secret_acess_key": NUMBER}),
    "s3-profile-int": (S3, {"profile": NUMBER}),
    "s3-url-userinfo": (f"s3://AKIA:{SECRET}@bucket/", {}),
    "s3-url-userinfo-key": (f"s3://AKIA:{SECRET}@bucket/key.orc", {}),
    "gcs-endpoint-query": (GS, {"endpoint_url": f"http://127.0.0.1:1/?access_token={SECRET}"}),
    "azure-endpoint-query": (AZ, {"account_name": "acct",
                                  "endpoint": f"http://127.0.0.1:1/?sig={SECRET}"}),
    "gcs-token-int": (GS, {"token": NUMBER}),
    "gcs-token-list": (GS, {"token": [SECRET]}),
    "gcs-credentials-bad-dict": (GS, {"token": {"type": "service_account",
                                                "private_key": SECRET}}),
    "gcs-endpoint-userinfo": (GS, {"endpoint_url": f"http://u:{SECRET}@127.0.0.1:1"}),
    "gcs-unknown-option": (GS, {"tokn": SECRET}),
    "gcs-url-userinfo": (f"gs://u:{SECRET}@bucket/k.orc", {}),
    "azure-key-int": (AZ, {"account_name": "acct", "account_key": NUMBER}),
    "azure-key-list": (AZ, {"account_name": "acct", "account_key": [SECRET]}),
    "azure-sas-int": (AZ, {"account_name": "acct", "sas_token": NUMBER}),
    "azure-sas-and-key": (AZ, {"account_name": "acct", "sas_token": SECRET,
                               "account_key": SECRET}),
    "azure-connection-string-bad": (AZ, {"connection_string": f"AccountKey={SECRET};junk"}),
    "azure-connection-string-int": (AZ, {"connection_string": NUMBER}),
    "azure-connection-string-no-name": (AZ, {"connection_string": f"AccountKey={SECRET}"}),
    "azure-client-secret-alone": (AZ, {"account_name": "acct", "client_secret": SECRET}),
    "azure-client-secret-int": (AZ, {"account_name": "acct", "client_id": "c",
                                     "tenant_id": "t", "client_secret": NUMBER}),
    "azure-endpoint-userinfo": (AZ, {"account_name": "acct",
                                     "endpoint": f"http://u:{SECRET}@127.0.0.1:1"}),
    "azure-unknown-option": (AZ, {"acount_key": SECRET}),
    "azure-url-userinfo": (f"az://u:{SECRET}@container/k.orc", {}),
    "http-header-int": (HTTP, {"headers": {"Authorization": NUMBER}}),
    "http-headers-not-dict": (HTTP, {"headers": SECRET}),
    "http-headers-list": (HTTP, {"headers": [("Authorization", SECRET)]}),
    "http-unknown-option": (HTTP, {"bearer": SECRET}),
    "http-folder-url": (f"https://u:{SECRET}@example.invalid/dir/?sig={SECRET}", {}),
    "local-unknown-option": ("/tmp/x.orc", {"token": SECRET}),
    "unknown-scheme": (f"ftp://u:{SECRET}@host/f.orc", {}),
}


@pytest.mark.parametrize("case", sorted(CASES))
async def test_bad_options_never_echo_secrets(case: str,
                                              caplog: pytest.LogCaptureFixture) -> None:
    url, options = CASES[case]
    caplog.set_level(logging.DEBUG)
    failures = []
    for attempt in (lambda: registry.check_options(url, options),
                    lambda: registry.open_input(url, options)):
        try:
            attempt()
        except Exception as exc:  # noqa: BLE001 - every failure is checked below
            failures.append(exc)
    try:
        await aorc.read_table(url, storage_options=options)
    except Exception as exc:  # noqa: BLE001
        failures.append(exc)
    assert failures, f"{case}: nothing refused these options"
    for exc in failures:
        assert isinstance(exc, aorc.AorcError), f"{case}: {type(exc).__name__}: {exc}"
        _assert_clean(_texts(exc))
    _assert_clean(caplog.text)


@pytest.mark.parametrize("argv", [
    ["head", S3, "-S", "key=AKIA", "-S", f"secret={NUMBER}"],
    ["head", S3, "-S", f"aws_secret_acess_key={SECRET}"],
    ["head", S3, "-S", SECRET],
    ["head", S3, "--endpoint-url", f"http://user:{SECRET}@127.0.0.1:1"],
    ["head", AZ, "-S", f"connection_string=AccountKey={SECRET};junk"],
    ["head", f"https://u:{SECRET}@127.0.0.1:1/f.orc?sig={SECRET}"],
], ids=["secret-int", "unknown", "no-equals", "endpoint", "connection-string", "http-url"])
def test_cli_never_echoes_secrets(argv: list[str], caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    err = io.StringIO()
    with redirect_stderr(err):
        status = cli_main(argv)
    assert status != 0 and "error" in err.getvalue()
    _assert_clean(err.getvalue())
    _assert_clean(caplog.text)


def test_option_reprs_hide_secrets() -> None:
    from aorc.io.azure.config import AzureConfig
    from aorc.io.gcs.config import GCSConfig
    from aorc.io.s3.config import S3Config

    configs = [
        S3Config.from_options({"key": "AKIA", "secret": SECRET, "token": SECRET,
                               "endpoint_url": "http://127.0.0.1:1",
                               "config": {"proxies": {"https": f"http://u:{SECRET}@p"}}}),
        GCSConfig.from_options({"token": "anon", "endpoint_url": "http://127.0.0.1:1"}),
        AzureConfig.from_options({"account_name": "acct", "account_key": B64}),
    ]
    for config in configs:
        _assert_clean(repr(config))
        _assert_clean(str(config))
