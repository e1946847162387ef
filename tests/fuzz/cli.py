"""Long fuzzing runs (``nox -s fuzz``): the mutation fuzzer for a count or a time, and atheris.

::

    python tests/fuzz/cli.py --seconds 1800            # both engines, 15 minutes each
    python tests/fuzz/cli.py --count 100000 --engine mutation --seed 7
    nox -s fuzz -- --seconds 3600 --workers 4

``--engine mutation`` runs :mod:`fuzz.runner` over every base file (:mod:`fuzz.sources`: the
conformance corpus and the files aorc and pyarrow.orc write, large ones included) in rounds
of seeded mutants (the CI run's sources and kinds, seeds from ``--seed`` and the round) until
``--count`` mutants or ``--seconds`` have passed, with the CI run's bounds (10 s of CPU time
and 1 GiB peak RSS per input). ``--engine atheris`` runs :mod:`fuzz.atheris_target` (coverage
guided, seeded with the same files) for ``--seconds`` or ``--count`` inputs, where atheris is
installed. ``both`` (the default) splits ``--seconds`` between them.

Everything goes to ``--workdir`` (a new temporary folder by default): the base files, and for
each finding the mutant's bytes under ``findings/`` with the command that replays it. The exit
code is 1 when something was found.
"""

from __future__ import annotations

import argparse
import importlib.util
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

if __name__ == "__main__":  # make `fuzz`, `helpers` and `aorc` importable
    sys.path[:0] = [str(Path(__file__).resolve().parents[1]),
                    str(Path(__file__).resolve().parents[2])]

from fuzz.model import parse_model  # noqa: E402
from fuzz.runner import BaseFile, Bounds, FuzzReport, Outcome, make_mutant, run_mutants  # noqa: E402
from fuzz.sources import SHARES, base_files, corpus_files, jobs, write_base_files  # noqa: E402

__all__ = ["main", "run_atheris", "run_mutation"]

_HERE = Path(__file__).resolve().parent
#: Mutants per source and round (a round's seeds follow from --seed and its number).
ROUND = 1000
#: Seed files of atheris: those up to this size (libFuzzer mutates small inputs faster).
MAX_SEED_BYTES = 256 * 1024


def _save(finding: Outcome, files: list[BaseFile], folder: Path) -> str:
    """Write the mutant of a finding under ``folder``; its description and replay command."""
    folder.mkdir(parents=True, exist_ok=True)
    base = next(f for f in files if f.path == finding.path)
    data = Path(base.path).read_bytes()
    mutant, _ = make_mutant(data, parse_model(data), finding.seed, finding.kind)
    target = folder / f"{base.name.replace('/', '_')}-{finding.seed}-{finding.kind}.orc"
    target.write_bytes(mutant)
    return f"{finding}\n    mutant saved: {target}"


def run_mutation(workdir: Path, *, count: int | None, seconds: float | None, seed: int,
                 workers: int) -> int:
    """The mutation fuzzer in rounds until ``count`` mutants or ``seconds``; the number of
    findings."""
    written = base_files(write_base_files(_fresh(workdir / "base")), everything=True)
    sources = {"corpus": corpus_files(everything=True), **written}
    if not sources["corpus"]:
        print("the conformance corpus (../shared/orc-conformance, or AORC_ORC_CONFORMANCE) is "
              "absent: written files only", flush=True)
    sources = {k: v for k, v in sources.items() if v}
    started, done, found, cpu = time.monotonic(), 0, 0, 0.0
    round_no = 0
    while True:
        if count is not None and done >= count:
            break
        if seconds is not None and time.monotonic() - started >= seconds:
            break
        for salt, (source, files) in enumerate(sources.items(), start=1):
            n = max(1, round(ROUND * SHARES[source]))
            if count is not None:
                n = min(n, count - done)
            if n <= 0:
                break
            todo = jobs(files, n, (seed * 1_000_003 + round_no) * 10 + salt)
            report: FuzzReport = run_mutants(files, todo, workers=workers, bounds=Bounds())
            done += len(report.outcomes)
            cpu += sum(o.cpu for o in report.outcomes)
            print(f"round {round_no} {source}: {report.summary()}", flush=True)
            for finding in report.failures:
                found += 1
                print(_save(finding, files, workdir / "findings"), flush=True)
        round_no += 1
    print(f"mutation fuzzer: {done} inputs in {time.monotonic() - started:.0f}s "
          f"({cpu:.0f}s CPU in the readers), {found} findings", flush=True)
    return found


def run_atheris(workdir: Path, *, count: int | None, seconds: float | None, seed: int) -> int:
    """atheris for ``seconds`` or ``count`` inputs (1 when it is not installed: says so);
    the number of findings (0 or 1: libFuzzer stops at the first)."""
    if importlib.util.find_spec("atheris") is None:
        print("atheris is not installed here (pip install atheris): skipped", flush=True)
        return 0
    seeds = _fresh(workdir / "seeds")
    written = write_base_files(_fresh(workdir / "atheris-base"))
    paths = [p for files in written.values() for p in files]
    paths += [Path(f.path) for f in corpus_files(everything=True)]
    for i, path in enumerate(paths):
        if path.stat().st_size <= MAX_SEED_BYTES:
            shutil.copy(path, seeds / f"{i:03d}-{path.name.replace('/', '_')}")
    artifacts = workdir / "findings"
    artifacts.mkdir(parents=True, exist_ok=True)
    args = [sys.executable, str(_HERE / "atheris_target.py"), f"-seed={seed + 1}",
            "-rss_limit_mb=1536", "-timeout=120", f"-max_len={MAX_SEED_BYTES}",
            f"-artifact_prefix={artifacts}/", "-print_final_stats=1"]
    if seconds is not None:
        args.append(f"-max_total_time={max(1, int(seconds))}")
    if count is not None:
        args.append(f"-runs={count}")
    # libFuzzer adds what it finds interesting to the first folder: a copy of the seeds
    args += [str(_fresh(workdir / "atheris-corpus")), str(seeds)]
    started = time.monotonic()
    code = subprocess.call(args)
    print(f"atheris: exit code {code} after {time.monotonic() - started:.0f}s "
          f"(inputs: see stat::number_of_executed_units above)", flush=True)
    if code != 0:
        crashes = sorted(artifacts.glob("*-*"))
        print("atheris finding(s): " + ", ".join(map(str, crashes)) + "\n    replay: python "
              "tests/fuzz/atheris_target.py FILE", flush=True)
        return 1
    return 0


def _fresh(folder: Path) -> Path:
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    return folder


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, help="time budget (both engines together)")
    parser.add_argument("--count", type=int, help="inputs per engine")
    parser.add_argument("--seed", type=int, default=1, help="seed of the run (default 1)")
    parser.add_argument("--workers", type=int, default=2, help="mutation fuzzer's children")
    parser.add_argument("--engine", choices=("mutation", "atheris", "both"), default="both")
    parser.add_argument("--workdir", type=Path, help="where files and findings go")
    args = parser.parse_args(argv)
    if args.seconds is None and args.count is None:
        args.seconds = 600.0
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="aorc-fuzz-"))
    workdir.mkdir(parents=True, exist_ok=True)
    print(f"working in {workdir}", flush=True)
    both = args.engine == "both"
    share = args.seconds / 2 if both and args.seconds is not None else args.seconds
    found = 0
    if args.engine in ("mutation", "both"):
        found += run_mutation(workdir, count=args.count, seconds=share, seed=args.seed,
                              workers=args.workers)
    if args.engine in ("atheris", "both"):
        found += run_atheris(workdir, count=args.count, seconds=share, seed=args.seed)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
