"""The public API: ``aorc.__all__`` is complete, sorted and documented."""

from __future__ import annotations

import inspect
import pathlib
import tomllib
import types

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
    import aorc.errors
    assert set(aorc.errors.__all__) <= set(aorc.__all__)


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


def test_import_does_not_load_pyarrow_dataset() -> None:
    """``import aorc`` (and its sync facade and CLI) stays light: pyarrow.dataset (about 50 MB
    of RSS) loads only when an expression filter or a pyarrow partitioning object is used."""
    import subprocess
    import sys

    code = ("import sys, aorc, aorc.sync, aorc.cli.main\n"
            "print('pyarrow.dataset' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, timeout=120)
    assert done.stdout.strip() == "False"
