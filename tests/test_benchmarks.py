"""The benchmarks' own helpers: the summary statistics and the fresh-process runner
(``benchmarks/fresh.py``), how ``benchmarks/chart.py`` reads old and new results, and how
``benchmarks/cpu_regimes.py`` tells a CPU's slow stretches.

The percentiles are checked against numpy's; the runner's children against the tree they must
import aorc from. No timing is asserted, only that the planned runs happened.
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.orc as pa_orc
import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

import chart  # noqa: E402
import cpu_regimes  # noqa: E402
import fresh  # noqa: E402


@pytest.mark.parametrize("n", [1, 2, 3, 10, 15, 16])
def test_percentiles_match_numpy(n: int) -> None:
    rng = np.random.default_rng(n)
    samples = list(rng.random(n))
    for q in (0, 10, 50, 90, 100):
        assert fresh.percentile(samples, q) == pytest.approx(np.percentile(samples, q))
    got = fresh.summarize(samples)
    assert got.best == min(samples)
    assert got.median == pytest.approx(statistics.median(samples))
    assert got.p90 == pytest.approx(np.percentile(samples, 90))
    assert got.samples == tuple(samples)
    assert got.as_json()["seconds"] == got.median


def test_percentile_rejects_no_samples_and_bad_quantiles() -> None:
    with pytest.raises(ValueError, match="no samples"):
        fresh.summarize([])
    with pytest.raises(ValueError, match="outside"):
        fresh.percentile([1.0], 101)


def test_jobs_take_turns_process_by_process() -> None:
    jobs = {"aorc": fresh.Job("t:a", {}, processes=3, repeat=2),
            "pyarrow": fresh.Job("t:p", {}, processes=3, repeat=2),
            "pyorc": fresh.Job("t:o", {}, processes=1, repeat=1, warmup=0)}
    order: list[str] = []

    def runner(job: fresh.Job) -> dict[str, Any]:
        order.append(job.task)
        return {"times": [float(len(order))] * job.repeat}

    got = fresh.measure(jobs, runner=runner)
    assert order == ["t:a", "t:p", "t:o", "t:p", "t:a", "t:a", "t:p"]
    assert got["aorc"].samples == (1, 1, 5, 5, 6, 6)
    assert got["pyarrow"].samples == (2, 2, 4, 4, 7, 7)
    assert got["pyorc"].samples == (3,)


@pytest.fixture
def small_orc(tmp_path: Path) -> Path:
    path = tmp_path / "small.orc"
    pa_orc.write_table(pa.table({"x": list(range(1000)), "s": ["a", "b"] * 500}), path)
    return path


def test_children_import_this_trees_aorc(small_orc: Path) -> None:
    jobs = {lib: fresh.Job("bench_read:read_task", {"path": str(small_orc), "library": lib},
                           processes=1, repeat=2)
            for lib in ("aorc", "pyarrow")}
    got = {lib: fresh.run_child(job) for lib, job in jobs.items()}
    assert Path(got["aorc"]["aorc"]).resolve().is_relative_to(fresh.ROOT)
    assert got["pyarrow"]["aorc"] is None  # pyarrow.orc's process does not load aorc
    assert all(len(g["times"]) == 2 and min(g["times"]) > 0 for g in got.values())


def test_a_failing_child_says_why(small_orc: Path) -> None:
    job = fresh.Job("bench_read:read_task", {"path": str(small_orc), "library": "nope"})
    with pytest.raises(RuntimeError, match="unknown library 'nope'"):
        fresh.run_child(job)


def test_chart_reads_medians_and_old_documents() -> None:
    new = {"results": [{"table": "t", "library": "aorc", "seconds": 2.0, "best": 1.5,
                        "median": 2.0, "p90": 3.0}]}
    old = {"results": [{"table": "t", "library": "aorc", "seconds": 2.0}]}
    assert chart.spreads(new) == {"t": {"aorc": (1.5, 2.0, 3.0)}}
    assert chart.spreads(old) == {"t": {"aorc": (2.0, 2.0, 2.0)}}


def test_the_statistic_says_median_and_how_it_was_taken() -> None:
    assert fresh.statistic(5, 3, True, "read").startswith(
        "median of 5 fresh processes x 3 reads, 1 warm-up read each")
    assert fresh.statistic(1, 1, False, "write").startswith(
        "median of 1 write in one process after 1 warm-up write")


def test_regimes_find_the_slow_stretches() -> None:
    # 10 samples 0.1 s apart: fast 1.0, a stretch of three at 1.6 (0.3-0.5 s), one at 1.2
    times = [1.0, 1.1, 1.0, 1.6, 1.5, 1.7, 1.0, 1.2, 1.0, 1.05]
    stamps = [i / 10 for i in range(10)]
    got = cpu_regimes.regimes(times, stamps, threshold=1.3)
    assert got.samples == 10 and got.best == pytest.approx(1000.0)
    assert got.median == pytest.approx(statistics.median(times) * 1e3)
    assert got.slow_share == pytest.approx(0.3)
    assert got.slow_factor == pytest.approx(1.6)
    assert got.longest_slow == pytest.approx(0.3)  # from 0.3 s to the fast sample at 0.6 s
    # a stretch that lasts to the end counts up to the last stamp; a steady CPU has none
    assert cpu_regimes.regimes([1.0, 2.0, 2.0], [0.0, 1.0, 3.0], 1.3).longest_slow == 2.0
    steady = cpu_regimes.regimes([1.0, 1.1, 1.2], [0.0, 0.1, 0.2], 1.3)
    assert (steady.slow_share, steady.slow_factor, steady.longest_slow) == (0.0, 1.0, 0.0)
    with pytest.raises(ValueError, match="as many stamps"):
        cpu_regimes.regimes([1.0], [], 1.3)


def test_joint_slow_counts_rounds_with_one_and_with_every_cpu_slow() -> None:
    cpu0 = [1.0, 2.0, 2.0, 1.0, 1.0]
    cpu1 = [1.0, 1.0, 2.0, 2.0, 1.0, 9.0]  # one round more than cpu0: not a whole round
    assert cpu_regimes.joint_slow([cpu0, cpu1], 1.3) == (pytest.approx(0.6), pytest.approx(0.2))
    with pytest.raises(ValueError, match="no rounds"):
        cpu_regimes.joint_slow([[], [1.0]], 1.3)
