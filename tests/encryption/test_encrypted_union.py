"""An encrypted union column's masks, as ORC Java's ``MaskFactory`` builds them: the tags
kept and each branch's values masked by the branch's type (``sha256``: strings hashed, other
types null; ``redact``: ORC Java's character classes and digits). ORC Java writes such a
file and aorc reads it as ORC Java does, with and without keys; aorc writes one and ORC Java
reads its masked copy as it reads its own."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from helpers.orc_java_enc import HR, KEY_SETS, PII, OrcJava

import aorc
from aorc.format.unions import union_branches

N = 2000


def keys() -> aorc.InMemoryKeys:
    return aorc.InMemoryKeys({"pii": PII, "hr": {1: HR}})


def values() -> list[tuple[int, Any]]:
    """(tag, value) of each row, as ORC Java's ``writeunion`` writes them."""
    out: list[tuple[int, Any]] = []
    for i in range(N):
        tag = 1 if i % 3 == 1 else 0
        value = None if i % 13 == 6 else i * 1234567 - 99999 if tag == 0 else f"Ab {i}-x!"
        out.append((tag, value))
    return out


def table() -> pa.Table:
    rows = values()
    branches: list[list[Any]] = [[], []]
    offsets = []
    for tag, value in rows:
        offsets.append(len(branches[tag]))
        branches[tag].append(value)
    union = pa.UnionArray.from_dense(pa.array([t for t, _ in rows], pa.int8()),
                                     pa.array(offsets, pa.int32()),
                                     [pa.array(branches[0], pa.int64()),
                                      pa.array(branches[1], pa.string())])
    return pa.table({"id": pa.array(range(N), pa.int64()), "u": union})


def java_pairs(text_rows: list[list[Any]]) -> list[tuple[int, Any]]:
    """ORC Java's rows (the union as its text, ``{"tag": T, "value": V}``) as pairs."""
    out = []
    for i, (row_id, text) in enumerate(text_rows):
        assert row_id == i and text is not None
        union = json.loads(text)
        out.append((union["tag"], union["value"]))
    return out


def aorc_pairs(t: pa.Table) -> list[tuple[int, Any]]:
    assert t.column("id").to_pylist() == list(range(N))
    union = t.column("u").combine_chunks()
    return list(zip(union_branches(union)[0].tolist(), union.to_pylist(), strict=True))


def test_a_sha256_masked_union_keeps_its_tags(orc_java: OrcJava, tmp_path: Path) -> None:
    masks = "sha256:u"
    ours, theirs = tmp_path / "aorc.orc", tmp_path / "java.orc"
    aorc.sync.write_table(table(), ours, encrypt="pii:u", masks=masks, keys=keys(),
                          row_index_stride=1000, stripe_size=64 << 10, compression="zlib")
    out = orc_java.batch([
        ["writeunion", str(theirs), str(N), "pii:u", masks, *KEY_SETS["all"]],
        ["read", str(theirs), *KEY_SETS["all"]], ["read", str(theirs)],
        ["read", str(ours), *KEY_SETS["all"]], ["read", str(ours)]])
    assert not out[0].strip(), out[0]
    reads = [OrcJava.parse_read(o) for o in out[1:]]
    assert all(r.error is None for r in reads), [r.error for r in reads]
    real, masked = java_pairs(reads[0].rows), java_pairs(reads[1].rows)
    assert real == values()
    assert masked == [(t, None if t == 0 or v is None else
                       hashlib.sha256(v.encode()).hexdigest().upper()) for t, v in real]
    # aorc reads ORC Java's file as ORC Java does
    assert aorc_pairs(aorc.sync.read_table(theirs, keys=keys())) == real
    assert aorc_pairs(aorc.sync.read_table(theirs)) == masked
    # ORC Java reads aorc's file, keys or masks, as it reads its own
    assert java_pairs(reads[2].rows) == real
    assert java_pairs(reads[3].rows) == masked
    assert aorc_pairs(aorc.sync.read_table(ours)) == masked
    assert aorc_pairs(aorc.sync.read_table(ours, keys=keys())) == real


def test_a_redacted_union_keeps_its_tags(orc_java: OrcJava, tmp_path: Path) -> None:
    """ORC Java's writer cannot redact strings (``orc-pitfalls.md``), so the expected
    values come from its ``RedactMaskFactory`` applied to each branch's values."""
    rows = values()
    branch = {tag: [v for t, v in rows if t == tag] for tag in (0, 1)}
    as_java = {0: ["\\N" if v is None else str(v) for v in branch[0]],
               1: ["\\N" if v is None else v.encode().hex() for v in branch[1]]}
    ours = tmp_path / "aorc.orc"
    aorc.sync.write_table(table(), ours, encrypt="pii:u", masks="redact:u", keys=keys(),
                          row_index_stride=1000, stripe_size=64 << 10, compression="zlib")
    out = orc_java.batch([["redact", "bigint", "0", *as_java[0]],
                          ["redact", "string", "0", *as_java[1]],
                          ["read", str(ours), *KEY_SETS["all"]], ["read", str(ours)]])
    assert not out[0].startswith("error") and not out[1].startswith("error"), out[:2]
    redacted = {0: iter([None if line == "\\N" else int(line) for line in out[0].splitlines()]),
                1: iter([None if line == "\\N" else bytes.fromhex(line[1:]).decode()
                         for line in out[1].splitlines()])}
    expected = [(t, next(redacted[t])) for t, _ in rows]
    assert expected[1] == (1, "Xx 9.x.") and expected[3] == (0, 9999999)  # masked
    reads = [OrcJava.parse_read(o) for o in out[2:]]
    assert all(r.error is None for r in reads), [r.error for r in reads]
    assert java_pairs(reads[0].rows) == rows
    assert java_pairs(reads[1].rows) == expected
    assert aorc_pairs(aorc.sync.read_table(ours)) == expected
    assert aorc_pairs(aorc.sync.read_table(ours, keys=keys())) == rows


@pytest.mark.parametrize("mode", ["dense", "sparse"])
@pytest.mark.parametrize("mask", ["sha256", "redact"])
def test_a_sliced_union_is_masked_at_its_offset(mode: str, mask: str) -> None:
    """pyarrow's ``type_codes`` and ``offsets`` ignore a slice's offset: the mask reads the
    buffers at it."""
    from aorc.format.encryption.masks import mask_array
    from aorc.format.types import parse_type_string

    t = parse_type_string("uniontype<bigint,string>")
    tags = pa.array([0, 1, 1, 0, 1, 0], pa.int8())
    if mode == "dense":
        union = pa.UnionArray.from_dense(tags, pa.array([0, 0, 1, 1, 2, 2], pa.int32()),
                                         [pa.array([12, None, 345]),
                                          pa.array(["Ab", None, "c-D 7"])])
    else:
        union = pa.UnionArray.from_sparse(tags, [pa.array([12, 0, 0, None, 0, 345]),
                                                 pa.array(["", "Ab", None, "", "c-D 7", ""])])
    whole = mask_array(union, t, mask)
    for start in range(len(union)):
        part = mask_array(union.slice(start), t, mask)
        assert part.to_pylist() == whole.to_pylist()[start:]
        assert part.type_codes.to_pylist() == tags.to_pylist()[start:]
