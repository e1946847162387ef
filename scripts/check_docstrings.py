"""Docstrings of aorc's public API (issue 38): every public name has one, and every public
function, class and method has a Google-style docstring with the sections its signature
needs: ``Args:`` when it takes arguments, ``Returns:`` (or ``Yields:``) when it returns a
value, ``Raises:`` when its own body raises.

Used by ``tests/test_docstrings.py`` and by the docs build (``scripts/docs_hooks.py``)::

    python scripts/check_docstrings.py            # every problem, one a line; exit 1 if any
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect
import sys
import textwrap
from collections.abc import Callable, Iterator
from typing import Any

#: The public modules: aorc's own __all__ and every public subpackage's.
PUBLIC_MODULES = ["aorc", "aorc.daft", "aorc.dask", "aorc.errors", "aorc.io", "aorc.iceberg",
                  "aorc.kafka", "aorc.keys", "aorc.options", "aorc.polars", "aorc.progress",
                  "aorc.ray", "aorc.sink", "aorc.spark", "aorc.sync"]

#: Public modules built on a package an environment may not hold, and that package: where it
#: is missing they are left out here (the main environment lacks Ray and Daft, which
#: ``nox -s engines`` checks; that session lacks Polars, which the main environment checks).
OPTIONAL_MODULES = {"aorc.daft": "daft", "aorc.dask": "dask", "aorc.polars": "polars",
                    "aorc.ray": "ray"}


def _import(module_name: str) -> Any:
    """The module, or ``None`` for one of :data:`OPTIONAL_MODULES` without its package."""
    try:
        return importlib.import_module(module_name)
    except ImportError:
        package = OPTIONAL_MODULES.get(module_name)
        if package is not None:
            # not installed (a folder of that name, such as tests/polars on pytest's path,
            # is a namespace package: no origin)
            spec = importlib.util.find_spec(package)
            if spec is None or spec.origin in (None, "namespace"):
                return None
        raise


#: Methods every class has, whose docstrings come from Python (or need none).
_SKIPPED_METHODS = {"__init__", "__new__", "__post_init__", "__repr__", "__str__", "__hash__",
                    "__eq__", "__aenter__", "__aexit__", "__enter__", "__exit__", "__iter__",
                    "__aiter__", "__next__", "__anext__", "__len__", "__getitem__",
                    "__contains__", "__class_getitem__", "__init_subclass__", "__del__",
                    "__reduce__", "__getattr__", "__setattr__", "__bool__", "__await__",
                    "__lt__", "__le__", "__gt__", "__ge__", "__ne__", "__call__"}


def _objects(modules: list[str]) -> Iterator[tuple[str, Any]]:
    """(qualified name, object) of every public function, class and method, once each."""
    seen: set[int] = set()
    for module_name in modules:
        module = _import(module_name)
        if module is None:
            continue
        for name in getattr(module, "__all__", []):
            obj = getattr(module, name)
            if not (inspect.isclass(obj) or inspect.isfunction(obj)):
                continue  # constants, type aliases, modules
            if id(obj) in seen:
                continue
            seen.add(id(obj))
            yield f"{module_name}.{name}", obj
            if inspect.isclass(obj):
                yield from _methods(f"{module_name}.{name}", obj, seen)


def _methods(prefix: str, cls: type, seen: set[int]) -> Iterator[tuple[str, Any]]:
    for name, member in vars(cls).items():
        if name.startswith("_") or name in _SKIPPED_METHODS:
            continue
        if isinstance(member, (staticmethod, classmethod)):
            member = member.__func__
        if isinstance(member, property):
            member = member.fget
        if not inspect.isfunction(member) or id(member) in seen:
            continue
        if not (getattr(member, "__module__", "") or "").startswith("aorc"):
            continue
        seen.add(id(member))
        yield f"{prefix}.{name}", member


def _is_exception(obj: Any) -> bool:
    return inspect.isclass(obj) and issubclass(obj, BaseException)


def missing_docstrings(modules: list[str] | None = None) -> list[str]:
    """Public names (and public methods of public classes) without a docstring.

    Args:
        modules: the modules whose ``__all__`` to check; every public module by default.

    Returns:
        One line per name without a docstring, naming it.
    """
    return [f"{name} has no docstring" for name, obj in _objects(modules or PUBLIC_MODULES)
            if not (obj.__doc__ or "").strip()]


def _own_body(obj: Callable[..., Any]) -> ast.AST | None:
    try:
        source = textwrap.dedent(inspect.getsource(obj))
    except (OSError, TypeError):
        return None
    tree = ast.parse(source)
    return tree.body[0] if tree.body else None


def _raises(node: ast.AST) -> bool:
    """Whether the function's own body (not nested functions) raises."""
    stack = list(ast.iter_child_nodes(node))
    while stack:
        child = stack.pop()
        if isinstance(child, ast.Raise) and child.exc is not None:
            return True
        if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef,
                                  ast.Lambda)):
            stack.extend(ast.iter_child_nodes(child))
    return False


def _returns_value(node: ast.AST) -> bool:
    returns = getattr(node, "returns", None)
    return returns is not None and ast.unparse(returns) not in ("None", "NoReturn")


def _takes_arguments(obj: Callable[..., Any]) -> bool:
    try:
        parameters = inspect.signature(obj).parameters
    except (TypeError, ValueError):
        return False
    return any(p not in ("self", "cls") for p in parameters)


def section_problems(name: str, obj: Any) -> list[str]:
    """The Google sections a function's docstring lacks (a class: its docstring only).

    Args:
        name: the qualified name, for the messages.
        obj: the function, method or class.

    Returns:
        One line per missing section.
    """
    doc = inspect.cleandoc(obj.__doc__ or "")
    if not doc:
        return [f"{name} has no docstring"]
    if inspect.isclass(obj):
        return []
    node = _own_body(obj)
    problems = []
    is_property = any(isinstance(d, ast.Name) and d.id in ("property", "cached_property")
                      for d in getattr(node, "decorator_list", []))
    if is_property:
        return []
    if _takes_arguments(obj) and "Args:" not in doc:
        problems.append(f"{name}: no Args: section")
    if node is not None and _returns_value(node) and not any(
            s in doc for s in ("Returns:", "Yields:")):
        problems.append(f"{name}: no Returns: section")
    if node is not None and _raises(node) and "Raises:" not in doc:
        problems.append(f"{name}: no Raises: section")
    return problems


def incomplete_docstrings(modules: list[str] | None = None) -> list[str]:
    """Every public function, class and method whose docstring lacks a section it needs.

    Args:
        modules: the modules whose ``__all__`` to check; every public module by default.

    Returns:
        One line per problem.
    """
    problems: list[str] = []
    for name, obj in _objects(modules or PUBLIC_MODULES):
        if _is_exception(obj):
            problems += [] if (obj.__doc__ or "").strip() else [f"{name} has no docstring"]
            continue
        problems += section_problems(name, obj)
    return problems


if __name__ == "__main__":
    found = incomplete_docstrings(sys.argv[1:] or None)
    print("\n".join(found))
    print(f"{len(found)} problems", file=sys.stderr)
    sys.exit(1 if found else 0)
