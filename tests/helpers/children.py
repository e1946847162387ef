"""Child processes a test talks to over pipes (it reads what they print, kills them by
event), reaped whatever the test's outcome."""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Iterator, Mapping, Sequence

__all__ = ["talking_children"]


@contextlib.contextmanager
def talking_children(commands: Sequence[Sequence[str]], env: Mapping[str, str]
                     ) -> Iterator[list[subprocess.Popen[str]]]:
    """Start each command with text pipes on its stdin and stdout; on exit, kill those
    still running, wait for every one and close their pipes."""
    children = [subprocess.Popen(list(command), env=dict(env), stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, text=True) for command in commands]
    try:
        yield children
    finally:
        for child in children:
            if child.poll() is None:
                child.kill()
            child.wait()
            child.stdout.close()  # type: ignore[union-attr]
            child.stdin.close()  # type: ignore[union-attr]
