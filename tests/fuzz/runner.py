"""Reading fuzzed ORC files in watched child processes (for ``tests/fuzz/test_fuzz_files.py``).

:func:`run_mutants` hands batches of jobs (base file, seed, kind; see :data:`Job`) to child
Python processes (started afresh, so nothing is inherited), ``workers`` at a time. A child caps
its address space with ``RLIMIT_AS`` (2 GiB by default) before importing anything, rebuilds
each mutant from its seed (:mod:`fuzz.mutations`), reads it through aorc's public API in one of
several ways, and reports the outcome on stdout, announcing each job before starting it. Each
job may use ``cpu`` seconds of CPU time (10 by default; ``RLIMIT_CPU`` stops the child a
second later) and raise the child's peak resident set (``VmHWM``, interpreter included) to at
most ``rss`` bytes (1 GiB). The parent watches the reports: a job whose child says
nothing and uses (next to) no CPU time for ``timeout`` seconds of wall-clock time
(120 by default) is a hang (the child is killed; a child busy all along is stopped by its CPU
limit instead, so a loaded machine makes nothing a hang), a child that dies is a crash (a
negative exit code is the signal, e.g. -11 for a segfault) blamed on the job it announced;
either way a new child carries on with the remaining jobs. See :mod:`fuzz.limits`.

Outcomes: ``ok`` (the read succeeded and every Arrow result passed ``validate(full=True)``,
strings checked as binary since ORC does not promise UTF-8), ``aorc`` (an AorcError) — both
acceptable when they kept within the bounds — and the failures ``net`` (a stray IndexError,
KeyError, ... that only the reader's last-resort safety net turned into CorruptFileError: the
module that raised it should have), ``bad`` (any other exception escaped, MemoryError
included), ``invalid`` (a read returned structurally invalid Arrow data), ``slow`` (more CPU
time than ``cpu``), ``memory`` (a peak resident set above ``rss``), ``hang`` and
``crash``.

Replay one mutant in-process, with the stacks of all threads if it hangs::

    .venv/bin/python tests/fuzz/runner.py FILE SEED [random|cut|named]
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

if __name__ == "__main__":  # run as a script (replay): make `fuzz` and `aorc` importable
    sys.path[:0] = [str(Path(__file__).resolve().parents[1]),
                    str(Path(__file__).resolve().parents[2])]

from fuzz import limits  # noqa: E402

__all__ = ["BaseFile", "Bounds", "FuzzReport", "InvalidResult", "Outcome", "child_main",
           "classify_exception", "describe", "make_mutant", "replay", "run_mutants", "validate"]

_TESTS = Path(__file__).resolve().parents[1]
_REPO = _TESTS.parent
ACCEPTABLE = limits.ACCEPTABLE
#: A job: (index of the base file, seed, kind), kind ``"random"`` (:func:`mutations.mutate`),
#: ``"cut"`` (:func:`mutations.truncate_at`, the seed picks the boundary) or ``"named"``
#: (:func:`mutations.named_mutant`, the seed picks the damage and the way of reading).
Job = tuple[int, int, str]
#: The ways a mutant is read (see :func:`_read`).
MODES = ("read_table", "batches", "filters", "footers")
#: Selftest "files": a child asked to read one misbehaves on purpose (the harness's own test).
SELFTESTS = ("!hang", "!segfault", "!alloc", "!leak", "!net", "!invalid", "!spin", "!bloat")


@dataclass(frozen=True)
class BaseFile:
    """A valid file to mutate, with a projection and a filter that suit it.

    Attributes:
        name: a short name for reports.
        path: where it is (or one of :data:`SELFTESTS`).
        columns: column paths (``OrcReader.column_names()``) to project from.
        filters: pyarrow-style filters valid for the file (one is picked per read).
    """

    name: str
    path: str
    columns: tuple[str, ...] = ()
    filters: tuple[tuple[tuple[str, str, Any], ...], ...] = ()


@dataclass(frozen=True)
class Bounds:
    """What one mutant may cost, and the child's hard limits.

    Attributes:
        cpu: CPU seconds (user + system, all threads) one read may take; ``RLIMIT_CPU`` stops
            the child a second later.
        rss: bytes the child's peak resident set (interpreter and libraries included) may
            reach while reading one mutant.
        memory: the child's address-space cap (``RLIMIT_AS``), at least this and at least the
            child's size after start-up plus 1 GiB.
        timeout: wall-clock seconds without an answer after which a child counts as hung: a
            backstop for a read blocked without using CPU, far above any CPU bound.
    """

    cpu: float = 10.0
    rss: int = 1 << 30
    memory: int = 2 << 30
    timeout: float = 120.0


@dataclass(frozen=True)
class Outcome:
    """What reading one mutant did."""

    file: str
    seed: int
    status: str
    kind: str = "random"
    mode: str = ""
    mutation: str = ""
    detail: str = ""
    path: str = ""
    seconds: float = 0.0
    cpu: float = 0.0
    peak_mb: float = 0.0
    rss_mb: float = 0.0

    def __str__(self) -> str:
        text = (f"[{self.status}] {self.file} seed={self.seed} kind={self.kind} "
                f"mode={self.mode} cpu={self.cpu:.2f}s peak_rss={self.rss_mb:.0f}MiB\n"
                f"    mutation: {self.mutation}\n    {self.detail}\n"
                f"    replay: {self.replay_command()}")
        return text.rstrip()

    def replay_command(self) -> str:
        """The command that reads this mutant again in-process (see :func:`replay`)."""
        return f"python tests/fuzz/runner.py {self.path or self.file} {self.seed} {self.kind}"


@dataclass
class FuzzReport:
    """All outcomes of a run, with counts."""

    outcomes: list[Outcome] = field(default_factory=list)
    seconds: float = 0.0
    bounds: Bounds = field(default_factory=lambda: Bounds())

    @property
    def failures(self) -> list[Outcome]:
        """Outcomes that are not acceptable."""
        return [o for o in self.outcomes if o.status not in ACCEPTABLE]

    def counts(self) -> Counter[str]:
        """How many mutants ended in each status."""
        return Counter(o.status for o in self.outcomes)

    def summary(self) -> str:
        """One line: totals per status, time, the mutants that took most CPU and memory."""
        slowest = max(self.outcomes, key=lambda o: o.cpu, default=None)
        slow = f", most CPU {slowest.cpu:.2f}s ({slowest.file} seed={slowest.seed})" \
            if slowest else ""
        big = max(self.outcomes, key=lambda o: o.rss_mb, default=None)
        peak = f", peak RSS {big.rss_mb:.0f} MiB ({big.file} seed={big.seed})" \
            if big else ""
        cpu = sum(o.cpu for o in self.outcomes)
        counts = ", ".join(f"{k}={v}" for k, v in sorted(self.counts().items()))
        return (f"{len(self.outcomes)} mutants in {self.seconds:.1f}s ({cpu:.1f}s CPU in the "
                f"readers): {counts}{slow}{peak}")


# =========================================================================== base files

Filter = tuple[tuple[str, str, Any], ...]


def _filters_for(table: Any, salt: int) -> tuple[Filter, ...]:
    """Filters on the top-level int, float, boolean and string columns (up to 8), each with
    a value the column holds, mostly ``==`` (which bloom filters can decide)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    out: list[Filter] = []
    for k in range(table.num_columns):
        name = table.column_names[k]
        t = table.column(name).type
        if not (pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_string(t)
                or pa.types.is_boolean(t)):
            continue
        values = pc.drop_null(table.column(name))
        if len(values) == 0:
            continue
        value = values[(len(values) * (salt + k) % 7) // 7].as_py()
        if isinstance(value, float) and value != value:
            continue
        op = "==" if pa.types.is_boolean(t) else ("==", "==", "<", ">=", "!=", "in")[(salt + k) % 6]
        out.append(((name, op, [value, value]),) if op == "in" else ((name, op, value),))
    return tuple(out[:8])


_TOO_BIG = object()


def describe(name: str, path: str | Path, max_rows: int | None = None,
             max_bytes: int | None = None) -> BaseFile | None:
    """A base file with its column paths and a filter on one of its columns.

    Returns ``None`` for a file of more than ``max_rows`` rows or ``max_bytes`` bytes (the
    choice depends on the file only, never on how long reading it takes).
    """
    import asyncio
    import zlib

    import aorc

    if max_bytes is not None and Path(path).stat().st_size > max_bytes:
        return None

    async def probe() -> tuple[list[str], Any]:
        async with aorc.open_reader(str(path)) as reader:
            names = [n for n in reader.column_names() if n]
            if max_rows is not None and reader.num_rows > max_rows:
                return names, _TOO_BIG
            try:
                return names, await reader.read()
            except aorc.AorcError:
                return names, None

    try:
        names, table = asyncio.run(probe())
    except aorc.AorcError:
        return BaseFile(name, str(path))
    if table is _TOO_BIG:
        return None
    salt = zlib.crc32(name.encode())
    filters = _filters_for(table, salt) if table is not None else ()
    return BaseFile(name, str(path), tuple(names), filters)


# =========================================================================== parent side

class _Child:
    """One child process working through a list of jobs."""

    def __init__(self, files: list[BaseFile], jobs: list[Job], bounds: Bounds) -> None:
        self.stderr = tempfile.TemporaryFile()
        self.tmp = tempfile.mkdtemp(prefix="aorc-fuzz-")  # for mutants read from a file
        code = (f"import sys; sys.path[:0] = [{str(_TESTS)!r}, {str(_REPO)!r}]; "
                "from fuzz import runner; runner.child_main()")
        env = dict(os.environ, MALLOC_ARENA_MAX="2", PYTHONFAULTHANDLER="1")
        self.proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self.stderr, env=env)
        assert self.proc.stdin is not None and self.proc.stdout is not None
        payload = {"files": [asdict(f) for f in files], "jobs": jobs,
                   "bounds": asdict(bounds), "tmp": self.tmp}
        self.proc.stdin.write(json.dumps(payload).encode())
        self.proc.stdin.close()
        self._buffer = b""
        self._selector = selectors.DefaultSelector()
        self._selector.register(self.proc.stdout, selectors.EVENT_READ)

    def line(self, timeout: float) -> bytes | None:
        """The next line, ``b""`` at end of output, ``None`` when the child used less than
        ``limits.IDLE_CPU`` in the last ``timeout`` seconds of wall-clock time (it is blocked:
        one busy all along is stopped by its ``RLIMIT_CPU`` instead, however loaded the
        machine is)."""
        deadline = time.monotonic() + timeout
        cpu = limits.child_cpu_seconds(self.proc.pid)
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not self._selector.select(left):
                now = limits.child_cpu_seconds(self.proc.pid)
                if now - cpu < limits.IDLE_CPU:
                    return None
                deadline, cpu = time.monotonic() + timeout, now
                continue
            assert self.proc.stdout is not None
            chunk = os.read(self.proc.stdout.fileno(), 65536)
            if not chunk:
                rest, self._buffer = self._buffer, b""
                return rest
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line + b"\n"

    def stop(self) -> str:
        """Kill the child (if still running); return the tail of its stderr."""
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self._selector.close()
        assert self.proc.stdout is not None
        self.proc.stdout.close()
        self.stderr.seek(0)
        text = self.stderr.read().decode(errors="replace")
        self.stderr.close()
        shutil.rmtree(self.tmp, ignore_errors=True)
        return text[-3000:]


def _work_through(files: list[BaseFile], jobs: list[Job], bounds: Bounds,
                  out: list[Outcome]) -> None:
    """Run ``jobs`` in children, a new one after each hang or crash."""
    pending = list(jobs)
    timeout = bounds.timeout
    while pending:
        child = _Child(files, pending, bounds)
        current: int | None = None
        done = 0
        startup = max(timeout, 120.0)
        while True:
            line = child.line(startup if current is None and done == 0 else timeout)
            if line is None or not line:
                hung = line is None
                stderr = child.stop()
                culprit = current if current is not None else done
                if culprit >= len(pending):  # finished everything, then exited
                    if child.proc.returncode != 0:
                        out.append(Outcome("(child)", -1, "crash", detail=f"exit code "
                                           f"{child.proc.returncode} after all jobs\n{stderr}"))
                    pending = []
                    break
                fi, seed, kind = pending[culprit]
                code = child.proc.returncode
                status = "hang" if hung else "slow" if code == limits.SIGXCPU_EXIT else "crash"
                detail = {"hang": f"no answer and no CPU time used in {timeout:.0f}s "
                                  "(wall clock)",
                          "slow": f"stopped by RLIMIT_CPU after more than {bounds.cpu:.0f}s "
                                  "of CPU time",
                          "crash": f"child died with exit code {code}"}[status]
                out.append(Outcome(files[fi].name, seed, status, kind=kind,
                                   path=files[fi].path,
                                   detail=f"{detail}\n    stderr: ...{stderr[-1500:]}"))
                pending = pending[culprit + 1:]
                break
            tag, _, rest = line.decode().partition(" ")
            if tag == "S":
                current = int(rest)
            elif tag == "R":
                index, _, payload = rest.partition(" ")
                report = json.loads(payload)
                fi, seed, kind = pending[int(index)]
                out.append(Outcome(files[fi].name, seed, kind=kind, path=files[fi].path,
                                   **report))
                current, done = None, int(index) + 1


def run_mutants(files: list[BaseFile], jobs: list[Job], *, workers: int = 2,
                bounds: Bounds | None = None, batch: int = 400) -> FuzzReport:
    """Read the mutant of each ``(file index, seed)`` job in watched child processes.

    Args:
        files: the base files.
        jobs: which file to mutate with which seed.
        workers: children running at once.
        bounds: CPU time, peak RSS, address space and hang timeout (:class:`Bounds`).
        batch: jobs per child process.

    Returns:
        The outcomes, in no particular order.
    """
    bounds = bounds or Bounds()
    started = time.monotonic()
    batches = [jobs[i:i + batch] for i in range(0, len(jobs), batch)]
    results: list[list[Outcome]] = [[] for _ in batches]
    lock = threading.Lock()
    queue = list(range(len(batches)))

    def worker() -> None:
        while True:
            with lock:
                if not queue:
                    return
                k = queue.pop(0)
            _work_through(files, batches[k], bounds, results[k])

    threads = [threading.Thread(target=worker) for _ in range(max(1, workers))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return FuzzReport([o for r in results for o in r], time.monotonic() - started, bounds)


# =========================================================================== child side

_NET_CAUSES = ("IndexError", "KeyError", "ValueError", "OverflowError", "error",
               "DecodeError", "TypeError")


def _from_safety_net(exc: BaseException) -> bool:
    """An AorcError made by the reader's last-resort conversion of a stray exception."""
    from aorc.errors import AorcError
    cause = exc.__cause__
    return (cause is not None and not isinstance(cause, AorcError)
            and type(cause).__name__ in _NET_CAUSES
            and f"{type(cause).__name__}: " in str(exc))


def _trace(exc: BaseException) -> str:
    import traceback
    frames = traceback.format_exception(exc)
    return "".join(frames)[-2500:]


def _touch(reader: Any) -> None:
    """Every piece of file information the reader offers."""
    for name in ("schema", "orc_type", "num_rows", "num_stripes", "statistics", "metadata",
                 "compression", "writer", "calendar", "file_version", "row_index_stride",
                 "compression_block_size"):
        repr(getattr(reader, name))
    reader.column_names()


def _pick_columns(rnd: Any, columns: list[str]) -> list[str] | None:
    if not columns or rnd.random() < 0.3:
        return None
    return list(rnd.sample(columns, rnd.randint(1, min(3, len(columns)))))


def _binary_strings(t: Any) -> Any:
    """``t`` with every string type (at any depth) replaced by binary (same layout)."""
    import pyarrow as pa
    if pa.types.is_string(t):
        return pa.binary()
    if pa.types.is_large_string(t):
        return pa.large_binary()
    if pa.types.is_struct(t):
        return pa.struct([f.with_type(_binary_strings(f.type)) for f in t])
    if pa.types.is_map(t):
        return pa.map_(t.key_field.with_type(_binary_strings(t.key_type)),
                       t.item_field.with_type(_binary_strings(t.item_type)))
    if pa.types.is_list(t):
        return pa.list_(t.value_field.with_type(_binary_strings(t.value_type)))
    if pa.types.is_union(t):
        fields = [f.with_type(_binary_strings(f.type)) for f in t]
        make = pa.dense_union if t.mode == "dense" else pa.sparse_union
        return make(fields, list(t.type_codes))
    return t


class InvalidResult(Exception):
    """A read returned Arrow data that fails validation."""


def validate(data: Any) -> None:
    """Full Arrow validation, except that strings need not be valid UTF-8: ORC strings are
    bytes that writers do not check (pyarrow.orc and ORC Java hand them out as they are),
    so every column is validated as a view with binary in place of string.

    Raises:
        InvalidResult: ``data`` is not valid.
    """
    import pyarrow as pa
    try:
        data.validate()
        if isinstance(data, pa.Array):
            columns = [data]
        elif isinstance(data, pa.RecordBatch):
            columns = data.columns
        else:
            columns = [chunk for column in data.columns for chunk in column.chunks]
        for column in columns:
            column.view(_binary_strings(column.type)).validate(full=True)
    except pa.ArrowInvalid as exc:
        raise InvalidResult(str(exc)) from exc


async def _read(source: Any, base: dict[str, Any], rnd: Any, mode: str) -> None:
    import aorc
    filters = [tuple(f) for f in rnd.choice(base["filters"])] if base["filters"] else None
    if mode == "read_table":
        validate(await aorc.read_table(source))
        return
    async with aorc.open_reader(source) as reader:
        _touch(reader)
        columns = _pick_columns(rnd, base["columns"])
        if mode == "batches":
            size = max(rnd.choice((1, 100, 999)), reader.num_rows // rnd.choice((1, 3, 10)))
            async with contextlib.aclosing(reader.iter_batches(columns=columns,
                                                               batch_size=size)) as batches:
                count = 0
                async for batch in batches:
                    validate(batch)
                    count += 1
                    if count == 50:  # enough; closing early is exercised too
                        break
        elif mode == "filters":
            validate(await reader.read(columns, filters=filters))
        else:  # "footers": stripe footers and stripe statistics
            repr(reader.stripes)
            for i in range(min(reader.num_stripes, 8)):
                await reader.read_stripe_footer(i)


def classify_exception(exc: BaseException) -> tuple[str, str]:
    """The outcome (``aorc``, ``net``, ``invalid`` or ``bad``; see the module docstring) of a
    read that raised ``exc``, and a description (a traceback but for AorcErrors)."""
    from aorc.errors import AorcError
    if isinstance(exc, AorcError):
        if _from_safety_net(exc):
            return "net", _trace(exc)
        return "aorc", f"{type(exc).__name__}: {str(exc)[:300]}"
    if isinstance(exc, InvalidResult):
        return "invalid", _trace(exc)
    return "bad", _trace(exc)


def _selftest(kind: str) -> None:
    """Misbehave as asked (the harness's own test)."""
    if kind == "!hang":
        time.sleep(3600)
    elif kind == "!segfault":
        import ctypes
        ctypes.string_at(0)
    elif kind == "!alloc":  # fits in this machine's memory, not under the cap
        bytearray(8 << 30)
    elif kind == "!spin":  # until RLIMIT_CPU stops the child
        while True:
            pass
    elif kind == "!bloat":  # 600 MiB resident, then a valid result
        held = bytearray(600 << 20)
        held[::4096] = b"\x01" * len(held[::4096])
    elif kind == "!leak":
        [][1]  # noqa: B018
    elif kind == "!net":
        from aorc.errors import CorruptFileError
        empty: dict[str, int] = {}
        try:
            empty["x"]  # noqa: B018
        except KeyError as exc:
            raise CorruptFileError(f"file, stripe 0: KeyError: {exc}") from exc
    elif kind == "!invalid":  # offsets that go backwards: only full validation sees it
        import struct

        import pyarrow as pa
        offsets = pa.py_buffer(struct.pack("<3i", 0, 2, 1))
        validate(pa.Array.from_buffers(pa.string(), 2, [None, offsets, pa.py_buffer(b"ab")]))


def make_mutant(data: bytes, model: Any, seed: int, kind: str) -> tuple[bytes, str]:
    """The mutant of ``data`` (taken apart as ``model``: :func:`fuzz.model.parse_model`) that
    ``(seed, kind)`` names, and what was changed."""
    from fuzz import mutations
    make = {"cut": mutations.truncate_at,
            "named": mutations.named_mutant}.get(kind, mutations.mutate)
    return make(data, model, seed)


def _run_job(base: dict[str, Any], seed: int, kind: str, loop: Any, cache: dict[str, Any],
             tmp: str, bounds: Bounds) -> dict[str, Any]:
    """Mutate ``base`` with ``seed`` and read the mutant within ``bounds``; the report of
    :class:`Outcome`."""
    import random

    from fuzz import model as fuzz_model
    from fuzz import mutations
    rnd = random.Random(seed ^ 0x5EED)
    mode, mutation = "", ""
    started, cpu, peak = time.perf_counter(), limits.cpu_seconds(), 0
    try:
        if base["path"] in SELFTESTS:
            mode = "selftest"
            _selftest(base["path"])
        else:
            if base["path"] not in cache:
                data = Path(base["path"]).read_bytes()
                cache[base["path"]] = (data, fuzz_model.parse_model(data))
            data, model = cache[base["path"]]
            mutant, mutation = make_mutant(data, model, seed, kind)
            if kind == "named":  # every damage read every way, in turn
                mode = MODES[seed // len(mutations.NAMED) % len(MODES)]
            else:
                mode = rnd.choices(MODES, (4, 3, 2 if base["filters"] else 0, 1))[0]
            source: Any = mutant
            if rnd.random() < 0.1:
                source = os.path.join(tmp, "mutant.orc")
                Path(source).write_bytes(mutant)
            del data, model  # only the read is measured
            started, cpu, peak = time.perf_counter(), limits.cpu_seconds(), limits.reset_peak()
            loop.run_until_complete(_read(source, base, rnd, mode))
        status, detail = "ok", ""
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:  # noqa: BLE001 - everything is classified
        status, detail = classify_exception(exc)
    used = limits.cpu_seconds() - cpu
    rss = limits.memory("VmHWM")
    status, detail = limits.judge(status, detail, used, bounds.cpu, rss, bounds.rss)
    return {"status": status, "mode": mode, "mutation": mutation[:300], "detail": detail,
            "seconds": time.perf_counter() - started, "cpu": used, "rss_mb": rss / 2**20,
            "peak_mb": max(0, rss - peak) / 2**20 if peak else 0.0}


def child_main() -> None:
    """Entry point of a child: jobs on stdin (JSON), reports on stdout."""
    payload = json.loads(sys.stdin.buffer.read())
    bounds = Bounds(**payload["bounds"])
    limits.cap_memory(bounds.memory)  # before aorc, numpy and pyarrow are imported
    import asyncio
    files = payload["files"]
    loop = asyncio.new_event_loop()
    cache: dict[str, Any] = {}
    try:
        for index, (fi, seed, kind) in enumerate(payload["jobs"]):
            sys.stdout.write(f"S {index}\n")
            sys.stdout.flush()
            limits.cap_cpu(bounds.cpu + 1)
            report = _run_job(files[fi], seed, kind, loop, cache, payload["tmp"], bounds)
            sys.stdout.write(f"R {index} {json.dumps(report)}\n")
            sys.stdout.flush()
    finally:
        loop.close()


def replay(path: str, seed: int, kind: str = "random", timeout: float = 120.0) -> dict[str, Any]:
    """Read one mutant in this process, as a child would (without its hard limits), printing
    what happens (with the stacks of every thread if it takes longer than ``timeout`` seconds
    of wall-clock time)."""
    import asyncio
    import faulthandler
    base = describe(Path(path).name, path)
    assert base is not None
    faulthandler.dump_traceback_later(timeout, exit=True)
    loop = asyncio.new_event_loop()
    tmp = tempfile.mkdtemp(prefix="aorc-fuzz-")
    try:
        report = _run_job(asdict(base), seed, kind, loop, {}, tmp, Bounds())
    finally:
        faulthandler.cancel_dump_traceback_later()
        loop.close()
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{report['status']} mode={report['mode']} in {report['seconds']:.2f}s "
          f"({report['cpu']:.2f}s CPU, peak RSS {report['rss_mb']:.0f} MiB)\n"
          f"mutation: {report['mutation']}\n{report['detail']}")
    return report


if __name__ == "__main__":
    replay(sys.argv[1], int(sys.argv[2]), sys.argv[3] if len(sys.argv) > 3 else "random")
