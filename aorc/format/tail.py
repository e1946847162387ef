"""The file tail: PostScript, Footer and Metadata, parsed from the last bytes of a file.

An ORC file ends with::

    ... stripes | [encrypted stripe statistics] | Metadata | Footer | PostScript | psLen (1 byte)

The PostScript is never compressed; the Footer and the Metadata (stripe statistics) are
compressed with the file's codec. :func:`parse_tail` works on the last bytes of a file and
either returns a :class:`FileTail` or asks, with :class:`NeedBytes`, for a longer tail. It never
performs I/O: the async driver reads :data:`TAIL_READ_SIZE` bytes first and re-reads when asked.

Header check: files of format 0.11 may lack the ``ORC`` magic at the end of the PostScript;
ORC Java then checks the first three bytes of the file instead. That needs a read of the file's
head, which the driver avoids: :func:`parse_tail` checks the head only when ``tail`` holds the
whole file and otherwise accepts the file (the PostScript and Footer must still parse).

Bounds: a compressed section (footer, metadata, stripe footer, row index) may decompress to
at most :func:`section_limit` bytes: :data:`SECTION_EXPANSION` (128) times the file's
length, or :data:`SECTION_FLOOR` (1 MiB) for small files. Past it the file is corrupt: the
section describes more stripes, columns or statistics than a file of that size holds (the
largest legitimate ratio measured is 32, a zero-row file of 3,000 long column names at zstd
level 19; with rows, these sections are smaller than their file). Decompression stops at
the limit, before protobuf parses anything (parsing takes up to 44 bytes of memory per byte
of empty repeated messages). A footer lists at most one stripe per byte of the stripe area.
See ``docs/resources.md``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, TypeVar

from google.protobuf import unknown_fields
from google.protobuf.message import DecodeError, Message

from aorc.errors import (
    CorruptFileError,
    FormatError,
    ResourceLimitError,
    UnsupportedFeatureError,
    UnsupportedVersionError,
)
from aorc.format._proto import orc_proto_pb2 as pb
from aorc.format.codec.compression import Budget, CompressionKind, decompress_stream
from aorc.format.statistics import ColumnStatistics, column_statistics_from_proto
from aorc.format.types import OrcType, types_from_proto

_M = TypeVar("_M", bound=Message)

__all__ = [
    "DEFAULT_BLOCK_SIZE",
    "DEFAULT_MAX_COLUMNS",
    "MAGIC",
    "MAX_COLUMNS_ENV",
    "TAIL_READ_SIZE",
    "FileTail",
    "NeedBytes",
    "StripeInfo",
    "decompress",
    "max_columns",
    "parse_compressed",
    "parse_message",
    "parse_tail",
    "section_limit",
    "unknown_enum_value",
    "writer_name",
    "writer_version_name",
]

#: How many bytes the driver reads from the end of a file first (as ORC Java and C++ do).
TAIL_READ_SIZE = 16 * 1024
#: The magic string at the start of every ORC file and at the end of its PostScript.
MAGIC = b"ORC"
#: Compression block size assumed when the PostScript does not record one.
DEFAULT_BLOCK_SIZE = 256 * 1024
#: Compressed chunk headers hold lengths in 23 bits: block sizes must stay below this.
MAX_BLOCK_SIZE = 1 << 23
#: Largest tail (metadata + footer + PostScript) accepted, as ORC Java (a Java int).
MAX_TAIL_LENGTH = (1 << 31) - 1

#: A compressed metadata section may decompress to this many times the file's length ...
SECTION_EXPANSION = 128
#: ... or to this many bytes, whichever is more (see :func:`section_limit`).
SECTION_FLOOR = 1 << 20

#: Format versions ORC Java reads; every other version is a "future" version it refuses.
V0_11 = (0, 11)
V0_12 = (0, 12)
UNSTABLE_PRE_2_0 = (1, 9999)
SUPPORTED_VERSIONS = frozenset({V0_11, V0_12, UNSTABLE_PRE_2_0})

_WRITERS = {0: "Java", 1: "C++", 2: "Presto", 3: "Go", 4: "Trino", 5: "cuDF", 7: "aorc"}
_JAVA_WRITER_VERSIONS = (
    "original", "HIVE-8732", "HIVE-4243", "HIVE-12055", "HIVE-13083",
    "ORC-101", "ORC-135", "ORC-517", "ORC-203", "ORC-14",
)
#: The first writer version every non-Java writer uses (ORC-202).
FIRST_NON_JAVA_WRITER_VERSION = 6


def section_limit(file_length: int) -> int:
    """The most bytes a compressed metadata section (footer, metadata, stripe footer) of a
    file of ``file_length`` bytes may decompress to (see the module's docstring)."""
    return max(SECTION_FLOOR, SECTION_EXPANSION * file_length)


def writer_name(writer: int | None) -> str:
    """Name of a footer ``writer`` code: ``"Java"``, ``"C++"``, ..., ``"unknown(N)"``.

    An absent code means ORC Java (files from before the field existed).
    """
    if writer is None:
        return _WRITERS[0]
    return _WRITERS.get(writer, f"unknown({writer})")


def writer_version_name(writer: int | None, writer_version: int) -> str:
    """Name of a PostScript ``writerVersion`` for the given writer code.

    ORC Java versions are named after the fix they mark (``"HIVE-8732"``, ``"ORC-14"``, ...);
    other writers start at 6 (``"original"``). Unknown versions give ``"future(N)"``.
    """
    if writer is None or writer == 0:
        if 0 <= writer_version < len(_JAVA_WRITER_VERSIONS):
            return _JAVA_WRITER_VERSIONS[writer_version]
    elif writer_version == FIRST_NON_JAVA_WRITER_VERSION:
        return "original"
    return f"future({writer_version})"


@dataclass(frozen=True)
class NeedBytes:
    """Answer of :func:`parse_tail` when the tail is too short: read the last ``n`` bytes."""

    n: int


@dataclass(frozen=True)
class StripeInfo:
    """Where one stripe lies in the file (from the footer's StripeInformation).

    The stripe occupies ``offset`` to ``end``: index streams, data streams, stripe footer.
    """

    index: int
    offset: int
    index_length: int
    data_length: int
    footer_length: int
    num_rows: int

    @property
    def data_offset(self) -> int:
        """Absolute offset of the first data-area stream."""
        return self.offset + self.index_length

    @property
    def footer_offset(self) -> int:
        """Absolute offset of the stripe footer."""
        return self.offset + self.index_length + self.data_length

    @property
    def end(self) -> int:
        """Absolute offset just past the stripe."""
        return self.footer_offset + self.footer_length

    @property
    def length(self) -> int:
        """Total length of the stripe in bytes."""
        return self.end - self.offset


@dataclass(eq=False)
class FileTail:
    """Everything the tail of an ORC file says about it.

    Attributes:
        postscript: the parsed PostScript.
        footer: the parsed Footer.
        file_length: length of the whole file in bytes.
        postscript_length: length of the serialized PostScript.
        version: format version ``(major, minor)``; ``(0, 11)`` when unrecorded.
        compression: the codec of every compressed structure and stream.
        block_size: compression block size (256 KiB when unrecorded).
        writer_version: PostScript ``writerVersion`` (0 when absent).
        writer: footer ``writer`` code, ``None`` when absent (ORC Java).
        software_version: footer ``softwareVersion``, ``None`` when absent.
        calendar: footer ``calendar`` (``pb.CalendarKind`` value; 0 = unknown/absent).
        schema: the type tree.
        num_rows: footer row count.
        row_index_stride: rows per row group (0 = no row index).
        stripes: stripe locations, validated against the file.
        user_metadata: user key/value metadata.
        has_encryption: the file has encrypted columns (footer ``encryption``).
        source: name of the file for error messages, when known.
        decryption: the decrypted local keys of a reader opened with keys (see
            :func:`aorc.format.encryption.decrypted_tail`); ``None`` otherwise.
    """

    postscript: pb.PostScript
    footer: pb.Footer
    file_length: int
    postscript_length: int
    version: tuple[int, int]
    compression: CompressionKind
    block_size: int
    writer_version: int
    writer: int | None
    software_version: str | None
    calendar: int
    schema: OrcType
    num_rows: int
    row_index_stride: int
    stripes: list[StripeInfo]
    user_metadata: dict[str, bytes]
    has_encryption: bool
    source: str | None = None
    _metadata_bytes: bytes = field(default=b"", repr=False)
    decryption: Any = field(default=None, repr=False)  # FileKeys (encryption imports tail)

    # ------------------------------------------------------------------ descriptions
    @property
    def is_unstable_pre_2(self) -> bool:
        """Version UNSTABLE-PRE-2.0 ([1, 9999]): decimals up to 18 digits are Decimal64."""
        return self.version == UNSTABLE_PRE_2_0

    @property
    def format_version(self) -> str:
        """The format version as text: ``"0.12"``, ``"UNSTABLE-PRE-2.0"``."""
        if self.is_unstable_pre_2:
            return "UNSTABLE-PRE-2.0"
        return f"{self.version[0]}.{self.version[1]}"

    @property
    def writer_name(self) -> str:
        """Name of the writer implementation (see :func:`writer_name`)."""
        return writer_name(self.writer)

    @property
    def writer_version_name(self) -> str:
        """Name of the writer version (see :func:`writer_version_name`)."""
        return writer_version_name(self.writer, self.writer_version)

    @property
    def num_columns(self) -> int:
        """Number of columns (type tree nodes, the root included)."""
        return self.schema.max_column_id + 1

    @property
    def content_length(self) -> int:
        """Bytes from the start of the file to the end of the last stripe (footer field)."""
        return self.footer.contentLength

    @property
    def tail_length(self) -> int:
        """Bytes taken by Metadata, Footer, PostScript and its length byte."""
        ps = self.postscript
        return 1 + self.postscript_length + ps.footerLength + ps.metadataLength

    def where(self) -> str:
        """File context for error messages."""
        name = self.source or "ORC file"
        return f"{name} ({self.file_length} bytes)"

    # ------------------------------------------------------------------ statistics
    @cached_property
    def metadata(self) -> pb.Metadata | None:
        """The Metadata message (stripe statistics), parsed on first use; ``None`` if absent.

        Raises:
            CorruptFileError: when the Metadata does not decompress or parse.
        """
        if not self._metadata_bytes:
            return None
        return parse_compressed(pb.Metadata, self._metadata_bytes, self.compression,
                                self.block_size, f"{self.where()}: metadata",
                                limit=section_limit(self.file_length))

    @cached_property
    def column_statistics(self) -> list[ColumnStatistics]:
        """File-level statistics, one per column id (shorter if the footer has fewer)."""
        return self._stats_views(self.footer.statistics)

    @cached_property
    def stripe_statistics(self) -> list[list[ColumnStatistics]] | None:
        """Per-stripe statistics from the Metadata, one list per stripe; ``None`` if absent."""
        meta = self.metadata
        if meta is None:
            return None
        return [self._stats_views(s.colStats) for s in meta.stripeStats]

    def stripe_column_statistics(self, index: int,
                                 writer_timezone: str | None = None) -> list[ColumnStatistics]:
        """Statistics of one stripe, one per column id.

        Args:
            index: the stripe's index.
            writer_timezone: the stripe footer's ``writerTimezone``, which converts the
                writer-local timestamp statistics of files from before ORC-135.

        Raises:
            CorruptFileError: when the Metadata is damaged or has no entry for the stripe.
        """
        meta = self.metadata
        if meta is None or not 0 <= index < len(meta.stripeStats):
            raise CorruptFileError(f"{self.where()}: no statistics for stripe {index}")
        return self._stats_views(meta.stripeStats[index].colStats, writer_timezone)

    def slim(self, tail_bytes: bytes) -> FileTail:
        """This tail without its parsed PostScript and Footer messages (about 3.5 KiB of a
        small file's 4.4 KiB parsed tail): :attr:`postscript` and :attr:`footer` are parsed
        again from ``tail_bytes`` (the bytes this tail was parsed from) whenever asked for.
        Reading rows needs neither; statistics and lengths parse them. For the many tails of
        a dataset kept between its open and its reads."""
        slim = object.__new__(_SlimTail)
        state = slim.__dict__
        state.update(self.__dict__)
        for name in _SLIM_DROPS:
            state.pop(name, None)
        state["_tail_bytes"] = tail_bytes
        return slim

    def _stats_views(self, protos: Iterable[pb.ColumnStatistics],
                     writer_timezone: str | None = None) -> list[ColumnStatistics]:
        return [
            column_statistics_from_proto(p, t, writer_version=self.writer_version,
                                         writer=self.writer, writer_timezone=writer_timezone)
            for p, t in zip(protos, self.schema.walk(), strict=False)
        ]


#: What :meth:`FileTail.slim` leaves out: the messages, and what is derived from them.
_SLIM_DROPS = frozenset(("postscript", "footer", "metadata", "column_statistics",
                         "stripe_statistics"))


class _SlimTail(FileTail):
    """A :class:`FileTail` whose PostScript and Footer are parsed from its bytes on each
    use (see :meth:`FileTail.slim`)."""

    _tail_bytes: bytes

    @property
    def postscript(self) -> pb.PostScript:  # type: ignore[override]
        """The PostScript, parsed again."""
        data = self._tail_bytes
        return parse_message(pb.PostScript, data[-1 - self.postscript_length:-1],
                             f"{self.where()}: PostScript")

    @property
    def footer(self) -> pb.Footer:  # type: ignore[override]
        """The Footer, parsed again."""
        data = self._tail_bytes
        end = len(data) - 1 - self.postscript_length
        size = self.postscript.footerLength
        return parse_compressed(pb.Footer, memoryview(data)[end - size:end], self.compression,
                                self.block_size, f"{self.where()}: footer",
                                limit=section_limit(self.file_length))


# --------------------------------------------------------------------------- helpers

def decompress(data: bytes | memoryview, kind: CompressionKind, block_size: int,
               where: str, *, limit: int | None = None) -> bytes:
    """Undo the compression framing of a metadata structure, with ``where`` in errors.

    Args:
        data: the structure as stored.
        kind: the file's codec.
        block_size: the file's compression block size.
        where: what is decompressed, for error messages.
        limit: the most bytes it may decompress to (:func:`section_limit`); ``None``: no
            limit beyond the block size per chunk.

    Raises:
        CorruptFileError: when the compressed data is malformed or exceeds ``limit``.
    """
    if kind == CompressionKind.NONE:
        return bytes(data)
    budget = None if limit is None else Budget(
        limit, "a compressed metadata section of a file may expand to "
        f"max({SECTION_FLOOR}, {SECTION_EXPANSION} x the file's length)", corrupt=True)
    try:
        out = decompress_stream(data, kind, block_size, budget)
    except CorruptFileError as exc:
        raise CorruptFileError(f"{where}: {exc}") from exc
    return bytes(out)


def parse_message(cls: type[_M], data: bytes | memoryview, where: str) -> _M:
    """Parse a protobuf message, turning protobuf errors into :class:`CorruptFileError`."""
    msg: _M = cls()
    try:
        msg.ParseFromString(bytes(data))
    except (DecodeError, RuntimeError, ValueError) as exc:
        raise CorruptFileError(f"{where}: cannot parse {cls.__name__}: {exc}") from exc
    return msg


def parse_compressed(cls: type[_M], data: bytes | memoryview, kind: CompressionKind,
                     block_size: int, where: str, *, limit: int | None = None) -> _M:
    """Decompress a metadata structure (:func:`decompress`, at most ``limit`` bytes) and
    parse it as ``cls`` (:func:`parse_message`), with ``where`` in errors.

    Raises:
        CorruptFileError: when it does not decompress or parse, or exceeds ``limit``.
    """
    return parse_message(cls, decompress(data, kind, block_size, where, limit=limit), where)


def _text(value: str | bytes) -> str:
    """A protobuf string field (python-protobuf gives bytes for invalid UTF-8)."""
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return value


def unknown_enum_value(msg: Message, field_number: int) -> int | None:
    """The raw value of an enum field whose value is not in our schema, else ``None``."""
    for f in unknown_fields.UnknownFieldSet(msg):
        if f.field_number == field_number and isinstance(f.data, int):
            return int(f.data)
    return None


# --------------------------------------------------------------------------- parse_tail

def parse_tail(tail: bytes | bytearray | memoryview, file_length: int, *,
               source: str | None = None, max_columns: int | None = None
               ) -> FileTail | NeedBytes:
    """Parse the tail of an ORC file.

    Args:
        tail: the last ``len(tail)`` bytes of the file (read :data:`TAIL_READ_SIZE` first).
        file_length: the length of the whole file.
        source: the file's name, for error messages.
        max_columns: the most columns the footer may declare (default
            :func:`max_columns`, read from the environment on each call: a caller parsing
            many tails reads it once).

    Returns:
        The :class:`FileTail`, or :class:`NeedBytes` with the exact number of bytes from the
        end of the file needed to parse it.

    Raises:
        CorruptFileError: when the tail is damaged (bad lengths, magic, protobuf, ...), or
            the file is empty: a 0-byte object is most often a failed upload, so it is
            refused as pyarrow.orc (ORC C++) refuses it, where ORC Java reads an empty
            ``struct<>`` (datasets skip empty files, as Hive writes empty tables so).
        UnsupportedVersionError: for a format version ORC Java refuses (a future version).
        UnsupportedFeatureError: for an unknown compression codec.
        ValueError: when ``tail`` is longer than ``file_length``.
    """
    if file_length < 0 or len(tail) > file_length:
        raise ValueError(f"tail of {len(tail)} bytes for a file of {file_length} bytes")
    where = f"{source or 'ORC file'} ({file_length} bytes)"
    if file_length == 0:
        raise CorruptFileError(f"{where}: an empty file is not an ORC file (an ORC file "
                               "holds at least its magic and tail; was an upload cut short?)")
    if file_length <= len(MAGIC):
        raise CorruptFileError(f"{where}: too short to be an ORC file")
    if not tail:
        return NeedBytes(min(file_length, TAIL_READ_SIZE))
    view = memoryview(tail).cast("B")
    ps_len = view[-1]
    # No magic at the end of the PostScript: a format 0.11 file, or the bytes are no tail
    # (a file cut short, or no ORC file); failures then say that, not the parser's words.
    cut = len(view) > len(MAGIC) and bytes(view[-1 - len(MAGIC):-1]) != MAGIC
    if ps_len < len(MAGIC) + 1 or ps_len + 1 > file_length:
        raise CorruptFileError(f"{where}: " + (f"{_no_tail(view, file_length)} (invalid "
                               f"PostScript length {ps_len})" if cut else
                               f"invalid PostScript length {ps_len}"))
    if ps_len + 1 > len(view):
        return NeedBytes(ps_len + 1)
    ps_bytes = view[len(view) - 1 - ps_len:len(view) - 1]
    _check_magic(ps_bytes, view, file_length, where)
    try:
        ps = parse_message(pb.PostScript, ps_bytes, f"{where}: PostScript")
        cut = cut and not ps.HasField("magic")
        version, kind, block_size = _check_postscript(ps, where)
        footer_len, meta_len = ps.footerLength, ps.metadataLength
        needed = 1 + ps_len + footer_len + meta_len
        if needed + ps.stripeStatisticsLength > min(file_length, MAX_TAIL_LENGTH):
            raise CorruptFileError(
                f"{where}: tail lengths exceed the file: PostScript {ps_len}, footer "
                f"{footer_len}, metadata {meta_len}, stripe statistics "
                f"{ps.stripeStatisticsLength}")
    except (FormatError, UnsupportedFeatureError) as exc:
        if not cut:
            raise
        raise CorruptFileError(f"{where}: {_no_tail(view, file_length)}") from exc
    if needed > len(view):
        return NeedBytes(needed)
    footer_end = len(view) - 1 - ps_len
    footer = parse_compressed(pb.Footer, view[footer_end - footer_len:footer_end], kind,
                              block_size, f"{where}: footer", limit=section_limit(file_length))
    _check_width(len(footer.types), where, max_columns)
    meta_end = footer_end - footer_len
    metadata = bytes(view[meta_end - meta_len:meta_end])
    stripes_end = file_length - needed - ps.stripeStatisticsLength
    return _build_tail(ps, footer, file_length, ps_len, version, kind, block_size, metadata,
                       stripes_end, source, where)


#: The most columns (type ids: the root, every column and every nested field) a file may
#: declare, unless the environment variable :data:`MAX_COLUMNS_ENV` says otherwise. Far
#: above any real schema, and below what one process reads within the hostile-input bounds
#: (a file's schema and a table of no rows take about 1.2 KiB of memory per column: a
#: footer of 10^6 int columns took 1.2 GB).
DEFAULT_MAX_COLUMNS = 500_000
#: Environment variable raising (or lowering) :data:`DEFAULT_MAX_COLUMNS`.
MAX_COLUMNS_ENV = "AORC_MAX_COLUMNS"


def max_columns() -> int:
    """The most columns a file may declare: ``AORC_MAX_COLUMNS`` or
    :data:`DEFAULT_MAX_COLUMNS`.

    Raises:
        ResourceLimitError: ``AORC_MAX_COLUMNS`` is not a positive integer.
    """
    text = os.environ.get(MAX_COLUMNS_ENV)
    if text is None:
        return DEFAULT_MAX_COLUMNS
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise ResourceLimitError(f"{MAX_COLUMNS_ENV} must be a positive integer, got {text!r}")
    return value


def _check_width(columns: int, where: str, limit: int | None) -> None:
    if limit is None:
        limit = max_columns()
    if columns > limit:
        raise ResourceLimitError(
            f"{where}: the footer declares {columns} columns (type ids, nested ones included), "
            f"more than the {limit} aorc reads; set the environment variable "
            f"{MAX_COLUMNS_ENV} to read it (about 1.2 KiB of memory per column)")
def _no_tail(view: memoryview, file_length: int) -> str:
    """What to say of a file whose last bytes are no ORC PostScript (a format 0.11 file may
    lack the magic there, but then its PostScript parses): a file that starts with the magic
    was cut short; one that does not is no ORC file."""
    if len(view) < file_length:
        return ("not an ORC file, or one cut short: its last bytes are not an ORC tail (was "
                "an upload or copy cut short?)")
    if bytes(view[:len(MAGIC)]) != MAGIC:
        return "not an ORC file (no 'ORC' magic)"
    return ("the file looks truncated: it starts as an ORC file but does not end with an ORC "
            "tail (was an upload or copy cut short?)")


def _check_magic(ps_bytes: memoryview, view: memoryview, file_length: int, where: str) -> None:
    """The PostScript must end with the magic, or (format 0.11) the file must start with it."""
    if bytes(ps_bytes[-len(MAGIC):]) == MAGIC:
        return
    if len(view) == file_length and bytes(view[:len(MAGIC)]) != MAGIC:
        raise CorruptFileError(f"{where}: not an ORC file (no 'ORC' magic)")


def _check_postscript(ps: pb.PostScript, where: str) -> tuple[tuple[int, int], CompressionKind,
                                                                  int]:
    """Validate version, magic, codec and block size; return them."""
    magic = ps.magic  # "" when unset
    if magic != _MAGIC_TEXT and ps.HasField("magic") and _text(magic) != _MAGIC_TEXT:
        raise CorruptFileError(f"{where}: bad PostScript magic {magic!r}")
    numbers = ps.version
    if not numbers:
        version = V0_11
    elif len(numbers) < 2:
        raise CorruptFileError(f"{where}: PostScript version {list(numbers)} lacks a minor")
    else:
        version = (int(numbers[0]), int(numbers[1]))
    if version not in SUPPORTED_VERSIONS:
        raise UnsupportedVersionError(
            f"{where}: written by a future ORC version {'.'.join(map(str, numbers))}; "
            "readable versions are 0.11, 0.12 and UNSTABLE-PRE-2.0 (1.9999)")
    # An unknown codec leaves the field unset (proto2 keeps the value as an unknown field),
    # reading as NONE (0).
    code = ps.compression
    if not code and not ps.HasField("compression"):
        unknown = unknown_enum_value(ps, 2)
        if unknown is not None:
            raise UnsupportedFeatureError(f"{where}: unknown compression kind {unknown}")
    kind = _KINDS[code]
    block_size = ps.compressionBlockSize  # 0 when unset
    if not block_size and not ps.HasField("compressionBlockSize"):
        block_size = DEFAULT_BLOCK_SIZE
    elif not 0 < block_size < MAX_BLOCK_SIZE:
        raise CorruptFileError(f"{where}: invalid compression block size {block_size}")
    return version, kind, block_size


_MAGIC_TEXT = MAGIC.decode()
#: The codecs by their numbers in the PostScript.
_KINDS = {int(k): k for k in CompressionKind}


#: Type trees parsed, by their footer types' bytes: the files of a dataset mostly share
#: one schema, whose tree (immutable) is then built once, not once per file.
_TYPE_TREES: dict[bytes, OrcType] = {}
_TYPE_TREES_KEPT = 64


def _build_tail(ps: pb.PostScript, footer: pb.Footer, file_length: int, ps_len: int,
                version: tuple[int, int], kind: CompressionKind, block_size: int,
                metadata: bytes, stripes_end: int, source: str | None,
                where: str) -> FileTail:
    key = b"".join(t.SerializeToString() for t in footer.types)
    schema = _TYPE_TREES.get(key)  # bytes seen before were checked then, needing no repair
    if schema is None and not _check_types(footer, where):
        key = b""  # names repaired: the tree is not kept under these bytes
    if schema is None:
        try:
            schema = types_from_proto(footer.types)
        except CorruptFileError as exc:
            raise CorruptFileError(f"{where}: footer: {exc}") from exc
        if len(_TYPE_TREES) >= _TYPE_TREES_KEPT:
            _TYPE_TREES.clear()
        if key:
            _TYPE_TREES[key] = schema
    stripes = _stripes(footer, stripes_end, where)
    user_metadata = {_text(item.name): bytes(item.value) for item in footer.metadata}
    return FileTail(
        postscript=ps,
        footer=footer,
        file_length=file_length,
        postscript_length=ps_len,
        version=version,
        compression=kind,
        block_size=block_size,
        writer_version=ps.writerVersion,
        writer=footer.writer if footer.HasField("writer") else None,
        software_version=(_text(footer.softwareVersion)
                          if footer.HasField("softwareVersion") else None),
        calendar=footer.calendar,
        schema=schema,
        num_rows=footer.numberOfRows,
        row_index_stride=footer.rowIndexStride,
        stripes=stripes,
        user_metadata=user_metadata,
        has_encryption=footer.HasField("encryption"),
        source=source,
        _metadata_bytes=metadata,
    )


def _check_types(footer: pb.Footer, where: str) -> bool:
    """Reject unknown or missing type kinds; repair invalid UTF-8 in names (as Java does).
    Whether the types were sound as they are (nothing repaired)."""
    sound = True
    for cid, t in enumerate(footer.types):
        if t.ByteSize() == 2 and t.kind:  # only a kind, set (a million-column footer)
            continue
        if not t.HasField("kind"):
            unknown = unknown_enum_value(t, 1)
            if unknown is not None:
                raise UnsupportedFeatureError(f"{where}: column {cid} has unknown type kind "
                                              f"{unknown}")
            raise CorruptFileError(f"{where}: column {cid} has no type kind")
        names = t.fieldNames
        if names and bytes in set(map(type, names)):
            for i, name in enumerate(names):
                if isinstance(name, bytes):
                    names[i] = _text(name)
            sound = False
        for attr in t.attributes:
            if isinstance(attr.key, bytes) or isinstance(attr.value, bytes):
                attr.key, attr.value = _text(attr.key), _text(attr.value)
                sound = False
    return sound


def _stripes(footer: pb.Footer, stripes_end: int, where: str) -> list[StripeInfo]:
    """Stripe locations, each checked to lie between the header and the tail; at most one
    stripe per byte of the stripe area (checked before any is built)."""
    area = max(0, stripes_end - len(MAGIC))
    if len(footer.stripes) > area:
        raise CorruptFileError(f"{where}: the footer lists {len(footer.stripes)} stripes, more "
                               f"than the {area} bytes of the stripe area can hold")
    out = []
    for i, s in enumerate(footer.stripes):
        offset, index, data, foot = s.offset, s.indexLength, s.dataLength, s.footerLength
        if offset < len(MAGIC) or offset + index + data + foot > stripes_end:
            raise CorruptFileError(
                f"{where}: stripe {i} (offset {offset}, length {index + data + foot}) lies "
                f"outside the stripe area {len(MAGIC)}..{stripes_end}")
        out.append(StripeInfo(i, offset, index, data, foot, s.numberOfRows))
    return out
