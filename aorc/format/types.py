"""The ORC type tree, and its mapping to type strings, protobuf and Arrow.

An ORC schema is a tree of types numbered in pre-order: the root is column 0, and every
subtree occupies a contiguous range of column ids. :class:`OrcType` is that tree.

Trees are at most :data:`~aorc.format.nesting.MAX_TYPE_DEPTH` (64) levels deep below the
root: deeper trees in a file are refused when its footer is parsed, and deeper schemas when
a writer is opened, before any recursive walk could exhaust the stack.
"""

from __future__ import annotations

import contextlib
import dataclasses
import enum
import functools
import gc
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

import pyarrow as pa

from aorc.errors import CorruptFileError, SchemaError, UnwritableTypeError
from aorc.format import geo
from aorc.format._proto import orc_proto_pb2 as pb
from aorc.format.messages import parsed_types, scratch_serialized
from aorc.format.nesting import MAX_TYPE_DEPTH, check_depth, check_proto_depth
from aorc.format.unwritable import unwritable, unwritable_inside

__all__ = [
    "ORC_ATTRIBUTES_METADATA_KEY",
    "ORC_TYPE_METADATA_KEY",
    "SPARK_NTZ",
    "WIDENED_ARROW_TYPES",
    "OrcType",
    "TypeKind",
    "from_arrow_schema",
    "from_arrow_type",
    "gc_paused",
    "is_spark_ntz",
    "parse_type_string",
    "to_arrow_schema",
    "to_arrow_type",
    "to_proto",
    "type_string",
    "types_from_proto",
    "widen_arrow_type",
]

#: Arrow field metadata key holding the ORC type string where Arrow's type loses information
#: (char, varchar, legacy decimal).
ORC_TYPE_METADATA_KEY = b"ORC:type"

#: Arrow field metadata key holding ORC type attributes to write for the field, as a JSON
#: object of strings (e.g. ``{"spark.sql.catalyst.type": "timestamp_ntz"}``). Every field
#: takes it: columns, struct fields, list elements, map keys and map values (the Iceberg
#: spec's ORC appendix puts ``iceberg.id`` on every type node).
ORC_ATTRIBUTES_METADATA_KEY = b"ORC:attributes"

#: The ORC type attribute Spark (3.4 and later) marks its ``TIMESTAMP_NTZ`` columns with:
#: they are ``bigint`` microseconds of a wall clock, read as ``timestamp[us]`` (no zone).
SPARK_NTZ = ("spark.sql.catalyst.type", "timestamp_ntz")


def is_spark_ntz(t: OrcType) -> bool:
    """Whether ``t`` is a Spark ``TIMESTAMP_NTZ`` column (a bigint marked :data:`SPARK_NTZ`)."""
    return t.kind == TypeKind.LONG and SPARK_NTZ in t.attributes


#: Precision and scale given to legacy unbounded decimals (Hive 0.11 ``decimal(0,0)``).
LEGACY_DECIMAL_PRECISION = 38
LEGACY_DECIMAL_SCALE = 10
#: Largest decimal precision ORC (and Arrow's decimal128) can hold.
MAX_DECIMAL_PRECISION = 38


class TypeKind(enum.IntEnum):
    """ORC type kinds, numbered as in the ORC protobuf schema."""

    BOOLEAN = 0
    BYTE = 1
    SHORT = 2
    INT = 3
    LONG = 4
    FLOAT = 5
    DOUBLE = 6
    STRING = 7
    BINARY = 8
    TIMESTAMP = 9
    LIST = 10
    MAP = 11
    STRUCT = 12
    UNION = 13
    DECIMAL = 14
    DATE = 15
    VARCHAR = 16
    CHAR = 17
    TIMESTAMP_INSTANT = 18
    GEOMETRY = 19
    GEOGRAPHY = 20

    @property
    def is_compound(self) -> bool:
        """True for list, map, struct and union."""
        return self in _COMPOUND


_COMPOUND = frozenset({TypeKind.LIST, TypeKind.MAP, TypeKind.STRUCT, TypeKind.UNION})

_NAMES: dict[TypeKind, str] = {
    TypeKind.BOOLEAN: "boolean",
    TypeKind.BYTE: "tinyint",
    TypeKind.SHORT: "smallint",
    TypeKind.INT: "int",
    TypeKind.LONG: "bigint",
    TypeKind.FLOAT: "float",
    TypeKind.DOUBLE: "double",
    TypeKind.STRING: "string",
    TypeKind.BINARY: "binary",
    TypeKind.TIMESTAMP: "timestamp",
    TypeKind.LIST: "array",
    TypeKind.MAP: "map",
    TypeKind.STRUCT: "struct",
    TypeKind.UNION: "uniontype",
    TypeKind.DECIMAL: "decimal",
    TypeKind.DATE: "date",
    TypeKind.VARCHAR: "varchar",
    TypeKind.CHAR: "char",
    TypeKind.TIMESTAMP_INSTANT: "timestamp with local time zone",
    TypeKind.GEOMETRY: "geometry",
    TypeKind.GEOGRAPHY: "geography",
}
_GEO = frozenset({TypeKind.GEOMETRY, TypeKind.GEOGRAPHY})
_BY_NAME = {name: kind for kind, name in _NAMES.items()}
_BY_NAME.update(
    {
        "list": TypeKind.LIST,
        "union": TypeKind.UNION,
        "byte": TypeKind.BYTE,
        "short": TypeKind.SHORT,
        "long": TypeKind.LONG,
        "integer": TypeKind.INT,
    }
)


@dataclass(frozen=True, slots=True)
class OrcType:
    """One node of an ORC schema.

    Attributes:
        kind: the ORC type kind.
        column_id: this node's pre-order column id (the root is 0).
        children: child types (list: 1, map: 2, struct: one per field, union: one per branch).
        field_names: struct field names, parallel to ``children``.
        max_length: maximum length for char/varchar.
        precision: decimal precision (0 for legacy unbounded decimals).
        scale: decimal scale.
        attributes: type attributes (key, value) pairs, e.g. Iceberg ids.
        max_column_id: the largest column id in this subtree.
        crs: geometry/geography: the coordinate reference system (``OGC:CRS84`` if unset).
        algorithm: geography: the edge-interpolation algorithm's number (0 spherical,
            1 vincenty, 2 thomas, 3 andoyer, 4 karney; see :mod:`aorc.format.geo`).
    """

    kind: TypeKind
    column_id: int = 0
    children: tuple[OrcType, ...] = ()
    field_names: tuple[str, ...] = ()
    max_length: int | None = None
    precision: int | None = None
    scale: int | None = None
    attributes: tuple[tuple[str, str], ...] = ()
    max_column_id: int = field(default=0)
    crs: str | None = None
    algorithm: int | None = None

    def walk(self) -> Iterator[OrcType]:
        """Yield this node and all its descendants in pre-order (column id order)."""
        yield self
        for child in self.children:
            yield from child.walk()

    def find(self, column_id: int) -> OrcType:
        """Return the node with the given column id."""
        node = self
        while node.column_id != column_id:
            for child in node.children:
                if child.column_id <= column_id <= child.max_column_id:
                    node = child
                    break
            else:
                raise SchemaError(f"no column {column_id} in {type_string(self)}")
        return node

    @property
    def is_legacy_decimal(self) -> bool:
        """True for Hive 0.11 unbounded decimals (``decimal(0,0)`` or no precision)."""
        return self.kind == TypeKind.DECIMAL and not self.precision

    def __str__(self) -> str:
        return type_string(self)


def _renumber(t: OrcType, start: int) -> OrcType:
    """Return ``t`` with pre-order column ids starting at ``start``."""
    next_id = start + 1
    children = []
    for child in t.children:
        c = _renumber(child, next_id)
        children.append(c)
        next_id = c.max_column_id + 1
    return OrcType(
        t.kind,
        start,
        tuple(children),
        t.field_names,
        t.max_length,
        t.precision,
        t.scale,
        t.attributes,
        next_id - 1,
        t.crs,
        t.algorithm,
    )


def make_type(
    kind: TypeKind,
    children: Iterable[OrcType] = (),
    field_names: Iterable[str] = (),
    *,
    max_length: int | None = None,
    precision: int | None = None,
    scale: int | None = None,
    attributes: Iterable[tuple[str, str]] = (),
    crs: str | None = None,
    algorithm: int | None = None,
) -> OrcType:
    """Build a type tree node; column ids are assigned from 0 for the new root."""
    t = OrcType(
        TypeKind(kind),
        0,
        tuple(children),
        tuple(field_names),
        max_length,
        precision,
        scale,
        tuple(attributes),
        crs=crs,
        algorithm=algorithm,
    )
    return _renumber(t, 0)


# --------------------------------------------------------------------------- protobuf


def types_from_proto(types: Iterable[pb.Type]) -> OrcType:
    """Build the type tree from a footer's flat list of types.

    Raises:
        CorruptFileError: when the list is empty, references a column out of order or out of
            range, or has inconsistent children.
    """
    flat = list(types)
    if not flat:
        raise CorruptFileError("footer has no types")
    check_proto_depth(flat)
    with gc_paused():  # a tree holds no cycles; collecting during a wide one costs 60%
        return _build_tree(flat)


def _build_tree(flat: list[pb.Type]) -> OrcType:
    def build(cid: int) -> OrcType:
        if cid >= len(flat):
            raise CorruptFileError(f"type {cid} referenced but footer has {len(flat)} types")
        p = flat[cid]
        kind = _kind_of(p, cid)
        names = p.fieldNames
        if names and bytes in set(map(type, names)):
            raise CorruptFileError(f"column {cid}: name or attribute is not valid UTF-8")
        expected = cid + 1
        children = []
        for sub in p.subtypes:
            if sub != expected:
                raise CorruptFileError(
                    f"column {cid}: subtype {sub} is not in pre-order (expected {expected})"
                )
            leaf = flat[sub] if sub < len(flat) else None
            # most columns: a type of two bytes (the kind's tag and value) holds nothing else
            if leaf is not None and leaf.ByteSize() == 2 and leaf.kind in _PLAIN_LEAVES:
                child = _plain_leaf(_KINDS[leaf.kind], sub)
            else:
                child = build(sub)
            children.append(child)
            expected = child.max_column_id + 1
        _check_arity(cid, kind, len(children), len(names))
        if kind == TypeKind.DECIMAL:
            _check_decimal(cid, p)
        crs, algorithm = geo.geospatial_from_proto(p, cid) if kind in _GEO else (None, None)
        return OrcType(
            kind,
            cid,
            tuple(children),
            tuple(names),
            p.maximumLength if p.HasField("maximumLength") else None,
            p.precision if p.HasField("precision") else None,
            p.scale if p.HasField("scale") else None,
            tuple((_text(a.key, cid), _text(a.value, cid)) for a in p.attributes),
            expected - 1,
            crs,
            algorithm,
        )

    return build(0)


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """No cyclic garbage collection inside the block (made for building many acyclic
    objects at once: a footer of a million columns; Python's collector otherwise walks the
    growing heap again and again)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


#: Type kinds by their protobuf number.
_KINDS: dict[int, TypeKind] = {k.value: k for k in TypeKind}
#: Kinds whose node is complete without any field but the kind: no children, no length,
#: precision or scale (BOOLEAN, 0, is left out: an unset kind reads as 0 too).
_PLAIN_LEAVES = frozenset(k.value for k in TypeKind if not k.is_compound and k not in (
    TypeKind.BOOLEAN, TypeKind.DECIMAL, TypeKind.CHAR, TypeKind.VARCHAR, *_GEO))


def _kind_of(p: pb.Type, cid: int) -> TypeKind:
    kind = _KINDS.get(p.kind)
    if kind is None:
        raise CorruptFileError(f"column {cid} has unknown type kind {p.kind}")
    if not p.kind and not p.HasField("kind"):
        raise CorruptFileError(f"column {cid} has no type kind")
    return kind


def _plain_leaf(kind: TypeKind, cid: int) -> OrcType:
    """``OrcType(kind, cid, max_column_id=cid)``."""
    return OrcType(kind, cid, (), (), None, None, None, (), cid)


def _text(value: str | bytes, cid: int) -> str:
    """protobuf hands back invalid UTF-8 strings as bytes; ORC names must be text."""
    if isinstance(value, bytes):
        raise CorruptFileError(f"column {cid}: name or attribute is not valid UTF-8")
    return value


def _check_arity(cid: int, kind: TypeKind, n_children: int, n_names: int) -> None:
    wanted = {TypeKind.LIST: 1, TypeKind.MAP: 2}.get(kind)
    if wanted is not None and n_children != wanted:
        raise CorruptFileError(
            f"column {cid}: {kind.name} needs {wanted} children, has {n_children}"
        )
    if kind == TypeKind.STRUCT and n_names != n_children:
        raise CorruptFileError(
            f"column {cid}: struct has {n_children} children but {n_names} field names"
        )
    if kind == TypeKind.UNION and not 0 < n_children <= 256:
        raise CorruptFileError(f"column {cid}: union has {n_children} branches")
    if not kind.is_compound and n_children:
        raise CorruptFileError(f"column {cid}: {kind.name} cannot have children")


def _check_decimal(cid: int, p: pb.Type) -> None:
    """Precision 1..38 and scale <= precision, as ORC Java requires (precision 0 or absent is
    a legacy unbounded decimal, whose scale is per value)."""
    precision = p.precision if p.HasField("precision") else 0
    scale = p.scale if p.HasField("scale") else 0
    if precision > MAX_DECIMAL_PRECISION or 0 < precision < scale:
        raise CorruptFileError(f"column {cid}: invalid decimal precision {precision} and "
                               f"scale {scale}")


def to_proto(root: OrcType) -> list[pb.Type]:
    """Flatten the tree into a footer's list of types (pre-order)."""
    return parsed_types([scratch_serialized(functools.partial(_fill_type, t), pb.Type)
                         for t in root.walk()])


def _fill_type(t: OrcType, p: pb.Type) -> None:
    p.kind = pb.Type.Kind.Value(t.kind.name)
    p.subtypes.extend(c.column_id for c in t.children)
    p.fieldNames.extend(t.field_names)
    if t.max_length is not None:
        p.maximumLength = t.max_length
    if t.precision is not None:
        p.precision = t.precision
    if t.scale is not None:
        p.scale = t.scale
    for k, v in t.attributes:
        p.attributes.add(key=k, value=v)
    if t.kind in _GEO:  # as ORC Java: the CRS always, the algorithm for geography
        p.crs = t.crs or geo.DEFAULT_CRS
        if t.kind == TypeKind.GEOGRAPHY:
            p.algorithm = t.algorithm or 0  # type: ignore[assignment]


# --------------------------------------------------------------------------- type strings

_SAFE_NAME = re.compile(r"^[A-Za-z0-9_]+$")


def _quote(name: str) -> str:
    return name if _SAFE_NAME.match(name) else "`" + name.replace("`", "``") + "`"


def type_string(t: OrcType) -> str:
    """Render the ORC type string, e.g. ``struct<a:int,b:map<string,decimal(10,2)>>``."""
    k = t.kind
    if k == TypeKind.STRUCT:
        inner = ",".join(
            f"{_quote(n)}:{type_string(c)}" for n, c in zip(t.field_names, t.children, strict=True)
        )
        return f"struct<{inner}>"
    if k in (TypeKind.LIST, TypeKind.MAP, TypeKind.UNION):
        return f"{_NAMES[k]}<{','.join(type_string(c) for c in t.children)}>"
    if k == TypeKind.DECIMAL:
        return f"decimal({t.precision or 0},{t.scale or 0})"
    if k in (TypeKind.CHAR, TypeKind.VARCHAR):
        return f"{_NAMES[k]}({t.max_length if t.max_length is not None else 1})"
    if k == TypeKind.GEOMETRY:  # ORC Java's spelling
        return f"geometry({t.crs or geo.DEFAULT_CRS})"
    if k == TypeKind.GEOGRAPHY:
        algorithm = geo.ALGORITHMS[t.algorithm or 0].upper()
        return f"geography({t.crs or geo.DEFAULT_CRS},{algorithm})"
    return _NAMES[k]


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.depth = 0

    def error(self, msg: str) -> SchemaError:
        return SchemaError(f"bad ORC type string {self.text!r} at {self.pos}: {msg}")

    def skip_ws(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def peek(self) -> str:
        self.skip_ws()
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def expect(self, ch: str) -> None:
        if self.peek() != ch:
            raise self.error(f"expected {ch!r}")
        self.pos += 1

    def word(self) -> str:
        self.skip_ws()
        m = re.compile(r"[A-Za-z0-9_.]+").match(self.text, self.pos)
        if not m:
            raise self.error("expected a name")
        self.pos = m.end()
        return m.group(0)

    def field_name(self) -> str:
        if self.peek() == "`":
            self.pos += 1
            out = []
            while True:
                end = self.text.find("`", self.pos)
                if end < 0:
                    raise self.error("unterminated quoted name")
                out.append(self.text[self.pos : end])
                self.pos = end + 1
                if self.text.startswith("`", self.pos):
                    out.append("`")
                    self.pos += 1
                else:
                    return "".join(out)
        return self.word()

    def integer(self) -> int:
        w = self.word()
        if not w.isdigit():
            raise self.error(f"expected a number, got {w!r}")
        return int(w)

    def geospatial(self, kind: TypeKind) -> OrcType:
        """``geometry[(CRS)]`` or ``geography[(CRS[,ALGORITHM])]`` (the CRS up to the
        matching parenthesis, without a trailing algorithm)."""
        crs, algorithm = geo.DEFAULT_CRS, 0
        if self.peek() == "(":
            depth, start = 0, self.pos
            for end in range(self.pos, len(self.text)):
                depth += {"(": 1, ")": -1}.get(self.text[end], 0)
                if not depth:
                    break
            else:
                raise self.error("unterminated geospatial type arguments")
            inner, self.pos = self.text[start + 1:end].strip(), end + 1
            head, _, tail = inner.rpartition(",")
            if kind == TypeKind.GEOGRAPHY and head and tail.strip().lower() in geo.ALGORITHMS:
                inner, algorithm = head.strip(), geo.algorithm_number(tail.strip())
            crs = inner or crs
        return OrcType(kind, crs=crs,
                       algorithm=algorithm if kind == TypeKind.GEOGRAPHY else None)

    def parse(self) -> OrcType:
        name = self.word().lower()
        if name == "timestamp" and self.text[self.pos :].lower().lstrip().startswith("with"):
            for part in ("with", "local", "time", "zone"):
                if self.word().lower() != part:
                    raise self.error("expected 'timestamp with local time zone'")
            return OrcType(TypeKind.TIMESTAMP_INSTANT)
        kind = _BY_NAME.get(name)
        if kind is None:
            raise self.error(f"unknown type {name!r}")
        if kind == TypeKind.DECIMAL:
            if self.peek() != "(":
                return OrcType(kind, precision=38, scale=10)
            self.expect("(")
            p = self.integer()
            self.expect(",")
            s = self.integer()
            self.expect(")")
            if p > 38 or s > p and p != 0:
                raise self.error(f"invalid decimal({p},{s})")
            return OrcType(kind, precision=p, scale=s)
        if kind in (TypeKind.CHAR, TypeKind.VARCHAR):
            length = 255 if kind == TypeKind.CHAR else 65535
            if self.peek() == "(":
                self.expect("(")
                length = self.integer()
                self.expect(")")
            return OrcType(kind, max_length=length)
        if kind in _GEO:
            return self.geospatial(kind)
        if not kind.is_compound:
            return OrcType(kind)
        self.expect("<")
        self.depth += 1
        if self.depth > MAX_TYPE_DEPTH:
            raise self.error(f"nested more than {MAX_TYPE_DEPTH} levels deep (MAX_TYPE_DEPTH)")
        children: list[OrcType] = []
        names: list[str] = []
        if self.peek() != ">":
            while True:
                if kind == TypeKind.STRUCT:
                    names.append(self.field_name())
                    self.expect(":")
                children.append(self.parse())
                if self.peek() != ",":
                    break
                self.pos += 1
        self.expect(">")
        self.depth -= 1
        try:
            _check_arity(0, kind, len(children), len(names))
        except CorruptFileError as exc:
            raise self.error(str(exc)) from None
        return OrcType(kind, children=tuple(children), field_names=tuple(names))


def parse_type_string(text: str) -> OrcType:
    """Parse an ORC type string such as ``struct<a:int,b:array<string>>``.

    Raises:
        SchemaError: when the string is not a valid ORC type.
    """
    parser = _Parser(text)
    t = parser.parse()
    parser.skip_ws()
    if parser.pos != len(text):
        raise parser.error("trailing characters")
    return _renumber(t, 0)


# --------------------------------------------------------------------------- Arrow


def to_arrow_type(t: OrcType) -> pa.DataType:
    """The Arrow type aorc reads this ORC type as (see docs/internals.md)."""
    k = t.kind
    if is_spark_ntz(t):
        return pa.timestamp("us")
    simple = _ARROW_SIMPLE.get(k)
    if simple is not None:
        return simple
    if k == TypeKind.DECIMAL:
        if t.is_legacy_decimal:
            return pa.decimal128(LEGACY_DECIMAL_PRECISION, LEGACY_DECIMAL_SCALE)
        return pa.decimal128(t.precision or 38, t.scale or 0)
    if k == TypeKind.LIST:
        return pa.list_(to_arrow_field("item", t.children[0]))
    if k == TypeKind.MAP:
        key = to_arrow_field("key", t.children[0]).with_nullable(False)
        return pa.map_(key, to_arrow_field("value", t.children[1]))
    if k == TypeKind.STRUCT:
        return pa.struct(
            [to_arrow_field(n, c) for n, c in zip(t.field_names, t.children, strict=True)]
        )
    if k == TypeKind.UNION:
        fields = [to_arrow_field(f"_union_{i}", c) for i, c in enumerate(t.children)]
        return pa.dense_union(fields, list(range(len(fields))))
    if k in _GEO:
        return pa.binary()
    raise SchemaError(f"no Arrow type for ORC {k.name}")  # pragma: no cover


_ARROW_SIMPLE: dict[TypeKind, pa.DataType] = {
    TypeKind.BOOLEAN: pa.bool_(),
    TypeKind.BYTE: pa.int8(),
    TypeKind.SHORT: pa.int16(),
    TypeKind.INT: pa.int32(),
    TypeKind.LONG: pa.int64(),
    TypeKind.FLOAT: pa.float32(),
    TypeKind.DOUBLE: pa.float64(),
    TypeKind.STRING: pa.string(),
    TypeKind.VARCHAR: pa.string(),
    TypeKind.CHAR: pa.string(),
    TypeKind.BINARY: pa.binary(),
    TypeKind.TIMESTAMP: pa.timestamp("ns"),
    TypeKind.TIMESTAMP_INSTANT: pa.timestamp("ns", tz="UTC"),
    TypeKind.DATE: pa.date32(),
}


def to_arrow_field(name: str, t: OrcType) -> pa.Field:
    """An Arrow field for ``t``; char/varchar/legacy decimal keep the ORC type in metadata."""
    meta = None
    if t.kind in (TypeKind.CHAR, TypeKind.VARCHAR) or t.is_legacy_decimal:
        meta = {ORC_TYPE_METADATA_KEY: type_string(t).encode()}
    elif t.kind in _GEO:
        meta = geo.geoarrow_metadata(t.kind == TypeKind.GEOGRAPHY, t.crs or geo.DEFAULT_CRS,
                                     t.algorithm)
    elif is_spark_ntz(t):  # written back as Spark wrote it
        meta = {ORC_ATTRIBUTES_METADATA_KEY: json.dumps(dict([SPARK_NTZ])).encode()}
    return pa.field(name, to_arrow_type(t), nullable=True, metadata=meta)


def to_arrow_schema(root: OrcType) -> pa.Schema:
    """The Arrow schema of a file: struct fields become columns; any other root is one
    column named ``_col0``."""
    if root.kind == TypeKind.STRUCT:
        return pa.schema(
            [to_arrow_field(n, c) for n, c in zip(root.field_names, root.children, strict=True)]
        )
    return pa.schema([to_arrow_field("_col0", root)])


#: Arrow types ORC has no equivalent of, written as the next wider signed ORC type (uint64
#: as bigint, which must hold every value); they read back as that type.
WIDENED_ARROW_TYPES: dict[pa.DataType, pa.DataType] = {
    pa.uint8(): pa.int16(), pa.uint16(): pa.int32(), pa.uint32(): pa.int64(),
    pa.uint64(): pa.int64(), pa.float16(): pa.float32()}


def widen_arrow_type(dt: pa.DataType) -> pa.DataType:
    """``dt`` with unsigned integers and half floats (also nested ones) replaced by the
    types of :data:`WIDENED_ARROW_TYPES`; other types unchanged."""
    if isinstance(dt, pa.BaseExtensionType):  # e.g. geoarrow.wkb (often unhashable)
        return dt
    if dt in WIDENED_ARROW_TYPES:
        return WIDENED_ARROW_TYPES[dt]
    if pa.types.is_map(dt):
        return pa.map_(_widen_field(dt.key_field), _widen_field(dt.item_field),
                       keys_sorted=dt.keys_sorted)
    if pa.types.is_list(dt):
        return pa.list_(_widen_field(dt.value_field))
    if pa.types.is_large_list(dt):
        return pa.large_list(_widen_field(dt.value_field))
    if pa.types.is_fixed_size_list(dt):
        return pa.list_(_widen_field(dt.value_field), dt.list_size)
    if pa.types.is_struct(dt):
        return pa.struct([_widen_field(dt.field(i)) for i in range(dt.num_fields)])
    if pa.types.is_dictionary(dt):
        return pa.dictionary(dt.index_type, widen_arrow_type(dt.value_type))
    return dt


def _widen_field(f: pa.Field) -> pa.Field:
    return f.with_type(widen_arrow_type(f.type))


def from_arrow_type(dt: pa.DataType, metadata: dict[bytes, bytes] | None = None) -> OrcType:
    """The ORC type aorc writes for an Arrow type (ids not yet assigned); unsigned integers
    and half floats are widened (:data:`WIDENED_ARROW_TYPES`)."""
    spatial = geo.geospatial_of_field(dt, metadata)
    if spatial is not None:
        return OrcType(TypeKind.GEOGRAPHY if spatial[0] else TypeKind.GEOMETRY,
                       crs=spatial[1], algorithm=spatial[2])
    if metadata and ORC_TYPE_METADATA_KEY in metadata:
        declared = parse_type_string(metadata[ORC_TYPE_METADATA_KEY].decode())
        if not declared.kind.is_compound:
            return declared
    if pa.types.is_dictionary(dt):
        return from_arrow_type(dt.value_type, metadata)
    if dt in WIDENED_ARROW_TYPES:
        return from_arrow_type(WIDENED_ARROW_TYPES[dt])
    for kind, arrow in _ARROW_SIMPLE.items():
        if kind in (
            TypeKind.VARCHAR,
            TypeKind.CHAR,
            TypeKind.TIMESTAMP,
            TypeKind.TIMESTAMP_INSTANT,
        ):
            continue
        if dt == arrow:
            return OrcType(kind)
    if pa.types.is_large_string(dt) or pa.types.is_string_view(dt):
        return OrcType(TypeKind.STRING)
    if (
        pa.types.is_large_binary(dt)
        or pa.types.is_binary_view(dt)
        or pa.types.is_fixed_size_binary(dt)
    ):
        return OrcType(TypeKind.BINARY)
    if pa.types.is_timestamp(dt):
        return OrcType(TypeKind.TIMESTAMP_INSTANT if dt.tz is not None else TypeKind.TIMESTAMP)
    if pa.types.is_date(dt):
        return OrcType(TypeKind.DATE)
    if pa.types.is_decimal(dt):
        if dt.precision > 38:
            raise unwritable(dt, reason="ORC decimals hold at most 38 digits")
        return OrcType(TypeKind.DECIMAL, precision=dt.precision, scale=dt.scale)
    if pa.types.is_map(dt):
        return OrcType(
            TypeKind.MAP, children=(_from_field(dt.key_field), _from_field(dt.item_field))
        )
    if pa.types.is_list(dt) or pa.types.is_large_list(dt) or pa.types.is_fixed_size_list(dt):
        return OrcType(TypeKind.LIST, children=(_from_field(dt.value_field),))
    if pa.types.is_struct(dt):
        fields = [dt.field(i) for i in range(dt.num_fields)]
        return OrcType(
            TypeKind.STRUCT,
            children=tuple(_from_field(f) for f in fields),
            field_names=tuple(f.name for f in fields),
        )
    if pa.types.is_union(dt):
        return OrcType(
            TypeKind.UNION, children=tuple(_from_field(dt.field(i)) for i in range(dt.num_fields))
        )
    raise unwritable(dt)


def _from_field(f: pa.Field) -> OrcType:
    try:
        t = from_arrow_type(f.type, f.metadata)
    except UnwritableTypeError as exc:
        raise unwritable_inside(exc, f.name) from None
    if f.metadata and ORC_ATTRIBUTES_METADATA_KEY in f.metadata:
        try:
            pairs = json.loads(f.metadata[ORC_ATTRIBUTES_METADATA_KEY])
            added = tuple((str(k), str(v)) for k, v in pairs.items())
        except (ValueError, AttributeError) as exc:
            raise SchemaError(f"field {f.name!r}: {ORC_ATTRIBUTES_METADATA_KEY.decode()} "
                              f"metadata must be a JSON object of strings") from exc
        if SPARK_NTZ in added and pa.types.is_timestamp(f.type) and f.type.tz is None:
            t = OrcType(TypeKind.LONG)  # microseconds, as Spark stores TIMESTAMP_NTZ
        t = dataclasses.replace(t, attributes=(*t.attributes, *added))
    return t


def from_arrow_schema(schema: pa.Schema) -> OrcType:
    """The ORC struct type for an Arrow schema, with column ids assigned.

    Raises:
        SchemaError: a type cannot be written as ORC or is nested deeper than
            :data:`~aorc.format.nesting.MAX_TYPE_DEPTH`.
    """
    check_depth(schema)
    root = OrcType(
        TypeKind.STRUCT,
        children=tuple(_from_field(f) for f in schema),
        field_names=tuple(schema.names),
    )
    return _renumber(root, 0)
