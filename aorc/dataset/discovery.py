"""Finding a dataset's files: listing its sources, typing their partition values, and
opening a file's tail.

:func:`list_dataset` lists the sources (one paginated listing per root, sizes included, hidden
names such as ``_SUCCESS`` or ``.crc`` skipped, and names that are clearly not data:
:data:`NON_DATA_SUFFIXES`, or those ``path_glob_filter`` does not match), parses their
``key=value`` folders (or, for directory partitioning, one value per folder level; see
:mod:`aorc.dataset.partitioning`) and checks that every file sits in the same layout (files at
another depth are skipped with an :class:`~aorc.errors.AorcWarning` when invalid files are
excluded) into :class:`DatasetFile` records. :func:`open_tail` reads and parses a file's tail
in one request (small files whole), kept by the dataset for the reads that follow.
:mod:`aorc.dataset.read` drives the reads.
"""

from __future__ import annotations

import asyncio
import collections
import fnmatch
import os
import re
import sys
import threading
import urllib.parse
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import pyarrow as pa

from aorc.dataset.partitioning import (
    Clauses,
    infer_partition_schema,
    partition_table,
    partition_values,
)
from aorc.dataset.prefixes import list_root
from aorc.errors import AorcError, CorruptFileError, ObjectNotFoundError, SchemaError, warn
from aorc.format.codec.budget import DEFAULT_MAX_DECODED_BYTES
from aorc.format.columns import DecodeOptions
from aorc.format.columns.base import with_timestamp_unit
from aorc.format.columns.timestamps import check_timestamp_unit
from aorc.format.tail import TAIL_READ_SIZE, FileTail, NeedBytes, parse_tail
from aorc.format.types import OrcType, to_arrow_schema
from aorc.io import IOStats, registry
from aorc.io.base import gather_or_cancel
from aorc.keys import KeyProvider
from aorc.read.common import INLINE_BYTES, run_light
from aorc.read.dictionary import dictionary_columns, dictionary_schema, present_columns
from aorc.read.keyed import apply_keys

__all__ = [
    "COMPACT_FILE_BYTES",
    "COMPACT_OVERHEAD",
    "NON_DATA_SUFFIXES",
    "SMALL_FILE_BYTES",
    "STRIPE_OVERHEAD",
    "TAIL_CACHE_BYTES",
    "TAIL_OVERHEAD",
    "DatasetFile",
    "DatasetOptions",
    "DatasetSource",
    "Layout",
    "OpenedTail",
    "TailCache",
    "check_options",
    "file_or_dataset",
    "is_dataset_source",
    "list_dataset",
    "open_local_tail",
    "open_tail",
]

#: What :func:`aorc.open_dataset` accepts.
DatasetSource = str | os.PathLike[str] | Sequence[str | os.PathLike[str]]

#: One-shot reads (:func:`aorc.read_dataset`) fetch files up to this size whole, in one request.
SMALL_FILE_BYTES = 4 << 20

#: Files below a dataset's root whose names end so (any case) are not data and are skipped
#: (notes, checksums, manifests, logs), unless ``path_glob_filter`` is given: then it alone
#: decides. ORC files need no extension (Hive writes ``000000_0``), so none is required.
NON_DATA_SUFFIXES = (".txt", ".md", ".json", ".crc", ".log", ".yaml", ".yml")

#: What a kept tail's parsed form (footer, types, statistics, schema) counts against
#: ``tail_cache_bytes`` at the least, besides the bytes read from the file's end (see
#: :meth:`TailCache.cost`).
TAIL_OVERHEAD = 4096

#: What each stripe of a kept tail counts (its location and its Footer entry, parsed).
STRIPE_OVERHEAD = 256

#: The default budget of the tails a dataset keeps (``tail_cache_bytes``).
TAIL_CACHE_BYTES = 64 << 20

#: A tail whose bytes are a whole file of at most this many bytes is kept without its
#: PostScript and Footer messages (:meth:`aorc.format.tail.FileTail.slim`: parsed again from
#: the file's bytes when statistics ask for them; reading rows does not): the parsed tail
#: of a 1.5 KB file held about 6 KiB, 3.5 KiB of it those messages, so 10,000 small files
#: opened with ``schema_from="all"`` grew the process by 65 MiB.
COMPACT_FILE_BYTES = 64 << 10

#: What a slim tail (:data:`COMPACT_FILE_BYTES`) counts against ``tail_cache_bytes``
#: besides its bytes, its stripe statistics' copy and :data:`STRIPE_OVERHEAD` per stripe
#: (its record, its schema's share, the cache's entry; measured about 1 KiB on CPython 3.11).
COMPACT_OVERHEAD = 1024

_T = TypeVar("_T")


@dataclass(frozen=True, slots=True)
class DatasetFile:
    """One file of a dataset.

    Attributes:
        path: its path or URL.
        size: its size in bytes, from the listing.
        partition: its partition values (typed as the partition columns), by column name;
            one dict shared by the files of a partition folder (do not modify it).
    """

    path: str
    size: int
    partition: dict[str, Any] = field(default_factory=dict)

    def __fspath__(self) -> str:
        return self.path

    def __str__(self) -> str:
        return self.path


@dataclass
class OpenedTail:
    """A file's tail as opened, kept for the reads that follow.

    Attributes:
        tail: the parsed tail.
        data: the bytes read from the file's end (the whole file when it is small).
        schema: the file's Arrow schema (timestamps in the dataset's unit).
        etag: the object's version the tail was read from (S3's ETag; ``None`` for other
            stores): later reads of the file must be pinned to it (``if_match``), so that a
            file replaced meanwhile fails with :class:`~aorc.errors.ObjectChangedError`
            instead of being decoded under this tail.
    """

    tail: FileTail
    data: bytes
    schema: pa.Schema
    etag: str | None = None

    def storage_options(self, options: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
        """``options`` for a later read of the file: pinned to :attr:`etag` when known."""
        if self.etag is None:
            return options
        return {**(options or {}), "if_match": self.etag}


@dataclass
class DatasetOptions:
    """The settings of a dataset, checked by :func:`check_options`.

    Attributes:
        storage_options: store settings (see :func:`aorc.io.open_store`).
        max_open_files: files opened and read at once.
        exclude_invalid_files: leave out files that are not ORC instead of failing.
        timestamp_unit: the unit of timestamp columns.
        given_schema: the ``schema=`` given to :func:`aorc.open_dataset`, if any.
        path_glob_filter: only files whose names match this glob are read (Spark's
            ``pathGlobFilter``); ``None``: every file but :data:`NON_DATA_SUFFIXES`.
        read_dictionary: columns read as Arrow dictionaries (see :func:`aorc.open_reader`).
        tail_cache_bytes: the budget of the file tails kept for later reads
            (:class:`TailCache`).
        max_decoded_bytes: the decoding budget of one stripe (see :func:`aorc.open_reader`).
        schema_mapping: ``"name"`` (files' columns matched to ``given_schema`` by name,
            by position only for Hive's ``_col0, _col1, ...``) or ``"position"`` (always by
            position, ORC Java's ``orc.force.positional.evolution``).
        keys: the key provider for encrypted columns (see :func:`aorc.open_reader`).
        use_writer_timezone: ``timestamp`` columns as instants in each file's writer zone
            (see :func:`aorc.open_reader`).
        max_columns: the most columns a file's footer may declare (``None``:
            :func:`aorc.format.tail.max_columns`, read from the environment for each file;
            an open reads it once).
    """

    storage_options: Mapping[str, Any] | None
    max_open_files: int
    exclude_invalid_files: bool
    timestamp_unit: str
    given_schema: pa.Schema | None
    path_glob_filter: str | None = None
    read_dictionary: Sequence[str] | None = None
    tail_cache_bytes: int = TAIL_CACHE_BYTES
    max_decoded_bytes: int = DEFAULT_MAX_DECODED_BYTES
    schema_mapping: str = "name"
    keys: KeyProvider | None = None
    use_writer_timezone: bool = False
    max_columns: int | None = None


@dataclass(frozen=True)
class Layout:
    """How a dataset's folders name its partitions.

    Attributes:
        flavor: ``"hive"`` (``key=value`` folders), ``"directory"`` (one value per folder
            level, named by ``names``) or ``None`` (no partition columns).
        names: the directory partitioning's column names, outermost folder first.
        schema: the partition columns' types given by the caller (some or all of them).
    """

    flavor: str | None
    names: tuple[str, ...] = ()
    schema: pa.Schema | None = None

    def arrow_partitioning(self, schema: pa.Schema) -> Any:
        """The :mod:`pyarrow.dataset` partitioning of this layout, with the columns' types
        (a ``HivePartitioning`` or ``DirectoryPartitioning``; ``None`` without partitions)."""
        if self.flavor is None:
            return None
        import pyarrow.dataset as pads  # here: it loads about 50 MB, which few reads need

        if self.flavor == "hive":
            return pads.HivePartitioning(schema)
        if self.flavor == "directory":
            return pads.DirectoryPartitioning(schema)
        return None


def check_options(partitioning: Any, timestamp_unit: str, max_open_files: int,
                  schema: pa.Schema | None, path_glob_filter: str | None = None) -> Layout:
    """Check the options of :func:`aorc.open_dataset`; the partition layout that
    ``partitioning`` names."""
    check_timestamp_unit(timestamp_unit)
    if isinstance(max_open_files, bool) or not isinstance(max_open_files, int) \
            or max_open_files < 1:
        raise SchemaError(f"max_open_files must be a positive integer, got {max_open_files!r}")
    if schema is not None and not isinstance(schema, pa.Schema):
        raise SchemaError(f"schema must be a pyarrow.Schema, got {type(schema).__name__}")
    if path_glob_filter is not None and (not isinstance(path_glob_filter, str)
                                         or not path_glob_filter):
        raise SchemaError(f"path_glob_filter must be a non-empty glob such as '*.orc', got "
                          f"{path_glob_filter!r}")
    return _layout(partitioning)


def _loaded_pyarrow_dataset() -> Any:
    """:mod:`pyarrow.dataset` if something imported it (a partitioning object of it can
    only come from there), else ``None``."""
    return sys.modules.get("pyarrow.dataset")


def _layout(partitioning: Any) -> Layout:
    if partitioning is None:
        return Layout(None)
    if isinstance(partitioning, str) and partitioning == "hive":
        return Layout("hive")
    if isinstance(partitioning, pa.Schema):
        return Layout("hive", schema=partitioning)
    if isinstance(partitioning, (list, tuple)) and partitioning \
            and all(isinstance(n, str) and n for n in partitioning):
        if len(set(partitioning)) != len(partitioning):
            raise SchemaError(f"partitioning: repeated column names in {list(partitioning)}")
        return Layout("directory", tuple(partitioning))
    pads = _loaded_pyarrow_dataset()
    if pads is not None and isinstance(partitioning, pads.HivePartitioning):
        return Layout("hive", schema=partitioning.schema)
    if pads is not None and isinstance(partitioning, pads.DirectoryPartitioning):
        return Layout("directory", tuple(partitioning.schema.names), partitioning.schema)
    raise SchemaError(
        f"partitioning must be 'hive' (key=value folders), a list of column names (one folder "
        f"level each, as pyarrow.dataset's directory partitioning), a pyarrow.Schema (hive, "
        f"with these types), a pyarrow.dataset.HivePartitioning or DirectoryPartitioning, or "
        f"None; got {partitioning!r}")


async def is_dataset_source(source: object) -> bool:
    """Whether ``source`` names a dataset rather than one file: a list or tuple, a local
    folder, or a URL ending with ``/``."""
    if isinstance(source, (list, tuple)):
        return True
    if not isinstance(source, (str, os.PathLike)):
        return False
    return await registry.is_folder(source)


async def file_or_dataset(source: object, open_file: Callable[[], Awaitable[_T]],
                          open_dataset: Callable[[], Awaitable[Any]]) -> Any:
    """Open ``source`` as one file or as a dataset, as :func:`aorc.read_table` decides: a
    list, a local folder or a URL ending with ``/`` is a dataset; anything else is a file,
    unless no file of that name exists and it is a URL or path text naming a prefix (an
    object-store prefix given without its trailing ``/``).

    Raises:
        ObjectNotFoundError: neither a file nor a dataset exists there (the file's error).
    """
    if await is_dataset_source(source):
        return await open_dataset()
    try:
        return await open_file()
    except ObjectNotFoundError as missing:
        if not isinstance(source, str):
            raise
        try:
            return await open_dataset()
        except ObjectNotFoundError:
            raise missing from None


async def list_dataset(source: DatasetSource, layout: Layout, options: DatasetOptions,
                       io: IOStats, clauses: Clauses | None = None
                       ) -> tuple[list[DatasetFile], pa.Schema]:
    """The files under ``source`` (sorted by path within each root) with their partition
    values, and the partition schema: the layout's given types, or the columns of
    ``schema=`` named by the folders, or inferred from the folders' values.

    Raises:
        SchemaError: files at different partition depths or keys (unless invalid files are
            excluded: then the files outside the most common layout are skipped, with an
            :class:`~aorc.errors.AorcWarning`), or a partition value that does not fit its
            given type.
    """
    schema = options.given_schema
    listed = [(root, info) for root, info in await _discover(source, layout, options, io,
                                                             clauses)
              if _is_data(root, info.path, options.path_glob_filter)]
    raw = _raw_values(listed, layout)
    listed, raw = _one_layout(listed, raw, layout, options.exclude_invalid_files)
    # One typed partition per distinct folder values, shared by its files: a dataset of
    # 100,000 files in 100 folders holds 100 dicts, not 100,000 (nor a table of them).
    distinct: dict[tuple[tuple[str, str | None], ...], int] = {}
    first_paths: list[str] = []
    for (_, info), values in zip(listed, raw, strict=True):
        if distinct.setdefault(tuple(values.items()), len(distinct)) == len(first_paths):
            first_paths.append(info.path)
    folders = [dict(key) for key in distinct]
    given_parts = layout.schema
    if schema is not None and given_parts is None and layout.flavor is not None:
        given_parts = pa.schema([f for f in schema if raw and f.name in raw[0]])
    part_schema = infer_partition_schema(folders, first_paths, given_parts)
    typed = partition_table(folders, part_schema, first_paths).to_pylist() \
        if len(part_schema) else [{} for _ in folders]
    # the raw values are shared by a folder's files (_raw_values): typed once per object
    by_object = {id(values): typed[distinct[tuple(values.items())]] for values in
                 {id(v): v for v in raw}.values()}
    files = [DatasetFile(info.path, info.size, by_object[id(values)])
             for (_, info), values in zip(listed, raw, strict=True)]
    return files, part_schema


def _raw_values(listed: Sequence[tuple[str, registry.FileInfo]], layout: Layout
                ) -> list[dict[str, str | None]]:
    """Each listed file's raw partition values (:func:`_folder_values`), parsed once per
    folder and shared by the folder's files."""
    if layout.flavor is None:
        none: dict[str, str | None] = {}
        return [none for _ in listed]
    by_folder: dict[tuple[str, str], dict[str, str | None]] = {}
    out = []
    for root, info in listed:
        path = info.path
        key = (root, path[:max(path.rfind("/"), path.rfind(os.sep)) + 1])
        values = by_folder.get(key)
        if values is None:
            values = by_folder[key] = _folder_values(layout, root, path)
        out.append(values)
    return out


def _is_data(root: str | os.PathLike[str], path: str, glob: str | None) -> bool:
    """Whether a listed file is read: a file given by name always; below a root, one whose
    name matches ``glob`` (when given), else one without a :data:`NON_DATA_SUFFIXES` ending."""
    if os.fspath(root) == path:
        return True
    name = path.replace(os.sep, "/").rsplit("/", 1)[-1]
    if glob is not None:
        return _glob_matches(glob, name)
    return not name.lower().endswith(NON_DATA_SUFFIXES)


def _glob_matches(glob: str, name: str) -> bool:
    """Hadoop's glob on a file name: ``*``, ``?``, ``[...]`` and ``{a,b}`` alternatives."""
    match = re.search(r"\{([^{}]*)\}", glob)
    if match is None:
        return fnmatch.fnmatchcase(name, glob)
    return any(_glob_matches(glob[:match.start()] + option + glob[match.end():], name)
               for option in match.group(1).split(","))


def _folder_values(layout: Layout, root: str, path: str) -> dict[str, str | None]:
    """A file's raw partition values: its ``key=value`` folders (hive), or its folders
    below the root named by ``layout.names`` (directory; a file at another depth gets
    its folders under the names ``0``, ``1``, ... so that it shows as another layout)."""
    if layout.flavor == "hive":
        return partition_values(root, path)
    base = os.fspath(root).rstrip("/" + os.sep)
    relative = path[len(base) + 1:].replace(os.sep, "/") if path.startswith(base) else ""
    folders = [urllib.parse.unquote(p) for p in relative.split("/")[:-1]]
    if len(folders) != len(layout.names):
        return {str(i): v for i, v in enumerate(folders)}
    return dict(zip(layout.names, folders, strict=True))


def _one_layout(listed: list[tuple[str, registry.FileInfo]],
                raw: list[dict[str, str | None]], layout: Layout, skip_others: bool
                ) -> tuple[list[tuple[str, registry.FileInfo]], list[dict[str, str | None]]]:
    """The files in one partition layout (the same keys, in the same order). Several:
    :class:`SchemaError`, or with ``skip_others`` the files of the most common layout (the
    first found among equals), the others skipped with a warning."""
    layouts = collections.Counter(tuple(v) for v in raw)
    if layout.flavor == "directory":
        wanted = layout.names
    elif len(layouts) <= 1:
        return listed, raw
    else:
        wanted = layouts.most_common(1)[0][0]
    kept = [i for i, v in enumerate(raw) if tuple(v) == wanted]
    if len(kept) == len(raw):
        return listed, raw
    odd = next(i for i, v in enumerate(raw) if tuple(v) != wanted)
    what = (f"{len(layout.names)} folder levels ({', '.join(layout.names)})"
            if layout.flavor == "directory" else f"partition folders {list(wanted) or 'none'}")
    found = (f"{len(raw[odd])} folder levels" if layout.flavor == "directory"
             else list(raw[odd]) or "no partition folders")
    if not skip_others:
        raise SchemaError(
            f"conflicting partition folders: {listed[odd][1].path} has {found}, where "
            f"{len(kept)} of {len(raw)} files have {what}; pass exclude_invalid_files=True "
            f"(CLI: --exclude-invalid-files) to skip the files at other depths, or "
            f"path_glob_filter= to choose the files read")
    warn(f"{len(raw) - len(kept)} file(s) skipped, not at the dataset's {what} "
                  f"(e.g. {listed[odd][1].path}, with {found})")
    return [listed[i] for i in kept], [raw[i] for i in kept]


async def open_tail(path: str, options: DatasetOptions, io: IOStats, size: int = 0, *,
                    listed: int | None = None) -> OpenedTail:
    """Read and parse a file's tail (one request unless its metadata is longer); a file
    of at most SMALL_FILE_BYTES (``size``, from the listing) is read whole, so reading its
    rows needs no further request. ``listed`` (or ``size``) is the size the listing gave:
    a store without suffix ranges then needs no request for the size."""
    store = registry.open_input(path, options.storage_options, size=listed or size or None)
    first = size if TAIL_READ_SIZE < size <= SMALL_FILE_BYTES else TAIL_READ_SIZE
    try:
        data, size = await store.read_tail(first)
        tail = await run_light(len(data) <= INLINE_BYTES, _parse, path, data, size,
                               options.max_columns)
        if isinstance(tail, NeedBytes):
            data, size = await store.read_tail(tail.n)
            tail = await asyncio.to_thread(_parse, path, data, size, options.max_columns)
            if isinstance(tail, NeedBytes):
                raise CorruptFileError(f"{path}: the file tail asks for {tail.n} bytes after "
                                       f"{len(data)} were read")
        tail = await apply_keys(store, tail, data, options.keys)
        etag = getattr(store, "etag", None)
    finally:
        io.requests += store.stats.requests
        io.bytes += store.stats.bytes
        io.unranged += store.stats.unranged
        await store.close()
    return _opened(tail, data, options, etag if isinstance(etag, str) else None)


def open_local_tail(path: str, options: DatasetOptions, io: IOStats, size: int = 0
                    ) -> OpenedTail:
    """:func:`open_tail` of a small local file (at most :data:`SMALL_FILE_BYTES`; ``size``:
    the listing's), on this thread: the file read whole, with one ``read``."""
    data = registry.read_local(path, size)
    io.requests += 1
    io.bytes += len(data)
    tail = _parse(path, data, len(data), options.max_columns)
    if isinstance(tail, NeedBytes):
        raise CorruptFileError(f"{path}: the file tail asks for {tail.n} bytes after "
                               f"{len(data)} were read")
    return _opened(tail, data, options, None)


#: Arrow schemas of the type trees seen last (files of one schema share their tree: see
#: :mod:`aorc.format.tail`), each kept with its tree so that the id stays its own.
_ARROW_SCHEMAS: dict[int, tuple[OrcType, pa.Schema]] = {}


def _opened(tail: FileTail, data: bytes, options: DatasetOptions, etag: str | None
            ) -> OpenedTail:
    """The :class:`OpenedTail` of a parsed tail: its schema in the dataset's terms."""
    known = _ARROW_SCHEMAS.get(id(tail.schema))
    if known is None or known[0] is not tail.schema:
        if len(_ARROW_SCHEMAS) >= 64:
            _ARROW_SCHEMAS.clear()
        known = _ARROW_SCHEMAS[id(tail.schema)] = (tail.schema, to_arrow_schema(tail.schema))
    schema = known[1]
    if options.read_dictionary:
        ids = dictionary_columns(tail.schema,
                                 present_columns(tail.schema, options.read_dictionary))
        schema = dictionary_schema(tail.schema, DecodeOptions(dictionary_strings=ids))
    if options.timestamp_unit != "ns" or options.use_writer_timezone:
        unit, instant = options.timestamp_unit, options.use_writer_timezone
        schema = pa.schema([f.with_type(with_timestamp_unit(f.type, unit, instant))
                            for f in schema])
    return OpenedTail(tail, data, schema, etag)


class TailCache:
    """Opened tails kept for the reads that follow, within a byte budget: the least
    recently used are dropped first. A tail costs what it holds in memory, as
    :meth:`cost` estimates it; the tail of a whole small file is kept slim, without its
    PostScript and Footer messages (:data:`COMPACT_FILE_BYTES`).

    Attributes:
        max_bytes: the budget.
        kept_bytes: what the tails kept cost now.
    """

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.kept_bytes = 0
        self._tails: collections.OrderedDict[str, tuple[OpenedTail, int]] = \
            collections.OrderedDict()
        self._lock = threading.Lock()  # worker threads open small local files too

    def __len__(self) -> int:
        return len(self._tails)

    def __contains__(self, path: object) -> bool:
        return path in self._tails

    def get(self, path: str) -> OpenedTail | None:
        """The tail of ``path`` if kept (it becomes the most recently used)."""
        with self._lock:
            found = self._tails.get(path)
            if found is None:
                return None
            self._tails.move_to_end(path)
            return found[0]

    def put(self, path: str, tail: OpenedTail, *, evict: bool = True) -> None:
        """Keep ``tail``, dropping the least recently used ones beyond the budget (a tail
        larger than the whole budget is not kept). With ``evict=False`` a tail that does
        not fit in what is left of the budget is not kept, and none is dropped: a pass
        over more files than the budget holds then keeps its first files' tails for the
        next pass, where dropping the oldest would leave none of the files it reads
        first (a scan in the same order would find no tail at all)."""
        kept = tail
        if _compacts(tail):
            kept = OpenedTail(tail.tail.slim(tail.data), tail.data, tail.schema, tail.etag)
        cost = self.cost(kept)
        with self._lock:
            old = self._tails.pop(path, None)
            if old is not None:
                self.kept_bytes -= old[1]
            if cost > self.max_bytes or (not evict
                                         and self.kept_bytes + cost > self.max_bytes):
                return
            self._tails[path] = (kept, cost)
            self.kept_bytes += cost
            while self.kept_bytes > self.max_bytes:
                _, (_, dropped) = self._tails.popitem(last=False)
                self.kept_bytes -= dropped

    @staticmethod
    def cost(tail: OpenedTail) -> int:
        """What keeping ``tail`` counts against the budget: the bytes read from the file's
        end, the stripe statistics' copy, and the parsed form (measured on CPython 3.11:
        about :data:`TAIL_OVERHEAD` plus three bytes per byte of the Footer message and
        :data:`STRIPE_OVERHEAD` per stripe; for the slim tail of a whole small file,
        :data:`COMPACT_OVERHEAD` and no Footer message)."""
        parsed = tail.tail
        if _compacts(tail):
            return (len(tail.data) + len(parsed._metadata_bytes) + COMPACT_OVERHEAD
                    + STRIPE_OVERHEAD * len(parsed.stripes))
        return (len(tail.data) + len(parsed._metadata_bytes) + TAIL_OVERHEAD
                + 3 * int(parsed.footer.ByteSize()) + STRIPE_OVERHEAD * len(parsed.stripes))


def _compacts(tail: OpenedTail) -> bool:
    """Whether ``tail`` is kept slim: its bytes are a whole file of at most
    :data:`COMPACT_FILE_BYTES`, and no key decrypted it (a slim tail parses its statistics
    again from the file's bytes: those of an encrypted column would be the masked ones)."""
    return (len(tail.data) <= COMPACT_FILE_BYTES and len(tail.data) == tail.tail.file_length
            and tail.tail.decryption is None)


def _parse(path: str, data: bytes, size: int, max_columns: int | None = None
           ) -> FileTail | NeedBytes:
    try:
        return parse_tail(data, size, source=path, max_columns=max_columns)
    except AorcError as exc:
        if path in str(exc):
            raise
        raise type(exc)(f"{path}: {exc}") from exc
    except Exception as exc:  # noqa: BLE001 - any stray failure means a damaged tail
        raise CorruptFileError(f"{path}: not a readable ORC file ({type(exc).__name__}: "
                               f"{exc})") from exc


async def _discover(source: DatasetSource, layout: Layout, options: DatasetOptions,
                    io: IOStats, clauses: Clauses | None
                    ) -> list[tuple[str, registry.FileInfo]]:
    roots = [source] if isinstance(source, (str, os.PathLike)) else list(source)
    if not roots:
        raise SchemaError("open_dataset: the list of sources is empty")
    hive = layout.flavor == "hive"
    single = len(roots) == 1 and not isinstance(source, (list, tuple))
    found = await gather_or_cancel([list_root(r, options.storage_options, io,
                                              clauses if hive else None, layout.schema, hive,
                                              single)
                                    for r in roots])
    out: list[tuple[str, registry.FileInfo]] = []
    for root, files in zip(roots, found, strict=True):
        text = os.fspath(root)
        out.extend((text, info) for info in files)
    return out
