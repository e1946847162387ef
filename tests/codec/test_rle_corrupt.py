"""Malformed input to the decoding kernels: always CorruptFileError, never a crash, a hang,
another exception type or an allocation the input cannot justify."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from orc_stream_helpers import write_pyarrow
from rle_builders import direct, pack_be, patched, uvarint, zigzag

from aorc.errors import CorruptFileError
from aorc.format._proto import orc_proto_pb2 as pb
from aorc.format.codec import _decode

Decoder = Callable[..., Any]

DECODERS: dict[str, Decoder] = {
    "byte": lambda data, n, offset=0, skip=0: _decode.read_byte_rle(data, n, offset, skip),
    "bool": lambda data, n, offset=0, skip=0: _decode.read_bool_rle(data, n, offset, skip),
    "v1": lambda data, n, offset=0, skip=0: _decode.read_int_rle_v1(data, n, True, offset, skip),
    "v1u": lambda data, n, offset=0, skip=0: _decode.read_int_rle_v1(data, n, False, offset, skip),
    "v2": lambda data, n, offset=0, skip=0: _decode.read_int_rle_v2(data, n, True, offset, skip),
    "v2u": lambda data, n, offset=0, skip=0: _decode.read_int_rle_v2(data, n, False, offset, skip),
    "varint": lambda data, n, offset=0, skip=0: _decode.read_varints(data, n, True, offset),
    "varint128": lambda data, n, offset=0, skip=0: _decode.read_varint128(data, n, offset),
}


def _mixed_values() -> np.ndarray:
    rng = np.random.default_rng(3)
    parts = [
        np.full(7, 123456),  # short repeat
        rng.integers(-(2**20), 2**20, 600),  # direct
        np.arange(0, 3000, 3),  # delta, fixed
        np.cumsum(rng.integers(1, 1000, 300)),  # delta, packed
        np.where(rng.random(512) < 0.02, 2**50, rng.integers(0, 100, 512)),  # patched base
    ]
    return np.concatenate(parts).astype(np.int64)


@pytest.fixture(scope="module")
def written_streams() -> dict[str, tuple[bytes, int]]:
    """Whole streams from ORC C++ (pyarrow): kind -> (bytes, number of values)."""
    values = _mixed_values()
    rng = np.random.default_rng(4)
    n = len(values)
    columns = {
        "i": pa.array(values),
        "b": pa.array(rng.random(n) < 0.3),
        "t": pa.array(np.where(rng.random(n) < 0.5, rng.integers(-128, 128, n), 5).astype(np.int8)),
    }
    streams: dict[str, tuple[bytes, int]] = {}
    for version, suffix in (("0.12", "v2"), ("0.11", "v1")):
        stripe = write_pyarrow(columns, file_version=version).stripes[0]
        streams[suffix] = (stripe.stream(1, pb.Stream.DATA) or b"", n)
        streams["bool"] = (stripe.stream(2, pb.Stream.DATA) or b"", n)
        streams["byte"] = (stripe.stream(3, pb.Stream.DATA) or b"", n)
    varints = b"".join(uvarint(zigzag(int(v))) for v in values)
    streams["varint"] = (varints, n)
    streams["varint128"] = (varints, n)
    return streams


@pytest.mark.parametrize("kind", ["v2", "v1", "bool", "byte", "varint", "varint128"])
def test_every_truncation_fails(written_streams: dict[str, tuple[bytes, int]], kind: str) -> None:
    data, n = written_streams[kind]
    decode = DECODERS[kind]
    assert len(decode(data, n)) == n
    step = max(1, len(data) // 400)
    for cut in range(0, len(data), step):
        with pytest.raises(CorruptFileError):
            decode(data[:cut], n)
        if not kind.startswith("varint"):  # those take no skip
            with pytest.raises(CorruptFileError):
                decode(memoryview(data)[:cut], 1, 0, n - 1)


@pytest.mark.parametrize("kind", sorted(DECODERS))
def test_absurd_counts_refused_before_allocating(kind: str) -> None:
    decode = DECODERS[kind]
    with pytest.raises(CorruptFileError, match="cannot be encoded"):
        decode(b"\x00" * 16, 10**15)
    with pytest.raises(CorruptFileError, match="past the end"):
        decode(b"\x00" * 16, 1, 17)
    for n, offset in ((-1, 0), (1, -1)):
        with pytest.raises(CorruptFileError, match="negative"):
            decode(b"\x00" * 16, n, offset)
    if not kind.startswith("varint"):  # those take no skip
        with pytest.raises(CorruptFileError, match="cannot be encoded"):
            decode(b"\x00" * 16, 1, 0, 2**62)
        with pytest.raises(CorruptFileError, match="negative"):
            decode(b"\x00" * 16, 1, 0, -1)


CORRUPT_V2 = {
    "empty patch list": patched([1, 2, 3], 2, b"\x00", 4, 2, [], count=0) + b"\x00" * 4,
    "over 64 bits": patched([1, 2, 3], 2, b"\x00", 64, 1, [(0, 1)]),
    "past the end of the patch list": patched([1] * 300, 1, b"\x00", 2, 8, [(255, 0)]),
    "fewer than 2 values": bytes([0xC2, 0x00, 0x00, 0x02, 0x00]),
    "longer than 10 bytes": bytes([0xC0, 0x02]) + b"\x80" * 10 + b"\x01\x02",
    "ends early": direct([1, 2, 3, 4], 16)[:-1],
}


@pytest.mark.parametrize("problem", sorted(CORRUPT_V2))
def test_corrupt_rle_v2_runs(problem: str) -> None:
    data = CORRUPT_V2[problem]
    with pytest.raises(CorruptFileError, match=problem):
        _decode.read_int_rle_v2(data, 3, False)
    # the same run after a good one, and skipped over
    good = bytes([0x0A, 0x27, 0x10])
    with pytest.raises(CorruptFileError, match=r"after 5 values, in the run at byte 3"):
        _decode.read_int_rle_v2(good + data, 8, False, 0, 4)


def test_corrupt_varints() -> None:
    with pytest.raises(CorruptFileError, match="longer than 10 bytes"):
        _decode.read_varints(b"\xff" * 11, 1, False)
    with pytest.raises(CorruptFileError, match="longer than 10 bytes"):
        _decode.read_int_rle_v1(bytes([0xFF]) + b"\xff" * 12, 1, False)
    with pytest.raises(CorruptFileError, match="ends early"):
        _decode.read_int_rle_v1(bytes([0x00, 0x01]), 3, False)
    with pytest.raises(CorruptFileError, match="ends early"):
        _decode.read_varints(b"\x01\x81", 2, False)


def test_stream_with_extra_values_is_fine() -> None:
    data = direct(list(range(100)), 8) + b"\xff\xff"  # trailing garbage after the run
    assert _decode.read_int_rle_v2(data, 10, False, 0, 5).tolist() == list(range(5, 15))
    # a patch list entry pointing past the run is simply never reached
    data = patched([1, 2], 2, b"\x00", 2, 8, [(200, 1)]) + pack_be([0], 8)
    assert _decode.read_int_rle_v2(data, 2, False).tolist() == [1, 2]


def _check(decode: Decoder, data: bytes, n: int, offset: int, skip: int) -> None:
    try:
        result = decode(data, n, offset, skip)
    except CorruptFileError:
        return
    assert len(result) == n


@settings(max_examples=300)
@given(
    st.sampled_from(sorted(DECODERS)),
    st.binary(max_size=600),
    st.integers(0, 5000),
    st.integers(0, 20),
    st.integers(0, 3000),
)
def test_random_bytes(kind: str, data: bytes, n: int, offset: int, skip: int) -> None:
    _check(DECODERS[kind], data, n, offset, skip)


@settings(max_examples=300)
@given(
    st.sampled_from(["v2", "v1", "bool", "byte", "varint128"]),
    st.lists(st.tuples(st.integers(0, 2**20), st.integers(0, 255)), min_size=1, max_size=8),
)
def test_mutated_streams(
    written_streams: dict[str, tuple[bytes, int]], kind: str, edits: list[tuple[int, int]]
) -> None:
    stream, n = written_streams[kind]
    mutated = bytearray(stream)
    for position, value in edits:
        mutated[position % len(mutated)] = value
    _check(DECODERS[kind], bytes(mutated), n, 0, 0)
    _check(DECODERS[kind], bytes(mutated), n // 2, 0, n // 3)
