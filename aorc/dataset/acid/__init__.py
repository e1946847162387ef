"""Hive transactional (ACID) tables: full-ACID (ORC ACID version 1 and 2) and insert-only
tables read with Hive's directory selection and deletes applied.

:func:`open_acid_table` gives an :class:`AcidTable` (the reading API of
:class:`aorc.Dataset`); :func:`read_acid_table` reads one into a ``pyarrow.Table``.
:class:`WriteIdList` parses Hive's valid write-id list.
"""

from aorc.dataset.acid.layout import WriteIdList
from aorc.dataset.acid.table import AcidTable, open_acid_table, read_acid_table

__all__ = ["AcidTable", "WriteIdList", "open_acid_table", "read_acid_table"]
