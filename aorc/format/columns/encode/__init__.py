"""Arrow arrays -> ORC streams: the column encoders of the writer.

:func:`encode_column` encodes one column subtree of one stripe (streams, encodings, row-index
positions, statistics, bloom filters) as ORC Java 2.x writes it; :func:`merge_statistics`
merges column statistics (stripe into file) as ORC Java does. One module per type family
registers its encoder with :mod:`aorc.format.columns.encode.base`; importing this package loads
them.
"""

from aorc.format.columns.encode import (  # noqa: F401
    compound,
    decimals,
    floats,
    geo,
    integers,
    strings,
    timestamps,
)
from aorc.format.columns.encode.base import (
    EncodedColumn,
    EncodedStream,
    EncodeOptions,
    encode_column,
)
from aorc.format.columns.encode.statistics import merge_statistics

__all__ = [
    "EncodeOptions",
    "EncodedColumn",
    "EncodedStream",
    "encode_column",
    "merge_statistics",
]
