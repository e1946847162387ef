"""A small, independent model of ORC type strings for the test helpers.

It parses the Hive-style type strings ORC writes (``struct<a:int,b:array<string>>``,
``decimal(10,2)``, ``uniontype<int,string>``) and derives the same model from an Arrow type
following the mapping in docs/internals.md. The renderer walks this model next to the Arrow
data, which is how it knows what Arrow alone cannot say (legacy ``decimal(0,0)``, a
non-struct root, char/varchar).
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

__all__ = [
    "OrcSchema",
    "parse_schema",
    "project_schema",
    "schema_from_arrow",
    "schema_from_arrow_type",
]

# Canonical kind names (as ORC Java prints them) and the aliases accepted on input.
_ALIASES = {
    "boolean": "boolean",
    "tinyint": "tinyint",
    "byte": "tinyint",
    "smallint": "smallint",
    "short": "smallint",
    "int": "int",
    "integer": "int",
    "bigint": "bigint",
    "long": "bigint",
    "float": "float",
    "double": "double",
    "string": "string",
    "char": "char",
    "varchar": "varchar",
    "binary": "binary",
    "timestamp": "timestamp",
    "timestamp with local time zone": "timestamp with local time zone",
    "timestamp_instant": "timestamp with local time zone",
    "date": "date",
    "decimal": "decimal",
    "array": "array",
    "list": "array",
    "map": "map",
    "struct": "struct",
    "uniontype": "uniontype",
    "union": "uniontype",
}
PRIMITIVE_KINDS = frozenset(
    k for k in _ALIASES.values() if k not in ("array", "map", "struct", "uniontype")
)


@dataclass(frozen=True)
class OrcSchema:
    """One node of an ORC type tree.

    Attributes:
        kind: canonical kind name, e.g. ``"int"``, ``"decimal"``, ``"struct"``.
        children: child types (array: 1, map: 2, struct: one per field, uniontype: branches).
        names: struct field names, parallel to ``children``.
        precision: decimal precision (0 for the legacy unbounded Hive decimal).
        scale: decimal scale.
        max_length: char/varchar length.
    """

    kind: str
    children: tuple[OrcSchema, ...] = ()
    names: tuple[str, ...] = ()
    precision: int | None = None
    scale: int | None = None
    max_length: int | None = None

    @property
    def is_legacy_decimal(self) -> bool:
        """True for Hive 0.11's unbounded ``decimal(0,0)``."""
        return self.kind == "decimal" and not self.precision

    def __str__(self) -> str:
        if self.kind == "decimal":
            return f"decimal({self.precision},{self.scale})"
        if self.kind in ("char", "varchar"):
            return f"{self.kind}({self.max_length})"
        if self.kind == "struct":
            inner = ",".join(
                f"{_quote(n)}:{c}" for n, c in zip(self.names, self.children, strict=True)
            )
            return f"struct<{inner}>"
        if self.kind in ("array", "map", "uniontype"):
            return f"{self.kind}<{','.join(str(c) for c in self.children)}>"
        return self.kind


def _quote(name: str) -> str:
    if name and all(ch.isalnum() or ch == "_" for ch in name):
        return name
    return "`" + name.replace("`", "``") + "`"


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def fail(self, what: str) -> ValueError:
        return ValueError(f"bad ORC type string at {self.pos}: {what}: {self.text!r}")

    def peek(self) -> str:
        return self.text[self.pos : self.pos + 1]

    def expect(self, ch: str) -> None:
        if self.peek() != ch:
            raise self.fail(f"expected {ch!r}")
        self.pos += 1

    def word(self) -> str:
        start = self.pos
        while self.pos < len(self.text) and (self.text[self.pos].isalnum() or self.peek() == "_"):
            self.pos += 1
        return self.text[start : self.pos].lower()

    def number(self) -> int:
        start = self.pos
        while self.peek().isdigit():
            self.pos += 1
        if start == self.pos:
            raise self.fail("expected a number")
        return int(self.text[start : self.pos])

    def field_name(self) -> str:
        if self.peek() == "`":
            self.pos += 1
            out = []
            while True:
                end = self.text.find("`", self.pos)
                if end < 0:
                    raise self.fail("unterminated quoted name")
                out.append(self.text[self.pos : end])
                self.pos = end + 1
                if self.peek() != "`":
                    return "".join(out)
                out.append("`")
                self.pos += 1
        start = self.pos
        while self.pos < len(self.text) and self.text[self.pos] not in ":,<>":
            self.pos += 1
        return self.text[start : self.pos]

    def parse_type(self) -> OrcSchema:
        word = self.word()
        if word == "timestamp" and self.text.startswith(" with local time zone", self.pos):
            self.pos += len(" with local time zone")
            word = "timestamp with local time zone"
        kind = _ALIASES.get(word)
        if kind is None:
            raise self.fail(f"unknown type {word!r}")
        if kind == "decimal":
            return self._decimal()
        if kind in ("char", "varchar"):
            self.expect("(")
            length = self.number()
            self.expect(")")
            return OrcSchema(kind, max_length=length)
        if kind == "struct":
            return self._struct()
        if kind in ("array", "map", "uniontype"):
            self.expect("<")
            children = [self.parse_type()]
            while self.peek() == ",":
                self.pos += 1
                children.append(self.parse_type())
            self.expect(">")
            want = {"array": 1, "map": 2}.get(kind)
            if want is not None and len(children) != want:
                raise self.fail(f"{kind} takes {want} type(s)")
            return OrcSchema(kind, tuple(children))
        return OrcSchema(kind)

    def _decimal(self) -> OrcSchema:
        if self.peek() != "(":
            return OrcSchema("decimal", precision=0, scale=0)
        self.pos += 1
        precision = self.number()
        self.expect(",")
        scale = self.number()
        self.expect(")")
        return OrcSchema("decimal", precision=precision, scale=scale)

    def _struct(self) -> OrcSchema:
        self.expect("<")
        names: list[str] = []
        children: list[OrcSchema] = []
        while self.peek() != ">":
            if names:
                self.expect(",")
            names.append(self.field_name())
            self.expect(":")
            children.append(self.parse_type())
        self.expect(">")
        return OrcSchema("struct", tuple(children), tuple(names))


def parse_schema(text: str) -> OrcSchema:
    """Parse an ORC type string such as ``struct<a:int,b:map<string,double>>``.

    Args:
        text: the type string (Hive/ORC Java spelling; common aliases accepted).

    Returns:
        The parsed type tree.

    Raises:
        ValueError: the string is not a valid type.
    """
    parser = _Parser(text.strip())
    result = parser.parse_type()
    if parser.pos != len(parser.text):
        raise parser.fail("trailing characters")
    return result


_ARROW_PRIMITIVES = [
    (pa.types.is_boolean, "boolean"),
    (pa.types.is_int8, "tinyint"),
    (pa.types.is_int16, "smallint"),
    (pa.types.is_int32, "int"),
    (pa.types.is_int64, "bigint"),
    (pa.types.is_float32, "float"),
    (pa.types.is_float64, "double"),
    (lambda t: pa.types.is_string(t) or pa.types.is_large_string(t), "string"),
    (lambda t: pa.types.is_binary(t) or pa.types.is_large_binary(t), "binary"),
    (pa.types.is_date32, "date"),
]


def schema_from_arrow_type(t: pa.DataType, metadata: dict[bytes, bytes] | None = None) -> OrcSchema:
    """The ORC type an Arrow type maps to (docs/internals.md), honouring ``ORC:type`` metadata.

    Args:
        t: the Arrow type.
        metadata: the Arrow field's metadata, if any; ``b"ORC:type"`` overrides the mapping
            for char/varchar (and any other type it names).

    Returns:
        The ORC type tree.
    """
    if metadata and b"ORC:type" in metadata:
        declared = parse_schema(metadata[b"ORC:type"].decode())
        if declared.kind in PRIMITIVE_KINDS:
            return declared
    for test, kind in _ARROW_PRIMITIVES:
        if test(t):
            return OrcSchema(kind)
    if pa.types.is_timestamp(t):
        return OrcSchema("timestamp" if t.tz is None else "timestamp with local time zone")
    if pa.types.is_decimal(t):
        return OrcSchema("decimal", precision=t.precision, scale=t.scale)
    if pa.types.is_map(t):
        return OrcSchema(
            "map",
            (
                schema_from_arrow_type(t.key_type, t.key_field.metadata),
                schema_from_arrow_type(t.item_type, t.item_field.metadata),
            ),
        )
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return OrcSchema("array", (schema_from_arrow_type(t.value_type, t.value_field.metadata),))
    if pa.types.is_struct(t):
        fields = [t.field(i) for i in range(t.num_fields)]
        return OrcSchema(
            "struct",
            tuple(schema_from_arrow_type(f.type, f.metadata) for f in fields),
            tuple(f.name for f in fields),
        )
    if pa.types.is_union(t):
        return OrcSchema(
            "uniontype",
            tuple(schema_from_arrow_type(t.field(i).type) for i in range(t.num_fields)),
        )
    raise TypeError(f"no ORC type for Arrow type {t}")


def schema_from_arrow(schema: pa.Schema) -> OrcSchema:
    """The ORC struct type an Arrow schema maps to."""
    return OrcSchema(
        "struct",
        tuple(schema_from_arrow_type(f.type, f.metadata) for f in schema),
        tuple(schema.names),
    )


def project_schema(root: OrcSchema, columns: list[str]) -> OrcSchema:
    """The struct type a projection keeps, in file order.

    Args:
        root: the file's struct type.
        columns: top-level names or dotted paths into nested structs (``"a.b.c"``); a path
            keeps its ancestors with only the selected children, a name keeps the whole
            subtree.

    Returns:
        The pruned struct type.

    Raises:
        KeyError: a name or path does not exist.
    """
    paths = [c.split(".") for c in columns]
    return _prune(root, paths, "")


def _prune(node: OrcSchema, paths: list[list[str]], where: str) -> OrcSchema:
    if any(not p for p in paths):
        return node
    if node.kind != "struct":
        raise KeyError(f"{where or '<root>'} is not a struct")
    for path in paths:
        if path[0] not in node.names:
            raise KeyError(f"no field {path[0]!r} in {where or '<root>'}")
    names, children = [], []
    for name, child in zip(node.names, node.children, strict=True):
        sub = [p[1:] for p in paths if p[0] == name]
        if sub:
            names.append(name)
            children.append(_prune(child, sub, f"{where}.{name}".lstrip(".")))
    return OrcSchema("struct", tuple(children), tuple(names))
