"""``read_dictionary=``: string and binary columns read as Arrow dictionaries.

ORC stores a string column either directly or as a stripe dictionary plus one index per
value. With ``read_dictionary=["name", ...]`` (the name of ``pyarrow.parquet.read_table``'s
option) those columns come back as ``dictionary<int32, string>`` (or ``binary``) arrays: a
dictionary-encoded stripe hands its dictionary and indices to Arrow without expanding them
(a stripe's batch shares the stripe's dictionary); a directly encoded stripe is
dictionary-encoded as it is read. A named struct, list or map column makes every string,
char, varchar and binary column below it a dictionary.
"""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa

from aorc.errors import SchemaError
from aorc.format.columns import DecodeOptions
from aorc.format.columns.base import arrow_field
from aorc.format.projection import resolve_column
from aorc.format.types import OrcType, TypeKind

__all__ = ["check_read_dictionary", "dictionary_columns", "dictionary_schema",
           "present_columns"]

_STRINGS = frozenset({TypeKind.STRING, TypeKind.CHAR, TypeKind.VARCHAR, TypeKind.BINARY})


def check_read_dictionary(names: Sequence[str] | None) -> None:
    """Check the form of ``read_dictionary=``: ``None`` or a list of column names.

    Raises:
        SchemaError: a string, or an item that is not a non-empty string.
    """
    if names is None:
        return
    if isinstance(names, str) or not isinstance(names, Sequence | set | frozenset):
        raise SchemaError(f"read_dictionary must be a list of column names, got {names!r}")
    for name in names:
        if not isinstance(name, str) or not name:
            raise SchemaError(f"read_dictionary: {name!r} is not a column name")


def dictionary_columns(root: OrcType, names: Sequence[str] | None) -> frozenset[int]:
    """The ids of the columns ``read_dictionary=names`` makes dictionaries.

    Raises:
        SchemaError: an unknown column, or one with no string or binary column in it.
    """
    check_read_dictionary(names)
    ids: set[int] = set()
    for name in names or ():
        node = resolve_column(root, name)
        found = {t.column_id for t in node.walk() if t.kind in _STRINGS}
        if not found:
            raise SchemaError(f"read_dictionary: column {name!r} is "
                              f"{node.kind.name.lower()}; only string, char, varchar and "
                              "binary columns (or columns holding them) read as dictionaries")
        ids |= found
    return frozenset(ids)


def present_columns(root: OrcType, names: Sequence[str] | None) -> list[str]:
    """The names of ``names`` that are columns of ``root`` (a dataset's files need not all
    have every column)."""
    out = []
    for name in names or ():
        try:
            resolve_column(root, name)
        except SchemaError:
            continue
        out.append(name)
    return out


def dictionary_schema(root: OrcType, opts: DecodeOptions) -> pa.Schema:
    """The Arrow schema of a file's rows with the dictionary columns of ``opts``."""
    pairs = (list(zip(root.field_names, root.children, strict=True))
             if root.kind == TypeKind.STRUCT else [("_col0", root)])
    return pa.schema([arrow_field(n, c, None, dictionary_strings=opts.dictionary_strings,
                                  timestamp_unit=opts.timestamp_unit,
                                  instant=opts.use_writer_timezone) for n, c in pairs])
