"""How deep a type tree may be nested: one limit for every reader and writer path.

Schema conversion, projection, statistics, evolution and the decoders and encoders of
compound columns walk type trees recursively, and Arrow's C++ builds nested arrays
recursively too. A tree at most :data:`MAX_TYPE_DEPTH` (64) levels deep below its root (a
column is at level 1; a column of 63 nested lists of ints reaches 64) is read and written
within Python's default recursion limit from a call stack already 700 frames deep, and from
a thread with a 256 KiB stack. Deeper trees are refused before any such walk, by checks that
do not recurse: :func:`check_proto_depth` when a file's footer is parsed
(:class:`~aorc.errors.CorruptFileError`), :func:`check_depth` when a schema is given to a
writer or a dataset, or a type string is parsed (:class:`~aorc.errors.SchemaError`).
pyarrow.orc and ORC Java set no limit, but Arrow's IPC writer refuses the next level (64
nested lists), so no Arrow data that has travelled over IPC is deeper.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import pyarrow as pa

from aorc.errors import CorruptFileError, SchemaError
from aorc.format._proto import orc_proto_pb2 as pb

__all__ = ["MAX_TYPE_DEPTH", "Tree", "arrow_type_depth", "check_depth", "check_proto_depth"]

class Tree(Protocol):
    """A type tree node (:class:`~aorc.format.types.OrcType`)."""

    @property
    def children(self) -> Sequence[Tree]:
        """The node's children."""


#: Deepest type aorc reads or writes, in levels below the root (a column is at level 1).
MAX_TYPE_DEPTH = 64


def check_proto_depth(flat: Sequence[pb.Type]) -> None:
    """Refuse a tree deeper than :data:`MAX_TYPE_DEPTH`, without recursion (subtypes that
    are not after their parent are left for the tree's own checks)."""
    depth = [0] * len(flat)
    for cid, p in enumerate(flat):
        below = depth[cid] + 1
        for sub in p.subtypes:
            if cid < sub < len(flat) and depth[sub] < below:
                depth[sub] = below
                if below > MAX_TYPE_DEPTH:
                    raise CorruptFileError(
                        f"type tree nested more than {MAX_TYPE_DEPTH} levels deep (column "
                        f"{sub}), deeper than aorc reads (MAX_TYPE_DEPTH)")


def check_depth(t: Tree | pa.DataType | pa.Schema, what: str = "schema") -> None:
    """Raise SchemaError when a type (an ORC tree, an Arrow type or schema, whose fields
    are at level 1) is nested deeper than :data:`MAX_TYPE_DEPTH`."""
    if isinstance(t, (pa.DataType, pa.Schema)):
        deepest = arrow_type_depth(t)
    else:
        deepest, stack = 0, [(t, 0)]
        while stack and deepest <= MAX_TYPE_DEPTH:
            node, level = stack.pop()
            deepest = max(deepest, level)
            stack.extend((c, level + 1) for c in node.children)
    if deepest > MAX_TYPE_DEPTH:
        raise SchemaError(f"{what} nested more than {MAX_TYPE_DEPTH} levels deep, deeper "
                          f"than aorc reads and writes (MAX_TYPE_DEPTH)")


def arrow_type_depth(t: pa.DataType | pa.Schema) -> int:
    """Levels of nesting of an Arrow type (1 for a flat type; a schema's fields are level 1),
    counted without recursion and only up to ``MAX_TYPE_DEPTH + 1``."""
    stack = [(f.type, 1) for f in t] if isinstance(t, pa.Schema) else [(t, 1)]
    deepest = 0
    while stack and deepest <= MAX_TYPE_DEPTH:
        dt, level = stack.pop()
        deepest = max(deepest, level)
        if isinstance(dt, pa.MapType):  # ORC's map: key and value one level down
            stack += [(dt.key_type, level + 1), (dt.item_type, level + 1)]
        elif isinstance(dt, pa.DictionaryType):
            stack.append((dt.value_type, level))
        elif isinstance(dt, pa.ExtensionType):
            stack.append((dt.storage_type, level))
        else:
            stack.extend((dt.field(i).type, level + 1) for i in range(dt.num_fields))
    return deepest
