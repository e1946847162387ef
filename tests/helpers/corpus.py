"""The ORC conformance corpus (``../shared/orc-conformance`` next to the repository).

The corpus is never copied into the repository; tests that need it skip when it is absent
(``AORC_ORC_CONFORMANCE`` points at it elsewhere).
``MANIFEST.tsv`` lists every file with notes; :func:`load_manifest` turns each ``files/`` line
into a :class:`CorpusFile` with what the notes say (row count, schema, how pyarrow and pyorc
fare with it).
"""

from __future__ import annotations

import csv
import gzip
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

__all__ = [
    "CORPUS_ABSENT",
    "CorpusFile",
    "corpus_params",
    "corpus_root",
    "load_manifest",
    "read_expected",
]

_REPO_ROOT = Path(__file__).resolve().parents[2]

#: The reason of every test skipped for want of the corpus: how to get it.
CORPUS_ABSENT = (
    "ORC conformance corpus absent: it is not part of the repository. Set "
    "AORC_ORC_CONFORMANCE to a folder holding Apache ORC's example files as "
    "../shared/orc-conformance lays them out (MANIFEST.tsv; files/ = the examples/ folder of "
    "a checkout of apache/orc; expected/ = its expected/ outputs), or put that folder at "
    "../shared/orc-conformance beside the repository")


def corpus_root() -> Path | None:
    """The corpus folder, or ``None`` when it is not present (``AORC_ORC_CONFORMANCE`` names
    another folder, for a checkout that has no ``../shared`` beside it)."""
    where = os.environ.get("AORC_ORC_CONFORMANCE")
    root = Path(where) if where else (_REPO_ROOT / ".." / "shared" / "orc-conformance")
    root = root.resolve()
    return root if (root / "MANIFEST.tsv").is_file() else None


@dataclass(frozen=True)
class CorpusFile:
    """One ORC file of the corpus and what MANIFEST.tsv says about it.

    Attributes:
        name: path under ``files/``, e.g. ``"corrupt/negative_dict_entry_lengths.orc"``.
        path: absolute path of the file.
        expected: absolute path of its expected output, if there is one.
        notes: the manifest's free-text notes.
        rows: the footer's row count (``None`` when the notes do not give one).
        schema: the ORC type string (``None`` when unknown).
        pyarrow_ok: pyarrow.orc reads the file.
        pyorc_ok: pyorc reads the file.
        pyarrow_matches: pyarrow's output matches every expected row.
    """

    name: str
    path: Path
    expected: Path | None
    notes: str
    rows: int | None
    schema: str | None
    pyarrow_ok: bool
    pyorc_ok: bool
    pyarrow_matches: bool

    @property
    def group(self) -> str:
        """The corpus sub-folder (``"corrupt"``, ``"encrypted"``) or ``""``."""
        return self.name.rpartition("/")[0]


def _status(notes: str, reader: str) -> bool:
    match = re.search(rf"\b{reader} [\d.]+: (ok|FAILS)", notes)
    return match is not None and match.group(1) == "ok"


def _parse_line(root: Path, row: dict[str, str]) -> CorpusFile:
    notes = row["notes"]
    rows = re.search(r"\brows=(\d+)", notes)
    schema = re.search(r"\bschema=([^;|]+)", notes)
    expected = row["expected_file"].strip()
    return CorpusFile(
        name=row["file"].removeprefix("files/"),
        path=root / row["file"],
        expected=root / expected if expected else None,
        notes=notes,
        rows=int(rows.group(1)) if rows else None,
        schema=schema.group(1).strip() if schema else None,
        pyarrow_ok=_status(notes, "pyarrow"),
        pyorc_ok=_status(notes, "pyorc"),
        pyarrow_matches="pyarrow output matches every expected row" in notes,
    )


@cache
def load_manifest(root: Path | None = None) -> tuple[CorpusFile, ...]:
    """Every ORC file listed in MANIFEST.tsv (empty when the corpus is absent)."""
    root = root or corpus_root()
    if root is None:
        return ()
    with open(root / "MANIFEST.tsv", newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE)
        return tuple(_parse_line(root, row) for row in reader if row["file"].startswith("files/"))


def read_expected(path: Path) -> list[str]:
    """The expected output lines of a file, without line terminators.

    Bytes that are not UTF-8 are kept as surrogate escapes, so they compare unequal to any
    valid string rather than failing to decode.
    """
    with gzip.open(path, "rb") as f:
        text = f.read().decode("utf-8", errors="surrogateescape")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def corpus_params(predicate: Callable[[CorpusFile], bool]) -> list[object]:
    """``pytest.param`` objects for the corpus files matching ``predicate``, id = file name.

    When the corpus is absent, returns a single skipped parameter so the test shows as skipped
    rather than vanishing.
    """
    if corpus_root() is None:
        return [pytest.param(None, marks=pytest.mark.skip(reason=CORPUS_ABSENT))]
    return [pytest.param(entry, id=entry.name) for entry in load_manifest() if predicate(entry)]
