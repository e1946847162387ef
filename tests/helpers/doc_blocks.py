"""Code blocks of the README and the docs pages (issue 38): extracted in order, each with
its language and, when it does not run, the reason given by a ``<!-- norun: reason -->``
line right before it."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: Languages whose blocks show output or a diagram, not code to run.
DISPLAY = {"text"}
#: Languages that run: Python is executed (top-level ``await`` allowed).
RUNNABLE = {"python"}

_FENCE = re.compile(r"^(?P<indent> *)```(?P<lang>[\w-]*)\s*$")
_NORUN = re.compile(r"<!--\s*norun:\s*(?P<reason>.+?)\s*-->")


@dataclass(frozen=True)
class Block:
    """One fenced code block of a page."""

    page: str
    line: int
    lang: str
    code: str
    norun: str | None


def pages() -> list[Path]:
    """README.md and every Markdown page under docs/."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def blocks(path: Path) -> list[Block]:
    """The fenced blocks of one page, in order."""
    lines = path.read_text().splitlines()
    out: list[Block] = []
    i = 0
    while i < len(lines):
        match = _FENCE.match(lines[i])
        if not match:
            i += 1
            continue
        indent = len(match["indent"])
        start = i
        body = []
        i += 1
        while i < len(lines) and lines[i].strip() != "```":
            body.append(lines[i][indent:])
            i += 1
        i += 1
        previous = next((lines[j] for j in range(start - 1, -1, -1) if lines[j].strip()), "")
        norun = _NORUN.search(previous)
        out.append(Block(str(path.relative_to(ROOT)), start + 1, match["lang"],
                         "\n".join(body) + "\n", norun["reason"] if norun else None))
    return out
