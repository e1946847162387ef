"""The base of every store's settings: how ``storage_options`` become a checked, frozen
configuration (:class:`StoreConfig`), and the fields the REST stores share
(:class:`RestConfig`: GCS, Azure, HTTP).

Parsing is cached: a dataset opens every file with the same options, so options made only
of strings, numbers, booleans and ``None`` (the usual case) are parsed once per process and
environment (the variables a store reads are part of the key).
"""

from __future__ import annotations

import dataclasses
import functools
import os
from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Self, cast

from aorc.errors import SchemaError
from aorc.io.base import StoreOptions, check_no_options_left, take_aliases
from aorc.io.remote import DEFAULT_MAX_UNRANGED
from aorc.io.transport import (
    HttpSettings,
    RetryPolicy,
    check_positive,
    pop_rest_options,
    scalar_options_key,
)

__all__ = ["DEFAULT_REST_CONCURRENCY", "DEFAULT_REST_PART_SIZE", "DEFAULT_REST_REQUEST_SIZE",
           "RestConfig", "StoreConfig", "UploadConfig"]

#: Requests (reads) in flight at once, per file, of a REST store.
DEFAULT_REST_CONCURRENCY = 8
#: The longest ranged GET of a REST store.
DEFAULT_REST_REQUEST_SIZE = 8 * 1024 * 1024
#: The part (block, chunk) of an upload to a REST store.
DEFAULT_REST_PART_SIZE = 8 * 1024 * 1024


class StoreConfig:
    """The settings of one store, built from ``storage_options`` by :meth:`from_options`.

    A subclass (a frozen dataclass) implements ``_parse`` and names, as the class keyword
    ``environment``, the prefixes of the environment variables its parsing reads.
    """

    #: Prefixes of the environment variables that decide the parsed settings.
    ENVIRONMENT: ClassVar[tuple[str, ...]] = ()

    def __init_subclass__(cls, *, environment: tuple[str, ...] | None = None,
                          **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if environment is not None:
            cls.ENVIRONMENT = environment

    @classmethod
    def from_options(cls, storage_options: Mapping[str, Any] | None) -> Self:
        """Check ``storage_options`` (see the store module's docstring) and build the
        settings; options made only of scalars are parsed once per process (and
        environment).

        Raises:
            SchemaError: an unknown option or a bad value.

        Args:
            storage_options: the settings (``None``: from the environment alone).

        Returns:
            The checked settings.
        """
        options = dict(storage_options or {})
        key = scalar_options_key(options)
        if key is None:
            return cls._parse(options)
        environment = tuple(sorted((k, v) for k, v in os.environ.items()
                                   if k.startswith(cls.ENVIRONMENT))) if cls.ENVIRONMENT else ()
        parsed = _parse_cached(cast(Hashable, cls), key, environment)
        return cast(Self, parsed)

    @classmethod
    def _parse(cls, options: dict[str, Any]) -> Self:
        """The settings of ``options`` (a copy the method may consume)."""
        raise NotImplementedError


@functools.lru_cache(maxsize=64)
def _parse_cached(cls: Hashable, key: tuple[tuple[str, str, Any], ...],
                  environment: tuple[tuple[str, str], ...]) -> StoreConfig:
    """The settings of options ``key`` (``cls`` and ``environment`` key the cache)."""
    return cast(type[StoreConfig], cls)._parse({name: value for name, _, value in key})


@dataclass(frozen=True)
class RestConfig(StoreConfig):
    """The settings every REST store shares; a store names its scheme (for messages) and its
    own options (option name to field name) as the class keywords ``scheme`` and ``aliases``.

    Attributes:
        http: connection settings.
        retry: the retry policy.
        store: read tuning.
        max_unranged: the most bytes accepted from a server that ignores ``Range``.
    """

    #: The store's name in the message about unknown options.
    SCHEME: ClassVar[str] = ""
    #: The option names of the store's own fields (option name to field name).
    ALIASES: ClassVar[Mapping[str, str]] = {}

    def __init_subclass__(cls, *, scheme: str | None = None,
                          aliases: Mapping[str, str] | None = None, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if scheme is not None:
            cls.SCHEME = scheme
        if aliases is not None:
            cls.ALIASES = aliases

    http: HttpSettings = dataclasses.field(default_factory=HttpSettings)
    retry: RetryPolicy = dataclasses.field(default_factory=RetryPolicy)
    store: StoreOptions = dataclasses.field(default_factory=lambda: StoreOptions(
        max_concurrency=DEFAULT_REST_CONCURRENCY, max_request_size=DEFAULT_REST_REQUEST_SIZE))
    max_unranged: int = DEFAULT_MAX_UNRANGED

    @classmethod
    def _fields(cls, options: dict[str, Any]) -> dict[str, Any]:
        """The fields named by ``options`` (consumed): the shared ones, then the store's
        ``ALIASES``; any option left is refused.

        Raises:
            SchemaError: an unknown option.
        """
        fields = pop_rest_options(options, max_concurrency=DEFAULT_REST_CONCURRENCY,
                                  max_request_size=DEFAULT_REST_REQUEST_SIZE)
        take_aliases(options, cls.ALIASES, fields)
        check_no_options_left(options, cls.SCHEME)
        return fields


@dataclass(frozen=True)
class UploadConfig(RestConfig):
    """The settings of a REST store that also writes, in parts.

    Attributes:
        part_size: bytes per part (block, chunk) of an upload.
        memory_budget: most bytes a writer holds buffered plus in flight.
        overwrite: a write replaces an existing object (``False``: it fails with
            :class:`~aorc.errors.ObjectExistsError` instead).
    """

    part_size: int = DEFAULT_REST_PART_SIZE
    memory_budget: int | None = None
    overwrite: bool = True

    def __post_init__(self) -> None:
        if not isinstance(self.overwrite, bool):
            raise SchemaError("storage option overwrite must be a bool")
        check_positive(self, ("part_size", "memory_budget", "max_unranged"))
