"""aorc.format.codec.dictionary (its kernel _dict_values) against pyarrow's take."""

from __future__ import annotations

import io

import numpy as np
import pyarrow as pa
import pyarrow.orc as po
import pytest

import aorc
from aorc.format.codec.dictionary import dictionary_values


def _parts(d: pa.Array) -> tuple[np.ndarray, pa.Buffer]:
    _, offsets, data = d.buffers()
    return np.frombuffer(offsets, np.int32, len(d) + 1), data


@pytest.mark.parametrize("seed", range(6))
def test_values_are_pyarrow_take(seed: int) -> None:
    rng = np.random.default_rng(seed)
    size = int(rng.integers(1, 300))
    d = pa.array(["".join(chr(97 + int(c)) for c in rng.integers(0, 26, rng.integers(0, 12)))
                  for _ in range(size)])
    n = int(rng.integers(0, 5000))
    valid = rng.random(n) < rng.random() if seed % 2 else None
    count = n if valid is None else int(valid.sum())
    idx = rng.integers(0, size, count)
    offsets, data = _parts(d)
    out, values, bad = dictionary_values(idx, valid, n, offsets, data)
    assert bad is None and out is not None and values is not None
    mask = None if valid is None else ~valid
    want_idx = np.zeros(n, np.int64)
    if valid is None:
        want_idx[:] = idx
    else:
        want_idx[valid] = idx
    want = d.take(pa.array(want_idx, mask=mask))
    got = pa.Array.from_buffers(pa.string(), n, [want.buffers()[0], pa.py_buffer(out),
                                                 pa.py_buffer(values)],
                                null_count=want.null_count)
    assert got.equals(want)


def test_bad_indices_and_counts() -> None:
    offsets, data = _parts(pa.array(["a", "bb", "ccc"]))
    assert dictionary_values(np.array([0, 3, 9]), None, 3, offsets, data)[2] == 3
    negative = np.array([1, -5], np.int64)  # an unsigned index above 2**63 - 1
    assert dictionary_values(negative, None, 2, offsets, data)[2] == -5
    with pytest.raises(ValueError, match="indices"):
        dictionary_values(np.array([0, 1]), None, 3, offsets, data)
    with pytest.raises(ValueError, match="valid slots"):
        dictionary_values(np.array([0]), np.array([True, True]), 2, offsets, data)
    with pytest.raises(ValueError, match="offsets"):
        dictionary_values(np.array([0]), None, 1, offsets, b"ab")
    empty = np.zeros(1, np.int32)
    assert dictionary_values(np.array([0]), None, 1, empty, b"")[2] == 0
    out, values, bad = dictionary_values(np.zeros(0, np.int64), np.zeros(4, bool), 4,
                                                 offsets, data)
    assert bad is None and out is not None and list(out) == [0] * 5 and len(values) == 0


def test_a_dictionary_column_reads_as_pyarrow_and_pyorc_read_it() -> None:
    rng = np.random.default_rng(3)
    cats = [f"c{i}-" + "x" * (i % 7) for i in range(50)]
    values = [None if rng.random() < 0.2 else cats[int(rng.integers(0, 50))]
              for _ in range(30_000)]
    out = io.BytesIO()
    po.write_table(pa.table({"s": values}), out, compression="zstd")
    got = aorc.sync.read_table(out.getvalue())
    assert got.equals(po.read_table(io.BytesIO(out.getvalue())))
    assert got.column("s").to_pylist() == values
