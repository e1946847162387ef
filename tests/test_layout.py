"""The house rules that import-linter cannot check (its contracts run in CI: `lint-imports`).

- No module imports another module's underscore names (``from aorc.x import _y``); a package's
  own modules may import its private submodules.
- Only :mod:`aorc.io` knows URL schemes and concrete stores: no other module imports a store
  module or branches on a scheme prefix.
- No module is over 800 lines.
- Every module has a docstring and an ``__all__``: a list of string literals, without
  duplicates, naming only attributes the module has. Its order is ruff's rule RUF022
  ("isort-style": constants, classes, the rest), which ``ruff check`` enforces in CI.
"""

from __future__ import annotations

import ast
import importlib
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "aorc"
MAX_LINES = 800  # "no module over ~800 lines"
#: Store modules that only aorc.io itself may import; everything else goes through aorc.io.
STORE_MODULES = {"aorc.io.s3", "aorc.io.s3.store", "aorc.io.s3.scheme", "aorc.io.s3.config",
                 "aorc.io.s3.clients",
                 "aorc.io.s3.obstore_client", "aorc.io.gcs", "aorc.io.gcs.store",
                 "aorc.io.gcs.config", "aorc.io.azure", "aorc.io.azure.store",
                 "aorc.io.azure.config", "aorc.io.local", "aorc.io.memory", "aorc.io.http",
                 "aorc.io.transport", "aorc.io.remote", "aorc.io.pool", "aorc.io.fileobj",
                 # the old flat paths (deprecated aliases, see aorc.io.MOVED_MODULES)
                 "aorc.io.s3_config", "aorc.io.s3_clients", "aorc.io.s3_obstore",
                 "aorc.io.gcs_config", "aorc.io.azure_config"}
SCHEMES = ("s3:", "s3a:", "file:", "memory:", "gs:", "gcs:", "az:", "abfs:", "abfss:",
           "http:", "https:")


def _modules() -> Iterator[tuple[str, Path, ast.Module]]:
    for path in sorted(PACKAGE.rglob("*.py")):
        if "_proto" in path.parts:
            continue
        rel = path.relative_to(PACKAGE.parent).with_suffix("")
        name = ".".join(rel.parts).removesuffix(".__init__")
        yield name, path, ast.parse(path.read_text(), str(path))


def _absolute(module: str, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    base = module.split(".")
    return ".".join(base[: len(base) - node.level] + ([node.module] if node.module else []))


def test_no_private_names_imported_across_modules() -> None:
    offenders = []
    for module, path, tree in _modules():
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                source = _absolute(module, node)
                # a package may use its own private submodules (aorc.format.codec._bloom)
                if (not source.startswith("aorc") or module == source
                        or module.startswith(source + ".")):
                    continue
                for alias in node.names:
                    if alias.name.startswith("_") and not alias.name.startswith("__"):
                        offenders.append(f"{path}:{node.lineno}: {source}.{alias.name}")
    assert not offenders, "private names imported across modules:\n" + "\n".join(offenders)


def _in_io(module: str) -> bool:
    # aorc.keys sits in io's layer: its key-service clients parse their own (http, kms) URLs
    return module in ("aorc.io", "aorc.keys") or module.startswith(("aorc.io.", "aorc.keys."))


def test_only_io_imports_store_modules() -> None:
    offenders = []
    for module, path, tree in _modules():
        if _in_io(module):
            continue
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.ImportFrom):
                names = [_absolute(module, node)]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            offenders += [f"{path}:{node.lineno}: {n}" for n in names if n in STORE_MODULES]
    assert not offenders, "store modules imported outside aorc.io:\n" + "\n".join(offenders)


def _scheme_tests(tree: ast.Module) -> Iterator[ast.AST]:
    """Comparisons and ``startswith``/``removeprefix`` calls against a scheme literal."""
    for node in ast.walk(tree):
        consts: list[ast.expr] = []
        if isinstance(node, ast.Compare):
            consts = [node.left, *node.comparators]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                node.func.attr in {"startswith", "removeprefix", "partition", "split"}:
            consts = list(node.args)
        for c in consts:
            values = c.elts if isinstance(c, ast.Tuple) else [c]
            for v in values:
                if isinstance(v, ast.Constant) and isinstance(v.value, str) and \
                        v.value.lower().startswith(SCHEMES):
                    yield node


def test_no_scheme_branching_outside_io() -> None:
    offenders = []
    for module, path, tree in _modules():
        if _in_io(module):
            continue
        offenders += [f"{path}:{getattr(n, 'lineno', '?')}" for n in _scheme_tests(tree)]
        for node in ast.walk(tree):
            if isinstance(node, ast.Name | ast.Attribute):
                name = node.id if isinstance(node, ast.Name) else node.attr
                if name in {"is_s3_url", "parse_s3_url"}:
                    offenders.append(f"{path}:{node.lineno}: {name}")
    assert not offenders, "URL schemes handled outside aorc.io:\n" + "\n".join(offenders)


def _literal_all(tree: ast.Module) -> list[str] | None:
    """The names of the module's top-level ``__all__ = [...]``, None if it has none."""
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            target, value = node.target, node.value
        else:
            continue
        if isinstance(target, ast.Name) and target.id == "__all__":
            assert isinstance(value, ast.List) and all(
                isinstance(e, ast.Constant) and isinstance(e.value, str) for e in value.elts), \
                f"line {node.lineno}: __all__ is not a list of string literals"
            return [e.value for e in value.elts if isinstance(e, ast.Constant)]
    return None


#: Engines the main environment does not hold (``nox -s engines`` tests their front ends,
#: whose modules subclass the engines' classes and so import them at the top).
ENGINES_ELSEWHERE = ("ray", "daft")


def _bound_names(tree: ast.Module) -> set[str]:
    """Names bound at the top level of a module, for one that cannot be imported."""
    names = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return names


def all_problems(module: str, tree: ast.Module) -> list[str]:
    """What is wrong with a module's docstring and ``__all__`` (empty when nothing is)."""
    problems = []
    if not ast.get_docstring(tree):
        problems.append("no module docstring")
    names = _literal_all(tree)
    if names is None:
        return [*problems, "no __all__"]
    if len(set(names)) != len(names):
        twice = sorted({n for n in names if names.count(n) > 1})
        problems.append(f"duplicates in __all__: {twice}")
    if module == "aorc.__main__":  # importing it runs the command
        missing = set(names) - _bound_names(tree)
    else:
        try:
            imported = importlib.import_module(module)
        except ModuleNotFoundError as e:  # a front end whose engine is not installed here
            if (e.name or "").split(".")[0] not in ENGINES_ELSEWHERE:
                raise
            missing = set(names) - _bound_names(tree)
        else:
            missing = {n for n in names if not hasattr(imported, n)}
    if missing:
        problems.append(f"__all__ names what the module does not have: {sorted(missing)}")
    return problems


def test_every_module_has_a_docstring_and_a_complete_all() -> None:
    offenders = [f"{path}: {problem}" for module, path, tree in _modules()
                 for problem in all_problems(module, tree)]
    assert not offenders, "module docstrings and __all__:\n" + "\n".join(offenders)


def test_the_all_check_sees_a_violation() -> None:
    """The docstring and ``__all__`` check is not vacuous."""
    assert all_problems("aorc.errors", ast.parse("x = 1")) == ["no module docstring", "no __all__"]
    tree = ast.parse('"""Doc."""\n__all__ = ["b", "a", "a", "NoSuchName"]\n')
    assert [p.split(":")[0] for p in all_problems("aorc.errors", tree)] == [
        "duplicates in __all__", "__all__ names what the module does not have"]


@pytest.mark.parametrize("suffix", ["*.py", "*.pyx"])
def test_no_module_over_800_lines(suffix: str) -> None:
    long = [f"{p}: {n} lines" for p in sorted(PACKAGE.rglob(suffix)) if "_proto" not in p.parts
            if (n := len(p.read_text().splitlines())) > MAX_LINES]
    assert not long, "modules over ~800 lines:\n" + "\n".join(long)


def test_the_checks_see_a_violation(tmp_path: Path) -> None:
    """The scheme check is not vacuous: it flags the patterns it is meant to."""
    tree = ast.parse('if url.startswith("s3://"): pass\nok = scheme == "s3a:"\n')
    assert len(list(_scheme_tests(tree))) == 2
    assert not list(_scheme_tests(ast.parse('x = "see s3://bucket/key"')))


def _local_imports(folder: Path) -> dict[str, set[str]]:
    """Each module of a folder of scripts (``benchmarks/``, ``scripts/``) and the folder's
    modules it imports, at any depth of its code (imports inside functions count: they close
    a circle all the same)."""
    names = {p.stem for p in folder.glob("*.py")}
    graph: dict[str, set[str]] = {}
    for path in sorted(folder.glob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        found: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.add(node.module.split(".")[0])
            elif isinstance(node, ast.Import):
                found |= {alias.name.split(".")[0] for alias in node.names}
        graph[path.stem] = (found & names) - {path.stem}
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle of ``graph``, or None (depth-first search, colours)."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


@pytest.mark.parametrize("folder", ["benchmarks", "scripts", "examples"])
def test_no_import_circle_among_scripts(folder: str) -> None:
    """Issue 31: no circle anywhere in the repository; import-linter checks aorc's own
    packages, this the folders of scripts beside it."""
    graph = _local_imports(PACKAGE.parent / folder)
    assert _cycle(graph) is None, " -> ".join(_cycle(graph) or [])


def test_the_circle_check_sees_a_circle() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_no_code_imports_a_moved_module_path() -> None:
    """The old paths of moved modules (``aorc._MOVED_MODULES``) are for users, for one
    release: aorc, its tests, benchmarks, scripts and examples import the new ones (an old
    path would only warn, and import-linter cannot see through the alias)."""
    import aorc

    moved = set(aorc._MOVED_MODULES)
    offenders = []
    for folder in ("aorc", "tests", "benchmarks", "scripts", "examples"):
        for path in sorted((PACKAGE.parent / folder).rglob("*.py")):
            if "_proto" in path.parts or path.name == "test_moved_modules.py":
                continue
            tree = ast.parse(path.read_text(), str(path))
            for node in ast.walk(tree):
                names: list[str] = []
                if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
                elif isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                offenders += [f"{path}:{node.lineno}: {n}" for n in names if n in moved]
    assert not offenders, "moved module paths imported:\n" + "\n".join(offenders)
