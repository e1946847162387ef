"""Progress hooks (``aorc.progress``): write_dataset, read_dataset, Dataset.read and convert
report every unit of work once, with the right total, to a callable or a tqdm-like bar; the
CLI's bar draws its final line once."""

from __future__ import annotations

import io
import pathlib
from typing import Any

import pyarrow as pa
import pyarrow.csv as pacsv
import pytest

import aorc
from aorc.cli.convert import Progress, convert
from aorc.progress import ProgressEvent, ProgressTracker, tracker


class Bar:
    """A minimal tqdm-compatible bar (``update``, ``total``, ``refresh``)."""

    def __init__(self) -> None:
        self.total: int | None = None
        self.n = 0
        self.updates: list[int] = []
        self.refreshed = 0

    def update(self, n: int) -> None:
        self.n += n
        self.updates.append(n)

    def refresh(self) -> None:
        self.refreshed += 1


def _table(n: int = 1_200) -> pa.Table:
    return pa.table({"id": pa.array(range(n), pa.int64()),
                     "day": pa.array([f"d{i % 4}" for i in range(n)]),
                     "v": pa.array([float(i) / 3 for i in range(n)])})


def _check_events(events: list[ProgressEvent], operation: str, unit: str, total: int) -> None:
    assert events, "the hook was never called"
    assert {e.operation for e in events} == {operation}
    assert {e.unit for e in events} == {unit}
    assert all(e.total == total for e in events)
    assert all(e.delta > 0 for e in events)
    assert [e.done for e in events] == sorted(e.done for e in events)
    assert sum(e.delta for e in events) == events[-1].done == total


def test_tracker_reports_to_a_callable() -> None:
    events: list[ProgressEvent] = []
    t = ProgressTracker(events.append, "op", "rows", total=10)
    t.advance(3)
    t.advance(0)  # nothing done: no event
    t.advance(7)
    assert events == [ProgressEvent("op", "rows", 3, 10, 3), ProgressEvent("op", "rows", 10, 10, 7)]


def test_tracker_drives_a_tqdm_like_bar() -> None:
    bar = Bar()
    t = ProgressTracker(bar, "op", "rows", total=5)
    assert bar.total == 5 and bar.refreshed == 1
    t.advance(2)
    t.advance(3)
    assert bar.updates == [2, 3] and bar.n == 5
    given = Bar()
    given.total = 99  # a total the caller set is kept
    ProgressTracker(given, "op", "rows", total=5)
    assert given.total == 99


def test_real_tqdm_bar() -> None:
    tqdm = pytest.importorskip("tqdm").tqdm
    with tqdm(file=io.StringIO(), disable=False) as bar:
        t = ProgressTracker(bar, "op", "rows", total=40)
        t.advance(15)
        t.advance(25)
        assert bar.total == 40 and bar.n == 40


@pytest.mark.parametrize("hook", [42, "bar", object()])
def test_a_hook_that_is_neither_callable_nor_a_bar_is_a_type_error(hook: Any) -> None:
    with pytest.raises(TypeError, match="progress= takes a callable"):
        tracker(hook, "op", "rows")
    assert tracker(None, "op", "rows") is None


async def test_write_dataset_counts_rows_file_by_file(tmp_path: pathlib.Path) -> None:
    events: list[ProgressEvent] = []
    table = _table()
    written = await aorc.write_dataset(table, tmp_path / "ds", partition_cols=["day"],
                                       max_rows_per_file=100, progress=events.append)
    _check_events(events, "write_dataset", "rows", table.num_rows)
    assert len(events) == len(written) == 12  # 4 days x 3 files of 100 rows
    assert all(e.delta == 100 for e in events)


async def test_write_dataset_drives_a_bar_and_refuses_a_bad_hook(tmp_path: pathlib.Path) -> None:
    bar = Bar()
    await aorc.write_dataset(_table(), tmp_path / "ds", progress=bar)
    assert bar.total == bar.n == 1_200
    with pytest.raises(TypeError, match="progress="):
        await aorc.write_dataset(_table(), tmp_path / "other", progress=3)
    assert not (tmp_path / "other").exists() or not any((tmp_path / "other").rglob("*.orc"))


async def test_read_dataset_counts_the_files_left_after_pruning(tmp_path: pathlib.Path) -> None:
    await aorc.write_dataset(_table(), tmp_path / "ds", partition_cols=["day"],
                             max_rows_per_file=200)
    everything: list[ProgressEvent] = []
    whole = await aorc.read_dataset(tmp_path / "ds", progress=everything.append)
    assert whole.num_rows == 1_200
    _check_events(everything, "read_dataset", "files", 8)
    one_day: list[ProgressEvent] = []
    part = await aorc.read_dataset(tmp_path / "ds", filters=[("day", "==", "d1")],
                                   progress=one_day.append)
    assert part.num_rows == 300
    _check_events(one_day, "read_dataset", "files", 2)
    with_schema: list[ProgressEvent] = []
    await aorc.read_dataset(tmp_path / "ds", schema=whole.schema, progress=with_schema.append)
    _check_events(with_schema, "read_dataset", "files", 8)


async def test_dataset_read_reports_progress(tmp_path: pathlib.Path) -> None:
    await aorc.write_dataset(_table(), tmp_path / "ds", partition_cols=["day"])
    dataset = await aorc.open_dataset(tmp_path / "ds")
    bar = Bar()
    table = await dataset.read(["id"], [("day", "in", ["d0", "d3"])], progress=bar)
    assert table.num_rows == 600
    assert bar.total == bar.n == 2 and bar.updates == [1, 1]


async def test_convert_reports_rows_or_bytes(tmp_path: pathlib.Path) -> None:
    table = _table(5_000)
    src = tmp_path / "in.orc"
    await aorc.write_table(table, src, stripe_size=64 * 1024)
    events: list[ProgressEvent] = []
    result = await convert(str(src), str(tmp_path / "out.orc"), progress=events.append)
    assert result.rows == 5_000
    _check_events(events, "convert", "rows", 5_000)
    csv = tmp_path / "in.csv"
    pacsv.write_csv(table, csv)
    by_bytes: list[ProgressEvent] = []
    await convert(str(csv), str(tmp_path / "csv.orc"), progress=by_bytes.append)
    _check_events(by_bytes, "convert", "bytes", csv.stat().st_size)


def test_the_bar_prints_its_last_line_once() -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    tty = Tty()
    bar = Progress("work", 1000, "rows", stream=tty)
    bar.update(1000)  # the first update draws at once: 100 %
    bar.close()  # nothing new to draw: only the line's end
    assert tty.getvalue().count("100.0%") == 1 and tty.getvalue().endswith("\n")
    tty2 = Tty()
    bar = Progress("work", 1000, "rows", stream=tty2)
    bar.update(400)  # drawn
    bar.update(600)  # within 0.1 s of the last draw (no clock read here decides it: both
    bar.close()      # outcomes end with exactly one 100 % line)
    assert tty2.getvalue().count("100.0%") == 1 and tty2.getvalue().endswith("\n")
