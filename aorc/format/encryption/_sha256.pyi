"""Type stub of the SHA-256 kernels (``_sha256.pyx``). Both release the GIL."""

import numpy as np
import numpy.typing as npt

def sha256_hex(data: npt.NDArray[np.uint8], offsets: npt.NDArray[np.int64],
               out: npt.NDArray[np.uint8]) -> None:
    """Upper-case hex SHA-256 of each value, 64 bytes per value into ``out``."""

def sha256_digests(data: npt.NDArray[np.uint8], offsets: npt.NDArray[np.int64],
                   out: npt.NDArray[np.uint8]) -> None:
    """The 32-byte SHA-256 digest of each value into ``out``."""
