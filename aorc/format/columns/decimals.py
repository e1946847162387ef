"""Decimal columns.

DATA holds each unscaled value as a zigzag base-128 varint of up to 128 bits, SECONDARY
(signed integer RLE) each value's own scale: ORC Java trims trailing zeros, so scales vary
from row to row. Every value is rescaled to the type's scale: multiplied exactly by a power of
ten, or divided with truncation toward zero when its scale is larger (as ORC C++ does). A
scale outside 0 to 38 (which no decimal can have) makes the column corrupt. Rows are grouped
by scale and each group is rescaled with array arithmetic, so the work is linear in the rows
whatever the scales.

Legacy Hive 0.11 ``decimal(0,0)`` columns are read at scale 10 (see :mod:`aorc.format.types`); a
value
that then needs more than 38 digits becomes null, as in ORC C++ and Java. Files of version
UNSTABLE-PRE-2.0 (``[1, 9999]``) store decimals of precision 1 to 18 as signed RLE v2 unscaled
integers at the type's scale, with no SECONDARY stream ("Decimal64").

The arithmetic runs on whole arrays of 128-bit values split into four 32-bit limbs.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from aorc.format._proto import orc_proto_pb2 as pb
from aorc.format.codec import rle
from aorc.format.columns.base import Context, Placement, Slots, column_error, register
from aorc.format.types import (
    LEGACY_DECIMAL_SCALE,
    MAX_DECIMAL_PRECISION,
    OrcType,
    TypeKind,
)

__all__ = ["rescale"]

_MASK32 = np.uint64(0xFFFFFFFF)
_STEP = 9  # 10**9 < 2**32: one limb-sized factor per step
_TEN_38 = 10**38
_INT64_MAX = np.int64(2**63 - 1)
_POW10_64 = np.array([10**i for i in range(19)], np.int64)


@register(TypeKind.DECIMAL)
def decode_decimal(t: OrcType, ctx: Context, level: Placement) -> pa.Array:
    """Decode a decimal column."""
    slots = ctx.slots(t, level)
    dt = ctx.arrow_type(t)
    if ctx.opts.unstable_pre_2 and t.precision and t.precision <= 18:
        words = _from_int64(_decimal64(t, ctx, slots.count))
        if slots.count and _too_wide(words, t.precision, True) is not None:
            raise column_error(t, pb.Stream.DATA, f"a value has more than {t.precision} digits")
        return _build(dt, slots, words)
    data = ctx.require(t, pb.Stream.DATA, slots.count, 1)
    scales = ctx.ints(t, pb.Stream.SECONDARY, slots.count, signed=True)
    if slots.count == 0:
        return _build(dt, slots, np.zeros((0, 2), np.uint64))
    offset = ctx.byte_offset(t, pb.Stream.DATA)  # 0 but for a stripe decoded in slices
    if not t.is_legacy_decimal:  # the usual case in one pass, else the general way below
        fast, end = rle.decimals_at_scale(data, slots.count, offset, scales, t.scale or 0,
                                          t.precision or 38)
        if fast is not None:
            ctx.consumed(t, pb.Stream.DATA, end)
            return _build(dt, slots, fast)
    with ctx.reading(t, pb.Stream.DATA):
        words, end = rle.read_varint128_from(data, slots.count, offset)
    ctx.consumed(t, pb.Stream.DATA, end)
    _check_scales(t, scales)
    target = LEGACY_DECIMAL_SCALE if t.is_legacy_decimal else (t.scale or 0)
    words, overflow, fits = _rescale(words, scales, target, _fits_int64(words))
    wide = _too_wide(words, 38 if t.is_legacy_decimal else (t.precision or 38), fits)
    if overflow is not None:
        wide = overflow if wide is None else wide | overflow
    if wide is None:
        return _build(dt, slots, words)
    if not t.is_legacy_decimal:
        row = int(np.flatnonzero(wide)[0])
        raise column_error(t, pb.Stream.DATA,
                           f"value {row} has more than {t.precision} digits at scale {t.scale}")
    # Unbounded legacy decimals: what does not fit 38 digits is null, as in ORC C++ and Java.
    return _build(dt, _drop(slots, wide), words[~wide])


def _check_scales(t: OrcType, scales: npt.NDArray[np.int64]) -> None:
    """Refuse a value scale no decimal can have (below 0 or above 38 digits)."""
    if int(scales.min()) >= 0 and int(scales.max()) <= MAX_DECIMAL_PRECISION:
        return
    row = int(np.flatnonzero((scales < 0) | (scales > MAX_DECIMAL_PRECISION))[0])
    raise column_error(t, pb.Stream.SECONDARY, f"value {row} has scale {int(scales[row])}, "
                       f"outside 0 to {MAX_DECIMAL_PRECISION}")


def _fits_int64(words: npt.NDArray[np.uint64]) -> bool:
    """Whether every 128-bit value is within the int64 range."""
    low = words[:, 0].view(np.int64)
    if not words[:, 1].any():
        return not len(low) or int(low.min()) >= 0
    return bool(np.array_equal(words[:, 1], (low >> 63).view(np.uint64)))


def _too_wide(words: npt.NDArray[np.uint64], precision: int,
              fits: bool) -> npt.NDArray[np.bool_] | None:
    """Where ``|value| >= 10**precision``; ``None`` when nowhere."""
    if fits:
        if precision > 18:  # an int64 has at most 19 digits, below 10**19
            return None
        low = words[:, 0].view(np.int64)
        bound = 10**precision
        if int(low.min()) > -bound and int(low.max()) < bound:
            return None
        narrow: npt.NDArray[np.bool_] = (low >= bound) | (low <= -bound)
        return narrow
    negative = (words[:, 1] >> np.uint64(63)).astype(np.bool_)
    wide = _at_least(_negate_where(words, negative), 10**precision)
    return wide if wide.any() else None


def _decimal64(t: OrcType, ctx: Context, count: int) -> npt.NDArray[np.int64]:
    return ctx.ints(t, pb.Stream.DATA, count, signed=True, version=2)


def _build(dt: pa.DataType, slots: Slots, words: npt.NDArray[np.uint64]) -> pa.Array:
    data = slots.expand(np.ascontiguousarray(words))
    return pa.Array.from_buffers(dt, slots.length, [slots.validity(), pa.py_buffer(data)],
                                 null_count=slots.null_count)


def _drop(slots: Slots, overflow: npt.NDArray[np.bool_]) -> Slots:
    """``slots`` with the values flagged in ``overflow`` made null."""
    valid = np.ones(slots.length, np.bool_) if slots.valid is None else slots.valid.copy()
    positions = np.flatnonzero(valid)
    valid[positions[overflow]] = False
    return Slots(slots.length, valid, slots.count - int(overflow.sum()))


def _from_int64(values: npt.NDArray[np.int64]) -> npt.NDArray[np.uint64]:
    """(n, 2) little-endian 128-bit words of int64 values."""
    out = np.empty((len(values), 2), np.uint64)
    out[:, 0] = values.view(np.uint64)
    out[:, 1] = np.where(values < 0, np.uint64(2**64 - 1), np.uint64(0))
    return out


def rescale(words: npt.NDArray[np.uint64], scales: npt.NDArray[np.int64],
            target: int) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.bool_] | None]:
    """Bring 128-bit unscaled values from their own scales to ``target``.

    Args:
        words: (n, 2) little-endian two's complement words.
        scales: each value's scale.
        target: the scale wanted.

    Returns:
        The rescaled words and a mask of the values whose result needs more than 38 digits
        (``None`` when there are none).
    """
    out, overflow, _ = _rescale(words, scales, target, _fits_int64(words))
    return out, overflow


def _rescale(words: npt.NDArray[np.uint64], scales: npt.NDArray[np.int64], target: int,
             fits: bool) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.bool_] | None, bool]:
    """:func:`rescale`, also saying whether the results fit int64 (``fits``: the inputs do)."""
    diff = target - scales
    if not diff.any():
        return words, None, fits
    fast = _rescale_int64(words, diff) if fits else None
    if fast is not None:
        return fast, None, True
    words = words.copy()
    overflow = np.zeros(len(words), np.bool_)
    # One sort groups the rows by scale difference: linear work per group, not per scale.
    order = np.argsort(diff, kind="stable")
    ordered = diff[order]
    starts = np.flatnonzero(ordered[1:] != ordered[:-1]) + 1
    for lo, hi in zip([0, *starts.tolist()], [*starts.tolist(), len(diff)], strict=True):
        d = int(ordered[lo])
        if d == 0:
            continue
        rows = order[lo:hi]
        result, over = _scale_by(words[rows], d)
        words[rows] = result
        overflow[rows] = over
    return words, (overflow if overflow.any() else None), _fits_int64(words)


def _rescale_int64(words: npt.NDArray[np.uint64],
                   diff: npt.NDArray[np.int64]) -> npt.NDArray[np.uint64] | None:
    """The common case in 64-bit arithmetic: values that fit int64 (the caller checked) scaled
    up by at most 18 digits without overflow (``None`` when the data is not of that kind)."""
    if int(diff.min()) < 0 or int(diff.max()) > 18:
        return None
    low = words[:, 0].view(np.int64)
    factor = _POW10_64[diff]
    limit = _INT64_MAX // factor
    if not ((low <= limit) & (low >= -limit)).all():
        return None
    return _from_int64(low * factor)


def _scale_by(words: npt.NDArray[np.uint64],
              d: int) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.bool_]]:
    """Multiply (``d > 0``) or truncating-divide (``d < 0``) by ``10**|d|``."""
    negative = (words[:, 1] >> np.uint64(63)).astype(np.bool_)
    limbs = _to_limbs(_negate_where(words, negative))
    over = np.zeros(len(words), np.bool_)
    remaining = min(abs(d), 80)  # past 10**77 every non-zero value overflows or becomes 0
    while remaining:
        step = min(remaining, _STEP)
        factor = np.uint64(10**step)
        if d > 0:
            over |= _mul_small(limbs, factor)
        else:
            _div_small(limbs, factor)
        remaining -= step
    result = _from_limbs(limbs)
    over |= _at_least(result, _TEN_38)
    return _negate_where(result, negative), over


def _negate_where(words: npt.NDArray[np.uint64],
                  mask: npt.NDArray[np.bool_]) -> npt.NDArray[np.uint64]:
    """Two's complement negation of the rows flagged in ``mask``."""
    if not mask.any():
        return words
    out = words.copy()
    lo, hi = ~words[mask, 0], ~words[mask, 1]
    lo = lo + np.uint64(1)
    hi = hi + (lo == 0).astype(np.uint64)
    out[mask, 0], out[mask, 1] = lo, hi
    return out


def _to_limbs(words: npt.NDArray[np.uint64]) -> list[npt.NDArray[np.uint64]]:
    """Four 32-bit limbs, least significant first, each in a uint64 array."""
    lo, hi = words[:, 0], words[:, 1]
    return [lo & _MASK32, lo >> np.uint64(32), hi & _MASK32, hi >> np.uint64(32)]


def _from_limbs(limbs: list[npt.NDArray[np.uint64]]) -> npt.NDArray[np.uint64]:
    out = np.empty((len(limbs[0]), 2), np.uint64)
    out[:, 0] = limbs[0] | (limbs[1] << np.uint64(32))
    out[:, 1] = limbs[2] | (limbs[3] << np.uint64(32))
    return out


def _mul_small(limbs: list[npt.NDArray[np.uint64]], factor: np.uint64) -> npt.NDArray[np.bool_]:
    """Multiply in place by ``factor < 2**32``; returns where the product passed 128 bits."""
    carry = np.zeros_like(limbs[0])
    for i in range(4):
        product = limbs[i] * factor + carry  # < 2**64: both factors are below 2**32
        limbs[i] = product & _MASK32
        carry = product >> np.uint64(32)
    over: npt.NDArray[np.bool_] = carry != 0
    return over


def _div_small(limbs: list[npt.NDArray[np.uint64]], divisor: np.uint64) -> None:
    """Divide in place by ``divisor < 2**32``, truncating."""
    remainder = np.zeros_like(limbs[0])
    for i in range(3, -1, -1):
        current = (remainder << np.uint64(32)) | limbs[i]  # < divisor * 2**32 < 2**64
        limbs[i] = current // divisor
        remainder = current - limbs[i] * divisor


def _at_least(words: npt.NDArray[np.uint64], bound: int) -> npt.NDArray[np.bool_]:
    """Where the unsigned 128-bit values are >= ``bound``."""
    b_hi, b_lo = np.uint64(bound >> 64), np.uint64(bound & (2**64 - 1))
    out: npt.NDArray[np.bool_] = (words[:, 1] > b_hi) | ((words[:, 1] == b_hi)
                                                         & (words[:, 0] >= b_lo))
    return out
