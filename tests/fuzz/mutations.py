"""Mutating real ORC files, for the robustness fuzz test (``tests/fuzz/test_fuzz_files.py``).

Files are taken apart and put back together with :mod:`fuzz.model`. Three ways of damaging a
file, all deterministic:

* :func:`mutate` derives a mutant from a seed: byte-level damage (bit flips and byte
  overwrites weighted towards the structures at the tail, truncations near region boundaries,
  insertions, chunk headers set to absurd lengths) or structural damage that re-assembles a
  consistent file around one bad value (any protobuf field of the PostScript, Footer,
  Metadata, a stripe footer, a row index or a bloom filter set to an extreme value or cleared,
  repeated fields dropped or duplicated, type trees with cycles, stripes outside the file,
  dictionary sizes of 2**31, stream bytes swapped between columns, decompressed stream bytes
  damaged and recompressed); one mutant in ten gets two of these.
* :func:`truncate_at` cuts the file at each region boundary (and a byte either side).
* :func:`named_mutant` applies the damage the issue names (:data:`NAMED`) exactly.

Each mutant comes with a description of what was changed, so a failure can be replayed from
``(file, seed, kind)`` alone.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable
from typing import Any

from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import DecodeError, Message

from aorc.errors import AorcError
from aorc.format._proto import orc_proto_pb2 as pb
from fuzz.model import FileModel, StripeModel, build, parse_model, parse_proto

__all__ = ["NAMED", "cut_points", "damage_message", "mutate", "named_mutant", "truncate_at"]

_F = FieldDescriptor
_UNSIGNED64 = (_F.TYPE_UINT64, _F.TYPE_FIXED64)
_SIGNED64 = (_F.TYPE_INT64, _F.TYPE_SINT64, _F.TYPE_SFIXED64)
_SIGNED32 = (_F.TYPE_INT32, _F.TYPE_SINT32, _F.TYPE_SFIXED32)
_UNSIGNED32 = (_F.TYPE_UINT32, _F.TYPE_FIXED32)
K = pb.Stream.Kind


# =========================================================================== protobuf damage

_U64 = (0, 1, 2, 3, 7, 255, 1 << 20, (1 << 31) - 1, 1 << 31, (1 << 32) - 1, 1 << 32,
        1 << 40, 1 << 62, (1 << 63) - 1, 1 << 63, (1 << 64) - 1)
_U32 = (0, 1, 2, 3, 7, 255, 1 << 16, (1 << 31) - 1, 1 << 31, (1 << 32) - 1)
_S64 = (0, 1, -1, 2, -2, 1 << 31, -(1 << 31), (1 << 62), -(1 << 62), (1 << 63) - 1, -(1 << 63))
_S32 = (0, 1, -1, 2, -2, (1 << 31) - 1, -(1 << 31), 1 << 16)
_FLOATS = (0.0, -0.0, 1.0, -1.0, float("nan"), float("inf"), float("-inf"), 1e308, -1e308,
           5e-324)


def _int_value(rnd: random.Random, fd: Any, old: int) -> int:
    pool: tuple[int, ...]
    if fd.type in _UNSIGNED64:
        pool, lo, hi = _U64, 0, (1 << 64) - 1
    elif fd.type in _UNSIGNED32:
        pool, lo, hi = _U32, 0, (1 << 32) - 1
    elif fd.type in _SIGNED64:
        pool, lo, hi = _S64, -(1 << 63), (1 << 63) - 1
    else:
        pool, lo, hi = _S32, -(1 << 31), (1 << 31) - 1
    choice = rnd.random()
    if choice < 0.5:
        value = rnd.choice(pool)
    elif choice < 0.8:
        value = old + rnd.choice((-2, -1, 1, 2, 8, 1000, -1000))
    elif choice < 0.9:
        value = old * rnd.choice((2, 3, 16, 1 << 20)) ^ rnd.getrandbits(8)
    else:
        value = old ^ (1 << rnd.randrange(64 if hi > 1 << 32 else 32))
    return min(max(value, lo), hi)


def _new_scalar(rnd: random.Random, fd: Any, old: Any) -> Any:
    """An extreme or nearby value for a scalar field."""
    if fd.type == _F.TYPE_BOOL:
        return not old
    if fd.type == _F.TYPE_ENUM:
        return rnd.choice([v.number for v in fd.enum_type.values])
    if fd.type in (_F.TYPE_DOUBLE, _F.TYPE_FLOAT):
        return rnd.choice(_FLOATS)
    if fd.type == _F.TYPE_STRING:
        return rnd.choice(["", "x" * rnd.randint(1, 300), "\x00", "é\ud7ff", "UTC",
                           "Nowhere/Zone", str(old)[:-1], str(old) + "\x7f"])
    if fd.type == _F.TYPE_BYTES:
        raw = bytes(old)
        choices = [b"", raw[:len(raw) // 2], raw + bytes(rnd.randrange(256) for _ in range(9)),
                   bytes(rnd.randrange(256) for _ in range(rnd.randint(1, 64)))]
        if raw:
            flipped = bytearray(raw)
            flipped[rnd.randrange(len(raw))] ^= 1 << rnd.randrange(8)
            choices.append(bytes(flipped))
        return rnd.choice(choices)
    return _int_value(rnd, fd, int(old))


def damage_message(msg: Message, rnd: random.Random, depth: int = 0) -> str:
    """Change one thing somewhere in ``msg`` (descending through a random path); say what."""
    fields = [fd for fd in msg.DESCRIPTOR.fields
              if fd.type != _F.TYPE_MESSAGE or (fd.is_repeated and getattr(msg, fd.name))
              or (not fd.is_repeated and msg.HasField(fd.name))]
    if not fields:
        return "nothing to change"
    fd = rnd.choice(fields)
    name = fd.name
    if fd.is_repeated:
        items = getattr(msg, name)
        if items and rnd.random() < 0.25:
            return _list_op(items, rnd, name)
        if fd.type == _F.TYPE_MESSAGE:
            i = rnd.randrange(len(items))
            return f"{name}[{i}].{damage_message(items[i], rnd, depth + 1)}"
        if not items or rnd.random() < 0.1:
            items.append(_new_scalar(rnd, fd, 0 if fd.type != _F.TYPE_BYTES else b""))
            return f"{name} += {items[-1]!r:.40}"
        i = rnd.randrange(len(items))
        items[i] = _new_scalar(rnd, fd, items[i])
        return f"{name}[{i}] = {items[i]!r:.40}"
    if fd.type == _F.TYPE_MESSAGE:
        if rnd.random() < 0.1:
            msg.ClearField(name)
            return f"{name} cleared"
        return f"{name}.{damage_message(getattr(msg, name), rnd, depth + 1)}"
    if msg.HasField(name) and rnd.random() < 0.15:
        msg.ClearField(name)
        return f"{name} cleared"
    value = _new_scalar(rnd, fd, getattr(msg, name))
    setattr(msg, name, value)
    return f"{name} = {value!r:.40}"


def _list_op(items: Any, rnd: random.Random, name: str) -> str:
    seq = items  # a protobuf repeated container
    n = len(seq)
    op = rnd.choice(("drop", "dup", "swap", "truncate"))
    i = rnd.randrange(n)
    if op == "drop":
        del seq[i]
    elif op == "dup":
        if hasattr(seq, "add"):
            seq.add().CopyFrom(seq[i])
        else:
            seq.append(seq[i])
    elif op == "swap":
        j = rnd.randrange(n)
        if hasattr(seq, "add"):
            a, b = copy.deepcopy(seq[i]), copy.deepcopy(seq[j])
            seq[i].CopyFrom(b)
            seq[j].CopyFrom(a)
        else:
            seq[i], seq[j] = seq[j], seq[i]
        return f"{name}[{i}] <-> [{j}]"
    else:
        del seq[i:]
    return f"{name} {op} at {i} (of {n})"


# =========================================================================== mutations

Mutant = tuple[bytes, str]
_SPECIAL = (0x00, 0xFF, 0x7F, 0x80, 0x01, 0xFE, 0xC0, 0x3F)
#: How often each kind of region is chosen for byte damage: the structures at the tail
#: (PostScript, footer, metadata), stripe footers and row indexes are favoured over data.
_REGION_WEIGHTS = {"postscript": 4, "footer": 5, "metadata": 2, "stripe_footer": 4,
                   "index": 2, "data": 3, "header": 0.3, "gap": 0.3}


def _tail_weighted(rnd: random.Random, size: int) -> int:
    """A position, more likely the nearer it is to the end of the file."""
    return max(0, size - 1 - int(size * rnd.random() ** 3))


def _position(data: bytes, model: FileModel | None, rnd: random.Random) -> tuple[int, str]:
    if model is None or rnd.random() < 0.1:
        return _tail_weighted(rnd, len(data)), "tail-weighted"
    if model.chunk_headers and rnd.random() < 0.1:
        pos = rnd.choice(model.chunk_headers) + rnd.randrange(3)
        return pos, "chunk header"
    kinds = [k for k in _REGION_WEIGHTS if any(r.kind == k for r in model.regions)]
    kind = rnd.choices(kinds, [_REGION_WEIGHTS[k] for k in kinds])[0]
    region = rnd.choice([r for r in model.regions if r.kind == kind])
    return rnd.randrange(region.start, region.end), region.label


def _flip(data: bytes, model: FileModel | None, rnd: random.Random) -> Mutant:
    out = bytearray(data)
    notes = []
    for _ in range(rnd.choice((1, 1, 1, 2, 3))):
        pos, where = _position(data, model, rnd)
        bit = rnd.randrange(8)
        out[pos] ^= 1 << bit
        notes.append(f"{pos}.{bit} ({where})")
    return bytes(out), "bit flip at " + ", ".join(notes)


def _overwrite(data: bytes, model: FileModel | None, rnd: random.Random) -> Mutant:
    out = bytearray(data)
    pos, where = _position(data, model, rnd)
    count = min(rnd.choice((1, 1, 2, 4, 8)), len(data) - pos)
    values = bytes(rnd.choice(_SPECIAL) if rnd.random() < 0.6 else rnd.randrange(256)
                   for _ in range(count))
    out[pos:pos + count] = values
    return bytes(out), f"bytes at {pos} ({where}) = {values.hex()}"


def _boundaries(data: bytes, model: FileModel | None) -> list[int]:
    if model is None:
        return [len(data) - k for k in (1, 2, 3, 4, 8, 16, 64, 256) if k < len(data)] + [3, 4]
    edges = {e for r in model.regions for e in (r.start, r.end)}
    edges.update(model.chunk_headers)
    return sorted(e for e in edges if 0 <= e <= len(data))


def _truncate(data: bytes, model: FileModel | None, rnd: random.Random) -> Mutant:
    edges = _boundaries(data, model)
    cut = rnd.choice(edges) + rnd.choice((0, 0, 0, -1, 1, -2, 2)) if edges else 0
    cut = min(max(cut, 0), len(data))
    how = rnd.random()
    if how < 0.6:
        return data[:cut], f"truncated to {cut} of {len(data)} bytes"
    if how < 0.8:
        return data[cut:], f"first {cut} of {len(data)} bytes removed"
    return data[:cut] + bytes(len(data) - cut), f"bytes from {cut} of {len(data)} zeroed"


def _splice(data: bytes, model: FileModel | None, rnd: random.Random) -> Mutant:
    edges = _boundaries(data, model) or [len(data)]
    pos = min(rnd.choice(edges), len(data))
    count = rnd.choice((1, 2, 3, 7, 16))
    if rnd.random() < 0.5:
        junk = bytes(rnd.randrange(256) for _ in range(count))
        return data[:pos] + junk + data[pos:], f"{count} bytes inserted at {pos}"
    return data[:pos] + data[pos + count:], f"{count} bytes deleted at {pos}"


def _chunk_header(data: bytes, model: FileModel | None, rnd: random.Random) -> Mutant | None:
    if model is None or not model.chunk_headers:
        return None
    pos = rnd.choice(model.chunk_headers)
    header = int.from_bytes(data[pos:pos + 3], "little")
    length, original = header >> 1, header & 1
    new_length = rnd.choice(((1 << 23) - 1, model.block_size + 1, model.block_size, length + 1,
                             length - 1, length + 1000, 0, 1, length))
    new_original = original ^ 1 if new_length == length else original
    if rnd.random() < 0.2:
        new_original ^= 1
    new_length = min(max(new_length, 0), (1 << 23) - 1)
    value = new_length << 1 | new_original
    out = data[:pos] + value.to_bytes(3, "little") + data[pos + 3:]
    return out, (f"chunk header at {pos}: length {length} -> {new_length}, original "
                 f"{original} -> {new_original}")


# ---------------------------------------------------------------------- structural damage

def _tail_message(data: bytes, model: FileModel | None, rnd: random.Random) -> Mutant | None:
    if model is None:
        return None
    target = rnd.choices(("postscript", "footer", "metadata"), (2, 6, 2))[0]
    note: list[str] = []

    def hook(msg: Message) -> None:
        note.append(damage_message(msg, rnd))

    if target == "postscript":
        out = build(model, ps_hook=hook)
    elif target == "footer":
        out = build(model, footer_hook=hook)
    else:
        if not model.metadata_raw:
            return None
        meta = parse_proto(pb.Metadata, model.unframe(model.metadata_raw))
        hook(meta)
        out = build(model, metadata_raw=model.frame(meta.SerializeToString()))
    return None if out is None else (out, f"{target}: {note[0]}")


def _pick_stripe(model: FileModel | None, rnd: random.Random,
                 need_streams: bool = False) -> tuple[int, StripeModel] | None:
    if model is None:
        return None
    choices = [i for i, s in enumerate(model.stripes) if s.streams is not None or
               not need_streams]
    if not choices:
        return None
    i = rnd.choice(choices)
    return i, copy.deepcopy(model.stripes[i])


def _stripe_footer(data: bytes, model: FileModel | None, rnd: random.Random) -> Mutant | None:
    picked = _pick_stripe(model, rnd)
    if picked is None:
        return None
    assert model is not None
    i, stripe = picked
    if rnd.random() < 0.5 and stripe.footer.columns:
        note = _damage_encoding(stripe.footer, rnd)
    elif rnd.random() < 0.6 and stripe.footer.streams:
        note = _damage_stream_entry(stripe.footer, rnd, len(stripe.footer.columns))
    else:
        note = damage_message(stripe.footer, rnd)
    out = build(model, {i: stripe})
    return None if out is None else (out, f"stripe {i} footer: {note}")


def _damage_encoding(footer: pb.StripeFooter, rnd: random.Random) -> str:
    c = rnd.randrange(len(footer.columns))
    enc = footer.columns[c]
    if rnd.random() < 0.5:
        enc.dictionarySize = rnd.choice((0, 1, 2, (1 << 31) - 1, 1 << 31, (1 << 32) - 1,
                                         enc.dictionarySize + 1, max(enc.dictionarySize - 1, 0)))
        return f"column {c} dictionarySize = {enc.dictionarySize}"
    enc.kind = rnd.choice([v.number for v in pb.ColumnEncoding.Kind.DESCRIPTOR.values])
    return f"column {c} encoding = {pb.ColumnEncoding.Kind.Name(enc.kind)}"


def _damage_stream_entry(footer: pb.StripeFooter, rnd: random.Random, n_columns: int) -> str:
    i = rnd.randrange(len(footer.streams))
    s = footer.streams[i]
    what = rnd.random()
    if what < 0.4:
        s.length = rnd.choice((0, s.length + 1, max(s.length - 1, 0), 1 << 31, 1 << 32,
                               (1 << 63) - 1, 1 << 63, (1 << 64) - 1))
        return f"stream {i} length = {s.length}"
    if what < 0.6:
        s.column = rnd.choice((n_columns, n_columns + 1, (1 << 31), (1 << 32) - 1, 0,
                               max(s.column - 1, 0), s.column + 1))
        return f"stream {i} column = {s.column}"
    if what < 0.85:
        s.kind = rnd.choice([v.number for v in K.DESCRIPTOR.values])
        return f"stream {i} kind = {K.Name(s.kind)}"
    j = rnd.randrange(len(footer.streams))
    footer.streams.add().CopyFrom(footer.streams[j])
    return f"stream {j} entry duplicated at the end"


_EVIL_PREFIXES = (
    b"\x7f\x00" * 40,                       # byte RLE: runs of 130 zero bytes
    b"\x7f\xff\x00" * 30,                   # RLE v1: runs of 130 values
    b"\xc1\xff\x02\x00" * 20,               # RLE v2 DELTA, width 0, 512 values each
    b"\x80" * 24,                           # varints that never end
    b"\xff" * 24,
    b"\x8e\xff\xf0\xff\xff\x01" + b"\xaa" * 16,  # PATCHED_BASE with wide patches
    b"\x5e\x03",                            # DIRECT, 24-bit values, 4 of them, then the end
    b"\x00" * 32,
)


def _damage_bytes(plain: bytes, rnd: random.Random) -> tuple[bytes, str]:
    out = bytearray(plain)
    what = rnd.random()
    if what < 0.3 and out:
        for _ in range(rnd.randint(1, 4)):
            out[rnd.randrange(len(out))] ^= 1 << rnd.randrange(8)
        return bytes(out), "bits flipped"
    if what < 0.5 and out:
        pos = rnd.randrange(len(out))
        out[pos:pos + 4] = bytes(rnd.choice(_SPECIAL) for _ in range(4))
        return bytes(out), f"bytes at {pos} overwritten"
    if what < 0.65:
        cut = rnd.randint(0, len(out))
        return bytes(out[:cut]), f"cut to {cut} of {len(out)} bytes"
    if what < 0.75:
        return bytes(out) + bytes(rnd.randrange(256) for _ in range(rnd.randint(1, 64))), \
            "junk appended"
    prefix = rnd.choice(_EVIL_PREFIXES)
    pos = rnd.randrange(len(out) + 1) if rnd.random() < 0.5 else 0
    out[pos:pos + len(prefix)] = prefix
    return bytes(out), f"{prefix[:6].hex()}... written at {pos}"


def _stream_content(data: bytes, model: FileModel | None, rnd: random.Random) -> Mutant | None:
    """Damage the decompressed bytes of a stream (a row index or bloom filter as protobuf),
    recompress them and fix the stream's length in the stripe footer."""
    picked = _pick_stripe(model, rnd, need_streams=True)
    if picked is None:
        return None
    assert model is not None
    i, stripe = picked
    assert stripe.streams is not None
    if not stripe.streams:
        return None
    k = rnd.randrange(len(stripe.streams))
    stream = stripe.streams[k]
    kind = stream.proto.kind
    plain = model.unframe(stream.raw)
    if kind in (K.ROW_INDEX, K.BLOOM_FILTER, K.BLOOM_FILTER_UTF8) and rnd.random() < 0.7:
        msg = parse_proto(pb.RowIndex if kind == K.ROW_INDEX else pb.BloomFilterIndex, plain)
        note = damage_message(msg, rnd)
        plain = msg.SerializeToString()
    else:
        plain, note = _damage_bytes(plain, rnd)
    stream.raw = model.frame(plain)
    stripe.footer.streams[k].length = len(stream.raw)
    stream.proto = stripe.footer.streams[k]
    out = build(model, {i: stripe})
    where = f"stripe {i} stream {k} (column {stream.proto.column} {K.Name(kind)})"
    return None if out is None else (out, f"{where}: {note}")


def _types(data: bytes, model: FileModel | None, rnd: random.Random) -> Mutant | None:
    if model is None or not model.footer.types:
        return None
    note: list[str] = []

    def hook(footer: Message) -> None:
        assert isinstance(footer, pb.Footer)
        note.append(_damage_types(footer.types, rnd))

    out = build(model, footer_hook=hook)
    return None if out is None else (out, f"types: {note[0]}")


def _damage_types(types: Any, rnd: random.Random) -> str:
    ts = types  # repeated pb.Type
    n = len(ts)
    with_children = [i for i in range(n) if ts[i].subtypes]
    what = rnd.random()
    if with_children and what < 0.45:
        i = rnd.choice(with_children)
        t = ts[i]
        j = rnd.randrange(len(t.subtypes))
        t.subtypes[j] = rnd.choice((0, i, max(i - 1, 0), n, n + 5, (1 << 32) - 1,
                                    t.subtypes[j] + 1, t.subtypes[-1]))
        return f"type {i} subtypes[{j}] = {t.subtypes[j]}"
    i = rnd.randrange(n)
    t = ts[i]
    if what < 0.65:
        t.kind = rnd.choice([v.number for v in pb.Type.Kind.DESCRIPTOR.values])
        return f"type {i} kind = {pb.Type.Kind.Name(t.kind)}"
    if what < 0.75:
        t.subtypes.append(rnd.choice((i + 1, n, 0, i)))
        return f"type {i} gains subtype {t.subtypes[-1]}"
    if what < 0.85:
        if t.fieldNames and rnd.random() < 0.5:
            del t.fieldNames[rnd.randrange(len(t.fieldNames))]
            return f"type {i} loses a field name"
        t.fieldNames.append(rnd.choice(("", "x", "é", t.fieldNames[0] if t.fieldNames else "y")))
        return f"type {i} gains a field name"
    attr = rnd.choice(("precision", "scale", "maximumLength"))
    setattr(t, attr, rnd.choice((0, 1, 38, 39, 100, (1 << 31), (1 << 32) - 1)))
    return f"type {i} {attr} = {getattr(t, attr)}"


def _stripe_info(data: bytes, model: FileModel | None, rnd: random.Random) -> Mutant | None:
    if model is None or not model.stripes:
        return None
    i = rnd.randrange(len(model.stripes))
    size = len(data)
    note: list[str] = []

    def hook(footer: Message) -> None:
        assert isinstance(footer, pb.Footer)
        s = footer.stripes[i]
        name = rnd.choice(("offset", "indexLength", "dataLength", "footerLength",
                           "numberOfRows", "numberOfRows"))
        old = getattr(s, name)
        value = rnd.choice((0, 1, 3, size, size - 1, size + 1, old + 1, max(old - 1, 0),
                            old * 2, 1 << 31, 1 << 32, 1 << 40, (1 << 63) - 1, 1 << 63,
                            (1 << 64) - 1))
        setattr(s, name, value)
        note.append(f"stripe {i} {name} {old} -> {value}")

    out = build(model, footer_hook=hook)
    return None if out is None else (out, note[0])


def _codec(data: bytes, model: FileModel | None, rnd: random.Random) -> Mutant | None:
    if model is None:
        return None
    note: list[str] = []

    def hook(ps: Message) -> None:
        assert isinstance(ps, pb.PostScript)
        if rnd.random() < 0.5:
            ps.compression = rnd.choice([v.number for v in pb.CompressionKind.DESCRIPTOR.values])
            note.append(f"compression = {pb.CompressionKind.Name(ps.compression)}")
        else:
            ps.compressionBlockSize = rnd.choice((1, 2, 3, 64, 1000, model.block_size - 1,
                                                  (1 << 23) - 1, 1 << 23, (1 << 64) - 1))
            note.append(f"compressionBlockSize = {ps.compressionBlockSize}")

    out = build(model, ps_hook=hook)
    return None if out is None else (out, note[0])


def _swap_streams(data: bytes, model: FileModel | None, rnd: random.Random) -> Mutant | None:
    """Swap the stored bytes of two streams of a stripe (lengths fixed up): one column's or
    stream kind's bytes read as another's."""
    picked = _pick_stripe(model, rnd, need_streams=True)
    if picked is None:
        return None
    assert model is not None
    i, stripe = picked
    assert stripe.streams is not None
    if len(stripe.streams) < 2:
        return None
    a, b = rnd.sample(range(len(stripe.streams)), 2)
    sa, sb = stripe.streams[a], stripe.streams[b]
    sa.raw, sb.raw = sb.raw, sa.raw
    stripe.footer.streams[a].length, stripe.footer.streams[b].length = len(sa.raw), len(sb.raw)
    sa.proto, sb.proto = stripe.footer.streams[a], stripe.footer.streams[b]
    out = build(model, {i: stripe})
    what = [f"column {s.proto.column} {K.Name(s.proto.kind)}" for s in (sa, sb)]
    return None if out is None else (out, f"stripe {i}: bytes of {what[0]} <-> {what[1]}")


#: (mutation, weight). Byte-level ones work on any file; structural ones need a model.
MUTATIONS: tuple[tuple[Callable[[bytes, FileModel | None, random.Random], Mutant | None],
                       float], ...] = (
    (_flip, 6), (_overwrite, 4), (_truncate, 2), (_splice, 1), (_chunk_header, 2),
    (_tail_message, 5), (_stripe_footer, 4), (_stream_content, 6), (_types, 2),
    (_stripe_info, 2), (_codec, 1), (_swap_streams, 1),
)


def cut_points(data: bytes, model: FileModel | None, limit: int | None = None) -> list[int]:
    """Where to truncate ``data`` to cut it at each region boundary and one byte either
    side of it (evenly thinned out to ``limit`` points when there are more)."""
    points = sorted({min(max(e + d, 0), len(data) - 1) for e in _boundaries(data, model)
                     for d in (-1, 0, 1)} - {len(data)}) if data else []
    if limit is not None and len(points) > limit:
        step = len(points) / limit
        points = [points[int(k * step)] for k in range(limit)]
    return points


def truncate_at(data: bytes, model: FileModel | None, k: int) -> Mutant:
    """``data`` cut at the ``k``-th of its :func:`cut_points` (cyclically)."""
    points = cut_points(data, model)
    if not points:
        return mutate(data, model, k)
    cut = points[k % len(points)]
    return data[:cut], f"truncate: at {cut} of {len(data)} bytes (boundary sweep {k})"


def mutate(data: bytes, model: FileModel | None, seed: int) -> Mutant:
    """A damaged copy of ``data`` (whose :func:`parse_model` is ``model``) and what was done.

    One mutant in ten has two mutations, the second applied to the first one's result.
    The same ``(data, seed)`` always gives the same mutant.
    """
    rnd = random.Random(seed)
    if not data:
        junk = bytes(rnd.randrange(256) for _ in range(rnd.choice((1, 2, 3, 4, 5, 16, 64))))
        if rnd.random() < 0.5:
            junk = junk[:-1] + bytes([len(junk) - 1])
        return junk, f"random bytes instead of an empty file: {junk.hex()}"
    mutant, what = _mutate_once(data, model, rnd)
    if rnd.random() < 0.1 and mutant:
        try:  # the mutant's own model may be odd in ways no base file is
            second, more = _mutate_once(mutant, parse_model(mutant), rnd)
        except Exception:  # noqa: BLE001 - keep the first mutation then
            return mutant, what
        if second:
            return second, f"{what}; then {more}"
    return mutant, what


def _mutate_once(data: bytes, model: FileModel | None, rnd: random.Random) -> Mutant:
    funcs = [f for f, _ in MUTATIONS]
    weights = [w for _, w in MUTATIONS]
    for _ in range(20):
        func = rnd.choices(funcs, weights)[0]
        try:
            result = func(data, model, rnd)
        except (DecodeError, AorcError):  # a damaged base file (corpus/corrupt, a mutant)
            continue
        if result is not None and result[0] != data:
            return result[0], f"{func.__name__.lstrip('_')}: {result[1]}"
    return _flip(data, None, rnd)


# =========================================================================== named damage

def _set_ps(**fields: int) -> Callable[[FileModel], bytes | None]:
    def change(ps: Any) -> None:
        for name, value in fields.items():
            setattr(ps, name, value)
    return lambda model: build(model, ps_hook=change)


def _set_footer(change: Callable[[Any], None]) -> Callable[[FileModel], bytes | None]:
    return lambda model: build(model, footer_hook=change)


def _deep_types(footer: Any) -> None:
    """A type tree 5000 lists deep (in valid pre-order)."""
    del footer.types[:]
    for i in range(5000):
        footer.types.add(kind=pb.Type.LIST, subtypes=[i + 1])
    footer.types.add(kind=pb.Type.INT)


def _on_stripe(change: Callable[[FileModel, StripeModel], bool]
               ) -> Callable[[FileModel], bytes | None]:
    def apply(model: FileModel) -> bytes | None:
        stripe = copy.deepcopy(model.stripes[0])
        return build(model, {0: stripe}) if change(model, stripe) else None
    return apply


def _dictionary_size(model: FileModel, stripe: StripeModel) -> bool:
    kinds = (pb.ColumnEncoding.DICTIONARY, pb.ColumnEncoding.DICTIONARY_V2)
    hits = [e for e in stripe.footer.columns if e.kind in kinds]
    for e in hits:
        e.dictionarySize = 1 << 31
    return bool(hits)


def _stream_length(model: FileModel, stripe: StripeModel) -> bool:
    data = [s for s in stripe.footer.streams if s.kind == K.DATA]
    data[len(data) // 2].length = 1 << 63
    return True


def _replace_streams(kind: int, plain: bytes) -> Callable[[FileModel, StripeModel], bool]:
    def change(model: FileModel, stripe: StripeModel) -> bool:
        assert stripe.streams is not None
        hit = False
        for k, s in enumerate(stripe.streams):
            if s.proto.kind == kind:
                s.raw = model.frame(plain)
                stripe.footer.streams[k].length = len(s.raw)
                s.proto = stripe.footer.streams[k]
                hit = True
        return hit
    return change


def _row_positions(model: FileModel, stripe: StripeModel) -> bool:
    assert stripe.streams is not None
    for k, s in enumerate(stripe.streams):
        if s.proto.kind == K.ROW_INDEX:
            index = parse_proto(pb.RowIndex, model.unframe(s.raw))
            for entry in index.entry:
                entry.positions[:] = [(1 << 64) - 1] * len(entry.positions)
            s.raw = model.frame(index.SerializeToString())
            stripe.footer.streams[k].length = len(s.raw)
            s.proto = stripe.footer.streams[k]
    return True


def _huge_chunks(model: FileModel) -> bytes | None:
    out = bytearray(model.data)
    for pos in model.chunk_headers:
        out[pos:pos + 3] = ((1 << 23) - 1 << 1).to_bytes(3, "little")
    return bytes(out) if model.chunk_headers else None


#: Damage the issue names, applied exactly: each builds the mutant from a file's model
#: (``None`` when the file has nothing to damage that way).
NAMED: dict[str, Callable[[FileModel], bytes | None]] = {
    "footer length 2**63": _set_ps(footerLength=1 << 63),
    "metadata length 2**64-1": _set_ps(metadataLength=(1 << 64) - 1),
    "stripe statistics length 2**63": _set_ps(stripeStatisticsLength=1 << 63),
    "block size 2**23": _set_ps(compressionBlockSize=1 << 23),
    "block size 1": _set_ps(compressionBlockSize=1),
    "stripe 0 past the end": _set_footer(
        lambda f: setattr(f.stripes[0], "offset", f.contentLength + 10**6)),
    "stripe 0 data length 2**63": _set_footer(
        lambda f: setattr(f.stripes[0], "dataLength", 1 << 63)),
    "last stripe 2**63 rows": _set_footer(
        lambda f: setattr(f.stripes[-1], "numberOfRows", 1 << 63)),
    "file 2**64-1 rows": _set_footer(lambda f: setattr(f, "numberOfRows", (1 << 64) - 1)),
    "type cycle": _set_footer(lambda f: f.types[0].subtypes.__setitem__(0, 0)),
    "subtype out of range": _set_footer(lambda f: f.types[0].subtypes.append(len(f.types) + 5)),
    "type tree 5000 deep": _set_footer(_deep_types),
    "row index stride 1": _set_footer(lambda f: setattr(f, "rowIndexStride", 1)),
    "dictionary size 2**31": _on_stripe(_dictionary_size),
    "stream length 2**63": _on_stripe(_stream_length),
    "LENGTH streams of 2**62-long runs": _on_stripe(
        _replace_streams(K.LENGTH, b"\x7f\x00" + b"\xff" * 8 + b"\x3f")),
    "DATA streams of unterminated varints": _on_stripe(_replace_streams(K.DATA, b"\x80" * 64)),
    "PRESENT streams all null": _on_stripe(_replace_streams(K.PRESENT, b"\x7f\x00" * 4000)),
    "row index positions 2**64-1": _on_stripe(_row_positions),
    "every chunk header 2**23-1 long": _huge_chunks,
}


def named_mutant(data: bytes, model: FileModel | None, k: int) -> Mutant:
    """The ``k``-th (cyclically) of the :data:`NAMED` mutations of ``data``; a random mutant
    when the file does not allow it."""
    name = list(NAMED)[k % len(NAMED)]
    out = NAMED[name](model) if model is not None and model.stripes else None
    if out is None:
        mutant, what = mutate(data, model, k)
        return mutant, f"(no '{name}' here) {what}"
    return out, f"named: {name}"
