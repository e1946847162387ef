"""The records an :class:`aorc.OrcReader` describes a file with: its writer, its stripes, a
stripe's streams and column encodings (re-exported by :mod:`aorc.read.reader` and
:mod:`aorc`)."""

from __future__ import annotations

from dataclasses import dataclass

from aorc.format.statistics import ColumnStatistics
from aorc.format.tail import StripeInfo

__all__ = [
    "ColumnEncodingInfo",
    "StreamDescription",
    "StripeFooterInfo",
    "StripeMetadata",
    "WriterInfo",
]


@dataclass(frozen=True)
class WriterInfo:
    """Which software wrote a file.

    Attributes:
        name: the writer implementation: ``"Java"``, ``"C++"``, ``"Presto"``, ``"Go"``,
            ``"Trino"``, ``"cuDF"`` or ``"unknown(N)"``.
        code: the footer's writer code (``None`` when absent, which means ORC Java).
        writer_version: the PostScript's writer version number.
        writer_version_name: its name, e.g. ``"HIVE-8732"``, ``"ORC-135"``, ``"original"``.
        software_version: the footer's software version text, when recorded.
    """

    name: str
    code: int | None
    writer_version: int
    writer_version_name: str
    software_version: str | None


@dataclass(frozen=True)
class StripeMetadata(StripeInfo):
    """Where one stripe lies and what it holds.

    Attributes:
        index: the stripe's position in the file (0-based).
        offset: byte offset of the stripe in the file.
        index_length: bytes of index streams (row indexes, bloom filters).
        data_length: bytes of data streams.
        footer_length: bytes of the stripe footer.
        num_rows: rows in the stripe.
        statistics: the stripe's column statistics, indexed by column id or dotted name,
            or ``None`` when the file records no stripe statistics.
    """

    statistics: list[ColumnStatistics] | None


@dataclass(frozen=True)
class StreamDescription:
    """One stream of a stripe: ``kind`` is the ORC name, e.g. ``"DATA"``, ``"ROW_INDEX"``."""

    column: int
    kind: str
    offset: int
    length: int


@dataclass(frozen=True)
class ColumnEncodingInfo:
    """How a column is encoded in a stripe: ``kind`` is e.g. ``"DIRECT_V2"``,
    ``"DICTIONARY_V2"``; ``dictionary_size`` is set for dictionary encodings."""

    column: int
    kind: str
    dictionary_size: int | None


@dataclass(frozen=True)
class StripeFooterInfo:
    """The contents of a stripe footer.

    Attributes:
        index: the stripe's position in the file.
        streams: every stream of the stripe, in file order, with absolute offsets.
        encodings: one entry per column id.
        writer_timezone: the time zone timestamps were written in, when recorded.
    """

    index: int
    streams: tuple[StreamDescription, ...]
    encodings: tuple[ColumnEncodingInfo, ...]
    writer_timezone: str | None

    @property
    def bloom_filter_columns(self) -> list[int]:
        """Column ids that have a bloom filter stream in this stripe (sorted)."""
        kinds = {"BLOOM_FILTER", "BLOOM_FILTER_UTF8"}
        return sorted({s.column for s in self.streams if s.kind in kinds})
