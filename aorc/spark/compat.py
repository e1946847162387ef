"""What differs between the PySpark versions :mod:`aorc.spark` supports (3.5 and 4.0-4.3,
classic sessions and Spark Connect), found by looking for features, not at version strings.

- ``to_arrow_schema`` takes ``timezone`` in newer releases (4.3 does; 3.5 and 4.0 do not,
  and there ``TimestampType`` is always ``timestamp[us, tz=UTC]``); ``from_arrow_schema``
  takes ``prefer_timestamp_ntz`` from 3.5 on.
- Spark Connect sessions (``SparkSession.builder.remote(...)``) have no ``SparkContext``
  and no JVM: nothing here reaches for them on that path.
- Spark (3.4 and later) stores ``TimestampNTZType`` in ORC as ``long`` microseconds marked
  with the type attribute ``spark.sql.catalyst.type=timestamp_ntz``, and ``TimestampType``
  as ``timestamp`` (Spark 3.5 cannot read ``timestamp with local time zone``):
  :func:`orc_schema` writes them so, :func:`with_ntz` reads the former (as
  ``timestamp[us]`` without a zone, the Arrow type PySpark maps to ``TimestampNTZType``).
- Python data sources (``pyspark.sql.datasource``) exist from 4.0; readers accept filters
  (``pushFilters``) from 4.1, when ``spark.sql.python.filterPushdown.enabled`` is true. No
  version up to 4.3 tells a Python source which columns a query uses (the JVM's
  ``PythonScanBuilder`` implements ``SupportsPushDownFilters`` only, 4.0 not even that), so
  ``format("aorc")`` reads every column unless given the ``columns`` option.
- Spark 4 bounds the Arrow batches it sends to Python workers by bytes as well as rows
  (``spark.sql.execution.arrow.maxBytesPerBatch``, 64 MiB by default), and checks the bound
  after every row it appends (``BatchedPythonArrowInput``: the size of every vector, per row),
  which costs more JVM time than Spark's whole ORC write; 3.5 has no such bound.
  :func:`unbounded_arrow_batch_bytes` lifts it for one job (see there).
- Spark Connect 4.0's analyzer refuses an aggregate over ``spark_partition_id()``
  (``AGGREGATE_FUNCTION_WITH_NONDETERMINISTIC_EXPRESSION``; 4.3 pulls it into a projection
  itself): :func:`default_parallelism` projects the partition id first.
- A classic session's Python workers run ``PYSPARK_PYTHON`` (``python3`` from the ``PATH``
  when unset), not the driver's interpreter: from a virtualenv that is not activated they
  cannot import pyarrow or aorc. :func:`check_worker_python` finds that out before a job
  starts (in local mode, where the workers' interpreter is on this machine).
"""

from __future__ import annotations

import contextlib
import datetime
import functools
import inspect
import json
import os
import re
import shutil
import subprocess
import sys
import zoneinfo
from collections.abc import Callable, Iterator
from typing import Any

import pyarrow as pa

import aorc
from aorc.errors import AorcError, UnsupportedFeatureError
from aorc.format.types import ORC_ATTRIBUTES_METADATA_KEY, OrcType, TypeKind
from aorc.format.types import from_arrow_schema as orc_from_arrow_schema

__all__ = [
    "ARROW_BATCH_BYTES",
    "CATALYST_TYPE",
    "DATA_SOURCE_VERSION",
    "NO_BYTE_BOUND",
    "NTZ",
    "check_worker_python",
    "default_parallelism",
    "executor_path",
    "from_arrow_schema",
    "has_data_sources",
    "has_filter_pushdown",
    "is_connect",
    "orc_schema",
    "require_data_sources",
    "server_parallelism",
    "session_time_zone",
    "session_zone",
    "storage_schema",
    "to_arrow_schema",
    "tzinfo",
    "unbounded_arrow_batch_bytes",
    "with_ntz",
]

#: The ORC type attribute naming the Spark type a column holds.
CATALYST_TYPE = "spark.sql.catalyst.type"
#: The Arrow type of ``TimestampNTZType`` in PySpark's Arrow batches.
NTZ = pa.timestamp("us")
#: Spark 4's bound on the bytes of an Arrow batch sent to a Python worker.
ARROW_BATCH_BYTES = "spark.sql.execution.arrow.maxBytesPerBatch"
#: The value of :data:`ARROW_BATCH_BYTES` that means no bound (and no per-row check).
NO_BYTE_BOUND = str(2**31 - 1)
#: The first PySpark with Python data sources (``spark.read.format(<python source>)``).
DATA_SOURCE_VERSION = "4.0"


def is_connect(spark: Any) -> bool:
    """Whether ``spark`` (a SparkSession or DataFrame) is a Spark Connect client."""
    module = type(spark).__module__
    return module.startswith("pyspark.sql.connect") or module.startswith("pyspark.connect")


@functools.cache
def _parameters(function: Any) -> frozenset[str]:
    try:
        return frozenset(inspect.signature(function).parameters)
    except (TypeError, ValueError):  # pragma: no cover - builtins without a signature
        return frozenset()


def to_arrow_schema(schema: Any) -> pa.Schema:
    """The Arrow schema of Spark's Arrow batches for a Spark ``StructType`` (timestamps in
    UTC, as ``mapInArrow`` hands them over)."""
    from pyspark.sql.pandas.types import to_arrow_schema as convert

    if "timezone" in _parameters(convert):
        return convert(schema, timezone="UTC")
    return convert(schema)


def from_arrow_schema(schema: pa.Schema) -> Any:
    """The Spark ``StructType`` of an Arrow schema, ``timestamp[us, tz]`` as
    ``TimestampType`` and ``timestamp[us]`` as ``TimestampNTZType``."""
    from pyspark.sql.pandas.types import from_arrow_schema as convert

    if "prefer_timestamp_ntz" in _parameters(convert):
        return convert(schema, prefer_timestamp_ntz=True)
    return convert(schema)  # pragma: no cover - PySpark before 3.5


def default_parallelism(spark: Any) -> int:
    """The session's default parallelism (cores in local mode), also over Spark Connect."""
    if not is_connect(spark):
        return int(spark.sparkContext.defaultParallelism)
    value = spark.conf.get("spark.default.parallelism", None)
    if value:
        return max(1, int(value))
    return server_parallelism(spark)


def server_parallelism(spark: Any) -> int:
    """The number of partitions ``spark.range`` makes without a partition count: the
    server's default parallelism, found by one small job (Spark Connect without
    ``spark.default.parallelism`` set)."""
    from pyspark.sql import functions as F  # noqa: N812

    # range() without a partition count is cut into the server's default parallelism. The
    # partition id is projected before it is aggregated: Spark 4.0 refuses an aggregate
    # whose argument is nondeterministic (AGGREGATE_FUNCTION_WITH_NONDETERMINISTIC_...).
    ids = spark.range(0, 1 << 16).select(F.spark_partition_id().alias("partition"))
    row = ids.agg(F.max("partition")).first()
    return max(1, int(row[0]) + 1)


def session_time_zone(spark: Any) -> str:
    """The session's time zone (``spark.sql.session.timeZone``) as an Arrow time zone, also
    over Spark Connect: the zone of Hive timestamp partition folders."""
    return session_zone(str(spark.conf.get("spark.sql.session.timeZone", "UTC")))


_OFFSET = re.compile(r"(?:UTC|GMT|UT)?([+-])(\d{1,2})(?::?(\d{2}))?(?::?(\d{2}))?")


def session_zone(name: str) -> str:
    """A Spark session time zone (a region such as ``Europe/Paris``, ``UTC``, ``Z`` or an
    offset such as ``+08:00`` / ``GMT+8``) as an Arrow time zone (region or ``+HH:MM``).

    Raises:
        UnsupportedFeatureError: a zone neither Python's ``zoneinfo`` nor this knows.
    """
    if name in ("Z", "UTC", "GMT", "UT"):
        return "UTC"
    match = _OFFSET.fullmatch(name)
    if match:
        sign, hours, minutes, seconds = match.groups()
        if seconds and int(seconds):
            raise UnsupportedFeatureError(f"time zone {name!r}: offsets with seconds")
        return f"{sign}{int(hours):02d}:{minutes or '00'}"
    try:
        zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError) as exc:
        raise UnsupportedFeatureError(f"unknown session time zone {name!r}") from exc
    return name


def tzinfo(zone: str) -> datetime.tzinfo:
    """The Python time zone of an Arrow time zone that :func:`session_zone` gave."""
    if zone[:1] in "+-":
        hours, minutes = zone[1:].split(":")
        offset = datetime.timedelta(hours=int(hours), minutes=int(minutes))
        return datetime.timezone(-offset if zone[0] == "-" else offset)
    return datetime.UTC if zone == "UTC" else zoneinfo.ZoneInfo(zone)


def executor_path(spark: Any) -> None:
    """Let a classic session's Python workers import this aorc when it is not installed
    (a source checkout): its folder goes first on their ``PYTHONPATH``; then check that
    they can (:func:`check_worker_python`). Spark Connect clients cannot change the
    server's workers: there aorc must be installed (or on the ``PYTHONPATH`` the server was
    started with).

    Raises:
        AorcError: the workers' interpreter cannot import aorc.
    """
    root = os.path.dirname(os.path.dirname(os.path.abspath(aorc.__file__)))
    if os.path.basename(root) in ("site-packages", "dist-packages") or is_connect(spark):
        check_worker_python(spark)
        return
    env = spark.sparkContext.environment
    paths = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    if root not in paths:
        env["PYTHONPATH"] = os.pathsep.join([root, *paths])
    check_worker_python(spark)


def check_worker_python(spark: Any) -> None:
    """Raise an error that names the fix when a classic local session's Python workers
    cannot import aorc (and pyarrow): they run ``PYSPARK_PYTHON``, or ``python3`` from the
    ``PATH``, which from a virtualenv that is not activated is another interpreter than the
    driver's. Checked once per interpreter and ``PYTHONPATH``, in a subprocess, only when
    that interpreter is not the driver's own; Spark Connect sessions and clusters (whose
    workers are not on this machine) are not checked.

    Raises:
        AorcError: the workers' interpreter cannot import aorc.
    """
    if is_connect(spark):
        return
    context = spark.sparkContext
    if not str(getattr(context, "master", "")).startswith("local"):
        return
    executable = str(getattr(context, "pythonExec", None) or "python3")
    found = shutil.which(executable) or executable
    if os.path.abspath(found) == os.path.abspath(sys.executable):
        return
    # the workers' PYTHONPATH: the session's executor environment, then the JVM's own
    paths = [getattr(context, "environment", {}).get("PYTHONPATH", ""),
             os.environ.get("PYTHONPATH", "")]
    problem = _import_problem(found, os.pathsep.join(p for p in paths if p))
    if problem is None:
        return
    origin = ("PYSPARK_PYTHON" if os.environ.get("PYSPARK_PYTHON")
              else "PYSPARK_PYTHON is not set, so Spark takes python3 from the PATH")
    raise AorcError(
        f"aorc.spark: Spark's Python workers run {executable!r} ({origin}), which cannot "
        f"import aorc: {problem}. Set PYSPARK_PYTHON={sys.executable} (this interpreter, "
        f"which has aorc) before the SparkSession starts, or spark.pyspark.python for "
        f"spark-submit, or install aorc for {executable!r}")


@functools.lru_cache(maxsize=8)
def _import_problem(executable: str, pythonpath: str) -> str | None:
    """Why ``executable`` cannot import aorc and pyarrow (its last error line), or None."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    try:
        done = subprocess.run([executable, "-c", "import pyarrow, aorc"], env=env,
                              capture_output=True, text=True, timeout=120, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"{type(exc).__name__}: {exc}"
    if done.returncode == 0:
        return None
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    return lines[-1] if lines else f"exit status {done.returncode}"


@contextlib.contextmanager
def unbounded_arrow_batch_bytes(spark: Any) -> Iterator[None]:
    """Within the block, Spark cuts the Arrow batches it sends to Python workers by rows only
    (``spark.sql.execution.arrow.maxRecordsPerBatch``, 10,000 by default), as Spark 3.5 does,
    instead of also checking their bytes after each row (:data:`ARROW_BATCH_BYTES`); the
    session's setting is restored after. Nothing changes when the user set
    :data:`ARROW_BATCH_BYTES` (a bound asked for is kept, e.g. for rows of hundreds of KB,
    whose 10,000-row batches would pass Arrow's 2 GiB limit) or when this Spark has no such
    setting (3.5), nor when the session refuses the change (a Connect server may forbid
    setting it). Jobs the session runs meanwhile from other threads see the change too."""
    conf = spark.conf
    try:
        conf.get(ARROW_BATCH_BYTES)
        lift = conf.get(ARROW_BATCH_BYTES, None) is None
        if lift:
            conf.set(ARROW_BATCH_BYTES, NO_BYTE_BOUND)
    except Exception:  # noqa: BLE001 - no such setting (3.5) or not settable: Py4J, Connect
        lift = False
    try:
        yield
    finally:
        if lift:
            conf.unset(ARROW_BATCH_BYTES)


def has_data_sources() -> bool:
    """Whether this PySpark has Python data sources."""
    try:
        from pyspark.sql.datasource import DataSource  # noqa: F401
    except ImportError:
        return False
    return True


def has_filter_pushdown() -> bool:
    """Whether this PySpark's Python data source readers can accept filters."""
    if not has_data_sources():
        return False
    from pyspark.sql.datasource import DataSourceReader

    return hasattr(DataSourceReader, "pushFilters")


def require_data_sources(spark: Any) -> None:
    """Raise :class:`UnsupportedFeatureError` when ``spark`` cannot register Python data
    sources."""
    if not has_data_sources():
        import pyspark

        raise UnsupportedFeatureError(
            f"spark.read.format('aorc') needs Python data sources, PySpark "
            f"{DATA_SOURCE_VERSION} or later (this is PySpark {pyspark.__version__}); "
            "use aorc.spark.read instead")
    if not hasattr(spark, "dataSource"):
        raise UnsupportedFeatureError(
            f"this {type(spark).__name__} cannot register Python data sources "
            "(spark.dataSource is missing); use aorc.spark.read instead")


# =========================================================================== TimestampNTZ

def _is_ntz(t: pa.DataType) -> bool:
    return pa.types.is_timestamp(t) and t.tz is None


def _map_fields(f: pa.Field, fn: Callable[[pa.Field], pa.Field]) -> pa.Field:
    """``f`` with ``fn`` applied to every leaf field, nested fields made nullable (a null
    struct holds nulls in fields Spark declares not null)."""
    t = f.type
    if pa.types.is_list(t):
        t = pa.list_(_map_fields(t.value_field, fn))
    elif pa.types.is_map(t):
        t = pa.map_(t.key_field, _map_fields(t.item_field, fn))
    elif pa.types.is_struct(t):
        t = pa.struct([_map_fields(c, fn).with_nullable(True) for c in t])
    else:
        return fn(f)
    return f.with_type(t)


def _has_timestamps(t: pa.DataType) -> bool:
    if pa.types.is_timestamp(t):
        return True
    if pa.types.is_map(t):
        return _has_timestamps(t.item_type)
    return any(_has_timestamps(t.field(i).type) for i in range(t.num_fields))


def storage_schema(schema: pa.Schema) -> pa.Schema:
    """The Arrow schema aorc writes for Spark's batches of ``schema``, typed as Spark's own
    ORC writer types them (also nested, except as map keys): ``TimestampType`` (UTC) as an
    ORC ``timestamp`` holding the UTC wall clock, ``TimestampNTZType`` (naive) as int64
    microseconds, each marked with the ORC attribute ``spark.sql.catalyst.type``. (Spark 3.5
    cannot read ORC's ``timestamp with local time zone``.)"""
    def leaf(f: pa.Field) -> pa.Field:
        if not pa.types.is_timestamp(f.type):
            return f
        name = "timestamp_ntz" if f.type.tz is None else "timestamp"
        marker = {ORC_ATTRIBUTES_METADATA_KEY: json.dumps({CATALYST_TYPE: name})}
        stored = pa.int64() if f.type.tz is None else pa.timestamp(f.type.unit)
        return f.with_type(stored).with_metadata({**(f.metadata or {}), **marker})

    return pa.schema([_map_fields(f, leaf) if _has_timestamps(f.type) else f
                      for f in schema])


def orc_schema(schema: pa.Schema) -> OrcType:
    """The ORC schema aorc writes for Spark's batches of ``schema`` (see
    :func:`storage_schema`): typed as Spark's own ORC writer types them, so
    ``spark.read.orc`` gives the DataFrame's types back."""
    return orc_from_arrow_schema(storage_schema(schema))


def _unmark(node: OrcType, t: pa.DataType) -> pa.DataType:
    if node.kind == TypeKind.LONG and (CATALYST_TYPE, "timestamp_ntz") in node.attributes:
        return NTZ
    if pa.types.is_list(t) and node.children:
        return pa.list_(t.value_field.with_type(_unmark(node.children[0], t.value_type)))
    if pa.types.is_map(t) and len(node.children) == 2:
        return pa.map_(t.key_field.with_type(_unmark(node.children[0], t.key_type)),
                       t.item_field.with_type(_unmark(node.children[1], t.item_type)))
    if pa.types.is_struct(t) and len(node.children) == t.num_fields:
        return pa.struct([f.with_type(_unmark(c, f.type))
                          for c, f in zip(node.children, t, strict=True)])
    return t


def with_ntz(schema: pa.Schema, root: OrcType) -> pa.Schema:
    """``schema`` (a file's Arrow schema) with the columns Spark marked as
    ``timestamp_ntz`` typed :data:`NTZ` (aorc reads them as int64)."""
    if root.kind != TypeKind.STRUCT or len(root.children) != len(schema):
        return schema
    return pa.schema([f.with_type(_unmark(c, f.type))
                      for c, f in zip(root.children, schema, strict=True)])
