"""File assembly: the ORC header, the stripes as they come, and the tail.

An ORC file is::

    "ORC" | stripe 1 | stripe 2 | ... | Metadata | Footer | PostScript | PostScript length

:class:`FileAssembler` produces it piece by piece so the driver can stream it: :meth:`header`
first, :meth:`add_stripe` per finished stripe (the bytes go out at once; only the stripe's
directory entry and statistics are kept), :meth:`finish` for the tail. The Metadata (stripe
statistics) and the Footer are compressed with the file's codec; the PostScript is not.

What the footer says about the writer:

* ``writer`` = :data:`WRITER_CODE` (7). Apache ORC registers writer codes in
  ``orc_proto.proto`` (0 ORC Java, 1 ORC C++, 2 Presto, 3 Scritchley Go, 4 Trino, 5 cuDF);
  aorc is not registered and uses 7, leaving 6 to the next registration. ORC Java and C++
  treat an unknown code as a future writer that has every known fix.
* PostScript ``writerVersion`` = 6, the first version of every non-Java writer (ORC-202).
* ``softwareVersion`` = ``"aorc <version>"``, ``calendar`` = PROLEPTIC_GREGORIAN (dates and
  timestamps are counted in the proleptic Gregorian calendar, as Arrow counts them).
* File format version 0.12.

Everything here is synchronous.
"""

from __future__ import annotations

from collections.abc import Mapping

from aorc._version import __version__
from aorc.errors import AorcError
from aorc.format._proto import orc_proto_pb2 as pb
from aorc.format.codec.compression import CompressionKind
from aorc.format.columns.encode.base import EncodeOptions
from aorc.format.columns.encode.statistics import (
    merge_statistics_of,
    protos_of,
    stats_class,
)
from aorc.format.statistics import ColumnStatistics, column_statistics_from_proto
from aorc.format.types import OrcType, to_proto
from aorc.write.stripe import EncodedStripe, compress

__all__ = [
    "FILE_VERSION",
    "MAGIC",
    "WRITER_CODE",
    "WRITER_VERSION",
    "AssembledFile",
    "FileAssembler",
    "software_version",
]

#: The magic bytes at the start of the file and at the end of the PostScript.
MAGIC = b"ORC"
#: Footer ``writer`` code aorc writes (unregistered with Apache ORC; see the module docstring).
WRITER_CODE = 7
#: PostScript ``writerVersion``: the first version of a non-Java writer.
WRITER_VERSION = 6
#: Format version written: 0.12.
FILE_VERSION = (0, 12)
#: The PostScript length is stored in one byte.
_MAX_POSTSCRIPT_LENGTH = 255


def software_version() -> str:
    """The footer's ``softwareVersion``: ``"aorc <version>"``."""
    return f"aorc {__version__}"


class AssembledFile:
    """A file written through a :class:`FileAssembler` (its ``_assembler``): what the
    assembler has finished so far."""

    _assembler: FileAssembler

    @property
    def num_stripes(self) -> int:
        """Stripes finished so far."""
        return self._assembler.num_stripes

    @property
    def stripe_offsets(self) -> list[int]:
        """The byte offset of each stripe finished so far."""
        return self._assembler.stripe_offsets


class FileAssembler:
    """Builds one ORC file's bytes in order; see the module docstring.

    Args:
        schema: the file's type tree (root first, ids assigned).
        opts: the write options (codec, block size, row index stride).
        user_metadata: the footer's user metadata.
    """

    def __init__(self, schema: OrcType, opts: EncodeOptions,
                 user_metadata: Mapping[str, bytes] | None = None) -> None:
        self.schema = schema
        self.opts = opts
        self.user_metadata = dict(user_metadata or {})
        self._types = list(schema.walk())
        self._stripes: list[pb.StripeInformation] = []
        self._stripe_stats: list[pb.StripeStatistics] = []
        self._file_stats = protos_of([stats_class(t)[0](**stats_class(t)[1])
                                      for t in self._types])
        self._position = 0
        self._finished = False
        self.num_rows = 0

    @property
    def position(self) -> int:
        """Bytes of the file produced so far."""
        return self._position

    @property
    def num_stripes(self) -> int:
        """Stripes added so far."""
        return len(self._stripes)

    @property
    def stripes(self) -> list[pb.StripeInformation]:
        """The directory entries of the stripes added so far."""
        return list(self._stripes)

    @property
    def stripe_offsets(self) -> list[int]:
        """The byte offset of each stripe added so far (Iceberg's split offsets)."""
        return [s.offset for s in self._stripes]

    def column_statistics(self) -> list[ColumnStatistics]:
        """The file's statistics of each column (by column id) over the stripes added so
        far, as a reader of the finished file sees them (``bytes_on_disk`` included)."""
        return [column_statistics_from_proto(p, t, writer_version=WRITER_VERSION,
                                             writer=WRITER_CODE)
                for p, t in zip(self._file_stats, self._types, strict=True)]

    def header(self) -> bytes:
        """The file's first bytes, ``"ORC"``; call once, before anything else."""
        if self._position:
            raise AorcError("internal error: the ORC header was already produced")
        self._position = len(MAGIC)
        return MAGIC

    def add_stripe(self, stripe: EncodedStripe) -> bytes:
        """Record a stripe placed right after what was produced so far; returns its bytes."""
        self.record_stripe(stripe)
        return stripe.data

    def record_stripe(self, stripe: EncodedStripe) -> None:
        """Record a stripe placed right after what was produced so far (its bytes are the
        caller's to write: ``stripe.parts``)."""
        if not self._position or self._finished:
            raise AorcError("internal error: a stripe was added outside the file's body")
        if len(stripe.column_stats) != len(self._types):
            raise AorcError(f"internal error: the stripe has statistics of "
                            f"{len(stripe.column_stats)} columns, the schema has "
                            f"{len(self._types)}")
        self._stripes.append(stripe.information(self._position))
        self._stripe_stats.append(pb.StripeStatistics(colStats=stripe.column_stats))
        self._file_stats = merge_statistics_of(self._file_stats, stripe.column_stats,
                                               self._types)
        self._position += stripe.size
        self.num_rows += stripe.num_rows

    def statistics_prefix(self) -> bytes:
        """Bytes placed before the Metadata (encrypted stripe statistics; none here)."""
        return b""

    def footer(self) -> pb.Footer:
        """The file footer for the stripes added so far."""
        return pb.Footer(
            headerLength=len(MAGIC),
            contentLength=self._position,
            stripes=self._stripes,
            types=to_proto(self.schema),
            metadata=[pb.UserMetadataItem(name=k, value=v)
                      for k, v in self.user_metadata.items()],
            numberOfRows=self.num_rows,
            statistics=self._file_stats,
            rowIndexStride=self.opts.row_index_stride,
            writer=WRITER_CODE,
            calendar=pb.PROLEPTIC_GREGORIAN,
            softwareVersion=software_version(),
        )

    def finish(self) -> bytes:
        """The file's tail: Metadata, Footer, PostScript and the PostScript's length."""
        if not self._position or self._finished:
            raise AorcError("internal error: the file tail was requested twice or too early")
        self._finished = True
        prefix = self.statistics_prefix()
        metadata = compress(pb.Metadata(stripeStats=self._stripe_stats).SerializeToString(),
                            self.opts, None)
        footer = compress(self.footer().SerializeToString(), self.opts, None)
        kind = CompressionKind(self.opts.compression)
        postscript = pb.PostScript(
            footerLength=len(footer),
            compression=int(kind),  # type: ignore[arg-type]
            version=list(FILE_VERSION),
            metadataLength=len(metadata),
            writerVersion=WRITER_VERSION,
            magic=MAGIC.decode(),
        )
        if kind is not CompressionKind.NONE:
            postscript.compressionBlockSize = self.opts.compression_block_size
        if prefix:
            postscript.stripeStatisticsLength = len(prefix)
        ps: bytes = postscript.SerializeToString()
        if len(ps) > _MAX_POSTSCRIPT_LENGTH:  # pragma: no cover - a PostScript is ~30 bytes
            raise AorcError(f"internal error: PostScript of {len(ps)} bytes")
        tail: bytes = prefix + metadata + footer + ps + bytes([len(ps)])
        self._position += len(tail)
        return tail
