"""Type stub of the row-dropping kernels (``_drop.pyx``). The kernels release the GIL."""

from typing import Any

def drop_fixed(src: Any, dst: Any, width: int, gone: Any) -> None:
    """Copy the values of ``width`` bytes of ``src`` but those at ``gone`` into ``dst``.

    Raises:
        ValueError: ``gone`` is not sorted, distinct and in range, or ``dst`` does not fit.
    """

def binary_kept_bytes(offsets: Any, gone: Any) -> int:
    """The bytes of the values of a string or binary column kept.

    Raises:
        ValueError: ``gone`` is not sorted, distinct and in range.
    """

def drop_binary(offsets: Any, data: Any, out_offsets: Any, out_data: Any, gone: Any) -> None:
    """Copy the values of a string or binary column but those at ``gone``.

    Raises:
        ValueError: bad positions, outputs that do not fit, or damaged offsets.
    """
