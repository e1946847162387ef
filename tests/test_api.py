"""The public API: ``aorc.__all__`` is complete, sorted and documented."""

from __future__ import annotations

import inspect
import pathlib
import tomllib
import types

import pytest

import aorc

ROOT = pathlib.Path(__file__).resolve().parents[1]


def public_names() -> set[str]:
    """Names bound in aorc/__init__ that are not private and not submodules."""
    return {name for name, value in vars(aorc).items()
            if not name.startswith("_") and not isinstance(value, types.ModuleType)}


def test_all_is_sorted_and_unique() -> None:
    assert aorc.__all__ == sorted(set(aorc.__all__))


def test_all_is_complete() -> None:
    assert set(aorc.__all__) == public_names()
    # `annotations` from `from __future__ import annotations` must not leak either.
    assert "annotations" not in vars(aorc)


def test_every_exported_name_exists_and_is_documented() -> None:
    for name in aorc.__all__:
        obj = getattr(aorc, name)
        assert inspect.getdoc(obj), f"aorc.{name} has no docstring"


def test_errors_are_all_exported() -> None:
    """Every exception and warning class of aorc.errors is at the top level too."""
    import aorc.errors
    classes = {n for n in aorc.errors.__all__ if isinstance(getattr(aorc.errors, n), type)}
    assert classes == set(aorc.errors.__all__) - {"deferred_warnings", "warn"}
    assert classes <= set(aorc.__all__)


def test_version_has_one_source() -> None:
    """pyproject takes the version from aorc/_version.py; the installed metadata agrees."""
    import importlib.metadata

    with open(ROOT / "pyproject.toml", "rb") as f:
        pyproject = tomllib.load(f)
    assert "version" in pyproject["project"]["dynamic"]
    attr = pyproject["tool"]["setuptools"]["dynamic"]["version"]["attr"]
    assert attr == "aorc._version.__version__"
    assert aorc.__version__ == importlib.metadata.version("aorc")


def test_entry_point_is_the_cli_main() -> None:
    with open(ROOT / "pyproject.toml", "rb") as f:
        scripts = tomllib.load(f)["project"]["scripts"]
    module, _, func = scripts["aorc"].partition(":")
    assert module == "aorc.cli"
    import aorc.cli
    assert callable(getattr(aorc.cli, func))


@pytest.mark.parametrize("heavy", ["pyarrow.dataset", "aiohttp"])
def test_import_does_not_load_heavy_modules(heavy: str) -> None:
    """``import aorc`` (and its sync facade and CLI) stays light: pyarrow.dataset (about 50 MB
    of RSS) loads only when an expression filter or a pyarrow partitioning object is used,
    aiohttp (a third of aorc's own import time) only when an HTTP, GCS or Azure store or a
    Hadoop KMS makes its first request."""
    import subprocess
    import sys

    code = ("import sys, aorc, aorc.sync, aorc.cli.main\n"
            f"print({heavy!r} in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, timeout=120)
    assert done.stdout.strip() == "False"


# --------------------------------------------------------------- moved modules (issue 31)

def test_moved_module_paths_warn_and_give_the_new_module() -> None:
    """Each old path of the 0.x layout imports, with a DeprecationWarning naming the new
    path, as the new module itself (same objects), in a fresh interpreter (so that the
    import really goes through the alias, not ``sys.modules``)."""
    import subprocess
    import sys

    from aorc import _MOVED_MODULES
    assert _MOVED_MODULES, "no moved modules listed"
    code = "\n".join([
        "import importlib, warnings, json",
        "import aorc",
        f"moved = {dict(_MOVED_MODULES)!r}",
        "out = {}",
        "for old, new in moved.items():",
        "    with warnings.catch_warnings(record=True) as caught:",
        "        warnings.simplefilter('always')",
        "        m = importlib.import_module(old)",
        "    n = importlib.import_module(new)",
        "    msgs = [str(w.message) for w in caught if w.category is DeprecationWarning]",
        "    out[old] = [m is n, n.__spec__.name == new, any(new in s for s in msgs)]",
        "print(json.dumps(out))",
    ])
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True, cwd=ROOT)
    import json
    seen = json.loads(result.stdout)
    assert seen == {old: [True, True, True] for old in _MOVED_MODULES}


def test_moved_top_level_modules_as_attributes() -> None:
    import warnings

    import aorc.dataset.compaction
    import aorc.dataset.hive
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert aorc.compaction is aorc.dataset.compaction  # type: ignore[attr-defined]
        assert aorc.hive is aorc.dataset.hive  # type: ignore[attr-defined]
    assert [w.category for w in caught] == [DeprecationWarning, DeprecationWarning]
    try:
        aorc.no_such_thing  # type: ignore[attr-defined]  # noqa: B018
    except AttributeError as exc:
        assert "no_such_thing" in str(exc)
    else:
        raise AssertionError("an unknown attribute of aorc did not raise")


def test_at_most_seven_flat_modules() -> None:
    """``ls aorc/`` stays readable: concepts are packages, at most 7 modules sit at the top
    (besides ``__init__`` and ``__main__``)."""
    flat = sorted(p.name for p in (ROOT / "aorc").glob("*.py")
                  if p.name not in ("__init__.py", "__main__.py"))
    assert len(flat) <= 7, flat
