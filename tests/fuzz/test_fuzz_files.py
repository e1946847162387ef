"""Fuzzing the whole reader with damaged real files (issue 2, item 7; issue 20).

Valid ORC files (:mod:`fuzz.sources`: the conformance corpus, files aorc writes with every
codec, row indexes, bloom filters and several stripes, and files pyarrow.orc writes with every
codec, nested types, format 0.11 and 0.12) are damaged by :mod:`fuzz.mutations` (bit flips and
byte overwrites weighted towards the tail, truncations at every region boundary, absurd chunk
headers, extreme values in every protobuf field of the tail, the stripe footers and the row
indexes, type trees with cycles, stripes outside the file, damaged decompressed stream bytes)
and read through the public API (``read_table``; ``open_reader`` with every file property,
``iter_batches`` with projections, ``filters=``, stripe footers) in child processes watched by
:mod:`fuzz.runner`. For every input the read must end in valid Arrow data or an ``AorcError``
made where the damage was found, within 10 s of CPU time and a peak RSS of 1 GiB (see
:class:`fuzz.runner.Bounds`): a hang, a crash, a MemoryError, any other exception, a stray
IndexError/KeyError/... caught only by the reader's last-resort net, or a breach of a bound
fails the test, printing the file, seed, mutation and the command that replays it
(``python tests/fuzz/runner.py FILE SEED KIND``).

The run is deterministic: a fixed number of mutants with fixed seeds, about two minutes on
CI's 2-core machine. ``AORC_FUZZ_ITERATIONS`` sets the number of mutants (default
:data:`ITERATIONS`, split between the three sources); ``AORC_FUZZ_SEED`` shifts the seeds,
``AORC_FUZZ_WORKERS`` sets the number of child processes, ``AORC_FUZZ_CPU`` the CPU seconds
one mutant may take and ``AORC_FUZZ_TIMEOUT`` the wall-clock seconds after which a silent
child counts as hung. Longer runs, with the larger base files and atheris: ``nox -s fuzz``
(:mod:`fuzz.cli`).
"""

from __future__ import annotations

import copy
import os
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.orc as pa_orc
import pytest
from helpers.corpus import CORPUS_ABSENT

from fuzz.model import build, parse_model
from fuzz.mutations import NAMED, mutate
from fuzz.runner import MODES, SELFTESTS, BaseFile, Bounds, FuzzReport, Job, run_mutants
from fuzz.sources import SHARES, base_files, corpus_files, jobs, write_base_files

#: Mutants in a default run: about two minutes on CI's 2-core machine (see README, Testing).
ITERATIONS = int(os.environ.get("AORC_FUZZ_ITERATIONS", "20000"))
SEED = int(os.environ.get("AORC_FUZZ_SEED", "0"))
WORKERS = int(os.environ.get("AORC_FUZZ_WORKERS", str(min(4, os.cpu_count() or 2))))
BOUNDS = Bounds(cpu=float(os.environ.get("AORC_FUZZ_CPU", "10")),
                timeout=float(os.environ.get("AORC_FUZZ_TIMEOUT", "120")))
#: The fuzz tests take time in proportion to the mutants: pytest-timeout's bound (900 s for
#: other tests, see pyproject.toml) grows by a generous second per mutant.
pytestmark = pytest.mark.timeout(900 + ITERATIONS)


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[BaseFile]]:
    """Files written by aorc and by pyarrow.orc to mutate."""
    return base_files(write_base_files(tmp_path_factory.mktemp("fuzz")))


def _corpus_files() -> list[BaseFile]:
    files = corpus_files()
    if not files:
        pytest.skip(CORPUS_ABSENT)
    return files


# =========================================================================== running

def _check(report: FuzzReport) -> None:
    print(report.summary())
    failures = report.failures
    if failures:
        shown = "\n\n".join(str(f) for f in failures[:12])
        pytest.fail(f"{len(failures)} of {len(report.outcomes)} mutants were not handled "
                    f"({report.summary()}):\n\n{shown}", pytrace=False)


def _fuzz(files: list[BaseFile], source: str, salt: int) -> None:
    count = max(1, round(ITERATIONS * SHARES[source]))
    todo = jobs(files, count, SEED * 1_000_003 + salt)
    report = run_mutants(files, todo, workers=WORKERS, bounds=BOUNDS,
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
    dictionary sizes of 2**31, huge chunk headers, ...; see ``fuzz.mutations.NAMED``), applied
    to compressed and uncompressed files of both writers and read every way."""
    names = {"aorc-zstd.orc", "aorc-none.orc", "pyarrow-zlib-0.12.orc", "pyarrow-lz4-0.11.orc"}
    files = [b for b in written["aorc"] + written["pyarrow"] if b.name in names]
    assert len(files) == len(names)
    todo: list[Job] = [(fi, k, "named") for fi in range(len(files))
                       for k in range(len(NAMED) * len(MODES))]
    report = run_mutants(files, todo, workers=WORKERS, bounds=BOUNDS,
                         batch=len(todo) // WORKERS + 1)
    assert len(report.outcomes) == len(todo)
    _check(report)


# =========================================================================== the harness itself

def test_harness_reports_every_kind_of_failure(tmp_path: Path) -> None:
    """Hangs, segfaults, huge allocations, stray exceptions, invalid Arrow data, a spinning
    read (stopped by RLIMIT_CPU) and one over the RSS bound are each caught and blamed on the
    right job, and the jobs after them still run."""
    fine = tmp_path / "fine.orc"
    pa_orc.write_table(pa.table({"a": list(range(100))}), str(fine))
    files = [BaseFile(k, k) for k in SELFTESTS] + [BaseFile("fine", str(fine))]
    todo: list[Job] = [(len(SELFTESTS), 100, "random")]
    for i in range(len(SELFTESTS)):
        todo += [(i, 1, "random"), (len(SELFTESTS), 101 + i, "cut")]
    bounds = Bounds(cpu=2.0, rss=512 << 20, timeout=10.0)
    report = run_mutants(files, todo, workers=2, bounds=bounds, batch=4)
    status = {(o.file, o.seed): o.status for o in report.outcomes}
    assert len(status) == len(todo)
    assert {k: v for k, v in status.items() if k[0] != "fine"} == {
        ("!hang", 1): "hang", ("!segfault", 1): "crash", ("!alloc", 1): "bad",
        ("!leak", 1): "bad", ("!net", 1): "net", ("!invalid", 1): "invalid",
        ("!spin", 1): "slow", ("!bloat", 1): "memory"}
    assert {v for k, v in status.items() if k[0] == "fine"} <= {"ok", "aorc"}
    crash = next(o for o in report.outcomes if o.status == "crash")
    assert "exit code -11" in crash.detail
    alloc = next(o for o in report.outcomes if o.file == "!alloc")
    assert "MemoryError" in alloc.detail
    spin = next(o for o in report.outcomes if o.file == "!spin")
    assert "RLIMIT_CPU" in spin.detail
    assert "replay: python tests/fuzz/runner.py" in str(spin)


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
