"""aorc's stream encoders against ORC Java's own, byte for byte and position for position.

The oracle (``OrcEncodeOracle.java``) runs ORC Java's RunLengthIntegerWriterV2,
RunLengthIntegerWriter, RunLengthByteWriter, BitFieldWriter, SerializationUtils varints and
TimestampTreeWriter.formatNanos from the orc-core jar that PySpark bundles, in one JVM for the
whole module, over seeded random inputs built to reach every sub-encoding and state change.
Skipped when Java or PySpark's jars are missing.
"""

from __future__ import annotations

import importlib.util
import shutil
import struct
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from encode_reference import rle_v2_run

from aorc.format.codec import _encode as enc

I64_MIN = -(2**63)
I64_MAX = 2**63 - 1
ORACLE = Path(__file__).with_name("OrcEncodeOracle.java")


@dataclass(frozen=True)
class Case:
    name: str
    op: int  # see OrcEncodeOracle.java
    flags: int
    values: np.ndarray
    bounds: np.ndarray


# ---------------------------------------------------------------------------------------
# inputs


def _runs(rng: np.random.Generator, n: int, pool: np.ndarray, longest: int) -> np.ndarray:
    """Values drawn from ``pool`` in runs of random lengths up to ``longest``."""
    out: list[np.ndarray] = []
    total = 0
    while total < n:
        length = int(min(rng.geometric(1 / max(longest / 3, 1.01)), longest))
        out.append(np.full(length, rng.choice(pool), dtype=np.int64))
        total += length
    return np.concatenate(out)[:n] if out else np.zeros(0, np.int64)


def _outliers(rng: np.random.Generator, n: int) -> np.ndarray:
    base = rng.integers(-(2 ** int(rng.integers(1, 12))), 2 ** int(rng.integers(1, 12)), n)
    base += int(rng.choice([0, 1000, -(10**6), 2**40, -(2**57)]))
    count = int(rng.integers(0, max(n // 15, 1) + 1))
    where = rng.integers(0, max(n, 1), count)
    base[where] = rng.integers(-(2 ** int(rng.integers(20, 63))), 2**62, count)
    return base


def _lone_outlier(rng: np.random.Generator, n: int) -> np.ndarray:
    """Blocks of 512 small values with one large value far from the previous one."""
    out = rng.integers(0, 64, n)
    for start in range(0, n, 512):
        at = start + int(rng.choice([0, 255, 256, 300, 510, 511]))
        if at < n:
            out[at] = int(rng.integers(2**20, 2**40))
    return out


def _wide(rng: np.random.Generator, n: int) -> np.ndarray:
    full = rng.integers(I64_MIN, I64_MAX, n, endpoint=True)
    return full >> rng.integers(0, 64, n)


def _steps(rng: np.random.Generator, n: int) -> np.ndarray:
    steps = rng.integers(0, 2 ** int(rng.integers(0, 40)), n)
    steps[rng.random(n) < 0.05] = 0
    out = np.cumsum(steps) + int(rng.integers(-(10**12), 10**12))
    return out if rng.random() < 0.5 else -out


def _arith(rng: np.random.Generator, n: int) -> np.ndarray:
    start = np.uint64(int(rng.integers(0, 2**64, dtype=np.uint64)))
    step = np.uint64([1, 2, 7, 2**33, 2**64 - 3, 2**63][int(rng.integers(6))])
    with np.errstate(over="ignore"):
        return (start + step * np.arange(n, dtype=np.uint64)).view(np.int64)


def _ramps_and_repeats(rng: np.random.Generator, n: int) -> np.ndarray:
    """Short fixed-step ramps and short varying runs, each followed by a few repeats."""
    parts = [np.zeros(0, np.int64)]
    total = 0
    while total < n:
        start = int(rng.integers(-1000, 1000))
        step = int(rng.choice([-129, -128, -3, -2, -1, 0, 1, 2, 3, 127, 128]))
        ramp = start + step * np.arange(int(rng.integers(1, 14)))
        if rng.random() < 0.3:
            ramp = rng.integers(-1000, 1000, len(ramp))
        parts += [ramp, np.full(int(rng.integers(1, 14)), ramp[-1])]
        total += len(parts[-1]) + len(parts[-2])
    return np.concatenate(parts)[:n]


INT_GENERATORS: dict[str, Callable[[np.random.Generator, int], np.ndarray]] = {
    "const": lambda r, n: np.full(n, int(r.integers(-(2**40), 2**40)), np.int64),
    "small": lambda r, n: r.integers(0, 2 ** int(r.integers(1, 20)), n),
    "small_signed": lambda r, n: r.integers(-60, 60, n),
    "wide": _wide,
    "full": lambda r, n: r.integers(I64_MIN, I64_MAX, n, endpoint=True),
    "extremes": lambda r, n: r.choice(
        np.array([I64_MIN, I64_MAX, 0, -1, 1, I64_MIN + 1, I64_MAX - 1], np.int64), n
    ),
    "steps": _steps,
    "arith": _arith,
    "short_runs": lambda r, n: _runs(r, n, r.integers(-5, 5, 4), 12),
    "long_runs": lambda r, n: _runs(r, n, r.integers(-(2**50), 2**50, 5), 1200),
    "mixed_runs": lambda r, n: _runs(r, n, r.integers(0, 300, 40), 40),
    "outliers": _outliers,
    "lone_outlier": _lone_outlier,
    "sorted_full": lambda r, n: np.sort(r.integers(I64_MIN, I64_MAX, n, endpoint=True)),
    "alternating": lambda r, n: np.resize(r.integers(-(2**30), 2**30, 2), n),
    "ramps_and_repeats": _ramps_and_repeats,
    "unit_steps": lambda r, n: np.cumsum(r.integers(0, 2, n)) * int(r.choice([1, -1])),
}

LENGTHS = [0, 1, 2, 3, 4, 5, 10, 11, 13, 100, 511, 512, 513, 1000, 1537, 4000]


def _mixed(rng: np.random.Generator, n: int) -> np.ndarray:
    """Segments from every generator, glued together."""
    parts = [np.zeros(0, np.int64)]
    names = list(INT_GENERATORS)
    total = 0
    while total < n:
        size = int(rng.choice([1, 2, 3, 7, 30, 200, 600]))
        parts.append(INT_GENERATORS[names[int(rng.integers(len(names)))]](rng, size))
        total += size
    return np.concatenate(parts)[:n]


def _bounds(rng: np.random.Generator, n: int) -> np.ndarray:
    stride = int(rng.integers(1, 1200))
    b = np.arange(0, n + 1, stride, dtype=np.int64)
    if rng.random() < 0.3 and n:
        b = np.unique(np.append(b, n))
    return b


def _int_cases(rng: np.random.Generator) -> list[Case]:
    cases = []
    generators = dict(INT_GENERATORS, mixed=_mixed)
    for gname, gen in generators.items():
        for n in rng.choice(LENGTHS, 5, replace=False).tolist() + [3000]:
            values = np.asarray(gen(rng, n), dtype=np.int64)
            signed = int(rng.random() < 0.7)
            aligned = int(rng.random() < 0.75)
            bounds = _bounds(rng, n)
            tag = f"{gname}-{n}-s{signed}"
            cases.append(Case(f"v2-{tag}-a{aligned}", 1, signed | aligned << 1, values, bounds))
            cases.append(Case(f"v1-{tag}", 2, signed, values, bounds))
    return cases


def _other_cases(rng: np.random.Generator) -> list[Case]:
    cases = []
    for n in [0, 1, 2, 3, 5, 127, 128, 129, 130, 131, 200, 1000, 5003]:
        for pool_size in (1, 2, 3, 256):
            pool = rng.integers(-128, 128, pool_size)
            b = _runs(rng, n, pool, int(rng.choice([2, 5, 200])))
            cases.append(Case(f"byte-{n}-{pool_size}", 3, 0, b, _bounds(rng, n)))
        for density in (0.0, 0.02, 0.5, 0.97, 1.0):
            bits = (rng.random(n) < density).astype(np.int64)
            if rng.random() < 0.5:
                bits = _runs(rng, n, np.array([0, 1]), 60)
            cases.append(Case(f"bool-{n}-{density}", 4, 0, bits, _bounds(rng, n)))
        for signed in (0, 1):
            v = _mixed(rng, n)
            cases.append(Case(f"varint-{n}-s{signed}", 5, signed, v, _bounds(rng, n)))
        words = np.stack([_wide(rng, n), _wide(rng, n)], axis=1) if n else np.zeros((0, 2))
        cases.append(Case(f"varint128-{n}", 6, 0, words.astype(np.int64), _bounds(rng, n)))
    edges = [0, 1, -1, 2**63, -(2**63), 2**64, -(2**64), 2**127 - 1, -(2**127), 2**100]
    words = np.array([[v & (2**64 - 1), (v >> 64) & (2**64 - 1)] for v in edges], np.uint64)
    cases.append(Case("varint128-edges", 6, 0, words.view(np.int64), np.arange(11)))
    digits = rng.integers(0, 10, 3000)
    nanos = rng.integers(0, 10**9, 3000) // 10**digits * 10**digits
    nanos[:6] = [0, 1, 10, 100, 100_000_000, 999_999_999]
    cases.append(Case("nanos", 7, 0, nanos, np.zeros(0, np.int64)))
    return cases


CASES = _int_cases(np.random.default_rng(20240611)) + _other_cases(np.random.default_rng(7))


# ---------------------------------------------------------------------------------------
# running both sides


def _jars() -> Path | None:
    spec = importlib.util.find_spec("pyspark")
    if spec is None or not spec.submodule_search_locations:
        return None
    jars = Path(next(iter(spec.submodule_search_locations))) / "jars"
    return jars if any(jars.glob("orc-core-*.jar")) else None


def _serialize(case: Case) -> bytes:
    vals = np.ascontiguousarray(case.values, dtype=">i8")
    n = len(case.values)
    head = struct.pack(">bbi", case.op, case.flags, n)
    tail = struct.pack(">i", len(case.bounds)) + case.bounds.astype(">i8").tobytes()
    return head + vals.tobytes() + tail


@pytest.fixture(scope="module")
def java_results() -> dict[str, tuple[bytes, list[int]]]:
    jars = _jars()
    if jars is None or shutil.which("java") is None:
        pytest.skip("needs Java and PySpark's orc-core jar")
    proc = subprocess.run(
        ["java", "-cp", f"{jars}/*", str(ORACLE)],
        input=b"".join(_serialize(c) for c in CASES),
        capture_output=True,
        timeout=300,
        check=True,
    )
    out, pos, results = proc.stdout, 0, {}
    for case in CASES:
        (length,) = struct.unpack_from(">i", out, pos)
        data = out[pos + 4 : pos + 4 + length]
        pos += 4 + length
        (m,) = struct.unpack_from(">i", out, pos)
        positions = np.frombuffer(out, ">i8", m, pos + 4).tolist()
        pos += 4 + 8 * m
        results[case.name] = (data, positions)
    assert pos == len(out)
    return results


def _ours(case: Case) -> tuple[bytes, list[int]]:
    signed = bool(case.flags & 1)
    v, b = case.values, case.bounds
    if case.op == 1:
        data, pos = enc.write_int_rle_v2_with_positions(v, signed, b, aligned=bool(case.flags & 2))
    elif case.op == 2:
        data, pos = enc.write_int_rle_v1_with_positions(v, signed, b)
    elif case.op == 3:
        data, pos = enc.write_byte_rle_with_positions(v.astype(np.int8), b)
    elif case.op == 4:
        data, pos = enc.write_bool_rle_with_positions(v.astype(bool), b)
    elif case.op == 5:
        data, pos = enc.write_varints_with_positions(v, signed, b)
    elif case.op == 6:
        data, pos = enc.write_varint128_with_positions(v.view(np.uint64), b)
    else:
        return enc.encode_nanos(v).astype(">i8").tobytes(), []
    return data, pos.ravel().tolist()


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_same_bytes_and_positions_as_orc_java(case: Case, java_results) -> None:
    expected_data, expected_positions = java_results[case.name]
    data, positions = _ours(case)
    assert len(data) == len(expected_data)
    assert data == expected_data
    assert positions == expected_positions


def test_cases_reach_every_rle_v2_sub_encoding(java_results) -> None:
    """Java's outputs for these inputs hold all four RLE v2 run kinds (else the test is weak)."""
    kinds: set[int] = set()
    wide_gap_patches = 0
    for case in CASES:
        if case.op != 1:
            continue
        data = java_results[case.name][0]
        pos = 0
        while pos < len(data):
            kinds.add(data[pos] >> 6)
            if data[pos] >> 6 == 2 and data[pos + 3] >> 5 == 7:
                wide_gap_patches += 1  # patch gap width 8: may need filler entries
            pos = rle_v2_run(data, pos, bool(case.flags & 1))[1]
    assert kinds == {0, 1, 2, 3}
    assert wide_gap_patches > 0
