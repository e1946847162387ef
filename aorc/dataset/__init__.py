"""Datasets: many ORC files read and written as one table.

Listing and discovery (:mod:`aorc.dataset.discovery`, :mod:`aorc.dataset.prefixes`), Hive
partitioning and folder names (:mod:`aorc.dataset.partitioning`, :mod:`aorc.dataset.hive`),
schema evolution (:mod:`aorc.dataset.evolution`), the dataset read plan and the small-file
path (:mod:`aorc.dataset.plan`, :mod:`aorc.dataset.local`), ``open_dataset``/``read_dataset``
(:mod:`aorc.dataset.read`), ``read_table``'s choice of file or dataset
(:mod:`aorc.dataset.table`), ``write_dataset`` (:mod:`aorc.dataset.write`) and compaction
(:mod:`aorc.dataset.compaction`). It sits above the one-file reader and writer
(:mod:`aorc.read`, :mod:`aorc.write`), which know nothing of it, and below the sink and the
front ends.
"""

__all__: list[str] = []
