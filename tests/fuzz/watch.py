"""Reading one hostile file (:mod:`fuzz.hostile`) in a watched child process, under bounds.

:func:`watch` starts a fresh Python (nothing inherited), which caps its address space
(``RLIMIT_AS``, 4 GiB above its size by default, so that a bomb fails fast instead of taking
the machine), imports aorc and pyarrow, allows itself the case's CPU time plus a second
(``RLIMIT_CPU``), resets its peak-RSS mark, reads the file the case's way, checks the result
and reports on stdout: the outcome, the CPU time of the read (user + system, all threads) and
the process's peak resident set (``VmHWM``, interpreter and libraries included). The reader's
zone is UTC (``TZ=UTC``).

Outcomes: ``ok`` (a correct result), ``aorc`` (an exception of ``aorc.errors``) -- both
acceptable when within the bounds -- and ``wrong`` (a result the case's check refuses),
``bad`` (any other exception: MemoryError, RecursionError, ...), ``slow`` (more CPU time than
the case allows, or stopped by ``RLIMIT_CPU``), ``memory`` (a peak RSS above the case's bound),
``hang`` (no answer while using next to no CPU, ``limits.IDLE_CPU``, in ``timeout`` seconds of
wall-clock time) and ``crash`` (the child died of a signal).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fuzz import limits

__all__ = ["ACCEPTABLE", "Watched", "child_main", "watch"]

_TESTS = Path(__file__).resolve().parents[1]
_REPO = _TESTS.parent
ACCEPTABLE = limits.ACCEPTABLE


@dataclass(frozen=True)
class Watched:
    """What reading one hostile file did (see the module docstring for ``status``)."""

    status: str
    detail: str
    cpu: float
    rss_mb: float
    seconds: float

    def __str__(self) -> str:
        return (f"{self.status} after {self.cpu:.2f}s CPU ({self.seconds:.1f}s wall), peak RSS "
                f"{self.rss_mb:.0f} MiB: {self.detail}")


def watch(case: str, path: str | Path, *, cpu: float | None = None, rss: int | None = None,
          memory: int = 4 << 30, timeout: float = 60.0) -> Watched:
    """Read the file of hostile case ``case`` at ``path`` in a child process.

    Args:
        case: a name of :data:`fuzz.hostile.CASES`.
        path: the file, as built by the case.
        cpu: CPU seconds allowed (default: the case's).
        rss: peak RSS allowed in bytes (default: the case's).
        memory: the address-space cap above the child's size after start-up.
        timeout: wall-clock seconds of silence with next to no CPU used (``limits.IDLE_CPU``)
            after which the child counts as hung.
    """
    payload = {"case": case, "path": str(path), "cpu": cpu, "rss": rss, "memory": memory}
    code = (f"import sys; sys.path[:0] = [{str(_TESTS)!r}, {str(_REPO)!r}]; "
            "from fuzz.watch import child_main; child_main()")
    env = dict(os.environ, TZ="UTC", PYTHONFAULTHANDLER="1")
    started = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    assert proc.stdin is not None
    proc.stdin.write(json.dumps(payload).encode())
    proc.stdin.close()
    seen, deadline = 0.0, time.monotonic() + max(timeout, 120.0)  # start-up included
    while proc.poll() is None:
        try:
            proc.wait(1.0)
        except subprocess.TimeoutExpired:
            if time.monotonic() < deadline:
                continue
            used = limits.child_cpu_seconds(proc.pid)
            if used - seen >= limits.IDLE_CPU:
                seen, deadline = used, time.monotonic() + timeout
                continue
            proc.kill()
            proc.wait()
            return Watched("hang", f"no answer and no CPU time used in {timeout:.0f}s",
                           0.0, 0.0, time.monotonic() - started)
    assert proc.stdout is not None and proc.stderr is not None
    out, err = proc.stdout.read().decode(), proc.stderr.read().decode(errors="replace")
    proc.stdout.close()
    proc.stderr.close()
    wall = time.monotonic() - started
    reports = [line[2:] for line in out.splitlines() if line.startswith("R ")]
    if proc.returncode == limits.SIGXCPU_EXIT:
        from fuzz.hostile import CASES
        bound = cpu if cpu is not None else CASES[case].cpu
        return Watched("slow", f"stopped by RLIMIT_CPU after more than {bound:.0f}s of CPU time",
                       bound, 0.0, wall)
    if not reports:
        return Watched("crash", f"exit code {proc.returncode}: ...{err[-1500:]}", 0.0, 0.0,
                       wall)
    report = json.loads(reports[-1])
    return Watched(report["status"], report["detail"], report["cpu"], report["rss_mb"], wall)


# =========================================================================== child side

async def _read(case: Any, path: str) -> Any:
    import contextlib

    import aorc
    if case.read == "read":
        return await aorc.read_table(path)
    async with aorc.open_reader(path) as reader:
        for name in ("schema", "orc_type", "num_rows", "num_stripes", "statistics", "metadata",
                     "compression", "writer", "file_version", "compression_block_size"):
            repr(getattr(reader, name))
        if case.read == "open":
            return None
        if case.read == "threads":
            return await reader.read(use_threads=4)
        if case.read == "stripe_footers":
            for i in range(reader.num_stripes):
                await reader.read_stripe_footer(i)
            return None
        batches = []
        async with contextlib.aclosing(reader.iter_batches(batch_size=65536)) as stream:
            async for batch in stream:
                batch.validate(full=True)
                batches.append(batch)
                if len(batches) == case.batches:
                    break
        return batches


def _classify(exc: BaseException) -> tuple[str, str]:
    import traceback

    from aorc.errors import AorcError
    if isinstance(exc, AorcError):
        return "aorc", f"{type(exc).__name__}: {str(exc)[:400]}"
    if isinstance(exc, AssertionError):
        return "wrong", f"{exc}"[:400]
    text = "".join(traceback.format_exception(exc))
    return "bad", f"{type(exc).__name__}: {str(exc)[:200]}\n{text[-1500:]}"


def child_main() -> None:
    """Entry point of the child: the job on stdin (JSON), one report line on stdout."""
    payload = json.loads(sys.stdin.buffer.read())
    limits.cap_memory(limits.memory("VmSize") + payload["memory"])
    import asyncio

    import pyarrow as pa  # noqa: F401 - loaded before measuring
    import pyarrow.compute as pc  # noqa: F401

    import aorc  # noqa: F401
    from fuzz.hostile import CASES
    case = CASES[payload["case"]]
    cpu_bound = payload["cpu"] if payload["cpu"] is not None else case.cpu
    rss_bound = payload["rss"] if payload["rss"] is not None else case.rss
    limits.cap_cpu(cpu_bound + 1)
    limits.reset_peak()
    cpu = limits.cpu_seconds()
    try:
        result = asyncio.run(_read(case, payload["path"]))
        if isinstance(result, pa.Table):
            result.validate(full=True)
        if case.check is not None and result is not None:
            case.check(result)
        status, detail = "ok", "a correct result"
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:  # noqa: BLE001 - everything is classified
        status, detail = _classify(exc)
    used = limits.cpu_seconds() - cpu
    rss = limits.memory("VmHWM")
    status, detail = limits.judge(status, detail, used, cpu_bound, rss, rss_bound, "; ")
    report = {"status": status, "detail": detail, "cpu": used, "rss_mb": rss / 2**20}
    sys.stdout.write(f"R {json.dumps(report)}\n")
    sys.stdout.flush()
