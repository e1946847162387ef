"""Write issue 20's hostile inputs to a folder, and optionally measure how aorc reads them.

``python scripts/build_hostile.py OUT``: one file per case of ``tests/fuzz/hostile.py``
(``OUT/<case>.orc``: footer bombs, zstd chunks declaring 8 MiB, a 2^31-entry dictionary, a
valid file of 10^9 rows, LZO/Brotli empty chunks, decimal scales changing every row, 2,000
spellings of one time zone, type trees 256 levels deep), for manual runs
(``aorc OUT/footer-bomb-1e8.orc``, ``python -c "import pyarrow.orc ..."``).

``--measure`` also reads each file the way ``tests/fuzz/test_hostile.py`` does, in a child
process (``tests/fuzz/watch.py``), and prints a Markdown table: outcome, CPU time of the read,
peak RSS of the reading process. ``--cpu`` and ``--memory`` raise the child's CPU-time limit
and address-space cap to see how far an unfixed case goes (defaults: each case's bound, 4
GiB); ``--case NAME`` (repeatable) picks cases.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT)]

from fuzz.hostile import CASES  # noqa: E402
from fuzz.watch import watch  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="folder to write the files to")
    parser.add_argument("--measure", action="store_true", help="read each file and report")
    parser.add_argument("--case", action="append", choices=sorted(CASES), help="only these")
    parser.add_argument("--cpu", type=float, help="CPU seconds a read may take")
    parser.add_argument("--memory", type=float, default=4.0,
                        help="address-space cap of the reading process, GiB above its size")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    names = args.case or list(CASES)
    if args.measure:
        print("| case | class | bytes | read | outcome | CPU s | peak RSS MiB |")
        print("| --- | --- | ---: | --- | --- | ---: | ---: |")
    for name in names:
        case = CASES[name]
        path = args.out / f"{name}.orc"
        path.write_bytes(case.build())
        if not args.measure:
            print(f"{path} ({path.stat().st_size:,} bytes): {case.issue}")
            continue
        got = watch(name, path, cpu=args.cpu, memory=int(args.memory * 2**30))
        detail = got.detail.splitlines()[0][:160].replace("|", "/")
        print(f"| {name} | {case.issue} | {path.stat().st_size:,} | {case.read} | "
              f"{got.status}: {detail} | {got.cpu:.2f} | {got.rss_mb:.0f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
