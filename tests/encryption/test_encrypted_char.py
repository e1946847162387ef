"""The ``sha256`` mask of char(n) and varchar(n) columns, against ORC Java's
``SHA256MaskFactory``: varchar(n) keeps at most n hex characters; char(n) has n, the hex
truncated, or padded with spaces and a final NUL byte when n > 64. ORC Java writes such a
file and both read its masked copy alike; aorc writes one and ORC Java reads it as its own."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pyarrow as pa
from helpers.orc_java_enc import HR, KEY_SETS, PII, OrcJava

import aorc
from aorc.format.encryption.masks import mask_array
from aorc.format.types import parse_type_string

N = 1500
COLUMNS = {"c": 70, "v": 10, "s": 8}  # name -> the width of char(70), varchar(10), char(8)


def keys() -> aorc.InMemoryKeys:
    return aorc.InMemoryKeys({"pii": PII, "hr": {1: HR}})


def rows() -> list[dict[str, Any]]:
    """The rows ORC Java's ``writechar`` writes (before char(n) pads or cuts them)."""
    out = []
    for i in range(N):
        row: dict[str, Any] = {"id": i}
        for c, name in enumerate(COLUMNS, 1):
            row[name] = None if i % 9 == c else f"v{i * c}" + (" Ünï" if i % 4 == 0 else "")
        out.append(row)
    return out


def expected_mask(value: str | None, name: str) -> str | None:
    """ORC Java's rule, written out: the hex digest cut or padded to the column's width."""
    if value is None:
        return None
    hexed = hashlib.sha256(value.encode()).hexdigest().upper()
    width = COLUMNS[name]
    if name == "v" or width <= 64:
        return hexed[:width]
    return hexed + " " * (width - 64 - 1) + "\0"


def test_char_and_varchar_masks_match_orc_java(orc_java: OrcJava, tmp_path: Path) -> None:
    schema = pa.schema([("id", pa.int64()), ("c", pa.string()), ("v", pa.string()),
                        ("s", pa.string())])
    table = pa.Table.from_pylist(rows(), schema)
    ours, theirs = tmp_path / "aorc.orc", tmp_path / "java.orc"
    masks = "sha256:c,v,s"
    aorc.sync.write_table(table, ours, encrypt="pii:c,v,s", masks=masks, keys=keys(),
                          compression="zlib",
                          schema="struct<id:bigint,c:char(70),v:varchar(10),s:char(8)>")
    out = orc_java.batch([["writechar", str(theirs), str(N), masks, *KEY_SETS["all"]],
                          ["read", str(theirs)], ["read", str(ours)]])
    assert not out[0].strip(), out[0]
    java_theirs, java_ours = (OrcJava.parse_read(o) for o in out[1:])
    assert java_theirs.error is None and java_ours.error is None
    masked = [[r["id"], *[expected_mask(r[n], n) for n in COLUMNS]] for r in rows()]
    assert java_theirs.rows == masked  # ORC Java's mask is the rule above
    assert java_ours.rows == masked  # and aorc's masked copy reads the same in ORC Java
    names = ["id", *COLUMNS]
    for path in (ours, theirs):
        got = aorc.sync.read_table(path)
        assert [[r[n] for n in names] for r in got.to_pylist()] == masked


def test_mask_widths_without_java() -> None:
    values = ["a", None, "", "Ünï", "x" * 100]
    for orc in ("char(1)", "char(64)", "char(65)", "char(100)", "varchar(1)", "varchar(64)",
                "varchar(100)", "string"):
        t = parse_type_string(orc)
        got = mask_array(pa.array(values), t, "sha256").to_pylist()
        width = t.max_length or 64
        hexed = [None if v is None else hashlib.sha256(v.encode()).hexdigest().upper()
                 for v in values]
        if orc.startswith("char") and width > 64:
            want = [None if h is None else h + " " * (width - 65) + "\0" for h in hexed]
        else:
            want = [None if h is None else h[:width] for h in hexed]
        assert got == want, orc
