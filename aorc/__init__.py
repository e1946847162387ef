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

# First, before any thread allocates: tunes glibc's malloc (see the module; AORC_MALLOC_TUNING=0).
from aorc import _allocator  # noqa: F401, I001
from aorc import sync as sync  # the blocking facade (a submodule)
from aorc._version import __version__ as __version__
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
from aorc.compaction import CompactResult, compact
from aorc.format.statistics import ColumnStatistics
from aorc.io import IOStats, Store, open_store
from aorc.keys import InMemoryKeys, KeyProvider
from aorc.options import WriteOptions
from aorc.progress import ProgressEvent
from aorc.read.dataset import Dataset, open_dataset, read_dataset
from aorc.read.table import read_table
from aorc.read.discovery import DatasetFile
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
from aorc.write.dataset import write_dataset
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
