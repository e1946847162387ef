"""Other writers' files (``tests/data/writers/``, built by ``scripts/build_writers_corpus.py``):
each is read by aorc and compared with the rows its writer's own reader returned when the
corpus was built (ORC Java 2.3 and 1.9, Hive-style ``_col`` names, ORC C++ through pyarrow 26
and 12 and pyorc, orc-rust's test files). Timestamps are compared as the writer's wall clock
(the default) and, where the writer's reader knew it, as the instant
(``use_writer_timezone=True``)."""

from __future__ import annotations

import datetime
import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import aorc
import aorc.sync
from tests.helpers.writers_corpus import canonical_rows

CORPUS = Path(__file__).resolve().parents[1] / "data" / "writers"
FILES = sorted(p.name for p in CORPUS.glob("*.orc"))


def _expected(name: str) -> dict[str, Any]:
    meta: dict[str, Any] = json.loads((CORPUS / f"{name}.json").read_text())
    return meta


def _char_columns(schema: str) -> set[int]:
    """Top-level positions of char(n) columns in an ORC type string."""
    depth, position, out, token = 0, 0, set(), ""
    for ch in schema.removeprefix("struct<")[:-1]:
        if ch in "<(":
            depth += 1
        elif ch in ">)":
            depth -= 1
        if ch == "," and depth == 0:
            position, token = position + 1, ""
            continue
        token += ch
        if depth <= 1 and token.split(":", 1)[-1].startswith("char("):
            out.add(position)
    return out


def _pick(value: Any, key: str) -> Any:
    """Expected timestamps reduced to one form (``wall_ns`` or ``instant_ns``)."""
    if isinstance(value, list):
        return [_pick(v, key) for v in value]
    if isinstance(value, dict):
        if "wall_ns" in value:
            return {"instant_ns": value["instant_ns"]} if key == "instant_ns" else {
                "wall_ns": value["wall_ns"]}
        return {k: _pick(v, key) for k, v in value.items()}
    return value


def _has_instants(value: Any) -> bool:
    if isinstance(value, list):
        return any(_has_instants(v) for v in value)
    if isinstance(value, dict):
        return ("wall_ns" in value and "instant_ns" in value) or any(
            _has_instants(v) for v in value.values())
    return False


def _trim_chars(rows: list[list[Any]], columns: set[int]) -> list[list[Any]]:
    return [[v.rstrip(" ") if i in columns and isinstance(v, str) else v
             for i, v in enumerate(row)] for row in rows]


def test_corpus_is_small_and_complete() -> None:
    assert len(FILES) >= 15
    assert sum(p.stat().st_size for p in CORPUS.iterdir()) < 400_000
    for name in FILES:
        meta = _expected(name)
        assert meta["rows"] and {"writer", "read_by", "made_by"} <= meta.keys(), name
    writers = {_expected(n)["writer"].split(" (")[0].rsplit(".", 1)[0] for n in FILES}
    assert {"ORC Java 2.3", "ORC Java 1.9", "ORC C++"} <= writers, writers


@pytest.mark.parametrize("name", FILES)
def test_reads_as_the_writers_reader(name: str) -> None:
    meta = _expected(name)
    table = aorc.sync.read_table(CORPUS / name)
    if meta["schema"].startswith("struct<"):  # the ORC type (pyarrow gives its Arrow schema)
        with aorc.sync.open_reader(CORPUS / name) as reader:
            assert reader.orc_type.replace(" ", "") == meta["schema"].replace(" ", "")
    got = canonical_rows(table)
    expected = _pick(meta["rows"], "wall_ns")
    if meta["char_trimmed"]:  # ORC Java trims char(n) padding; aorc keeps it, as ORC C++
        chars = _char_columns(meta["schema"])
        got, expected = _trim_chars(got, chars), _trim_chars(expected, chars)
    assert got == expected


@pytest.mark.parametrize("name", [n for n in FILES if _has_instants(_expected(n)["rows"])])
def test_writer_zone_instants(name: str) -> None:
    """``use_writer_timezone=True`` gives the instants the writer's reader saw in its zone."""
    meta = _expected(name)
    table = aorc.sync.read_table(CORPUS / name, use_writer_timezone=True)
    assert all(t.tz == "UTC" for t in table.schema.types if pa.types.is_timestamp(t))
    got, expected = canonical_rows(table), _pick(meta["rows"], "instant_ns")
    if meta["char_trimmed"]:
        chars = _char_columns(meta["schema"])
        got, expected = _trim_chars(got, chars), _trim_chars(expected, chars)
    assert got == expected


def test_orc_rust_writer_timezone_file() -> None:
    """orc-rust's own expected value for its Asia/Shanghai file is the instant."""
    path = CORPUS / "orc_rust_timestamp_writer_timezone.snappy.orc"
    with aorc.sync.open_reader(path) as reader:
        assert reader.read_stripe_footer(0).writer_timezone == "Asia/Shanghai"
    wall = aorc.sync.read_table(path).column(0)[0].as_py()
    instant = aorc.sync.read_table(path, use_writer_timezone=True).column(0)[0].as_py()
    assert wall == datetime.datetime(2025, 5, 12, 12, 32)
    assert instant == datetime.datetime(2025, 5, 12, 4, 32, tzinfo=datetime.UTC)


@pytest.mark.parametrize("name", [n for n in FILES if "hive_positional" in n])
def test_hive_positional_names(name: str) -> None:
    """Hive's ``_col0, _col1, ...`` files: a dataset schema with the real names maps them by
    position (as Spark and ORC Java do for such files), giving the same rows as the file
    written with names."""
    named = CORPUS / name.replace("hive_positional.snappy", "alltypes.zlib")
    schema = aorc.sync.read_table(named).schema
    table = aorc.sync.read_table(CORPUS / name)
    assert table.schema.names[:3] == ["_col0", "_col1", "_col2"]
    mapped = aorc.sync.open_dataset([str(CORPUS / name)], schema=schema).read()
    assert mapped.schema.names == schema.names
    assert canonical_rows(mapped) == canonical_rows(aorc.sync.read_table(named))


def test_hive_writer_file_maps_by_position() -> None:
    """Hive 2.3's own writer's ``_col`` file, read as a table whose columns have names."""
    path = CORPUS / "hive_2.3_writer_positional.zlib.orc"
    plain = aorc.sync.read_table(path)
    names = ["id", "big", "name", "ratio", "amount", "at", "day", "ints", "counts", "flag"]
    schema = pa.schema([f.with_name(n) for f, n in zip(plain.schema, names, strict=True)])
    mapped = aorc.sync.open_dataset([str(path)], schema=schema).read(columns=["at", "id"])
    assert mapped.column("id").equals(plain.column("_col0"))
    assert mapped.column("at").equals(plain.column("_col5"))


def test_dataset_reads_in_the_writer_zone() -> None:
    """``use_writer_timezone`` on a dataset of files from writers in three zones."""
    names = ["pyorc_0.12_kolkata.zlib.orc", "hive_2.3_writer_positional.zlib.orc",
             "orc_java_1.9_alltypes.zlib.orc"]
    for name in names:
        one = aorc.sync.read_table(CORPUS / name, use_writer_timezone=True)
        many = aorc.sync.read_dataset([str(CORPUS / name)], use_writer_timezone=True)
        opened = aorc.sync.open_dataset([str(CORPUS / name)], use_writer_timezone=True)
        assert opened.schema == one.schema
        assert many.equals(one) and opened.read().equals(one)
