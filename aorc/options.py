"""Typed, frozen option objects with one set of defaults.

:class:`WriteOptions` holds everything that says *how* an ORC file is written. Every writing
entry point takes one (``options=``) and, as before, the same settings as keyword arguments:
:func:`aorc.write_table`, :func:`aorc.open_writer`, :class:`aorc.RollingSink`,
:func:`aorc.spark.write` and the CLI's ``convert``. When both are given, **keywords override
the fields of the options object** (``options.replace(**keywords)``), and the result is checked
like any other: a bad value raises :class:`~aorc.errors.SchemaError`.

::

    opts = aorc.WriteOptions(compression="zlib", stripe_size=16 << 20)
    await aorc.write_table(table, "a.orc", options=opts)
    await aorc.write_table(table, "b.orc", options=opts, compression="none")  # keyword wins

The values are checked when the object is built. Column names in ``bloom_filter_columns`` can
only be checked against a schema: :meth:`WriteOptions.resolve` does it when a writer opens,
and returns the encoder settings (:class:`aorc.format.columns.encode.EncodeOptions`); the user
metadata stays in :attr:`WriteOptions.metadata`.
"""

from __future__ import annotations

import dataclasses
import math
import types
import zoneinfo
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from aorc.errors import SchemaError
from aorc.format.codec.bloom import DEFAULT_FPP
from aorc.format.codec.compression import (
    DEFAULT_BLOCK_SIZE,
    MAX_BLOCK_SIZE,
    CompressionKind,
    codec_named,
    writable_names,
)
from aorc.format.columns.encode.base import (
    DEFAULT_COMPRESSION,
    DEFAULT_DICTIONARY_KEY_SIZE_THRESHOLD,
    DEFAULT_ROW_INDEX_STRIDE,
    DEFAULT_STRIPE_SIZE,
    DEFAULT_TIMEZONE,
    EncodeOptions,
)
from aorc.format.encryption.spec import canonical_spec
from aorc.format.projection import resolve_column
from aorc.format.types import OrcType
from aorc.threads import thread_count

__all__ = ["LEVEL_RANGES", "MIN_ROW_INDEX_STRIDE", "WriteOptions"]

#: ORC Java's smallest row index stride.
MIN_ROW_INDEX_STRIDE = 1000


# =========================================================================== checks

def _int_option(name: str, value: Any, low: int, high: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise SchemaError(f"{name} must be an integer, got {value!r}")
    number = int(value)
    if number < low or (high is not None and number > high):
        bound = f"at least {low}" if high is None else f"between {low} and {high}"
        raise SchemaError(f"{name} must be {bound}, got {number}")
    return number


def _float_option(name: str, value: Any, low: float, high: float, *,
                  open_low: bool = False, open_high: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)):
        raise SchemaError(f"{name} must be a number, got {value!r}")
    number = float(value)
    too_low = number <= low if open_low else number < low
    too_high = number >= high if open_high else number > high
    if math.isnan(number) or too_low or too_high:
        lo, hi = "(" if open_low else "[", ")" if open_high else "]"
        raise SchemaError(f"{name} must be in {lo}{low}, {high}{hi}, got {number}")
    return number


def _compression(value: Any) -> str:
    """The canonical name of a writable codec given as a name, a CompressionKind or None."""
    names = writable_names()
    if value is None:
        value = CompressionKind.NONE
    if isinstance(value, CompressionKind):
        codec = codec_named(value.name.lower())
        if codec is None or not codec.writable:
            raise SchemaError(f"aorc cannot write {value.name} compression")
        return codec.name
    codec = codec_named(value.lower()) if isinstance(value, str) else None
    if codec is None or not codec.writable:
        raise SchemaError(f"compression must be one of {', '.join(map(repr, names))}, "
                          f"got {value!r}")
    return codec.name


def _stride(value: Any) -> int:
    stride = _int_option("row_index_stride", value, 0)
    if 0 < stride < MIN_ROW_INDEX_STRIDE:
        raise SchemaError(f"row_index_stride must be 0 (no row index) or at least "
                          f"{MIN_ROW_INDEX_STRIDE}, as in ORC Java; got {stride}")
    return stride


def _timezone(value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise SchemaError(f"timezone must be a time zone name such as 'UTC', got {value!r}")
    try:
        zoneinfo.ZoneInfo(value)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError) as exc:
        raise SchemaError(f"unknown time zone {value!r}") from exc
    return value


def _bloom_names(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str) or not isinstance(value, Iterable):
        raise SchemaError("bloom_filter_columns must be a list of column names, "
                          f"got {value!r}")
    names = tuple(value)
    for name in names:
        if not isinstance(name, str):
            raise SchemaError(f"bloom_filter_columns must hold column names, got {name!r}")
    return names


def _user_metadata(value: Any) -> Mapping[str, bytes]:
    if value is None:
        return types.MappingProxyType({})
    if not isinstance(value, Mapping):
        raise SchemaError(f"metadata must be a dict of str to bytes or str, got {value!r}")
    out = {}
    for key, item in value.items():
        if isinstance(key, bytes):
            key = key.decode("utf-8")
        if not isinstance(key, str):
            raise SchemaError(f"metadata keys must be strings, got {key!r}")
        if isinstance(item, str):
            item = item.encode("utf-8")
        if not isinstance(item, (bytes, bytearray, memoryview)):
            raise SchemaError(f"metadata value of {key!r} must be bytes or str, got "
                              f"{type(item).__name__}")
        out[key] = bytes(item)
    return types.MappingProxyType(out)


#: The levels ``compression_level`` accepts per codec (ORC Java's ranges); the other codecs
#: have no levels and ignore it.
LEVEL_RANGES: dict[str, tuple[int, int]] = {"zstd": (1, 22), "zlib": (0, 9)}


def _level(value: Any, compression: str) -> int | None:
    if value is None:
        return None
    low, high = LEVEL_RANGES.get(compression, (-(2**31), 2**31 - 1))
    return _int_option("compression_level", value, low, high)


def _threads(value: Any) -> bool | int:
    if isinstance(value, bool):
        return value
    return _int_option("use_threads", value, 1)


# =========================================================================== options

@dataclass(frozen=True)
class WriteOptions:
    """How to write an ORC file; every field has pyarrow.orc's name and is checked on creation.

    Attributes:
        compression: the codec: "zstd" (default), "zlib", "snappy", "lz4" or "none"
            ("uncompressed", ``None`` and :class:`aorc.format.codec.compression.CompressionKind`
            members are accepted and stored by their canonical name).
        compression_block_size: uncompressed bytes per compression chunk (256 KiB).
        stripe_size: target stripe size in bytes (64 MiB).
        row_index_stride: rows per row group (10000; 0 writes no row index).
        dictionary_key_size_threshold: strings are dictionary encoded when the distinct
            values of the first row group are at most this fraction of its values (0.8).
        bloom_filter_columns: names of the columns (dotted for nested columns) that get bloom
            filters, with their descendants, as ORC Java's ``orc.bloom.filter.columns``.
        bloom_filter_fpp: the bloom filters' false positive probability (0.01).
        metadata: the footer's user metadata, str to bytes (str values are UTF-8 encoded).
        timezone: the zone naive timestamps are wall-clock times in ("UTC").
        use_threads: encode and compress the columns of a stripe on the process's shared
            thread pool: ``True`` (default) uses as many threads as CPUs, ``False`` one, an
            integer that many. The file's bytes are the same whatever the value.
        compression_level: the codec level of every stream; None (default) uses ORC Java's
            levels (zstd 3, as ``orc.compression.zstd.level``; zlib 2 or 1 per stream kind
            and 6 for the footer). zstd takes 1 to 22, zlib 0 to 9; snappy, lz4 and none
            have no levels and ignore it. pyarrow.orc's default
            (``compression_strategy="speed"``) is zstd level 1.
        encrypt: the columns to encrypt and their master keys, in ORC Java's spelling
            (``orc.encrypt``): ``"pii:ssn,email;hr:salary"``, or a mapping
            ``{"pii": ["ssn", "email"]}``; the writer needs ``keys=`` (a key provider).
        masks: how the clear copies of encrypted columns are masked, in ORC Java's spelling
            (``orc.mask``): ``"sha256:email"`` or ``{"sha256": ["email"]}``; columns
            without a mask are nullified. aorc writes ``nullify`` and ``sha256``.

    Raises:
        SchemaError: a value is of the wrong type or out of range.
    """

    compression: str = DEFAULT_COMPRESSION.name.lower()
    compression_block_size: int = DEFAULT_BLOCK_SIZE
    stripe_size: int = DEFAULT_STRIPE_SIZE
    row_index_stride: int = DEFAULT_ROW_INDEX_STRIDE
    dictionary_key_size_threshold: float = DEFAULT_DICTIONARY_KEY_SIZE_THRESHOLD
    bloom_filter_columns: tuple[str, ...] = ()
    bloom_filter_fpp: float = DEFAULT_FPP
    metadata: Mapping[str, bytes] = field(default_factory=dict, hash=False)
    timezone: str = DEFAULT_TIMEZONE
    use_threads: bool | int = True
    compression_level: int | None = None
    encrypt: str | None = None
    masks: str | None = None

    def __post_init__(self) -> None:
        checked = {
            "compression": _compression(self.compression),
            "compression_block_size": _int_option(
                "compression_block_size", self.compression_block_size, 1, MAX_BLOCK_SIZE),
            "stripe_size": _int_option("stripe_size", self.stripe_size, 1),
            "row_index_stride": _stride(self.row_index_stride),
            "dictionary_key_size_threshold": _float_option(
                "dictionary_key_size_threshold", self.dictionary_key_size_threshold, 0.0, 1.0),
            "bloom_filter_columns": _bloom_names(self.bloom_filter_columns),
            "bloom_filter_fpp": _float_option("bloom_filter_fpp", self.bloom_filter_fpp,
                                              0.0, 1.0, open_low=True, open_high=True),
            "metadata": _user_metadata(self.metadata),
            "timezone": _timezone(self.timezone),
            "use_threads": _threads(self.use_threads),
            "encrypt": canonical_spec(self.encrypt, "encrypt"),
            "masks": canonical_spec(self.masks, "masks"),
        }
        checked["compression_level"] = _level(self.compression_level,
                                              _compression(self.compression))
        for name, value in checked.items():
            object.__setattr__(self, name, value)

    def __reduce__(self) -> tuple[Any, tuple[dict[str, Any]]]:
        """Pickle support (Spark ships options to its executors): the metadata view is not
        picklable, its dict is."""
        values = {name: getattr(self, name) for name in self.names()}
        values["metadata"] = dict(self.metadata)
        return _restore, (values,)

    @classmethod
    def names(cls) -> tuple[str, ...]:
        """The option names, in field order.

        Returns:
            The names.
        """
        return tuple(f.name for f in dataclasses.fields(cls))

    @classmethod
    def create(cls, options: WriteOptions | None = None, keywords: Mapping[str, Any] | None = None,
               *, caller: str = "open_writer") -> WriteOptions:
        """``options`` (default: the defaults) with ``keywords`` overriding its fields.

        Args:
            options: an options object, or None.
            keywords: keyword options as the writing functions take them.
            caller: the function named in the message about an unknown keyword.

        Raises:
            SchemaError: ``options`` is not a WriteOptions, a keyword is unknown or a value
                is bad.

        Returns:
            The options.
        """
        if options is not None and not isinstance(options, WriteOptions):
            raise SchemaError(f"options must be an aorc.WriteOptions, got "
                              f"{type(options).__name__}")
        keywords = dict(keywords or {})
        unknown = sorted(set(keywords) - set(cls.names()))
        if unknown:
            raise SchemaError(f"{caller}() got an unexpected keyword argument {unknown[0]!r} "
                              f"(options: {', '.join(cls.names())})")
        base = options if options is not None else cls()
        return base.replace(**keywords) if keywords else base

    def replace(self, **changes: Any) -> WriteOptions:
        """A copy with some fields changed (and checked).

        Raises:
            SchemaError: a bad value.

        Args:
            **changes: field names and their new values.

        Returns:
            A new :class:`WriteOptions`.
        """
        return dataclasses.replace(self, **changes)

    @property
    def compression_kind(self) -> CompressionKind:
        """The codec as the ORC postscript records it."""
        codec = codec_named(self.compression)
        assert codec is not None  # checked on creation
        return codec.kind

    @property
    def threads(self) -> int:
        """How many threads a write may use (see ``use_threads``)."""
        return thread_count(self.use_threads)

    def resolve(self, root: OrcType) -> EncodeOptions:
        """The encoder settings for a file whose schema is ``root``.

        Raises:
            SchemaError: a name in ``bloom_filter_columns`` is not a column of ``root``.

        Args:
            root: the file's ORC type.

        Returns:
            The encoder's settings.
        """
        bloom: set[int] = set()
        for name in self.bloom_filter_columns:
            node = resolve_column(root, name)
            bloom.update(range(node.column_id, node.max_column_id + 1))
        return EncodeOptions(
            compression=self.compression_kind,
            compression_block_size=self.compression_block_size,
            stripe_size=self.stripe_size,
            row_index_stride=self.row_index_stride,
            dictionary_key_size_threshold=self.dictionary_key_size_threshold,
            bloom_filter_columns=bloom,
            bloom_filter_fpp=self.bloom_filter_fpp,
            timezone=self.timezone,
            threads=self.threads,
            compression_level=self.compression_level,
        )


def _restore(values: dict[str, Any]) -> WriteOptions:
    return WriteOptions(**values)
