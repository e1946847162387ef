"""Test helpers: small hostile ORC files that once cost minutes of CPU or a RecursionError.

Each builder starts from a valid file written by pyarrow.orc (ORC C++), takes it apart with
:mod:`fuzz.model` and puts it back together around the hostile part, so everything else in
the file is consistent and only the named problem remains (issue 20, items 4 and 5):

* :func:`decimal_scales_file`: a decimal column whose SECONDARY stream (each value's scale)
  changes every row, as RLE v2 DELTA runs a few bytes long.
* :func:`zone_spellings_file`: many stripes, each naming one time zone with a different
  spelling (surrounding spaces, which aorc ignores; ORC C++ refuses them).
* :func:`deep_type_file`: a type tree of lists nested to a given depth (pyarrow.orc writes
  and reads any depth).
"""

from __future__ import annotations

import copy
import decimal
import io

import numpy as np
import pyarrow as pa
import pyarrow.orc as pa_orc
from fuzz.model import FileModel, StripeModel, build, parse_model
from stream_builders import varint, zigzag

from aorc.format._proto import orc_proto_pb2 as pb

__all__ = ["decimal_scales_file", "deep_table", "deep_type", "deep_type_file", "delta_rle_v2",
           "zone_spellings_file"]

K = pb.Stream.Kind


def _model(table: pa.Table, compression: str, **kwargs: object) -> FileModel:
    sink = io.BytesIO()
    pa_orc.write_table(table, sink, compression=compression, **kwargs)
    model = parse_model(sink.getvalue())
    assert model is not None and model.stripes
    return model


def delta_rle_v2(values: list[int], signed: bool) -> bytes:
    """Integer RLE v2 of ``values`` as DELTA runs of constant step (a run per change of step,
    up to 512 values): ``range(n)`` takes a few bytes per 512 values."""
    out = bytearray()
    i = 0
    while i < len(values):
        j = i + 1
        if j < len(values):
            step = values[j] - values[i]
            while j < len(values) and j - i < 512 and values[j] - values[j - 1] == step:
                j += 1
        else:
            step = 0
        run = j - i
        out += bytes([0xC0 | ((run - 1) >> 8), (run - 1) & 0xFF])
        out += varint(zigzag(values[i]) if signed else values[i]) + varint(zigzag(step))
        i = j
    return bytes(out)


def _replace(model: FileModel, stripe: StripeModel, column: int, kind: int,
             plain: bytes) -> None:
    assert stripe.streams is not None
    for k, s in enumerate(stripe.streams):
        if s.proto.column == column and s.proto.kind == kind:
            s.raw = model.frame(plain)
            stripe.footer.streams[k].length = len(s.raw)
            s.proto = stripe.footer.streams[k]
            return
    raise AssertionError(f"no stream {K.Name(kind)} of column {column}")


def decimal_scales_file(rows: int, scales: list[int], precision: int = 38,
                        scale: int = 10, compression: str = "zlib",
                        values: list[int] | None = None) -> bytes:
    """A file of one ``decimal(precision, scale)`` column of ``rows`` unscaled ``values``
    (zeros by default) whose per-value scales cycle through ``scales`` (e.g.
    ``list(range(rows))``: a new scale every row)."""
    table = pa.table({"d": pa.array([decimal.Decimal(0)] * rows,
                                    pa.decimal128(precision, scale))})
    model = _model(table, compression)
    stripe = copy.deepcopy(model.stripes[0])
    per_row = [scales[i % len(scales)] for i in range(rows)]
    data = (b"".join(varint(zigzag(v)) for v in values) if values is not None
            else b"\x00" * rows)  # varint 0 per row
    _replace(model, stripe, 1, K.DATA, data)
    _replace(model, stripe, 1, K.SECONDARY, delta_rle_v2(per_row, signed=True))
    out = build(model, {0: stripe}, metadata_raw=b"",
                footer_hook=lambda f: f.ClearField("statistics"))
    assert out is not None
    return out


def zone_spellings_file(stripes: int, zone: str = "America/New_York",
                        compression: str = "zlib") -> bytes:
    """A file of ``stripes`` stripes of one timestamp row each, each naming ``zone`` as its
    writer's time zone with a different number of spaces before and after it."""
    table = pa.table({"t": pa.array(np.array([10**9 * 86400], "datetime64[ns]"))})
    model = _model(table, compression)
    first = model.stripes[0]
    model.stripes = []
    del model.footer.stripes[:]
    for i in range(stripes):
        stripe = copy.deepcopy(first)
        stripe.footer.writerTimezone = " " * (i % 50) + zone + " " * (i // 50)
        stripe.footer_raw = model.frame(stripe.footer.SerializeToString())
        model.stripes.append(stripe)
        model.footer.stripes.add().CopyFrom(first.info)

    def footer(f: pb.Footer) -> None:
        f.numberOfRows = stripes
        f.ClearField("statistics")

    out = build(model, metadata_raw=b"", footer_hook=footer)
    assert out is not None
    return out


def deep_type(depth: int) -> pa.DataType:
    """``depth`` lists around an int64."""
    t: pa.DataType = pa.int64()
    for _ in range(depth):
        t = pa.list_(t)
    return t


def deep_table(depth: int) -> pa.Table:
    """One column ``x`` of ``depth`` nested lists: rows ``[[...[7]...]]`` and null. Its ORC
    type tree is ``depth + 2`` levels deep (the root struct, the lists, the leaf)."""
    value: object = 7
    for _ in range(depth):
        value = [value]
    return pa.table({"x": pa.array([value, None], deep_type(depth))})


def deep_type_file(depth: int, compression: str = "zlib") -> bytes:
    """:func:`deep_table` written by pyarrow.orc (ORC C++ has no depth limit)."""
    sink = io.BytesIO()
    pa_orc.write_table(deep_table(depth), sink, compression=compression)
    return sink.getvalue()
