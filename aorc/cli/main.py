"""The ``aorc`` command: look inside ORC files.

``aorc meta FILE [--json]`` describes a file: format, writer, compression, stripes (with
their column encodings), schema, user metadata, column statistics and bloom filters.
``aorc head FILE [-n 10] [--columns a,b] [--filter 'col op value' ...]`` prints the first
rows as JSON lines.
``aorc cat FILE [--format jsonl|csv] [--columns a,b] [--filter ...]`` prints every row.
``aorc convert IN OUT [--from csv|jsonl|parquet|orc] [--compression zstd] ...`` writes an ORC
file from a CSV, JSON lines, Parquet or ORC file (see :mod:`aorc.cli.convert`), with a
progress bar on standard error when it is a terminal.
``aorc kafka --bootstrap-servers HOST:PORT --topic T --group G --dest URL ...`` consumes Kafka
topics into ORC files, exactly once, until SIGTERM/SIGINT (see :mod:`aorc.cli.kafka`).

Files are local paths, ``file://`` URLs or ``s3://`` URLs; S3 settings come from the AWS
environment, ``--endpoint-url`` and ``--storage-option KEY=VALUE``. ``meta``, ``head``,
``cat`` and ``count`` also take Iceberg tables, ``iceberg://CATALOG/NAMESPACE.TABLE``
(:mod:`aorc.cli.iceberg`).

Failures (bad or missing files, bad filters or option values, store failures) are printed
as one line (``aorc: error: ...``) with exit status 1, never as a traceback. Usage errors
(unknown or missing arguments) are one line too, with argparse's exit status 2.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import json
import os
import sys
from collections.abc import Mapping, Sequence
from typing import Any, NoReturn, TextIO

import pyarrow as pa

from aorc._version import __version__
from aorc.cli.convert import FORMATS, Progress, arrow_error, convert, isatty
from aorc.cli.dataset import (
    FILTER_HELP,
    NO_DATASET_FLAGS,
    DatasetFlags,
    add_compact_command,
    add_count_command,
    add_dataset_flags,
    add_timestamp_unit_flag,
    compact_command,
    count,
    dataset_flags,
    open_rows,
    open_source,
    print_dataset_meta,
)
from aorc.cli.export import OUTPUT_FORMATS, check_output_options, output_format
from aorc.cli.iceberg import is_iceberg_url, table_count, table_meta, table_rows
from aorc.cli.jsonl import batch_jsonl, batch_jsonl_bytes
from aorc.cli.kafka import add_kafka_command, kafka_command
from aorc.cli.values import csv_column, json_default
from aorc.dataset.read import Dataset
from aorc.errors import AorcError, SchemaError
from aorc.filters.text import filters_from_text
from aorc.keys import InMemoryKeys, KeyProvider, read_key_specs
from aorc.options import WriteOptions
from aorc.read.reader import OrcReader, StripeFooterInfo

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
        "encryption": reader.encryption,
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
    lines.extend(_encryption_lines(info.get("encryption")))
    out.write("\n".join(lines) + "\n")


def _encryption_lines(enc: dict[str, Any] | None) -> list[str]:
    """The encryption block for people: keys, variants and masks (never key bytes)."""
    if not enc:
        return ["encryption: none"]
    lines = [f"encryption: key provider {enc['provider']}"]
    lines += [f"  key {k['name']} version {k['version']} ({k['algorithm']})"
              for k in enc["keys"]]
    lines += [f"  column {v['column_id']} {v['column']}: key {v['key']}@{v['version']}, "
              f"mask {v['mask'] or 'none'}" + (", decrypted" if v.get("decrypted") else "")
              for v in enc["variants"]]
    return lines


async def _meta(path: str, as_json: bool, out: TextIO,
                storage_options: Mapping[str, Any] | None = None,
                flags: DatasetFlags = NO_DATASET_FLAGS, keys: KeyProvider | None = None) -> None:
    if is_iceberg_url(path):
        await table_meta(path, as_json, out)
        return
    opened = await open_source(path, storage_options, flags=flags, keys=keys)
    if isinstance(opened, Dataset):
        await print_dataset_meta(opened, path, as_json, out)
        return
    try:
        info = await describe(opened)
    finally:
        await opened.close()
    if as_json:
        json.dump(info, out, indent=2, default=json_default)
        out.write("\n")
    else:
        print_meta(info, out)


# =========================================================================== head

async def _head(path: str, n: int, columns: list[str] | None, out: TextIO,
                storage_options: Mapping[str, Any] | None = None,
                filters: Sequence[str] = (), timestamp_unit: str = "auto",
                flags: DatasetFlags = NO_DATASET_FLAGS, keys: KeyProvider | None = None) -> None:
    if n <= 0:
        return
    if is_iceberg_url(path):
        await table_rows(path, columns, filters, n, lambda batch: out.write(batch_jsonl(batch)))
        return
    async with open_rows(path, storage_options, timestamp_unit, flags, keys) as reader:
        left = n
        selected = filters_from_text(filters, reader.schema)
        async with contextlib.aclosing(reader.iter_batches(columns, batch_size=n,
                                                           filters=selected)) as batches:
            async for batch in batches:
                out.write(batch_jsonl(batch.slice(0, left)))
                left -= min(left, batch.num_rows)
                if not left:
                    break


# =========================================================================== cat

def _csv_text(batch: pa.RecordBatch, header: bool) -> str:
    from pyarrow import csv

    table = pa.table([csv_column(c) for c in batch.columns], names=batch.schema.names)
    buffer = io.BytesIO()
    csv.write_csv(table, buffer, csv.WriteOptions(include_header=header,
                                                  quoting_style="needed"))
    return buffer.getvalue().decode("utf-8")


async def _cat(path: str, fmt: str, columns: list[str] | None, out: TextIO,
               storage_options: Mapping[str, Any] | None = None,
               progress: bool | None = None, filters: Sequence[str] = (),
               timestamp_unit: str = "auto", flags: DatasetFlags = NO_DATASET_FLAGS,
               keys: KeyProvider | None = None) -> None:
    if is_iceberg_url(path):
        await _cat_table(path, fmt, columns, out, filters)
        return
    async with open_rows(path, storage_options, timestamp_unit, flags, keys) as reader:
        selected = filters_from_text(filters, reader.schema)
        header = fmt == "csv"
        if progress is None:  # a bar on the terminal only when the rows go elsewhere
            progress = isatty(sys.stderr) and not isatty(out)
        bar = Progress(f"reading {path}", reader.num_rows, "rows", enabled=progress)
        async with contextlib.aclosing(reader.iter_batches(columns,
                                                           filters=selected)) as batches:
            async for batch in batches:
                if fmt == "csv":
                    out.write(_csv_text(batch, header))
                    header = False
                else:
                    _write_bytes(out, batch_jsonl_bytes(batch))
                bar.update(batch.num_rows)
        bar.close()
        if header:  # no rows: the header alone
            schema = (await reader.read(columns)).schema
            out.write(_csv_text(pa.RecordBatch.from_pylist([], schema=schema), True))


def _write_bytes(out: TextIO, data: memoryview) -> None:
    """Write ASCII bytes to ``out``: to its binary buffer when it has one (no decoding)."""
    buffer = getattr(out, "buffer", None)
    if buffer is None:
        out.write(str(data, "ascii"))
    else:
        out.flush()  # what went through the text layer first
        buffer.write(data)


async def _cat_table(url: str, fmt: str, columns: list[str] | None, out: TextIO,
                     filters: Sequence[str]) -> None:
    header = [fmt == "csv"]

    def write(batch: pa.RecordBatch) -> None:
        if fmt == "csv":
            out.write(_csv_text(batch, header[0]))
            header[0] = False
        else:
            out.write(batch_jsonl(batch))

    await table_rows(url, columns, filters, None, write)


# =========================================================================== options

def _size(text: str) -> int:
    """A byte size: ``65536``, ``64M``, ``1MiB``, ``256k``."""
    units = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
    value = text.strip().lower().removesuffix("ib").removesuffix("b")
    unit = value[-1:] if value[-1:] in units and value[-1:] else ""
    number = value[:-1] if unit else value
    try:
        return int(float(number) * units[unit])
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a size: {text!r}") from None


def _pairs(items: Sequence[str] | None, what: str) -> dict[str, str]:
    out = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key:  # the text is not shown: it may be a secret
            raise SchemaError(f"{what} must be KEY=VALUE, got {len(item)} characters "
                              f"{'without' if not sep else 'with an empty KEY before'} '='")
        out[key] = value
    return out


def _storage_options(args: argparse.Namespace) -> dict[str, Any] | None:
    options: dict[str, Any] = {}
    for key, value in _pairs(args.storage_option, "--storage-option").items():
        try:
            options[key] = json.loads(value)
        except json.JSONDecodeError:
            options[key] = value
    if args.endpoint_url:
        options["endpoint_url"] = args.endpoint_url
    return options or None


def _names(text: str | None) -> list[str] | None:
    return [c.strip() for c in text.split(",") if c.strip()] if text else None


def _write_options(args: argparse.Namespace) -> WriteOptions:
    return WriteOptions(**_write_fields(args))


def _write_fields(args: argparse.Namespace) -> dict[str, Any]:
    """The writer options given on the command line (and only those)."""
    options: dict[str, Any] = {}
    for name in ("compression", "compression_level", "stripe_size", "compression_block_size",
                 "row_index_stride", "bloom_filter_fpp", "dictionary_key_size_threshold",
                 "timezone"):
        value = getattr(args, name)
        if value is not None:
            options[name] = value
    if args.bloom_filter_columns:
        options["bloom_filter_columns"] = _names(args.bloom_filter_columns)
    if args.metadata:
        options["metadata"] = _pairs(args.metadata, "--metadata")
    if args.threads is not None:
        options["use_threads"] = args.threads
    if getattr(args, "encrypt", None):
        options["encrypt"] = args.encrypt
    if getattr(args, "mask", None):
        options["masks"] = args.mask
    return options


def _key_provider(args: argparse.Namespace) -> InMemoryKeys | None:
    """The master keys of ``--key NAME[@VERSION]=HEX`` and ``--keys FILE`` (one such line
    each; ``#`` comments); ``None`` when none are given."""
    specs = list(getattr(args, "key", None) or [])
    try:
        if getattr(args, "keys", None):
            specs += read_key_specs(args.keys)
        return InMemoryKeys.from_specs(specs) if specs else None
    except ValueError as exc:
        raise SchemaError(f"--key: {exc}") from None


# =========================================================================== main

class _Parser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one line and a pointer to ``--help``
    (exit status 2, as argparse's)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


def _store_parent() -> _Parser:
    parent = _Parser(add_help=False)
    group = parent.add_argument_group("storage")
    group.add_argument("--endpoint-url", help="S3 endpoint (e.g. a MinIO server)")
    group.add_argument("-S", "--storage-option", action="append", metavar="KEY=VALUE",
                       help="a storage option (JSON value or text); repeatable")
    return parent


def _add_convert(sub: Any, parent: argparse.ArgumentParser) -> None:
    extensions = "; ".join(f"{fmt}: {' '.join(exts)}" for fmt, exts in OUTPUT_FORMATS.items())
    conv = sub.add_parser(
        "convert", parents=[parent],
        help="convert between ORC and Parquet, CSV, JSON lines or Arrow IPC",
        description="Convert a CSV, JSON lines, Parquet, Arrow IPC (file or stream; Feather "
        "v2) or ORC file to ORC, Parquet, CSV, JSON lines or Arrow IPC, batch by batch, and "
        "print the rows and bytes written. The output format comes from the output's "
        f"extension ({extensions}) or --to; an unknown extension is refused. The ORC "
        "writer options apply to ORC output only; Parquet takes --compression and "
        "--compression-level, Arrow IPC --compression (zstd, lz4, none).")
    conv.add_argument("input", help="input file: path or store URL (s3://, ...); an ORC "
                      "input may be a folder or a prefix (a dataset, as read_table decides)")
    conv.add_argument("output", help="output file: path or store URL (written atomically)")
    conv.add_argument("--from", dest="fmt", choices=list(FORMATS),
                      help="input format (default: from the extension)")
    conv.add_argument("--to", choices=list(OUTPUT_FORMATS),
                      help="output format (default: from the extension; arrow: IPC file, "
                      "arrows: IPC stream)")
    conv.add_argument("--schema", help="ORC type of the output, e.g. struct<a:int,b:string>")
    conv.add_argument("--delimiter", default=",",
                      help="CSV field delimiter of the input, and of a CSV output (, or a tab "
                      "for .tsv)")
    conv.add_argument("--null-values", metavar="LIST",
                      help="comma-separated CSV fields read as null; an empty item means an "
                      "empty field (default: pyarrow.csv's list less NaN, which is a float: "
                      "'', NULL, null, NA, N/A, ...); they apply to non-string columns, and to "
                      "strings with "
                      "--strings-can-be-null")
    conv.add_argument("--strings-can-be-null", action="store_true",
                      help="CSV string columns read the null values as null too (otherwise "
                      "an empty field is an empty string)")
    _writer_flags(conv)
    _progress_flags(conv)
    conv.set_defaults(usage=conv)


def _writer_flags(parser: argparse.ArgumentParser) -> None:
    """The ORC writer's options (read back by :func:`_write_options`)."""
    parser.add_argument("--compression", choices=["zstd", "zlib", "snappy", "lz4", "none"],
                        help="codec of the output (ORC: zstd; Parquet: zstd, zlib, snappy, lz4, "
                        "none; Arrow IPC: zstd, lz4, none)")
    parser.add_argument("--compression-level", type=int,
                        help="codec level of every stream (default: ORC Java's, zstd 3)")
    parser.add_argument("--stripe-size", type=_size, help="bytes per stripe, e.g. 64M")
    parser.add_argument("--compression-block-size", type=_size, help="e.g. 256k")
    parser.add_argument("--row-index-stride", type=int, help="rows per row group (0: none)")
    parser.add_argument("--bloom-filter-columns", help="comma-separated column names")
    parser.add_argument("--bloom-filter-fpp", type=float, help="false positive rate (0.01)")
    parser.add_argument("--dictionary-key-size-threshold", type=float,
                        help="strings are dictionary encoded when the distinct values of the "
                        "first row group are at most this share of its values (0.8; 0: never, "
                        "1: always)")
    parser.add_argument("--timezone", help="zone of naive timestamps (UTC)")
    parser.add_argument("--threads", type=int,
                        help="threads that encode and compress columns (default: one per CPU)")
    parser.add_argument("--metadata", action="append", metavar="KEY=VALUE",
                        help="user metadata; repeatable")
    parser.add_argument("--encrypt", metavar="KEY:COL,...;...",
                        help="columns to encrypt and their master keys, as ORC Java's "
                        "orc.encrypt (e.g. 'pii:ssn,email;hr:salary'); needs --key/--keys")
    parser.add_argument("--mask", metavar="MASK:COL,...;...",
                        help="masks of the clear copies, as orc.mask (e.g. 'sha256:email'; "
                        "default nullify)")
    _key_flags(parser)


def _key_flags(parser: argparse.ArgumentParser) -> None:
    """``--key`` and ``--keys`` (read back by :func:`_key_provider`)."""
    parser.add_argument("--key", action="append", metavar="NAME[@VERSION]=HEX",
                        help="a master key (16 or 32 bytes in hex) of encrypted columns; "
                        "repeatable")
    parser.add_argument("--keys", metavar="FILE",
                        help="a file of master keys, one NAME[@VERSION]=HEX per line")


def _filter_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--filter", action="append", default=[], metavar="'COL OP VALUE'",
                        help=FILTER_HELP)


def _progress_flags(parser: argparse.ArgumentParser) -> None:
    bar = parser.add_mutually_exclusive_group()
    bar.add_argument("--progress", dest="progress", action="store_true", default=None,
                     help="always show the progress bar (on standard error)")
    bar.add_argument("--no-progress", dest="progress", action="store_false",
                     help="never show the progress bar")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="aorc", description="Look inside, print and convert Apache ORC "
                     "files.")
    parser.add_argument("--version", action="version", version=f"aorc {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    parent = _store_parent()
    where = ("path, file:// or s3:// URL of an ORC file, a folder or prefix of them, or an "
             "Iceberg table: iceberg://CATALOG/NAMESPACE.TABLE")
    meta = sub.add_parser("meta", parents=[parent],
                          help="describe a file: schema, stripes, statistics")
    meta.add_argument("file", help=where)
    meta.add_argument("--json", action="store_true", help="print JSON")
    add_dataset_flags(meta)
    _key_flags(meta)
    head = sub.add_parser("head", parents=[parent], help="print the first rows as JSON lines")
    head.add_argument("file", help=where)
    head.add_argument("-n", "--rows", type=int, default=10, help="rows to print (10)")
    head.add_argument("--columns", help="comma-separated column names or dotted paths")
    _filter_flag(head)
    add_timestamp_unit_flag(head)
    add_dataset_flags(head)
    _key_flags(head)
    cat = sub.add_parser("cat", parents=[parent], help="print every row (JSON lines or CSV)")
    cat.add_argument("file", help=where)
    cat.add_argument("--format", choices=["jsonl", "csv"], default="jsonl",
                     help="output format (jsonl)")
    cat.add_argument("--columns", help="comma-separated column names or dotted paths")
    _filter_flag(cat)
    add_timestamp_unit_flag(cat)
    add_dataset_flags(cat)
    _key_flags(cat)
    _progress_flags(cat)
    _add_convert(sub, parent)
    add_count_command(sub, parent)
    comp = add_compact_command(sub, parent, _size)
    _writer_flags(comp)
    _progress_flags(comp)
    add_kafka_command(sub, parent, _size)
    return parser


async def _run(args: argparse.Namespace, out: TextIO) -> None:
    options = _storage_options(args)
    flags = dataset_flags(args)
    if args.command == "meta":
        await _meta(args.file, args.json, out, options, flags, _key_provider(args))
    elif args.command == "head":
        await _head(args.file, args.rows, _names(args.columns), out, options, args.filter,
                    args.timestamp_unit, flags, _key_provider(args))
    elif args.command == "cat":
        await _cat(args.file, args.format, _names(args.columns), out, options, args.progress,
                   args.filter, args.timestamp_unit, flags, _key_provider(args))
    elif args.command == "count" and is_iceberg_url(args.source):
        await table_count(args.source, args.filter, out, options)
    elif args.command == "count":
        await count(args.source, args.filter, out, options, args.timestamp_unit, flags)
    elif args.command == "kafka":
        await kafka_command(args, options, out)
    elif args.command == "compact":
        await compact_command(args.source, args.filter, args.target_size, args.min_size, out,
                              options, _write_options(args), args.progress,
                              _key_provider(args))
    else:
        result = await convert(args.input, args.output, fmt=args.fmt, schema=args.schema,
                               delimiter=args.delimiter, storage_options=options,
                               progress=args.progress,
                               null_values=(args.null_values.split(",")
                                            if args.null_values is not None else None),
                               strings_can_be_null=args.strings_can_be_null, to=args.to,
                               keys=_key_provider(args), **_write_fields(args))
        out.write(f"wrote {result.rows} rows, {result.bytes_written} bytes to {args.output} "
                  f"({output_format(args.output, args.to)})\n")


def _error_text(exc: BaseException, args: argparse.Namespace) -> str:
    name = str(getattr(args, "input", None) or getattr(args, "file", ""))
    if isinstance(exc, pa.ArrowException):
        exc = arrow_error(exc, name, suggest_schema=not getattr(args, "schema", None))
    elif isinstance(exc, OSError) and not isinstance(exc, AorcError):
        where = exc.filename if exc.filename is not None else name
        return f"{where}: {exc.strerror or exc}"
    return " ".join(str(exc).split()) or type(exc).__name__


def _check_output(args: argparse.Namespace) -> None:
    """An unknown output extension, or writer flags the output format does not take, are
    usage errors (exit status 2), found before anything is read or written."""
    try:
        fields = _write_fields(args)
    except SchemaError:  # a malformed --metadata: reported when the command runs
        fields = {}
    try:
        check_output_options(output_format(args.output, args.to), fields)
    except SchemaError as exc:
        args.usage.error(str(exc))


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``aorc`` command; returns the exit status."""
    args = _parser().parse_args(argv)
    if args.command == "convert":
        _check_output(args)
    out = sys.stdout
    try:
        asyncio.run(_run(args, out))
        out.flush()
    except BrokenPipeError:  # e.g. `aorc head big.orc | head -1`: stop quietly
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except (AorcError, OSError, pa.ArrowException, UnicodeError) as exc:
        print(f"aorc: error: {_error_text(exc, args)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    return 0
