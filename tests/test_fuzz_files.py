"""Fuzzing the whole reader with damaged real files (issue 2, item 7).

Valid ORC files — the conformance corpus, files aorc writes (every codec, row indexes, bloom
filters, several stripes) and files pyarrow.orc writes (every codec, nested types, format 0.11
and 0.12) — are damaged by :mod:`fuzz_helpers` (bit flips and byte overwrites weighted towards
the tail, truncations at every region boundary, absurd chunk headers, extreme values in every
protobuf field of the tail, the stripe footers and the row indexes, type trees with cycles,
stripes outside the file, damaged decompressed stream bytes) and read through the public API
(``read_table``; ``open_reader`` with every file property, ``iter_batches`` with projections,
``filters=``, stripe footers) in child processes watched by :mod:`fuzz_runner`, whose address
space is capped. Every read must succeed with valid Arrow data or raise an ``AorcError`` made
where the damage was found: a hang, a crash, a MemoryError, any other exception, or a stray
IndexError/KeyError/... caught only by the reader's last-resort net fails the test, printing
the file, seed and mutation (replay one with ``python tests/fuzz_runner.py FILE SEED [KIND]``).

``AORC_FUZZ_ITERATIONS`` sets the number of mutants (default 3000, split between the three
sources); ``AORC_FUZZ_SEED`` shifts the seeds, ``AORC_FUZZ_WORKERS`` sets the number of child
processes and ``AORC_FUZZ_TIMEOUT`` the seconds one mutant may take.
"""

from __future__ import annotations

import asyncio
import copy
import os
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.orc as pa_orc
import pytest
from fuzz_helpers import NAMED, cut_points, mutate
from fuzz_model import build, parse_model
from fuzz_runner import MODES, SELFTESTS, BaseFile, FuzzReport, Job, describe, run_mutants
from helpers.corpus import load_manifest
from helpers.random_tables import ALL_TYPES, random_table

import aorc

ITERATIONS = int(os.environ.get("AORC_FUZZ_ITERATIONS", "3000"))
SEED = int(os.environ.get("AORC_FUZZ_SEED", "0"))
WORKERS = int(os.environ.get("AORC_FUZZ_WORKERS", str(min(4, os.cpu_count() or 2))))
TIMEOUT = float(os.environ.get("AORC_FUZZ_TIMEOUT", "20"))
#: Share of the mutants per source.
SHARES = {"corpus": 0.45, "aorc": 0.3, "pyarrow": 0.25}
#: Share of the mutants that are truncations at region boundaries.
CUT_SHARE = 0.15
#: The fuzz tests take time in proportion to the mutants: pytest-timeout's bound (900 s for
#: other tests, see pyproject.toml) grows by a generous second per mutant.
pytestmark = pytest.mark.timeout(900 + ITERATIONS)


# =========================================================================== base files

def write_base_files(folder: Path) -> dict[str, list[Path]]:
    """Write the files to mutate: by aorc (every codec, row indexes, bloom filters, several
    stripes, two block sizes) and by pyarrow.orc (every codec, format 0.11 and 0.12, direct
    and dictionary strings); every type ORC has, nested ones included."""
    table = random_table(7, 1500)
    small = random_table(8, 300, {k: ALL_TYPES[k] for k in ("i32", "str_dict", "nested",
                                                             "dec_38_10", "ts", "bool")})
    out: dict[str, list[Path]] = {"aorc": [], "pyarrow": []}
    for i, codec in enumerate(("zstd", "zlib", "snappy", "lz4", "none")):
        path = folder / f"aorc-{codec}.orc"
        data = table if i % 2 == 0 else small
        asyncio.run(aorc.write_table(
            data, str(path), compression=codec, row_index_stride=1000,
            bloom_filter_columns=[n for n in ("i32", "str", "str_dict", "dec_38_10", "ts")
                                  if n in data.column_names][:1 + i % 3],
            stripe_size=64 * 1024, compression_block_size=(4096, 65536)[i % 2]))
        out["aorc"].append(path)
    for i, codec in enumerate(("zstd", "zlib", "snappy", "lz4", "uncompressed")):
        for version in ("0.11", "0.12"):
            path = folder / f"pyarrow-{codec}-{version}.orc"
            pa_orc.write_table(table if i % 2 else small, str(path), compression=codec,
                               file_version=version, stripe_size=96 * 1024,
                               compression_block_size=65536, row_index_stride=1000,
                               dictionary_key_size_threshold=(0.0, 1.0)[i % 2])
            out["pyarrow"].append(path)
    return out


#: Base files above these sizes are fuzzed only when more iterations are asked for (a fixed
#: choice, so a seed maps to the same file however loaded the machine is: it leaves out the
#: corpus's demo-1x-zlib files of 1.9M rows and TestOrcFile.testSeek of 1.9 MB).
MAX_BASE_ROWS = 250_000
MAX_BASE_BYTES = 1 << 20


def _describe(name: str, path: Path) -> BaseFile | None:
    """The base file, or None when it is too big to read quickly in CI."""
    if ITERATIONS > 5000:
        return describe(name, path)
    return describe(name, path, max_rows=MAX_BASE_ROWS, max_bytes=MAX_BASE_BYTES)


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[BaseFile]]:
    """Files written by aorc and by pyarrow.orc to mutate."""
    paths = write_base_files(tmp_path_factory.mktemp("fuzz"))
    return {source: [b for p in files if (b := _describe(p.name, p)) is not None]
            for source, files in paths.items()}


def _corpus_files() -> list[BaseFile]:
    entries = load_manifest()
    if not entries:
        pytest.skip("ORC conformance corpus (../shared/orc-conformance) absent")
    files = [_describe(e.name, e.path) for e in entries]
    return [f for f in files if f is not None]


# =========================================================================== running

def _jobs(files: list[BaseFile], count: int, salt: int) -> list[Job]:
    """``count`` jobs: truncations at region boundaries (:data:`CUT_SHARE` of them, spread
    over the files; every boundary of every file when ``count`` is large enough), then
    random mutants of the files in turn, seeds distinct per source and AORC_FUZZ_SEED."""
    per_file = max(3, round(count * CUT_SHARE / len(files)))
    cuts: list[Job] = []
    for fi, base in enumerate(files):
        data = Path(base.path).read_bytes()
        points = len(cut_points(data, parse_model(data)))
        step = max(1, points // per_file)
        cuts += [(fi, k, "cut") for k in range(0, points, step)][:per_file]
    cuts = cuts[:count // 2]
    seed = (SEED * 1_000_003 + salt) * 10_000_019
    return cuts + [(k % len(files), seed + k, "random") for k in range(count - len(cuts))]


def _check(report: FuzzReport) -> None:
    print(report.summary())
    failures = report.failures
    if failures:
        shown = "\n\n".join(str(f) for f in failures[:12])
        pytest.fail(f"{len(failures)} of {len(report.outcomes)} mutants were not handled "
                    f"({report.summary()}):\n\n{shown}", pytrace=False)


def _fuzz(files: list[BaseFile], source: str, salt: int) -> None:
    count = max(1, round(ITERATIONS * SHARES[source]))
    jobs = _jobs(files, count, salt)
    report = run_mutants(files, jobs, workers=WORKERS, timeout=TIMEOUT,
                         batch=max(50, min(500, count // (2 * WORKERS) + 1)))
    assert len(report.outcomes) == count
    _check(report)


def test_fuzz_corpus_files() -> None:
    _fuzz(_corpus_files(), "corpus", 1)


def test_fuzz_aorc_written_files(written: dict[str, list[BaseFile]]) -> None:
    _fuzz(written["aorc"], "aorc", 2)


def test_fuzz_pyarrow_written_files(written: dict[str, list[BaseFile]]) -> None:
    _fuzz(written["pyarrow"], "pyarrow", 3)


def test_named_damage(written: dict[str, list[BaseFile]]) -> None:
    """Each damage the issue names (lengths of 2**63, stripes outside the file, type cycles,
    dictionary sizes of 2**31, huge chunk headers, ...; see ``fuzz_helpers.NAMED``), applied
    to compressed and uncompressed files of both writers and read every way."""
    names = {"aorc-zstd.orc", "aorc-none.orc", "pyarrow-zlib-0.12.orc", "pyarrow-lz4-0.11.orc"}
    files = [b for b in written["aorc"] + written["pyarrow"] if b.name in names]
    assert len(files) == len(names)
    jobs: list[Job] = [(fi, k, "named") for fi in range(len(files))
                       for k in range(len(NAMED) * len(MODES))]
    report = run_mutants(files, jobs, workers=WORKERS, timeout=TIMEOUT,
                         batch=len(jobs) // WORKERS + 1)
    assert len(report.outcomes) == len(jobs)
    _check(report)


# =========================================================================== the harness itself

def test_harness_reports_every_kind_of_failure(tmp_path: Path) -> None:
    """Hangs, segfaults, huge allocations, stray exceptions and invalid Arrow data are each
    caught and blamed on the right job, and the jobs after them still run."""
    fine = tmp_path / "fine.orc"
    pa_orc.write_table(pa.table({"a": list(range(100))}), str(fine))
    files = [BaseFile(k, k) for k in SELFTESTS] + [BaseFile("fine", str(fine))]
    jobs: list[Job] = [(len(SELFTESTS), 100, "random")]
    for i in range(len(SELFTESTS)):
        jobs += [(i, 1, "random"), (len(SELFTESTS), 101 + i, "cut")]
    report = run_mutants(files, jobs, workers=2, timeout=10.0, batch=4)
    status = {(o.file, o.seed): o.status for o in report.outcomes}
    assert len(status) == len(jobs)
    assert {k: v for k, v in status.items() if k[0] != "fine"} == {
        ("!hang", 1): "hang", ("!segfault", 1): "crash", ("!alloc", 1): "bad",
        ("!leak", 1): "bad", ("!net", 1): "net", ("!invalid", 1): "invalid"}
    assert {v for k, v in status.items() if k[0] == "fine"} <= {"ok", "aorc"}
    crash = next(o for o in report.outcomes if o.status == "crash")
    assert "exit code -11" in crash.detail
    alloc = next(o for o in report.outcomes if o.file == "!alloc")
    assert "MemoryError" in alloc.detail


def test_rebuilt_files_read_the_same(written: dict[str, list[BaseFile]]) -> None:
    """Re-assembling a file from its parts (every stripe and footer re-encoded) gives the same
    rows, so structural mutations damage only what they mean to."""
    for base in written["aorc"] + written["pyarrow"]:
        data = Path(base.path).read_bytes()
        model = parse_model(data)
        assert model is not None
        stripes = {i: copy.deepcopy(s) for i, s in enumerate(model.stripes)}
        rebuilt = build(model, stripes, footer_hook=lambda footer: None)
        assert rebuilt is not None and rebuilt != b""
        expected = pa_orc.ORCFile(pa.BufferReader(data)).read()
        got = pa_orc.ORCFile(pa.BufferReader(rebuilt)).read()
        rows = list(range(0, expected.num_rows, 7))  # from every stripe; to_pylist is slow
        assert got.num_rows == expected.num_rows
        assert _plain(got.take(rows).to_pylist()) == _plain(expected.take(rows).to_pylist())


def _plain(value: Any) -> Any:
    """``value`` with NaNs replaced by a marker, so that equal data compares equal."""
    if isinstance(value, float) and value != value:
        return "NaN"
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def test_mutants_are_deterministic_and_varied(written: dict[str, list[BaseFile]]) -> None:
    """The same seed gives the same mutant; different seeds reach every kind of mutation."""
    base = written["aorc"][1]
    data = Path(base.path).read_bytes()
    model = parse_model(data)
    first = [mutate(data, model, seed) for seed in range(200)]
    again = [mutate(data, model, seed) for seed in range(200)]
    assert first == again
    kinds = {desc.split(":")[0] for _, desc in first}
    assert kinds == {"flip", "overwrite", "truncate", "splice", "chunk_header", "tail_message",
                     "stripe_footer", "stream_content", "types", "stripe_info", "codec",
                     "swap_streams"}
    assert all(mutant != data for mutant, _ in first)
