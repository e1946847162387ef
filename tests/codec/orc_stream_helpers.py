"""Tests-only helpers: write ORC files with independent writers and pull out raw streams.

The files must be uncompressed (CompressionKind NONE), so that every stream's bytes are the
encoded values themselves. Parsing uses only the generated protobuf module, not aorc's own
tail or stripe code, so these helpers stay independent of the code under test.
"""

from __future__ import annotations

import dataclasses
import gzip
import io
import json
import pathlib
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pyarrow.orc as pa_orc
from helpers.corpus import corpus_root

from aorc.format._proto import orc_proto_pb2 as pb

#: The corpus folder (``AORC_ORC_CONFORMANCE`` or ../shared/orc-conformance); a folder that
#: does not exist when the corpus is absent, so that ``CONFORMANCE.is_dir()`` tells.
CONFORMANCE = corpus_root() or pathlib.Path("/nonexistent/orc-conformance")


@dataclasses.dataclass
class Stripe:
    """The streams of one stripe, keyed by (column id, stream kind)."""

    num_rows: int
    streams: dict[tuple[int, int], bytes]
    encodings: list[Any]  # pb.ColumnEncoding per column id

    def stream(self, column: int, kind: int) -> bytes | None:
        """The bytes of one stream, or None when the stripe has no such stream."""
        return self.streams.get((column, kind))

    def row_index(self, column: int) -> list[list[int]]:
        """The positions of each row-group entry of a column's ROW_INDEX stream."""
        data = self.streams[(column, pb.Stream.ROW_INDEX)]
        return [list(entry.positions) for entry in pb.RowIndex.FromString(data).entry]


@dataclasses.dataclass
class OrcFile:
    """An uncompressed ORC file split into its parts."""

    footer: Any  # pb.Footer
    stripes: list[Stripe]


def parse_orc(blob: bytes) -> OrcFile:
    """Split an uncompressed ORC file into its footer and the raw streams of every stripe."""
    ps_len = blob[-1]
    postscript = pb.PostScript.FromString(blob[-1 - ps_len : -1])
    assert postscript.compression == pb.NONE, "the helpers only read uncompressed files"
    footer_end = len(blob) - 1 - ps_len
    footer = pb.Footer.FromString(blob[footer_end - postscript.footerLength : footer_end])
    stripes = []
    for info in footer.stripes:
        footer_start = info.offset + info.indexLength + info.dataLength
        stripe_footer = pb.StripeFooter.FromString(
            blob[footer_start : footer_start + info.footerLength]
        )
        streams: dict[tuple[int, int], bytes] = {}
        position = info.offset
        for stream in stripe_footer.streams:
            streams[(stream.column, stream.kind)] = blob[position : position + stream.length]
            position += stream.length
        stripes.append(Stripe(info.numberOfRows, streams, list(stripe_footer.columns)))
    return OrcFile(footer, stripes)


def write_pyarrow(
    columns: dict[str, pa.Array],
    *,
    file_version: str = "0.12",
    row_index_stride: int = 10000,
    strategy: str = "compression",
) -> OrcFile:
    """Write a table with pyarrow.orc (ORC C++) uncompressed and parse the result.

    ``strategy="compression"`` makes ORC C++ bit-pack DIRECT and DELTA runs at every width;
    ``"speed"`` rounds widths up to 1, 2, 4 or a multiple of 8.
    """
    sink = pa.BufferOutputStream()
    pa_orc.write_table(
        pa.table(columns),
        sink,
        compression="uncompressed",
        compression_strategy=strategy,
        file_version=file_version,
        row_index_stride=row_index_stride,
    )
    return parse_orc(sink.getvalue().to_pybytes())


def write_pyorc(schema: str, rows: list[Any], **options: Any) -> OrcFile:
    """Write rows with pyorc (ORC C++ through its own bindings) uncompressed and parse it."""
    import pyorc

    buf = io.BytesIO()
    with pyorc.Writer(buf, schema, compression=pyorc.CompressionKind.NONE, **options) as writer:
        writer.writerows(rows)
    return parse_orc(buf.getvalue())


def read_expected(name: str) -> list[Any]:
    """Rows of a conformance file's expected output (decimals kept exact as Decimal)."""
    path = CONFORMANCE / "expected" / f"{name}.jsn.gz"
    with gzip.open(path, "rt", encoding="utf-8", errors="surrogateescape") as f:
        return [json.loads(line, parse_float=Decimal, strict=False) for line in f]
