"""Type stub of the JSON lines kernel (``_jsonl.pyx``). The kernel releases the GIL."""

from typing import Any

TEXT: int
FLOAT_TEXT: int
STRING: int
INT: int
BOOL: int
TIMESTAMP: int
QUOTED: int
DECIMAL: int

def render_lines(columns: list[Any], n: int) -> memoryview:
    """The ``n`` rows of ``columns`` as JSON lines (see ``_jsonl.pyx`` for a column's tuple).

    Raises:
        ValueError: a string is not valid UTF-8, a timestamp's year is outside 1..9999, or a
            column's buffers do not fit ``n``.
    """
