"""A watchdog for the Kafka tests: a test still running after :data:`WATCHDOG` seconds (each
takes well under a minute) gets every asyncio task's stack written to stderr and its tasks
cancelled, so that a hang fails at once and tells where it waited (rather than at
pytest-timeout's limit, with the threads' stacks only)."""

from __future__ import annotations

import asyncio
import sys
import threading
from collections.abc import AsyncIterator

import pytest

WATCHDOG = 180.0


def _dump_and_cancel(name: str) -> None:
    sys.stderr.write(f"\n=== {name} still running after {WATCHDOG:.0f} s: its tasks ===\n")
    for task in asyncio.all_tasks():
        sys.stderr.write(f"--- {task!r}\n")
        task.print_stack(file=sys.stderr)
    for task in asyncio.all_tasks():
        task.cancel()


@pytest.fixture(autouse=True)
async def asyncio_watchdog(request: pytest.FixtureRequest) -> AsyncIterator[None]:
    """Dump and cancel the tasks of a test that hangs (see the module docstring)."""
    loop = asyncio.get_running_loop()
    timer = threading.Timer(WATCHDOG, loop.call_soon_threadsafe,
                            (_dump_and_cancel, request.node.name))
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
