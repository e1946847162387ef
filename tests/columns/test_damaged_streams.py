"""Damaged streams: decoding either succeeds with a valid batch or raises an AorcError.

Streams of real files (every type, nested, both RLE versions and string encodings) get bytes
overwritten, cut short, dropped or extended; nothing but aorc's own errors may come out, and
whatever decodes must be a structurally valid Arrow batch.
"""

from __future__ import annotations

import decimal
import random

import numpy as np
import pyarrow as pa
import pytest
from stripe_source import pyarrow_orc_bytes, stripes
from test_compound import NESTED, _nested_row

from aorc.errors import AorcError
from aorc.format.columns import DecodeOptions, DictStripeStreams, decode_stripe


def _files() -> list[bytes]:
    n = 200
    table = pa.Table.from_pylist([_nested_row(i) for i in range(n)], schema=NESTED)
    extra = {
        "ts": pa.array((np.arange(n) * 10**9 - 10**11).astype("datetime64[ns]")),
        "dec": pa.array([decimal.Decimal(i * 37 - 500).scaleb(-3) for i in range(n)],
                        pa.decimal128(20, 5)),
        "day": pa.array(np.arange(n, dtype=np.int32) - 100).cast(pa.date32()),
        "flag": pa.array([i % 3 == 0 for i in range(n)]),
        "word": pa.array([str(i % 5) * (i % 4) for i in range(n)]),
        "f": pa.array(np.linspace(-1, 1, n, dtype=np.float32)),
        "tiny": pa.array(np.arange(n, dtype=np.int8)),
    }
    for name, column in extra.items():
        table = table.append_column(name, column)
    return [pyarrow_orc_bytes(table, file_version=v, dictionary_key_size_threshold=th)
            for v in ("0.11", "0.12") for th in (0.0, 1.0)]


def _damage(rnd: random.Random, streams: dict) -> None:
    for _ in range(rnd.randint(1, 3)):
        key = rnd.choice(sorted(streams))
        data = bytearray(streams[key])
        op = rnd.random()
        if op < 0.4 and data:
            for _ in range(rnd.randint(1, 4)):
                data[rnd.randrange(len(data))] = rnd.randrange(256)
        elif op < 0.7:
            data = data[:rnd.randint(0, len(data))]
        elif op < 0.8:
            del streams[key]
            continue
        else:
            data += bytes(rnd.randrange(256) for _ in range(rnd.randint(1, 20)))
        streams[key] = bytes(data)


@pytest.mark.parametrize("seed", range(4))
def test_damaged_streams_raise_only_aorc_errors(seed: int) -> None:
    rnd = random.Random(seed)
    files = [stripes(data) for data in _files()]
    outcomes = {"ok": 0, "error": 0}
    for _ in range(150):
        tail, parts = rnd.choice(files)
        original = parts[0].streams
        streams = dict(original.streams)
        _damage(rnd, streams)
        damaged = DictStripeStreams(streams, original.encodings, original.writer_timezone)
        try:
            batch = decode_stripe(tail.schema, None, damaged, parts[0].num_rows,
                                  DecodeOptions.from_tail(tail))
        except AorcError:
            outcomes["error"] += 1
            continue
        batch.validate(full=False)
        outcomes["ok"] += 1
    assert outcomes["error"] > 0
