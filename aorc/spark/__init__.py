"""PySpark integration (3.5, 4.0-4.3; classic sessions and Spark Connect): ORC files written
and read by aorc inside Spark tasks.

:func:`write` writes each partition of a DataFrame as one ORC file through aorc from the
executors (``mapInArrow``; multipart uploads on S3) and returns the files written.
:func:`read` lists ORC files (local folders, ``s3://`` prefixes), splits them by stripes
across tasks and decodes them with aorc, filters pushed down, so a Spark job reads ORC
straight from an S3 endpoint without Hadoop's S3 connector::

    uris = aorc.spark.write(df, "s3://bucket/out", storage_options=s3, compression="zstd")
    df2 = aorc.spark.read(spark, "s3://bucket/out", filters=[("amount", ">", 10)],
                          storage_options=s3)

:func:`register` adds the same reader as a Spark Python data source, ``spark.read.format(
"aorc")``, with options ``columns`` (comma-separated), ``filters`` (JSON), ``splitBytes`` and
``storage.<name>`` for storage options (values parsed as JSON when they parse); it needs
PySpark 4.0 or later (Python data sources), filters pushed from ``.where()`` 4.1 or later.
Spark tells Python data sources nothing of the columns a query uses (up to 4.3), so name them
with ``columns`` (or ``columns=`` of :func:`read`, a ``mapInArrow`` that Spark cannot prune
either): every column read is decoded and handed to the JVM.

With Spark Connect (``SparkSession.builder.remote(...)``), :func:`write`, :func:`read` and
:func:`register` work the same (nothing touches ``SparkContext`` or the JVM), but aorc must be
importable by the server's Python workers. Version differences live in
:mod:`aorc.spark.compat`.

Executors need aorc importable and the store's settings: pass ``storage_options`` (endpoint
and credentials) explicitly, since executors do not see the driver's environment changes.
When aorc is used from a source checkout (not installed), its folder is added to the
``PYTHONPATH`` of a classic session's Python workers (enough for local mode).

Types: ORC timestamps are returned as Spark ``TimestampType`` (the stored wall clock taken as
UTC, as Spark's ORC reader does with a UTC JVM), nanoseconds truncated to microseconds, and
columns Spark marked ``timestamp_ntz`` as ``TimestampNTZType``; :func:`write` types
timestamps as Spark's ORC writer does (see :mod:`aorc.spark.compat`);
``char``/``varchar`` as strings; unions are not supported. Folders named ``key=value`` below
the listed root (Hive style) become columns typed as ``spark.read.orc`` types them, by the
datasets' code (:mod:`aorc.dataset.partitioning`): int, bigint, decimal(p,0), double, timestamp
(the folder's wall clock in the session time zone), date, else string, widened as Spark
widens a column's values.

Modules, by concept: :mod:`aorc.spark.plan` (listing, partition columns, filters, splits and
their packing into tasks; no Spark), :mod:`aorc.spark.reader` (:func:`read` and its tasks),
:mod:`aorc.spark.writer` (:func:`write` and its tasks), :mod:`aorc.spark.source` (the
``aorc`` Python data source, :func:`register`) and :mod:`aorc.spark.compat`.
"""

from aorc.spark.plan import (
    DEFAULT_SPLIT_BYTES,
    Split,
    list_files,
    pack_splits,
    plan_read,
    read_schema,
)
from aorc.spark.reader import read
from aorc.spark.source import register
from aorc.spark.writer import write

__all__ = [
    "DEFAULT_SPLIT_BYTES",
    "Split",
    "list_files",
    "pack_splits",
    "plan_read",
    "read",
    "read_schema",
    "register",
    "write",
]
