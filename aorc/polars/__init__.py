"""Polars front end: lazy scans of ORC files and datasets, and ORC output of Polars frames.

Needs Polars 1.x or 2.x (``pip install polars``, or the ``polars`` extra)::

    import polars as pl
    import aorc.polars

    frame = (aorc.polars.scan_orc("s3://bucket/events/")
             .filter((pl.col("country") == "DE") & (pl.col("amount") > 100))
             .group_by("day").agg(pl.col("amount").sum())
             .collect())
    aorc.polars.write_orc(frame, "out/summary.orc", compression="zstd")

- :func:`scan_orc` / :func:`read_orc`: Polars pushes projection, predicate and row limit down
  to aorc (:mod:`aorc.polars.scan`; the predicate translation: :mod:`aorc.polars.predicate`);
- :func:`write_orc`: a DataFrame or LazyFrame, batch by batch (:mod:`aorc.polars.write`);
- :func:`open_scan`: the scan as an object, with its read counters.
"""

from __future__ import annotations

try:
    import polars as _polars
    from polars.io.plugins import register_io_source as _register  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised in a subprocess without polars
    raise ImportError("aorc.polars needs Polars 1.x or newer: pip install polars "
                      "(or pip install 'aorc[polars]')") from exc

from aorc.polars.scan import OrcScan, open_scan, read_orc, scan_orc
from aorc.polars.write import write_orc

del _polars

__all__ = ["OrcScan", "open_scan", "read_orc", "scan_orc", "write_orc"]
