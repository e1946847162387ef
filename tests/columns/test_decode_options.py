"""DecodeOptions made from file tails: ``shared_from_tail`` gives ``from_tail``'s options,
one instance per distinct set of values (files of one writer share it, another writer or
another override gets its own)."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path

import pyarrow as pa
import pyarrow.orc as pa_orc

import aorc
from aorc.format.columns import DecodeOptions
from aorc.format.tail import FileTail, parse_tail


def _tail(data: bytes) -> FileTail:
    tail = parse_tail(data, len(data))
    assert isinstance(tail, FileTail)
    return tail


def _pyarrow_file(n: int) -> bytes:
    out = io.BytesIO()
    pa_orc.write_table(pa.table({"x": list(range(n))}), out)
    return out.getvalue()


def _aorc_file(path: Path) -> bytes:
    asyncio.run(aorc.write_table(pa.table({"x": [1, 2, 3]}), str(path)))
    return path.read_bytes()


def test_shared_options_are_from_tails_and_one_per_writer(tmp_path: Path) -> None:
    cpp_a, cpp_b = _tail(_pyarrow_file(3)), _tail(_pyarrow_file(7))
    java_like = _tail(_aorc_file(tmp_path / "a.orc"))
    assert cpp_a.writer != java_like.writer or cpp_a.software_version != \
        java_like.software_version  # two writers
    for tail in (cpp_a, java_like):
        for unit in ("ns", "ms"):
            shared = DecodeOptions.shared_from_tail(tail, timestamp_unit=unit)
            assert shared == DecodeOptions.from_tail(tail, timestamp_unit=unit)
    # files of one writer share one instance; another writer or override gets its own
    first = DecodeOptions.shared_from_tail(cpp_a, timestamp_unit="ns")
    assert DecodeOptions.shared_from_tail(cpp_b, timestamp_unit="ns") is first
    assert DecodeOptions.shared_from_tail(cpp_a, timestamp_unit="ms") is not first
    other = DecodeOptions.shared_from_tail(java_like, timestamp_unit="ns")
    assert other is not first and other != first
