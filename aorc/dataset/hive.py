"""Hive-style partition folders (``key=value``), as Hive and Spark name them.

Pure functions shared by the dataset writer and reader, the rolling sink and the Spark
helpers; no I/O.
"""

from __future__ import annotations

import datetime
from typing import Any

from aorc.errors import SchemaError

__all__ = [
    "HIDDEN_PREFIXES",
    "HIVE_DEFAULT_PARTITION",
    "check_folder_name",
    "escape_file_name",
    "escape_path_name",
    "partition_segment",
]

#: Names starting with these are hidden: listings skip them (``_SUCCESS``, ``.crc``), as
#: Spark, Hive and pyarrow do.
HIDDEN_PREFIXES = ("_", ".")

#: The folder value of a null partition value (as Hive and Spark write it).
HIVE_DEFAULT_PARTITION = "__HIVE_DEFAULT_PARTITION__"

# Characters Hive escapes in partition folder names (FileUtils.escapePathName), plus '+'
# which separates the parts of the sink's file names.
_ESCAPED = set('"#%\'*/:=?\\\x7f{}[]^+') | {chr(c) for c in range(0x20)}


def escape_path_name(text: str) -> str:
    """``text`` with the characters Hive escapes in path names written as ``%XX``."""
    return "".join(f"%{ord(c):02X}" if c in _ESCAPED else c for c in text)


def escape_file_name(text: str) -> str:
    """``text`` escaped as :func:`escape_path_name` does, and a leading ``_`` or ``.``
    written as ``%5F`` / ``%2E`` too, so that the name is not hidden."""
    escaped = escape_path_name(text)
    if escaped.startswith(HIDDEN_PREFIXES):
        escaped = f"%{ord(escaped[0]):02X}{escaped[1:]}"
    return escaped


def check_folder_name(name: str, what: str) -> None:
    """Refuse a partition column (or folder) name that makes hidden ``name=value`` folders.

    Raises:
        SchemaError: ``name`` starts with ``_`` or ``.``; its folders (and rows) would be
            skipped by every reader.
    """
    if name.startswith(HIDDEN_PREFIXES):
        raise SchemaError(
            f"{what} {name!r} starts with {name[0]!r}: its folders ({name}=...) would be "
            f"hidden (readers such as aorc, Spark, Hive and pyarrow skip names starting "
            f"with '_' or '.'), so their rows could not be read back; rename it")


def partition_segment(name: str, value: Any) -> str:
    """A Hive partition folder ``name=value``, escaped as Hive escapes it.

    ``None`` becomes :data:`HIVE_DEFAULT_PARTITION`; booleans ``true``/``false``; dates and
    times ISO format.

    Args:
        name: the partition column's name.
        value: its value (any type; ``None`` for null).

    Returns:
        The folder name, ``name=value``.
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
