"""Writing encrypted columns, judged by ORC Java (InMemoryKeystore, with and without keys),
pyarrow (the masked copy) and the file's bytes (no plaintext of an encrypted column
anywhere); the options in ORC Java's spellings; the key provider's secrecy."""

from __future__ import annotations

import hashlib
import random
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.orc as pa_orc
import pytest
from helpers.orc_java_enc import HR, KEY_SETS, PII, JavaReadResult, OrcJava

import aorc

ENCRYPT = "pii:ssn,email;hr:salary"
COLUMNS = ["id", "ssn", "email", "salary", "name"]
N = 9_000


def table(n: int = N, seed: int = 7) -> pa.Table:
    rng = random.Random(seed)
    return pa.table({
        "id": pa.array(range(n), pa.int64()),
        "ssn": [f"SSN-{rng.randrange(10**9):09d}" for _ in range(n)],
        "email": [None if i % 7 == 3 else f"user{i}.{rng.randrange(10**6)}@example.com"
                  for i in range(n)],
        "salary": pa.array([rng.randrange(10**6) for _ in range(n)], pa.int64()),
        "name": [f"Name {i}" for i in range(n)],
    })


def keys() -> aorc.InMemoryKeys:
    return aorc.InMemoryKeys({"pii": PII, "hr": {1: HR}},
                             random_bytes=random.Random(1).randbytes)


def masked(t: pa.Table) -> list[list[Any]]:
    """What a reader without keys sees, computed here (ORC Java's sha256 and nullify)."""
    out = []
    for r in t.to_pylist():
        email = r["email"]
        digest = None if email is None else hashlib.sha256(email.encode()).hexdigest().upper()
        out.append([r["id"], None, digest, None, r["name"]])
    return out


def write(t: pa.Table, path: Path, compression: str, **kw: Any) -> None:
    aorc.sync.write_table(t, path, keys=keys(), encrypt=ENCRYPT, masks="sha256:email",
                          compression=compression, stripe_size=64 << 10,
                          row_index_stride=1000, bloom_filter_columns=["ssn"], **kw)


COMPRESSIONS = ("none", "zlib", "zstd")


@pytest.fixture(scope="module")
def aorc_files(orc_java: OrcJava, tmp_path_factory: pytest.TempPathFactory
               ) -> dict[str, tuple[Path, JavaReadResult, JavaReadResult]]:
    """aorc's encrypted files, one per codec, and ORC Java's readings of them with the
    keys and without (one JVM)."""
    root = tmp_path_factory.mktemp("aorc-encrypted")
    paths = {c: root / f"enc-{c}.orc" for c in COMPRESSIONS}
    for c, path in paths.items():
        write(table(), path, c)
    reads = orc_java.read([p for p in paths.values() for _ in (0, 1)],
                          [KEY_SETS["all"], []] * len(paths))
    return {c: (paths[c], reads[2 * i], reads[2 * i + 1]) for i, c in enumerate(paths)}


@pytest.mark.parametrize("compression", COMPRESSIONS)
def test_orc_java_reads_aorc_files(aorc_files: dict[str, tuple[Path, JavaReadResult,
                                                                JavaReadResult]],
                                   compression: str) -> None:
    t = table()
    path, with_keys, without = aorc_files[compression]
    assert with_keys.error is None and without.error is None
    assert with_keys.rows == [[r[c] for c in COLUMNS] for r in t.to_pylist()]
    assert without.rows == masked(t)
    ssn = t.column("ssn").to_pylist()
    assert f"min: {min(ssn)} max: {max(ssn)} " in with_keys.stats[2]  # decrypted file stats
    assert "min:" not in without.stats[2]
    assert [[r[c] for c in COLUMNS] for r in pa_orc.read_table(path).to_pylist()] == masked(t)
    assert [[r[c] for c in COLUMNS] for r in aorc.sync.read_table(path).to_pylist()] == \
        masked(t)
    with aorc.sync.open_reader(path, keys=keys()) as reader:
        assert reader.num_stripes > 1
        assert reader.read().equals(t)
        one = ssn[4321]
        got = reader.read(filters=[("ssn", "==", one)])
        assert got.column("id").to_pylist() == [i for i, s in enumerate(ssn) if s == one]
        assert reader.scan_stats.row_groups_pruned_by_bloom > 0  # the encrypted bloom filters


def test_no_plaintext_in_the_file(tmp_path: Path) -> None:
    t = table(3000)
    path = tmp_path / "plain.orc"
    write(t, path, "none", metadata={"note": "x"})
    data = path.read_bytes()
    secrets = [*t.column("ssn").to_pylist(), *[e for e in t.column("email").to_pylist() if e]]
    assert not [s for s in secrets if s.encode() in data]
    assert b"SSN-" not in data and b"@example.com" not in data
    # and the clear columns are there, uncompressed: the check can fail
    assert b"Name 2999" in data
    assert aorc.sync.read_table(path, keys=keys()).equals(t)
    with aorc.sync.open_reader(path) as reader:  # the clear statistics are the masked ones
        assert reader.statistics[2].minimum is None and reader.statistics[4].maximum is None


def test_options_in_orc_java_spellings(tmp_path: Path) -> None:
    opts = aorc.WriteOptions(encrypt={"pii": ["ssn", "email"], "hr": "salary"},
                             masks={"sha256": ["email"]})
    assert opts.encrypt == ENCRYPT and opts.masks == "sha256:email"
    t = table(100)
    aorc.sync.write_table(t, tmp_path / "a.orc", opts, keys=keys())
    with aorc.sync.open_reader(tmp_path / "a.orc") as reader:
        enc = reader.encryption
    assert enc is not None
    assert [(v["column"], v["key"], v["version"], v["algorithm"], v["mask"])
            for v in enc["variants"]] == [("salary", "hr", 1, "AES_CTR_128", "nullify"),
                                         ("ssn", "pii", 0, "AES_CTR_256", "nullify"),
                                         ("email", "pii", 0, "AES_CTR_256", "sha256")]
    with pytest.raises(aorc.SchemaError, match="keys="):
        aorc.sync.write_table(t, tmp_path / "b.orc", encrypt="pii:ssn")
    with pytest.raises(aorc.SchemaError, match="no key 'nope'"):
        aorc.sync.write_table(t, tmp_path / "b.orc", encrypt="nope:ssn", keys=keys())
    with pytest.raises(aorc.SchemaError):
        aorc.sync.write_table(t, tmp_path / "b.orc", encrypt="pii:missing", keys=keys())
    with pytest.raises(aorc.SchemaError, match="masks"):
        aorc.WriteOptions(encrypt="pii:ssn", masks="scramble:ssn")
    with pytest.raises(aorc.SchemaError):
        aorc.WriteOptions(encrypt="pii")
    with pytest.raises(aorc.SchemaError, match="not encrypted"):
        aorc.sync.write_table(t, tmp_path / "b.orc", encrypt="pii:ssn", masks="sha256:email",
                              keys=keys())
    assert not (tmp_path / "b.orc").exists()


async def test_in_memory_keys_keep_their_secrets() -> None:
    provider = aorc.InMemoryKeys({"pii": PII, "hr": {1: HR, 3: bytes(16)}})
    assert repr(provider) == "InMemoryKeys(['hr@1', 'hr@3', 'pii@0'])"
    assert PII.hex() not in repr(provider) and HR.hex() not in repr(provider)
    version = await provider.current_version("hr")
    assert (version.version, version.algorithm) == (3, "AES_CTR_128")
    local = await provider.create_local_key(await provider.current_version("pii"))
    assert len(local.key) == 32 and "key" not in repr(local).replace("LocalKey", "")
    assert await provider.decrypt_local_key(await provider.current_version("pii"),
                                            local.encrypted) == local.key
    assert await provider.decrypt_local_key(aorc.keys.KeyVersion("pii", 5, "AES_CTR_256"),
                                            local.encrypted) is None
    with pytest.raises(ValueError) as info:
        aorc.InMemoryKeys({"pii": PII[:20]})
    assert PII[:20].hex() not in str(info.value)
    with pytest.raises(ValueError) as info:
        aorc.keys.parse_key_spec("pii=zz" + PII.hex())
    assert PII.hex() not in str(info.value)
    assert aorc.keys.parse_key_spec(f"hr@1={HR.hex()}") == ("hr", 1, HR)


def test_nested_columns_are_one_variant(orc_java: OrcJava, tmp_path: Path) -> None:
    n = 2500
    t = pa.table({
        "id": pa.array(range(n), pa.int64()),
        "addr": pa.array([None if i == 1 else {"street": f"s{i}", "zip": i} for i in range(n)]),
        "tags": [None if i == 2 else [f"t{i}", None] for i in range(n)],
        "m": pa.array([[("k", i)] for i in range(n)], pa.map_(pa.string(), pa.int64())),
    })
    path = tmp_path / "nested.orc"
    aorc.sync.write_table(t, path, encrypt="pii:addr,tags;hr:m", masks="sha256:tags,m",
                          keys=keys(), row_index_stride=1000)
    assert aorc.sync.read_table(path, keys=keys()).equals(t)
    with aorc.sync.open_reader(path, keys=keys()) as reader:
        assert [(v["column"], v["column_id"]) for v in reader.encryption["variants"]] == [
            ("m", 7), ("addr", 2), ("tags", 5)]
        assert reader.read(filters=[("addr.zip", "==", 5)]).column("id").to_pylist() == [5]
        assert reader.scan_stats.row_groups_pruned_by_stats > 0
    masked = aorc.sync.read_table(path)
    assert masked.column("addr").null_count == n  # nullify: the whole struct
    assert masked.column("tags")[0].as_py() == [hashlib.sha256(b"t0").hexdigest().upper(),
                                                None]  # sha256 reaches into the list
    assert masked.column("m")[0].as_py() == [(hashlib.sha256(b"k").hexdigest().upper(), None)]
    assert pa_orc.read_table(path).equals(masked)
    with_keys, without = orc_java.read([path, path], [KEY_SETS["all"], []])
    assert with_keys.error is None and without.error is None
    assert [r[0] for r in with_keys.rows] == list(range(n))
    assert with_keys.rows[0][1] != without.rows[0][1]


def test_statistics_outside_the_tail_read(tmp_path: Path) -> None:
    """A footer longer than the first tail read: the encrypted stripe statistics (before the
    Metadata) are then outside the bytes read at open and fetched on their own."""
    t = table(2000)
    path = tmp_path / "long-footer.orc"
    rng = random.Random(3)
    write(t, path, "zstd", metadata={"big": rng.randbytes(64 << 10)})
    with aorc.sync.open_reader(path, keys=keys()) as reader:
        assert reader.io_stats.requests >= 3  # tail, longer tail, statistics
        assert reader.read().equals(t)
        assert reader.stripes[0].statistics[2].minimum == min(t.column("ssn").to_pylist()[
            :reader.stripes[0].num_rows])
