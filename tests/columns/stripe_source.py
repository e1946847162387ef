"""Test helpers: cut a local ORC file into per-stripe decompressed streams, and write files.

The streams are found with aorc's tail and stripe parsers and decompressed with its codec
layer; the column decoders under test then see exactly what the async reader gives them, but
with no I/O and no threads, so tests and profiles of the decoders stay synchronous.
"""

from __future__ import annotations

import io
import pathlib
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.orc as pa_orc

from aorc.format.codec.compression import decompress_stream
from aorc.format.columns import DecodeOptions, DictStripeStreams, decode_stripe
from aorc.format.projection import select_columns
from aorc.format.stripe import DATA_KINDS, parse_stripe_footer, stream_layout
from aorc.format.tail import FileTail, NeedBytes, parse_tail
from aorc.format.types import to_arrow_schema

CONFORMANCE = pathlib.Path(__file__).resolve().parents[2] / ".." / "shared" / "orc-conformance"


@dataclass
class Stripe:
    """One stripe's decoder input."""

    streams: DictStripeStreams
    num_rows: int


def open_tail(data: bytes) -> FileTail:
    """Parse the tail of a whole file held in memory."""
    tail = parse_tail(data, len(data))
    if isinstance(tail, NeedBytes):  # pragma: no cover - the whole file was given
        raise AssertionError("tail needs more bytes than the file")
    return tail


def stripes(data: bytes) -> tuple[FileTail, list[Stripe]]:
    """The tail and every stripe's decompressed streams of a file held in memory."""
    tail = open_tail(data)
    out = []
    for info in tail.stripes:
        footer = parse_stripe_footer(data[info.footer_offset:info.end], tail, info)
        plain = {}
        for s in stream_layout(info, footer):
            if s.kind in DATA_KINDS:
                raw = memoryview(data)[s.offset:s.end]
                plain[s.column, s.kind] = decompress_stream(raw, tail.compression, tail.block_size)
        out.append(Stripe(DictStripeStreams.from_footer(footer, plain), info.num_rows))
    return tail, out


def decode_file(data: bytes, columns: list[str] | None = None, **options: Any) -> pa.Table:
    """Decode every stripe of a file with :func:`decode_stripe` into one table."""
    tail, parts = stripes(data)
    opts = DecodeOptions.from_tail(tail, **options)
    selected = select_columns(tail.schema, columns)
    batches = [decode_stripe(tail.schema, selected, s.streams, s.num_rows, opts) for s in parts]
    if not batches:
        schema = to_arrow_schema(tail.schema)
        return schema.empty_table()
    return pa.Table.from_batches(batches)


def pyarrow_orc_bytes(table: pa.Table, **kwargs: Any) -> bytes:
    """``table`` written by pyarrow.orc (ORC C++), uncompressed unless asked otherwise."""
    kwargs.setdefault("compression", "uncompressed")
    sink = io.BytesIO()
    pa_orc.write_table(table, sink, **kwargs)
    return sink.getvalue()


def pyorc_bytes(schema: str, rows: list[Any], **kwargs: Any) -> bytes:
    """Rows written by pyorc (ORC C++), uncompressed unless asked otherwise."""
    import pyorc

    kwargs.setdefault("compression", pyorc.CompressionKind.NONE)
    sink = io.BytesIO()
    with pyorc.Writer(sink, schema, **kwargs) as writer:
        writer.writerows(rows)
    return sink.getvalue()


def pyarrow_read(data: bytes, columns: list[str] | None = None) -> pa.Table:
    """pyarrow.orc's reading of a file held in memory."""
    return pa_orc.ORCFile(io.BytesIO(data)).read(columns=columns)
