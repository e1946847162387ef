"""Union layouts read at a slice's offset (``aorc/format/unions.py``), and the paths that use
them: bloom filter hashes of a union column and the encoder, on sliced unions."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

import aorc
from aorc.errors import SchemaError
from aorc.format.codec.bloom import hash_arrow_array
from aorc.format.types import TypeKind
from aorc.format.unions import union_branches, union_codes

CODES = [5, 9, 9, 5, 9, 5]  # type codes other than the branch indexes 0 and 1
DENSE_OFFSETS = [0, 0, 1, 1, 2, 2]


def _dense() -> pa.UnionArray:
    return pa.UnionArray.from_dense(pa.array(CODES, pa.int8()),
                                    pa.array(DENSE_OFFSETS, pa.int32()),
                                    [pa.array([12, None, 345]), pa.array(["Ab", None, "c"])],
                                    ["n", "s"], [5, 9])


def _sparse() -> pa.UnionArray:
    return pa.UnionArray.from_sparse(pa.array(CODES, pa.int8()),
                                     [pa.array([12, 0, 0, None, 0, 345]),
                                      pa.array(["", "Ab", None, "", "c", ""])],
                                     ["n", "s"], [5, 9])


@pytest.mark.parametrize("make", [_dense, _sparse])
def test_layout_at_every_slice_offset(make: object) -> None:
    union = make()  # type: ignore[operator]
    branches = [0 if c == 5 else 1 for c in CODES]
    for start in range(len(CODES) + 1):
        part = union.slice(start)
        codes, offsets = union_codes(part)
        assert codes.tolist() == CODES[start:]
        got, got_offsets = union_branches(part)
        assert got.tolist() == branches[start:]
        if union.type.mode == "dense":
            assert offsets is not None and got_offsets is not None
            assert offsets.tolist() == got_offsets.tolist() == DENSE_OFFSETS[start:]
        else:
            assert offsets is None and got_offsets is None
        # bloom filter hashes of a slice are the slice of the hashes
        assert hash_arrow_array(part, TypeKind.UNION).tolist() == \
            hash_arrow_array(union, TypeKind.UNION).tolist()[start:]


def test_a_sliced_union_is_written_as_it_reads(tmp_path: Path) -> None:
    table = pa.table({"u": _dense()})
    for start in range(len(CODES)):
        part = table.slice(start)
        path = tmp_path / f"u{start}.orc"
        aorc.sync.write_table(part, path)
        back = aorc.sync.read_table(path)
        assert back.column("u").to_pylist() == part.column("u").to_pylist()
        assert union_branches(back.column("u").combine_chunks())[0].tolist() == \
            union_branches(part.column("u").combine_chunks())[0].tolist()


def test_a_type_code_outside_the_union_is_refused() -> None:
    bad = pa.Array.from_buffers(_dense().type, 1, [None, pa.py_buffer(b"\x07"),
                                                   pa.py_buffer(b"\0\0\0\0")],
                                children=[pa.array([1]), pa.array(["x"])])
    with pytest.raises(SchemaError, match="type code"):
        union_branches(bad)
