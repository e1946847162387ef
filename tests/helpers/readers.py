"""The reader under test, switchable so the harness itself can be checked.

By default the conformance and differential tests read with aorc. Setting the environment
variable ``AORC_TEST_REFERENCE_READER=pyarrow`` makes them read with pyarrow.orc instead; that
is only for checking the harness (the renderer, the comparisons, the manifest parsing) against
a known-good reader. Tests about aorc-only behaviour (its error classes, its reader object)
skip in that mode.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.orc as pa_orc
import pytest

__all__ = [
    "READER_ENV",
    "error_class",
    "read_pyarrow",
    "read_table",
    "reader_name",
    "reader_orc_type",
    "require_aorc",
]

READER_ENV = "AORC_TEST_REFERENCE_READER"
_READERS = ("aorc", "pyarrow")


def reader_name() -> str:
    """``"aorc"`` (the default) or ``"pyarrow"``, from ``AORC_TEST_REFERENCE_READER``."""
    name = os.environ.get(READER_ENV, "").strip().lower() or "aorc"
    if name not in _READERS:
        raise ValueError(f"{READER_ENV}={name!r}: expected one of {_READERS}")
    return name


def require_aorc() -> None:
    """Skip the calling test unless the reader under test is aorc."""
    if reader_name() != "aorc":
        pytest.skip(f"aorc-specific behaviour ({READER_ENV}={reader_name()})")


def read_pyarrow(path: str | Path, columns: list[str] | None = None) -> pa.Table:
    """Read a file with pyarrow.orc (the reference peer)."""
    return pa_orc.read_table(str(path), columns=columns)


async def read_table(path: str | Path, columns: list[str] | None = None) -> pa.Table:
    """Read a whole file with the reader under test.

    Args:
        path: local path of the ORC file.
        columns: top-level names or dotted nested paths to read; ``None`` reads all.

    Returns:
        The table.
    """
    if reader_name() == "pyarrow":
        return await asyncio.to_thread(read_pyarrow, path, columns)
    import aorc

    return await aorc.read_table(str(path), columns=columns)


async def reader_orc_type(path: str | Path) -> str:
    """The file's ORC type string as the reader under test reports it.

    aorc: ``open_reader(path).orc_type`` (a type string, or an ``OrcType`` converted with
    ``aorc.format.types.type_string``). pyarrow does not expose it, so the reference mode asks
    pyorc.
    """
    if reader_name() == "pyarrow":
        import pyorc

        with open(path, "rb") as f:
            return str(pyorc.Reader(f).schema)
    import aorc

    async with aorc.open_reader(str(path)) as reader:
        orc_type: Any = reader.orc_type
    if isinstance(orc_type, str):
        return orc_type
    from aorc.format.types import type_string

    return type_string(orc_type)


def error_class(name: str) -> type[BaseException]:
    """The exception a reader must raise: ``aorc.errors.<name>`` (any Exception for pyarrow)."""
    if reader_name() == "pyarrow":
        return Exception
    from aorc import errors

    cls: type[BaseException] = getattr(errors, name)
    return cls
