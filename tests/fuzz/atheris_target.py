"""aorc's reader as an atheris (libFuzzer) target: coverage-guided fuzzing of whole files.

Run by ``tests/fuzz/cli.py --engine atheris`` (``nox -s fuzz``), or by hand::

    python tests/fuzz/atheris_target.py -max_total_time=600 -rss_limit_mb=1536 \\
        -artifact_prefix=findings/ SEEDS_DIR

Every input is read as an ORC file through the public API (``open_reader`` and every file
property, ``read``, ``iter_batches`` of 1,000 rows up to 20 batches, each stripe footer); aorc's
Python modules are instrumented for coverage (the Cython kernels are not). An input passes
when the reads return valid Arrow data or raise an ``AorcError`` made where the damage was
found (not by the reader's last-resort net), within 10 s of CPU time; anything else raises,
and libFuzzer saves the input (``crash-<sha1>`` under ``-artifact_prefix``) and stops. Memory
is bounded by libFuzzer's ``-rss_limit_mb`` (the whole process, atheris included) and the
address space by ``RLIMIT_AS`` (2 GiB above the process's size at start). Replay a
saved input with ``python tests/fuzz/atheris_target.py crash-<sha1>``.
"""

from __future__ import annotations

import sys
from pathlib import Path

if __name__ == "__main__":  # make `fuzz` and `aorc` importable
    sys.path[:0] = [str(Path(__file__).resolve().parents[1]),
                    str(Path(__file__).resolve().parents[2])]

import asyncio  # noqa: E402
import contextlib  # noqa: E402
from typing import Any  # noqa: E402

import atheris  # noqa: E402

with atheris.instrument_imports(include=["aorc"]):
    import aorc

from fuzz import limits  # noqa: E402
from fuzz.runner import classify_exception, validate  # noqa: E402

__all__ = ["CPU_BOUND", "BoundExceeded", "Finding", "main", "test_one_input"]

#: CPU seconds one input may take.
CPU_BOUND = 10.0
_LOOP = asyncio.new_event_loop()


class BoundExceeded(Exception):
    """An input took more CPU time than :data:`CPU_BOUND`."""


class Finding(Exception):
    """An input escaped ``aorc.errors`` (or only the last-resort net caught it)."""


async def _read(data: bytes) -> None:
    async with aorc.open_reader(data) as reader:
        for name in ("schema", "orc_type", "num_rows", "num_stripes", "statistics", "metadata",
                     "compression", "writer", "file_version", "compression_block_size"):
            repr(getattr(reader, name))
        for i in range(min(reader.num_stripes, 8)):
            await reader.read_stripe_footer(i)
        validate(await reader.read())
        async with contextlib.aclosing(reader.iter_batches(batch_size=1000)) as batches:
            count = 0
            async for batch in batches:
                validate(batch)
                count += 1
                if count == 20:
                    break


def test_one_input(data: bytes) -> None:
    """Read ``data`` every way; raise :class:`Finding` or :class:`BoundExceeded` on failure."""
    started = limits.cpu_seconds()
    try:
        _LOOP.run_until_complete(_read(data))
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:  # noqa: BLE001 - everything is classified
        status, _ = classify_exception(exc)
        if status != "aorc":
            raise Finding(f"[{status}] {type(exc).__name__}: {str(exc)[:500]}") from exc
    used = limits.cpu_seconds() - started
    if used > CPU_BOUND:
        raise BoundExceeded(f"{used:.1f}s of CPU time, more than {CPU_BOUND:.0f}s")


def main(argv: list[str] | None = None) -> None:
    """Start libFuzzer with ``argv`` (its options and seed folders or files)."""
    args: Any = list(sys.argv if argv is None else argv)
    # a huge allocation fails (MemoryError: a finding) instead of waking the OOM killer
    # before libFuzzer's -rss_limit_mb check (once a second) sees it
    limits.cap_memory(limits.memory("VmSize") + (2 << 30))
    atheris.Setup(args, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
