"""timestamp_unit: files holding "end of time" (9999-12-31 23:59:59) and year-1 timestamps,
written by pyorc (an independent writer), read in every unit; out-of-range values raise an
error naming the option unless a filter removes their rows; the CLI prints them all."""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import io
import json
import zoneinfo
from pathlib import Path

import pyarrow as pa
import pytest

import aorc
from aorc.cli.main import main

pyorc = pytest.importorskip("pyorc")

END = datetime.datetime(9999, 12, 31, 23, 59, 59)
START = datetime.datetime(1677, 1, 1, 0, 0, 0)  # just before timestamp[ns]
MID = datetime.datetime(2020, 5, 17, 12, 30, 45, 123456)


@pytest.fixture
def far_file(tmp_path: Path) -> Path:
    path = tmp_path / "far.orc"
    with path.open("wb") as f, pyorc.Writer(f, "struct<id:int,ts:timestamp>",
                                             timezone=zoneinfo.ZoneInfo("UTC")) as w:
        for i, ts in enumerate([MID, END, None, START, MID]):
            w.write((i, ts))
    return path


@pytest.mark.parametrize("unit", ["us", "ms", "s"])
async def test_every_unit_reads_far_values(far_file: Path, unit: str) -> None:
    table = await aorc.read_table(far_file, timestamp_unit=unit)
    assert table.schema.field("ts").type == pa.timestamp(unit)
    floor = {"us": MID, "ms": MID.replace(microsecond=123000), "s": MID.replace(microsecond=0)}
    assert table.column("ts").to_pylist() == [floor[unit], END, None, START, floor[unit]]
    async with aorc.open_reader(far_file, timestamp_unit=unit) as reader:
        assert reader.schema.field("ts").type == pa.timestamp(unit)


async def test_ns_names_the_option_and_filters_never_raise(far_file: Path) -> None:
    with pytest.raises(aorc.UnsupportedFeatureError, match="timestamp_unit"):
        await aorc.read_table(far_file)
    kept = await aorc.read_table(far_file, filters=[("id", "in", [0, 2, 4])])
    assert kept.column("ts").to_pylist() == [pa.scalar(MID, pa.timestamp("ns")).as_py(), None,
                                             pa.scalar(MID, pa.timestamp("ns")).as_py()]
    assert kept.schema.field("ts").type == pa.timestamp("ns")
    with pytest.raises(aorc.UnsupportedFeatureError, match="timestamp_unit"):
        await aorc.read_table(far_file, filters=[("id", "==", 1)])
    got = await aorc.read_table(far_file, timestamp_unit="s",
                                filters=[("ts", ">=", datetime.datetime(9999, 1, 1))])
    assert got.column("id").to_pylist() == [1]
    with pytest.raises(aorc.SchemaError, match="timestamp_unit"):
        await aorc.read_table(far_file, timestamp_unit="minutes")


async def test_dataset_timestamp_unit(far_file: Path) -> None:
    ds = await aorc.open_dataset(far_file.parent, timestamp_unit="us")
    assert ds.schema.field("ts").type == pa.timestamp("us")
    assert (await ds.read()).column("ts").to_pylist()[1] == END


def _cli(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(args))
        except SystemExit as exc:
            code = int(exc.code or 0)
    return code, out.getvalue(), err.getvalue()


def test_cli_prints_every_timestamp_and_counts(far_file: Path, tmp_path: Path) -> None:
    code, out, _ = _cli("cat", str(far_file))
    assert code == 0
    rows = [json.loads(line) for line in out.splitlines()]
    assert [r["ts"] for r in rows] == [MID.isoformat(), END.isoformat(), None,
                                       START.isoformat(), MID.isoformat()]
    code, out, _ = _cli("head", "-n", "2", str(tmp_path))  # the folder as a dataset
    assert code == 0 and json.loads(out.splitlines()[1])["ts"] == END.isoformat()
    code, _, err = _cli("cat", str(far_file), "--timestamp-unit", "ns")
    assert code == 1 and "timestamp_unit" in err
    code, out, _ = _cli("count", str(far_file), "--filter", "id >= 2",
                        "--filter", "ts is not null")
    assert code == 0 and out.splitlines() == [
        "rows: 2", "files: 1", f"bytes: {far_file.stat().st_size}"]
    code, out, _ = _cli("meta", str(tmp_path))
    assert code == 0 and "files: 1" in out and "rows: 5" in out
    code, _, err = _cli("count", str(far_file), "--filter", "id ~ 3")
    assert code == 1 and "filter 'id ~ 3'" in err and "column op value" in err


def test_cli_count_prunes_partitions(tmp_path: Path) -> None:
    table = pa.table({"k": ["a", "a", "b"], "v": [1, 2, 3]})
    asyncio.run(aorc.write_dataset(table, tmp_path / "ds", partition_cols=["k"]))
    code, out, _ = _cli("count", str(tmp_path / "ds"), "--filter", "k == 'a'",
                        "--filter", "v in [2, 3]")
    assert code == 0 and out.splitlines()[:2] == ["rows: 1", "files: 1"]
