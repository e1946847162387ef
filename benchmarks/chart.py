"""Draw the benchmark figures: ``results/*.json`` -> ``results/performance.png``.

Every JSON file a benchmark writes has this shape (``bench_write.py`` writes ``write.json``;
a read benchmark writes ``read.json`` alike)::

    {"benchmark": "read" | "write",
     "machine": "AMD EPYC, 2 CPUs, ...",
     "command": "python benchmarks/bench_write.py ...",
     "statistic": "median of 5 fresh processes x 3 reads, ...",
     "results": [{"table": "events", "library": "aorc" | "pyarrow.orc" | "pyorc",
                  "seconds": 1.23, "best": 1.1, "median": 1.23, "p90": 1.4,
                  "samples": [...], ...}, ...]}

``seconds`` is the median (older documents: whatever their ``statistic`` says, and no
``best``/``p90``). The chart has one panel per benchmark (read, write): for every table, one
bar per library, its median time relative to pyarrow.orc's median (log scale; below 1 is
faster than pyarrow.orc), with the seconds written on the bar and, where the document has
them, a thin whisker from the best to the 90th percentile (on the same scale). The machine and
the commands go under the panels.

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


def spreads(doc: dict[str, Any]) -> dict[str, dict[str, tuple[float, float, float]]]:
    """table -> library -> (best, seconds, p90) of a document; a document without ``best`` and
    ``p90`` (the older format) gives ``seconds`` for both."""
    out: dict[str, dict[str, tuple[float, float, float]]] = {}
    for r in doc["results"]:
        seconds = float(r["seconds"])
        out.setdefault(r["table"], {})[r["library"]] = (
            float(r.get("best", seconds)), seconds, float(r.get("p90", seconds)))
    return out


def _whiskers(ax: Any, xs: list[float], ys: list[float],
              spans: list[tuple[float, float]]) -> None:
    """Thin lines from best to p90 (relative to the baseline), where they differ."""
    drawn = [(x, y, lo, hi) for x, y, (lo, hi) in zip(xs, ys, spans, strict=True) if hi > lo]
    if drawn:
        ax.errorbar([d[0] for d in drawn], [d[1] for d in drawn],
                    yerr=[[d[1] - d[2] for d in drawn], [d[3] - d[1] for d in drawn]],
                    fmt="none", ecolor="black", elinewidth=0.6, capsize=1.5, capthick=0.6)


def _panel(ax: Any, doc: dict[str, Any]) -> None:
    times = spreads(doc)
    tables = list(times)
    libraries = [lib for lib in LIBRARIES if any(lib in t for t in times.values())]
    width = 0.8 / max(1, len(libraries))
    for k, lib in enumerate(libraries):
        xs, ys, labels, spans = [], [], [], []
        for i, table in enumerate(tables):
            row = times[table]
            if lib in row and BASELINE in row:
                base = row[BASELINE][1]
                best, median, p90 = row[lib]
                xs.append(i + (k - (len(libraries) - 1) / 2) * width)
                ys.append(median / base)
                spans.append((best / base, p90 / base))
                labels.append(f"{median:.2f}s")
        bars = ax.bar(xs, ys, width, label=lib, color=COLORS.get(lib))
        _whiskers(ax, xs, ys, spans)
        for bar, label, (_, top) in zip(bars, labels, spans, strict=True):
            ax.annotate(label, (bar.get_x() + bar.get_width() / 2,
                                max(bar.get_height(), top)),
                        ha="center", va="bottom", fontsize=6, rotation=90,
                        xytext=(0, 2), textcoords="offset points")
    ax.axhline(1.0, color="grey", linewidth=0.8, linestyle="--")
    ax.set_yscale("log")
    ax.set_xticks(range(len(tables)))
    ax.set_xticklabels(tables)
    ax.set_ylabel(f"time / {BASELINE} time (log)")
    whiskers = any("p90" in r for r in doc["results"])
    ax.set_title(f"{doc['benchmark']}\n{doc.get('statistic', '')}", fontsize=9)
    ax.legend(fontsize=8, title="whiskers: best..p90" if whiskers else None, title_fontsize=7)


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
