"""aorc.errors.warn and deferred_warnings: warnings raised where no frame is the user's (aorc's
event loop thread, the pool's worker threads) are held and issued from the caller's thread,
naming the caller's line."""

from __future__ import annotations

import asyncio
import contextvars
import os
import threading
import warnings
from pathlib import Path

import pyarrow as pa
import pyarrow.orc as po
import pytest

import aorc
import aorc.sync
from aorc.errors import deferred_warnings, warn
from aorc.io import registry


def _line() -> int:
    """The line number of the caller (the line a warning should name)."""
    import sys

    return sys._getframe(1).f_lineno


def test_warn_names_the_callers_line() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warn("direct"); line = _line()  # noqa: E702 - the same line on purpose
    assert [(w.filename, w.lineno) for w in caught] == [(__file__, line)]


def test_held_until_the_block_ends_then_named_at_the_callers_line() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with deferred_warnings():
            warn("first")
            warn("second", DeprecationWarning)
            assert caught == []  # held
        line = _line() - 1  # the with statement's last line issues them
    assert [(str(w.message), w.category) for w in caught] == [
        ("first", aorc.AorcWarning), ("second", DeprecationWarning)]
    assert {w.filename for w in caught} == {__file__}
    assert all(abs(w.lineno - line) <= 4 for w in caught), [w.lineno for w in caught]


def test_a_failing_block_drops_its_warnings() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(KeyError), deferred_warnings():
            warn("lost")
            raise KeyError("the failure is what the caller sees")
    assert caught == []


def test_blocks_nest_and_worker_threads_reach_the_block() -> None:
    seen: list[str] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with deferred_warnings():
            with deferred_warnings():
                context = contextvars.copy_context()
                thread = threading.Thread(target=context.run, args=(warn, "from a thread"))
                thread.start()
                thread.join()
            seen = [str(w.message) for w in caught]  # handed to the outer block, not issued
        assert seen == []
    assert [str(w.message) for w in caught] == ["from a thread"]
    assert caught[0].filename == __file__


def test_sync_run_issues_the_loops_warnings_from_the_callers_thread(tmp_path: Path) -> None:
    # A local listing warns about the link it skips from aorc's code on aorc's loop thread
    # (aorc.sync), where no frame is the caller's.
    po.write_table(pa.table({"v": [1]}), str(tmp_path / "a.orc"))
    os.symlink(tmp_path / "a.orc", tmp_path / "link.orc")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        found = aorc.sync.run(registry.list_files(str(tmp_path)))
    assert [Path(f.path).name for f in found] == ["a.orc"]
    assert ["symbolic link" in str(w.message) for w in caught] == [True]
    assert caught[0].filename == __file__


def test_warnings_as_errors_raise_in_the_callers_thread() -> None:
    async def on_the_loop() -> int:
        warn("strict")
        return 1

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(aorc.AorcWarning, match="strict"):
            aorc.sync.run(on_the_loop())
        with pytest.raises(aorc.AorcWarning, match="strict"):
            asyncio.run(on_the_loop())  # not deferred: raised where it is issued
