"""The decoders on streams ORC Java wrote: the uncompressed files of the conformance corpus.

Each top-level column of a simple type is rebuilt from its raw streams with nothing but the
decoders under test (PRESENT, DATA, LENGTH, SECONDARY, DICTIONARY_DATA) and compared with the
expected rows that ORC C++'s row printer produced. Skipped when the corpus is absent.
"""

from __future__ import annotations

import datetime
from decimal import Context, Decimal
from typing import Any

import numpy as np
import pytest
from helpers.corpus import CORPUS_ABSENT
from orc_stream_helpers import CONFORMANCE, Stripe, parse_orc, read_expected

from aorc.format._proto import orc_proto_pb2 as pb
from aorc.format.codec import rle

FILES = [
    "TestOrcFile.columnProjection",
    "TestOrcFile.metaData",
    "TestOrcFile.testMemoryManagementV11",
    "TestOrcFile.testMemoryManagementV12",
    "TestOrcFile.testPredicatePushdown",
    "TestOrcFile.testUnionAndTimestamp",
    "decimal",
    "orc-file-11-format",
    "orc_split_elim",
]

T = pb.Type
S = pb.Stream
EPOCH = datetime.date(1970, 1, 1)
INTEGERS = {T.SHORT, T.INT, T.LONG}
STRINGS = {T.STRING, T.VARCHAR, T.CHAR, T.BINARY}


def _ints(stripe: Stripe, column: int, kind: int, n: int, signed: bool) -> np.ndarray:
    version = rle.rle_version(stripe.encodings[column].kind)
    data = stripe.stream(column, kind)
    assert data is not None or n == 0, f"column {column} has no stream of kind {kind}"
    return rle.decode_ints(data or b"", n, signed, version)


def _strings(stripe: Stripe, column: int, n: int) -> list[bytes]:
    encoding = stripe.encodings[column]
    if encoding.kind in (pb.ColumnEncoding.DIRECT, pb.ColumnEncoding.DIRECT_V2):
        blob = stripe.stream(column, S.DATA) or b""
        lengths, indices = _ints(stripe, column, S.LENGTH, n, False), None
    else:
        blob = stripe.stream(column, S.DICTIONARY_DATA) or b""
        lengths = _ints(stripe, column, S.LENGTH, encoding.dictionarySize, False)
        indices = _ints(stripe, column, S.DATA, n, False)
    ends = np.cumsum(lengths)
    entries = [bytes(blob[end - size : end]) for end, size in zip(ends, lengths, strict=True)]
    return entries if indices is None else [entries[i] for i in indices]


def _decimals(stripe: Stripe, column: int, n: int) -> list[Decimal]:
    words = rle.read_varint128(stripe.stream(column, S.DATA) or b"", n)
    scales = _ints(stripe, column, S.SECONDARY, n, True)
    out = []
    for (lo, hi), scale in zip(words.tolist(), scales.tolist(), strict=True):
        word = lo | hi << 64
        unscaled = Decimal(word - (1 << 128) if hi >> 63 else word)
        out.append(unscaled.scaleb(-scale, Context(prec=100)))
    return out


def decode_values(stripe: Stripe, column: int, kind: int, n: int) -> list[Any]:
    """The ``n`` non-null values of a column, rebuilt from its raw streams."""
    if kind == T.BOOLEAN:
        return rle.read_bool_rle(stripe.stream(column, S.DATA) or b"", n).tolist()
    if kind == T.BYTE:
        return rle.read_byte_rle(stripe.stream(column, S.DATA) or b"", n).tolist()
    if kind in INTEGERS or kind == T.DATE:
        return _ints(stripe, column, S.DATA, n, True).tolist()
    if kind in STRINGS:
        return _strings(stripe, column, n)
    if kind == T.TIMESTAMP:
        return rle.decode_nanos(_ints(stripe, column, S.SECONDARY, n, False)).tolist()
    return _decimals(stripe, column, n)


def expected_value(kind: int, value: Any) -> Any:
    """An expected-output value in the form decode_values gives."""
    if kind == T.DATE:
        return (datetime.date.fromisoformat(value) - EPOCH).days
    if kind == T.BINARY:
        return bytes(value)
    if kind in STRINGS:
        return value.encode("utf-8", "surrogateescape")
    if kind == T.TIMESTAMP:
        return int(value.rpartition(".")[2].ljust(9, "0"))
    return value


def decodable(t: Any) -> bool:
    simple = {T.BOOLEAN, T.BYTE, T.DATE, T.TIMESTAMP} | INTEGERS | STRINGS
    return t.kind in simple or (t.kind == T.DECIMAL and t.precision > 0)


@pytest.mark.skipif(not CONFORMANCE.is_dir(), reason=CORPUS_ABSENT)
@pytest.mark.parametrize("name", FILES)
def test_java_written_columns(name: str) -> None:
    orc = parse_orc((CONFORMANCE / "files" / f"{name}.orc").read_bytes())
    expected = read_expected(name)
    root = orc.footer.types[0]
    columns = [
        (field, column, orc.footer.types[column])
        for field, column in zip(root.fieldNames, root.subtypes, strict=True)
        if decodable(orc.footer.types[column])
    ]
    assert columns
    first_row = 0
    for stripe in orc.stripes:
        rows = expected[first_row : first_row + stripe.num_rows]
        for field, column, t in columns:
            want = [expected_value(t.kind, row[field]) for row in rows if row[field] is not None]
            present = stripe.stream(column, S.PRESENT)
            if present is not None:
                mask = rle.read_bool_rle(present, stripe.num_rows).tolist()
                assert mask == [row[field] is not None for row in rows]
            assert decode_values(stripe, column, t.kind, len(want)) == want, (field, first_row)
        first_row += stripe.num_rows
    assert first_row == len(expected)


@pytest.mark.skipif(not CONFORMANCE.is_dir(), reason=CORPUS_ABSENT)
@pytest.mark.parametrize(
    "name", ["TestOrcFile.columnProjection", "TestOrcFile.testPredicatePushdown"]
)
def test_java_row_index_seeks(name: str) -> None:
    """Start at every row group with the positions ORC Java recorded (stride 1000)."""
    orc = parse_orc((CONFORMANCE / "files" / f"{name}.orc").read_bytes())
    expected = read_expected(name)
    first_row = 0
    for stripe in orc.stripes:
        rows = expected[first_row : first_row + stripe.num_rows]
        ints = [row["int1"] for row in rows]
        lengths = [len(row["string1"].encode("utf-8", "surrogateescape")) for row in rows]
        int_data, length_data = stripe.stream(1, S.DATA), stripe.stream(2, S.LENGTH)
        assert int_data is not None and length_data is not None
        for group, (int_pos, str_pos) in enumerate(
            zip(stripe.row_index(1), stripe.row_index(2), strict=True)
        ):
            start = group * 1000
            got = rle.read_int_rle_v2(int_data, len(ints) - start, True, *int_pos)
            assert got.tolist() == ints[start:]
            want = lengths[start : start + 1000]
            got = rle.read_int_rle_v2(length_data, len(want), False, *str_pos[1:])
            assert got.tolist() == want
        first_row += stripe.num_rows
