"""``filters=`` given as a :class:`pyarrow.compute.Expression`, as pyarrow.dataset takes them.

An expression is taken apart into a small tree (from pyarrow's own serialization of it, the
only public way to see inside one), and from that tree two things are derived:

- the *implied filter*: list-form filters (an OR of ANDs of ``(column, op, value)``) that
  every row satisfying the expression also satisfies. Comparisons of a column with a literal,
  ``isin``, ``is_null``/``is_valid`` and their negations map to ORC predicates; ``&`` keeps
  whatever maps on either side, ``|`` only when both sides map. Stripes and row groups are
  pruned with it exactly as with list filters;
- the columns the expression reads: they are decoded, and the expression itself is evaluated
  on the rows by pyarrow (so functions without an ORC predicate, arithmetic, string
  functions, ..., filter exactly, only without pruning).

Example::

    import pyarrow.compute as pc
    table = await aorc.read_table("t.orc", filters=(pc.field("x") > 5) & (pc.field("y") != ""))
"""

from __future__ import annotations

import ctypes
import struct
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds

from aorc.errors import SchemaError

__all__ = ["ExpressionParts", "expression_mask", "split_expression"]

#: The list-form op of each pyarrow comparison function, and its negation.
_COMPARISONS = {"equal": "==", "not_equal": "!=", "less": "<", "less_equal": "<=",
                "greater": ">", "greater_equal": ">="}
_NEGATED = {"==": "!=", "!=": "==", "<": ">=", "<=": ">", ">": "<=", ">=": "<"}
_FLIPPED = {"==": "==", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}
#: pyarrow's SetLookupOptions.null_matching_behavior: MATCH (a null matches a null member).
_NULL_MATCH = 0
#: Clauses kept at most when ``&`` of two ORs is distributed (beyond, one side is kept).
MAX_CLAUSES = 64

Clauses = list[list[tuple[Any, ...]]]


@dataclass(frozen=True)
class _Field:
    path: tuple[str, ...]

    @property
    def name(self) -> str:
        return ".".join(self.path)


@dataclass(frozen=True)
class _Literal:
    value: pa.Scalar


@dataclass(frozen=True)
class _Call:
    function: str
    args: tuple[Any, ...]
    options: pa.Scalar | None


@dataclass(frozen=True)
class ExpressionParts:
    """What a filter expression means for a scan.

    Attributes:
        expression: the expression itself (evaluated on decoded rows).
        implied: list-form filters implied by the expression (``None``: nothing maps).
        names: dotted names of every column the expression reads.
    """

    expression: pc.Expression
    implied: Clauses | None
    names: tuple[str, ...]


def split_expression(expression: pc.Expression) -> ExpressionParts:
    """Take ``expression`` apart: the filters it implies and the columns it reads.

    Raises:
        SchemaError: when the expression cannot be taken apart (e.g. a field given by
            position rather than name).
    """
    tree = _tree(expression)
    names: dict[str, None] = {}
    _collect_fields(tree, names)
    return ExpressionParts(expression, _implied(tree), tuple(names))


def expression_mask(expression: pc.Expression, batch: pa.RecordBatch) -> pa.BooleanArray:
    """Which rows of ``batch`` satisfy ``expression`` (null counts as false)."""
    scanner = ds.Scanner.from_batches([batch], schema=batch.schema,
                                      columns={"mask": expression}, use_threads=False)
    mask = scanner.to_table().column("mask").combine_chunks()
    if not pa.types.is_boolean(mask.type):
        raise SchemaError(f"the filter expression {expression} gives {mask.type} values, "
                          "not booleans")
    result: pa.BooleanArray = pc.fill_null(mask, False)
    return result


# --------------------------------------------------------------------------- the tree

def _tree(expression: pc.Expression) -> Any:
    try:
        _, (buffer,) = expression.__reduce__()
        batch = pa.ipc.open_file(buffer).read_all()
        entries = _metadata_entries(batch.schema)
        node, end = _node(entries, 0, batch)
    except (pa.ArrowException, ValueError, IndexError, struct.error) as exc:
        raise SchemaError(f"cannot use the filter expression {expression}: {exc}") from exc
    if end != len(entries):
        raise SchemaError(f"cannot use the filter expression {expression}")
    return node


def _metadata_entries(schema: pa.Schema) -> list[tuple[str, str]]:
    """The schema's metadata as ordered pairs, repeated keys kept (``Schema.metadata`` is a
    dict): read from the Arrow C data interface's metadata encoding."""
    capsule = schema.__arrow_c_schema__()
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype = ctypes.c_void_p
    get.argtypes = [ctypes.py_object, ctypes.c_char_p]
    address = get(capsule, b"arrow_schema")
    metadata = ctypes.c_void_p.from_address(address + 2 * ctypes.sizeof(ctypes.c_void_p)).value
    if not metadata:
        return []
    (count,) = struct.unpack("=i", ctypes.string_at(metadata, 4))
    pos = metadata + 4
    out = []
    for _ in range(count):
        pair = []
        for _ in range(2):
            (n,) = struct.unpack("=i", ctypes.string_at(pos, 4))
            pair.append(ctypes.string_at(pos + 4, n).decode("utf-8"))
            pos += 4 + n
        out.append((pair[0], pair[1]))
    del capsule  # releases the exported schema
    return out


def _node(entries: list[tuple[str, str]], i: int, batch: pa.Table) -> tuple[Any, int]:
    key, value = entries[i]
    if key == "literal":
        return _Literal(batch.column(int(value))[0]), i + 1
    if key == "field_ref":
        return _Field((value,)), i + 1
    if key == "nested_field_ref":
        n = int(value)
        return _Field(tuple(v for _, v in entries[i + 1:i + 1 + n])), i + 1 + n
    if key != "call":
        raise ValueError(f"unexpected {key!r}")
    args: list[Any] = []
    options = None
    i += 1
    while entries[i][0] != "end":
        if entries[i][0] == "options":
            options = batch.column(int(entries[i][1]))[0]
            i += 1
            continue
        arg, i = _node(entries, i, batch)
        args.append(arg)
    return _Call(value, tuple(args), options), i + 1


def _collect_fields(node: Any, names: dict[str, None]) -> None:
    if isinstance(node, _Field):
        names[node.name] = None
    elif isinstance(node, _Call):
        for arg in node.args:
            _collect_fields(arg, names)


# --------------------------------------------------------------------------- implied filters

def _implied(node: Any) -> Clauses | None:
    """List-form filters every row satisfying ``node`` satisfies (None: no such filter)."""
    if not isinstance(node, _Call):
        return None
    f, args = node.function, node.args
    if f in ("and", "and_kleene"):
        return _and(_implied(args[0]), _implied(args[1]))
    if f in ("or", "or_kleene"):
        left, right = _implied(args[0]), _implied(args[1])
        if left is None or right is None or len(left) + len(right) > MAX_CLAUSES:
            return None
        return left + right
    if f == "invert":
        return _negated(args[0])
    leaf = _leaf(node)
    return [[leaf]] if leaf is not None else None


def _and(left: Clauses | None, right: Clauses | None) -> Clauses | None:
    if left is None or right is None:
        return left if right is None else right
    if len(left) * len(right) > MAX_CLAUSES:
        return left if len(left) <= len(right) else right  # either alone is implied
    return [a + b for a in left for b in right]


def _leaf(node: _Call) -> tuple[Any, ...] | None:
    f, args = node.function, node.args
    if f in _COMPARISONS and len(args) == 2:
        op = _COMPARISONS[f]
        if isinstance(args[0], _Literal) and isinstance(args[1], _Field):
            args, op = (args[1], args[0]), _FLIPPED[op]
        if isinstance(args[0], _Field) and isinstance(args[1], _Literal) \
                and args[1].value.is_valid:
            return (args[0].name, op, args[1].value)
        return None
    if f == "is_in" and len(args) == 1 and isinstance(args[0], _Field) \
            and node.options is not None:
        options = node.options.as_py()
        values = node.options["value_set"].values
        if options.get("null_matching_behavior") != _NULL_MATCH:
            values = values.drop_null()
        return (args[0].name, "in", values)
    if f == "is_null" and isinstance(args[0], _Field) and not (
            node.options is not None and node.options.as_py().get("nan_is_null")):
        return (args[0].name, "is null")
    if f == "is_valid" and isinstance(args[0], _Field):
        return (args[0].name, "is not null")
    return None


def _negated(node: Any) -> Clauses | None:
    """``~node`` for a leaf: the negated comparison, or the other null test."""
    if not isinstance(node, _Call) or node.function == "is_in":
        return None  # ~isin: the set's null handling makes the negation subtle; rows only
    leaf = _leaf(node)
    if leaf is None:
        return None
    if leaf[1] == "is null":
        return [[(leaf[0], "is not null")]]
    if leaf[1] == "is not null":
        return [[(leaf[0], "is null")]]
    return [[(leaf[0], _NEGATED[leaf[1]], leaf[2])]]
