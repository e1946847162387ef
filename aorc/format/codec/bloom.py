"""ORC bloom filters, bit-identical with the ones ORC Java writes.

An ORC bloom filter holds ``m`` bits (a multiple of 64, stored as 64-bit words) and uses ``k``
probes per value. Each value is reduced to one signed 64-bit hash:

- integer kinds, booleans (0/1), dates (epoch days), list/map lengths: Thomas Wang's 64-bit
  integer hash of the value (:func:`thomas_wang_hash64`);
- float and double: the same hash of Java's ``doubleToLongBits`` of the value (floats are
  rounded to float32 first and widened; every NaN becomes the canonical NaN);
- string, varchar, char, binary: ORC's 64-bit Murmur3 of the bytes (:func:`murmur3_hash64`,
  seed 104729; NOT the first half of MurmurHash3_x64_128); char values space-padded to their
  declared length;
- decimal: Murmur3 of the plain decimal text with trailing fractional zeros removed
  ("1.10" -> "1.1", "100.00" -> "100", "0.00" -> "0", "-0.50" -> "-0.5");
- timestamp: the integer hash of UTC epoch milliseconds (wall clock read as UTC for
  timestamps without time zone). ORC Java gets this wrong for instants strictly between
  one second before the epoch and the epoch (it hashes ``millis + 1000``); the writer side
  here reproduces that, and :meth:`BloomFilter.might_contain` probes both values.

Nulls are never added. The 64-bit hash is split into signed 32-bit halves ``h1`` (low) and
``h2`` (high); probe ``i`` (1..k) sets bit ``c % m`` of ``c = h1 + i * h2`` (32-bit wrap,
bits flipped when negative), bit ``pos & 63`` of word ``pos >> 6``.

Reading: :meth:`BloomFilter.from_proto` returns ``None`` (never raises) when a filter's shape
is not usable - an empty or misaligned bitset, or a hash-function count impossible for its
size (this rejects pre-release shapes such as Apache ORC's ``over1k_bloom.orc``, whose first
field holds the expected entries). A bloom filter is only an optimisation, so an unusable one
must make the caller fall back to "might contain", not fail the read.
:func:`bloom_filter_usable` says whether the filters of a column can be trusted at all (bad
writers and legacy-kind streams known to be wrong).
"""

from __future__ import annotations

import datetime
import decimal
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc
from google.protobuf.message import DecodeError

from aorc.errors import CorruptFileError, SchemaError
from aorc.format._proto import orc_proto_pb2 as pb
from aorc.format.codec import _bloom
from aorc.format.types import TypeKind
from aorc.format.unions import union_branches

__all__ = [
    "DEFAULT_FPP",
    "NULL_HASHCODE",
    "SEED",
    "BloomFilter",
    "bloom_filter_usable",
    "decode_bloom_filter_index",
    "double_to_long_bits",
    "hash_arrow_array",
    "hash_value",
    "long_hash",
    "murmur3_hash64",
    "murmur3_hash64_many",
    "optimal_size",
    "thomas_wang_hash64",
]

#: Seed of ORC's 64-bit Murmur3.
SEED = 104729
#: Hash ORC Java gives a null byte array (never added by writers; kept for completeness).
NULL_HASHCODE = 2862933555777941757
#: Default false positive probability of ORC Java since 1.8.2 (0.05 before).
DEFAULT_FPP = 0.01

_STREAM_BLOOM_FILTER = pb.Stream.BLOOM_FILTER
_STREAM_BLOOM_FILTER_UTF8 = pb.Stream.BLOOM_FILTER_UTF8
_WRITER_ORC_JAVA = 0
_WRITER_ORC_CPP = 1
_HIVE_12055 = 3  # Java writer version from which legacy string filters hash UTF-8
_ORC_135 = 6  # Java writer version from which timestamps are UTC based
_BLOOM_ENCODING_UTF8_UTC = 1
_BAD_CPP_VERSIONS = frozenset(
    ["1.6.0", "1.6.1", "1.6.2", "1.6.3", "1.6.4", "1.6.5", "1.6.6", "1.6.7", "1.6.8",
     "1.6.9", "1.6.10", "1.6.11", "1.7.0"]
)  # fmt: skip
# Kinds whose bloom filters the ORC C++ writer gets wrong in every release so far: tinyint and
# boolean hash the batch after it was packed into bytes in place, char hashes the unpadded
# bytes with the padded length, float hashes the batch's double before rounding to float.
_CPP_BROKEN_KINDS = frozenset([TypeKind.BYTE, TypeKind.BOOLEAN, TypeKind.CHAR, TypeKind.FLOAT])
_CANONICAL_NAN_BITS = 0x7FF8000000000000
_MAX_BITS = 2**31 - 64  # ORC Java indexes bits with a signed 32-bit int
_LN2 = math.log(2.0)
_MS_PER_DAY = 86_400_000
_UNIT_DIVISORS = {"s": None, "ms": 1, "us": 1_000, "ns": 1_000_000}
_EPOCH = datetime.datetime(1970, 1, 1)
_EPOCH_DATE = datetime.date(1970, 1, 1)

_INTEGER_KINDS = frozenset(
    [TypeKind.BOOLEAN, TypeKind.BYTE, TypeKind.SHORT, TypeKind.INT, TypeKind.LONG]
)
_BYTES_KINDS = frozenset([TypeKind.STRING, TypeKind.VARCHAR, TypeKind.CHAR, TypeKind.BINARY])
_STRING_KINDS = frozenset([TypeKind.STRING, TypeKind.VARCHAR, TypeKind.CHAR])
_TIMESTAMP_KINDS = frozenset([TypeKind.TIMESTAMP, TypeKind.TIMESTAMP_INSTANT])

Int64Array = npt.NDArray[np.int64]


# ---------------------------------------------------------------------------------------------
# hash functions


def murmur3_hash64(data: bytes | bytearray | memoryview, seed: int = SEED) -> int:
    """ORC's 64-bit Murmur3 of ``data`` as a signed int, as ORC Java's ``Murmur3.hash64``."""
    return int(_bloom.murmur3_hash64(np.frombuffer(data, dtype=np.uint8), seed))


def murmur3_hash64_many(
    offsets: npt.NDArray[np.int32] | npt.NDArray[np.int64],
    data: bytes | memoryview | pa.Buffer | npt.NDArray[np.uint8],
    seed: int = SEED,
) -> Int64Array:
    """:func:`murmur3_hash64` of ``data[offsets[i]:offsets[i + 1]]`` for each of n values.

    Offsets (n + 1 of them, int32 or int64) and data are laid out as in Arrow string arrays.
    Raises ValueError when an offset is negative, decreasing or past the end of ``data``.
    """
    offs = np.ascontiguousarray(offsets)
    if offs.dtype not in (np.int32, np.int64):
        offs = offs.astype(np.int64)
    raw = data if isinstance(data, np.ndarray) else np.frombuffer(data, dtype=np.uint8)
    result: Int64Array = _bloom.murmur3_hash64_offsets(offs, raw, seed)
    return result


def thomas_wang_hash64(values: npt.ArrayLike) -> Int64Array:
    """Thomas Wang's 64-bit hash of every (int64) value, as ORC Java's ``getLongHash``."""
    arr = np.ascontiguousarray(values, dtype=np.int64)
    result: Int64Array = _bloom.thomas_wang_hash64(arr.reshape(-1))
    return result


def long_hash(value: int) -> int:
    """Thomas Wang's hash of one signed 64-bit integer (wrapped to 64 bits first)."""
    wrapped = ((int(value) + 2**63) % 2**64) - 2**63
    return int(thomas_wang_hash64(np.array([wrapped], dtype=np.int64))[0])


def double_to_long_bits(values: npt.ArrayLike) -> Int64Array:
    """Java's ``Double.doubleToLongBits``: the IEEE bits, every NaN made the canonical NaN."""
    arr = np.ascontiguousarray(values, dtype=np.float64).reshape(-1)
    bits = arr.view(np.int64).copy()
    bits[np.isnan(arr)] = _CANONICAL_NAN_BITS
    return bits


def optimal_size(expected_entries: int, fpp: float) -> tuple[int, int]:
    """Number of bits and of hash functions ORC writers choose.

    Args:
        expected_entries: Values expected per filter (the writer's row index stride);
            values below 1 count as 1.
        fpp: Target false positive probability, strictly between 0 and 1.

    Returns:
        ``(num_bits, num_hash_functions)``; num_bits is always rounded UP to the next
        multiple of 64, even when already aligned (0.01 with 10,000 entries -> (95872, 7)).

    Raises:
        SchemaError: ``fpp`` is out of range or the filter would be too large.
    """
    if not 0.0 < fpp < 1.0 or math.isnan(fpp):
        raise SchemaError(f"bloom filter fpp must be > 0 and < 1, got {fpp!r}")
    n = max(int(expected_entries), 1)
    nb = int(-n * math.log(fpp) / (math.log(2) * math.log(2)))
    num_bits = nb + (64 - nb % 64)
    if num_bits > _MAX_BITS:
        raise SchemaError(f"bloom filter of {num_bits} bits for {n} entries is too large")
    k = max(1, math.floor(num_bits / n * _LN2 + 0.5))
    return num_bits, k


def _max_hash_functions(num_bits: int) -> int:
    # the largest k optimal_size can produce for num_bits bits (reached with one entry)
    return max(1, math.floor(num_bits * _LN2 + 0.5))


# ---------------------------------------------------------------------------------------------
# the filter


class BloomFilter:
    """One ORC bloom filter: ``num_bits`` bits in 64-bit words and ``k`` probes per value."""

    __slots__ = ("_k", "_words")

    def __init__(self, num_bits: int, num_hash_functions: int) -> None:
        """An empty filter of ``num_bits`` (a positive multiple of 64) bits and
        ``num_hash_functions`` (>= 1) probes per value; ValueError otherwise."""
        if num_bits <= 0 or num_bits % 64 or num_bits > _MAX_BITS:
            raise ValueError(f"bloom filter size must be a positive multiple of 64, got {num_bits}")
        if num_hash_functions < 1:
            raise ValueError(f"bloom filter needs at least one hash function: {num_hash_functions}")
        self._words: npt.NDArray[np.uint64] = np.zeros(num_bits // 64, dtype=np.uint64)
        self._k = int(num_hash_functions)

    @classmethod
    def for_entries(cls, expected_entries: int, fpp: float = DEFAULT_FPP) -> BloomFilter:
        """An empty filter sized as ORC writers size it (see :func:`optimal_size`)."""
        return cls(*optimal_size(expected_entries, fpp))

    @classmethod
    def from_words(
        cls, words: npt.NDArray[Any] | Sequence[int], num_hash_functions: int
    ) -> BloomFilter:
        """A filter holding a copy of ``words`` (unsigned or signed 64-bit values)."""
        if isinstance(words, np.ndarray) and words.dtype in (np.int64, np.uint64):
            arr = words.reshape(-1).view(np.uint64)
        else:
            mask = 0xFFFF_FFFF_FFFF_FFFF
            items = words.reshape(-1).tolist() if isinstance(words, np.ndarray) else list(words)
            arr = np.array([int(w) & mask for w in items], dtype=np.uint64)
        result = cls(arr.size * 64, num_hash_functions)
        result._words[:] = arr
        return result

    @property
    def num_bits(self) -> int:
        """Size of the filter in bits."""
        return int(self._words.size) * 64

    @property
    def num_hash_functions(self) -> int:
        """Probes per value (``k``)."""
        return self._k

    @property
    def words(self) -> npt.NDArray[np.uint64]:
        """The bit set as a read-only view of unsigned 64-bit words."""
        view = self._words.view()
        view.flags.writeable = False
        return view

    def add_hashes(self, hashes: npt.ArrayLike) -> None:
        """Add values given by their 64-bit hashes (from :func:`hash_arrow_array`)."""
        arr = np.ascontiguousarray(hashes, dtype=np.int64).reshape(-1)
        _bloom.add_hashes(self._words, arr, self._k)

    def add_hash(self, hash64: int) -> None:
        """Add one value given by its signed 64-bit hash."""
        self.add_hashes(np.array([hash64], dtype=np.int64))

    def add_arrow_array(
        self, arr: pa.Array | pa.ChunkedArray, orc_kind: int, *, max_length: int | None = None
    ) -> None:
        """Add every non-null value of ``arr`` as an ORC column of ``orc_kind``."""
        self.add_hashes(hash_arrow_array(arr, orc_kind, max_length=max_length))

    def test_hash(self, hash64: int) -> bool:
        """True when the value with this hash might be in the filter."""
        return bool(_bloom.test_hash(self._words, int(hash64), self._k))

    def test_hashes(self, hashes: npt.ArrayLike) -> npt.NDArray[np.bool_]:
        """:meth:`test_hash` of every hash, as a bool array."""
        arr = np.ascontiguousarray(hashes, dtype=np.int64).reshape(-1)
        result: npt.NDArray[np.bool_] = _bloom.test_hashes(self._words, arr, self._k)
        return result

    def might_contain(self, value: Any, orc_kind: int, *, max_length: int | None = None) -> bool:
        """False only when no value of the filtered column can equal ``value``.

        Works for any literal :func:`hash_value` accepts, and is safe where writers disagree:
        doubles 0.0 and -0.0 both probe, NaN always might be present, timestamps just before
        the epoch probe ORC Java's shifted value too, and None (nulls are never recorded)
        always might be present.

        Raises:
            SchemaError: ``value`` cannot be a value of a column of ``orc_kind``.
        """
        if value is None:
            return True
        kind = TypeKind(orc_kind)
        if kind in (TypeKind.FLOAT, TypeKind.DOUBLE):
            x = _literal_float(value, kind)
            if math.isnan(x):
                return True
            if x == 0.0:
                return self.might_contain_double(0.0) or self.might_contain_double(-0.0)
            return self.might_contain_double(x)
        if kind in _TIMESTAMP_KINDS:
            return self.might_contain_timestamp(_literal_timestamp_nanos(value, kind))
        return self.test_hash(hash_value(value, kind, max_length=max_length))

    def might_contain_long(self, value: int) -> bool:
        """Membership of an integer, boolean, date (epoch days) or list/map length."""
        return self.test_hash(long_hash(value))

    def might_contain_double(self, value: float) -> bool:
        """Membership of a double by its exact bits (as ORC Java ``testDouble``)."""
        return self.test_hash(long_hash(int(double_to_long_bits([value])[0])))

    def might_contain_bytes(self, value: bytes | bytearray | memoryview) -> bool:
        """Membership of a binary value, or of a string given as its UTF-8 bytes."""
        return self.test_hash(murmur3_hash64(value))

    def might_contain_string(self, value: str) -> bool:
        """Membership of a string (hashed as UTF-8)."""
        return self.test_hash(murmur3_hash64(value.encode("utf-8")))

    def might_contain_decimal(self, value: decimal.Decimal | int | str) -> bool:
        """Membership of a decimal value (any scale: compared by value)."""
        return self.test_hash(murmur3_hash64(_decimal_text(value)))

    def might_contain_timestamp(self, nanos: int) -> bool:
        """Membership of a timestamp given as epoch nanoseconds (wall clock read as UTC for
        timestamps without time zone).

        Probes every value a writer may have hashed: the floor milliseconds, the truncated
        milliseconds (pyarrow hands the C++ writer negative sub-second parts) and ORC Java's
        ``millis + 1000`` for instants in (-1 s, 0).
        """
        millis = nanos // 1_000_000
        candidates = {millis}
        if nanos < 0 and nanos % 1_000_000:
            candidates.add(millis + 1)
        if -1000 < millis < 0:
            candidates.add(millis + 1000)
        return any(self.might_contain_long(c) for c in candidates)

    def merge(self, other: BloomFilter) -> None:
        """OR ``other`` into this filter (same size and hash count required).

        Raises:
            ValueError: The filters differ in size or hash count.
        """
        if other.num_bits != self.num_bits or other._k != self._k:
            raise ValueError(
                f"cannot merge bloom filters of m={other.num_bits} k={other._k} into "
                f"m={self.num_bits} k={self._k}"
            )
        np.bitwise_or(self._words, other._words, out=self._words)

    def reset(self) -> None:
        """Clear every bit."""
        self._words[:] = 0

    def to_proto(self, *, legacy: bool = False) -> pb.BloomFilter:
        """The protobuf form: ``utf8bitset`` little-endian words (BLOOM_FILTER_UTF8 streams),
        or with ``legacy`` the repeated fixed64 ``bitset`` of BLOOM_FILTER streams."""
        proto = pb.BloomFilter(numHashFunctions=self._k)
        if legacy:
            proto.bitset.extend(self._words.tolist())
        else:
            proto.utf8bitset = self._words.astype("<u8", copy=False).tobytes()
        return proto

    @classmethod
    def from_proto(cls, proto: pb.BloomFilter, stream_kind: int) -> BloomFilter | None:
        """Rebuild a filter read from a stream of kind ``stream_kind`` (7 or 8).

        Returns:
            The filter, or None when it is unusable: unknown stream kind, missing or empty
            bitset, a ``utf8bitset`` whose length is not a multiple of 8, or a hash-function
            count below 1 or above what any writer chooses for that many bits (which
            rejects pre-release shapes). Never raises for a bad filter: callers treat None
            as "might contain anything".
        """
        k = int(proto.numHashFunctions)
        if stream_kind == _STREAM_BLOOM_FILTER_UTF8:
            raw = proto.utf8bitset
            if not raw or len(raw) % 8:
                return None
            words = np.frombuffer(raw, dtype="<u8").astype(np.uint64)
        elif stream_kind == _STREAM_BLOOM_FILTER:
            if not proto.bitset:
                return None
            words = np.array(proto.bitset, dtype=np.uint64)
        else:
            return None
        num_bits = int(words.size) * 64
        if num_bits > _MAX_BITS or not 1 <= k <= _max_hash_functions(num_bits):
            return None
        result = cls(num_bits, k)
        result._words = words
        return result

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, BloomFilter):
            return NotImplemented
        return self._k == other._k and np.array_equal(self._words, other._words)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"BloomFilter(num_bits={self.num_bits}, num_hash_functions={self._k})"


def decode_bloom_filter_index(
    data: bytes | memoryview, column: int | None = None
) -> list[pb.BloomFilter]:
    """The filters (one per row group) of a decompressed BLOOM_FILTER(_UTF8) stream.

    Raises:
        CorruptFileError: The stream is not a valid ``BloomFilterIndex`` message (``column``
            names the column in the message).
    """
    index = pb.BloomFilterIndex()
    try:
        index.ParseFromString(bytes(data))
    except (DecodeError, RuntimeError, ValueError) as exc:
        where = "" if column is None else f" of column {column}"
        raise CorruptFileError(f"bloom filter index{where} is not a valid message: {exc}") from exc
    return list(index.bloomFilter)


# ---------------------------------------------------------------------------------------------
# usability


def bloom_filter_usable(
    stream_kind: int,
    orc_type_kind: int,
    writer: int | None,
    writer_version: int | None,
    software_version: str | None,
    bloom_encoding: int | None = None,
) -> bool:
    """Whether a column's bloom filters can be trusted for predicate push-down.

    Follows ORC Java (RecordReaderImpl, StripePlanner, BloomFilterIO) and is stricter where
    Java trusts filters known to be wrong:

    - C++ writer (``writer`` 1) files without a software version or with versions
      1.6.0-1.6.11 or 1.7.0 (snapshot suffixes ignored) hash numbers wrongly (ORC-1024):
      nothing in them is usable;
    - C++ writer files of any version: tinyint, boolean, char and float filters are not
      used (ORC Java uses them): the C++ writer hashes wrong values for those kinds (seen
      with pyarrow 26 / ORC 2.2.2 and pyorc 0.12 / ORC 2.3.1; still so in ORC's sources);
    - BLOOM_FILTER_UTF8: the column encoding's ``bloomEncoding`` must be absent/0 or 1
      (later ones are future encodings); timestamps need 1 (UTC millis);
    - legacy BLOOM_FILTER: never for decimals (their text was only fixed together with the
      move to BLOOM_FILTER_UTF8, ORC-101) nor timestamps (they hash writer-local time), and
      for strings/char/varchar only from Java writer version HIVE_12055 (3) on;
    - Java files before writer version ORC_135 (6) never use timestamp filters.

    The shape of each filter is checked separately by :meth:`BloomFilter.from_proto`. When
    a column has streams of both kinds (Java's ``orc.bloom.filter.write.version=original``),
    use the BLOOM_FILTER_UTF8 one, as ORC Java does.

    Args:
        stream_kind: 7 (BLOOM_FILTER) or 8 (BLOOM_FILTER_UTF8).
        orc_type_kind: The column's ORC type kind.
        writer: ``Footer.writer`` (None when absent = ORC Java).
        writer_version: ``PostScript.writerVersion`` (None when absent = 0).
        software_version: ``Footer.softwareVersion`` or None.
        bloom_encoding: ``ColumnEncoding.bloomEncoding`` of the column in this stripe, None
            when absent.
    """
    writer_id = 0 if writer is None else int(writer)
    version = 0 if writer_version is None else int(writer_version)
    if writer_id == _WRITER_ORC_CPP:
        if software_version is None or software_version.split("-", 1)[0] in _BAD_CPP_VERSIONS:
            return False
        if int(orc_type_kind) in _CPP_BROKEN_KINDS:
            return False
    java = writer_id == _WRITER_ORC_JAVA
    kind = int(orc_type_kind)
    timestamp = kind in _TIMESTAMP_KINDS
    if timestamp and java and version < _ORC_135:
        return False
    if stream_kind == _STREAM_BLOOM_FILTER_UTF8:
        encoding = 0 if bloom_encoding is None else int(bloom_encoding)
        if encoding not in (0, _BLOOM_ENCODING_UTF8_UTC):
            return False
        return not (timestamp and encoding != _BLOOM_ENCODING_UTF8_UTC)
    if stream_kind != _STREAM_BLOOM_FILTER:
        return False
    if kind == TypeKind.DECIMAL or timestamp:
        return False
    return not (kind in _STRING_KINDS and java and version < _HIVE_12055)


# ---------------------------------------------------------------------------------------------
# hashing Arrow arrays (writers) and literals (predicates)


def hash_arrow_array(
    arr: pa.Array | pa.ChunkedArray, orc_kind: int, *, max_length: int | None = None
) -> Int64Array:
    """The bloom filter hashes of the non-null values of ``arr``, as ORC Java computes them.

    Args:
        arr: Values of one ORC column in aorc's Arrow mapping (timestamps of any unit,
            dictionary-encoded strings, large and view types are fine).
        orc_kind: The column's ORC type kind.
        max_length: For char/varchar: the declared length. Char values are truncated or
            space-padded to it and varchar values truncated, as the writers store them.
            None leaves the values unchanged (e.g. values read back from a file).

    Returns:
        One int64 hash per non-null value, in order. Struct columns give none (ORC writers
        record nothing for them); list/map columns hash their lengths; unions their tags.

    Raises:
        SchemaError: ``arr`` cannot hold values of ``orc_kind``.
    """
    kind = TypeKind(orc_kind)
    if isinstance(arr, pa.ChunkedArray):
        parts = [_hash_chunk(chunk, kind, max_length) for chunk in arr.chunks]
        return np.concatenate(parts) if parts else np.empty(0, dtype=np.int64)
    return _hash_chunk(arr, kind, max_length)


def _hash_chunk(arr: pa.Array, kind: TypeKind, max_length: int | None) -> Int64Array:
    if kind == TypeKind.STRUCT:
        return np.empty(0, dtype=np.int64)
    if kind == TypeKind.UNION:
        return _union_hashes(arr)
    try:
        if kind in _BYTES_KINDS and not pa.types.is_dictionary(arr.type):
            # hashing the null slots too and masking them out beats copying the strings
            hashes = _bytes_hashes(_adjust_strings(arr, kind, max_length))
            if arr.null_count:
                hashes = hashes[np.asarray(arr.is_valid().to_numpy(zero_copy_only=False))]
            return hashes
        if arr.null_count:
            arr = pc.drop_null(arr)
        if kind in _BYTES_KINDS:
            return _bytes_hashes(_adjust_strings(arr, kind, max_length))
        if kind in _INTEGER_KINDS:
            return thomas_wang_hash64(_to_int64(arr))
        if kind in (TypeKind.FLOAT, TypeKind.DOUBLE):
            return thomas_wang_hash64(double_to_long_bits(_to_float(arr, kind)))
        if kind == TypeKind.DATE:
            return thomas_wang_hash64(_date_days(arr))
        if kind in _TIMESTAMP_KINDS:
            return thomas_wang_hash64(_java_timestamp_millis(_timestamp_millis(arr)))
        if kind == TypeKind.DECIMAL:
            return _decimal_hashes(arr)
        if kind in (TypeKind.LIST, TypeKind.MAP):
            return thomas_wang_hash64(_to_int64(pc.list_value_length(arr)))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, TypeError) as exc:
        raise SchemaError(f"cannot hash {arr.type} values as ORC {kind.name}: {exc}") from exc
    raise SchemaError(f"cannot hash {arr.type} values as ORC {kind.name}")


def _to_int64(arr: pa.Array) -> npt.NDArray[np.int64]:
    t = arr.type
    if pa.types.is_boolean(t) or pa.types.is_integer(t):
        return np.asarray(arr.to_numpy(zero_copy_only=False), dtype=np.int64)
    raise TypeError(f"{t} is not an integer type")


def _to_float(arr: pa.Array, kind: TypeKind) -> npt.NDArray[np.float64]:
    if not (pa.types.is_floating(arr.type) or pa.types.is_integer(arr.type)):
        raise TypeError(f"{arr.type} is not a numeric type")
    values = np.asarray(arr.to_numpy(zero_copy_only=False))
    if kind == TypeKind.FLOAT:
        values = values.astype(np.float32)
    return values.astype(np.float64)


def _date_days(arr: pa.Array) -> npt.NDArray[np.int64]:
    if pa.types.is_date32(arr.type):
        return _to_int64(arr.cast(pa.int32()))
    if pa.types.is_date64(arr.type):
        return _to_int64(arr.cast(pa.int64())) // _MS_PER_DAY
    raise TypeError(f"{arr.type} is not a date type")


def _timestamp_millis(arr: pa.Array) -> npt.NDArray[np.int64]:
    t = arr.type
    if not pa.types.is_timestamp(t):
        raise TypeError(f"{t} is not a timestamp type")
    raw = _to_int64(arr.cast(pa.int64()))
    divisor = _UNIT_DIVISORS[t.unit]
    return raw * 1000 if divisor is None else raw // divisor


def _java_timestamp_millis(millis: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    # ORC Java truncates seconds toward zero before adding the millisecond part back, so an
    # instant in (-1 s, 0) is hashed as millis + 1000. C++ writers hash millis itself.
    quirk = (millis > -1000) & (millis < 0)
    if quirk.any():
        millis = millis.copy()
        millis[quirk] += 1000
    return millis


def _adjust_strings(arr: pa.Array, kind: TypeKind, max_length: int | None) -> pa.Array:
    if max_length is None or kind not in (TypeKind.CHAR, TypeKind.VARCHAR):
        return arr
    if pa.types.is_dictionary(arr.type):
        arr = arr.dictionary_decode()
    if not (pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type)):
        arr = arr.cast(pa.string())
    arr = pc.utf8_slice_codeunits(arr, 0, max_length)
    if kind == TypeKind.CHAR:
        arr = pc.utf8_rpad(arr, width=max_length, padding=" ")
    return arr


def _bytes_hashes(arr: pa.Array) -> Int64Array:
    t = arr.type
    if pa.types.is_dictionary(t):
        if arr.dictionary.null_count:
            return _bytes_hashes(pc.drop_null(arr.dictionary_decode()))
        per_entry = _bytes_hashes(arr.dictionary)
        indices = _to_int64(arr.indices)
        return per_entry[indices]
    if pa.types.is_string_view(t) or pa.types.is_binary_view(t):
        arr = arr.cast(pa.large_binary())
        t = arr.type
    if pa.types.is_fixed_size_binary(t):
        arr = arr.cast(pa.binary())
        t = arr.type
    if pa.types.is_large_string(t) or pa.types.is_large_binary(t):
        offset_type: type[np.integer[Any]] = np.int64
    elif pa.types.is_string(t) or pa.types.is_binary(t):
        offset_type = np.int32
    else:
        raise TypeError(f"{t} is not a string or binary type")
    buffers = arr.buffers()
    n = len(arr)
    if n == 0:
        return np.empty(0, dtype=np.int64)
    width = np.dtype(offset_type).itemsize
    offsets = np.frombuffer(buffers[1], dtype=offset_type, count=n + 1, offset=arr.offset * width)
    data = buffers[2] if buffers[2] is not None else b""
    return murmur3_hash64_many(offsets, data)


def _decimal_hashes(arr: pa.Array) -> Int64Array:
    t = arr.type
    if not pa.types.is_decimal(t):
        raise TypeError(f"{t} is not a decimal type")
    if not pa.types.is_decimal128(t):
        arr = arr.cast(pa.decimal128(min(t.precision, 38), t.scale))
    if len(arr) == 0:
        return np.empty(0, dtype=np.int64)
    words = np.frombuffer(arr.buffers()[1], dtype="<u8", count=2 * len(arr), offset=arr.offset * 16)
    result: Int64Array = _bloom.hash_decimal128(words.astype(np.uint64), arr.type.scale)
    return result


def _union_hashes(arr: pa.Array) -> Int64Array:
    if not pa.types.is_union(arr.type):
        raise SchemaError(f"cannot hash {arr.type} values as ORC UNION")
    return thomas_wang_hash64(union_branches(arr)[0])


def hash_value(value: Any, orc_kind: int, *, max_length: int | None = None) -> int:
    """The bloom filter hash of one literal, as ORC Java's writer hashes that value.

    Args:
        value: int/bool (integer kinds), float (float/double: float is rounded to float32),
            str or bytes (string kinds; str as UTF-8), bytes (binary), ``decimal.Decimal``
            /int/str (decimal), ``datetime.date`` or numpy datetime64 (date),
            ``datetime.datetime``/numpy datetime64/pandas Timestamp (timestamp: naive values
            for TIMESTAMP, aware or naive-as-UTC for TIMESTAMP_INSTANT), int (list/map
            length, union tag).
        orc_kind: ORC type kind of the column.
        max_length: For char: pad to this length; for varchar: truncate to it.

    Returns:
        The signed 64-bit hash.

    Raises:
        SchemaError: The literal cannot be a value of such a column.
    """
    kind = TypeKind(orc_kind)
    if value is None:
        raise SchemaError("null has no bloom filter hash (nulls are never recorded)")
    if kind in _INTEGER_KINDS or kind in (TypeKind.LIST, TypeKind.MAP, TypeKind.UNION):
        return long_hash(_literal_int(value, kind))
    if kind in (TypeKind.FLOAT, TypeKind.DOUBLE):
        return long_hash(int(double_to_long_bits([_literal_float(value, kind)])[0]))
    if kind == TypeKind.DATE:
        return long_hash(_literal_date(value))
    if kind in _TIMESTAMP_KINDS:
        millis = _literal_timestamp_nanos(value, kind) // 1_000_000
        return long_hash(int(_java_timestamp_millis(np.array([millis], dtype=np.int64))[0]))
    if kind == TypeKind.DECIMAL:
        return murmur3_hash64(_decimal_text(value))
    if kind in _BYTES_KINDS:
        return murmur3_hash64(_literal_bytes(value, kind, max_length))
    raise SchemaError(f"ORC {kind.name} columns have no bloom filter values")


def _literal_int(value: Any, kind: TypeKind) -> int:
    if isinstance(value, bool | int | np.integer | np.bool_):
        return int(value)
    if isinstance(value, float | np.floating) and float(value).is_integer():
        return int(value)
    raise SchemaError(f"{value!r} cannot be a value of an ORC {kind.name} column")


def _literal_float(value: Any, kind: TypeKind) -> float:
    if isinstance(value, bool) or not isinstance(
        value, int | float | np.integer | np.floating | decimal.Decimal
    ):
        raise SchemaError(f"{value!r} cannot be a value of an ORC {kind.name} column")
    x = float(value)
    if kind == TypeKind.FLOAT:
        with np.errstate(over="ignore"):
            return float(np.float32(x))
    return x


def _literal_date(value: Any) -> int:
    if isinstance(value, np.datetime64):
        return int(value.astype("datetime64[D]").astype(np.int64))
    if isinstance(value, datetime.date) and not isinstance(value, datetime.datetime):
        return (value - _EPOCH_DATE).days
    raise SchemaError(f"{value!r} cannot be a value of an ORC DATE column")


def _literal_timestamp_nanos(value: Any, kind: TypeKind) -> int:
    """Epoch nanoseconds of a timestamp literal (wall clock as UTC when naive)."""
    if isinstance(value, np.datetime64):
        return int(value.astype("datetime64[ns]").astype(np.int64))
    if not isinstance(value, datetime.datetime):
        raise SchemaError(f"{value!r} cannot be a value of an ORC {kind.name} column")
    if value.tzinfo is not None:
        if kind == TypeKind.TIMESTAMP:
            raise SchemaError(f"time-zone aware {value!r} compared with a TIMESTAMP column")
        value = value.astimezone(datetime.UTC).replace(tzinfo=None)
    delta = value - _EPOCH
    micros = (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
    return int(micros) * 1000 + int(getattr(value, "nanosecond", 0))


def _literal_bytes(value: Any, kind: TypeKind, max_length: int | None) -> bytes:
    if isinstance(value, str):
        if max_length is not None and kind in (TypeKind.CHAR, TypeKind.VARCHAR):
            value = value[:max_length]
            if kind == TypeKind.CHAR:
                value = value.ljust(max_length)
        encoded: bytes = value.encode("utf-8")
        return encoded
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value)
    raise SchemaError(f"{value!r} cannot be a value of an ORC {kind.name} column")


def _decimal_text(value: Any) -> bytes:
    """Plain decimal text without trailing fractional zeros, as ORC writers hash decimals."""
    if isinstance(value, bool) or not isinstance(value, decimal.Decimal | int | str):
        raise SchemaError(f"{value!r} cannot be a value of an ORC DECIMAL column")
    try:
        d = decimal.Decimal(value)
    except decimal.InvalidOperation as exc:
        raise SchemaError(f"{value!r} is not a decimal number") from exc
    if not d.is_finite():
        raise SchemaError(f"{value!r} cannot be a value of an ORC DECIMAL column")
    if d.is_zero():
        return b"0"
    text = format(d, "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text.encode("ascii")
