"""A griffe extension for the docs build: aorc's docstrings use Sphinx roles
(``:func:`aorc.open_reader```, ``:class:`~aorc.errors.SchemaError```), which Markdown would
show as they are; this turns each into inline code (``~`` keeps only the last name)."""

from __future__ import annotations

import re
from typing import Any

import griffe

_ROLE = re.compile(r":(?:py:)?(?:class|func|meth|mod|attr|data|exc|obj|const):`(~?)([^`]+)`")


def _code(match: re.Match[str]) -> str:
    target = match.group(2)
    if match.group(1):
        target = target.rsplit(".", 1)[-1]
    return f"`{target}`"


class SphinxRoles(griffe.Extension):
    """Rewrites Sphinx roles in every docstring as inline code."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        """Rewrites the roles of one object's docstring.

        Args:
            obj: the object griffe just loaded.
            **kwargs: griffe's other arguments (unused).
        """
        if obj.docstring is not None:
            obj.docstring.value = _ROLE.sub(_code, obj.docstring.value)
