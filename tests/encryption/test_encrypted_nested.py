"""A struct's field encrypted alone (``encrypt="pii:address.zip"``), as ORC Java does: the
variant is that field's subtree, the rest of the struct stays in the clear. ORC Java writes
such a file and aorc reads it with and without keys as ORC Java does; aorc writes one and
ORC Java reads it so."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from helpers.orc_java_enc import HR, KEY_SETS, PII, OrcJava

import aorc

N = 3000


def keys() -> aorc.InMemoryKeys:
    return aorc.InMemoryKeys({"pii": PII, "hr": {1: HR}})


def table(n: int = N) -> pa.Table:
    """The rows ORC Java's ``writenested`` writes."""
    address = [None if i % 11 == 5 else
               {"street": f"Street {i}", "zip": None if i % 7 == 2 else f"{(i * 37) % 100000:05d}"}
               for i in range(n)]
    return pa.table({"id": pa.array(range(n), pa.int64()),
                     "address": pa.array(address, pa.struct([("street", pa.string()),
                                                             ("zip", pa.string())]))})


def java_rows(text_rows: list[list[Any]]) -> list[dict[str, Any]]:
    """ORC Java's rows (the struct as its text) as aorc's."""
    out = []
    for i, a in text_rows:
        street, zip_ = json.loads(a) if a is not None else (None, None)
        out.append({"id": i, "address": None if a is None else
                    {"street": street, "zip": zip_}})
    return out


def sha(v: str | None) -> str | None:
    return None if v is None else hashlib.sha256(v.encode()).hexdigest().upper()


@pytest.mark.parametrize("masks", ["", "sha256:address.zip"])
def test_nested_field_encrypted_alone(orc_java: OrcJava, tmp_path: Path, masks: str) -> None:
    t = table()
    ours, theirs = tmp_path / "aorc.orc", tmp_path / "java.orc"
    aorc.sync.write_table(t, ours, encrypt="pii:address.zip", masks=masks or None,
                          keys=keys(), row_index_stride=1000, stripe_size=64 << 10,
                          compression="zlib")
    out = orc_java.batch([
        ["writenested", str(theirs), str(N), "pii:address.zip", masks, *KEY_SETS["all"]],
        ["read", str(theirs), *KEY_SETS["all"]], ["read", str(theirs)],
        ["read", str(ours), *KEY_SETS["all"]], ["read", str(ours)]])
    assert not out[0].strip(), out[0]
    reads = [OrcJava.parse_read(o) for o in out[1:]]
    assert all(r.error is None for r in reads), [r.error for r in reads]
    real = t.to_pylist()
    masked = [{"id": r["id"], "address": None if r["address"] is None else
               {"street": r["address"]["street"],
                "zip": sha(r["address"]["zip"]) if masks else None}} for r in real]
    # ORC Java's own file: Java and aorc agree, with and without keys
    assert java_rows(reads[0].rows) == real
    assert java_rows(reads[1].rows) == masked
    assert aorc.sync.read_table(theirs, keys=keys()).to_pylist() == real
    assert aorc.sync.read_table(theirs).to_pylist() == masked
    # aorc's file: ORC Java reads it so
    assert java_rows(reads[2].rows) == real
    assert java_rows(reads[3].rows) == masked
    assert aorc.sync.read_table(ours, keys=keys()).to_pylist() == real
    with aorc.sync.open_reader(ours, keys=keys()) as reader:
        (variant,) = reader.encryption["variants"]
        assert (variant["column"], variant["column_id"]) == ("address.zip", 4)
        zips = [r["address"]["zip"] for r in real if r["address"] and r["address"]["zip"]]
        assert (reader.statistics[4].minimum, reader.statistics[4].maximum) == \
            (min(zips), max(zips))
        got = reader.read(filters=[("address.zip", "==", zips[100])])
        assert zips[100] in [r["address"]["zip"] for r in got.to_pylist()]
    assert f"min: {min(zips)} max: {max(zips)} " in reads[2].stats[4]
    data = ours.read_bytes()
    assert b"Street 2999" not in data  # zlib: the check is on the decrypted reads above


def test_fields_inside_lists_are_refused() -> None:
    t = pa.table({"xs": pa.array([[{"a": 1}]], pa.list_(pa.struct([("a", pa.int64())])))})
    with pytest.raises(aorc.SchemaError, match="inside a list"):
        aorc.sync.write_table(t, "/dev/null", encrypt="pii:xs.item.a", keys=keys())
