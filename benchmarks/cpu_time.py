"""CPU seconds spent by this process and its descendants (Spark's JVM, its Python workers),
from Linux's ``/proc``: on a machine shared with other work, wall times move by tens of percent
between runs, CPU seconds much less. A Python process's reaped children (forked workers)
count as its own; the JVM's do not (they are the Python processes, counted themselves), and
the CPU of a process that exits during the block is not counted.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

__all__ = ["cpu_seconds", "cpu_spent"]

_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _processes() -> dict[int, tuple[int, str, float]]:
    """pid -> (parent, name, CPU seconds) of every process (Linux ``/proc``); a Python
    process's reaped children (forked workers) count as its own, the JVM's do not."""
    out = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        name = stat[stat.index("(") + 1:stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2:].split()
        own = int(fields[11]) + int(fields[12])
        children = int(fields[13]) + int(fields[14])
        cpu = own + (children if name.startswith("python") else 0)
        out[int(entry)] = (int(fields[1]), name, cpu / _TICK)
    return out


def cpu_seconds() -> dict[int, tuple[str, float]]:
    """This process and its descendants: pid -> (``"jvm"`` or ``"py"``, CPU seconds)."""
    procs = _processes()
    children: dict[int, list[int]] = {}
    for pid, (parent, _, _) in procs.items():
        children.setdefault(parent, []).append(pid)
    out, stack = {}, [os.getpid()]
    while stack:
        pid = stack.pop()
        stack.extend(children.get(pid, []))
        _, name, cpu = procs.get(pid, (0, "", 0.0))
        out[pid] = ("jvm" if name == "java" else "py", cpu)
    return out


@contextlib.contextmanager
def cpu_spent() -> Iterator[dict[str, float]]:
    """The CPU seconds this process and its descendants spend in the block, as
    ``{"jvm": ..., "py": ...}`` (filled in when the block ends; zeros without ``/proc``)."""
    spent = {"jvm": 0.0, "py": 0.0}
    if not os.path.isdir("/proc"):
        yield spent
        return
    before = cpu_seconds()
    yield spent
    for pid, (kind, cpu) in cpu_seconds().items():
        spent[kind] += cpu - before.get(pid, (kind, 0.0))[1]
