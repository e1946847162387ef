"""Daft integration: ORC datasets read into and written from Daft DataFrames by aorc.

:func:`read_orc` is a Daft ``DataSource`` (:class:`OrcDataSource`, asyncio-native like aorc):
it plans from the file tails only (:mod:`aorc.dataset.splits`: Hive partitions, schema
evolution, files pruned by partition values and stripes by their statistics) and yields one
``DataSourceTask`` per stripe split, whose rows aorc's async reader streams. Daft's
``Pushdowns`` reach the reads: the columns a query uses (none: rows are still counted), its
filters (pruning stripes, row groups and bloom filters) and its limit (tasks stop, and no
further task is made, once enough rows are read). :func:`write_orc` is a Daft ``DataSink``
(:class:`OrcDataSink`) writing ORC part files (Hive folders with ``partition_cols``) named
by their content, so a retried write replaces its own files and a failed one leaves no
partial file::

    import aorc.daft

    df = aorc.daft.read_orc("s3://bucket/events/", filters=[("day", ">=", "2024-06-01")])
    aorc.daft.write_orc(df.where(df["amount"] > 10), "s3://bucket/out/")
"""

from aorc.daft.orc import OrcDataSink, OrcDataSource, OrcDataSourceTask, read_orc, write_orc

__all__ = ["OrcDataSink", "OrcDataSource", "OrcDataSourceTask", "read_orc", "write_orc"]
