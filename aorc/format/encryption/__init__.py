"""ORC column encryption, sans-I/O: the cipher layout (IVs, AES/CTR), the file's encryption
block (keys, variants, masks, stripe ids, local keys) and reading with decrypted local keys.

Key providers, which talk to key services, live at the edge in :mod:`aorc.keys`.
"""

from aorc.format.encryption.cipher import Algorithm, ctr, stream_iv
from aorc.format.encryption.decrypt import (
    EncryptedStream,
    FileKeys,
    decrypted_tail,
    keyed_layout,
    stream_bytes,
)
from aorc.format.encryption.encrypt import LocalKeys, resealed_block
from aorc.format.encryption.variants import (
    EncryptionInfo,
    KeyInfo,
    MaskInfo,
    VariantInfo,
    parse_encryption,
)

__all__ = [
    "Algorithm",
    "EncryptedStream",
    "EncryptionInfo",
    "FileKeys",
    "KeyInfo",
    "LocalKeys",
    "MaskInfo",
    "VariantInfo",
    "ctr",
    "decrypted_tail",
    "keyed_layout",
    "parse_encryption",
    "resealed_block",
    "stream_bytes",
    "stream_iv",
]
