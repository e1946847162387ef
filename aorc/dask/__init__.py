"""Dask integration: ORC datasets read into and written from Dask DataFrames by aorc.

:func:`read_orc` plans on the client from the file tails only (:mod:`aorc.dataset.splits`:
Hive partitions, schema evolution, files pruned by partition values and stripes by their
statistics) and makes one Dask partition per pack of stripe splits (``dd.from_map``); each
partition is read by aorc's async reader inside the worker, and Dask's optimizer pushes
column selections into the reads. :func:`to_orc` writes each partition as ORC part files
(Hive folders with ``partition_cols``) named by the partition's number, so a retried task
replaces its own files and a failed one leaves no partial file::

    import aorc.dask

    df = aorc.dask.read_orc("s3://bucket/events/", columns=["user", "amount"],
                            filters=[("day", ">=", "2024-06-01")])
    aorc.dask.to_orc(df, "s3://bucket/out/", partition_cols=["day"])
"""

from aorc.dask.orc import read_orc, to_orc

__all__ = ["read_orc", "to_orc"]
