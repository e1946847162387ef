"""A valid ORC file taken apart and put back together, for the fuzz test's mutations.

:func:`parse_model` splits a file into a :class:`FileModel` (PostScript, Footer, Metadata,
stripes with their streams and footers, and where every region and compression chunk header
lies) with protobuf and the codec layer only; :func:`build` re-assembles a file around
replaced parts, recomputing offsets and lengths so that only the intended damage remains.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from google.protobuf.message import Message

from aorc.format._proto import orc_proto_pb2 as pb
from aorc.format.codec.compression import CompressionKind, compress_stream, decompress_stream

__all__ = ["FileModel", "Region", "StreamModel", "StripeModel", "build", "parse_model",
           "parse_proto"]

K = pb.Stream.Kind
#: Stream kinds stored in a stripe's index area.
INDEX_KINDS = (K.ROW_INDEX, K.BLOOM_FILTER, K.BLOOM_FILTER_UTF8)


@dataclass(frozen=True)
class Region:
    """A byte range of a file holding one structure: ``kind`` is ``"postscript"``,
    ``"footer"``, ``"metadata"``, ``"stripe_footer"``, ``"index"`` (index streams),
    ``"data"`` (data streams), ``"header"`` or ``"gap"``; ``label`` says which one."""

    kind: str
    start: int
    end: int
    label: str


@dataclass
class StreamModel:
    """One stream of a stripe as stored (``raw`` is compressed when the file is)."""

    proto: pb.Stream
    raw: bytes


@dataclass
class StripeModel:
    """A stripe: its footer and either its streams or (encrypted files) an opaque body."""

    info: pb.StripeInformation
    footer: pb.StripeFooter
    footer_raw: bytes
    body: bytes
    streams: list[StreamModel] | None


@dataclass
class FileModel:
    """A valid ORC file taken apart (see :func:`parse_model`)."""

    data: bytes
    kind: CompressionKind
    block_size: int
    ps: pb.PostScript
    footer: pb.Footer
    footer_raw: bytes
    metadata_raw: bytes
    stripes: list[StripeModel]
    head: bytes                   # bytes before the first stripe (the magic)
    tail_gap: bytes               # bytes between the last stripe and the Metadata
    regions: list[Region] = field(default_factory=list)
    chunk_headers: list[int] = field(default_factory=list)

    def unframe(self, raw: bytes) -> bytes:
        """Decompress a structure or stream of this file."""
        return bytes(decompress_stream(raw, self.kind, self.block_size))

    def frame(self, plain: bytes) -> bytes:
        """Compress with this file's codec (LZO, which cannot be written: original chunks)."""
        if self.kind == CompressionKind.LZO:
            out = bytearray()
            for start in range(0, len(plain), self.block_size):
                piece = plain[start:start + self.block_size]
                out += (len(piece) << 1 | 1).to_bytes(3, "little") + piece
            return bytes(out)
        return compress_stream(plain, self.kind, self.block_size)


# =========================================================================== taking apart

def parse_proto(cls: type[Message], raw: bytes) -> Message:
    """Parse a protobuf message (protobuf errors propagate)."""
    msg = cls()
    msg.ParseFromString(raw)
    return msg


def parse_model(data: bytes) -> FileModel | None:
    """Take a valid ORC file apart; ``None`` when it is too odd for structural mutation
    (empty, a future version, a damaged tail, stripes not laid out one after the other)."""
    try:
        return _parse_model(data)
    except Exception:  # the base file itself may be corrupt (corpus/corrupt): bytes only
        return None


def _parse_model(data: bytes) -> FileModel | None:
    if len(data) < 4:
        return None
    ps_len = data[-1]
    ps = parse_proto(pb.PostScript, data[-1 - ps_len:-1])
    kind = CompressionKind(ps.compression)
    block_size = ps.compressionBlockSize if ps.HasField("compressionBlockSize") else 256 * 1024
    footer_end = len(data) - 1 - ps_len
    footer_start = footer_end - ps.footerLength
    meta_start = footer_start - ps.metadataLength
    if meta_start < 0:
        return None
    model = FileModel(data, kind, block_size, ps, pb.Footer(), data[footer_start:footer_end],
                      data[meta_start:footer_start], [], b"", b"")
    model.footer = parse_proto(pb.Footer, model.unframe(model.footer_raw))
    regions = [Region("postscript", footer_end, len(data), "PostScript and its length"),
               Region("footer", footer_start, footer_end, "footer"),
               Region("metadata", meta_start, footer_start, "metadata")]
    headers = _chunks(model, model.footer_raw, footer_start)
    headers += _chunks(model, model.metadata_raw, meta_start)
    pos = model.footer.stripes[0].offset if model.footer.stripes else meta_start
    model.head = data[:pos]
    regions.append(Region("header", 0, pos, "file header"))
    for i, info in enumerate(model.footer.stripes):
        if info.offset != pos:
            return None
        stripe, more = _parse_stripe(model, i, info, regions)
        headers += more
        model.stripes.append(stripe)
        pos = info.offset + info.indexLength + info.dataLength + info.footerLength
    if pos > meta_start:
        return None
    model.tail_gap = data[pos:meta_start]
    regions.append(Region("gap", pos, meta_start, "encrypted stripe statistics"))
    model.regions = [r for r in regions if r.end > r.start]
    model.chunk_headers = headers
    return model


def _parse_stripe(model: FileModel, i: int, info: pb.StripeInformation,
                  regions: list[Region]) -> tuple[StripeModel, list[int]]:
    data = model.data
    body_len = info.indexLength + info.dataLength
    foot = info.offset + body_len
    footer_raw = data[foot:foot + info.footerLength]
    footer = parse_proto(pb.StripeFooter, model.unframe(footer_raw))
    regions.append(Region("stripe_footer", foot, foot + info.footerLength,
                          f"stripe {i} footer"))
    headers = _chunks(model, footer_raw, foot)
    body = data[info.offset:foot]
    streams: list[StreamModel] | None = None
    if not footer.encryption and sum(s.length for s in footer.streams) == body_len:
        streams = []
        pos = info.offset
        for s in footer.streams:
            raw = data[pos:pos + s.length]
            area = "index" if s.kind in INDEX_KINDS else "data"
            regions.append(Region(area, pos, pos + s.length, f"stripe {i} column {s.column} "
                                  f"{K.Name(s.kind)}"))
            headers += _chunks(model, raw, pos)
            streams.append(StreamModel(s, raw))
            pos += s.length
    else:
        regions.append(Region("data", info.offset, foot, f"stripe {i} body"))
    return StripeModel(info, footer, footer_raw, body, streams), headers


def _chunks(model: FileModel, raw: bytes, base: int) -> list[int]:
    """Absolute offsets of the chunk headers of a compressed structure."""
    if model.kind == CompressionKind.NONE:
        return []
    out, pos = [], 0
    while pos + 3 <= len(raw):
        out.append(base + pos)
        pos += 3 + (int.from_bytes(raw[pos:pos + 3], "little") >> 1)
    return out


# =========================================================================== putting together

Hook = Callable[[Message], None]


def build(model: FileModel, stripes: dict[int, StripeModel] | None = None,
          footer_hook: Hook | None = None, metadata_raw: bytes | None = None,
          ps_hook: Hook | None = None) -> bytes | None:
    """Assemble a file from ``model`` with some parts replaced.

    Stripe offsets and lengths, the footer's content length and the PostScript's lengths are
    recomputed; then ``footer_hook`` may change the footer and ``ps_hook`` the PostScript, so
    the values they set survive. Unchanged structures keep their original bytes. ``None``
    when the PostScript grows past 255 bytes.
    """
    stripes = stripes or {}
    out = bytearray(model.head)
    footer = pb.Footer()
    footer.CopyFrom(model.footer)
    for i, original in enumerate(model.stripes):
        stripe = stripes.get(i, original)
        info = footer.stripes[i]
        info.offset = len(out)
        if stripe.streams is not None:
            body = b"".join(s.raw for s in stripe.streams)
            index = sum(len(s.raw) for s in stripe.streams
                        if s.proto.kind in INDEX_KINDS)
        else:
            body, index = stripe.body, stripe.info.indexLength
        footer_raw = stripe.footer_raw
        if stripe is not original:
            footer_raw = model.frame(stripe.footer.SerializeToString())
        info.indexLength, info.dataLength = index, len(body) - index
        info.footerLength = len(footer_raw)
        out += body + footer_raw
    if model.footer.contentLength == len(model.data) - len(model.tail_gap) - _tail_len(model):
        footer.contentLength = len(out)
    out += model.tail_gap
    if footer_hook is not None:
        footer_hook(footer)
    footer_raw = model.footer_raw
    if footer.SerializeToString() != model.footer.SerializeToString():
        footer_raw = model.frame(footer.SerializeToString())
    meta = model.metadata_raw if metadata_raw is None else metadata_raw
    out += meta + footer_raw
    ps = pb.PostScript()
    ps.CopyFrom(model.ps)
    if ps.HasField("footerLength") or footer_raw:
        ps.footerLength = len(footer_raw)
    if ps.HasField("metadataLength") or meta:
        ps.metadataLength = len(meta)
    if ps_hook is not None:
        ps_hook(ps)
    ps_raw = ps.SerializeToString()
    if len(ps_raw) > 255:
        return None
    return bytes(out + ps_raw + bytes([len(ps_raw)]))


def _tail_len(model: FileModel) -> int:
    return 1 + model.data[-1] + model.ps.footerLength + model.ps.metadataLength
