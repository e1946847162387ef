"""What an Iceberg table's properties and FileIO settings mean for aorc.

- :func:`write_options`: the ``write.orc.*`` table properties as an :class:`aorc.WriteOptions`
  (Iceberg Java's names and defaults):

  ==================================  ===========  =========================================
  property                            default      aorc option
  ==================================  ===========  =========================================
  ``write.orc.stripe-size-bytes``     64 MiB       ``stripe_size``
  ``write.orc.compression-codec``     ``zlib``     ``compression`` (``none``, ``zlib``,
                                                   ``snappy``, ``lz4``, ``zstd``)
  ``write.orc.compression-strategy``  ``speed``    ``speed``: ORC Java's levels (aorc's
                                                   default); ``compression``: zlib level 6
  ``write.orc.compression-level``     (none)       ``compression_level`` (an aorc extension:
                                                   Iceberg has no ORC level property)
  ``write.orc.bloom.filter.columns``  (none)       ``bloom_filter_columns`` (comma-separated)
  ``write.orc.bloom.filter.fpp``      0.05         ``bloom_filter_fpp``
  ==================================  ===========  =========================================

- :func:`storage_options`: the settings aorc's stores take for a table's files, from the
  table's FileIO properties (``s3.endpoint``, ``s3.access-key-id``, ``s3.secret-access-key``,
  ``s3.session-token``, ``s3.region``/``client.region``, ``s3.force-virtual-addressing``),
  overridden by the caller's ``storage_options``.
- :func:`target_file_size`: ``write.target-file-size-bytes`` (512 MiB).
- :func:`store_path`: what aorc's stores open for a table file's location: Iceberg (Java,
  pyiceberg) takes the path of a ``file://`` location literally, where aorc, following RFC
  8089, would percent-decode it (``ts=a%20b`` is a folder with a percent sign to Iceberg).
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Mapping
from typing import Any

from aorc.errors import SchemaError
from aorc.io import registry
from aorc.options import WriteOptions

__all__ = [
    "DEFAULT_BLOOM_FPP",
    "DEFAULT_CODEC",
    "DEFAULT_TARGET_FILE_SIZE",
    "storage_options",
    "store_path",
    "target_file_size",
    "write_options",
]

#: Iceberg's defaults for ORC data files.
DEFAULT_CODEC = "zlib"
DEFAULT_BLOOM_FPP = 0.05
DEFAULT_TARGET_FILE_SIZE = 512 << 20
_STRIPE_SIZE = "write.orc.stripe-size-bytes"
_CODEC = "write.orc.compression-codec"
_STRATEGY = "write.orc.compression-strategy"
_LEVEL = "write.orc.compression-level"
_BLOOM_COLUMNS = "write.orc.bloom.filter.columns"
_BLOOM_FPP = "write.orc.bloom.filter.fpp"
_TARGET_SIZE = "write.target-file-size-bytes"

#: pyiceberg FileIO property -> aorc S3 storage option.
_S3_PROPERTIES = {
    "s3.endpoint": "endpoint_url",
    "s3.access-key-id": "aws_access_key_id",
    "s3.secret-access-key": "aws_secret_access_key",
    "s3.session-token": "aws_session_token",
    "s3.region": "region",
    "client.region": "region",
    "client.access-key-id": "aws_access_key_id",
    "client.secret-access-key": "aws_secret_access_key",
    "client.session-token": "aws_session_token",
}


def _number(properties: Mapping[str, str], key: str, kind: type) -> Any:
    text = properties.get(key)
    if text is None:
        return None
    try:
        return kind(text)
    except ValueError:
        raise SchemaError(f"table property {key} must be a number, got {text!r}") from None


def write_options(properties: Mapping[str, str], **overrides: Any) -> WriteOptions:
    """The write options of a table's ORC data files (see the module docstring); keyword
    ``overrides`` (any :class:`aorc.WriteOptions` field) win.

    Raises:
        SchemaError: a property with a bad value.
    """
    opts: dict[str, Any] = {"compression": properties.get(_CODEC, DEFAULT_CODEC).lower(),
                            "bloom_filter_fpp": DEFAULT_BLOOM_FPP}
    stripe = _number(properties, _STRIPE_SIZE, int)
    if stripe is not None:
        opts["stripe_size"] = stripe
    strategy = properties.get(_STRATEGY, "speed").lower()
    if strategy not in ("speed", "compression"):
        raise SchemaError(f"table property {_STRATEGY} must be 'speed' or 'compression', got "
                          f"{strategy!r}")
    if strategy == "compression" and opts["compression"] == "zlib":
        opts["compression_level"] = 6
    level = _number(properties, _LEVEL, int)
    if level is not None:
        opts["compression_level"] = level
    columns = [c.strip() for c in properties.get(_BLOOM_COLUMNS, "").split(",") if c.strip()]
    if columns:
        opts["bloom_filter_columns"] = columns
    fpp = _number(properties, _BLOOM_FPP, float)
    if fpp is not None:
        opts["bloom_filter_fpp"] = fpp
    opts.update(overrides)
    return WriteOptions.create(None, opts, caller="aorc.iceberg")


def store_path(location: str) -> str:
    """The path or URL aorc opens for an Iceberg file location (see the module docstring):
    the literal path of a local URL, any other location as it is."""
    if "://" in location and isinstance(registry.scheme_for(location), registry.LocalScheme):
        return urllib.parse.urlsplit(location).path
    return location


def target_file_size(properties: Mapping[str, str]) -> int:
    """``write.target-file-size-bytes`` (default 512 MiB)."""
    size = _number(properties, _TARGET_SIZE, int)
    return DEFAULT_TARGET_FILE_SIZE if size is None else max(1, size)


def storage_options(location: str, io_properties: Mapping[str, str],
                    overrides: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """aorc's store settings for files at ``location`` (see the module docstring).

    FileIO properties are translated for the stores that take them (S3); ``overrides`` are
    passed as they are and win."""
    out: dict[str, Any] = {}
    if registry.is_remote(location) and isinstance(registry.scheme_for(location),
                                                   registry.S3Scheme):
        for key, option in _S3_PROPERTIES.items():
            if key in io_properties:
                out[option] = io_properties[key]
        virtual = io_properties.get("s3.force-virtual-addressing")
        if virtual is not None:
            out["addressing_style"] = "virtual" if virtual.lower() == "true" else "path"
    out.update(overrides or {})
    return out
