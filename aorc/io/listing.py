"""What listings of every store share: the entries they return, the names they skip, and the
key space of object stores (keys joined with ``/``, prefixes as folders).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from aorc.errors import ObjectNotFoundError, UnsupportedFeatureError
from aorc.io.base import IOStats, Store
from aorc.io.transport import redact_url

__all__ = [
    "LIST_PAGE_SIZE",
    "FileInfo",
    "Level",
    "ObjectNamespace",
    "ReadOnlyScheme",
    "folder_prefix",
    "is_hidden",
    "level_of",
    "listed_files",
    "slash_join",
    "visible",
    "visible_files",
]

#: Keys asked for per listing request (S3's and GCS's maximum; Azure's is 5,000).
LIST_PAGE_SIZE = 1000


@dataclass(frozen=True, slots=True)
class FileInfo:
    """One file found by :func:`aorc.io.list_files`.

    Attributes:
        path: its path or URL, in the form of the listed root (``root/sub/name``).
        size: its size in bytes (from the listing).
    """

    path: str
    size: int


@dataclass(frozen=True)
class Level:
    """One level of a folder or prefix (see :func:`aorc.io.registry.list_level`).

    Attributes:
        folders: the URLs (or paths) of the folders directly under it, each ending with the
            separator (``/``), sorted; hidden names skipped.
        files: the non-empty files directly under it, sorted by path; hidden names skipped.
    """

    folders: list[str]
    files: list[FileInfo]


def level_of(base: str, found: list[tuple[str, int]], prefixes: list[str]) -> Level:
    """The :class:`Level` of an object store's delimiter listing: ``found`` (key, size)
    pairs and ``prefixes`` (keys ending with ``/``) under a prefix, as URLs under ``base``
    (the URL of the bucket's root, ending with ``/``), hidden and empty ones skipped."""
    folders = sorted(base + p for p in prefixes
                     if not is_hidden(p.rstrip("/").rpartition("/")[2]))
    files = sorted((FileInfo(base + k, size) for k, size in found
                    if size and not k.endswith("/") and not is_hidden(k.rpartition("/")[2])),
                   key=lambda f: f.path)
    return Level(folders, files)


def is_hidden(name: str) -> bool:
    """Whether a file or folder name is skipped by listings (``_SUCCESS``, ``.crc``, ...),
    as Spark and Hive skip them."""
    return name.startswith((".", "_"))


def visible(relative: str) -> bool:
    """Whether no component of the path ``relative`` (below the listed root) is hidden."""
    return not any(is_hidden(p) for p in relative.split("/") if p)


def folder_prefix(key: str) -> str:
    """The listing prefix of ``key`` as a folder: ``key`` ending with ``/`` (empty stays
    empty: the whole bucket)."""
    return key if not key or key.endswith("/") else key + "/"


def visible_files(base: str, prefix: str, found: list[tuple[str, int]]) -> list[FileInfo]:
    """The files of a flat listing: ``found`` (key, size) pairs under ``prefix`` as URLs
    under ``base`` (the bucket's root, ending with ``/``), empty and hidden ones skipped."""
    return [FileInfo(base + key, size) for key, size in found
            if size and visible(key[len(prefix):])]


def listed_files(url: str, base: str, prefix: str,
                 found: list[tuple[str, int]]) -> list[FileInfo]:
    """The files of ``url``'s flat listing (as :func:`visible_files`).

    Raises:
        ObjectNotFoundError: nothing was listed.
    """
    if not found:
        raise ObjectNotFoundError(f"{url}: no files found")
    return visible_files(base, prefix, found)


def slash_join(base: str, *parts: str) -> str:
    """``base`` and ``parts`` joined with single slashes (empty parts dropped)."""
    return "/".join([base.rstrip("/"), *(p.strip("/") for p in parts if p)])


class ObjectNamespace:
    """What object stores share: keys joined with ``/``, a prefix (or bare bucket) is a
    folder, and there are no folders to make."""

    def join(self, base: str, *parts: str) -> str:
        """``base`` extended by path components."""
        return slash_join(base, *parts)

    async def is_folder(self, url: str) -> bool:
        """Whether ``url`` ends with ``/`` or names a bare bucket (no request)."""
        return url.endswith("/") or "/" not in url.partition("://")[2]

    async def make_parents(self, url: str) -> None:
        """Nothing: object stores have no folders to make."""
        return None

    @staticmethod
    async def flat_pages(page: Callable[[str | None],
                                        Awaitable[tuple[list[tuple[str, int]], str | None]]],
                         max_pages: int | None = None) -> tuple[list[tuple[str, int]], bool]:
        """Every (key, size) of a paged flat listing, or those of its first ``max_pages`` pages;
        and whether keys were left.

        Args:
            page: gives a page's (key, size) pairs and the token of the next page (none at the
                end) from the token of its own (``None`` for the first).
            max_pages: the most pages to request (``None``: all).

        Returns:
            The pairs, and whether more pages follow.
        """
        out: list[tuple[str, int]] = []
        token: str | None = None
        pages = 0
        while True:
            found, token = await page(token)
            out += found
            pages += 1
            if not token or pages == max_pages:
                return out, bool(token)


class ReadOnlyScheme(ObjectNamespace):
    """A base for schemes that only read single files: subclasses implement
    :meth:`open_input`; listing gives the file itself (its size from one tail read), writing
    and deleting are refused, no storage option is checked up front."""

    remote = True

    def check_options(self, storage_options: Mapping[str, Any]) -> None:
        """Nothing to check before the store is opened."""

    def open_input(self, url: str, storage_options: Mapping[str, Any] | None) -> Store:
        """The store reading ``url``."""
        raise NotImplementedError

    def open_output(self, url: str, storage_options: Mapping[str, Any] | None) -> Any:
        """Refused: the scheme is read-only."""
        raise UnsupportedFeatureError(f"{url.partition('://')[0]}:// URLs are read-only")

    async def listing(self, url: str, storage_options: Mapping[str, Any] | None,
                      stats: IOStats) -> list[FileInfo]:
        """The file ``url`` itself; a folder has no listing."""
        if url.split("?", 1)[0].endswith("/"):
            raise UnsupportedFeatureError(
                f"{url.partition('://')[0]}:// has no listing: cannot read the folder "
                f"{redact_url(url)}; pass the files' URLs (a list of them is a dataset)")
        store = self.open_input(url, storage_options)
        try:
            _, size = await store.read_tail(1)
        finally:
            stats.requests += store.stats.requests
            stats.bytes += store.stats.bytes
            stats.retries += store.stats.retries
            await store.close()
        return [FileInfo(url, size)]

    async def is_folder(self, url: str) -> bool:
        """Whether the URL's path ends with ``/``."""
        return url.split("?", 1)[0].endswith("/")

    async def delete(self, url: str, storage_options: Mapping[str, Any] | None) -> None:
        """Refused: the scheme is read-only."""
        raise UnsupportedFeatureError(f"{url.partition('://')[0]}:// URLs are read-only")
