"""Reading encrypted columns with keys, against ORC Java (InMemoryKeystore) as the oracle:
the two conformance samples (key from their JCEKS store) and files ORC Java writes with two
keys (AES_CTR_256 and AES_CTR_128), three codecs and several stripes; without keys, ORC Java's
and pyarrow's masked values; pushdown on decrypted statistics, row indexes; wrong keys and
hostile encryption blocks."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow.orc as pa_orc
import pytest
from helpers.corpus import corpus_root
from helpers.orc_java_enc import CODECS, HR, KEY_SETS, PII, JavaFiles, OrcJava, key_arg

import aorc
from aorc.format._proto import orc_proto_pb2 as pb
from aorc.format.tail import parse_tail

COLUMNS = ["id", "ssn", "email", "salary", "name"]


def provider(name: str) -> aorc.InMemoryKeys | None:
    """The aorc provider of a key set of ``conftest.KEY_SETS``."""
    if name == "all":
        return aorc.InMemoryKeys({"pii": PII, "hr": {1: HR}})
    if name == "pii":
        return aorc.InMemoryKeys({"pii": PII})
    return None


def rows(table: Any, columns: list[str]) -> list[list[Any]]:
    return [[r[c] for c in columns] for r in table.to_pylist()]


# --------------------------------------------------------------------------- the samples

@pytest.fixture(scope="module")
def samples(orc_java: OrcJava) -> tuple[list[Path], bytes, list[Any], list[Any]]:
    root = corpus_root()
    if root is None:
        pytest.skip("needs the conformance corpus")
    keys = orc_java.keystore(root / "keys" / "kms.keystore", "ORC_KEY")
    pii = keys["pii@0"]
    files = [root / "files" / "encrypted" / f"sample{i}.orc" for i in (1, 2)]
    both = orc_java.read(files * 2, [[key_arg("pii", 0, pii)]] * 2 + [[]] * 2)
    return files, pii, both[:2], both[2:]


def test_samples_decrypt_as_orc_java(samples: Any) -> None:
    files, pii, with_key, without = samples
    keys = aorc.InMemoryKeys({"pii": pii})
    for path, java_keyed, java_masked in zip(files, with_key, without, strict=True):
        table = aorc.sync.read_table(path, keys=keys)
        assert rows(table, ["ssn", "email", "name"]) == java_keyed.rows
        assert table.column("ssn")[0].as_py() not in (None, "")
        masked = aorc.sync.read_table(path)
        assert rows(masked, ["ssn", "email", "name"]) == java_masked.rows
        assert rows(masked, ["ssn", "email", "name"]) == rows(pa_orc.read_table(path),
                                                              ["ssn", "email", "name"])
        with aorc.sync.open_reader(path, keys=keys) as reader:
            stats = reader.statistics
            for column in (1, 2):  # decrypted file statistics, as ORC Java prints them
                text = java_keyed.stats[column]
                assert f"min: {stats[column].minimum} " in text
                assert f"bytesOnDisk: {stats[column].bytes_on_disk} " in text
            enc = reader.encryption
        assert enc is not None
        assert [(v["column"], v["key"], v["version"], v["algorithm"], v["mask"],
                 v["decrypted"]) for v in enc["variants"]] == [
            ("ssn", "pii", 0, "AES_CTR_256", "nullify", True),
            ("email", "pii", 0, "AES_CTR_256", "sha256", True)]
        with aorc.sync.open_reader(path) as reader:
            assert reader.statistics[1].minimum is None  # the masked (null) column's
            enc = reader.encryption
        assert enc is not None and not any(v["decrypted"] for v in enc["variants"])


# --------------------------------------------------------------------------- Java's files

@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("key_set", list(KEY_SETS))
def test_java_files_read_as_orc_java(java_files: JavaFiles, codec: str, key_set: str) -> None:
    path = java_files.paths[codec]
    java = java_files.reads[codec, key_set]
    assert java.error is None and len(java.rows) > 10_000
    table = aorc.sync.read_table(path, keys=provider(key_set))
    assert rows(table, COLUMNS) == java.rows
    with aorc.sync.open_reader(path, keys=provider(key_set)) as reader:
        assert reader.num_stripes > 1
        batches = list(reader.iter_batches(batch_size=777, columns=["salary", "ssn"]))
        assert sum(b.num_rows for b in batches) == len(java.rows)
        assert [r for b in batches for r in rows(b, ["ssn", "salary"])] == \
            [[r[1], r[3]] for r in java.rows]
        stats = reader.statistics
        for column in (2, 4):  # ssn, salary: decrypted or masked, as ORC Java gives them
            minimum = stats[column].minimum
            assert (f"min: {minimum} " in java.stats[column]) == (minimum is not None)
    if key_set == "none":
        assert rows(pa_orc.read_table(path), COLUMNS) == java.rows


@pytest.mark.parametrize("codec", ["ZLIB", "NONE"])
def test_pushdown_uses_decrypted_indexes(java_files: JavaFiles, codec: str) -> None:
    path = java_files.paths[codec]
    expected = [r for r in java_files.reads[codec, "all"].rows if r[3] == 5000]
    assert expected
    with aorc.sync.open_reader(path, keys=provider("all")) as reader:
        table = reader.read(filters=[("salary", "==", 5000)])
        assert rows(table, COLUMNS) == expected
        table = reader.read(filters=[("ssn", "<", "001-")])
        assert rows(table, COLUMNS) == [r for r in java_files.reads[codec, "all"].rows
                                        if r[1] < "001-"]
        table = reader.read(filters=[("id", ">=", 11_500), ("salary", ">", 90_000)])
        assert rows(table, COLUMNS) == [r for r in java_files.reads[codec, "all"].rows
                                        if r[0] >= 11_500 and r[3] > 90_000]
        assert reader.scan_stats.row_groups_pruned_by_stats > 0
        part = reader.read(stripes=[1], filters=[("ssn", "==", "005-05-0005")])
        assert part.num_rows <= 1
    with aorc.sync.open_reader(path) as reader:  # masked: salary is null everywhere
        assert reader.read(filters=[("salary", "==", 5000)]).num_rows == 0
        assert reader.scan_stats.stripes_pruned_by_stats == reader.num_stripes


def test_datasets_with_keys(java_files: JavaFiles, tmp_path: Path) -> None:
    for codec, path in java_files.paths.items():
        (tmp_path / f"{codec}.orc").write_bytes(path.read_bytes())
    table = aorc.sync.read_dataset(tmp_path, keys=provider("all"))
    expected = [r for c in sorted(CODECS) for r in java_files.reads[c, "all"].rows]
    assert sorted(rows(table, COLUMNS)) == sorted(expected)
    ds = aorc.sync.open_dataset(tmp_path, keys=provider("pii"))
    table = ds.read(columns=["ssn", "salary"], filters=[("ssn", "==", "005-05-0005")])
    assert rows(table, ["ssn", "salary"]) == [["005-05-0005", None]] * len(CODECS)
    assert aorc.sync.read_table(tmp_path).column("ssn").null_count == len(expected)


# --------------------------------------------------------------------------- wrong keys

def test_wrong_key_is_a_clear_error(java_files: JavaFiles) -> None:
    path = java_files.paths["ZLIB"]
    wrong = bytes(31) + b"\x01"
    with pytest.raises(aorc.DecryptionError) as info:
        aorc.sync.read_table(path, keys=aorc.InMemoryKeys({"pii": wrong}))
    text = str(info.value)
    assert "'pii'" in text and ("ssn" in text or "email" in text)
    assert wrong.hex() not in text and PII.hex() not in text
    with pytest.raises(aorc.DecryptionError, match="'hr' but not version 1"):
        aorc.sync.read_table(path, keys=aorc.InMemoryKeys({"hr": {0: HR}}))
    with pytest.raises(aorc.SchemaError, match="key provider"):
        aorc.sync.read_table(path, keys={"pii": PII})  # type: ignore[arg-type]


# --------------------------------------------------------------------------- hostile blocks

def _with_footer(data: bytes, mutate: Callable[[pb.Footer, pb.PostScript], None]) -> bytes:
    """The uncompressed file ``data`` with its footer (and PostScript) changed."""
    tail = parse_tail(data, len(data))
    assert not isinstance(tail, type(None))
    footer, ps = pb.Footer(), pb.PostScript()
    footer.CopyFrom(tail.footer)  # type: ignore[union-attr]
    ps.CopyFrom(tail.postscript)  # type: ignore[union-attr]
    mutate(footer, ps)
    start = len(data) - 1 - tail.postscript_length - tail.postscript.footerLength  # type: ignore[union-attr]
    raw = footer.SerializeToString()
    ps.footerLength = len(raw)
    ps_raw = ps.SerializeToString()
    return data[:start] + raw + ps_raw + bytes([len(ps_raw)])


def _set_root(f: pb.Footer, ps: pb.PostScript) -> None:
    f.encryption.variants[0].root = 999


def _set_key(f: pb.Footer, ps: pb.PostScript) -> None:
    f.encryption.variants[1].key = 7


def _set_algorithm(f: pb.Footer, ps: pb.PostScript) -> None:
    f.encryption.key[0].algorithm = pb.UNKNOWN_ENCRYPTION


def _drop_local_keys(f: pb.Footer, ps: pb.PostScript) -> None:
    del f.stripes[0].encryptedLocalKeys[:]


def _short_key(f: pb.Footer, ps: pb.PostScript) -> None:
    f.encryption.variants[0].encryptedKey = b"abcd"


def _stats_length(f: pb.Footer, ps: pb.PostScript) -> None:
    f.encryption.variants[0].stripeStatistics[0].length += 1


def _overlap(f: pb.Footer, ps: pb.PostScript) -> None:
    f.encryption.variants[0].root = 0


def _stats_column(f: pb.Footer, ps: pb.PostScript) -> None:
    f.encryption.variants[0].stripeStatistics[0].column = 1


@pytest.mark.parametrize("mutate", [_set_root, _set_key, _set_algorithm, _drop_local_keys,
                                    _short_key, _stats_length, _overlap, _stats_column])
def test_hostile_encryption_blocks(java_files: JavaFiles,
                                   mutate: Callable[[pb.Footer, pb.PostScript], None]) -> None:
    data = java_files.paths["NONE"].read_bytes()
    bad = _with_footer(data, mutate)
    assert aorc.sync.read_table(_with_footer(data, lambda f, ps: None),
                                keys=provider("all")).num_rows == 12_000  # the rewrite is sound
    with pytest.raises(aorc.CorruptFileError):
        aorc.sync.read_table(bad, keys=provider("all"))
    with aorc.sync.open_reader(bad) as reader, pytest.raises(aorc.CorruptFileError):
        reader.encryption  # noqa: B018
