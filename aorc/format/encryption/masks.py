"""Data masks: the clear copy of an encrypted column that readers without its key see.

As ORC Java's ``impl/mask`` computes them:

* ``nullify``: every value null (the default mask);
* ``sha256``: strings become the upper-case hex SHA-256 of their UTF-8 bytes (varchar(n)
  truncated to n characters; char(n) truncated, or padded with spaces and, as ORC Java pads,
  a final NUL byte); binary values their 32-byte SHA-256 digest; other primitive types are
  nullified; lists, maps, structs and unions keep their shape (a union its tags) with each
  child masked so. Nulls stay null.
* ``redact``: :mod:`aorc.format.encryption.redact` (character classes, digits, dates).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from aorc.errors import SchemaError
from aorc.format.encryption._sha256 import sha256_digests, sha256_hex
from aorc.format.encryption.redact import RedactMask
from aorc.format.types import OrcType, TypeKind
from aorc.format.unions import union_codes

__all__ = ["mask_array"]

_STRINGS = (TypeKind.STRING, TypeKind.VARCHAR, TypeKind.CHAR)


def _compound(arr: pa.Array, t: OrcType, mask: str, parameters: tuple[str, ...] = ()
              ) -> pa.Array:
    """A list, map, struct or union with its children masked (its own nulls, and a union's
    tags, kept), as ORC Java's ``MaskFactory`` builds its identity masks."""
    if t.kind == TypeKind.UNION:
        return _union(arr, t, mask, parameters)
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


def _union(arr: pa.UnionArray, t: OrcType, mask: str, parameters: tuple[str, ...]
           ) -> pa.Array:
    """A union with each branch's values masked by the branch's type and the same tags."""
    names = [f.name for f in arr.type]
    codes = list(arr.type.type_codes)
    children = [mask_array(arr.field(i), c, mask, parameters)
                for i, c in enumerate(t.children)]
    tags, offsets = union_codes(arr)
    if offsets is not None:
        return pa.UnionArray.from_dense(pa.array(tags), pa.array(offsets), children, names,
                                        codes)
    return pa.UnionArray.from_sparse(pa.array(tags), children, names, codes)


def _values(arr: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """The data bytes and int64 offsets (from 0) of a string or binary column."""
    raw = arr.cast(pa.large_binary())
    _validity, offsets_buf, data_buf = raw.buffers()
    offsets = np.frombuffer(offsets_buf, np.int64)[raw.offset:raw.offset + len(raw) + 1]
    data = (np.frombuffer(data_buf, np.uint8) if data_buf is not None and data_buf.size
            else np.zeros(1, np.uint8))
    return data, np.ascontiguousarray(offsets)


def _validity(arr: pa.Array) -> pa.Buffer | None:
    if arr.null_count == 0:
        return None
    return pa.py_buffer(np.packbits(arr.is_valid().to_numpy(zero_copy_only=False),
                                    bitorder="little"))


def _sha256_width(text: np.ndarray, n: int, t: OrcType) -> tuple[np.ndarray, int]:
    """The 64 hex characters of each of ``n`` values cut or padded to the column's width as
    ORC Java's ``SHA256MaskFactory`` does: varchar(n) keeps at most n characters; char(n)
    always has n, the hex truncated or padded with spaces and a final NUL byte (Java fills
    the padding up to the last byte and leaves that one zero)."""
    width = t.max_length if t.kind in (TypeKind.VARCHAR, TypeKind.CHAR) else None
    if width is None or width == 64 or (t.kind == TypeKind.VARCHAR and width > 64):
        return text, 64
    rows = text.reshape(n, 64)
    if width < 64:
        return np.ascontiguousarray(rows[:, :width]).reshape(-1), width
    padded = np.full((n, width), ord(" "), np.uint8)
    padded[:, :64] = rows
    padded[:, -1] = 0
    return padded.reshape(-1), width


def _sha256_strings(arr: pa.Array, t: OrcType) -> pa.Array:
    """sha256 of a string, varchar or char column: 64 upper-case hex characters per value
    (see :func:`_sha256_width` for varchar and char), built in one buffer by a C kernel that
    releases the GIL (``_sha256.pyx``; a ``hashlib`` call per value made masked writes
    several times slower than plain ones)."""
    n = len(arr)
    data, offsets = _values(arr)
    text = np.empty(64 * n, np.uint8)
    sha256_hex(data, offsets, text)
    text, width = _sha256_width(text, n, t)
    out_offsets = np.arange(0, width * n + 1, width, dtype=np.int64)
    result = pa.Array.from_buffers(pa.large_string(), n,
                                   [_validity(arr), pa.py_buffer(out_offsets),
                                    pa.py_buffer(text)], null_count=arr.null_count)
    return result.cast(arr.type)


def _sha256_binary(arr: pa.Array) -> pa.Array:
    """sha256 of a binary column: each value's 32-byte digest (the same kernel)."""
    n = len(arr)
    data, offsets = _values(arr)
    digests = np.empty(32 * n, np.uint8)
    sha256_digests(data, offsets, digests)
    result = pa.Array.from_buffers(pa.large_binary(), n,
                                   [_validity(arr),
                                    pa.py_buffer(np.arange(0, 32 * n + 1, 32, dtype=np.int64)),
                                    pa.py_buffer(digests)], null_count=arr.null_count)
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
    if mask == "sha256" and t.kind.is_compound:
        return _compound(arr, t, mask)
    if mask == "nullify" or t.kind not in (*_STRINGS, TypeKind.BINARY):
        return pa.nulls(len(arr), arr.type)
    if pa.types.is_dictionary(arr.type):
        arr = arr.dictionary_decode()
    if t.kind == TypeKind.BINARY:
        return _sha256_binary(arr)
    return _sha256_strings(arr, t)
