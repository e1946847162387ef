"""Iceberg tables with ORC data files: pyiceberg's metadata, aorc's files.

Needs the ``iceberg`` extra (``pip install "aorc[iceberg]"``: pyiceberg 0.12+ with its SQL
catalog and pyiceberg-core). Importing this package registers aorc as pyiceberg's ORC writer
(:mod:`aorc.iceberg.fileformat`), so ``table.append(df)`` on a table with
``write.format.default=orc`` writes ORC.
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
