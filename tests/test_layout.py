"""The house rules that import-linter cannot check (its contracts run in CI: `lint-imports`).

- No module imports another module's underscore names (``from aorc.x import _y``); a package's
  own modules may import its private submodules.
- Only :mod:`aorc.io` knows URL schemes and concrete stores: no other module imports a store
  module or branches on a scheme prefix.
- No module is over 800 lines.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "aorc"
MAX_LINES = 800  # "no module over ~800 lines"
#: Store modules that only aorc.io itself may import; everything else goes through aorc.io.
STORE_MODULES = {"aorc.io.s3", "aorc.io.s3_config", "aorc.io.s3_clients", "aorc.io.local",
                 "aorc.io.memory"}
SCHEMES = ("s3:", "s3a:", "file:", "memory:", "gs:", "az:", "abfs:")


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
    return module == "aorc.io" or module.startswith("aorc.io.")


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
