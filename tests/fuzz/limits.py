"""Measuring and capping a child process's memory and CPU time (Linux), for the fuzz harness
(:mod:`fuzz.runner`) and the hostile-input regressions (:mod:`fuzz.watch`).

Bounds are checked the way the house rules ask: in a child process, on its peak resident set
(``VmHWM`` of ``/proc/self/status``, reset before each input through ``/proc/self/clear_refs``)
and on its CPU time (user + system, every thread), never on the wall clock, which a loaded
machine stretches. Two hard limits keep a runaway input from taking the machine down:

* ``RLIMIT_AS`` caps the address space, so a huge allocation fails with ``MemoryError``
  instead of swapping or waking the OOM killer;
* ``RLIMIT_CPU`` stops a child that spins: the kernel sends ``SIGXCPU`` (exit code -24) when
  the soft limit is reached, which the parent reports as a CPU-bound breach.
"""

from __future__ import annotations

import os
import resource
import signal

__all__ = ["ACCEPTABLE", "IDLE_CPU", "SIGXCPU_EXIT", "cap_cpu", "cap_memory",
           "child_cpu_seconds", "cpu_seconds", "judge", "memory", "reset_peak"]

#: Outcomes a read may end with: a result, or an ``aorc.errors`` exception.
ACCEPTABLE = frozenset({"ok", "aorc"})

#: CPU seconds under which a silent child counts as blocked over its parent's hang timeout: a
#: blocked interpreter uses next to none, a busy one far more even on a machine loaded 50
#: times over (a child busy all along is stopped by its RLIMIT_CPU instead).
IDLE_CPU = 0.1
#: The exit code of a child stopped by its RLIMIT_CPU soft limit.
SIGXCPU_EXIT = -int(signal.SIGXCPU)


def memory(field: str) -> int:
    """A ``/proc/self/status`` memory figure (``VmRSS``, ``VmHWM``, ``VmSize``) in bytes; 0
    where there is none."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def reset_peak() -> int:
    """Reset the resident-set high-water mark; the resident size now, or 0 when the mark
    cannot be reset (then ``VmHWM`` is the peak since the process started)."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        return 0
    return memory("VmRSS")


def cap_memory(limit: int) -> int:
    """Cap the address space at ``limit`` bytes, or at the process's size now plus 1 GiB
    when that is more (interpreters with pyarrow loaded reserve a lot they never touch);
    returns the cap."""
    cap = max(limit, memory("VmSize") + (1 << 30))
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    return cap


def cpu_seconds() -> float:
    """CPU time this process used so far, user and system, all threads."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def child_cpu_seconds(pid: int) -> float:
    """CPU time another process (all its threads) used so far; 0 when it cannot be read.

    A parent that hears nothing from a child for a while asks this: a child still using CPU
    is slow (its ``RLIMIT_CPU`` will stop it), one that used less than :data:`IDLE_CPU` is
    blocked (a hang).
    """
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rpartition(")")[2].split()
    except OSError:
        return 0.0
    # after the command: state is field 3 of the man page, utime 14 and stime 15
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cap_cpu(seconds: float) -> None:
    """Let this process use ``seconds`` more CPU time (at least one second) before the kernel
    stops it with ``SIGXCPU``; the hard limit stays where it is. No core file is written."""
    resource.setrlimit(resource.RLIMIT_CORE, (0, resource.getrlimit(resource.RLIMIT_CORE)[1]))
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    soft = int(cpu_seconds() + max(1.0, seconds)) + 1
    if hard != resource.RLIM_INFINITY:
        soft = min(soft, hard)
    resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))


def judge(status: str, detail: str, cpu: float, cpu_bound: float, rss: int, rss_bound: int,
          sep: str = "\n") -> tuple[str, str]:
    """An acceptable outcome that took more than ``cpu_bound`` CPU seconds is ``slow``, one
    whose peak RSS passed ``rss_bound`` bytes is ``memory`` (the bound said before
    ``detail``, after ``sep``); any other outcome stays as it is."""
    if status in ACCEPTABLE and cpu > cpu_bound:
        return "slow", f"{cpu:.1f}s of CPU time, more than {cpu_bound:.0f}s{sep}{detail}"
    if status in ACCEPTABLE and rss > rss_bound:
        return "memory", (f"peak RSS {rss / 2**20:.0f} MiB, more than "
                          f"{rss_bound / 2**20:.0f} MiB{sep}{detail}")
    return status, detail
