"""Hostile files that cost minutes of CPU or a RecursionError (issue 20, items 4 and 5).

Each file is built by :mod:`hostile_files`. CPU time and peak memory are measured in a child
process (a fresh interpreter, whose ``VmHWM`` is its own), under an ``RLIMIT_CPU`` that stops
a regression long before the minutes it used to take. Bounds are generous: at least ten
times what the fixed code needs on a loaded 2-core machine.
"""

from __future__ import annotations

import decimal
import io
import json
import pathlib
import subprocess
import sys

import pyarrow.orc as pa_orc
import pytest
from helpers.child_code import HWM
from hostile_files import (
    decimal_scales_file,
    deep_table,
    deep_type_file,
    delta_rle_v2,
    zone_spellings_file,
)
from stripe_source import decode_file

import aorc
from aorc.errors import CorruptFileError, SchemaError
from aorc.format.codec import rle
from aorc.format.nesting import MAX_TYPE_DEPTH
from aorc.format.types import parse_type_string

GiB = 1 << 30
HERE = pathlib.Path(__file__).resolve().parent

#: Reads a file with aorc; prints CPU seconds and peak RSS of the read, and its outcome.
CHILD = r"""
import asyncio, json, resource, sys
cpu_limit = int(sys.argv[2])
resource.setrlimit(resource.RLIMIT_CPU, (cpu_limit, cpu_limit + 1))
import aorc

def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime

""" + HWM + r"""
start = cpu()
try:
    table = asyncio.run(aorc.read_table(sys.argv[1]))
    out = {"rows": table.num_rows, "error": None, "message": ""}
except Exception as exc:
    out = {"rows": None, "error": type(exc).__name__, "message": str(exc)}
out.update(cpu=cpu() - start, rss=hwm())
print(json.dumps(out))
"""


def read_in_child(path: pathlib.Path, cpu_bound: float) -> dict[str, object]:
    """Read ``path`` in a child; fail when it takes more than ``cpu_bound`` CPU seconds
    (the child is killed a little after that) or 1 GiB."""
    limit = int(cpu_bound) + 5  # interpreter start and imports come on top
    proc = subprocess.run([sys.executable, "-c", CHILD, str(path), str(limit)],
                          capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, f"child died ({proc.returncode}): {proc.stderr[-2000:]}"
    result: dict[str, object] = json.loads(proc.stdout.strip().splitlines()[-1])
    assert isinstance(result["cpu"], float) and result["cpu"] < cpu_bound, result
    assert isinstance(result["rss"], int) and result["rss"] < GiB, result
    return result


# =========================================================================== decimals

def test_decimal_scale_changing_every_row(tmp_path: pathlib.Path) -> None:
    """A 724-byte file of 100,000 rows, each at its own scale 0, 1, 2, ...: once 45 s of
    CPU (one pass over all rows per distinct scale); now refused at the first scale past 38."""
    path = tmp_path / "scales.orc"
    path.write_bytes(decimal_scales_file(100_000, list(range(100_000))))
    assert path.stat().st_size < 1000
    result = read_in_child(path, cpu_bound=5)
    assert result["error"] == "CorruptFileError", result
    assert "value 39 has scale 39, outside 0 to 38" in str(result["message"])


@pytest.mark.parametrize("scales", [[-1], [0, 39], [2**40], [5, -(2**62)]])
def test_decimal_scales_outside_any_decimal_are_corrupt(scales: list[int]) -> None:
    """No decimal has a negative scale or one above 38 (the values are zeros: once read back
    as zeros without a word)."""
    data = decimal_scales_file(600, scales)
    with pytest.raises(CorruptFileError, match=r"SECONDARY: value \d+ has scale"):
        decode_file(data)


def test_many_scales_rescale_like_orc_cpp() -> None:
    """Values at every scale from 0 to 10, rescaled to the type's 10, agree with pyarrow."""
    n = 5000
    values = [(i * 7919) % 10**12 * (-1) ** i for i in range(n)]
    scales = [i % 11 for i in range(n)]
    data = decimal_scales_file(n, scales, values=values)
    got = decode_file(data)
    want = pa_orc.ORCFile(io.BytesIO(data)).read()
    assert got.equals(want)
    assert got.column("d")[3].as_py() == decimal.Decimal(values[3]).scaleb(-scales[3])


# =========================================================================== time zones

def test_one_zone_spelled_2000_ways(tmp_path: pathlib.Path) -> None:
    """2,000 stripes naming America/New_York with different spaces around it: once 44 s of
    CPU (the zone tabulated for every spelling), now the zone is tabulated once."""
    path = tmp_path / "zones.orc"
    path.write_bytes(zone_spellings_file(2000))
    result = read_in_child(path, cpu_bound=15)
    assert result["error"] is None and result["rows"] == 2000, result


def test_every_spelling_reads_the_same_instants() -> None:
    table = decode_file(zone_spellings_file(60))
    assert table.num_rows == 60
    assert len(set(table.column("t").to_pylist())) == 1


# =========================================================================== deep types

def test_deepest_file_reads_like_pyarrow() -> None:
    """63 nested lists around an int: the leaf is MAX_TYPE_DEPTH levels below the root."""
    depth = MAX_TYPE_DEPTH - 1
    data = deep_type_file(depth)
    got = decode_file(data)
    assert got.equals(pa_orc.ORCFile(io.BytesIO(data)).read())
    assert got.equals(deep_table(depth))


@pytest.mark.parametrize("depth", [MAX_TYPE_DEPTH, 200, 256, 1000])
def test_deeper_files_are_refused(tmp_path: pathlib.Path, depth: int) -> None:
    """Once a RecursionError from 200 levels; pyarrow.orc reads them all."""
    path = tmp_path / "deep.orc"
    path.write_bytes(deep_type_file(depth))
    with pytest.raises(CorruptFileError, match=f"more than {MAX_TYPE_DEPTH} levels"):
        aorc.sync.read_table(path)


def test_deepest_schema_writes(tmp_path: pathlib.Path) -> None:
    table = deep_table(MAX_TYPE_DEPTH - 1)
    path = tmp_path / "deep.orc"
    aorc.sync.write_table(table, path)
    assert pa_orc.read_table(path).equals(table)
    assert aorc.sync.read_table(path).equals(table)


@pytest.mark.parametrize("depth", [MAX_TYPE_DEPTH, 1000])
def test_deeper_schemas_are_refused(tmp_path: pathlib.Path, depth: int) -> None:
    table = deep_table(depth)
    with pytest.raises(SchemaError, match=f"more than {MAX_TYPE_DEPTH} levels"):
        aorc.sync.write_table(table, tmp_path / "deep.orc")
    with pytest.raises(SchemaError, match=f"more than {MAX_TYPE_DEPTH} levels"):
        aorc.sync.open_dataset(tmp_path, schema=table.schema)
    assert not (tmp_path / "deep.orc").exists()


def test_deep_type_strings() -> None:
    ok = "struct<x:" + "array<" * (MAX_TYPE_DEPTH - 1) + "int" + ">" * MAX_TYPE_DEPTH
    assert max(t.column_id for t in parse_type_string(ok).walk()) == MAX_TYPE_DEPTH
    for n in (MAX_TYPE_DEPTH, 5000):
        text = "struct<x:" + "array<" * n + "int" + ">" * (n + 1)
        with pytest.raises(SchemaError, match="levels deep"):
            parse_type_string(text)


#: Reads and writes the deepest type and the next level in a thread with a 256 KiB stack,
#: and from a call stack 600 frames deep (of the default limit of 1000).
DEEP_CHILD = r"""
import asyncio, json, sys, threading
sys.path[:0] = sys.argv[1:3]
from hostile_files import deep_table, deep_type_file
import aorc
from aorc.format.nesting import MAX_TYPE_DEPTH

def nest(frames, fn):
    return nest(frames - 1, fn) if frames else fn()

async def roundtrip(depth, tmp):
    table = TABLES[depth]
    try:
        await aorc.write_table(table, tmp + "/w.orc")
        wrote = "ok"
    except Exception as exc:
        wrote = type(exc).__name__
    with open(tmp + "/r.orc", "wb") as f:
        f.write(FILES[depth])
    try:
        read = "ok" if (await aorc.read_table(tmp + "/r.orc")).equals(table) else "wrong"
    except Exception as exc:
        read = type(exc).__name__
    return [wrote, read]

depths = [MAX_TYPE_DEPTH - 1, MAX_TYPE_DEPTH, 1000]
TABLES = {d: deep_table(d) for d in depths}
FILES = {d: deep_type_file(d) for d in depths}
out = {}

def case(name, frames):
    for d in depths:
        try:
            out[f"{name} {d}"] = nest(frames, lambda: asyncio.run(roundtrip(d, sys.argv[3])))
        except BaseException as exc:
            out[f"{name} {d}"] = type(exc).__name__

threading.stack_size(256 * 1024)
t = threading.Thread(target=case, args=("small stack", 0))
t.start()
t.join()
case("deep stack", 600)
print(json.dumps(out))
"""


def test_deep_types_on_small_and_deep_stacks(tmp_path: pathlib.Path) -> None:
    """Never a RecursionError (nor a crash): the deepest type reads and writes, the next
    level is refused with aorc's errors."""
    tests = str(HERE.parent)
    proc = subprocess.run([sys.executable, "-c", DEEP_CHILD, str(HERE), tests, str(tmp_path)],
                          capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, f"child died ({proc.returncode}): {proc.stderr[-2000:]}"
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    for where in ("small stack", "deep stack"):
        assert out[f"{where} {MAX_TYPE_DEPTH - 1}"] == ["ok", "ok"], out
        for d in (MAX_TYPE_DEPTH, 1000):
            assert out[f"{where} {d}"] == ["SchemaError", "CorruptFileError"], out


def test_delta_builder_round_trips() -> None:
    """The builder's DELTA runs decode to what they encode."""
    values = [3, 5, 7, 7, 7, -4, 100, *range(1000), *range(0, -3000, -3)]
    raw = delta_rle_v2(values, signed=True)
    assert rle.read_int_rle_v2(raw, len(values), True).tolist() == values
