"""The ``redact`` mask against ORC Java's ``RedactMaskFactory``: the same values through ORC
Java's mask (a helper command; ORC Java's writer cannot redact strings, see
``orc-pitfalls.md``) and aorc's, compared value by value for every type and several
parameter sets; ORC Java reading aorc's redacted files without keys, and aorc masking what
ORC Java's writer redacted (a bigint column)."""

from __future__ import annotations

import datetime
import decimal
import struct
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from helpers.orc_java_enc import ENCRYPT, KEY_SETS, OrcJava

import aorc
from aorc.format.encryption.masks import mask_array
from aorc.format.encryption.spec import mask_parts
from aorc.format.types import parse_type_string

TEXTS = ["Hello World 123!", "Ünïcödé €5 — «q» ‘x’", "tab\there\nnew", "日本語テキスト",
         "", "emoji 😀 ok", "Ǆ title ⅫⅫ ² ٣", "a_b-c (d) [e] {f} #g @h %i ^j ~k", None,
         "x" * 40]
LONGS = [0, 1, -1, 7, 12, 99, 100, -12345, 2**31 - 1, -2**31, 10**17, 10**18 - 1, 10**18,
         2**63 - 1, -2**63, None]
DOUBLES = [0.0, 1.0, -1.0, 3.14159, -2.5e-3, 1e300, 1.7e308, 5e-324, 123456.789, None,
           float("inf"), float("-inf")]
DECIMALS = ["0", "1.50", "-123.45", "99999999.99", "0.01", None]
DATES = [datetime.date(2024, 2, 29), datetime.date(1999, 12, 31), datetime.date(1970, 1, 1),
         datetime.date(2001, 7, 4), None]
TIMESTAMPS = [datetime.datetime(2024, 2, 29, 13, 45, 12, 345000),
              datetime.datetime(1999, 12, 31, 23, 59, 59, 999000),
              datetime.datetime(1970, 1, 1), None]
CASES: list[tuple[str, pa.DataType, list[Any]]] = [
    ("string", pa.string(), TEXTS),
    ("bigint", pa.int64(), LONGS),
    ("int", pa.int32(), [v for v in LONGS if v is None or -2**31 <= v < 2**31]),
    ("smallint", pa.int16(), [0, 5, 99, 120, -300, 32767, -32768, None]),
    ("tinyint", pa.int8(), [0, 5, 42, 100, 127, -128, -9, None]),
    ("boolean", pa.bool_(), [True, False, None]),
    ("double", pa.float64(), DOUBLES),
    ("float", pa.float32(), [0.0, 1.5, -3.25, 1e30, None]),
    ("decimal(10,2)", pa.decimal128(10, 2), DECIMALS),
    ("date", pa.date32(), DATES),
    ("timestamp", pa.timestamp("ns"), TIMESTAMPS),
]
PARAMS: list[tuple[str, ...]] = [
    (), ("Yy0",), ("_x5$",), ("Aa3-,*_",), ("Xx9", "2000 5 _ 12 _ 7"), ("", "_ _ 15"),
    ("Xx9", "", "0:1,-2:-1"),
]


def java_value(v: Any, orc: str) -> str:
    """A value as the helper takes it."""
    if v is None:
        return "\\N"
    if orc == "string":
        return str(v).encode().hex()
    if orc in ("double", "float"):
        return struct.pack(">d", float(v)).hex()
    if orc == "boolean":
        return str(int(v))
    if orc == "date":
        return str((v - datetime.date(1970, 1, 1)).days)
    if orc == "timestamp":
        return str((v - datetime.datetime(1970, 1, 1)) // datetime.timedelta(milliseconds=1))
    return str(v)


def from_java(line: str, orc: str, t: pa.DataType) -> Any:
    """The helper's output as the Python value aorc's mask gives."""
    if line == "\\N":
        return None
    if orc == "string":
        return bytes.fromhex(line[1:]).decode()
    if orc == "double":
        return struct.unpack(">d", bytes.fromhex(line.rjust(16, "0")))[0]
    if orc == "float":
        return float(np.float32(struct.unpack(">d", bytes.fromhex(line.rjust(16, "0")))[0]))
    if orc == "boolean":
        return line != "0"
    if orc == "decimal(10,2)":
        return decimal.Decimal(line).quantize(decimal.Decimal("0.01"))
    if orc == "date":
        return datetime.date(1970, 1, 1) + datetime.timedelta(days=int(line))
    if orc == "timestamp":
        ms, nanos = (int(x) for x in line.split())
        return datetime.datetime(1970, 1, 1) + datetime.timedelta(
            milliseconds=ms - ms % 1000, microseconds=nanos // 1000)
    bits = {"tinyint": 8, "smallint": 16, "int": 32, "bigint": 64}[orc]
    value = int(line) & ((1 << bits) - 1)  # the writer keeps the column's width
    return value - (1 << bits) if value >> (bits - 1) else value


def aorc_masked(values: list[Any], t: pa.DataType, orc: str,
                params: tuple[str, ...]) -> list[Any]:
    arr = pa.array([decimal.Decimal(v) if v is not None and orc.startswith("decimal") else v
                    for v in values], t)
    out = mask_array(arr, parse_type_string(orc), "redact", params)
    if orc == "timestamp":
        return out.cast(pa.timestamp("us")).to_pylist()
    return out.to_pylist()


def test_redact_matches_orc_java(orc_java: OrcJava) -> None:
    runs = [(orc, t, values, params) for orc, t, values in CASES for params in PARAMS
            if not (params[2:] and orc in ("double", "float"))]
    out = orc_java.batch([["redact", orc, str(len(p)), *p, *[java_value(v, orc) for v in values]]
                          for orc, t, values, p in runs])
    checked = 0
    for (orc, t, values, params), text in zip(runs, out, strict=True):
        assert not text.startswith("error"), (orc, params, text)
        java = [from_java(line, orc, t) for line in text.splitlines()]
        mine = aorc_masked(values, t, orc, params)
        if orc == "timestamp":
            mine = [None if v is None else v.replace(tzinfo=None) for v in mine]
        assert mine == java, (orc, params)
        checked += len(values)
    assert checked > 500


def test_unmask_ranges_on_floats_refused() -> None:
    with pytest.raises(aorc.SchemaError, match="floating-point"):
        mask_array(pa.array([1.5]), parse_type_string("double"), "redact",
                   ("Xx9", "", "0:1"))


def test_mask_spec_with_quoted_parameters() -> None:
    assert mask_parts("redact,`Yy0`,`2000 5 _`,`0:1,-2:-1`") == \
        ("redact", ("Yy0", "2000 5 _", "0:1,-2:-1"))
    opts = aorc.WriteOptions(encrypt="pii:a", masks="redact,`Xx9`,`0:2`:a;sha256:b")
    assert opts.masks == "redact,`Xx9`,`0:2`:a;sha256:b"


def test_orc_java_reads_aorc_redacted_files(orc_java: OrcJava, tmp_path: Path) -> None:
    """aorc redacts strings and numbers in its file; ORC Java reads them without keys as
    its own RedactMaskFactory masks the values, and with keys the real values. ORC Java's
    writer redacts a bigint column as aorc's mask does."""
    n = 300
    t = pa.table({
        "id": pa.array(range(n), pa.int64()),
        "ssn": [f"{i:03d}-{i % 97:02d}-Ab{i}" for i in range(n)],
        "email": [None if i % 5 == 0 else f"User.{i}@Example.org" for i in range(n)],
        "salary": pa.array([(i - 150) * 1234 for i in range(n)], pa.int64()),
        "name": [f"Name {i}" for i in range(n)],
    })
    keys = aorc.InMemoryKeys({"pii": bytes(range(32)), "hr": {1: bytes(range(100, 116))}})
    ours = tmp_path / "aorc.orc"
    masks = "redact:ssn,salary;redact,`Zz0`:email"
    aorc.sync.write_table(t, ours, encrypt=ENCRYPT, masks=masks, keys=keys)
    theirs = tmp_path / "java.orc"
    hexes = [java_value(v, "string") for v in t.column("ssn").to_pylist()]
    emails = [java_value(v, "string") for v in t.column("email").to_pylist()]
    salaries = [str(v) for v in t.column("salary").to_pylist()]
    out = orc_java.batch([
        ["read", str(ours)], ["read", str(ours), *KEY_SETS["all"]],
        ["redact", "string", "0", *hexes], ["redact", "string", "1", "Zz0", *emails],
        ["redact", "bigint", "0", *salaries],
        ["write", str(theirs), "2500", ENCRYPT, "sha256:email;redact:salary", "NONE",
         *KEY_SETS["all"]],
        ["read", str(theirs)], ["read", str(theirs), *KEY_SETS["all"]]])
    masked, real = OrcJava.parse_read(out[0]), OrcJava.parse_read(out[1])
    assert masked.error is None and real.error is None
    assert real.rows == [list(r.values()) for r in t.to_pylist()]
    java_ssn = [from_java(line, "string", pa.string()) for line in out[2].splitlines()]
    java_email = [from_java(line, "string", pa.string()) for line in out[3].splitlines()]
    java_salary = [int(line) for line in out[4].splitlines()]
    assert [r[1] for r in masked.rows] == java_ssn
    assert [r[2] for r in masked.rows] == java_email
    assert [r[3] for r in masked.rows] == java_salary
    assert java_ssn[123] == "999.99.Xx999" and java_email[1] == "Zzzz.0.Zzzzzzz.zzz"
    assert aorc.sync.read_table(ours).column("ssn").to_pylist() == java_ssn
    # ORC Java's writer redacted the bigint salary; aorc's mask of the real values agrees
    assert not out[5].strip(), out[5]
    java_masked, java_real = OrcJava.parse_read(out[6]), OrcJava.parse_read(out[7])
    real_salary = pa.array([r[3] for r in java_real.rows], pa.int64())
    assert [r[3] for r in java_masked.rows] == mask_array(
        real_salary, parse_type_string("bigint"), "redact").to_pylist()
    assert len(set(r[3] for r in java_masked.rows)) > 1
