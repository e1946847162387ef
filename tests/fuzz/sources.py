"""The valid files the fuzzers start from, and the seeded job lists of a run.

Three sources: the Apache ORC conformance corpus (``../shared/orc-conformance``, read in
place, see :mod:`helpers.corpus`), files aorc writes and files pyarrow.orc writes (every
codec, row indexes, bloom filters, several stripes, nested types, format 0.11 and 0.12). The
written files are the same bytes on every run (fixed random tables), so a ``(file, seed,
kind)`` triple names one mutant for good (see :func:`fuzz.runner.replay`).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pyarrow.orc as pa_orc
from helpers.corpus import load_manifest
from helpers.random_tables import ALL_TYPES, random_table

import aorc
from fuzz.model import parse_model
from fuzz.mutations import cut_points
from fuzz.runner import BaseFile, Job, describe

__all__ = ["CUT_SHARE", "MAX_BASE_BYTES", "MAX_BASE_ROWS", "SHARES", "base_files", "corpus_files",
           "jobs", "write_base_files"]

#: Share of the mutants per source.
SHARES = {"corpus": 0.45, "aorc": 0.3, "pyarrow": 0.25}
#: Share of the mutants that are truncations at region boundaries.
CUT_SHARE = 0.15
#: Base files above these sizes are left out of the CI run (a fixed choice, so a seed maps to
#: the same file however loaded the machine is: it leaves out the corpus's demo-1x-zlib files
#: of 1.9M rows and TestOrcFile.testSeek of 1.9 MB); long runs take them all.
MAX_BASE_ROWS = 250_000
MAX_BASE_BYTES = 1 << 20


def write_base_files(folder: Path) -> dict[str, list[Path]]:
    """Write the files to mutate: by aorc (every codec, row indexes, bloom filters, several
    stripes, two block sizes) and by pyarrow.orc (every codec, format 0.11 and 0.12, direct
    and dictionary strings); every type ORC has, nested ones included."""
    table = random_table(7, 1500)
    small = random_table(8, 300, {k: ALL_TYPES[k] for k in ("i32", "str_dict", "nested",
                                                             "dec_38_10", "ts", "bool")})
    out: dict[str, list[Path]] = {"aorc": [], "pyarrow": []}
    for i, codec in enumerate(("zstd", "zlib", "snappy", "lz4", "none")):
        path = folder / f"aorc-{codec}.orc"
        data = table if i % 2 == 0 else small
        asyncio.run(aorc.write_table(
            data, str(path), compression=codec, row_index_stride=1000,
            bloom_filter_columns=[n for n in ("i32", "str", "str_dict", "dec_38_10", "ts")
                                  if n in data.column_names][:1 + i % 3],
            stripe_size=64 * 1024, compression_block_size=(4096, 65536)[i % 2]))
        out["aorc"].append(path)
    for i, codec in enumerate(("zstd", "zlib", "snappy", "lz4", "uncompressed")):
        for version in ("0.11", "0.12"):
            path = folder / f"pyarrow-{codec}-{version}.orc"
            pa_orc.write_table(table if i % 2 else small, str(path), compression=codec,
                               file_version=version, stripe_size=96 * 1024,
                               compression_block_size=65536, row_index_stride=1000,
                               dictionary_key_size_threshold=(0.0, 1.0)[i % 2])
            out["pyarrow"].append(path)
    return out


def _describe(name: str, path: Path, everything: bool) -> BaseFile | None:
    if everything:
        return describe(name, path)
    return describe(name, path, max_rows=MAX_BASE_ROWS, max_bytes=MAX_BASE_BYTES)


def base_files(paths: dict[str, list[Path]], everything: bool = False) -> dict[str, list[BaseFile]]:
    """The written files (:func:`write_base_files`) described for the runner, per source;
    without ``everything``, only those within :data:`MAX_BASE_ROWS` / :data:`MAX_BASE_BYTES`."""
    return {source: [b for p in files if (b := _describe(p.name, p, everything)) is not None]
            for source, files in paths.items()}


def corpus_files(everything: bool = False) -> list[BaseFile]:
    """The conformance corpus's files described for the runner (empty when it is absent)."""
    files = [_describe(e.name, e.path, everything) for e in load_manifest()]
    return [f for f in files if f is not None]


def jobs(files: list[BaseFile], count: int, seed: int) -> list[Job]:
    """``count`` jobs: truncations at region boundaries (:data:`CUT_SHARE` of them, spread
    over the files; every boundary of every file when ``count`` is large enough), then
    random mutants of the files in turn, with seeds derived from ``seed`` (distinct per
    source and run)."""
    per_file = max(3, round(count * CUT_SHARE / len(files)))
    cuts: list[Job] = []
    for fi, base in enumerate(files):
        data = Path(base.path).read_bytes()
        points = len(cut_points(data, parse_model(data)))
        step = max(1, points // per_file)
        cuts += [(fi, k, "cut") for k in range(0, points, step)][:per_file]
    cuts = cuts[:count // 2]
    first = seed * 10_000_019
    return cuts + [(k % len(files), first + k, "random") for k in range(count - len(cuts))]
