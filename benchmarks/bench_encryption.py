"""Encryption benchmark: the events table written and read with two encrypted columns
against the same table unencrypted, and AES/CTR's throughput against the read's.

The events table (:func:`bench_read.build_table`, zstd) is written with aorc as it is, and
with ``uuid`` and ``rand_int64`` encrypted (``encrypt="pii:uuid;hr:rand_int64"``, masks
``sha256:uuid``, the other nullified; keys from :class:`aorc.InMemoryKeys`), side by side in
one process, ``--repeat`` times each, alternating; then both files are read (the encrypted
one with its keys, and without). It prints best and median of each, the ratios encrypted /
plain (target: at most 1.15 for reading and writing), and AES/CTR's throughput on a buffer of
the encrypted streams' size against the file's decode throughput (bytes of file per second).

Usage::

    python benchmarks/bench_encryption.py [--rows N] [--repeat R] [--masks sha256:uuid]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_read import build_table  # noqa: E402

import aorc  # noqa: E402
from aorc.format.encryption import ctr  # noqa: E402

ENCRYPT = "pii:uuid;hr:rand_int64"
KEYS = aorc.InMemoryKeys({"pii": bytes(range(32)), "hr": bytes(range(16))})


def timed(func: Callable[[], object], repeat: int) -> list[float]:
    out = []
    for _ in range(repeat):
        start = time.perf_counter()
        func()
        out.append(time.perf_counter() - start)
    return out


def line(name: str, plain: list[float], other: list[float]) -> str:
    return (f"{name:<28} plain best {min(plain):.3f}s median {statistics.median(plain):.3f}s | "
            f"encrypted best {min(other):.3f}s median {statistics.median(other):.3f}s | "
            f"ratio best {min(other) / min(plain):.3f} median "
            f"{statistics.median(other) / statistics.median(plain):.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--masks", default="sha256:uuid")
    args = parser.parse_args()
    table = build_table(args.rows)
    with tempfile.TemporaryDirectory() as tmp:
        plain, enc = Path(tmp, "plain.orc"), Path(tmp, "enc.orc")

        def write_plain() -> None:
            aorc.sync.write_table(table, plain, compression="zstd")

        def write_enc() -> None:
            aorc.sync.write_table(table, enc, compression="zstd", encrypt=ENCRYPT,
                                  masks=args.masks or None, keys=KEYS)

        write_plain()
        write_enc()  # warm-up
        w_plain, w_enc = [], []
        for _ in range(args.repeat):  # alternating, so load drifts hit both alike
            w_plain += timed(write_plain, 1)
            w_enc += timed(write_enc, 1)
        r_plain, r_enc, r_masked = [], [], []
        for _ in range(args.repeat):
            r_plain += timed(lambda: aorc.sync.read_table(plain), 1)
            r_enc += timed(lambda: aorc.sync.read_table(enc, keys=KEYS), 1)
            r_masked += timed(lambda: aorc.sync.read_table(enc), 1)
        print(f"events table: {args.rows} rows; plain {os.path.getsize(plain)} bytes, "
              f"encrypted {os.path.getsize(enc)} bytes (masked copies included); "
              f"{os.cpu_count()} CPUs")
        print(line("write", w_plain, w_enc))
        print(line("read (with keys)", r_plain, r_enc))
        print(line("read (no keys: masked)", r_plain, r_masked))
        with aorc.sync.open_reader(enc) as reader:
            sizes = [s.bytes_on_disk or 0 for s in reader.statistics]
        buf = os.urandom(max(1 << 20, os.path.getsize(enc)))
        aes = timed(lambda: ctr(bytes(32), bytes(16), buf), args.repeat)
        decode = os.path.getsize(plain) / min(r_plain)
        print(f"AES-CTR-256: {len(buf) / min(aes) / 1e9:.2f} GB/s on {len(buf)} bytes; "
              f"the plain file decodes at {decode / 1e9:.3f} GB/s of file "
              f"(clear streams in the encrypted file: {sum(sizes)} bytes)")


if __name__ == "__main__":
    main()
