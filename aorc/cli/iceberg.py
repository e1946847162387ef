"""The CLI on Iceberg tables: ``aorc meta|head|cat|count iceberg://<catalog>/<namespace>.<table>``.

The catalog is configured as pyiceberg configures it (``~/.pyiceberg.yaml``, or
``PYICEBERG_CATALOG__<NAME>__<PROPERTY>`` environment variables, read when the command
runs); the table is read with :mod:`aorc.iceberg` (needs the ``iceberg`` extra). ``meta``
describes the table (schema with field ids, partition spec, properties, current snapshot and
its summary, the stream positions a sink committed); ``head`` and ``cat`` print rows as for
files (``--columns``, ``--filter``); ``count`` prints the matching rows, the data files the
scan plans and their bytes.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TextIO, cast

import pyarrow as pa

from aorc.errors import ObjectNotFoundError, SchemaError, UnsupportedFeatureError
from aorc.filters.text import filters_from_text

__all__ = [
    "ICEBERG_PREFIX",
    "describe_table",
    "is_iceberg_url",
    "load_table",
    "table_count",
    "table_meta",
    "table_rows",
]

#: The CLI's name for tables: ``iceberg://<catalog>/<namespace>.<table>``.
ICEBERG_PREFIX = "iceberg://"


def is_iceberg_url(text: str) -> bool:
    """Whether a command-line source names an Iceberg table."""
    return isinstance(text, str) and text.lower().startswith(ICEBERG_PREFIX)


def _parse(url: str) -> tuple[str, str]:
    rest = url[len(ICEBERG_PREFIX):]
    catalog, sep, identifier = rest.partition("/")
    if not catalog or not sep or "." not in identifier.strip(".") or "/" in identifier:
        raise SchemaError(f"an Iceberg table is iceberg://<catalog>/<namespace>.<table>, got "
                          f"{url!r}")
    return catalog, identifier


def load_table(url: str) -> Any:
    """The pyiceberg table ``url`` names, its catalog configured as pyiceberg's own.

    Raises:
        UnsupportedFeatureError: pyiceberg is not installed.
        ObjectNotFoundError: no such catalog, namespace or table.
    """
    catalog_name, identifier = _parse(url)
    try:
        from pyiceberg.catalog import load_catalog
        from pyiceberg.exceptions import NoSuchNamespaceError, NoSuchTableError
        from pyiceberg.utils.config import Config

        import aorc.iceberg  # noqa: F401  (registers the ORC writer)
    except ImportError as exc:
        raise UnsupportedFeatureError("reading Iceberg tables needs the iceberg extra: "
                                      "pip install 'aorc[iceberg]'") from exc
    config = Config().get_catalog_config(catalog_name)
    if not config:
        raise ObjectNotFoundError(f"{url}: no Iceberg catalog {catalog_name!r} is configured "
                                  "(~/.pyiceberg.yaml or PYICEBERG_CATALOG__"
                                  f"{catalog_name.upper()}__* environment variables)")
    catalog = load_catalog(catalog_name, **cast(dict[str, Any], config))
    try:
        return catalog.load_table(identifier)
    except (NoSuchTableError, NoSuchNamespaceError) as exc:
        raise ObjectNotFoundError(f"{url}: no such table ({exc})") from exc


def describe_table(table: Any) -> dict[str, Any]:
    """What ``aorc meta`` shows of a table, as JSON-ready data."""
    from aorc.iceberg.sink import offsets_in_summary

    meta = table.metadata
    snapshot = table.current_snapshot()
    summary = dict(snapshot.summary.additional_properties) if snapshot is not None else {}
    return {
        "table": ".".join(table.name()),
        "location": meta.location,
        "format_version": meta.format_version,
        "schema": [{"id": f.field_id, "name": f.name, "type": str(f.field_type),
                    "required": f.required} for f in meta.schema().fields],
        "partition_spec": [{"name": f.name, "source_id": f.source_id,
                            "transform": str(f.transform)} for f in meta.spec().fields],
        "properties": dict(meta.properties),
        "snapshots": len(meta.snapshots),
        "current_snapshot": None if snapshot is None else {
            "id": snapshot.snapshot_id, "timestamp_ms": snapshot.timestamp_ms,
            "operation": str(snapshot.summary.operation.value) if snapshot.summary else None,
            "summary": summary},
        "stream_positions": {f"{t}.{p}": o for (t, p), o in
                             sorted(offsets_in_summary(summary).items())},
    }


async def table_meta(url: str, as_json: bool, out: TextIO) -> None:
    """``aorc meta iceberg://...``."""
    info = describe_table(load_table(url))
    if as_json:
        json.dump(info, out, indent=2, default=str)
        out.write("\n")
        return
    snap = info["current_snapshot"]
    lines = [f"table: {info['table']}", f"location: {info['location']}",
             f"format version: {info['format_version']}", "schema:"]
    lines += [f"  {f['id']}: {f['name']} {f['type']}{' (required)' if f['required'] else ''}"
              for f in info["schema"]]
    spec = ", ".join(f"{f['name']}={f['transform']}({f['source_id']})"
                     for f in info["partition_spec"])
    lines.append(f"partition spec: {spec or 'unpartitioned'}")
    lines.append("properties:" + ("" if info["properties"] else " none"))
    lines += [f"  {k}: {v}" for k, v in sorted(info["properties"].items())]
    lines.append(f"snapshots: {info['snapshots']}")
    if snap is None:
        lines.append("current snapshot: none")
    else:
        lines.append(f"current snapshot: {snap['id']} ({snap['operation']})")
        lines += [f"  {k}: {v}" for k, v in sorted(snap["summary"].items())]
    if info["stream_positions"]:
        lines.append("stream positions (RollingSink): " + ", ".join(
            f"{k}={v}" for k, v in info["stream_positions"].items()))
    out.write("\n".join(lines) + "\n")


def _filters(filters: Sequence[str], table: Any) -> Any:
    from aorc.iceberg.schema import output_schema

    if not filters:
        return None
    schema = output_schema(table.metadata.schema())
    return filters_from_text(filters, schema)


async def table_rows(url: str, columns: list[str] | None, filters: Sequence[str],
                     limit: int | None, write: Callable[[pa.RecordBatch], object]) -> None:
    """Hand the matching rows of a table to ``write``, batch by batch (``limit`` rows at
    most)."""
    import contextlib

    from aorc.iceberg import iter_batches

    table = load_table(url)
    left = limit
    source = iter_batches(table, columns=columns, filters=_filters(filters, table))
    async with contextlib.aclosing(source):  # type: ignore[type-var]
        async for batch in source:
            if left is not None:
                batch = batch.slice(0, left)
                left -= batch.num_rows
            if batch.num_rows:
                write(batch)
            if left is not None and left <= 0:
                return


async def table_count(url: str, filters: Sequence[str], out: TextIO,
                      storage_options: Mapping[str, Any] | None = None) -> None:
    """``aorc count iceberg://...``: matching rows, the files planned and their bytes."""
    from aorc.iceberg.read import IcebergScan, scan_of

    table = load_table(url)
    chosen = _filters(filters, table)
    scan = IcebergScan(scan_of(table, columns=[], filters=chosen, snapshot_id=None),
                       dict(storage_options or {}))
    from aorc.iceberg import config

    scan.storage_options = config.storage_options(table.metadata.location,
                                                  table.io.properties, storage_options)
    tasks = await scan.plan()
    rows = 0
    for task in tasks:
        if chosen is None and not task.position_deletes and not task.equality_deletes:
            rows += task.file.record_count  # (no filter, no deletes: the manifest's count)
            continue
        async for batch in scan.read_file(task):
            rows += batch.num_rows
    out.write(f"rows: {rows}\nfiles: {len(tasks)}\n"
              f"bytes: {sum(t.file.file_size_in_bytes for t in tasks)}\n")
