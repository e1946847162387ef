"""Data masks: the clear copy of an encrypted column that readers without its key see.

As ORC Java's ``impl/mask`` computes them:

* ``nullify``: every value null (the default mask);
* ``sha256``: strings become the upper-case hex SHA-256 of their UTF-8 bytes (varchar(n)
  truncated to n characters; char(n) truncated, or padded with spaces and, as ORC Java pads,
  a final NUL byte); binary values their 32-byte SHA-256 digest; other primitive types are
  nullified; lists, maps and structs keep their shape with each child masked so. Nulls stay
  null.
* ``redact``: :mod:`aorc.format.encryption.redact` (character classes, digits, dates).
"""

from __future__ import annotations

import hashlib

import numpy as np
import pyarrow as pa

from aorc.errors import SchemaError
from aorc.format.encryption.redact import RedactMask
from aorc.format.types import OrcType, TypeKind

__all__ = ["mask_array"]

_STRINGS = (TypeKind.STRING, TypeKind.VARCHAR, TypeKind.CHAR)


def _sha256_text(value: bytes, t: OrcType) -> bytes:
    digest = hashlib.sha256(value).hexdigest().upper().encode()
    if t.kind == TypeKind.VARCHAR and t.max_length is not None:
        return digest[:t.max_length]
    if t.kind == TypeKind.CHAR and t.max_length is not None:
        if t.max_length <= len(digest):
            return digest[:t.max_length]
        return digest + b" " * (t.max_length - len(digest) - 1) + b"\0"
    return digest


def _compound(arr: pa.Array, t: OrcType, mask: str, parameters: tuple[str, ...] = ()
              ) -> pa.Array:
    """A list, map or struct with its children masked (its own nulls kept)."""
    validity = None if arr.null_count == 0 else arr.is_null()
    if t.kind == TypeKind.STRUCT:
        children = [mask_array(arr.field(i), c, mask, parameters)
                    for i, c in enumerate(t.children)]
        return pa.StructArray.from_arrays(children, fields=list(arr.type), mask=validity)
    offsets = arr.offsets
    if t.kind == TypeKind.LIST:
        values = mask_array(arr.values, t.children[0], mask, parameters)
        return type(arr).from_arrays(offsets, values, type=arr.type, mask=validity)
    keys = mask_array(arr.keys, t.children[0], mask, parameters)
    items = mask_array(arr.items, t.children[1], mask, parameters)
    return pa.MapArray.from_arrays(offsets, keys, items, type=arr.type, mask=validity)


_HEX = np.frombuffer(b"0123456789ABCDEF", np.uint8)


def _sha256_strings(arr: pa.Array) -> pa.Array:
    """sha256 of a string column: 64 upper-case hex characters per value, built in one
    buffer (the digests in a loop, their hex with numpy)."""
    n = len(arr)
    raw = arr.cast(pa.large_binary())
    validity, offsets_buf, data_buf = raw.buffers()
    offsets = np.frombuffer(offsets_buf, np.int64)[raw.offset:raw.offset + n + 1]
    data = memoryview(data_buf) if data_buf is not None else memoryview(b"")
    digests = bytearray(32 * n)
    sha = hashlib.sha256
    starts, ends = offsets[:-1].tolist(), offsets[1:].tolist()
    for i in range(n):
        digests[32 * i:32 * i + 32] = sha(data[starts[i]:ends[i]]).digest()
    nibbles = np.frombuffer(bytes(digests), np.uint8)
    text = np.empty(64 * n, np.uint8)
    text[0::2] = _HEX[nibbles >> 4]
    text[1::2] = _HEX[nibbles & 15]
    out_offsets = np.arange(0, 64 * n + 1, 64, dtype=np.int64)
    masks = None if arr.null_count == 0 else pa.py_buffer(
        np.packbits(arr.is_valid().to_numpy(zero_copy_only=False), bitorder="little"))
    result = pa.Array.from_buffers(pa.large_string(), n,
                                   [masks, pa.py_buffer(out_offsets), pa.py_buffer(text)],
                                   null_count=arr.null_count)
    return result.cast(arr.type)


def mask_array(arr: pa.Array, t: OrcType, mask: str,
               parameters: tuple[str, ...] = ()) -> pa.Array:
    """The masked copy of ``arr`` (a column of type ``t``); ``parameters``: the mask's.

    Raises:
        SchemaError: a mask aorc does not write, or bad parameters.
    """
    if mask == "redact":
        redact = RedactMask(parameters)
        return redact.mask(arr, t, lambda a, c: _compound(a, c, mask, parameters))
    if mask not in ("nullify", "sha256"):
        raise SchemaError(f"mask {mask!r} is not one aorc writes (nullify, redact, sha256)")
    if mask == "sha256" and t.kind.is_compound and t.kind != TypeKind.UNION:
        return _compound(arr, t, mask)
    if mask == "nullify" or t.kind not in (*_STRINGS, TypeKind.BINARY):
        return pa.nulls(len(arr), arr.type)
    if pa.types.is_dictionary(arr.type):
        arr = arr.dictionary_decode()
    if t.kind == TypeKind.STRING:
        return _sha256_strings(arr)
    binary = pa.types.is_binary(arr.type) or pa.types.is_large_binary(arr.type) \
        or pa.types.is_binary_view(arr.type)
    raw = arr.cast(pa.large_binary()) if not binary else arr.cast(pa.large_binary())
    out: list[bytes | None] = []
    for value in raw.to_pylist():
        if value is None:
            out.append(None)
        elif t.kind == TypeKind.BINARY:
            out.append(hashlib.sha256(value).digest())
        else:
            out.append(_sha256_text(value, t))
    result = pa.array(out, pa.large_binary())
    return result.cast(arr.type) if not binary else result.cast(arr.type)
