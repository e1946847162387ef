"""Source text shared by the scripts that tests run in fresh child processes
(``python -c SCRIPT``): pasted into a script's text, so a child needs nothing on its path."""

from __future__ import annotations

__all__ = ["HWM"]

#: ``hwm()``: the child's own peak resident set in bytes (``VmHWM``; not ``ru_maxrss``, which
#: Linux carries over fork and exec).
HWM = '''
def hwm():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM")
'''
