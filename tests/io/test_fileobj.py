"""Binary file objects as sources, as pyarrow.orc takes them: a real file (positional reads),
``io.BytesIO``, and any object with ``read``/``seek``; compared with pyarrow.orc's reading of
the same objects."""

from __future__ import annotations

import io
import pathlib
import tempfile
from typing import Any

import pyarrow as pa
import pyarrow.orc as po
import pytest

import aorc
from aorc.errors import CorruptFileError, SchemaError
from aorc.io import FileObjectStore, open_store

TABLE = pa.table({"id": pa.array(range(50_000), pa.int64()),
                  "name": pa.array([f"n{i % 977}" for i in range(50_000)])})


@pytest.fixture
def orc_path(tmp_path: pathlib.Path) -> pathlib.Path:
    path = tmp_path / "t.orc"
    po.write_table(TABLE, str(path), stripe_size=64 * 1024)  # several stripes
    return path


class Opaque:
    """A file-like object with read and seek only (no fileno, no readinto)."""

    def __init__(self, data: bytes) -> None:
        self._inner = io.BytesIO(data)
        self.reads = 0

    def read(self, size: int = -1) -> bytes:
        self.reads += 1
        return self._inner.read(size)

    def seek(self, offset: int, whence: int = 0) -> int:
        return self._inner.seek(offset, whence)


async def test_real_file_reads_like_pyarrow(orc_path: pathlib.Path) -> None:
    with open(orc_path, "rb") as file:
        expected = po.read_table(file)
        got = await aorc.read_table(file, columns=["name", "id"], filters=[("id", ">=", 40_000)])
        assert not file.closed  # the caller's object
        whole = await aorc.read_table(file)
    assert whole.equals(expected)
    assert got.equals(expected.filter(pa.compute.field("id") >= 40_000).select(["name", "id"]))


async def test_bytesio_and_opaque_objects(orc_path: pathlib.Path) -> None:
    data = orc_path.read_bytes()
    buffer = io.BytesIO(data)
    buffer.seek(123)  # the position does not matter
    assert (await aorc.read_table(buffer)).equals(po.read_table(io.BytesIO(data)))
    opaque = Opaque(data)
    async with aorc.open_reader(opaque) as reader:
        assert reader.num_rows == TABLE.num_rows and reader.num_stripes > 1
        batches = [b async for b in reader.iter_batches(batch_size=10_000)]
    assert pa.Table.from_batches(batches).equals(TABLE)
    assert opaque.reads > 0
    with tempfile.SpooledTemporaryFile() as spooled:  # another class, no real descriptor
        spooled.write(data)
        assert (await aorc.read_table(spooled)).equals(TABLE)


def test_sync_facade_and_store_name(orc_path: pathlib.Path) -> None:
    with open(orc_path, "rb") as file:
        assert aorc.sync.read_table(file).equals(TABLE)
        store = open_store(file)
        assert isinstance(store, FileObjectStore) and store.path == str(orc_path)


async def test_refusals(orc_path: pathlib.Path) -> None:
    with open(orc_path, encoding="latin-1") as text:
        with pytest.raises(SchemaError, match="text mode"):
            open_store(text)  # type: ignore[arg-type]
    with pytest.raises(SchemaError, match="unknown storage option"):
        open_store(io.BytesIO(b""), {"region": "x"})
    with pytest.raises(CorruptFileError):
        await aorc.read_table(io.BytesIO(b"not an orc file at all"))
    bad: Any = object()
    with pytest.raises(SchemaError, match="cannot read from a object"):
        open_store(bad)
