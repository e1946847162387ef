"""The sha256 mask's C kernel (``_sha256.pyx``) against ``hashlib``: every padding boundary
(55, 56, 63, 64, 119, 120 bytes...), empty values, nulls and sliced columns, for strings
(upper-case hex) and binary (digests)."""

from __future__ import annotations

import hashlib
import random

import pyarrow as pa

from aorc.format.encryption.masks import mask_array
from aorc.format.types import parse_type_string

LENGTHS = [0, 1, 3, 55, 56, 57, 63, 64, 65, 119, 120, 127, 128, 129, 1000, 70_000]


def values(seed: int = 1, n: int = 2000) -> list[bytes | None]:
    rng = random.Random(seed)
    return [None if rng.random() < 0.1 else rng.randbytes(rng.choice(LENGTHS))
            for _ in range(n)]


def test_binary_digests_match_hashlib() -> None:
    vals = values()
    for arr in (pa.array(vals, pa.binary()), pa.array(vals, pa.large_binary()).slice(13)):
        got = mask_array(arr, parse_type_string("binary"), "sha256")
        assert got.type == arr.type
        assert got.to_pylist() == [None if v is None else hashlib.sha256(v).digest()
                                   for v in arr.to_pylist()]


def test_string_hex_matches_hashlib() -> None:
    texts = [None if v is None else v.hex() + "é" for v in values(2)]
    for arr in (pa.array(texts), pa.array(texts).slice(5, 1500), pa.array([], pa.string()),
                pa.array(["", None, ""]), pa.array(texts).dictionary_encode()):
        got = mask_array(arr, parse_type_string("string"), "sha256").to_pylist()
        plain = arr.dictionary_decode() if pa.types.is_dictionary(arr.type) else arr
        assert got == [None if v is None else hashlib.sha256(v.encode()).hexdigest().upper()
                       for v in plain.to_pylist()]
