"""Column projection: which column ids a selection of names (top-level or dotted nested
paths) reads, the order a read returns them in, and the node a name resolves to."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from aorc.errors import SchemaError
from aorc.format.types import OrcType, TypeKind, type_string

__all__ = ["requested_order", "resolve_column", "select_columns"]


def select_columns(root: OrcType, names: Iterable[str] | None) -> set[int]:
    """Column ids to read for a selection of top-level names or dotted nested paths.

    The selection includes each named node's whole subtree and its ancestors (so the
    result can be decoded as a tree). ``None`` selects everything.

    Raises:
        SchemaError: for a name that is not in the schema.
    """
    if names is None:
        return {t.column_id for t in root.walk()}
    if isinstance(names, str):
        raise SchemaError("columns must be a list of names, not a string")
    names = tuple(names)
    key = (id(root), names)
    if not all(isinstance(n, str) for n in names):
        return _selected(root, names)  # its error, uncached
    known = _SELECTED.get(key)
    if known is not None and known[0] is root:
        return set(known[1])
    selected = _selected(root, names)
    if len(_SELECTED) >= _KEPT:
        _SELECTED.clear()
    _SELECTED[key] = (root, frozenset(selected))  # the tree kept: its id stays its own
    return selected


#: Selections and column orders worked out last, by type tree (the files of a dataset
#: share theirs: see :mod:`aorc.format.tail`) and names: a read of many small files
#: resolves its names once.
_SELECTED: dict[tuple[int, tuple[str, ...]], tuple[OrcType, frozenset[int]]] = {}
_ORDERS: dict[tuple[int, tuple[str, ...]], tuple[OrcType, list[str] | None]] = {}
_KEPT = 256


def _selected(root: OrcType, names: Sequence[str]) -> set[int]:
    selected = {root.column_id}
    for name in names:
        node = _resolve(root, name)
        selected.update(t.column_id for t in node.walk())
        selected.update(_ancestors(root, node.column_id))
    for t in root.walk():  # an Arrow map needs its keys, and some values
        if t.kind == TypeKind.MAP and t.column_id in selected:
            selected.update(k.column_id for k in t.children[0].walk())
            if t.children[1].column_id not in selected:
                selected.update(v.column_id for v in t.children[1].walk())
    return selected


def requested_order(root: OrcType, columns: Sequence[str] | None) -> list[str] | None:
    """The top-level columns of a ``columns=`` selection in the order they were asked for
    (``None`` when that is the file's order, or everything is read)."""
    if columns is None or root.kind != TypeKind.STRUCT:
        return None
    key = (id(root), tuple(columns))
    if not all(isinstance(n, str) for n in key[1]):
        return _order(root, key[1])  # its error, uncached
    known = _ORDERS.get(key)
    if known is not None and known[0] is root:
        return None if known[1] is None else list(known[1])
    found = _order(root, key[1])
    if len(_ORDERS) >= _KEPT:
        _ORDERS.clear()
    _ORDERS[key] = (root, None if found is None else list(found))
    return found


def _order(root: OrcType, columns: Sequence[str]) -> list[str] | None:
    order: dict[str, None] = {}
    for name in columns:
        node = _resolve(root, name)
        top = next(c for c in root.children
                   if c.column_id <= node.column_id <= c.max_column_id)
        order[root.field_names[root.children.index(top)]] = None
    names = list(order)
    file_order = sorted(names, key=root.field_names.index)
    return None if names == file_order else names


def resolve_column(root: OrcType, name: str) -> OrcType:
    """The node a top-level name or dotted path names (see :func:`select_columns`).

    Raises:
        SchemaError: for a name that is not in the schema.
    """
    return _resolve(root, name)


def _resolve(root: OrcType, name: str) -> OrcType:
    if root.kind != TypeKind.STRUCT:
        if name == "_col0":
            return root
        raise SchemaError(f"unknown column {name!r}: the file's root type is {type_string(root)}")
    if name in root.field_names:
        return root.children[root.field_names.index(name)]
    node = root
    parts = name.split(".")
    for i, part in enumerate(parts):
        while node.kind == TypeKind.LIST and part not in ("item", "element"):
            node = node.children[0]  # a list is crossed implicitly
        if node.kind == TypeKind.STRUCT and part in node.field_names:
            node = node.children[node.field_names.index(part)]
            continue
        if node.kind == TypeKind.LIST:
            node = node.children[0]
            continue
        if node.kind == TypeKind.MAP and part in ("key", "value"):
            node = node.children[0 if part == "key" else 1]
            continue
        rest = ".".join(parts[i:])
        if node.kind == TypeKind.STRUCT and rest in node.field_names:
            return node.children[node.field_names.index(rest)]
        raise SchemaError(f"unknown column {name!r} in {type_string(root)}")
    return node


def _ancestors(root: OrcType, column_id: int) -> list[int]:
    out = []
    node = root
    while node.column_id != column_id:
        out.append(node.column_id)
        node = next(c for c in node.children if c.column_id <= column_id <= c.max_column_id)
    return out
