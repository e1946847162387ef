"""The ``aorc`` command: look inside ORC files.

``aorc meta FILE [--json]`` describes a file: format, writer, compression, stripes (with
their column encodings), schema, user metadata, column statistics and bloom filters.
``aorc head FILE [-n 10] [--columns a,b]`` prints the first rows as JSON lines.

Errors aorc raises on purpose are printed as one line (``aorc: error: ...``) with exit
status 1.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import datetime
import decimal
import json
import math
import os
import sys
from collections.abc import Sequence
from typing import Any, TextIO

import pyarrow as pa

from aorc import __version__
from aorc.errors import AorcError
from aorc.reader import OrcReader, StripeFooterInfo, open_reader

__all__ = ["main"]


# =========================================================================== meta

async def describe(reader: OrcReader) -> dict[str, Any]:
    """Everything ``aorc meta`` shows about an open file, as JSON-ready data."""
    footers = [await reader.read_stripe_footer(i) for i in range(reader.num_stripes)]
    names = reader.column_names()
    writer = reader.writer
    bloom = sorted({c for f in footers for c in f.bloom_filter_columns})
    return {
        "path": reader.path,
        "file_length": reader.file_length,
        "file_version": reader.file_version,
        "writer": {"name": writer.name, "code": writer.code,
                   "writer_version": writer.writer_version,
                   "writer_version_name": writer.writer_version_name,
                   "software_version": writer.software_version},
        "compression": reader.compression,
        "compression_block_size": reader.compression_block_size,
        "num_rows": reader.num_rows,
        "num_stripes": reader.num_stripes,
        "row_index_stride": reader.row_index_stride,
        "calendar": reader.calendar,
        "schema": {"orc": reader.orc_type,
                   "arrow": [{"name": f.name, "type": str(f.type)} for f in reader.schema]},
        "metadata": {key: len(value) for key, value in reader.metadata.items()},
        "statistics": [{"column": cid, "name": names[cid], **stats.to_dict()}
                       for cid, stats in enumerate(reader.statistics)],
        "stripes": [_stripe_dict(s, f) for s, f in zip(reader.stripes, footers, strict=True)],
        "bloom_filter_columns": [{"column": c, "name": names[c]} for c in bloom],
    }


def _stripe_dict(stripe: Any, footer: StripeFooterInfo) -> dict[str, Any]:
    return {
        "index": stripe.index,
        "offset": stripe.offset,
        "index_length": stripe.index_length,
        "data_length": stripe.data_length,
        "footer_length": stripe.footer_length,
        "num_rows": stripe.num_rows,
        "writer_timezone": footer.writer_timezone,
        "encodings": [{"column": e.column, "kind": e.kind,
                       **({"dictionary_size": e.dictionary_size}
                          if e.dictionary_size is not None else {})}
                      for e in footer.encodings],
        "bloom_filter_columns": footer.bloom_filter_columns,
        "statistics": ([s.to_dict() for s in stripe.statistics]
                       if stripe.statistics is not None else None),
    }


def _encoding_text(e: dict[str, Any]) -> str:
    size = f"[{e['dictionary_size']}]" if "dictionary_size" in e else ""
    return f"{e['column']}:{e['kind']}{size}"


def _stats_text(stats: dict[str, Any]) -> str:
    skip = {"column", "name", "kind"}
    return ", ".join(f"{k}={v}" for k, v in stats.items() if k not in skip)


def print_meta(info: dict[str, Any], out: TextIO) -> None:
    """Print the output of :func:`describe` for people."""
    w = info["writer"]
    software = f", software {w['software_version']}" if w["software_version"] else ""
    code = "no writer code" if w["code"] is None else f"code {w['code']}"
    lines = [
        f"path: {info['path']} ({info['file_length']} bytes)",
        f"file version: {info['file_version']}",
        f"writer: {w['name']} ({code}), writer version "
        f"{w['writer_version_name']} ({w['writer_version']}){software}",
        f"compression: {info['compression']}, block size {info['compression_block_size']}",
        f"rows: {info['num_rows']}",
        f"stripes: {info['num_stripes']}",
        f"row index stride: {info['row_index_stride']}",
        f"calendar: {info['calendar']}",
        f"schema: {info['schema']['orc']}",
        "arrow schema:",
        *(f"  {f['name']}: {f['type']}" for f in info["schema"]["arrow"]),
        "user metadata:" + ("" if info["metadata"] else " none"),
        *(f"  {k}: {n} bytes" for k, n in info["metadata"].items()),
        "column statistics:" + ("" if info["statistics"] else " none"),
        *(f"  {s['column']} {s['name'] or '<root>'} ({s['kind']}): {_stats_text(s)}"
          for s in info["statistics"]),
        "stripe details:" + ("" if info["stripes"] else " none"),
    ]
    for s in info["stripes"]:
        lines.append(f"  {s['index']}: offset {s['offset']}, index {s['index_length']}, "
                     f"data {s['data_length']}, footer {s['footer_length']}, "
                     f"rows {s['num_rows']}")
        lines.append("     encodings: " + " ".join(_encoding_text(e) for e in s["encodings"]))
        if s["writer_timezone"]:
            lines.append(f"     writer timezone: {s['writer_timezone']}")
    bloom = ", ".join(f"{b['column']} {b['name'] or '<root>'}"
                      for b in info["bloom_filter_columns"])
    lines.append(f"bloom filters: {bloom or 'none'}")
    out.write("\n".join(lines) + "\n")


async def _meta(path: str, as_json: bool, out: TextIO) -> None:
    async with open_reader(path) as reader:
        info = await describe(reader)
    if as_json:
        json.dump(info, out, indent=2, default=_json_default)
        out.write("\n")
    else:
        print_meta(info, out)


# =========================================================================== head

def _json_default(value: Any) -> Any:
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, (datetime.datetime, datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, datetime.timedelta):
        return value.total_seconds()
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(value).decode("ascii")
    return str(value)


def _plain(value: Any) -> Any:
    """Values of ``to_pylist`` made JSON-friendly: map entries as key/value objects,
    non-finite floats as strings."""
    if isinstance(value, list):
        if value and all(isinstance(v, tuple) and len(v) == 2 for v in value):
            return [{"key": _plain(k), "value": _plain(v)} for k, v in value]
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return value


def _rows(batch: pa.RecordBatch) -> list[dict[str, Any]]:
    columns = [batch.column(i).to_pylist() for i in range(batch.num_columns)]
    names = batch.schema.names
    return [{n: _plain(col[r]) for n, col in zip(names, columns, strict=True)}
            for r in range(batch.num_rows)]


async def _head(path: str, n: int, columns: list[str] | None, out: TextIO) -> None:
    if n <= 0:
        return
    async with open_reader(path) as reader:
        left = n
        async with contextlib.aclosing(reader.iter_batches(columns, batch_size=n)) as batches:
            async for batch in batches:
                for row in _rows(batch.slice(0, left)):
                    out.write(json.dumps(row, default=_json_default) + "\n")
                left -= min(left, batch.num_rows)
                if not left:
                    break


# =========================================================================== main

def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="aorc", description="Look inside Apache ORC files.")
    parser.add_argument("--version", action="version", version=f"aorc {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    meta = sub.add_parser("meta", help="describe a file: schema, stripes, statistics")
    meta.add_argument("file", help="path or file:// URL of an ORC file")
    meta.add_argument("--json", action="store_true", help="print JSON")
    head = sub.add_parser("head", help="print the first rows as JSON lines")
    head.add_argument("file", help="path or file:// URL of an ORC file")
    head.add_argument("-n", "--rows", type=int, default=10, help="rows to print (10)")
    head.add_argument("--columns", help="comma-separated column names or dotted paths")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``aorc`` command; returns the exit status."""
    args = _parser().parse_args(argv)
    out = sys.stdout
    try:
        if args.command == "meta":
            asyncio.run(_meta(args.file, args.json, out))
        else:
            columns = ([c.strip() for c in args.columns.split(",") if c.strip()]
                       if args.columns else None)
            asyncio.run(_head(args.file, args.rows, columns, out))
        out.flush()
    except AorcError as exc:
        message = " ".join(str(exc).split()) or type(exc).__name__
        print(f"aorc: error: {message}", file=sys.stderr)
        return 1
    except BrokenPipeError:  # e.g. `aorc head big.orc | head -1`: stop quietly
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        return 130
    return 0
