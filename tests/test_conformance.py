"""The reader against the ORC conformance corpus (``../shared/orc-conformance``).

Every file with an expected output must render to it line for line (README.md of the corpus
gives the format); every readable file must agree with pyarrow.orc and pyorc exactly (floats
compared bit for bit, which the expected ``%.7g`` output cannot do); special files must fail
or succeed as the brief says. The reader under test is aorc unless
``AORC_TEST_REFERENCE_READER=pyarrow`` (see tests/helpers/readers.py).

The renderer itself is checked in tests/test_harness.py against pyarrow.orc and pyorc.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.compare import assert_lines_equal, assert_tables_equal
from helpers.corpus import CorpusFile, corpus_params, load_manifest, read_expected
from helpers.orc_schema import parse_schema, project_schema
from helpers.pyorc_render import read_pyorc_lines, sample_windows
from helpers.readers import (
    error_class,
    read_pyarrow,
    read_table,
    reader_orc_type,
    require_aorc,
)
from helpers.render import render

# The PostScript has no block size and the footer no row count, but the stripe holds 100 rows
# with the values 1..100 (MANIFEST notes).
NO_BLOCK_SIZE = "TestOrcFile.testWithoutCompressionBlockSize.orc"
# Columns the encrypted samples mask when the key is not available (corpus README).
ENCRYPTED_COLUMNS = {"ssn", "email"}
_NOT_READABLE = {"version1999.orc", "zero.orc"}
# The one accepted difference from the expected output: Arrow has no null at the union level,
# so a null union reads as branch 0 with a null value. These are the rows where the expected
# output has a null union (corpus README); the allowance covers nothing else.
NULL_UNION_ROWS = {"TestOrcFile.testUnionAndTimestamp.orc": {2}}


def _readable(entry: CorpusFile) -> bool:
    return entry.group == "" and entry.name not in _NOT_READABLE


def _row_count(entry: CorpusFile) -> int | None:
    return 100 if entry.name == NO_BLOCK_SIZE else entry.rows


@pytest.mark.parametrize("entry", corpus_params(lambda e: e.expected is not None))
async def test_expected_output(entry: CorpusFile) -> None:
    """Rendered rows equal expected/*.jsn.gz (a null union may read as branch 0 with null)."""
    assert entry.expected is not None
    table = await read_table(entry.path)
    known_null_unions = NULL_UNION_ROWS.get(entry.name, set())
    allowed = assert_lines_equal(
        render(table, entry.schema),
        read_expected(entry.expected),
        what=entry.name,
        allow_union_null=bool(known_null_unions),
    )
    assert set(allowed) <= known_null_unions, f"null-union allowance used on rows {allowed}"


@pytest.mark.parametrize("entry", corpus_params(_readable))
async def test_matches_peers(entry: CorpusFile) -> None:
    """The footer's row count, and values equal to pyarrow.orc's and pyorc's exactly.

    Floats compare bit for bit (NaN equal to NaN), which the ``%.7g`` expected output cannot
    check. pyorc is compared on all rows, or on start/middle/end windows of large files.
    """
    table = await read_table(entry.path)
    assert table.num_rows == _row_count(entry), "row count"
    if entry.pyarrow_ok:
        reference = read_pyarrow(entry.path)
        assert_tables_equal(
            table, reference, entry.schema, what=f"{entry.name} vs pyarrow", check_schema=False
        )
    if entry.pyorc_ok:
        for start, stop in sample_windows(table.num_rows):
            part = table.slice(start, stop - start)
            got = render(part, entry.schema, exact=True, union_tags=False)
            want = read_pyorc_lines(
                entry.path, entry.schema or "", exact=True, start=start, stop=stop
            )
            assert_lines_equal(got, want, what=f"{entry.name} rows {start}:{stop} vs pyorc")


@pytest.mark.parametrize("entry", corpus_params(lambda e: _readable(e) and e.schema is not None))
async def test_reported_orc_type(entry: CorpusFile) -> None:
    """The reader reports the file's ORC type as MANIFEST.tsv records it."""
    assert parse_schema(await reader_orc_type(entry.path)) == parse_schema(entry.schema or "")


async def test_bare_root_without_block_size(corpus: Path) -> None:
    """A bigint root (no struct) and no block size in the PostScript: the values 1..100."""
    table = await read_table(corpus / "files" / NO_BLOCK_SIZE)
    assert render(table, "bigint") == [str(i) for i in range(1, 101)]


async def test_future_version_is_refused(corpus: Path) -> None:
    """Format version 19.99 raises UnsupportedVersionError (as ORC Java refuses it)."""
    require_aorc()
    with pytest.raises(error_class("UnsupportedVersionError")):
        await read_table(corpus / "files" / "version1999.orc")


@pytest.mark.parametrize("entry", corpus_params(lambda e: e.group == "corrupt"))
async def test_corrupt_file_is_rejected(entry: CorpusFile) -> None:
    """Deliberately broken files raise CorruptFileError and nothing else."""
    with pytest.raises(error_class("CorruptFileError")):
        await read_table(entry.path)


async def test_zero_byte_file(corpus: Path) -> None:
    """A zero-byte file is refused (as ORC C++ and pyarrow.orc refuse it; ORC Java reads an
    empty struct): a 0-byte object is most often a failed upload (issue 24)."""
    require_aorc()
    with pytest.raises(error_class("CorruptFileError"), match="empty file"):
        await read_table(corpus / "files" / "zero.orc")
    with pytest.raises(OSError, match="too small"):  # the peer (ORC C++) refuses it too
        read_pyarrow(corpus / "files" / "zero.orc")


@pytest.mark.parametrize("entry", corpus_params(lambda e: e.group == "encrypted"))
async def test_encrypted_file(entry: CorpusFile) -> None:
    """Encrypted columns read masked (as pyarrow) or null, or UnsupportedFeatureError."""
    try:
        table = await read_table(entry.path)
    except error_class("UnsupportedFeatureError"):
        return
    reference = read_pyarrow(entry.path)
    assert table.num_rows == entry.rows
    assert table.column_names == reference.column_names
    for name in table.column_names:
        got, want = table.column(name).to_pylist(), reference.column(name).to_pylist()
        if name in ENCRYPTED_COLUMNS and all(v is None for v in got):
            continue
        assert got == want, name


async def test_varchar_keeps_orc_type_metadata(corpus: Path) -> None:
    """char/varchar columns carry their ORC type in the field metadata (docs/internals.md)."""
    require_aorc()
    table = await read_table(corpus / "files" / "orc_index_int_string.orc")
    metadata = table.schema.field("_col1").metadata or {}
    assert metadata.get(b"ORC:type") == b"varchar(4)"


PROJECTIONS = [
    ("TestOrcFile.test1.orc", ["int1"]),
    ("TestOrcFile.test1.orc", ["map", "int1"]),
    ("TestOrcFile.test1.orc", ["middle.list", "bytes1"]),
    ("TestOrcFile.testSeek.orc", ["string1", "long1", "list"]),
    ("TestOrcFile.testUnionAndTimestamp.orc", ["union"]),
    ("orc-file-11-format.orc", ["decimal1", "ts"]),
    ("complextypes_iceberg.orc", ["nested_struct.c", "id"]),
    ("complextypes_iceberg.orc", ["nested_struct.g", "nested_struct.a"]),
    ("complextypes_iceberg.orc", ["nested_struct.c.d"]),
    ("TestOrcFile.testDate2038.orc", ["date"]),
    ("demo-12-zlib.orc", ["_col3", "_col0"]),
]


@pytest.mark.parametrize(
    ("name", "columns"), PROJECTIONS, ids=[f"{n}:{','.join(c)}" for n, c in PROJECTIONS]
)
async def test_projection(corpus: Path, name: str, columns: list[str]) -> None:
    """``columns=`` (names and dotted paths) returns what pyarrow.orc's ``columns=`` does,
    in the order asked for (pyarrow.orc keeps the file's order)."""
    entry = next(e for e in load_manifest() if e.name == name)
    path = corpus / "files" / name
    table = await read_table(path, columns=columns)
    assert table.column_names == list(dict.fromkeys(c.split(".")[0] for c in columns))
    schema = project_schema(parse_schema(entry.schema or ""), columns)
    reference = read_pyarrow(path, columns=columns)
    table = table.select(reference.column_names)  # the file's order, to compare
    assert_tables_equal(table, reference, schema, what=f"{name} {columns}", check_schema=False)
