"""Filters written as text, ``"col op value"``, as the command line takes them.

``parse_filter_text`` splits the text; ``filters_from_text`` also converts the value(s) to
the column's type, as ``filters=`` parses text values (:mod:`aorc.filters.literals`: so
``amount > 10.5``, ``day >= 2024-01-31``, ``ts < 2024-01-31T12:00:00Z``, ``ok == true`` all
work, and a value that does not parse says which formats the column takes), giving list-form
filters for ``filters=``. Ops are those of ``filters=``: ``==`` (or ``=``), ``!=``, ``<``,
``<=``, ``>``, ``>=``, ``in``, ``not in``, ``is null``, ``is not null``. A value may be
quoted with ``'`` or ``"`` (needed for text with spaces or commas); ``in`` and ``not in``
take a comma-separated list, optionally in ``(...)`` or ``[...]``. Examples::

    country == NO
    name in ('Ann', 'Bob')
    address.city is not null
    amount >= 10.5
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import pyarrow as pa

from aorc.errors import SchemaError
from aorc.filters.literals import parse_text

__all__ = ["filters_from_text", "parse_filter_text"]

_PATTERN = re.compile(
    r"^\s*(?P<column>.+?)\s*(?P<op>==|!=|<=|>=|=|<|>|\bnot\s+in\b|\bin\b"
    r"|\bis\s+not\s+null\b|\bis\s+null\b)\s*(?P<value>.*?)\s*$", re.IGNORECASE | re.DOTALL)
_ITEM = re.compile(r"\s*(?:'([^']*)'|\"([^\"]*)\"|([^,]*?))\s*(?:,|$)")
_NULL_OPS = ("is null", "is not null")
_SET_OPS = ("in", "not in")

#: A parsed value: its text, and whether it was quoted (quoted text is never null).
Value = tuple[str, bool]


def parse_filter_text(text: str) -> tuple[str, str, Value | list[Value] | None]:
    """Split ``"col op value"`` into the column, the op and the value text(s).

    Returns:
        ``(column, op, value)``: ``op`` normalised (lower case, single spaces); ``value`` is
        ``None`` for ``is null``/``is not null``, a list for ``in``/``not in``, else one
        ``(text, quoted)`` pair.

    Raises:
        SchemaError: when the text is not of that form.
    """
    match = _PATTERN.match(text)
    if match is None or not match["column"]:
        raise SchemaError(f"filter {text!r}: expected 'column op value' with op one of ==, "
                          "!=, <, <=, >, >=, in, not in, is null, is not null")
    column, op = match["column"].strip("`"), " ".join(match["op"].lower().split())
    rest = match["value"]
    if op in _NULL_OPS:
        if rest:
            raise SchemaError(f"filter {text!r}: nothing may follow {op!r}")
        return column, op, None
    if not rest:
        raise SchemaError(f"filter {text!r}: {op!r} needs a value")
    if op in _SET_OPS:
        if rest[:1] + rest[-1:] in ("()", "[]"):
            rest = rest[1:-1]
        return column, op, _items(text, rest)
    return column, op, _single(rest)


def _single(text: str) -> Value:
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1], True
    return text, False


def _items(text: str, rest: str) -> list[Value]:
    items: list[Value] = []
    pos = 0
    while pos < len(rest):
        match = _ITEM.match(rest, pos)
        if match is None or match.end() == pos:
            raise SchemaError(f"filter {text!r}: cannot read the list {rest!r}")
        single, double, bare = match.groups()
        quoted = single if single is not None else double
        items.append((quoted, True) if quoted is not None else (bare, False))
        pos = match.end()
    if not items:
        raise SchemaError(f"filter {text!r}: the list is empty")
    return items


def _column_type(schema: pa.Schema, name: str) -> pa.DataType | None:
    """The Arrow type of a top-level or dotted struct column (None when not found)."""
    if name in schema.names:
        return schema.field(name).type
    fields = {f.name: f.type for f in schema}
    head, dot, tail = name.partition(".")
    while dot:
        t = fields.get(head)
        if t is not None and pa.types.is_struct(t):
            found = _column_type(pa.schema([t.field(i) for i in range(t.num_fields)]), tail)
            if found is not None:
                return found
        more, dot, tail = tail.partition(".")
        head = f"{head}.{more}"
    return None


def _typed(text: str, value: Value, t: pa.DataType | None) -> Any:
    raw, quoted = value
    if not quoted and raw.lower() == "null":
        return None
    if t is None:
        return raw
    target = t.value_type if pa.types.is_dictionary(t) else t
    try:
        return parse_text(raw, target)
    except ValueError as exc:
        raise SchemaError(f"filter {text!r}: {exc} (the column is {target})") from None


def filters_from_text(texts: Sequence[str], schema: pa.Schema) -> list[tuple[Any, ...]] | None:
    """List-form filters (their AND) from ``"col op value"`` texts, each value converted to
    its column's type in ``schema`` (an unknown column is left for ``filters=`` to report).

    Returns:
        ``None`` when ``texts`` is empty.

    Raises:
        SchemaError: malformed text, or a value that is not of the column's type.
    """
    out: list[tuple[Any, ...]] = []
    for text in texts:
        column, op, value = parse_filter_text(text)
        t = _column_type(schema, column)
        if value is None:
            out.append((column, op))
        elif isinstance(value, list):
            out.append((column, op, [_typed(text, v, t) for v in value]))
        else:
            out.append((column, op, _typed(text, value, t)))
    return out or None
