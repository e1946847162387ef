"""Draw the benchmark figures: ``results/*.json`` -> ``results/performance.png``.

Every JSON file a benchmark writes has this shape (``bench_write.py`` writes ``write.json``;
a read benchmark writes ``read.json`` alike)::

    {"benchmark": "read" | "write",
     "machine": "AMD EPYC, 2 CPUs, ...",
     "command": "python benchmarks/bench_write.py ...",
     "statistic": "median of 3",
     "results": [{"table": "events", "library": "aorc" | "pyarrow.orc" | "pyorc",
                  "seconds": 1.23, ...}, ...]}

The chart has one panel per benchmark (read, write): for every table, one bar per library,
its time relative to pyarrow.orc's (log scale; below 1 is faster than pyarrow.orc), with the
seconds written on the bar. The machine and the commands go under the panels.

Usage::

    python benchmarks/chart.py [--results DIR] [--out PNG]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
LIBRARIES = ("aorc", "pyarrow.orc", "pyorc")
COLORS = {"aorc": "#1f77b4", "pyarrow.orc": "#ff7f0e", "pyorc": "#2ca02c"}
BASELINE = "pyarrow.orc"


def load(folder: Path) -> list[dict[str, Any]]:
    """The benchmark documents in ``folder``, read first, then write, then others."""
    docs = []
    for path in sorted(folder.glob("*.json")):
        doc = json.loads(path.read_text())
        if isinstance(doc, dict) and "benchmark" in doc and "results" in doc:
            docs.append(doc)
    order = {"read": 0, "write": 1}
    return sorted(docs, key=lambda d: (order.get(d["benchmark"], 2), d["benchmark"]))


def _panel(ax: Any, doc: dict[str, Any]) -> None:
    times: dict[str, dict[str, float]] = {}
    for r in doc["results"]:
        times.setdefault(r["table"], {})[r["library"]] = float(r["seconds"])
    tables = list(times)
    libraries = [lib for lib in LIBRARIES if any(lib in t for t in times.values())]
    width = 0.8 / max(1, len(libraries))
    for k, lib in enumerate(libraries):
        xs, ys, labels = [], [], []
        for i, table in enumerate(tables):
            row = times[table]
            if lib in row and BASELINE in row:
                xs.append(i + (k - (len(libraries) - 1) / 2) * width)
                ys.append(row[lib] / row[BASELINE])
                labels.append(f"{row[lib]:.2f}s")
        bars = ax.bar(xs, ys, width, label=lib, color=COLORS.get(lib))
        for bar, label in zip(bars, labels, strict=True):
            ax.annotate(label, (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                        ha="center", va="bottom", fontsize=6, rotation=90,
                        xytext=(0, 2), textcoords="offset points")
    ax.axhline(1.0, color="grey", linewidth=0.8, linestyle="--")
    ax.set_yscale("log")
    ax.set_xticks(range(len(tables)))
    ax.set_xticklabels(tables)
    ax.set_ylabel(f"time / {BASELINE} time (log)")
    ax.set_title(f"{doc['benchmark']} ({doc.get('statistic', '')})")
    ax.legend(fontsize=8)


def draw(docs: list[dict[str, Any]], out: Path) -> None:
    """Draw the panels of ``docs`` into ``out`` (PNG)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(docs), figsize=(6.5 * len(docs), 5.2), squeeze=False)
    for ax, doc in zip(axes[0], docs, strict=True):
        _panel(ax, doc)
    notes = [f"machine: {docs[0].get('machine', '?')}"]
    notes += [f"{d['benchmark']}: {d.get('command', '?')}" for d in docs]
    fig.text(0.01, 0.01, "\n".join(notes), fontsize=7, va="bottom")
    fig.tight_layout(rect=(0, 0.04 + 0.025 * len(notes), 1, 1))
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> None:
    """Parse the command line and draw the chart."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=HERE / "results",
                        help="folder of the JSON results (default benchmarks/results)")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "performance.png",
                        help="the PNG to write (default benchmarks/results/performance.png)")
    args = parser.parse_args(argv)
    docs = load(args.results)
    if not docs:
        sys.exit(f"chart: no benchmark results (*.json) in {args.results}")
    draw(docs, args.out)
    print(f"chart written to {args.out}")


if __name__ == "__main__":
    main()
