"""What listings of every store share: the entries they return, the names they skip, and the
key space of object stores (keys joined with ``/``, prefixes as folders).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "LIST_PAGE_SIZE",
    "FileInfo",
    "ObjectNamespace",
    "is_hidden",
    "slash_join",
    "visible",
]

#: Keys asked for per listing request (S3's and GCS's maximum; Azure's is 5,000).
LIST_PAGE_SIZE = 1000


@dataclass(frozen=True)
class FileInfo:
    """One file found by :func:`aorc.io.list_files`.

    Attributes:
        path: its path or URL, in the form of the listed root (``root/sub/name``).
        size: its size in bytes (from the listing).
    """

    path: str
    size: int


def is_hidden(name: str) -> bool:
    """Whether a file or folder name is skipped by listings (``_SUCCESS``, ``.crc``, ...),
    as Spark and Hive skip them."""
    return name.startswith((".", "_"))


def visible(relative: str) -> bool:
    """Whether no component of the path ``relative`` (below the listed root) is hidden."""
    return not any(is_hidden(p) for p in relative.split("/") if p)


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
