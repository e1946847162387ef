"""Progress of long operations, reported to a caller's hook.

``write_dataset``, ``read_dataset`` (and :meth:`aorc.Dataset.read`) and ``aorc convert``
take ``progress=``: either a callable, called with a :class:`ProgressEvent` each time a
unit of work is done, or a tqdm-compatible object (anything with ``update(n)``; its
``total`` is set when aorc knows the amount of work and the object has none)::

    from tqdm import tqdm

    with tqdm(unit="rows") as bar:
        await aorc.write_dataset(table, "lake/", partition_cols=["day"], progress=bar)

    await aorc.read_dataset("lake/", progress=lambda e: print(e.done, "/", e.total, e.unit))

The hook runs on the event loop's thread, between awaits: keep it quick. An exception it
raises propagates and ends the operation as any other error does.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

__all__ = [
    "ProgressBar",
    "ProgressEvent",
    "ProgressHook",
    "ProgressTracker",
    "tracker",
]


@dataclass(frozen=True)
class ProgressEvent:
    """One step of an operation's progress.

    Attributes:
        operation: what is running (``"write_dataset"``, ``"read_dataset"``, ``"convert"``).
        unit: what is counted: ``"rows"``, ``"files"`` or ``"bytes"``.
        done: units done so far.
        total: the units the operation will do, when known (else ``None``).
        delta: units done since the previous event.
    """

    operation: str
    unit: str
    done: int
    total: int | None
    delta: int


@runtime_checkable
class ProgressBar(Protocol):
    """A tqdm-compatible progress bar: aorc calls ``update(n)`` (and sets ``total``)."""

    def update(self, n: int) -> Any:  # pragma: no cover - protocol
        """Count ``n`` more units done.

        Args:
            n: the units done since the last call.

        Returns:
            Anything (ignored).
        """


ProgressHook = Callable[[ProgressEvent], object] | ProgressBar
"""What ``progress=`` takes: a callable receiving :class:`ProgressEvent` or a tqdm-like bar."""


class ProgressTracker:
    """Counts one operation's work and reports each step to a hook.

    Args:
        hook: a callable taking a :class:`ProgressEvent`, or an object with ``update(n)``.
        operation: the operation's name, passed on in every event.
        unit: what is counted.
        total: the amount of work, if known (see :meth:`set_total`).

    Raises:
        TypeError: ``hook`` is neither callable nor has an ``update`` method.
    """

    def __init__(self, hook: ProgressHook, operation: str, unit: str,
                 total: int | None = None) -> None:
        bar = callable(getattr(hook, "update", None)) and not _is_plain_callable(hook)
        if not bar and not callable(hook):
            raise TypeError(f"progress= takes a callable (called with an aorc.ProgressEvent) "
                            f"or a tqdm-like object with update(n), got {type(hook).__name__}")
        self._hook = hook
        self._bar = bar
        self.operation, self.unit = operation, unit
        self.done = 0
        self.total: int | None = None
        if total is not None:
            self.set_total(total)

    def set_total(self, total: int) -> None:
        """Say how much work there is (a bar whose ``total`` is unset gets it).

        Args:
            total: the units of work in all.
        """
        self.total = total
        if self._bar and getattr(self._hook, "total", None) is None:
            try:
                self._hook.total = total  # type: ignore[union-attr]
            except AttributeError:  # a bar without a settable total: only updates
                return
            refresh = getattr(self._hook, "refresh", None)
            if callable(refresh):
                refresh()

    def advance(self, n: int) -> None:
        """Count ``n`` more units done and tell the hook (nothing for ``n == 0``).

        Args:
            n: the units done since the last call.
        """
        if n <= 0:
            return
        self.done += n
        if self._bar:
            self._hook.update(n)  # type: ignore[union-attr]
        else:
            self._hook(ProgressEvent(self.operation, self.unit, self.done,  # type: ignore[operator]
                                     self.total, n))


def _is_plain_callable(hook: object) -> bool:
    """A function, method or lambda (which may carry an ``update`` attribute by chance)."""
    import types

    return isinstance(hook, types.FunctionType | types.MethodType | types.BuiltinFunctionType)


def tracker(hook: ProgressHook | None, operation: str, unit: str,
            total: int | None = None) -> ProgressTracker | None:
    """A :class:`ProgressTracker` for ``hook``, or ``None`` when there is no hook.

    Args:
        hook: a callable taking :class:`ProgressEvent` s, a tqdm-like bar, or ``None``.
        operation: what is being done (``"read"``, ``"write"``, ...).
        unit: what is counted (``"rows"``, ``"files"``, ``"bytes"``).
        total: the units of work in all, if known.

    Returns:
        A tracker, or ``None``.
    """
    if hook is None:
        return None
    return ProgressTracker(hook, operation, unit, total)
