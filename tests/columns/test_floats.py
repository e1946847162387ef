"""Float and double columns: bit-exact against the values written by pyarrow.orc."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from stream_builders import make_streams
from stripe_source import decode_file, pyarrow_orc_bytes, pyarrow_read

from aorc.errors import CorruptFileError
from aorc.format._proto import orc_proto_pb2 as pb
from aorc.format.columns import DecodeOptions, decode_column
from aorc.format.types import parse_type_string

RNG = np.random.default_rng(7)
SPECIAL = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-310, -1.5, 3.4028235e38, 1e300]


def _bits(arr: pa.ChunkedArray, dtype: str) -> list[int | None]:
    width = {"f4": np.uint32, "f8": np.uint64}[dtype]
    out: list[int | None] = []
    for chunk in arr.chunks:
        valid = chunk.is_valid().to_numpy(zero_copy_only=False)
        values = chunk.to_numpy(zero_copy_only=False).astype(dtype).view(width)
        out += [int(v) if ok else None for v, ok in zip(values, valid, strict=False)]
    return out


@pytest.mark.parametrize("nulls", [0.0, 0.3, 1.0])
def test_bit_exact(nulls: float) -> None:
    n = 3000
    f64 = np.concatenate([np.array(SPECIAL), RNG.standard_normal(n - len(SPECIAL)) * 1e6])
    with np.errstate(over="ignore"):
        f32 = f64.astype(np.float32)
    mask = RNG.random(n) < nulls
    table = pa.table({"f": pa.array(f32, mask=mask), "d": pa.array(f64, mask=mask)})
    data = pyarrow_orc_bytes(table, stripe_size=16 * 1024)
    got = decode_file(data)
    assert got.schema == pyarrow_read(data).schema
    for name, dtype, values in (("f", "f4", f32), ("d", "f8", f64)):
        want = [None if m else int(v) for v, m in
                zip(values.view(np.uint32 if dtype == "f4" else np.uint64), mask, strict=False)]
        assert _bits(got.column(name), dtype) == want


def test_short_data_stream_is_corrupt() -> None:
    t = parse_type_string("struct<x:double>")
    streams = make_streams({(1, pb.Stream.DATA): b"\x00" * 20}, [pb.ColumnEncoding.DIRECT] * 2)
    with pytest.raises(CorruptFileError, match=r"column 1 \(double\), DATA"):
        decode_column(t, streams, 3, DecodeOptions())


def test_unaligned_stream_view() -> None:
    """A DATA stream that is a view at an odd offset of a larger buffer decodes correctly."""
    values = np.array([1.5, -2.25, 1e100], "<f8")
    blob = memoryview(b"\x01" + values.tobytes())[1:]
    t = parse_type_string("double")
    streams = make_streams({(0, pb.Stream.DATA): blob}, [pb.ColumnEncoding.DIRECT])
    arr = decode_column(t, streams, 3, DecodeOptions())
    arr.validate(full=True)
    assert arr.to_pylist() == values.tolist()
