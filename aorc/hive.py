"""Hive-style partition folders (``key=value``), as Hive and Spark name them.

Pure functions shared by the dataset writer and reader, the rolling sink and the Spark
helpers; no I/O.
"""

from __future__ import annotations

import datetime
from typing import Any

__all__ = ["HIVE_DEFAULT_PARTITION", "escape_path_name", "partition_segment"]

#: The folder value of a null partition value (as Hive and Spark write it).
HIVE_DEFAULT_PARTITION = "__HIVE_DEFAULT_PARTITION__"

# Characters Hive escapes in partition folder names (FileUtils.escapePathName), plus '+'
# which separates the parts of the sink's file names.
_ESCAPED = set('"#%\'*/:=?\\\x7f{}[]^+') | {chr(c) for c in range(0x20)}


def escape_path_name(text: str) -> str:
    """``text`` with the characters Hive escapes in path names written as ``%XX``."""
    return "".join(f"%{ord(c):02X}" if c in _ESCAPED else c for c in text)


def partition_segment(name: str, value: Any) -> str:
    """A Hive partition folder ``name=value``, escaped as Hive escapes it.

    ``None`` becomes :data:`HIVE_DEFAULT_PARTITION`; booleans ``true``/``false``; dates and
    times ISO format.
    """
    if value is None:
        text = HIVE_DEFAULT_PARTITION
    elif isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, (datetime.date, datetime.datetime, datetime.time)):
        text = value.isoformat(sep=" ") if isinstance(value, datetime.datetime) \
            else value.isoformat()
    elif isinstance(value, bytes):
        text = value.decode("utf-8", "backslashreplace")
    else:
        text = str(value)
    return f"{escape_path_name(name)}={escape_path_name(text)}"
