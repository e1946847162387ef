"""Byte-level codecs of the ORC format: run-length encodings, varints, compression framing.

Nothing here does I/O. The hot loops are Cython kernels (``_decode``, ``_encode``); the typed
Python fronts (``rle`` and friends) are what the rest of aorc imports.
"""

__all__: list[str] = []
