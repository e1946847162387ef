"""aorc: an asyncio-native reader and writer of Apache ORC files.

Read a whole file::

    table = await aorc.read_table("data.orc", columns=["a", "b.c"])

or stream it::

    async with aorc.open_reader("data.orc") as reader:
        async for batch in reader.iter_batches(batch_size=10_000):
            ...

Without asyncio (scripts, notebooks), use the blocking facade :mod:`aorc.sync`::

    table = aorc.sync.read_table("data.orc")

Errors are :class:`AorcError` subclasses (see :mod:`aorc.errors`).
"""

import importlib as _importlib
import importlib.abc as _importlib_abc
import importlib.util as _importlib_util
import sys as _sys
import warnings as _warnings
from types import ModuleType as _ModuleType
from typing import Any as _Any

# First, before any thread allocates: tunes glibc's malloc (see the module; AORC_MALLOC_TUNING=0).
from aorc import _allocator  # noqa: F401, I001
from aorc import sync as sync  # the blocking facade (a submodule)
from aorc._version import __version__ as __version__
from aorc.dataset.compaction import CompactResult, compact
from aorc.dataset.discovery import DatasetFile
from aorc.dataset.read import Dataset, open_dataset, read_dataset
from aorc.dataset.table import read_table
from aorc.dataset.write import write_dataset
from aorc.errors import (
    AccessDeniedError,
    AorcError,
    AorcWarning,
    CorruptFileError,
    DecryptionError,
    FormatError,
    InputTypeError,
    ObjectChangedError,
    ObjectExistsError,
    ObjectNotFoundError,
    OldOffsetsError,
    ResourceLimitError,
    RetriesExhaustedError,
    SchemaError,
    StoreError,
    UnsupportedFeatureError,
    UnsupportedVersionError,
)
from aorc.format.statistics import ColumnStatistics
from aorc.io import IOStats, Store, open_store
from aorc.keys import InMemoryKeys, KeyProvider
from aorc.options import WriteOptions
from aorc.progress import ProgressEvent
from aorc.read.reader import (
    ColumnEncodingInfo,
    OrcReader,
    ScanStats,
    StreamDescription,
    StripeFooterInfo,
    StripeMetadata,
    WriterInfo,
    open_reader,
)
from aorc.sink.results import SinkCommit, SinkFile
from aorc.sink.rolling import RollingSink
from aorc.write.writer import OrcWriter, open_writer, write_table

__all__ = [
    "AccessDeniedError",
    "AorcError",
    "AorcWarning",
    "ColumnEncodingInfo",
    "ColumnStatistics",
    "CompactResult",
    "CorruptFileError",
    "Dataset",
    "DatasetFile",
    "DecryptionError",
    "FormatError",
    "IOStats",
    "InMemoryKeys",
    "InputTypeError",
    "KeyProvider",
    "ObjectChangedError",
    "ObjectExistsError",
    "ObjectNotFoundError",
    "OldOffsetsError",
    "OrcReader",
    "OrcWriter",
    "ProgressEvent",
    "ResourceLimitError",
    "RetriesExhaustedError",
    "RollingSink",
    "ScanStats",
    "SchemaError",
    "SinkCommit",
    "SinkFile",
    "Store",
    "StoreError",
    "StreamDescription",
    "StripeFooterInfo",
    "StripeMetadata",
    "UnsupportedFeatureError",
    "UnsupportedVersionError",
    "WriteOptions",
    "WriterInfo",
    "compact",
    "open_dataset",
    "open_reader",
    "open_store",
    "open_writer",
    "read_dataset",
    "read_table",
    "write_dataset",
    "write_table",
]


#: Module paths that moved in the layout of 0.x (issue 31), old -> new. Importing an old path
#: warns (DeprecationWarning) and gives the new module itself; the old paths go in the next
#: release. CHANGELOG.md lists them.
_MOVED_MODULES: dict[str, str] = {
    "aorc.compaction": "aorc.dataset.compaction",
    "aorc.hive": "aorc.dataset.hive",
    "aorc.read.dataset": "aorc.dataset.read",
    "aorc.read.dataset_local": "aorc.dataset.local",
    "aorc.read.dataset_plan": "aorc.dataset.plan",
    "aorc.read.discovery": "aorc.dataset.discovery",
    "aorc.read.evolution": "aorc.dataset.evolution",
    "aorc.read.partitioning": "aorc.dataset.partitioning",
    "aorc.read.prefixes": "aorc.dataset.prefixes",
    "aorc.read.table": "aorc.dataset.table",
    "aorc.write.dataset": "aorc.dataset.write",
}


def _moved(old: str, stacklevel: int) -> _ModuleType:
    new = _MOVED_MODULES[old]
    _warnings.warn(f"{old} has moved to {new}: import it from there (the old path will be "
                   "removed in the next release)", DeprecationWarning, stacklevel=stacklevel)
    return _importlib.import_module(new)


class _MovedModuleFinder(_importlib_abc.MetaPathFinder, _importlib_abc.Loader):
    """Imports a moved module's old path as the new module (see ``_MOVED_MODULES``)."""

    def __init__(self) -> None:
        self._specs: dict[str, _Any] = {}

    def find_spec(self, fullname: str, path: _Any, target: _Any = None) -> _Any:
        if fullname not in _MOVED_MODULES:
            return None
        return _importlib_util.spec_from_loader(fullname, self)

    def create_module(self, spec: _Any) -> _ModuleType:
        module = _moved(spec.name, stacklevel=8)
        self._specs[spec.name] = module.__spec__
        return module

    def exec_module(self, module: _ModuleType) -> None:
        # the import machinery gave the module the old path's spec: give it its own back
        module.__spec__ = self._specs[module.__spec__.name] if module.__spec__ else None


if not any(isinstance(f, _MovedModuleFinder) for f in _sys.meta_path):
    _sys.meta_path.insert(0, _MovedModuleFinder())


def __getattr__(name: str) -> _ModuleType:
    """``aorc.hive`` and ``aorc.compaction`` as attributes, for one more release."""
    if f"aorc.{name}" in _MOVED_MODULES:
        return _moved(f"aorc.{name}", stacklevel=3)
    raise AttributeError(f"module 'aorc' has no attribute {name!r}")
