"""Random pyarrow tables covering every type ORC stores, for differential tests.

Values are drawn in segments of different shapes (constant runs, arithmetic sequences, small
and full-range random values, extremes) so that writers pick every RLE v1/v2 sub-encoding and
dictionary as well as direct string encodings. Nulls come at varying rates, including columns
without nulls and columns of nulls only, and at every nesting level.
"""

from __future__ import annotations

import decimal
from collections.abc import Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["ALL_TYPES", "random_array", "random_table"]

# One column per entry; names are stable so tests can project them.
ALL_TYPES: dict[str, pa.DataType] = {
    "bool": pa.bool_(),
    "i8": pa.int8(),
    "i16": pa.int16(),
    "i32": pa.int32(),
    "i64": pa.int64(),
    "f32": pa.float32(),
    "f64": pa.float64(),
    "str": pa.string(),
    "str_dict": pa.string(),  # low cardinality: dictionary encoding
    "bin": pa.binary(),
    "ts": pa.timestamp("ns"),
    "ts_utc": pa.timestamp("ns", tz="UTC"),
    "date": pa.date32(),
    "dec_5_2": pa.decimal128(5, 2),
    "dec_18_4": pa.decimal128(18, 4),
    "dec_19_0": pa.decimal128(19, 0),
    "dec_38_10": pa.decimal128(38, 10),
    "dec_38_38": pa.decimal128(38, 38),
    "list_i32": pa.list_(pa.int32()),
    "list_str": pa.list_(pa.string()),
    "map_str_i64": pa.map_(pa.string(), pa.int64()),
    "struct": pa.struct([("a", pa.int32()), ("b", pa.string()), ("c", pa.list_(pa.float64()))]),
    "nested": pa.list_(
        pa.struct(
            [
                ("x", pa.int64()),
                ("y", pa.map_(pa.int32(), pa.list_(pa.bool_()))),
                ("z", pa.struct([("d", pa.date32()), ("t", pa.timestamp("ns"))])),
            ]
        )
    ),
    "map_nested": pa.map_(pa.int64(), pa.struct([("s", pa.string()), ("b", pa.binary())])),
}

_TS_SPECIAL = np.array(
    [-(2**62), 2**62, 0, -1, 1, -(10**9), -(10**9) + 1, 10**9 - 1, -999_999, -1_000_000]
)
_NULL_RATES = (0.0, 0.0, 0.1, 0.5, 1.0)
_ALPHABET = list("abcXYZ019 _-/") + ["é", "ß", "日本", "😀", '"', "\\", "\n", "\t", "\x00"]


def _segments(rng: np.random.Generator, n: int, lo: int, hi: int) -> np.ndarray:
    """Integers in [lo, hi] built from runs of varied shape."""
    out = np.empty(n, np.int64)
    pos = 0
    while pos < n:
        size = min(n - pos, int(rng.integers(1, 700)))
        shape = rng.integers(0, 6)
        if shape == 0:  # constant run
            seg = np.full(size, rng.integers(lo, hi, endpoint=True))
        elif shape == 1:  # arithmetic sequence, clipped
            step = int(rng.integers(-1000, 1000))
            start = int(rng.integers(lo, hi, endpoint=True))
            seg = np.clip(start + step * np.arange(size, dtype=object), lo, hi).astype(np.int64)
        elif shape == 2:  # small values
            seg = rng.integers(max(lo, -100), min(hi, 100), size, endpoint=True)
        elif shape == 3:  # extremes
            seg = rng.choice(np.array([lo, hi, 0, -1 if lo < 0 else 1, lo + 1, hi - 1]), size)
        else:  # full range
            seg = rng.integers(lo, hi, size, endpoint=True)
        out[pos : pos + size] = seg
        pos += size
    return out


def _mask(rng: np.random.Generator, n: int, rate: float | None = None) -> np.ndarray | None:
    if rate is None:
        rate = float(rng.choice(_NULL_RATES))
    if rate == 0.0:
        return None
    return rng.random(n) < rate


def _ints(rng: np.random.Generator, t: pa.DataType, n: int) -> pa.Array:
    info = np.iinfo(t.to_pandas_dtype())
    return pa.array(_segments(rng, n, int(info.min), int(info.max)).astype(info.dtype), t)


def _floats(rng: np.random.Generator, t: pa.DataType, n: int) -> pa.Array:
    dtype = np.float32 if t == pa.float32() else np.float64
    info = np.finfo(dtype)
    special = np.array(
        [
            np.nan,
            -np.nan,
            np.inf,
            -np.inf,
            0.0,
            -0.0,
            info.max,
            -info.max,
            info.tiny,
            info.smallest_subnormal,
            1.0,
            -1.5,
        ],
        dtype,
    )
    values = (rng.standard_normal(n) * 10.0 ** rng.integers(-30, 30, n)).astype(dtype)
    pick = rng.random(n) < 0.1
    values[pick] = rng.choice(special, int(pick.sum()))
    runs = rng.random(n) < 0.2  # repeated values
    values[1:][runs[1:]] = values[:-1][runs[1:]]
    return pa.array(values, t)


def _pieces(rng: np.random.Generator, n: int, max_len: int) -> list[tuple[int, int]]:
    lengths = rng.integers(0, max_len + 1, n)
    ends = np.cumsum(lengths)
    return list(zip((ends - lengths).tolist(), ends.tolist(), strict=True))


def _strings(rng: np.random.Generator, n: int, distinct: int | None) -> list[str]:
    count = n if distinct is None else distinct
    pieces = _pieces(rng, count, 12)
    chars = [_ALPHABET[i] for i in rng.integers(0, len(_ALPHABET), pieces[-1][1] if pieces else 0)]
    words = ["".join(chars[a:b]) for a, b in pieces]
    if distinct is None:
        return words
    return [words[i] for i in rng.integers(0, distinct, n)]


def _binaries(rng: np.random.Generator, n: int) -> list[bytes]:
    pieces = _pieces(rng, n, 30)
    data = rng.bytes(pieces[-1][1] if pieces else 0)
    return [data[a:b] for a, b in pieces]


def _timestamps(rng: np.random.Generator, t: pa.DataType, n: int) -> pa.Array:
    """Before 1970 and after 2038, with and without fractions, and values around the epoch.

    The int64 extremes are left to a dedicated test so that one edge case does not mask
    everything else a random table exercises.
    """
    seconds = rng.integers(-2_000_000_000, 8_000_000_000, n)
    fraction = rng.choice(
        np.array([0, 1, 999_999_999, 500_000_000, 123_456_789, 1_000, 100_000]), n
    )
    fraction = np.where(rng.random(n) < 0.3, rng.integers(0, 10**9, n), fraction)
    values = seconds * 10**9 + fraction
    pick = rng.random(n) < 0.02
    values[pick] = rng.choice(_TS_SPECIAL, int(pick.sum()))
    return pa.array(values, t)


def _dates(rng: np.random.Generator, n: int) -> pa.Array:
    days = _segments(rng, n, -719_162, 2_932_896)  # 0001-01-01 .. 9999-12-31
    return pa.array(days.astype(np.int32), pa.date32())


def _decimals(rng: np.random.Generator, t: pa.DataType, n: int) -> pa.Array:
    """Unscaled values of 0..precision digits (some all nines), both signs."""
    lengths = rng.integers(0, t.precision + 1, n)
    digits = (rng.integers(0, 10, int(lengths.sum())) + ord("0")).astype(np.uint8).tobytes()
    nines = (rng.random(n) < 0.05).tolist()
    negative = (rng.random(n) < 0.5).tolist()
    context = decimal.Context(prec=100)
    values, pos = [], 0
    for i, length in enumerate(lengths.tolist()):
        text = b"9" * length if nines[i] else digits[pos : pos + length]
        unscaled = int(text) if text else 0
        pos += length
        signed = -unscaled if negative[i] else unscaled
        values.append(decimal.Decimal(signed).scaleb(-t.scale, context=context))
    return pa.array(values, t)


def _offsets(rng: np.random.Generator, n: int, nulls: np.ndarray | None) -> np.ndarray:
    lengths = rng.integers(0, 6, n)
    if nulls is not None:
        lengths[nulls] = 0
    return np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)


def _with_nulls(arr: pa.Array, mask: np.ndarray | None) -> pa.Array:
    if mask is None:
        return arr
    return pc.if_else(pa.array(mask), pa.nulls(len(arr), arr.type), arr)


def random_array(
    rng: np.random.Generator,
    t: pa.DataType,
    n: int,
    null_rate: float | None = None,
    parent_nulls: np.ndarray | None = None,
) -> pa.Array:
    """A random array of type ``t`` and length ``n``, in the canonical form readers produce.

    Canonical: a null struct has null children and a null list or map is empty. (pyarrow.orc's
    writer mis-writes a struct nested in a struct whose null slots hide non-null children, so
    only canonical tables can be compared with what a reader returns.)

    Args:
        rng: the random source.
        t: any Arrow type ORC maps (see docs/internals.md).
        n: the length.
        null_rate: the fraction of nulls at this level; ``None`` draws one (0, 0.1, 0.5, 1).
        parent_nulls: slots that must be null because an enclosing struct is null there.

    Returns:
        The array; nested children draw their own null rates.
    """
    mask = _mask(rng, n, null_rate)
    if parent_nulls is not None:
        mask = parent_nulls if mask is None else mask | parent_nulls
    if pa.types.is_list(t) or pa.types.is_map(t):
        offsets = _offsets(rng, n, mask)
        count = int(offsets[-1])
        if pa.types.is_list(t):
            values = random_array(rng, t.value_type, count)
            return pa.ListArray.from_arrays(pa.array(offsets), values, type=t, mask=_np_mask(mask))
        keys = random_array(rng, t.key_type, count, null_rate=0.0)
        items = random_array(rng, t.item_type, count)
        return _with_nulls(pa.MapArray.from_arrays(pa.array(offsets), keys, items, type=t), mask)
    if pa.types.is_struct(t):
        children = [random_array(rng, f.type, n, parent_nulls=mask) for f in t]
        return pa.StructArray.from_arrays(children, fields=list(t), mask=_np_mask(mask))
    return _with_nulls(_random_primitive(rng, t, n), mask)


def _np_mask(mask: np.ndarray | None) -> pa.Array | None:
    return None if mask is None else pa.array(mask)


_PRIMITIVES: list[tuple[Callable[[pa.DataType], bool], Callable[..., pa.Array]]] = [
    (pa.types.is_boolean, lambda rng, t, n: pa.array(rng.random(n) < 0.5)),
    (pa.types.is_integer, _ints),
    (pa.types.is_floating, _floats),
    (pa.types.is_string, lambda rng, t, n: pa.array(_strings(rng, n, None), t)),
    (pa.types.is_binary, lambda rng, t, n: pa.array(_binaries(rng, n), t)),
    (pa.types.is_timestamp, _timestamps),
    (pa.types.is_date32, lambda rng, t, n: _dates(rng, n)),
    (pa.types.is_decimal, _decimals),
]


def _random_primitive(rng: np.random.Generator, t: pa.DataType, n: int) -> pa.Array:
    for test, make in _PRIMITIVES:
        if test(t):
            return make(rng, t, n)
    raise TypeError(f"no random values for {t}")


def random_table(seed: int, num_rows: int, types: dict[str, pa.DataType] | None = None) -> pa.Table:
    """A random table with one column per entry of ``types`` (default :data:`ALL_TYPES`).

    Args:
        seed: seeds numpy's generator; the same seed gives the same table.
        num_rows: the number of rows.
        types: column name -> Arrow type.

    Returns:
        The table. ``str_dict`` columns draw from 20 distinct strings.
    """
    rng = np.random.default_rng(seed)
    columns = {}
    for name, t in (types or ALL_TYPES).items():
        if name == "str_dict":
            mask = _mask(rng, num_rows)
            columns[name] = _with_nulls(pa.array(_strings(rng, num_rows, 20), t), mask)
        else:
            columns[name] = random_array(rng, t, num_rows)
    return pa.table(columns)
