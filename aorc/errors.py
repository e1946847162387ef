"""The exceptions aorc raises.

Every error aorc raises on purpose is an :class:`AorcError`::

    AorcError
    ├── FormatError              the bytes are not a valid ORC file (also a ValueError)
    │   ├── CorruptFileError     a structure is damaged: bad lengths, truncated streams, ...
    │   └── UnsupportedVersionError   a future format version that aorc refuses to guess at
    ├── UnsupportedFeatureError  valid ORC that aorc cannot handle (e.g. an unknown codec)
    ├── DecryptionError          a key does not decrypt an encrypted column (wrong key or
    │                            version); names the key and the column, never its bytes
    ├── SchemaError              a user-supplied schema, column name or option is wrong
    │   │                        (also a ValueError)
    │   └── UnwritableTypeError  an Arrow type ORC cannot hold; names the cast that works
    ├── InputTypeError           data given to a writer is of no kind it accepts (also a
    │                            TypeError)
    ├── ResourceLimitError       reading would exceed an explicit limit (``max_decoded_bytes``):
    │                            the file may be valid, it needs more memory than allowed
    ├── OldOffsetsError          a RollingSink stream got offsets at or below those it already
    │                            wrote (a replay; on_old_offsets="skip" drops them)
    └── StoreError               reading or writing the store failed (also an OSError)
        ├── ObjectNotFoundError  the file/object does not exist (also FileNotFoundError)
        ├── AccessDeniedError    the store refused access (also PermissionError)
        ├── ObjectChangedError   the object was replaced while it was being read
        ├── ObjectExistsError    a create-only write found the object there (also
        │                        FileExistsError)
        └── RetriesExhaustedError  transient failures persisted through every retry

Errors carry where they happened (path, stripe, column, stream) when it is known.

Warnings aorc gives are of class :class:`AorcWarning` (a :class:`UserWarning`): for example
about the files a dataset skips because they sit at another partition depth.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import sys
import types
import warnings
from collections.abc import Iterator

__all__ = [
    "AccessDeniedError",
    "AorcError",
    "AorcWarning",
    "CorruptFileError",
    "DecryptionError",
    "FormatError",
    "InputTypeError",
    "ObjectChangedError",
    "ObjectExistsError",
    "ObjectNotFoundError",
    "OldOffsetsError",
    "ResourceLimitError",
    "RetriesExhaustedError",
    "SchemaError",
    "StoreError",
    "UnsupportedFeatureError",
    "UnsupportedVersionError",
    "UnwritableTypeError",
    "deferred_warnings",
    "warn",
]


class AorcError(Exception):
    """Root of every error aorc raises on purpose."""


class AorcWarning(UserWarning):
    """Something aorc did on its own that the caller may want to know about (files of a
    dataset it skipped, ...)."""


class FormatError(AorcError, ValueError):
    """The data is not a valid ORC file."""


class CorruptFileError(FormatError):
    """A structure inside the file is damaged or inconsistent."""


class UnsupportedVersionError(FormatError):
    """The file declares a format version aorc does not read."""


class UnsupportedFeatureError(AorcError):
    """The file is valid ORC but uses a feature aorc does not support."""


class DecryptionError(AorcError):
    """A key provider's key does not decrypt an encrypted column of the file (a wrong key,
    or a version the provider lacks). The message names the key and the column; key bytes
    are never shown."""


class SchemaError(AorcError, ValueError):
    """A schema, column selection or option given by the caller is wrong."""


class UnwritableTypeError(SchemaError):
    """A column of an Arrow type ORC cannot hold (``time64``, ``duration``, intervals,
    decimals over 38 digits, ...). The message names the column, once known, and the
    ``pyarrow`` cast that makes it writable.

    Attributes:
        dt: the Arrow type (a ``pyarrow.DataType``).
        column: the column's dotted path (``""`` until known).
        reason: why, when there is more to say than the type.
    """

    def __init__(self, message: str, *, dt: object = None, column: str = "",
                 reason: str = "") -> None:
        super().__init__(message)
        self.dt, self.column, self.reason = dt, column, reason


class InputTypeError(AorcError, TypeError):
    """Data given to a writer is of no kind it accepts (the message lists them: see
    :mod:`aorc.write.inputs`)."""


class ResourceLimitError(AorcError):
    """Reading a file would exceed an explicit, documented limit (``max_decoded_bytes``):
    raised before the memory is allocated. The file may be valid; raise the limit to read it.
    Sizes a file's bytes cannot legitimately encode raise :class:`CorruptFileError` instead."""


class OldOffsetsError(AorcError):
    """A :class:`~aorc.sink.RollingSink` stream was given records at or below the offset it
    already wrote: a replay (e.g. after a consumer rebalance). ``on_old_offsets="skip"``
    drops such records instead; the sink stays usable either way."""


class StoreError(AorcError, OSError):
    """Reading from or writing to a store failed."""


class ObjectNotFoundError(StoreError, FileNotFoundError):
    """The file or object does not exist."""


class AccessDeniedError(StoreError, PermissionError):
    """The store refused access to the file or object."""


class ObjectChangedError(StoreError):
    """The object changed (new version or ETag) while it was being read."""


class ObjectExistsError(StoreError, FileExistsError):
    """A create-only write (``overwrite=False``) found an object already there."""


class RetriesExhaustedError(StoreError):
    """Transient store failures persisted through every configured retry."""


#: Frames of these files are not the user's: aorc's own, and the machinery between a caller
#: and aorc's code (asyncio's loop, thread pools, contextlib).
_AORC = os.path.dirname(os.path.abspath(__file__)) + os.sep
_PLUMBING = tuple(f"{os.sep}{name}" for name in (f"asyncio{os.sep}", f"concurrent{os.sep}",
                                                 "threading.py", "contextlib.py"))


#: The warnings of the innermost :func:`deferred_warnings` block of this context, if any.
_DEFERRED: contextvars.ContextVar[list[tuple[str, type[Warning]]] | None] = \
    contextvars.ContextVar("aorc_deferred_warnings", default=None)


@contextlib.contextmanager
def deferred_warnings() -> Iterator[None]:
    """Hold the warnings :func:`warn` issues in this context until the block ends, then
    issue them from the thread that entered it, attributed to the user's frame there.

    The context reaches aorc's event loop thread through :func:`aorc.sync.run` and the
    worker threads of :func:`aorc.dataset.local.run_groups`, where no frame is the user's: a
    warning issued there would name aorc's line instead of the caller's. A block that raises
    drops its warnings (the exception is what the caller sees); blocks nest (the inner one
    hands its warnings to the outer one).

    Yields:
        Nothing.
    """
    held: list[tuple[str, type[Warning]]] = []
    token = _DEFERRED.set(held)
    try:
        yield
    finally:
        _DEFERRED.reset(token)
    for message, category in list(held):  # (held is no longer appended to)
        warn(message, category)


def warn(message: str, category: type[Warning] = AorcWarning) -> None:
    """Issue a warning attributed to the user's code: the innermost calling frame outside
    aorc (and outside asyncio's loop and thread pools), so ``python -W error`` and warning
    filters by module see the line that called aorc. On a worker thread, where no frame is
    the user's, the warning is attributed to aorc's frame that issued it.

    Inside a :func:`deferred_warnings` block (in its context, on any thread) the warning
    is held until the block ends.

    Args:
        message: the warning's text.
        category: its class (:class:`AorcWarning` by default).
    """
    held = _DEFERRED.get()
    if held is not None:
        held.append((message, category))
        return
    frame: types.FrameType | None = sys._getframe(1)
    level = 2
    while frame is not None:
        name = frame.f_code.co_filename
        if not name.startswith(_AORC) and not any(p in name for p in _PLUMBING):
            break
        frame = frame.f_back
        level += 1
    else:
        level = 2
    warnings.warn(message, category, stacklevel=level)
