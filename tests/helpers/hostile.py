"""Hostile ORC files of issue 20 (items 1, 2 and 4), built by code, and a child process that
reads one and reports its peak memory, CPU time and exception.

Every builder returns the bytes of a small file that makes a reader allocate or work far
beyond what its bytes can legitimately encode: a footer, metadata section, stripe footer or
row index that decompresses to 10**8 empty entries, zstd chunks that each claim the largest
block size, a dictionary that claims 2**31 entries, thousands of empty LZO or brotli chunks. The
child (:func:`read_in_child`) runs a fresh interpreter, so that its peak resident memory
(``VmHWM``) is the read's alone, with an address-space limit as a safety net for the machine
(an unfixed reader then fails with MemoryError instead of exhausting it).
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import tempfile
from typing import Any

import pyarrow as pa
import zstandard
from fuzz.model import StreamModel, StripeModel, build, parse_model

import aorc.sync
from aorc.format._proto import orc_proto_pb2 as pb
from aorc.format.codec.compression import HEADER_SIZE, CompressionKind, compress_stream
from helpers.child_code import HWM

__all__ = [
    "BOMB_BLOCK",
    "brotli_empty_chunks",
    "dictionary_bomb",
    "footer_bomb",
    "lying_zstd_chunks",
    "lzo_empty_chunks",
    "metadata_bomb",
    "read_in_child",
    "row_index_bomb",
    "stripe_footer_bomb",
]

REPO = pathlib.Path(__file__).resolve().parents[2]
#: The largest even block size below 2**23: chunks of whole 2-byte protobuf entries.
BOMB_BLOCK = (1 << 23) - 2
_ZSTD = zstandard.ZstdCompressor(level=19, write_content_size=True)
K = pb.Stream.Kind


def _header(length: int, original: bool = False) -> bytes:
    return (length << 1 | int(original)).to_bytes(HEADER_SIZE, "little")


def _chunk(body: bytes) -> bytes:
    return _header(len(body)) + body


def _entries(field: int, n: int) -> bytes:
    """Zstd chunks of BOMB_BLOCK bytes each holding empty messages of repeated ``field``
    (tag and a zero length: 2 bytes an entry), about ``n`` entries in all."""
    per_chunk = BOMB_BLOCK // 2
    body = _chunk(_ZSTD.compress(bytes([field << 3 | 2, 0]) * per_chunk))
    return body * -(-n // per_chunk)


def _postscript(footer: bytes, metadata: bytes = b"", *, kind: int = pb.ZSTD,
                block: int = BOMB_BLOCK) -> bytes:
    ps = pb.PostScript(footerLength=len(footer), metadataLength=len(metadata),
                       compression=kind, compressionBlockSize=block, version=[0, 12],
                       writerVersion=9, magic="ORC").SerializeToString()
    return ps + bytes([len(ps)])


def _schema_footer(**fields: Any) -> pb.Footer:
    return pb.Footer(types=[pb.Type(kind=pb.Type.STRUCT, subtypes=[1], fieldNames=["a"]),
                            pb.Type(kind=pb.Type.INT)], **fields)


def footer_bomb(stripes: int = 10**8) -> bytes:
    """A footer (zstd) that lists ``stripes`` empty stripes: 18.7 KB for 10**8 (issue 20
    item 1: 6.5 GB of memory while opening)."""
    footer = _chunk(_ZSTD.compress(_schema_footer().SerializeToString())) + _entries(3, stripes)
    return b"ORC" + footer + _postscript(footer)


def metadata_bomb(entries: int = 10**8) -> bytes:
    """A file whose Metadata section (stripe statistics) holds ``entries`` empty entries."""
    footer = _chunk(_ZSTD.compress(_schema_footer().SerializeToString()))
    metadata = _entries(1, entries)
    return b"ORC" + metadata + footer + _postscript(footer, metadata)


def _sample(table: pa.Table, **options: Any) -> bytes:
    with tempfile.TemporaryDirectory() as tmp:
        path = pathlib.Path(tmp) / "sample.orc"
        aorc.sync.write_table(table, str(path), **options)
        return path.read_bytes()


def _model_file(table: pa.Table, **options: Any) -> Any:
    model = parse_model(_sample(table, **options))
    assert model is not None
    return model


def stripe_footer_bomb(entries: int = 10**8) -> bytes:
    """A valid one-stripe file (zstd, block size 8 MiB) whose stripe footer is replaced by
    ``entries`` empty stream descriptions."""
    model = _model_file(pa.table({"a": [1, 2, 3]}), compression="zstd",
                        compression_block_size=BOMB_BLOCK)
    footer = pb.Footer()
    footer.CopyFrom(model.footer)
    info = footer.stripes[0]
    start = info.offset + info.indexLength + info.dataLength
    raw = _entries(1, entries)
    info.footerLength = len(raw)
    footer.contentLength = start + len(raw)
    fraw = model.frame(footer.SerializeToString())
    return model.data[:start] + raw + fraw + _postscript(fraw)


def _replace_stream(model: Any, column: int, kind: int, raw: bytes,
                    encoding: pb.ColumnEncoding | None = None) -> bytes:
    stripe = model.stripes[0]
    assert stripe.streams is not None
    footer = pb.StripeFooter()
    footer.CopyFrom(stripe.footer)
    streams = []
    for s, proto in zip(stripe.streams, footer.streams, strict=True):
        if proto.column == column and proto.kind == kind:
            proto.length = len(raw)
            s = StreamModel(proto, raw)
        streams.append(s)
    assert any(s.raw is raw for s in streams), "no such stream"
    if encoding is not None:
        footer.columns[column].CopyFrom(encoding)
    data = build(model, {0: StripeModel(stripe.info, footer, b"", b"", streams)})
    assert data is not None
    return data


def row_index_bomb(entries: int = 10**8) -> bytes:
    """A valid file (zstd, block size 8 MiB) whose ROW_INDEX stream of column 1 holds
    ``entries`` empty entries; read with a filter, which parses the row index."""
    model = _model_file(pa.table({"a": [1, 2, 3]}), compression="zstd",
                        compression_block_size=BOMB_BLOCK)
    return _replace_stream(model, 1, K.ROW_INDEX, _entries(1, entries))


def lying_zstd_chunks(chunks: int = 600, garbage: int = 4096) -> bytes:
    """A string column whose DATA stream is ``chunks`` zstd chunks that each declare the
    largest block size (8 MiB) and hold ``garbage`` bytes of damage instead of their blocks:
    600 of 4 KiB (2.5 MB) claim 4.9 GB (issue 20 item 2)."""
    model = _model_file(pa.table({"s": ["x" * 100] * 10}), compression="zstd",
                        compression_block_size=BOMB_BLOCK, dictionary_key_size_threshold=0.0)
    frame = _ZSTD.compress(bytes(BOMB_BLOCK))
    size = zstandard.frame_header_size(frame)
    lie = frame[:size] + bytes(range(256)) * (garbage // 256)
    assert zstandard.frame_content_size(lie) == BOMB_BLOCK
    return _replace_stream(model, 1, K.DATA, _chunk(lie) * chunks)


def dictionary_bomb(entries: int = 1 << 31) -> bytes:
    """A dictionary-encoded string column whose encoding declares ``entries`` entries, with
    a LENGTH stream just long enough to hold that many lengths (RLE v2 runs of 512 zeros,
    zstd: a few KB); issue 20 item 2 (numpy asked for 16-32 GiB)."""
    model = _model_file(pa.table({"s": ["a", "b"] * 50}), compression="zstd")
    stripe = model.stripes[0]
    encoding = pb.ColumnEncoding()
    encoding.CopyFrom(stripe.footer.columns[1])
    assert encoding.kind == pb.ColumnEncoding.DICTIONARY_V2
    encoding.dictionarySize = entries
    run = b"\xc1\xff\x00\x00"  # RLE v2 DELTA: 512 values from 0, delta 0
    lengths = run * -(-entries // 512)
    raw = compress_stream(lengths, CompressionKind.ZSTD, model.block_size, level=19)
    return _replace_stream(model, 1, K.LENGTH, raw, encoding)


def _empty_chunks(kind: int, empty: bytes, size: int) -> bytes:
    """A file whose footer is preceded by empty ``kind`` chunks, ``size`` bytes in all."""
    footer_bytes = _schema_footer().SerializeToString()
    real = _header(len(footer_bytes), original=True) + footer_bytes
    empties = _chunk(empty) * (size // (HEADER_SIZE + len(empty)))
    footer = empties + real
    return b"ORC" + footer + _postscript(footer, kind=kind)


def lzo_empty_chunks(size: int = 1 << 20) -> bytes:
    """1 MB of LZO chunks that decompress to nothing (an end-of-block marker each) in front
    of a footer: 26 s when each zero-filled the 8 MiB block size (issue 20 item 4)."""
    return _empty_chunks(pb.LZO, b"\x11\x00\x00", size)


def brotli_empty_chunks(size: int = 1 << 20) -> bytes:
    """As :func:`lzo_empty_chunks` with empty brotli streams."""
    import cramjam

    return _empty_chunks(pb.BROTLI, bytes(cramjam.brotli.compress(b"")), size)


CHILD = r"""
import asyncio, json, resource, sys, time
limit = int(sys.argv[3])
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
import aorc
from aorc.format.tail import parse_tail

""" + HWM + r"""
async def main(path, mode):
    if mode == "metadata":
        data = open(path, "rb").read()
        parse_tail(data, len(data)).metadata
        return
    async with aorc.open_reader(path) as reader:
        if mode in ("read", "threads"):
            await reader.read(use_threads=(mode == "threads"))
        elif mode == "filter":
            await reader.read(filters=[("a", ">", 1)])

base, start = hwm(), time.process_time()
error = None
try:
    asyncio.run(main(sys.argv[1], sys.argv[2]))
except BaseException as exc:
    error = [type(exc).__module__ + "." + type(exc).__name__, str(exc)[:400]]
print(json.dumps({"error": error, "peak": hwm(), "growth": hwm() - base,
                  "cpu": time.process_time() - start}))
"""


def read_in_child(path: pathlib.Path, mode: str = "open", *, pythonpath: str | None = None,
                  address_space: int = 12 << 30, timeout: float = 600) -> dict[str, Any]:
    """Open (``mode="open"``), read (``"read"``, ``"threads"``; ``"filter"``: ``a > 1``) or
    parse the metadata of (``"metadata"``) the file at ``path`` in a child process,
    importing aorc from ``pythonpath`` (default: ``$AORC_HOSTILE_PYTHONPATH``, else this
    repository) under an ``address_space`` limit.

    Returns:
        ``{"error": [class, message] or None, "peak": VmHWM bytes, "growth": VmHWM growth
        over the read, "cpu": CPU seconds of the read}``.
    """
    # Another copy of aorc (the unfixed code, to see a test fail): AORC_HOSTILE_PYTHONPATH.
    root = pythonpath or os.environ.get("AORC_HOSTILE_PYTHONPATH") or str(REPO)
    env = {**os.environ, "PYTHONPATH": root}
    result = subprocess.run(
        [sys.executable, "-c", CHILD, str(path), mode, str(address_space)], cwd=root,
        capture_output=True, text=True, env=env, timeout=timeout, check=False)
    if result.returncode != 0 or not result.stdout.strip():
        raise AssertionError(f"child failed ({result.returncode}): {result.stderr[-2000:]}")
    report: dict[str, Any] = json.loads(result.stdout.strip().splitlines()[-1])
    return report
