"""ORC column streams <-> Arrow arrays.

:func:`decode_stripe` turns the decompressed streams of one stripe into a record batch;
:func:`decode_column` decodes one column subtree. One module per type family registers its
decoders with :mod:`aorc.format.columns.base`; importing this package loads them all.
"""

from aorc.format.columns import compound, decimals, floats, integers, strings, timestamps  # noqa: F401
from aorc.format.columns.base import (
    DecodeOptions,
    DictStripeStreams,
    StripeStreams,
    arrow_field,
    arrow_type,
    decode_column,
    decode_stripe,
)

__all__ = [
    "DecodeOptions",
    "DictStripeStreams",
    "StripeStreams",
    "arrow_field",
    "arrow_type",
    "decode_column",
    "decode_stripe",
]
