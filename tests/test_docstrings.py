"""Every public function, class and method of aorc (each public module's ``__all__``, and the
public methods of public classes) has a Google-style docstring with the sections its
signature needs: ``Args:``, ``Returns:`` (or ``Yields:``), ``Raises:`` when its own body
raises (issue 38; ``scripts/check_docstrings.py``, which the docs build uses too).

``KNOWN_GAPS`` lists what was still missing when the rule came in: it may only shrink (a
fixed entry must be removed from it, so that it cannot come back)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: Sections still missing when the rule came in (issue 38): remove entries as they are fixed.
#: Empty now: a new gap fails the test instead of being listed here.
KNOWN_GAPS: frozenset[str] = frozenset()


@pytest.fixture(scope="module")
def checker() -> ModuleType:
    spec = importlib.util.spec_from_file_location("check_docstrings",
                                                  ROOT / "scripts" / "check_docstrings.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["check_docstrings"] = module
    spec.loader.exec_module(module)
    return module


def test_every_public_module_is_checked(checker: ModuleType) -> None:
    import aorc

    public = {f"aorc.{name}" for name in aorc.__all__ if name.islower()
              and isinstance(getattr(aorc, name), ModuleType)}
    assert public <= set(checker.PUBLIC_MODULES)
    for package in (ROOT / "aorc").iterdir():
        if (package / "__init__.py").is_file() and not package.name.startswith("_"):
            text = (package / "__init__.py").read_text()
            if "__all__ = [" in text and "__all__ = []" not in text:
                assert f"aorc.{package.name}" in checker.PUBLIC_MODULES or \
                    package.name == "cli", package.name


def test_every_public_name_has_a_docstring(checker: ModuleType) -> None:
    assert checker.missing_docstrings() == []


def test_docstrings_have_their_sections(checker: ModuleType) -> None:
    problems = set(checker.incomplete_docstrings())
    new = sorted(problems - KNOWN_GAPS)
    assert not new, "docstrings without the sections they need:\n" + "\n".join(new)
    fixed = sorted(KNOWN_GAPS - problems)
    assert not fixed, "fixed (remove from KNOWN_GAPS):\n" + "\n".join(fixed)


def test_the_checker_finds_what_is_missing(checker: ModuleType) -> None:
    def bare(x: int) -> int:
        """Doubles x."""
        if x < 0:
            raise ValueError(x)
        return 2 * x

    def complete(x: int) -> int:
        """Doubles x.

        Args:
            x: a number.

        Returns:
            Twice x.

        Raises:
            ValueError: x is negative.
        """
        if x < 0:
            raise ValueError(x)
        return 2 * x

    assert checker.section_problems("bare", bare) == [
        "bare: no Args: section", "bare: no Returns: section", "bare: no Raises: section"]
    assert checker.section_problems("complete", complete) == []
