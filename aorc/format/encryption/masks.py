"""Data masks: the clear copy of an encrypted column that readers without its key see.

As ORC Java's ``impl/mask`` computes them:

* ``nullify``: every value null (the default mask);
* ``sha256``: strings become the upper-case hex SHA-256 of their UTF-8 bytes (varchar(n)
  truncated to n characters; char(n) truncated, or padded with spaces and, as ORC Java pads,
  a final NUL byte); binary values their 32-byte SHA-256 digest; other types are nullified.
  Nulls stay null.
"""

from __future__ import annotations

import hashlib

import pyarrow as pa

from aorc.errors import SchemaError
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


def mask_array(arr: pa.Array, t: OrcType, mask: str) -> pa.Array:
    """The masked copy of ``arr`` (a column of type ``t``).

    Raises:
        SchemaError: a mask aorc does not write.
    """
    if mask == "nullify" or (mask == "sha256" and t.kind not in (*_STRINGS, TypeKind.BINARY)):
        return pa.nulls(len(arr), arr.type)
    if mask != "sha256":
        raise SchemaError(f"mask {mask!r} is not one aorc writes (nullify, sha256)")
    if pa.types.is_dictionary(arr.type):
        arr = arr.dictionary_decode()
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
