"""Issue 20's hostile inputs, each read under bounds in a watched child process.

Every class of the issue has a builder in :mod:`fuzz.hostile` (footer bombs of 10^7 and 10^8
stripes, zstd chunks declaring 8 MiB, a 2^31-entry dictionary, a valid file of 10^9 rows
streamed, LZO/Brotli empty chunks, decimal scales changing every row, 2,000 spellings of one
time zone, type trees 200-256 levels deep). :func:`fuzz.watch.watch` reads each file in a
fresh child process (open, read, read on 4 threads or ``iter_batches`` as the case says) and
the test asserts that it ended with a correct result or an ``aorc.errors`` exception, within
10 s of CPU time (user + system, all threads: never the wall clock) and a peak RSS of 1 GiB
(512 MiB for the footer bombs, files of a few KB, and for streaming the valid 10^9-row file).

Every case failed these bounds before issue 20's fixes (``fixed_on`` in :mod:`fuzz.hostile`
names the change that fixed it). ``scripts/build_hostile.py OUT --measure``
writes the files and prints the table of outcomes, CPU times and peaks.

The other tests check that each builder makes what it claims (valid files read the same by
pyarrow.orc; the bombs declare what they should, in files as small as the issue's).
"""

from __future__ import annotations

import asyncio
import os
from concurrent.futures import ThreadPoolExecutor

import pyarrow as pa
import pyarrow.orc as pa_orc
import pytest
import zstandard

import aorc
from aorc.format._proto import orc_proto_pb2 as pb
from aorc.format.codec.compression import (
    HEADER_SIZE,
    MAX_BLOCK_SIZE,
    CompressionKind,
    decompress_stream,
)
from fuzz.hostile import (
    CASES,
    EMPTY_BODIES,
    decimal_scales,
    declared_zstd_chunks,
    deep_types,
    dictionary_bomb,
    empty_chunks,
    footer_bomb,
    many_rows,
    zone_spellings,
)
from fuzz.watch import ACCEPTABLE, Watched, watch

C = CompressionKind
#: The reading child's address-space cap above its size: past the 1 GiB bound already, and
#: a bomb fails there rather than taking the machine's memory.
MEMORY_CAP = 2 << 30
#: Children reading at once (``AORC_FUZZ_WORKERS``, as for the fuzz tests).
WORKERS = int(os.environ.get("AORC_FUZZ_WORKERS", "2"))


def _params() -> list[object]:
    return [pytest.param(case.name, id=case.name) for case in CASES.values()]


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Watched]:
    """Every case read in its own child, two at a time (the cases that are not fixed yet
    use up their CPU bound)."""
    folder = tmp_path_factory.mktemp("hostile")

    def run(name: str) -> Watched:
        path = folder / f"{name}.orc"
        path.write_bytes(CASES[name].build())
        return watch(name, path, memory=MEMORY_CAP)

    with ThreadPoolExecutor(WORKERS) as pool:
        return dict(zip(CASES, pool.map(run, CASES), strict=True))


@pytest.mark.parametrize("name", _params())
def test_hostile_input_is_bounded(name: str, outcomes: dict[str, Watched]) -> None:
    got = outcomes[name]
    print(f"{name}: {got}")
    assert got.status in ACCEPTABLE, f"{CASES[name].issue}: {got}"


# =========================================================================== the builders

def _read_both(data: bytes) -> tuple[pa.Table, pa.Table]:
    return asyncio.run(aorc.read_table(data)), pa_orc.ORCFile(pa.BufferReader(data)).read()


def _tail(data: bytes) -> tuple[pb.PostScript, pb.Footer]:
    ps = pb.PostScript.FromString(data[-1 - data[-1]:-1])
    raw = data[-1 - data[-1] - ps.footerLength:-1 - data[-1]]
    plain = decompress_stream(raw, C(ps.compression), ps.compressionBlockSize or 262144)
    return ps, pb.Footer.FromString(bytes(plain))


def test_valid_builders_match_pyarrow(monkeypatch: pytest.MonkeyPatch) -> None:
    """The valid hostile files, made small, read the same in aorc and pyarrow.orc."""
    monkeypatch.setenv("TZ", "UTC")
    for data in (many_rows(100_000), decimal_scales(30), zone_spellings(5, spellings=False),
                 deep_types(30), deep_types(30, "list"), empty_chunks(C.LZO, 3000, in_footer=True)):
        ours, theirs = _read_both(data)
        assert ours.equals(theirs)
    ours, theirs = _read_both(many_rows(100_000))
    assert ours.column(0).to_pylist() == [7] * 100_000
    # ORC C++ reads the LZO stream after an empty compressed chunk as zeros: aorc is compared
    # with the same values without the empty chunks (and brotli, which ORC C++ lacks, too)
    plain = _read_both(empty_chunks(C.LZO, 0))[1]
    assert plain.column(0).to_pylist() == list(range(1000))
    for kind in (C.LZO, C.BROTLI):
        for in_footer in (False, True):
            table = asyncio.run(aorc.read_table(empty_chunks(kind, 3000, in_footer=in_footer)))
            assert table.equals(plain)


def test_bombs_declare_what_they_claim() -> None:
    """Each bomb is as small as the issue's, and declares what the issue says."""
    big = footer_bomb(10**8)
    assert len(big) < 40_000
    small = footer_bomb(1000)
    assert len(_tail(small)[1].stripes) == 1000
    assert len(footer_bomb(10**7)) < 4_000

    data = declared_zstd_chunks()
    assert 2_400_000 < len(data) < 2_600_000
    ps, footer = _tail(data)
    assert ps.compressionBlockSize == MAX_BLOCK_SIZE
    start = footer.stripes[0].offset
    head = data[start:start + 4096]
    assert head[0] & 1 == 0  # compressed
    assert zstandard.frame_content_size(head[HEADER_SIZE:]) == MAX_BLOCK_SIZE

    data = dictionary_bomb()
    assert len(data) < 4096
    start = _tail(data)[1].stripes[0]
    raw = data[start.offset + start.dataLength:start.offset + start.dataLength +
               start.footerLength]
    stripe_footer = pb.StripeFooter.FromString(bytes(decompress_stream(raw, C.ZSTD,
                                                                       MAX_BLOCK_SIZE)))
    assert stripe_footer.columns[1].dictionarySize == 2**31

    assert len(many_rows(10**9)) < 1024
    assert _tail(many_rows(10**9))[1].numberOfRows == 10**9
    for kind in (C.LZO, C.BROTLI):
        assert 2_000_000 < len(empty_chunks(kind)) < 2_200_000
        assert len(EMPTY_BODIES[kind]) <= 3
    assert len(decimal_scales(10**5)) < 512
    assert len(decimal_scales(10**6)) < 2300
    zones = _tail(zone_spellings())[1]
    assert len(zones.stripes) == 2000
    assert len(deep_types(256)) < 4096
