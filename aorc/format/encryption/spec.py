"""Which columns a writer encrypts with which key, and how their clear copies are masked, in
ORC Java's spellings (``orc.encrypt``, ``orc.mask``).

``encrypt="pii:ssn,email;hr:salary"`` encrypts ``ssn`` and ``email`` with the master key
``pii`` and ``salary`` with ``hr``; ``masks="sha256:email;redact,Xx:ssn"`` names a mask and
its parameters per column (a mask's parameters follow its name after commas). Mappings are
accepted too: ``{"pii": ["ssn", "email"]}`` and ``{"sha256": ["email"]}``. A column without
a mask gets ``nullify``. Columns are top-level or dotted nested names (a struct's field alone
is encrypted as ORC Java does: only that subtree, the rest of the struct in the clear; fields
inside lists, maps and unions are not); a column and all its descendants form one encryption
variant.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from aorc.errors import SchemaError
from aorc.format.encryption.redact import RedactMask
from aorc.format.projection import resolve_column
from aorc.format.types import OrcType, TypeKind

__all__ = [
    "MASK_NAMES",
    "EncryptionPlan",
    "PlannedVariant",
    "canonical_spec",
    "mask_parts",
    "plan_encryption",
    "unquote",
]

#: The masks aorc writes (ORC Java's names).
MASK_NAMES = ("nullify", "redact", "sha256")


def _split(text: str, sep: str, limit: int = -1) -> list[str]:
    """``text`` split at ``sep`` outside backquotes (ORC Java quotes names and mask
    parameters in backquotes, a doubled backquote standing for one)."""
    parts: list[str] = []
    current: list[str] = []
    quoted = False
    for ch in text:
        if ch == "`":
            quoted = not quoted
        if ch == sep and not quoted and limit != 0:
            parts.append("".join(current))
            current = []
            limit -= 1
            continue
        current.append(ch)
    parts.append("".join(current))
    return parts


def unquote(name: str) -> str:
    """A name or mask parameter without ORC Java's backquotes."""
    name = name.strip()
    if len(name) >= 2 and name[0] == name[-1] == "`":
        return name[1:-1].replace("``", "`")
    return name


def mask_parts(name: str) -> tuple[str, tuple[str, ...]]:
    """``"redact,`Xx`,`_ 1 1`"`` as ``("redact", ("Xx", "_ 1 1"))``.

    Raises:
        SchemaError: an empty parameter (ORC Java refuses them too).
    """
    mask, *params = _split(name, ",")
    if any(not unquote(p) for p in params):
        raise SchemaError(f"masks: {name!r} has an empty parameter")
    return mask.strip(), tuple(unquote(p) for p in params)


def _pairs(value: Any, option: str) -> list[tuple[str, list[str]]]:
    """``"a:x,y;b:z"`` or ``{"a": ["x", "y"]}`` as ``[("a", ["x", "y"]), ...]``."""
    if isinstance(value, Mapping):
        out = []
        for name, columns in value.items():
            if isinstance(columns, str):
                columns = [columns]
            if not isinstance(name, str) or not all(isinstance(c, str) for c in columns):
                raise SchemaError(f"{option}: a mapping of names to lists of column names")
            out.append((name, list(columns)))
        return out
    if not isinstance(value, str):
        raise SchemaError(f"{option} must be a string such as 'pii:ssn,email;hr:salary' or a "
                          f"mapping, not {type(value).__name__}")
    out = []
    for part in _split(value, ";"):
        if not part.strip():
            continue
        pieces = _split(part, ":", 1)
        name, sep, columns = pieces[0], len(pieces) > 1, pieces[-1]
        names = [c.strip() for c in columns.split(",") if c.strip()] if sep else []
        if not sep or not name.strip() or not names:
            raise SchemaError(f"{option}: {part.strip()!r} is not NAME:COLUMN[,COLUMN...]")
        out.append((name.strip(), names))
    return out


def canonical_spec(value: Any, option: str) -> str | None:
    """``value`` (a string or a mapping) in ORC Java's spelling; ``None`` stays ``None``.

    Raises:
        SchemaError: a malformed value.
    """
    if value is None:
        return None
    pairs = _pairs(value, option)
    if option == "masks":
        for name, _ in pairs:
            mask, _params = mask_parts(name)
            if mask not in MASK_NAMES:
                raise SchemaError(f"masks: aorc writes the masks {', '.join(MASK_NAMES)}, "
                                  f"not {mask!r}")
    return ";".join(f"{name}:{','.join(columns)}" for name, columns in pairs) or None


@dataclass(frozen=True)
class PlannedVariant:
    """One encrypted column subtree a writer produces.

    Attributes:
        key: the master key's name.
        column: the subtree's root type.
        field: the index of its top-level field.
        mask: the mask's name; ``parameters``: its parameters.
        path: the field indexes from the top-level field down to the subtree's root, through
            structs (``(field,)`` for a top-level column).
    """

    key: str
    column: OrcType
    field: int
    mask: str
    parameters: tuple[str, ...]
    path: tuple[int, ...] = ()


def _struct_path(root: OrcType, node: OrcType, name: str) -> tuple[int, ...]:
    """The field indexes from ``root`` down to ``node``, through structs only.

    Raises:
        SchemaError: ``node`` lies inside a list, map or union (ORC Java encrypts those
            subtrees whole: name the list, map or union instead).
    """
    path: list[int] = []
    at = root
    while at.column_id != node.column_id:
        if at.kind != TypeKind.STRUCT:
            raise SchemaError(f"encrypt: {name!r} lies inside a {at.kind.name.lower()}; "
                              "encrypt the whole list, map or union")
        for i, child in enumerate(at.children):
            if child.column_id <= node.column_id <= child.max_column_id:
                path.append(i)
                at = child
                break
        else:  # pragma: no cover - resolve_column found the node under root
            raise SchemaError(f"encrypt: no column {name!r}")
    return tuple(path)


@dataclass(frozen=True)
class EncryptionPlan:
    """The variants of a file, in ORC Java's order (key name, then root column id)."""

    variants: tuple[PlannedVariant, ...]

    @property
    def keys(self) -> list[str]:
        """The master key names, sorted."""
        return sorted({v.key for v in self.variants})

    @property
    def columns(self) -> set[int]:
        """Every encrypted column id."""
        return {c for v in self.variants
                for c in range(v.column.column_id, v.column.max_column_id + 1)}


def plan_encryption(root: OrcType, encrypt: str | None, masks: str | None
                    ) -> EncryptionPlan | None:
    """The variants that ``encrypt`` and ``masks`` (canonical specs) make of ``root``.

    Raises:
        SchemaError: an unknown column, a column encrypted twice or nested in another
            encrypted one, a column inside a list, map or union, or a mask on a column that
            is not encrypted.
    """
    if not encrypt:
        return None
    mask_of: dict[int, tuple[str, tuple[str, ...]]] = {}
    for name, columns in _pairs(masks or "", "masks"):
        mask, params = mask_parts(name)
        if mask == "redact":
            RedactMask(params)  # malformed parameters fail here, before any row
        for column in columns:
            mask_of[resolve_column(root, column).column_id] = (mask, params)
    variants = []
    for key, columns in _pairs(encrypt, "encrypt"):
        for column in columns:
            node = resolve_column(root, column)
            path = _struct_path(root, node, column)
            mask_name, mask_params = mask_of.pop(node.column_id, ("nullify", ()))
            variants.append(PlannedVariant(key, node, path[0], mask_name, mask_params, path))
    ids = [v.column.column_id for v in variants]
    if len(set(ids)) != len(ids):
        raise SchemaError("encrypt: a column is encrypted twice")
    spans = sorted((v.column.column_id, v.column.max_column_id) for v in variants)
    for (_, last), (first, _) in zip(spans, spans[1:], strict=False):
        if first <= last:
            raise SchemaError(f"encrypt: column {first} is inside another encrypted column")
    if mask_of:
        raise SchemaError(f"masks: column {min(mask_of)} is masked but not encrypted")
    variants.sort(key=lambda v: (v.key, v.column.column_id))
    return EncryptionPlan(tuple(variants))
