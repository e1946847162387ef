"""Type stub of the LZO1X decompressor (``_lzo.pyx``). The loop releases the GIL."""

from typing_extensions import Buffer

def decompress_into(src: Buffer, dst: Buffer) -> int:
    """Decompress the LZO1X block ``src`` into the writable ``dst``; return the bytes written.

    Bytes of ``dst`` past the returned size may have been overwritten. Raises CorruptFileError
    when the block is malformed, truncated or larger than ``dst``.
    """

def decompress(src: Buffer, max_size: int) -> bytearray:
    """Decompress the LZO1X block ``src`` (at most ``max_size`` bytes of output).

    Raises CorruptFileError when the block is malformed, truncated or too large.
    """
