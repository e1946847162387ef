"""Ray Data integration: ORC datasets read into and written from ``ray.data.Dataset`` by aorc.

:func:`read_orc` is a Ray ``Datasource`` (:class:`OrcDatasource`) that plans on the driver
from the file tails only (:mod:`aorc.dataset.splits`: Hive partitions, schema evolution, files
pruned by partition values and stripes by their statistics) and makes one ``ReadTask`` per
pack of stripe splits, read by aorc's async reader in the Ray workers. Ray's projection and
predicate pushdowns reach the reads: a ``select_columns`` reads only those columns, in that
order (none: the rows are still counted), and a ``filter(expr=...)`` prunes stripes, row
groups and bloom filters as ``filters=`` does. :func:`write_orc` is a ``Datasink``
(:class:`OrcDatasink`): each write task's rows become ORC part files named by the task's
index (Hive folders with ``partition_cols``), so a retried task replaces its own files and a
failed one leaves no partial file::

    import aorc.ray

    ds = aorc.ray.read_orc("s3://bucket/events/", filters=[("day", ">=", "2024-06-01")])
    aorc.ray.write_orc(ds.select_columns(["user", "amount"]), "s3://bucket/out/")
"""

from aorc.ray.orc import OrcDatasink, OrcDatasource, read_orc, write_orc

__all__ = ["OrcDatasink", "OrcDatasource", "read_orc", "write_orc"]
