"""Tests of the LZO1X decompressor (aorc/format/codec/_lzo.pyx).

Blocks built by hand from the format description check each instruction; lzallright (a Rust
port of lzokay, an LZO1X implementation independent of liblzo2 and of aorc's; in the test
extra, see helpers/lzo_peer.py) is the peer for random data; the Java-written conformance file
is checked in test_compression.py.
"""

from __future__ import annotations

import random

import pytest
from helpers.lzo_peer import LzoPeer, lzo_peer
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aorc.errors import CorruptFileError
from aorc.format.codec import _lzo

END = b"\x11\x00\x00"  # M4 instruction with distance 16384: end of block


def extended(length: int, field_max: int) -> bytes:
    """Extension bytes of a length field set to 0: zero bytes worth 255, then a non-zero byte."""
    rest = length - field_max
    zeros, last = divmod(rest, 255)
    if last == 0:
        zeros, last = zeros - 1, 255
    return bytes(zeros) + bytes([last])


LITERALS_2100 = bytes(random.Random(1).randrange(256) for _ in range(2100))
LITERALS_16500 = bytes(random.Random(2).randrange(256) for _ in range(16500))
LITERALS_33000 = bytes(random.Random(3).randrange(256) for _ in range(33000))

# (block, expected output), each written from the instruction table.
HAND_MADE = {
    "empty block": (END, b""),
    "first byte literal run": (bytes([17 + 5]) + b"hello" + END, b"hello"),
    "short literal then 2-byte match": (
        bytes([17 + 2]) + b"ab" + bytes([1 << 2, 0]) + END,
        b"abab",
    ),
    "overlapping near match": (
        bytes([17 + 3]) + b"abc" + bytes([0b101_010_00, 0]) + END,  # length 6, distance 3
        b"abcabcabc",
    ),
    "near match with long distance field": (
        # 64..127: length 3 + bit 5 = 4; distance 1 + bits 4..2 + (next << 3) = 1 + 3 + 8 = 12.
        bytes([17 + 12]) + b"0123456789AB" + bytes([0b011_011_00, 1]) + END,
        b"0123456789AB" + b"0123",
    ),
    "extended literal run at the start": (
        bytes([0]) + extended(274 - 3, 15) + bytes(range(256)) + bytes(18) + END,
        bytes(range(256)) + bytes(18),
    ),
    "3-byte match after a long literal run": (
        # state 4: distance 2049 + (b >> 2) + (next << 2) = 2049 + 3 + 48 = 2100
        bytes([0]) + extended(2100 - 3, 15) + LITERALS_2100 + bytes([3 << 2, 12]) + END,
        LITERALS_2100 + LITERALS_2100[:3],
    ),
    "medium match with extended length and a trailing literal": (
        # 32..63, length 2 + 38 = 40, distance 1 + (le16 >> 2) = 4, one literal (le16 & 3).
        bytes([17 + 4])
        + b"abcd"
        + bytes([32])
        + extended(38, 31)
        + bytes([3 << 2 | 1, 0])
        + b"Z"
        + END,
        (b"abcd" * 11)[:44] + b"Z",
    ),
    "far match": (
        # 16..31: length 2 + 5, distance 16384 + (le16 >> 2) = 16384 + 116 = 16500
        bytes([0])
        + extended(16500 - 3, 15)
        + LITERALS_16500
        + bytes([16 | 5])
        + (116 << 2).to_bytes(2, "little")
        + END,
        LITERALS_16500 + LITERALS_16500[:7],
    ),
    "far match with the high distance bit": (
        # 16..31 with bit 3 set: length 2 + 3, distance 32768 + (le16 >> 2) = 32768 + 232
        bytes([0])
        + extended(33000 - 3, 15)
        + LITERALS_33000
        + bytes([16 | 8 | 3])
        + (232 << 2).to_bytes(2, "little")
        + END,
        LITERALS_33000 + LITERALS_33000[:5],
    ),
}


@pytest.mark.parametrize("name", list(HAND_MADE))
def test_hand_made_blocks(name: str) -> None:
    block, expected = HAND_MADE[name]
    assert _lzo.decompress(block, len(expected)) == expected
    assert _lzo.decompress(bytearray(block), len(expected) + 100) == expected
    if expected:
        with pytest.raises(CorruptFileError, match="expands beyond"):
            _lzo.decompress(block, len(expected) - 1)


def test_decompress_into_reports_size() -> None:
    out = bytearray(50)
    assert _lzo.decompress_into(memoryview(bytes([22]) + b"hello" + END), out) == 5
    assert out[:5] == b"hello"


@pytest.mark.parametrize(
    ("block", "message"),
    [
        (b"", "ends without an end-of-block marker"),
        (bytes([22]) + b"hello", "ends without an end-of-block marker"),
        (bytes([22]) + b"hel", "truncated"),
        (bytes([20]) + b"abc" + bytes([0b101_010_00]), "truncated"),
        (bytes([20]) + b"abc" + bytes([0b101_010_00, 1]) + END, "refers 11 bytes back"),
        (bytes([22]) + b"hello" + END + b"x", "1 bytes after its end-of-block marker"),
        (bytes([0]) + bytes(3), "truncated"),  # an extended length that never ends
        (bytes([16 | 1, 4, 0]), "refers 16385 bytes back"),  # far match before any output
    ],
)
def test_malformed_blocks(block: bytes, message: str) -> None:
    with pytest.raises(CorruptFileError, match=message):
        _lzo.decompress(block, 1000)


def test_huge_extended_length_is_refused_early() -> None:
    block = bytes([0]) + bytes(100_000) + b"\x01"
    with pytest.raises(CorruptFileError, match="expands beyond"):
        _lzo.decompress(block, 1000)


@pytest.fixture(scope="module")
def lzo() -> LzoPeer:
    """The independent LZO1X compressor."""
    return lzo_peer()


def _samples() -> list[bytes]:
    rng = random.Random(5)
    out = [b"", b"a", b"ab" * 3, rng.randbytes(100), bytes(70_000)]
    for n in (17, 300, 5000, 70_000, 200_000):
        out.append(bytes(rng.choice(b"abcdefgh\x00") for _ in range(n)))
        words = [rng.randbytes(rng.randint(1, 12)) for _ in range(40)]
        out.append(b"".join(rng.choices(words, k=n // 6))[:n])
    return out


def test_against_the_peer(lzo: LzoPeer) -> None:
    for data in _samples():
        block = lzo.compress(data)
        assert lzo.decompress(block, len(data)) == data  # the peer reads its own block
        assert _lzo.decompress(block, len(data)) == data
        for cut in {0, 1, len(block) // 2, len(block) - 1}:
            with pytest.raises(CorruptFileError):
                _lzo.decompress(block[:cut], len(data))


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    data=st.binary(max_size=2000)
    | st.lists(st.sampled_from([b"ab", b"xyz", b"\x00"])).map(b"".join)
)
def test_peer_property(lzo: LzoPeer, data: bytes) -> None:
    assert _lzo.decompress(lzo.compress(data), len(data)) == data


@settings(max_examples=300, deadline=None)
@given(block=st.binary(max_size=200))
def test_random_blocks_raise_only_corrupt(block: bytes) -> None:
    try:
        out = _lzo.decompress(block, 300)
    except CorruptFileError:
        return
    assert len(out) <= 300
