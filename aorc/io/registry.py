"""Stores own their URLs: one registry maps a URL scheme to the code that serves it.

Every module outside :mod:`aorc.io` that needs to open, list, join, create or delete a
location asks this registry instead of looking at the scheme itself. Registered schemes:

* local paths (no scheme) and ``file://`` URLs: :class:`LocalScheme`;
* ``memory://name``: :class:`MemoryScheme`, an in-process file system (tests, examples);
* ``s3://`` and ``s3a://``: :class:`aorc.io.s3.scheme.S3Scheme` (listing is paginated
  ``ListObjectsV2``, 1,000 keys per request; a file's size comes from the listing, so no
  ``HEAD`` is needed);
* ``gs://`` and ``gcs://``: :class:`aorc.io.gcs.store.GCSScheme` (Google Cloud Storage);
* ``az://``, ``abfs://`` and ``abfss://``: :class:`aorc.io.azure.store.AzureScheme` (Azure Blob
  Storage, ADLS Gen2);
* ``http://`` and ``https://``: :class:`aorc.io.http.HTTPScheme` (read-only).

Adding a store means writing one :class:`Scheme` and calling :func:`register_scheme`; for
instance a read-only scheme that serves ``mirror://name`` from a local folder::

    import aorc
    from aorc.io import LocalStore, registry

    class Mirror(registry.ReadOnlyScheme):
        def open_input(self, url, storage_options):
            return LocalStore("/srv/mirror/" + url.removeprefix("mirror://"))

    registry.register_scheme("mirror", Mirror())
    table = await aorc.read_table("mirror://events.orc")
"""

from __future__ import annotations

import asyncio
import os
import re
import urllib.parse
import urllib.request
from collections.abc import Mapping
from typing import Any, Protocol

from aorc.errors import (
    ObjectExistsError,
    ObjectNotFoundError,
    SchemaError,
    UnsupportedFeatureError,
    warn,
)
from aorc.io.azure.store import AzureScheme
from aorc.io.base import IOStats, Store, StoreOptions, check_no_options_left
from aorc.io.gcs.store import GCSScheme
from aorc.io.http import HTTPScheme
from aorc.io.listing import (
    LIST_PAGE_SIZE,
    FileInfo,
    Level,
    ObjectNamespace,
    ReadOnlyScheme,
    is_hidden,
    level_of,
    visible,
)
from aorc.io.local import LocalStore, map_os_error
from aorc.io.memory import MemoryStore
from aorc.io.output import Destination, MemoryOutput, Output, open_local_output
from aorc.io.s3.scheme import S3Scheme

__all__ = [
    "LIST_PAGE_SIZE",
    "LOCAL_MAX_REQUEST_SIZE",
    "AzureScheme",
    "FileInfo",
    "GCSScheme",
    "HTTPScheme",
    "Level",
    "LocalScheme",
    "MemoryScheme",
    "ObjectNamespace",
    "ReadOnlyScheme",
    "S3Scheme",
    "Scheme",
    "abort_uploads",
    "check_options",
    "delete",
    "is_folder",
    "is_hidden",
    "is_remote",
    "join",
    "list_files",
    "list_level",
    "local_path",
    "make_parents",
    "open_input",
    "open_output",
    "read_local",
    "register_scheme",
    "scheme_for",
    "schemes",
]

#: Local files: one ``pread`` per range however long (splitting a stripe into pieces and
#: joining them again only copies it twice), unless ``max_request_size`` is given.
LOCAL_MAX_REQUEST_SIZE = 1 << 30


class Scheme(Protocol):
    """What a store family provides for its URLs."""

    remote: bool

    def check_options(self, storage_options: Mapping[str, Any]) -> None:
        """Raise :class:`SchemaError` for settings this store would refuse (nothing is
        opened); stores that take no connection settings accept any here."""

    def open_input(self, url: str, storage_options: Mapping[str, Any] | None) -> Store:
        """A store reading ``url``."""
        ...

    def open_output(self, url: str, storage_options: Mapping[str, Any] | None) -> Output:
        """A sink writing ``url`` (visible only once complete)."""
        ...

    async def listing(self, url: str, storage_options: Mapping[str, Any] | None,
                   stats: IOStats) -> list[FileInfo]:
        """Every non-empty, non-hidden file under ``url`` (or ``url`` itself when it names a
        file), sorted by path."""
        ...

    def join(self, base: str, *parts: str) -> str:
        """``base`` extended by path components."""
        ...

    async def is_folder(self, url: str) -> bool:
        """Whether ``url`` names a folder or prefix (without a request where the URL says)."""
        ...

    async def make_parents(self, url: str) -> None:
        """Create the folders ``url`` will live in (nothing for object stores)."""
        ...

    async def delete(self, url: str, storage_options: Mapping[str, Any] | None) -> None:
        """Remove the file ``url``; a missing file is not an error."""
        ...


# =========================================================================== local

def _walk_sync(folder: str, out: list[FileInfo], links: list[str]) -> None:
    """The files under ``folder`` into ``out`` (by folder in pre-order, subfolders and files
    in name order, as ``os.walk`` with sorted names), the symbolic links skipped into
    ``links``. One ``scandir`` per folder and one ``lstat`` per file: the entries' types come
    from the folder's listing (``os.path.islink`` and ``getsize`` cost two more system calls
    per file: listing 10,000 files took 72-77 ms of CPU that way, 58-64 ms this way). A
    folder that cannot be listed is left out, as ``os.walk`` does."""
    try:
        with os.scandir(folder) as it:
            entries = sorted(it, key=lambda e: e.name)
    except OSError:
        return
    dirs = []
    for entry in entries:
        if is_hidden(entry.name):
            continue
        path = os.path.join(folder, entry.name)
        if entry.is_symlink():
            links.append(path)
        elif entry.is_dir(follow_symlinks=False):
            dirs.append(path)
        else:
            size = entry.stat(follow_symlinks=False).st_size
            if size:
                out.append(FileInfo(path, size))
    for path in dirs:
        _walk_sync(path, out, links)


class LocalScheme:
    """Local paths and ``file://`` URLs."""

    remote = False

    def check_options(self, storage_options: Mapping[str, Any]) -> None:
        """Local and memory files have no connection settings to check up front."""

    @staticmethod
    def path_of(url: str) -> str:
        """The local path of a plain path or a ``file://`` URL."""
        if "://" not in url:
            return url
        parsed = urllib.parse.urlsplit(url)
        if parsed.netloc not in ("", "localhost"):
            raise UnsupportedFeatureError(f"file:// URLs on another host are not supported: "
                                          f"{url}")
        return urllib.request.url2pathname(parsed.path)

    def open_input(self, url: str, storage_options: Mapping[str, Any] | None) -> Store:
        options = dict(storage_options or {})
        tuning = StoreOptions.pop_from(options, max_request_size=LOCAL_MAX_REQUEST_SIZE)
        check_no_options_left(options, "local files")
        return LocalStore(self.path_of(url), tuning)

    def open_output(self, url: str, storage_options: Mapping[str, Any] | None) -> Output:
        return open_local_output(self.path_of(url), storage_options)

    async def listing(self, url: str, storage_options: Mapping[str, Any] | None,
                   stats: IOStats) -> list[FileInfo]:
        root = self.path_of(url)
        found, links = await asyncio.to_thread(self._list_sync, root)
        _warn_links(root, links)
        return found

    @staticmethod
    def _list_sync(root: str) -> tuple[list[FileInfo], list[str]]:
        """The files under ``root`` and the symbolic links skipped (never followed, so a
        listing cannot leave its root or loop)."""
        try:
            if os.path.isfile(root):
                return [FileInfo(root, os.path.getsize(root))], []
            if not os.path.isdir(root):
                raise ObjectNotFoundError(f"{root}: no such file or folder")
            out: list[FileInfo] = []
            links: list[str] = []
            _walk_sync(root, out, links)
            return out, links
        except OSError as exc:
            raise map_os_error(exc, root) from exc

    async def level(self, url: str, storage_options: Mapping[str, Any] | None,
                    stats: IOStats) -> Level:
        """The folder's files and subfolders (one ``scandir``); a missing folder is empty."""
        root = self.path_of(url)
        level, links = await asyncio.to_thread(self._level_sync, root)
        _warn_links(root, links)
        return level

    @staticmethod
    def _level_sync(root: str) -> tuple[Level, list[str]]:
        folders: list[str] = []
        files: list[FileInfo] = []
        links: list[str] = []
        try:
            with os.scandir(root) as entries:
                for entry in entries:
                    if is_hidden(entry.name):
                        continue
                    if entry.is_symlink():
                        links.append(entry.path)
                    elif entry.is_dir(follow_symlinks=False):
                        folders.append(os.path.join(root, entry.name) + os.sep)
                    elif entry.is_file(follow_symlinks=False):
                        size = entry.stat(follow_symlinks=False).st_size
                        if size:
                            files.append(FileInfo(os.path.join(root, entry.name), size))
        except (FileNotFoundError, NotADirectoryError):
            return Level([], []), []
        except OSError as exc:
            raise map_os_error(exc, root) from exc
        return Level(sorted(folders), sorted(files, key=lambda f: f.path)), sorted(links)

    def join(self, base: str, *parts: str) -> str:
        return os.path.join(base, *(p for p in parts if p))

    async def is_folder(self, url: str) -> bool:
        return await asyncio.to_thread(os.path.isdir, self.path_of(url))

    async def make_parents(self, url: str) -> None:
        folder = os.path.dirname(self.path_of(url)) or "."
        try:
            await asyncio.to_thread(os.makedirs, folder, exist_ok=True)
        except OSError as exc:
            raise map_os_error(exc, folder) from exc

    async def delete(self, url: str, storage_options: Mapping[str, Any] | None) -> None:
        path = self.path_of(url)
        try:
            await asyncio.to_thread(os.remove, path)
        except FileNotFoundError:
            pass
        except OSError as exc:
            raise map_os_error(exc, path) from exc


def _warn_links(root: str, links: list[str]) -> None:
    """Say which symbolic links a local listing skipped (their rows are not read)."""
    if links:
        shown = ", ".join(sorted(links)[:5]) + (", ..." if len(links) > 5 else "")
        warn(f"{root}: {len(links)} symbolic link(s) skipped: folder listings do "
                      f"not follow links (name a linked file or folder itself to read it): "
                      f"{shown}")


# =========================================================================== memory

class _MemoryOutput(MemoryOutput):
    """A :class:`MemoryOutput` that publishes the file in its :class:`MemoryScheme`."""

    def __init__(self, files: dict[str, bytes], path: str, overwrite: bool = True) -> None:
        super().__init__(path)
        self._files = files
        self._overwrite = overwrite

    async def complete(self) -> None:
        if not self._overwrite and self.path in self._files:
            await self.abort()
            raise ObjectExistsError(f"{self.path}: the file already exists and the write "
                                    f"does not overwrite (overwrite=False)")
        await super().complete()
        self._files[self.path] = self.getvalue()


class MemoryScheme(ObjectNamespace):
    """``memory://`` URLs: an in-process file system (a dict of URL -> bytes)."""

    remote = False

    def check_options(self, storage_options: Mapping[str, Any]) -> None:
        """Local and memory files have no connection settings to check up front."""

    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}

    def open_input(self, url: str, storage_options: Mapping[str, Any] | None) -> Store:
        options = dict(storage_options or {})
        tuning = StoreOptions.pop_from(options)
        check_no_options_left(options, "memory")
        if url not in self.files:
            raise ObjectNotFoundError(f"no such file: {url}")
        return MemoryStore(self.files[url], url, tuning)

    def open_output(self, url: str, storage_options: Mapping[str, Any] | None) -> Output:
        options = dict(storage_options or {})
        overwrite = options.pop("overwrite", True)
        check_no_options_left(options, "memory")
        if not isinstance(overwrite, bool):
            raise SchemaError(f"storage option overwrite must be a bool, got {overwrite!r}")
        return _MemoryOutput(self.files, url, overwrite)

    async def listing(self, url: str, storage_options: Mapping[str, Any] | None,
                   stats: IOStats) -> list[FileInfo]:
        if url in self.files:
            return [FileInfo(url, len(self.files[url]))]
        prefix = url.rstrip("/") + "/"
        found = sorted(k for k in self.files if k.startswith(prefix))
        if not found:
            raise ObjectNotFoundError(f"{url}: no files found")
        return [FileInfo(k, len(self.files[k])) for k in found
                if self.files[k] and visible(k[len(prefix):])]

    async def level(self, url: str, storage_options: Mapping[str, Any] | None,
                    stats: IOStats) -> Level:
        """The files and subfolders directly under ``url``."""
        prefix = url.rstrip("/") + "/"
        found: list[tuple[str, int]] = []
        folders: set[str] = set()
        for key, data in self.files.items():
            if key.startswith(prefix):
                rest = key[len(prefix):]
                if "/" in rest:
                    folders.add(rest.split("/", 1)[0] + "/")
                else:
                    found.append((rest, len(data)))
        return level_of(prefix, found, sorted(folders))

    async def delete(self, url: str, storage_options: Mapping[str, Any] | None) -> None:
        self.files.pop(url, None)


# =========================================================================== S3

# =========================================================================== registry

_LOCAL = LocalScheme()
_SCHEMES: dict[str, Scheme] = {"file": _LOCAL, "memory": MemoryScheme(), "s3": S3Scheme(),
                               "gs": GCSScheme(), "az": AzureScheme(), "http": HTTPScheme()}
_SCHEMES["s3a"] = _SCHEMES["s3"]
_SCHEMES["gcs"] = _SCHEMES["gs"]
_SCHEMES["abfs"] = _SCHEMES["abfss"] = _SCHEMES["az"]
_SCHEMES["https"] = _SCHEMES["http"]


def register_scheme(name: str, scheme: Scheme) -> None:
    """Serve URLs ``name://...`` with ``scheme`` (replacing any earlier registration).

    ``scheme`` implements :class:`Scheme`: how to open a file for reading (a
    :class:`~aorc.io.base.Store`, usually a :class:`~aorc.io.base.BaseStore` subclass) and
    for writing (an :class:`~aorc.io.output.Output`), list a prefix, join paths, tell a
    folder and delete a file. See the module docstring for an example.

    Raises:
        SchemaError: ``name`` is not a valid URL scheme.

    Args:
        name: the URL scheme (``mirror`` for ``mirror://...``).
        scheme: what serves it.
    """
    if not isinstance(name, str) or not name or not name[0].isalpha() or not all(
            c.isalnum() or c in "+-." for c in name):
        raise SchemaError(f"not a valid URL scheme name: {name!r}")
    _SCHEMES[name.lower()] = scheme


def schemes() -> list[str]:
    """The URL schemes served (sorted), besides plain local paths."""
    return sorted(_SCHEMES)


def _text(url: str | os.PathLike[str]) -> str:
    if type(url) is str:  # the common case first: os.PathLike's check is an ABC's
        return url
    if isinstance(url, os.PathLike):
        return os.fspath(url)
    if not isinstance(url, str):
        raise SchemaError(f"expected a path or URL, got a {type(url).__name__}")
    return url


def scheme_for(url: str | os.PathLike[str]) -> Scheme:
    """The scheme serving ``url`` (a plain path is local).

    Raises:
        UnsupportedFeatureError: no scheme is registered for the URL's.
    """
    text = _text(url)
    name, sep, _ = text.partition("://")
    if not sep:
        return _LOCAL
    try:
        return _SCHEMES[name.lower()]
    except KeyError:
        from aorc.io.transport import redact_url
        raise UnsupportedFeatureError(
            f"unsupported URL scheme {name.lower()!r} in {redact_url(text)}; supported: "
            f"{', '.join(s + '://' for s in schemes())} and local paths (register another "
            f"with aorc.io.register_scheme)") from None


def check_options(url: str | os.PathLike[str], storage_options: Mapping[str, Any]) -> None:
    """Fail fast on settings the store of ``url`` would refuse, before any work starts.

    Raises:
        SchemaError: an unknown setting or a bad value.
    """
    scheme_for(url).check_options(storage_options)


def is_remote(url: str | os.PathLike[str]) -> bool:
    """Whether ``url`` lives in a remote store (its storage options are connection
    settings).

    Args:
        url: a local path or a URL of a registered scheme.

    Returns:
        ``True`` for a remote store (``s3://``, ``gs://``, ...), ``False`` for local files
        and in-process stores.

    Raises:
        UnsupportedFeatureError: no scheme is registered for the URL's.
    """
    return scheme_for(url).remote


def open_input(url: str | os.PathLike[str],
               storage_options: Mapping[str, Any] | None = None, *,
               size: int | None = None) -> Store:
    """A store reading the file ``url``.

    Args:
        url: the file's path or URL.
        storage_options: the store's settings.
        size: the file's size if known (from a listing): a store without suffix ranges
            (Azure) then reads the tail in one request instead of two.

    Returns:
        The :class:`~aorc.io.base.Store` reading ``url``.

    Raises:
        UnsupportedFeatureError: no scheme is registered for the URL's.
        SchemaError: an unknown storage option or a bad value.
        ObjectNotFoundError: a store that looks the file up when opened (``memory://``)
            has no such file.
    """
    store = scheme_for(url).open_input(_text(url), storage_options)
    if size is not None:
        expect = getattr(store, "expect_size", None)
        if callable(expect):
            expect(size)
    return store


def open_output(dest: Destination,
                storage_options: Mapping[str, Any] | None = None) -> Output:
    """The output writing ``dest``: visible only once complete.

    Args:
        dest: a local path (``str`` or ``os.PathLike``), a URL of a registered scheme
            (``file://``, ``memory://``, ``s3://``, ...), or an :class:`Output` (returned as
            it is, e.g. a :class:`MemoryOutput`).
        storage_options: the store's settings (local files: ``fsync``; S3: see
            :mod:`aorc.io.s3.config`).

    Returns:
        The :class:`Output` to write to (``dest`` itself when it is one).

    Raises:
        UnsupportedFeatureError: for a URL scheme no store is registered for.
        SchemaError: for an unknown storage option or destination type.
    """
    if isinstance(dest, Output) and not isinstance(dest, (str, os.PathLike)):
        if storage_options:
            raise SchemaError("storage_options cannot be applied to an existing output")
        return dest
    if not isinstance(dest, (str, os.PathLike)):
        raise SchemaError(f"cannot write to a {type(dest).__name__}: pass a path, a URL or "
                          "an Output")
    return scheme_for(dest).open_output(_text(dest), storage_options)


async def list_level(url: str | os.PathLike[str],
                     storage_options: Mapping[str, Any] | None = None,
                     stats: IOStats | None = None) -> Level:
    """The files directly under the folder or prefix ``url`` and its subfolders: one
    delimiter listing on object stores (``Delimiter=/``, paginated), one ``scandir`` locally.
    Hidden names and empty files are skipped; a missing folder is empty. Datasets use it to
    list only the partition folders a filter can match, level by level.

    Args:
        url: a folder or prefix (a trailing ``/`` is implied).
        storage_options: store settings.
        stats: where to count the listing requests.

    Raises:
        UnsupportedFeatureError: the store has no listing (HTTP).
    """
    counts = stats if stats is not None else IOStats()
    scheme = scheme_for(url)
    text = _text(url)
    level = getattr(scheme, "level", None)
    if level is not None:
        found: Level = await level(text, storage_options, counts)
        return found
    # a scheme without delimiter listings: its whole listing, cut to one level
    base = text.rstrip("/") + "/"
    try:
        every = await scheme.listing(base, storage_options, counts)
    except ObjectNotFoundError:
        return Level([], [])
    folders: set[str] = set()
    files: list[FileInfo] = []
    for info in every:
        rest = info.path[len(base):] if info.path.startswith(base) else info.path
        if "/" in rest:
            folders.add(base + rest.split("/", 1)[0] + "/")
        else:
            files.append(info)
    return Level(sorted(folders), files)


def local_path(url: str | os.PathLike[str]) -> str | None:
    """The local file system path of ``url`` (a path or ``file://`` URL), ``None`` when it
    is not on local disk."""
    scheme = scheme_for(url)
    return scheme.path_of(_text(url)) if isinstance(scheme, LocalScheme) else None


def read_local(url: str | os.PathLike[str], size: int = 0) -> bytes:
    """A local file's bytes, read whole on this thread (datasets of many small files read
    them so, a group per worker thread); ``size`` is what the file is expected to hold (a
    listing's size: then one ``read`` takes it all, and a second finds the end).

    Raises:
        ObjectNotFoundError: no such file (and the other :class:`~aorc.errors.StoreError`
            subclasses of local reads).
        ValueError: ``url`` is not on local disk.
    """
    path = local_path(url)
    if path is None:
        raise ValueError(f"{_text(url)} is not a local file")
    try:  # os.read, not open(): a Python file object costs as much as the read
        fd = os.open(path, _READ_FLAGS)
        try:
            chunks = [os.read(fd, max(size, 0) + 1 if size > 0 else 1 << 16)]
            while chunks[-1]:
                chunks.append(os.read(fd, 1 << 20))
        finally:
            os.close(fd)
    except OSError as exc:
        raise map_os_error(exc, path) from exc
    return chunks[0] if len(chunks) <= 2 else b"".join(chunks)


_READ_FLAGS = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)


async def list_files(url: str | os.PathLike[str],
                     storage_options: Mapping[str, Any] | None = None,
                     stats: IOStats | None = None) -> list[FileInfo]:
    """The non-empty files under a folder or prefix (or the file ``url`` names), skipping
    hidden names (``_x``, ``.x``) below ``url``, sorted by path.

    Args:
        url: a local folder or file, or a URL of a registered scheme (``s3://``,
            ``gs://``, ``az://``, ...).
        storage_options: store settings.
        stats: where to count the listing requests.

    Returns:
        The :class:`FileInfo` (path, size) of each file, sorted by path.

    Raises:
        ObjectNotFoundError: nothing exists at ``url``.
    """
    counts = stats if stats is not None else IOStats()
    return await scheme_for(url).listing(_text(url), storage_options, counts)


def join(base: str | os.PathLike[str], *parts: str) -> str:
    """``base`` extended by path components, in the form its store uses (empty parts are
    dropped).

    Args:
        base: a local path or a URL of a registered scheme.
        *parts: the path components to append.

    Returns:
        The joined path or URL.

    Raises:
        UnsupportedFeatureError: no scheme is registered for the URL's.
    """
    text = _text(base)
    return scheme_for(text).join(text, *parts)


async def is_folder(url: str | os.PathLike[str]) -> bool:
    """Whether ``url`` names a folder or prefix: a local folder, or a URL ending with
    ``/`` (an object-store prefix without one is only known by listing it)."""
    return await scheme_for(url).is_folder(_text(url))


async def make_parents(url: str | os.PathLike[str]) -> None:
    """Create the folders the file ``url`` will be written into (only local files need
    them).

    Args:
        url: the path or URL of the file to be written.

    Raises:
        UnsupportedFeatureError: no scheme is registered for the URL's.
    """
    await scheme_for(url).make_parents(_text(url))


async def delete(url: str | os.PathLike[str],
                 storage_options: Mapping[str, Any] | None = None) -> None:
    """Delete the file ``url``; deleting a missing file is not an error.

    Args:
        url: the file's path or URL.
        storage_options: the store's settings.

    Raises:
        UnsupportedFeatureError: no scheme is registered for the URL's.
    """
    await scheme_for(url).delete(_text(url), storage_options)


async def abort_uploads(prefix: str, name: re.Pattern[str],
                        storage_options: Mapping[str, Any] | None = None) -> list[str]:
    """Abort a killed writer's incomplete uploads (S3 multipart uploads) of objects under
    ``prefix`` whose name matches ``name``; stores without such uploads do nothing.

    Returns:
        The URLs of the objects whose uploads were aborted.
    """
    scheme = scheme_for(prefix)
    abort = getattr(scheme, "abort_uploads", None)
    if abort is None:
        return []
    aborted: list[str] = await abort(prefix, name, storage_options)
    return aborted
