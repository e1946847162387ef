"""The encoders against files ORC Java wrote, from the conformance corpus (no JVM needed).

Each stripe is decoded with aorc's decoders and encoded again with the file's row index
stride and writer time zone; encodings, streams, row-index statistics (and, for uncompressed
files, positions) and stripe statistics must come out as the file has them. Only files whose
writer already made the choices ORC Java 2.3 makes are used: older writers ended long runs of
equal integers with DIRECT rather than DELTA runs, or wrote decimal scales untrimmed.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from encode_helpers import compare_column, flatten, read_orc_stripes

from aorc.format.columns import DecodeOptions, DictStripeStreams, decode_stripe
from aorc.format.columns.encode import EncodeOptions, encode_column
from aorc.format.tail import NeedBytes, parse_tail

FILES = {
    # name: compare double sums (ORC Java adds a repeating batch's value once)
    "TestOrcFile.columnProjection.orc": True,
    "TestOrcFile.test1.orc": True,
    "TestOrcFile.testStringAndBinaryStatistics.orc": True,
    "TestStringDictionary.testRowIndex.orc": True,
    "TestVectorOrcFile.testLz4.orc": True,
    "orc_split_elim_new.orc": False,
}


@pytest.mark.parametrize("name", sorted(FILES))
def test_reencoding_java_files(name: str, corpus: Path) -> None:
    path = corpus / "files" / name
    data = path.read_bytes()
    tail = parse_tail(data, len(data))
    assert not isinstance(tail, NeedBytes)
    root, stripes = read_orc_stripes(path)
    stride = tail.row_index_stride
    decisions: dict[int, bool] = {}
    for stripe in stripes:
        streams = DictStripeStreams(stripe.streams, stripe.encodings,
                                    stripe.writer_timezone or None)
        batch = decode_stripe(root, None, streams, stripe.num_rows, DecodeOptions.from_tail(tail))
        arr = pa.StructArray.from_arrays(batch.columns, fields=list(batch.schema))
        opts = EncodeOptions(row_index_stride=stride, timezone=stripe.writer_timezone or "UTC")
        starts = np.arange(0, stripe.num_rows, stride) if stride else []
        encoded = encode_column(root, arr, starts, opts, dictionary_decisions=decisions)
        for c in flatten(encoded):
            compare_column(name, c, stripe, positions=tail.compression == 0,
                           double_sums=FILES[name])
