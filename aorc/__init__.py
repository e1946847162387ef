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
import importlib.machinery as _importlib_machinery
import sys as _sys
import warnings as _warnings
from types import FrameType as _FrameType
from types import ModuleType as _ModuleType
from typing import Any as _Any

# First, before any thread allocates: tunes glibc's malloc (see the module; AORC_MALLOC_TUNING=0).
from aorc import _allocator  # noqa: F401, I001
from aorc import sync as sync  # the blocking facade (a submodule)
from aorc._version import __version__ as __version__
from aorc.dataset.acid import AcidTable, open_acid_table, read_acid_table
from aorc.dataset.compaction import CompactResult, compact
from aorc.dataset.discovery import DatasetFile
from aorc.dataset.entry import open_dataset, read_dataset
from aorc.dataset.read import Dataset
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
    UnwritableTypeError,
)
from aorc.format.statistics import ColumnStatistics
from aorc.io import MOVED_MODULES as _io_moved
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
    "AcidTable",
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
    "UnwritableTypeError",
    "WriteOptions",
    "WriterInfo",
    "compact",
    "open_acid_table",
    "open_dataset",
    "open_reader",
    "open_store",
    "open_writer",
    "read_acid_table",
    "read_dataset",
    "read_table",
    "write_dataset",
    "write_table",
]


#: Module paths that moved in the layout of issue 31, old -> new (those of the stores are
#: :data:`aorc.io.MOVED_MODULES`). Importing an old path warns (DeprecationWarning) and gives
#: the new module itself; the old paths go in the next release. CHANGELOG.md lists them.
_MOVED_MODULES: dict[str, str] = {
    "aorc.compaction": "aorc.dataset.compaction",
    "aorc.hive": "aorc.dataset.hive",
    "aorc.read.dataset": "aorc.dataset.entry",
    "aorc.read.dataset_local": "aorc.dataset.local",
    "aorc.read.dataset_plan": "aorc.dataset.plan",
    "aorc.read.discovery": "aorc.dataset.discovery",
    "aorc.read.evolution": "aorc.dataset.evolution",
    "aorc.read.partitioning": "aorc.dataset.partitioning",
    "aorc.read.prefixes": "aorc.dataset.prefixes",
    "aorc.read.table": "aorc.dataset.table",
    "aorc.write.dataset": "aorc.dataset.write",
    **_io_moved,
}


def _moved(old: str, stacklevel: int) -> _ModuleType:
    new = _MOVED_MODULES[old]
    _warnings.warn(f"{old} is deprecated and will be removed in the next release: import "
                   f"{new}", DeprecationWarning, stacklevel=stacklevel)
    return _importlib.import_module(new)


def _importer_level() -> int:
    """The ``stacklevel`` (as :func:`warnings.warn` counts: without the import system's
    frozen frames) that points a warning issued by the loader at the importing code."""
    level = 1  # the loader's exec_module
    frame: _FrameType | None = _sys._getframe(2)
    while frame is not None:
        filename = frame.f_code.co_filename
        if not ("importlib" in filename and "_bootstrap" in filename):
            level += 1
            if str(frame.f_globals.get("__name__", "")).partition(".")[0] != "importlib":
                return level
        frame = frame.f_back
    return 2


class _MovedModuleFinder(_importlib_abc.MetaPathFinder, _importlib_abc.Loader):
    """Imports an old module path as the module it moved to, with a DeprecationWarning
    (see ``_MOVED_MODULES``).

    The new module object itself is put in ``sys.modules`` under the old name, so both names
    give the same classes and functions (``isinstance`` and monkeypatching agree).
    """

    def find_spec(self, fullname: str, path: _Any, target: _Any = None) -> _Any:
        if fullname not in _MOVED_MODULES:
            return None
        return _importlib_machinery.ModuleSpec(fullname, self)

    def create_module(self, spec: _Any) -> None:
        return None

    def exec_module(self, module: _ModuleType) -> None:
        # The import system returns what sys.modules holds under the name after exec_module.
        # (stacklevel: one more frame, _moved's own)
        _sys.modules[module.__name__] = _moved(module.__name__, _importer_level() + 1)


if not any(isinstance(f, _MovedModuleFinder) for f in _sys.meta_path):
    _sys.meta_path.insert(0, _MovedModuleFinder())


def __getattr__(name: str) -> _ModuleType:
    """``aorc.hive`` and ``aorc.compaction`` as attributes, for one more release."""
    if f"aorc.{name}" in _MOVED_MODULES:
        return _moved(f"aorc.{name}", stacklevel=3)
    raise AttributeError(f"module 'aorc' has no attribute {name!r}")
