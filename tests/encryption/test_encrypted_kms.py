"""The Hadoop KMS client (:class:`aorc.keys.HadoopKMS`) against a KMS test server
(``tests/helpers/kms_server.py``) with ORC Java's own ``KMSClientProvider`` pointed at the
same server as the peer: each reads what the other wrote, and both agree with
:class:`aorc.InMemoryKeys` holding the same master key."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pytest
from helpers.kms_server import KmsServer
from helpers.orc_java_enc import OrcJava

import aorc
from aorc.keys import HadoopKMS

PII_V1 = bytes(range(32))


@pytest.fixture
def kms() -> Iterator[KmsServer]:
    with KmsServer({"pii": [bytes(32), PII_V1], "hr": [bytes(range(16))]}) as server:
        yield server


def test_aorc_and_orc_java_share_a_kms(kms: KmsServer, orc_java: OrcJava,
                                       tmp_path: Path) -> None:
    provider = HadoopKMS(kms.url, user="alice")
    assert "alice" in repr(provider) and PII_V1.hex() not in repr(provider)
    t = pa.table({"id": pa.array(range(300), pa.int64()),
                  "ssn": [f"ssn-{i:05d}" for i in range(300)],
                  "email": [f"u{i}@x.org" for i in range(300)],
                  "salary": pa.array([i * 7 for i in range(300)], pa.int64()),
                  "name": [f"n{i}" for i in range(300)]})
    ours = tmp_path / "aorc.orc"
    aorc.sync.write_table(t, ours, encrypt="pii:ssn;hr:salary", keys=provider)
    assert ("POST", "/kms/v1/keyversion/pii@1/_eek", "decrypt") in kms.requests
    assert aorc.sync.read_table(ours, keys=provider).equals(t)
    same = aorc.InMemoryKeys({"pii": {1: PII_V1}, "hr": bytes(range(16))})
    assert aorc.sync.read_table(ours, keys=same).equals(t)  # byte-compatible schemes
    theirs = tmp_path / "java.orc"
    kms_url = kms.url.replace("http://", "kms://http@")
    read_ours, wrote, read_theirs = orc_java.batch([
        ["readkms", str(ours), kms_url],
        ["writekms", str(theirs), "500", "pii:ssn,email", "sha256:email", "ZLIB", kms_url],
        ["readkms", str(theirs), kms_url]])
    assert wrote.strip() == ""
    assert OrcJava.parse_read(read_ours).rows == [list(r.values()) for r in t.to_pylist()]
    java_rows = OrcJava.parse_read(read_theirs).rows
    assert len(java_rows) == 500 and java_rows[1][1] == "001-01-0001"
    back = aorc.sync.read_table(theirs, keys=provider)
    assert [list(r.values()) for r in back.to_pylist()] == java_rows
    masked = aorc.sync.read_table(theirs)
    assert masked.column("ssn").null_count == 500
    with aorc.sync.open_reader(theirs, keys=provider) as reader:
        enc = reader.encryption
    assert enc is not None and {v["version"] for v in enc["variants"]} == {1}


async def test_kms_errors_and_missing_keys(kms: KmsServer) -> None:
    provider = HadoopKMS(kms.url.replace("http://", "kms://http@"))
    assert await provider.key_names() == ["hr", "pii"]
    version = await provider.current_version("pii")
    assert (version.version, version.algorithm) == (1, "AES_CTR_256")
    with pytest.raises(KeyError):
        await provider.current_version("nope")
    assert await provider.decrypt_local_key(aorc.keys.KeyVersion("pii", 9, "AES_CTR_256"),
                                            bytes(32)) is None
    made = await provider.create_local_key(version)
    assert await provider.decrypt_local_key(version, made.encrypted) == made.key
    generated = await provider.generate_encrypted_keys("pii", 2)
    assert [g[0] for g in generated] == ["pii@1", "pii@1"]
    with pytest.raises(ValueError):
        HadoopKMS("ftp://example.com/kms")
    dead = HadoopKMS("http://127.0.0.1:9/kms")
    with pytest.raises(aorc.StoreError):
        await dead.key_names()
