"""The test harness itself: renderer, pyorc renderer, comparisons and schema parsing.

These tests never use aorc. The renderer is checked against the corpus's expected output
through two independent readers (pyarrow.orc and pyorc) and against the rules written in the
corpus README, so that the conformance tests judge aorc with a renderer known to be right.
"""

from __future__ import annotations

import calendar
import datetime
import decimal
import math
import time
from pathlib import Path

import pyarrow as pa
import pytest
from helpers.compare import UNION_VALUE_NULL, assert_lines_equal, assert_tables_equal
from helpers.corpus import CORPUS_ABSENT, CorpusFile, corpus_params, load_manifest, read_expected
from helpers.orc_schema import parse_schema, project_schema, schema_from_arrow
from helpers.pyorc_render import civil_from_days, read_pyorc_lines, sample_windows
from helpers.readers import read_pyarrow
from helpers.render import SchemaMismatch, render, render_array


def _has_union(entry: CorpusFile) -> bool:
    return "uniontype" in (entry.schema or "")


def _ns(wall_clock: str, nanos: int = 0) -> int:
    """Nanoseconds since the epoch of a UTC wall-clock time (independent of the renderer)."""
    seconds = calendar.timegm(time.strptime(wall_clock, "%Y-%m-%d %H:%M:%S"))
    return seconds * 10**9 + nanos


@pytest.mark.parametrize(
    "entry",
    corpus_params(lambda e: e.expected is not None and (e.pyarrow_matches or _has_union(e))),
)
def test_renderer_matches_expected_via_pyarrow(entry: CorpusFile) -> None:
    """pyarrow.orc's tables render to the expected output (MANIFEST: pyarrow matches)."""
    assert entry.expected is not None
    lines = render(read_pyarrow(entry.path), entry.schema)
    expected = read_expected(entry.expected)
    allowed = assert_lines_equal(lines, expected, what=entry.name, allow_union_null=True)
    # MANIFEST: pyarrow reads row 2's null union as branch 0 with a null value.
    assert allowed == ([2] if _has_union(entry) else [])


@pytest.mark.parametrize(
    "entry",
    corpus_params(lambda e: e.expected is not None and e.pyorc_ok and not _has_union(e)),
)
def test_pyorc_renderer_matches_expected(entry: CorpusFile) -> None:
    """pyorc's rows render to the expected output (start/middle/end windows of big files)."""
    assert entry.expected is not None
    expected = read_expected(entry.expected)
    for start, stop in sample_windows(len(expected)):
        lines = read_pyorc_lines(entry.path, entry.schema or "", start=start, stop=stop)
        assert_lines_equal(lines, expected[start:stop], what=f"{entry.name} [{start}:{stop}]")


@pytest.mark.parametrize(
    "entry", corpus_params(lambda e: e.name == "TestOrcFile.testUnionAndTimestamp.orc")
)
def test_untagged_unions_agree_between_peers(entry: CorpusFile) -> None:
    """Without tags, pyarrow's unions render as pyorc's bare values."""
    got = render(read_pyarrow(entry.path), entry.schema, exact=True, union_tags=False)
    assert_lines_equal(got, read_pyorc_lines(entry.path, entry.schema or "", exact=True))


def test_manifest_describes_the_corpus() -> None:
    entries = load_manifest()
    if not entries:
        pytest.skip(CORPUS_ABSENT)
    assert all(e.path.is_file() for e in entries)
    assert all(e.expected is None or e.expected.is_file() for e in entries)
    assert sum(e.expected is not None for e in entries) >= 25
    by_name = {e.name: e for e in entries}
    assert by_name["TestOrcFile.testDate2038.orc"].rows == 212_000
    assert by_name["TestOrcFile.testTimestamp.orc"].schema == "timestamp"
    assert not by_name["zero.orc"].pyarrow_ok and by_name["decimal.orc"].pyorc_ok


def test_manifest_schemas_parse_and_print_back() -> None:
    for entry in load_manifest():
        if entry.schema is not None:
            assert str(parse_schema(entry.schema)) == entry.schema


def _one(value: object, t: pa.DataType, orc: str | None = None) -> str:
    (line,) = render_array(pa.array([value], t), orc)
    return line


@pytest.mark.parametrize(
    ("value", "arrow_type", "orc", "text"),
    [
        (2.0, pa.float32(), None, "2"),
        (3.1415, pa.float32(), None, "3.1415"),
        (2.666452e-05, pa.float32(), None, "2.666452e-05"),
        (2.6664517215225e-05, pa.float64(), None, "2.6664517215225e-05"),
        (-5.0, pa.float64(), None, "-5"),
        (math.inf, pa.float64(), None, "inf"),
        (-math.inf, pa.float32(), None, "-inf"),
        (math.nan, pa.float64(), None, "nan"),
        (-(2**63), pa.int64(), None, "-9223372036854775808"),
        (True, pa.bool_(), None, "true"),
        ('a"b\\c\nd\te\rf\bg\fh/é', pa.string(), None, '"a\\"b\\\\c\\nd\\te\\rf\\bg\\fh/é"'),
        ("", pa.string(), None, '""'),
        (b"\x00\x01\x02\x03\x04", pa.binary(), None, "[0, 1, 2, 3, 4]"),
        (b"\xff", pa.binary(), None, "[255]"),
        (b"", pa.binary(), None, "[]"),
        (-25209, pa.date32(), None, '"1900-12-25"'),
        (_ns("2000-03-12 15:00:00"), pa.timestamp("ns"), None, '"2000-03-12 15:00:00.0"'),
        (
            _ns("1900-05-05 12:34:56", 100100000),
            pa.timestamp("ns"),
            None,
            '"1900-05-05 12:34:56.1001"',
        ),
        (
            _ns("2003-01-01 00:00:00", 222),
            pa.timestamp("ns"),
            None,
            '"2003-01-01 00:00:00.000000222"',
        ),
        (
            _ns("2262-04-11 23:47:16", 854775807),
            pa.timestamp("ns"),
            None,
            '"2262-04-11 23:47:16.854775807"',
        ),
        (-1, pa.timestamp("ns"), None, '"1969-12-31 23:59:59.999999999"'),
        (0, pa.timestamp("ns", tz="UTC"), None, '"1970-01-01 00:00:00.0"'),
        (decimal.Decimal("-1000.5"), pa.decimal128(10, 5), None, "-1000.50000"),
        (decimal.Decimal("0.05"), pa.decimal128(4, 2), None, "0.05"),
        (decimal.Decimal("-0.05"), pa.decimal128(4, 2), None, "-0.05"),
        (decimal.Decimal("7"), pa.decimal128(9, 0), None, "7"),
        (decimal.Decimal("0"), pa.decimal128(38, 18), None, "0.000000000000000000"),
        (
            decimal.Decimal("12345678.6547456"),
            pa.decimal128(38, 18),
            None,
            "12345678.654745600000000000",
        ),
        (
            decimal.Decimal("12345678.6547456"),
            pa.decimal128(38, 10),
            "decimal(0,0)",
            "12345678.654745",
        ),
        (decimal.Decimal("-1.2345679"), pa.decimal128(38, 10), "decimal(0,0)", "-1.234567"),
        ([1, None, 3], pa.list_(pa.int32()), None, "[1, null, 3]"),
        ([], pa.list_(pa.int32()), None, "[]"),
        ([("k", 1.5)], pa.map_(pa.string(), pa.float64()), None, '[{"key": "k", "value": 1.5}]'),
        (
            {"a": None, "b": [None]},
            pa.struct([("a", pa.int8()), ("b", pa.list_(pa.string()))]),
            None,
            '{"a": null, "b": [null]}',
        ),
        (None, pa.struct([("a", pa.int8())]), None, "null"),
    ],
)
def test_render_rules(value: object, arrow_type: pa.DataType, orc: str | None, text: str) -> None:
    """The rendering rules of the corpus README, one value at a time."""
    assert _one(value, arrow_type, orc) == text


def test_render_union_tags_and_values() -> None:
    union = pa.UnionArray.from_dense(
        pa.array([1, 0, 1], pa.int8()),
        pa.array([0, 0, 1], pa.int32()),
        [pa.array([None], pa.int32()), pa.array(["x", None])],
    )
    assert render_array(union) == [
        '{"tag": 1, "value": "x"}',
        UNION_VALUE_NULL,
        '{"tag": 1, "value": null}',
    ]
    assert render_array(union, union_tags=False) == ['"x"', "null", "null"]


def test_render_root_shapes() -> None:
    table = pa.table({"ts": pa.array([0, None], pa.timestamp("ns"))})
    assert render(table, "timestamp") == ['"1970-01-01 00:00:00.0"', "null"]
    assert render(table) == ['{"ts": "1970-01-01 00:00:00.0"}', '{"ts": null}']
    assert render(pa.table({}), "struct<>") == []
    with pytest.raises(SchemaMismatch):
        render(table, "struct<ts:date>")
    with pytest.raises(SchemaMismatch):
        render(table, "struct<other:timestamp>")


def test_render_of_a_slice_is_the_slice_of_the_render() -> None:
    """Offsets of sliced nested arrays are honoured (the pyorc windows rely on it)."""
    table = pa.table(
        {
            "l": pa.array([[1], None, [2, 3], [], [4]], pa.list_(pa.int64())),
            "m": pa.array(
                [[(1, b"a")], [], None, [(2, b"")], [(3, b"z")]], pa.map_(pa.int32(), pa.binary())
            ),
            "s": pa.array(
                [{"x": "a"}, None, {"x": None}, {"x": "d"}, {"x": "e"}],
                pa.struct([("x", pa.string())]),
            ),
            "u": pa.UnionArray.from_sparse(
                pa.array([0, 1, 0, 1, 0], pa.int8()),
                [pa.array([1, 2, 3, 4, 5]), pa.array(["a", "b", "c", "d", "e"])],
            ),
        }
    )
    full = render(table)
    for start in range(5):
        for length in range(5 - start + 1):
            assert render(table.slice(start, length)) == full[start : start + length]


def test_lines_equal_reports_the_first_difference() -> None:
    with pytest.raises(AssertionError, match="row 1 differs at character 2"):
        assert_lines_equal(["a", "abcd"], ["a", "abXd"], what="f")
    with pytest.raises(AssertionError, match="2 rows, expected 3"):
        assert_lines_equal(["a", "b"], ["a", "b", "c"], what="f")


def test_union_null_allowance_is_narrow() -> None:
    got = '{"u": ' + UNION_VALUE_NULL + ', "v": ' + UNION_VALUE_NULL + "}"
    assert assert_lines_equal(
        [got], ['{"u": null, "v": ' + UNION_VALUE_NULL + "}"], allow_union_null=True
    ) == [0]
    with pytest.raises(AssertionError):  # only where a union renders
        assert_lines_equal(['{"u": 1}'], ['{"u": null}'], allow_union_null=True)
    with pytest.raises(AssertionError):  # not without the flag
        assert_lines_equal([got], ['{"u": null, "v": null}'])
    with pytest.raises(AssertionError):  # and nothing else may differ
        assert_lines_equal([got + " "], ['{"u": null, "v": null}'], allow_union_null=True)


def test_tables_equal_is_exact() -> None:
    base = pa.table({"f": pa.array([1.0, math.nan, 0.0]), "s": ["a", "b", None]})
    assert_tables_equal(
        base, pa.table({"f": pa.array([1.0, math.nan, 0.0]), "s": ["a", "b", None]})
    )
    changed = [
        pa.table({"f": pa.array([1.0, math.nan, -0.0]), "s": ["a", "b", None]}),
        pa.table({"f": pa.array([1.0000000000000002, math.nan, 0.0]), "s": ["a", "b", None]}),
        pa.table({"f": pa.array([1.0, math.nan, 0.0]), "s": ["a", "b", ""]}),
        pa.table({"f": pa.array([1.0, math.nan, 0.0], pa.float32()), "s": ["a", "b", None]}),
    ]
    for other in changed:
        with pytest.raises(AssertionError):
            assert_tables_equal(other, base)


def test_project_schema_keeps_file_order_and_ancestors() -> None:
    root = parse_schema("struct<a:int,b:struct<c:string,d:array<int>,e:double>,f:date>")
    assert str(project_schema(root, ["f", "a"])) == "struct<a:int,f:date>"
    assert str(project_schema(root, ["b.e", "b.c"])) == "struct<b:struct<c:string,e:double>>"
    assert str(project_schema(root, ["b", "b.c"])) == str(project_schema(root, ["b"]))
    with pytest.raises(KeyError):
        project_schema(root, ["b.x"])


def test_schema_from_arrow_follows_the_documented_mapping() -> None:
    schema = pa.schema(
        [
            pa.field("v", pa.string(), metadata={b"ORC:type": b"varchar(20)"}),
            pa.field("t", pa.timestamp("ns", tz="UTC")),
            pa.field("m", pa.map_(pa.int8(), pa.list_(pa.decimal128(5, 2)))),
        ]
    )
    assert str(schema_from_arrow(schema)) == (
        "struct<v:varchar(20),t:timestamp with local time zone,m:map<tinyint,array<decimal(5,2)>>>"
    )


@pytest.mark.parametrize("days", [-719468, -719162, -25209, -1, 0, 59, 2932896, 2932897])
def test_civil_from_days(days: int) -> None:
    if -719162 <= days <= 2932896:  # Python's date range
        d = datetime.date(1970, 1, 1) + datetime.timedelta(days=days)
        assert civil_from_days(days) == (d.year, d.month, d.day)
    else:
        year, month, day = civil_from_days(days)
        assert (month, day) in ((3, 1), (1, 1))


def test_ci_fails_without_an_lzo_peer(monkeypatch: pytest.MonkeyPatch,
                                      request: pytest.FixtureRequest) -> None:
    """Issue 24 item 16: the LZO decoder's peer is an oracle like the others: with CI=true
    its absence fails the run (pytest_sessionstart exits on any missing oracle)."""
    here = Path(__file__).resolve().with_name("conftest.py")
    conftest = next(p for p in request.config.pluginmanager.get_plugins()
                    if Path(getattr(p, "__file__", "") or "/").resolve() == here)
    assert not [m for m in conftest.missing_oracles() if "LZO" in m]  # installed here
    monkeypatch.setattr(conftest, "lzo_available", lambda: False)
    assert [m for m in conftest.missing_oracles() if "LZO" in m]
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.exit.Exception, match="LZO"):
        conftest.pytest_sessionstart(None)  # type: ignore[arg-type]


def test_a_partial_run_checks_only_the_oracles_it_names(monkeypatch: pytest.MonkeyPatch,
                                                         request: pytest.FixtureRequest) -> None:
    """``nox -s polars-1`` runs tests/polars without PySpark: AORC_TEST_ORACLES narrows the
    CI=true check to the oracles it names, and an unknown name is a usage error."""
    here = Path(__file__).resolve().with_name("conftest.py")
    conftest = next(p for p in request.config.pluginmanager.get_plugins()
                    if Path(getattr(p, "__file__", "") or "/").resolve() == here)
    monkeypatch.setattr(conftest.importlib.util, "find_spec",
                        lambda name, *a: None if name == "pyspark" else object())
    # whether this clone has the corpus beside it or not (a lone clone has not)
    monkeypatch.setattr(conftest, "corpus_root", lambda: Path("/corpus"))
    monkeypatch.setattr(conftest, "hive_jars", lambda: [Path("/hive-exec.jar")])
    monkeypatch.setattr(conftest, "geo_jars", lambda: [Path("/orc-core-2.3.jar")])
    monkeypatch.setattr(conftest.shutil, "which", lambda name: f"/usr/bin/{name}")
    assert conftest.missing_oracles() == ["PySpark"]
    monkeypatch.setenv(conftest.ORACLES_ENV, "corpus,java,lzo,polars")
    assert conftest.missing_oracles() == []
    monkeypatch.setenv(conftest.ORACLES_ENV, "pyspark")
    assert conftest.missing_oracles() == ["PySpark"]
    monkeypatch.setenv(conftest.ORACLES_ENV, "spark")
    with pytest.raises(pytest.UsageError, match="unknown oracles"):
        conftest.missing_oracles()
