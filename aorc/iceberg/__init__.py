"""Iceberg tables with ORC data files: pyiceberg's metadata, aorc's files.

Needs the ``iceberg`` extra (``pip install "aorc[iceberg]"``: pyiceberg 0.12+ with its SQL
catalog and pyiceberg-core). Importing this package registers aorc as pyiceberg's ORC writer
(:mod:`aorc.iceberg.fileformat`), so ``table.append(df)`` on a table with
``write.format.default=orc`` writes ORC, and lets :class:`aorc.sink.RollingSink` take a
pyiceberg ``Table`` as its target (:mod:`aorc.iceberg.sink`).

- :func:`append` / :func:`write_data_files`: rows -> ORC data files by the partition spec,
  one snapshot (:mod:`aorc.iceberg.write`);
- :func:`read_table` / :func:`iter_batches`: pyiceberg plans, aorc reads with pushdown, by
  field id, with deletes (:mod:`aorc.iceberg.read`);
- :func:`add_files`: existing ORC files join the table (:mod:`aorc.iceberg.addfiles`);
- :func:`rewrite_files`: compaction by stripe copy or re-encoding (:mod:`aorc.iceberg.rewrite`);
- :class:`IcebergTarget`: the sink's target, exactly once (:mod:`aorc.iceberg.sink`).

The files follow the Iceberg spec's ORC appendix (:mod:`aorc.iceberg.schema`) and carry the
metrics of :mod:`aorc.iceberg.metrics`; ``write.orc.*`` table properties are honoured
(:mod:`aorc.iceberg.config`).
"""

from __future__ import annotations

from aorc.iceberg.addfiles import add_files
from aorc.iceberg.fileformat import OrcFormatModel, register
from aorc.iceberg.read import iter_batches, read_table
from aorc.iceberg.rewrite import RewriteResult, rewrite_files
from aorc.iceberg.sink import IcebergTarget
from aorc.iceberg.write import append, write_data_files

__all__ = [
    "IcebergTarget",
    "OrcFormatModel",
    "RewriteResult",
    "add_files",
    "append",
    "iter_batches",
    "read_table",
    "register",
    "rewrite_files",
    "write_data_files",
]

register()
