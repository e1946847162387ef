"""The docs' promises, checked (issue 13, items 12-14; the README's sections moved into
``docs/`` with issue 38): the snippets of the pandas/Polars/DuckDB page and of ``aorc.sync``
run against a file written by pyarrow.orc and do what they say, the type mapping table is
what writing and reading do (and what pyarrow.orc reads), the Examples page names every
example, and ``open_reader``'s docstring names every kind of source. (Every block of every
page also runs as written: tests/docs/test_doc_blocks.py.)"""

from __future__ import annotations

import datetime
import os
import re
from pathlib import Path

import pyarrow as pa
import pyarrow.orc as po
import pytest

import aorc
import aorc.sync

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"


def page(name: str) -> str:
    """The text of a docs page (``guide/types.md``)."""
    return (DOCS / name).read_text()


def python_block(name: str, containing: str) -> str:
    """The first Python block of a page that contains ``containing``."""
    for match in re.finditer(r"```python\n(.*?)```", page(name), re.DOTALL):
        if containing in match.group(1):
            return match.group(1)
    raise AssertionError(f"no Python block of {name} contains {containing!r}")


DATA = pa.table({"id": list(range(100)), "name": [f"n{i % 3}" for i in range(100)],
                 "amount": [float(i) for i in range(100)]})


@pytest.fixture
def in_tmp(tmp_path: Path) -> Path:
    po.write_table(DATA, tmp_path / "data.orc")  # a file written by the peer
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        yield tmp_path
    finally:
        os.chdir(cwd)


def test_pandas_polars_duckdb_snippet(in_tmp: Path) -> None:
    pytest.importorskip("polars")
    pytest.importorskip("duckdb")
    code = python_block("guide/arrow-streams.md", "from_pandas.orc")
    exec(compile(code, "arrow-streams.md", "exec"), {})
    subset = DATA.select(["name", "amount"])
    assert po.read_table(in_tmp / "from_pandas.orc").equals(subset)
    assert po.read_table(in_tmp / "from_polars.orc").equals(subset)
    totals = po.read_table(in_tmp / "from_duckdb.orc").sort_by("name").to_pylist()
    expected = {}
    for row in subset.to_pylist():
        expected[row["name"]] = expected.get(row["name"], 0.0) + row["amount"]
    assert totals == [{"name": k, "total": v} for k, v in sorted(expected.items())]


def test_arrow_streams_snippet(in_tmp: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("polars")
    pytest.importorskip("duckdb")
    code = python_block("guide/arrow-streams.md", "pl.DataFrame(reader)")
    scope: dict[str, object] = {}
    exec(compile(code, "arrow-streams.md", "exec"), scope)
    assert scope["frame"].to_arrow().to_pylist() == DATA.to_pylist()  # type: ignore[attr-defined]
    assert scope["first"].column("id").to_pylist() == list(range(100))  # type: ignore[attr-defined]
    assert "('n0', 4)" in capsys.readouterr().out


def test_sync_snippet(in_tmp: Path) -> None:
    code = python_block("getting-started.md", "out/small.orc")
    exec(compile(code, "getting-started.md", "exec"), {})
    small = po.read_table(in_tmp / "out" / "small.orc")
    assert small.equals(DATA.select(["id", "name"]).slice(0, 10))


def test_rolling_sink_snippet_runs_as_it_is(in_tmp: Path, capsys: pytest.CaptureFixture[str]
                                            ) -> None:
    """Issue 24 item 17: the docs' RollingSink snippet runs on its own (a stand-in
    source, a local folder), and its files hold every row once (pyarrow.orc reads them)."""
    code = python_block("guide/sink.md", "RollingSink")
    exec(compile(code, "sink.md", "exec"), {})
    assert capsys.readouterr().out.startswith("{('events', 0): 3000} SinkStats(")
    files = sorted((in_tmp / "lake" / "events").rglob("*.orc"))
    assert {f.parent.parent.parent.name for f in files} == {"country=DE", "country=NO"}
    assert sum(po.read_table(f).num_rows for f in files) == 3000


def test_examples_are_listed_once() -> None:
    listed = re.findall(r"^- `examples/([\w.]+\.py)`", page("guide/examples.md"), re.MULTILINE)
    assert len(listed) == len(set(listed))


# --------------------------------------------------------------------------- type mapping

PLACEHOLDERS = {"t": "pa.int32()", "k": "pa.string()", "v": "pa.int64()",
                "fields": "[pa.field('a', pa.int32()), pa.field('b', pa.string())]"}
ORC_PLACEHOLDERS = {"t": "int", "array<t>": "array<int>", "map<k,v>": "map<string,bigint>",
                    "struct<...>": "struct<a:int,b:string>",
                    "uniontype<...>": "uniontype<int,string>", "decimal(p,s)": None}


def arrow_types(cell: str) -> list[pa.DataType]:
    out = []
    for expr in re.findall(r"`([^`]+)`", cell):
        if expr.startswith("("):  # "`("ms")`": the same call with other arguments
            expr = "pa.timestamp" + expr
        for name, value in PLACEHOLDERS.items():
            expr = re.sub(rf"\b{name}\b(?!\()", value, expr)
        out.append(eval(expr, {"pa": pa}))
    return out


def mapping_rows() -> list[tuple[list[pa.DataType], str, str]]:
    rows = []
    for line in page("guide/types.md").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[0].startswith("`pa."):  # (the Arrow -> ORC table)
            rows.append((arrow_types(cells[0]), cells[1].strip("`"), cells[2]))
    return rows


def sample(t: pa.DataType) -> pa.Array:
    if pa.types.is_union(t):
        return pa.UnionArray.from_dense(pa.array([0, 1], pa.int8()), pa.array([0, 0], pa.int32()),
                                        [pa.array([7], pa.int32()), pa.array(["x"])])
    if pa.types.is_timestamp(t):
        return pa.array([datetime.datetime(2024, 5, 1, 12), None], t)
    return pa.array([None, None], t)


@pytest.mark.parametrize("row", mapping_rows(), ids=lambda r: r[1])
def test_type_mapping_table(tmp_path: Path, row: tuple[list[pa.DataType], str, str]) -> None:
    written, orc, read_cell = row
    assert written
    for t in written:
        path = tmp_path / "t.orc"
        aorc.sync.write_table(pa.table({"c": sample(t)}), path)
        with aorc.sync.open_reader(path) as reader:
            orc_type = reader.orc_type
            read_type = reader.schema.field("c").type
        if orc in ORC_PLACEHOLDERS and ORC_PLACEHOLDERS[orc] is None:  # decimal(p,s)
            assert orc_type == f"struct<c:decimal({t.precision},{t.scale})>"
            assert read_type == pa.decimal128(t.precision, t.scale)
            continue
        assert orc_type == f"struct<c:{ORC_PLACEHOLDERS.get(orc, orc)}>", t
        (expected,) = arrow_types(read_cell)
        if "renamed _union_0" in read_cell:
            expected = pa.dense_union([f.with_name(f"_union_{i}")
                                       for i, f in enumerate(expected)])
        assert read_type == expected, t
        peer = po.read_table(path).schema.field("c").type
        if pa.types.is_union(expected):  # pyarrow.orc reads unions as sparse (README says)
            assert pa.types.is_union(peer) and peer.mode == "sparse"
        else:
            assert peer == expected  # the peer agrees


def test_table_covers_the_surprises() -> None:
    rows = {orc: read for _, orc, read in mapping_rows()}
    assert rows["timestamp"] == '`pa.timestamp("ns")`'
    assert rows["timestamp with local time zone"] == '`pa.timestamp("ns", tz="UTC")`'
    assert "index is dropped" in page("guide/types.md")
    assert "uint64" in page("guide/types.md")


def test_pandas_index_is_dropped(tmp_path: Path) -> None:
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"a": [1, 2]}, index=pd.Index([10, 20], name="key"))
    aorc.sync.write_table(frame, tmp_path / "p.orc")
    assert po.read_table(tmp_path / "p.orc").column_names == ["a"]


def test_unwritable_types_raise(tmp_path: Path) -> None:
    for t in (pa.null(), pa.time64("us"), pa.duration("s")):
        with pytest.raises(aorc.SchemaError):
            aorc.sync.write_table(pa.table({"c": pa.array([None], t)}), tmp_path / "x.orc")


# --------------------------------------------------------------------------- names

def test_examples_list_names_every_example() -> None:
    listed = set(re.findall(r"`examples/([\w.]+\.py)`", page("guide/examples.md")))
    assert listed == {p.name for p in (ROOT / "examples").glob("*.py")}


def test_open_reader_docstring_names_every_source() -> None:
    doc = aorc.open_reader.__doc__ or ""
    for needle in ("s3://", "file://", "bytes", "memoryview", "os.PathLike", "Store"):
        assert needle in doc, needle


def test_cli_page_exit_codes() -> None:
    text = page("guide/cli.md")
    assert "1 when the command fails" in text and "2 for a usage error" in text


def test_register_scheme_snippet(tmp_path: Path) -> None:
    """The docs' register_scheme example (it writes its own mirror/events.orc)."""
    from aorc.io import registry

    block = python_block("guide/stores/local.md", "register_scheme")
    namespace: dict[str, object] = {}
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        exec(compile(block, "local.md", "exec"), namespace)
        assert po.read_table(tmp_path / "mirror" / "events.orc").equals(
            namespace["table"])  # type: ignore[arg-type]
    finally:
        os.chdir(cwd)
        registry._SCHEMES.pop("mirror", None)


def test_unknown_scheme_lists_the_supported_ones() -> None:
    with pytest.raises(aorc.UnsupportedFeatureError, match="supported: .*az://.*gs://.*s3://"):
        aorc.sync.read_table("hdfs://namenode/x.orc")
