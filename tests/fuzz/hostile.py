"""One file per hostile-input class of issue 20, built by code (never a checked-in blob).

Each builder returns the bytes of a small file that made aorc take gigabytes or minutes, or
escape ``aorc.errors``, when issue 20 was filed. :data:`CASES` says how each is read (open,
read with threads, stream with ``iter_batches``), what a correct result is, the bounds the
read must keep (issue 20's "done when": 10 s of CPU time, 1 GiB peak RSS, 512 MiB when
streaming a valid file of 10^9 rows) and the branch that fixes it. ``test_hostile.py`` reads
every case in a watched child process (:mod:`fuzz.watch`); ``scripts/build_hostile.py`` writes
them all to a folder and measures them.

The classes (numbers of the issue):

1. stripe-count footer bomb: a zstd footer of 10^8 (18.7 KB file) or 10^7 (1.9 KB) empty
   stripe entries, 2 bytes each, 256 KiB chunks that compress to ~25 bytes;
2. pre-allocation from declared sizes: zstd chunks whose frame headers declare 8 MiB but hold
   4 KB (2.5 MB, read on threads, which pre-size one buffer from the declared sizes; and a
   20 MB variant), and a string dictionary declaring 2^31 entries;
3. a valid file of 10^9 rows (one zstd chunk of RLE v2 DELTA runs, ~800 bytes) streamed with
   ``iter_batches``, and 2 * 10^8 rows;
4. CPU amplification: LZO and Brotli streams of 2 MB of empty chunks (and footers made of
   them) in a file of block size 8 MiB (the issue's 1 MB took 20-30 s here: twice that keeps
   the unfixed reader well past the 10 s bound on a faster machine); decimal columns whose
   scale changes every row (10^5 and 10^6 rows, a few hundred bytes and 2 KB); 2,000 stripes
   naming one time zone in 2,000 spellings (padded with blanks);
5. type trees 200 and 256 levels deep (structs, and lists with their LENGTH streams);
6. (issue 31) a footer declaring 10^6 columns, in a file of no rows.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from aorc.format._proto import orc_proto_pb2 as pb
from aorc.format.codec.compression import DEFAULT_BLOCK_SIZE, MAX_BLOCK_SIZE, CompressionKind
from fuzz.orcfile import (
    K,
    Stream,
    Stripe,
    chunk,
    delta_runs,
    direct_v2,
    frame,
    orc_file,
    primitive,
    struct,
    varint,
)

__all__ = [
    "CASES",
    "Case",
    "decimal_scales",
    "declared_zstd_chunks",
    "deep_types",
    "dictionary_bomb",
    "empty_chunks",
    "footer_bomb",
    "many_rows",
    "wide_schema",
    "zone_spellings",
]

C = CompressionKind
E = pb.ColumnEncoding
ZONE = "America/New_York"
#: The one-column schema most builders use: ``struct<x:bigint>``.
LONG_COLUMN = [struct([("x", 1)]), primitive(pb.Type.LONG)]
LONG_ENCODINGS = [E.DIRECT, E.DIRECT_V2]


# =========================================================================== 1. footer bomb

def footer_bomb(stripes: int = 10**8, block_size: int = DEFAULT_BLOCK_SIZE) -> bytes:
    """A file without data whose zstd footer lists ``stripes`` empty StripeInformation
    entries (2 bytes each decompressed: 200 MB for 10^8) in chunks of ``block_size``.

    Every full chunk holds the same bytes, so one compressed chunk is repeated: building it
    takes no memory.
    """
    head = pb.Footer(headerLength=3, contentLength=3, numberOfRows=0, rowIndexStride=0,
                     types=LONG_COLUMN).SerializeToString()
    entry = b"\x1a\x00"  # field 3 (stripes), length-delimited, empty
    per_chunk = block_size // 2
    full, rest = divmod(stripes, per_chunk)
    body = frame(entry * per_chunk, C.ZSTD, block_size)
    raw = frame(head, C.ZSTD, block_size) + body * full + frame(entry * rest, C.ZSTD, block_size)
    ps = pb.PostScript(footerLength=len(raw), compression=C.ZSTD, compressionBlockSize=block_size,
                       version=[0, 12], metadataLength=0, writerVersion=9, magic="ORC")
    ps_raw = ps.SerializeToString()
    return b"ORC" + raw + ps_raw + bytes([len(ps_raw)])


# =========================================================================== 2. pre-allocation

def _lying_zstd_chunk(size: int, declared: int, salt: int) -> bytes:
    """A zstd chunk of ``size`` bytes: a frame header declaring ``declared`` bytes of content
    (single segment, 4-byte size), then one raw block of what fits: it decodes to far less."""
    raw = size - 3 - 4 - 1 - 4 - 3
    content = bytes((salt + i) * 131 % 251 for i in range(raw))
    frame_header = (0xFD2FB528).to_bytes(4, "little") + b"\xa0" + declared.to_bytes(4, "little")
    block = ((raw << 3) | 1).to_bytes(3, "little") + content  # last block, raw, raw bytes
    return chunk(frame_header + block, False)


def declared_zstd_chunks(total: int = 2_500_000, size: int = 4096,
                         declared: int = MAX_BLOCK_SIZE) -> bytes:
    """A zstd file (block size 8 MiB) whose one DATA stream is ``total`` bytes of chunks of
    ``size`` bytes, each declaring ``declared`` bytes (8 MiB) of content and holding ~4 KB:
    corrupt, and ~600 x 8 MiB = 4.9 GB declared for the default 2.5 MB."""
    count = max(1, total // size)
    data = b"".join(_lying_zstd_chunk(size, declared, i) for i in range(count))
    stripe = Stripe(1000, [Stream(1, K.DATA, data, framed=True)], LONG_ENCODINGS)
    return orc_file(LONG_COLUMN, [stripe], compression=C.ZSTD, block_size=MAX_BLOCK_SIZE)


def dictionary_bomb(entries: int = 2**31, rows: int = 10) -> bytes:
    """A zstd file of a string column in DICTIONARY_V2 encoding declaring ``entries``
    dictionary entries (a multiple of 512), whose LENGTH stream holds them all (DELTA runs of
    length 3: 16 MB decompressed, a few KB stored) but whose DICTIONARY_DATA holds one
    ("abc"); ``rows`` rows all refer to it."""
    types = [struct([("s", 1)]), primitive(pb.Type.STRING)]
    lengths = delta_runs(512, 3, 0, signed=False) * (entries // 512)
    stripe = Stripe(rows, [
        Stream(1, K.DATA, delta_runs(rows, 0, 0, signed=False)),
        Stream(1, K.LENGTH, lengths),
        Stream(1, K.DICTIONARY_DATA, b"abc"),
    ], [E.DIRECT, pb.ColumnEncoding(kind=E.DICTIONARY_V2, dictionarySize=entries)])
    return orc_file(types, [stripe], compression=C.ZSTD, block_size=MAX_BLOCK_SIZE)


# =========================================================================== 3. many rows

def many_rows(rows: int = 10**9, value: int = 7) -> bytes:
    """A valid file of one stripe of ``rows`` bigints all equal to ``value``: RLE v2 DELTA
    runs of 512 (4 bytes each, 7.8 MB for 10^9) in one zstd chunk of block size 8 MiB."""
    data = delta_runs(rows, value, 0, signed=True)
    assert len(data) <= MAX_BLOCK_SIZE, "one chunk"
    stripe = Stripe(rows, [Stream(1, K.DATA, data)], LONG_ENCODINGS)
    return orc_file(LONG_COLUMN, [stripe], compression=C.ZSTD, block_size=MAX_BLOCK_SIZE)


# =========================================================================== 4. CPU amplification

#: The compressed form of an empty chunk body per codec: LZO1X's end-of-stream marker alone,
#: brotli's empty stream.
EMPTY_BODIES = {C.LZO: b"\x11\x00\x00", C.BROTLI: b"\x3b"}


def _with_empty_chunks(kind: CompressionKind, count: int) -> Callable[[bytes], bytes]:
    empty = chunk(EMPTY_BODIES[kind], False)

    def framed(plain: bytes) -> bytes:
        return empty * count + frame(plain, kind, MAX_BLOCK_SIZE)
    return framed


def empty_chunks(kind: CompressionKind, size: int = 2 << 20, *, in_footer: bool = False,
                 rows: int = 1000) -> bytes:
    """A valid ``kind`` (LZO or BROTLI) file of block size 8 MiB whose DATA stream (or footer,
    ``in_footer``) starts with ``size`` bytes of empty compressed chunks; its ``rows``
    bigints are 0, 1, 2, ..."""
    empty = len(chunk(EMPTY_BODIES[kind], False))
    padding = _with_empty_chunks(kind, size // empty)
    values = direct_v2(range(rows), signed=True)
    data = values if in_footer else padding(values)
    stripe = Stripe(rows, [Stream(1, K.DATA, frame(data, kind, MAX_BLOCK_SIZE) if in_footer
                                  else data, framed=True)], LONG_ENCODINGS)
    return orc_file(LONG_COLUMN, [stripe], compression=kind, block_size=MAX_BLOCK_SIZE,
                    framed_footer=padding if in_footer else None)


def decimal_scales(rows: int = 10**5, precision: int = 38, scale: int = 10) -> bytes:
    """A zstd file of one ``decimal(precision, scale)`` column whose value in row k is 1 at
    scale k (10^-k): a different scale on every row, as SECONDARY's DELTA runs allow."""
    types = [struct([("d", 1)]), primitive(pb.Type.DECIMAL, precision=precision, scale=scale)]
    stripe = Stripe(rows, [
        Stream(1, K.DATA, varint(2) * rows),  # zigzag(1)
        Stream(1, K.SECONDARY, delta_runs(rows, 0, 1, signed=True)),
    ], [E.DIRECT, E.DIRECT_V2])
    return orc_file(types, [stripe], compression=C.ZSTD)


def spelling(k: int, name: str = ZONE) -> str:
    """The ``k``-th spelling of a zone name: blanks before and after it (all distinct for k
    below 45 * 45)."""
    return " " * (k % 45) + name + " " * (k // 45)


def zone_spellings(stripes: int = 2000, spellings: bool = True) -> bytes:
    """``stripes`` stripes of one timestamp (2015-01-01 00:00:00 writer time), each naming
    the writer's zone :data:`ZONE` differently (or, without ``spellings``, the same way)."""
    types = [struct([("t", 1)]), primitive(pb.Type.TIMESTAMP)]
    out = [Stripe(1, [Stream(1, K.DATA, direct_v2([0], signed=True)),
                      Stream(1, K.SECONDARY, direct_v2([0], signed=False))],
                  [E.DIRECT, E.DIRECT_V2], timezone=spelling(k) if spellings else ZONE)
           for k in range(stripes)]
    return orc_file(types, out)


# =========================================================================== 5. deep types

def deep_types(depth: int = 256, kind: str = "struct", rows: int = 3) -> bytes:
    """``depth`` nested structs (or lists of one element each) around a bigint column of
    ``rows`` values 1, 2, 3, ...: the root is level 0, the bigint level ``depth``."""
    types: list[pb.Type] = []
    streams: list[Stream] = []
    encodings: list[int] = []
    for level in range(depth):
        if kind == "struct":
            types.append(struct([("a", level + 1)]))
            encodings.append(E.DIRECT)
        elif level == 0:  # the root is a struct
            types.append(struct([("a", 1)]))
            encodings.append(E.DIRECT)
        else:
            types.append(pb.Type(kind=pb.Type.LIST, subtypes=[level + 1]))
            encodings.append(E.DIRECT_V2)
            streams.append(Stream(level, K.LENGTH, delta_runs(rows, 1, 0, signed=False)))
    types.append(primitive(pb.Type.LONG))
    encodings.append(E.DIRECT_V2)
    streams.append(Stream(depth, K.DATA, direct_v2(range(1, rows + 1), signed=True)))
    return orc_file(types, [Stripe(rows, streams, encodings)])


# =========================================================================== 6. wide schemas

def wide_schema(columns: int = 10**6, compression: CompressionKind = CompressionKind.ZSTD
                ) -> bytes:
    """A file of no rows whose footer declares a struct of ``columns`` int columns (issue 31:
    10^6 columns, a few MB of zstd footer; it read correctly in 14 s and 1.1 GB)."""
    types = [struct([(f"c{i}", i + 1) for i in range(columns)])]
    types += [primitive(pb.Type.INT)] * columns
    return orc_file(types, [], compression=compression)


# =========================================================================== the cases

def _check_longs(expected: Callable[[int], Any]) -> Callable[[Any], None]:
    def check(table: Any) -> None:
        values = table.column(0).to_pylist()
        assert values == [expected(i) for i in range(len(values))], "wrong values"
    return check


def _check_constant(value: int) -> Callable[[Any], None]:
    def check(batches: Any) -> None:
        import pyarrow.compute as pc
        for batch in batches:
            low, high = pc.min_max(batch.column(0)).values()
            assert low.as_py() == high.as_py() == value, "wrong values"
            assert batch.column(0).null_count == 0
    return check


def _check_decimals(scale: int) -> Callable[[Any], None]:
    def check(table: Any) -> None:
        import pyarrow.compute as pc
        column = table.column(0)
        head = column.slice(0, scale + 1).to_pylist()
        assert head == [Decimal(1).scaleb(-k).quantize(Decimal(1).scaleb(-scale))
                        for k in range(scale + 1)], "wrong values"
        rest = column.slice(scale + 1)  # more digits than the column has: truncated to 0
        assert rest.null_count == 0 and pc.all(pc.equal(rest, Decimal(0))).as_py()
    return check


def _check_zones(table: Any) -> None:
    import datetime
    values = set(table.column(0).to_pylist())
    # the wall-clock time written (as pyarrow.orc and pyorc read it)
    assert values == {datetime.datetime(2015, 1, 1)}, f"wrong values {sorted(values)[:3]}"


def _check_deep(kind: str) -> Callable[[Any], None]:
    def check(table: Any) -> None:
        import pyarrow as pa
        column = table.column(0).combine_chunks()
        while not pa.types.is_int64(column.type):
            column = column.field(0) if kind == "struct" else column.flatten()
        assert column.to_pylist() == [1, 2, 3], "wrong values"
    return check


def _check_wide(columns: int) -> Callable[[Any], None]:
    def check(table: Any) -> None:
        assert table.num_rows == 0 and table.num_columns == columns, "wrong shape"
        assert table.schema.names[-1] == f"c{columns - 1}", "wrong names"
    return check


@dataclass(frozen=True)
class Case:
    """A hostile input and what reading it must do.

    Attributes:
        name: a file name stem.
        issue: the class in issue 20 (its number and words).
        build: makes the file.
        read: ``"open"`` (open_reader and every file property), ``"read"`` (read_table),
            ``"threads"`` (read with 4 threads), ``"stream"`` (iter_batches of 65,536 rows,
            the first ``batches`` of them) or ``"stripe_footers"`` (open, then each stripe
            footer).
        check: what a successful read must return (given the table, or the batches).
        fixed_on: the branch fixing it (``None``: handled already).
        cpu: CPU seconds the read may take.
        rss: peak resident set (bytes) the reading process may reach.
        batches: how many batches ``"stream"`` reads.
    """

    name: str
    issue: str
    build: Callable[[], bytes]
    read: str = "read"
    check: Callable[[Any], None] | None = None
    fixed_on: str | None = None
    cpu: float = 10.0
    rss: int = 1 << 30
    batches: int = 32

    @property
    def seed(self) -> int:
        """A seed for anything random about this case (none of the builders uses one)."""
        return zlib.crc32(self.name.encode())


def _cases() -> list[Case]:
    bounds, decode, stream = "h20-bounds", "h20-decode", "h20-stream"
    return [
        # a file of a few KB: 512 MiB (the interpreter and libraries take ~90) is generous
        Case("footer-bomb-1e8", "1. stripe-count footer bomb (10^8 stripes, 18.7 KB)",
             lambda: footer_bomb(10**8), "open", fixed_on=bounds, rss=512 << 20),
        Case("footer-bomb-1e7", "1. stripe-count footer bomb (10^7 stripes, 1.9 KB)",
             lambda: footer_bomb(10**7), "open", fixed_on=bounds, rss=512 << 20),
        Case("zstd-declared-8mib", "2. zstd chunks declaring 8 MiB each (2.5 MB, threads)",
             declared_zstd_chunks, "threads", fixed_on=bounds),
        Case("zstd-declared-8mib-large", "2. zstd chunks declaring 8 MiB each (20 MB, threads)",
             lambda: declared_zstd_chunks(20_000_000), "threads", fixed_on=bounds),
        Case("dictionary-2e31", "2. dictionary declaring 2^31 entries", dictionary_bomb,
             fixed_on=bounds),
        Case("rows-1e9-stream", "3. valid file of 10^9 rows streamed with iter_batches",
             many_rows, "stream", _check_constant(7), fixed_on=stream, rss=512 << 20),
        Case("rows-2e8-stream", "3. valid file of 2*10^8 rows streamed with iter_batches",
             lambda: many_rows(2 * 10**8), "stream", _check_constant(7), fixed_on=stream,
             rss=512 << 20),
        Case("lzo-empty-chunks", "4. LZO stream of 2 MB of empty chunks (block size 8 MiB)",
             lambda: empty_chunks(C.LZO), check=_check_longs(lambda i: i), fixed_on=bounds),
        Case("brotli-empty-chunks", "4. Brotli stream of 2 MB of empty chunks (8 MiB blocks)",
             lambda: empty_chunks(C.BROTLI), check=_check_longs(lambda i: i), fixed_on=bounds),
        Case("lzo-empty-chunks-footer", "4. LZO footer of 2 MB of empty chunks",
             lambda: empty_chunks(C.LZO, in_footer=True), check=_check_longs(lambda i: i),
             fixed_on=bounds),
        Case("brotli-empty-chunks-footer", "4. Brotli footer of 2 MB of empty chunks",
             lambda: empty_chunks(C.BROTLI, in_footer=True), check=_check_longs(lambda i: i),
             fixed_on=bounds),
        Case("decimal-scales-1e5", "4. decimal scale changing every row (10^5 rows)",
             decimal_scales, check=_check_decimals(10), fixed_on=decode),
        Case("decimal-scales-1e6", "4. decimal scale changing every row (10^6 rows)",
             lambda: decimal_scales(10**6), check=_check_decimals(10), fixed_on=decode),
        Case("zone-spellings-2000", "4. 2,000 stripes, one time zone in 2,000 spellings",
             zone_spellings, check=_check_zones, fixed_on=decode),
        Case("zone-one-spelling-2000", "4. (control) 2,000 stripes, one spelling",
             lambda: zone_spellings(spellings=False), check=_check_zones),
        Case("deep-struct-200", "5. type tree 200 levels deep (structs)",
             lambda: deep_types(200), check=_check_deep("struct"), fixed_on=decode),
        Case("deep-struct-256", "5. type tree 256 levels deep (structs)",
             lambda: deep_types(256), check=_check_deep("struct"), fixed_on=decode),
        Case("deep-list-256", "5. type tree 256 levels deep (lists)",
             lambda: deep_types(256, "list"), check=_check_deep("list"), fixed_on=decode),
        # above aorc.format.tail.DEFAULT_MAX_COLUMNS: refused (ResourceLimitError) at once
        Case("wide-schema-1e6", "6. (issue 31) a footer declaring 10^6 int columns, no rows",
             wide_schema, check=_check_wide(10**6), fixed_on="h31-wide"),
        # at the limit: read, within the bounds
        Case("wide-schema-5e5", "6. (issue 31) a footer declaring 5*10^5 int columns",
             lambda: wide_schema(5 * 10**5 - 1), check=_check_wide(5 * 10**5 - 1),
             fixed_on="h31-wide"),
    ]


#: Every case, by name.
CASES: dict[str, Case] = {case.name: case for case in _cases()}
