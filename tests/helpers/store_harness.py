"""One face for the three object stores of the store-level suite (``tests/io/test_stores.py``):
S3 (moto), GCS (gcp-storage-emulator) and Azure (Azurite), each behind the test proxy.

A :class:`Backend` knows how to reach its store through the proxy, how to put, get and list
objects *without aorc* (boto3, the emulator's own API, azure-storage-blob: independent
peers), and how to read the proxy's request log in its store's terms (which requests are
ranged GETs, part uploads, commits, what pins a request to a version).
"""

from __future__ import annotations

import json
import threading
import urllib.parse
from dataclasses import dataclass, field
from typing import Any

from helpers.s3proxy import Record, S3Proxy
from helpers.store_fixtures import gcs_call, gcs_get, gcs_names, gcs_put

__all__ = ["Backend", "FakeClock", "hold_until", "make_backend"]


@dataclass
class Backend:
    """A store under test.

    Attributes:
        name: ``"s3"``, ``"gs"`` or ``"az"`` (S3 through either engine is ``"s3"``).
        proxy: the proxy every aorc request goes through.
        root: the URL of the bucket or container (``s3://bucket``).
        options: storage options reaching the store through the proxy, with fast retries.
    """

    name: str
    proxy: S3Proxy
    root: str
    options: dict[str, Any]
    peer: Any
    extra: dict[str, Any] = field(default_factory=dict)

    def url(self, key: str) -> str:
        return f"{self.root}/{key}"

    # ------------------------------------------------------------------ the peer
    def put(self, key: str, data: bytes) -> str:
        """Write an object without aorc; its version (ETag, generation)."""
        if self.name == "s3":
            etag: str = self.peer.put_object(Bucket=self.extra["bucket"], Key=key,
                                             Body=data)["ETag"]
            return etag
        if self.name == "gs":
            gcs_put(self.extra["emulator"], self.extra["bucket"], key, data)
            status, body = gcs_call(self.extra["emulator"], "GET",
                                    f"/storage/v1/b/{self.extra['bucket']}/o/"
                                    f"{urllib.parse.quote(key, safe='')}")
            assert status == 200
            return str(json.loads(body)["generation"])
        client = self.peer.get_blob_client(self.extra["container"], key)
        result = client.upload_blob(data, overwrite=True)
        return str(result["etag"])

    def get(self, key: str) -> bytes | None:
        """An object's bytes without aorc, ``None`` when absent."""
        if self.name == "s3":
            try:
                body: bytes = self.peer.get_object(Bucket=self.extra["bucket"],
                                                   Key=key)["Body"].read()
                return body
            except self.peer.exceptions.NoSuchKey:
                return None
        if self.name == "gs":
            return gcs_get(self.extra["emulator"], self.extra["bucket"], key)
        from azure.core.exceptions import ResourceNotFoundError
        try:
            data: bytes = self.peer.get_blob_client(self.extra["container"],
                                                    key).download_blob().readall()
            return data
        except ResourceNotFoundError:
            return None

    def names(self) -> list[str]:
        """Every object's name, without aorc."""
        if self.name == "s3":
            found = self.peer.list_objects_v2(Bucket=self.extra["bucket"]).get("Contents", [])
            return sorted(item["Key"] for item in found)
        if self.name == "gs":
            return gcs_names(self.extra["emulator"], self.extra["bucket"])
        container = self.peer.get_container_client(self.extra["container"])
        return sorted(blob.name for blob in container.list_blobs())

    def pending_uploads(self) -> int:
        """Uploads begun and neither completed nor aborted, as far as the store tells: S3's
        multipart uploads; GCS sessions not cancelled (the front's record); Azure has no
        such list (uncommitted blocks are never shown), so 0."""
        if self.name == "s3":
            return len(self.peer.list_multipart_uploads(Bucket=self.extra["bucket"])
                       .get("Uploads", []))
        if self.name == "gs":  # sessions that got chunks, minus finished and cancelled ones
            def session(record: Record) -> str:
                query = urllib.parse.parse_qs(urllib.parse.urlsplit(record.target).query)
                return query.get("upload_id", [""])[0]
            parts = self.records("part")
            begun = {session(r) for r in parts}
            finished = {session(r) for r in parts if r.status in (200, 201)}
            return len(begun - finished - self.extra["front"].cancelled)
        return 0

    # ------------------------------------------------------------------ the log
    def kind(self, record: Any) -> str:
        """What a request did: get, head, put (whole object), create (an upload), part,
        complete, abort, list, delete or other."""
        query = urllib.parse.parse_qs(urllib.parse.urlsplit(record.target).query,
                                      keep_blank_values=True)
        method = record.method
        if self.name == "s3":
            return {"GetObject": "get", "HeadObject": "head", "PutObject": "put",
                    "CreateMultipartUpload": "create", "UploadPart": "part",
                    "CompleteMultipartUpload": "complete", "AbortMultipartUpload": "abort",
                    "GET bucket": "list", "DeleteObject": "delete"}.get(record.operation,
                                                                        "other")
        if self.name == "gs":
            if method == "GET" and query.get("alt") == ["media"]:
                return "get"
            if method == "POST" and query.get("uploadType") == ["media"]:
                return "put"
            if method == "POST" and query.get("uploadType") == ["resumable"]:
                return "create"
            if method == "PUT" and "upload_id" in query:
                return "part"
            if method == "DELETE" and "upload_id" in query:
                return "abort"
            if method == "GET" and record.target.split("?")[0].endswith("/o"):
                return "list"
            if method == "DELETE":
                return "delete"
            return "other"
        comp = query.get("comp", [""])[0]
        if method == "GET" and comp == "list":
            return "list"
        if method == "GET":
            return "get"
        if method == "HEAD":
            return "head"
        if method == "PUT" and comp == "block":
            return "part"
        if method == "PUT" and comp == "blocklist":
            return "complete"
        if method == "PUT" and not comp:
            return "put"
        if method == "DELETE":
            return "delete"
        return "other"

    def records(self, kind: str) -> list[Record]:
        return [r for r in self.proxy.log if self.kind(r) == kind]

    def byte_range(self, record: Record) -> str | None:
        return record.headers.get("x-ms-range") or record.headers.get("range")

    def pin(self, record: Record) -> str | None:
        """The version a request requires (``If-Match``, ``ifGenerationMatch``)."""
        if self.name == "gs":
            query = urllib.parse.parse_qs(urllib.parse.urlsplit(record.target).query)
            return query.get("ifGenerationMatch", [None])[0]
        return record.headers.get("if-match")

    def create_only(self, record: Record) -> bool:
        """Whether a write request asks for create-only semantics."""
        if self.name == "gs":
            query = urllib.parse.parse_qs(urllib.parse.urlsplit(record.target).query)
            return query.get("ifGenerationMatch") == ["0"]
        return record.headers.get("if-none-match") == "*"


def make_backend(name: str, request: Any) -> Backend:
    """The backend ``name`` for a test (its fixtures are taken from ``request``)."""
    if name in ("s3", "s3-obstore"):  # S3 through aiobotocore, or its reads through obstore
        client = request.getfixturevalue("s3_client")
        bucket = request.getfixturevalue("s3_bucket")
        proxy = request.getfixturevalue("s3_proxy")
        request.getfixturevalue("fast_retries")
        options: dict[str, Any] = {"endpoint_url": proxy.url}
        if name == "s3-obstore":
            options.update(engine="obstore", retry_base_delay=0.0)
        return Backend("s3", proxy, f"s3://{bucket}", options, client, {"bucket": bucket})
    if name == "gs":
        bucket = request.getfixturevalue("gcs_bucket")
        proxy = request.getfixturevalue("gcs_proxy")
        return Backend("gs", proxy, f"gs://{bucket}", {"retry_base_delay": 0.0}, None,
                       {"bucket": bucket, "emulator": request.getfixturevalue("gcs_emulator"),
                        "front": request.getfixturevalue("gcs_front")})
    container = request.getfixturevalue("azure_container")
    proxy = request.getfixturevalue("azure_proxy")
    return Backend("az", proxy, f"az://{container}", {"retry_base_delay": 0.0},
                   request.getfixturevalue("azure_service"), {"container": container})


def hold_until(count: int, kind: str, backend: Backend) -> tuple[Any, threading.Event]:
    """A proxy rule holding ``kind`` requests until ``count`` of them have arrived (so they
    are in flight together whatever the machine's speed), and the event that releases
    them (set it in a ``finally``)."""
    from helpers.s3proxy import Hold

    gate = threading.Event()
    seen: list[str] = []

    def rule(request: Any) -> Hold | None:  # in the proxy's thread
        if backend.kind(request) != kind:
            return None
        seen.append(request.target)
        if len(seen) >= count:
            gate.set()
        return Hold(gate)

    return rule, gate


class FakeClock:
    """A simulated clock for aorc's retry loops (``aorc.io.transport.set_clock``): sleeping
    advances :attr:`now` at once, so a retry budget of tens of seconds costs no waiting.
    The proxy's burst rules read :attr:`now` too (from its own thread)."""

    def __init__(self) -> None:
        self.now = 0.0
        self.slept: list[float] = []

    def monotonic(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        import asyncio
        self.slept.append(seconds)
        self.now += seconds
        await asyncio.sleep(0)
