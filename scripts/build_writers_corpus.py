"""Build ``tests/data/writers/``: ORC files from every ORC writer that runs here, each with a
JSON file of the rows as that writer's own reader reads them (see
``tests/helpers/writers_corpus.py`` for the canonical form), so the corpus test needs none of
the writers.

Writers:

- ORC Java 2.3.0 (PySpark 4.3's jars) and older ORC Java releases from older PySpark source
  distributions cached under ``/work/venvs/writers/wheels`` (``pyspark-3.5.5.tar.gz``
  carries ORC 1.9.5, ``3.3.4`` ORC 1.7, ``3.1.3`` ORC 1.5), through
  ``scripts/writers_corpus/CorpusWriter.java`` run in a JVM whose default zone (the writer
  zone ORC Java records) is not UTC; it writes every type, a version-0.11 file and a file
  with Hive's positional names ``_col0, _col1, ...``, and reads them back with ORC Java;
- Hive 2.3's own ORC writer (``org.apache.hadoop.hive.ql.io.orc`` in PySpark's hive-exec
  jar) through ``scripts/writers_corpus/HiveWriter.java``, columns named ``_col0, ...``;
- ORC C++ through pyarrow (this environment's, and pyarrow 12.0.1 in the virtualenv
  ``/work/venvs/writers/old-pyarrow`` when it exists) and through pyorc (with a writer time
  zone of Asia/Kolkata), each read back by the same library;
- small files from orc-rust's test data (Apache-2.0, datafusion-contrib/orc-rust), read with
  ORC Java.

Run from the repository root: ``python scripts/build_writers_corpus.py [--orc-rust DIR]``
(``DIR`` a checkout of orc-rust; without it those files are kept as they are; the
README.md table of files is written by hand from the JSON files). A pyarrow
child mode (``--pyarrow-child OUT PREFIX``) is what the old pyarrow runs.
"""

from __future__ import annotations

import argparse
import datetime
import decimal
import importlib.util
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zoneinfo
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "data" / "writers"
JAVA = Path(__file__).with_name("writers_corpus") / "CorpusWriter.java"
CACHE = Path("/work/venvs/writers")
#: PySpark source distributions whose jars carry older ORC Java releases, and the JVM zone.
OLD_SPARKS = {"3.5.5": "Asia/Kolkata", "3.3.4": "Europe/Berlin", "3.1.3": "Australia/Sydney"}
#: orc-rust test files taken (path in the repository at the commit), all Apache-2.0.
ORC_RUST = {
    "tests/basic/data/alltypes.lzo.orc": "c1e4fe436219f11f7f6204eb591fa7d770deb336",
    "tests/basic/data/alltypes.zstd.orc": "c1e4fe436219f11f7f6204eb591fa7d770deb336",
    "tests/basic/data/nested_struct.orc": "c1e4fe436219f11f7f6204eb591fa7d770deb336",
    "tests/basic/data/nested_map.orc": "c1e4fe436219f11f7f6204eb591fa7d770deb336",
    "tests/basic/data/nested_array_struct.orc": "c1e4fe436219f11f7f6204eb591fa7d770deb336",
    "tests/basic/data/pyarrow_timestamps.orc": "c1e4fe436219f11f7f6204eb591fa7d770deb336",
    "tests/basic/data/pyorc_rlev2_patchedbase.orc": "c1e4fe436219f11f7f6204eb591fa7d770deb336",
    "tests/basic/data/timestamp_writer_timezone.snappy.orc":
        "7dca13fa8dc3a87bbeb99791b00f8f1e0dff459c",
}


def _canonical() -> Any:
    spec = importlib.util.spec_from_file_location(
        "writers_corpus", ROOT / "tests" / "helpers" / "writers_corpus.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _save(name: str, meta: dict[str, Any]) -> None:
    (OUT / f"{name}.json").write_text(json.dumps(meta, indent=None, sort_keys=True) + "\n")


# =========================================================================== ORC Java

def _spark_version() -> str:
    import pyspark
    return str(pyspark.__version__)


def _spark_jars() -> Path:
    import pyspark
    return Path(pyspark.__file__).parent / "jars"


def _old_jars(version: str) -> Path | None:
    folder = CACHE / f"jars-{version}"
    sdist = CACHE / "wheels" / f"pyspark-{version}.tar.gz"
    if not folder.exists() and sdist.exists():
        folder.mkdir(parents=True)
        with tarfile.open(sdist) as tar:
            for member in tar.getmembers():
                base = os.path.basename(member.name)
                if "/deps/jars/" in member.name and base.startswith(
                        ("orc-", "hive-storage-api", "aircompressor", "protobuf-java")):
                    member.name = base
                    tar.extract(member, folder)
    return folder if folder.exists() and any(folder.glob("orc-core-*.jar")) else None


def _classpath(old: Path | None) -> str:
    jars = sorted(_spark_jars().glob("*.jar"))
    if old is None:
        return os.pathsep.join(map(str, jars))
    keep = [j for j in jars if not j.name.startswith(("orc-", "hive-storage-api", "hive-exec",
                                                       "aircompressor"))]
    return os.pathsep.join([str(old / "*")] + list(map(str, keep)))


def _orc_version(classpath: str) -> str:
    for part in classpath.split(os.pathsep):
        folder = Path(part.rstrip("*"))
        for jar in (folder.glob("orc-core-*.jar") if folder.is_dir() else [folder]):
            if jar.name.startswith("orc-core-"):
                return jar.name.removeprefix("orc-core-").split("-")[0].removesuffix(".jar")
    return "?"


def _java(classpath: str, args: list[str], zone: str = "UTC",
          main: str = "CorpusWriter") -> list[dict[str, Any]]:
    sources = [str(JAVA)] + ([str(JAVA.with_name(f"{main}.java"))] if main != "CorpusWriter"
                             else [])
    with tempfile.TemporaryDirectory() as classes:
        subprocess.run(["javac", "-nowarn", "-cp", classpath, "-d", classes, *sources],
                       check=True, capture_output=True)
        run = subprocess.run(["java", f"-Duser.timezone={zone}",
                              "--add-opens=java.base/java.nio=ALL-UNNAMED", "-cp",
                              classes + os.pathsep + classpath, main, *args],
                             capture_output=True, text=True)
        if run.returncode:
            raise SystemExit(f"{main} {args[-1]} failed:\n{run.stderr[-3000:]}")
        out = run.stdout
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def build_java() -> None:
    runs: list[tuple[str | None, str]] = [(None, "America/Los_Angeles")]
    runs += [(v, zone) for v, zone in OLD_SPARKS.items()]
    for version, zone in runs:
        old = _old_jars(version) if version is not None else None
        if version is not None and old is None:
            print(f"ORC Java of PySpark {version}: not cached, skipped")
            continue
        classpath = _classpath(old)
        orc = _orc_version(classpath)
        prefix = f"orc_java_{'.'.join(orc.split('.')[:2])}"
        with tempfile.TemporaryDirectory() as tmp:
            for entry in _java(classpath, [tmp, prefix], zone):
                name = entry["file"]
                shutil.copy(Path(tmp) / name, OUT / name)
                _save(name, {"writer": f"ORC Java {orc}", "writer_zone": zone,
                             "made_by": f"scripts/writers_corpus/CorpusWriter.java, "
                                        f"PySpark {version or _spark_version()} jars",
                             "read_by": f"ORC Java {orc}", "char_trimmed": True,
                             **entry["read"]})
        print(f"ORC Java {orc}: written")


def build_hive() -> None:
    """Hive 2.3's own writer (``org.apache.hadoop.hive.ql.io.orc``, PySpark's hive-exec)."""
    classpath, zone = _classpath(None), "America/Sao_Paulo"
    with tempfile.TemporaryDirectory() as tmp:
        for entry in _java(classpath, [tmp], zone, main="HiveWriter"):
            name = entry["file"]
            shutil.copy(Path(tmp) / name, OUT / name)
            hive = next(_spark_jars().glob("hive-exec-*.jar")).name.split("-")[2]
            _save(name, {"writer": f"Hive {hive} (its ORC writer, on ORC Java "
                                   f"{_orc_version(classpath)})",
                         "writer_zone": zone,
                         "made_by": "scripts/writers_corpus/HiveWriter.java (object "
                                    "inspectors, as Hive's OrcSerde)",
                         "read_by": f"ORC Java {_orc_version(classpath)}",
                         "char_trimmed": True, **entry["read"]})
    print("Hive writer: written")


def _walls_only(value: Any) -> Any:
    if isinstance(value, list):
        return [_walls_only(v) for v in value]
    if isinstance(value, dict):
        if "wall_ns" in value:
            return {"wall_ns": value["wall_ns"]}
        return {k: _walls_only(v) for k, v in value.items()}
    return value


def build_orc_rust(checkout: Path | None) -> None:
    if checkout is None:
        return
    for path, commit in ORC_RUST.items():
        data = subprocess.run(["git", "-C", str(checkout), "show", f"{commit}:{path}"],
                              check=True, capture_output=True).stdout
        (OUT / f"orc_rust_{Path(path).name}").write_bytes(data)
    names = [str(OUT / f"orc_rust_{Path(p).name}") for p in ORC_RUST]
    classpath = _classpath(None)
    for entry in _java(classpath, ["--read", *names]):
        # Read in a UTC JVM, ORC Java's Timestamp is the writer's wall clock, not the instant.
        entry["read"]["rows"] = _walls_only(entry["read"]["rows"])
        source = next(p for p in ORC_RUST if entry["file"] == f"orc_rust_{Path(p).name}")
        _save(entry["file"], {"writer": "see the file's footer (orc-rust test data)",
                              "made_by": f"datafusion-contrib/orc-rust {source} "
                                         f"({ORC_RUST[source]}), Apache-2.0",
                              "read_by": f"ORC Java {_orc_version(classpath)}",
                              "char_trimmed": True, **entry["read"]})
    print("orc-rust files: copied")


# =========================================================================== ORC C++

def _arrow_table() -> Any:
    import pyarrow as pa
    n = 23
    ts = [None if i % 7 == 3 else
          datetime.datetime(1969, 12, 31, 23, 59, 59) + datetime.timedelta(days=41 * i,
                                                                           microseconds=i * 1001)
          for i in range(n)]
    return pa.table({
        "b": pa.array([None if i % 5 == 1 else i % 2 == 0 for i in range(n)]),
        "i8": pa.array([(i * 37) % 256 - 128 for i in range(n)], pa.int8()),
        "i16": pa.array([(i * 9001) % 65536 - 32768 for i in range(n)], pa.int16()),
        "i32": pa.array([i * 123456789 - 2**31 + 1 for i in range(n)], pa.int32()),
        "i64": pa.array([None if i == 4 else i * 987654321987 - 2**61 for i in range(n)],
                        pa.int64()),
        "f": pa.array([i * 1.25 - 3.5 for i in range(n)], pa.float32()),
        "d": pa.array([i * -2.0e-3 + 1e10 for i in range(n)]),
        "s": pa.array([None if i % 6 == 0 else f"héllo wörld {i}" for i in range(n)]),
        "bin": pa.array([bytes([i, 0, 255, (i * 7) % 256]) for i in range(n)]),
        "dec": pa.array([decimal.Decimal(f"{i * 12345 - 40000}.125") for i in range(n)],
                        pa.decimal128(10, 3)),
        "dt": pa.array([-800 + i * 4567 for i in range(n)], pa.int32()).cast(pa.date32()),
        "ts": pa.array(ts, pa.timestamp("ns")),
        "l": pa.array([list(range(i % 4)) if i % 5 else None for i in range(n)],
                      pa.list_(pa.int32())),
        "st": pa.array([{"x": -i, "y": f"y{i}"} for i in range(n)],
                       pa.struct([("x", pa.int32()), ("y", pa.string())])),
    })


def pyarrow_child(out: Path, prefix: str) -> None:
    """Write and read back the pyarrow file (run by every pyarrow, old ones too)."""
    import pyarrow as pa
    import pyarrow.orc as po
    canonical = _canonical()
    name = f"{prefix}_alltypes.zstd.orc"
    po.write_table(_arrow_table(), out / name, compression="zstd")
    back = po.read_table(out / name)
    orc = po.ORCFile(out / name)
    meta = {"writer": f"ORC C++ (pyarrow {pa.__version__})", "writer_zone": "UTC",
            "made_by": "scripts/build_writers_corpus.py (pyarrow.orc.write_table)",
            "read_by": f"pyarrow.orc {pa.__version__}", "char_trimmed": False,
            "schema": str(orc.schema), "writer_version": orc.writer_version,
            "rows": canonical.canonical_rows(back)}
    (out / f"{name}.json").write_text(json.dumps(meta, sort_keys=True) + "\n")


def build_pyarrow() -> None:
    import pyarrow as pa
    pyarrow_child(OUT, f"pyarrow_{pa.__version__.split('.')[0]}")
    old = CACHE / "old-pyarrow" / "bin" / "python"
    if old.exists():
        version = subprocess.run([str(old), "-c", "import pyarrow; print(pyarrow.__version__)"],
                                 check=True, capture_output=True, text=True).stdout.strip()
        subprocess.run([str(old), __file__, "--pyarrow-child", str(OUT),
                        f"pyarrow_{version.split('.')[0]}"], check=True)
        print(f"pyarrow {version}: written")


def build_pyorc() -> None:
    import pyorc
    zone = zoneinfo.ZoneInfo("Asia/Kolkata")
    utc = datetime.UTC
    schema = ("struct<c:char(4),vc:varchar(5),dec:decimal(38,10),ts:timestamp,"
              "tsl:timestamp with local time zone,u:uniontype<int,string>,"
              "m:map<string,int>>")
    rows = []
    for i in range(17):
        at = (datetime.datetime(1969, 12, 31, 23, 59, 58, 999_000, tzinfo=utc)
              + datetime.timedelta(days=97 * i, seconds=3607 * i, microseconds=11 * i))
        rows.append((None,) * 7 if i == 5 else (
            f"c{i}", f"v{i * 3}", decimal.Decimal(f"{i * 10**20 - 7}.{i:010d}"),
            at, at, i if i % 2 else f"u{i}", {f"k{j}": j * i for j in range(i % 3)}))
    name = "pyorc_0.12_kolkata.zlib.orc"
    buf = io.BytesIO()
    with pyorc.Writer(buf, schema, compression=pyorc.CompressionKind.ZLIB, timezone=zone,
                      struct_repr=pyorc.StructRepr.TUPLE) as writer:
        for row in rows:
            writer.write(row)
    (OUT / name).write_bytes(buf.getvalue())

    def read(tz: Any) -> list[Any]:
        return list(pyorc.Reader(io.BytesIO(buf.getvalue()), timezone=tz))

    wall, instant = read(zoneinfo.ZoneInfo("UTC")), read(zone)

    def ns(value: datetime.datetime) -> int:
        delta = value - datetime.datetime(1970, 1, 1, tzinfo=value.tzinfo)
        return (delta.days * 86400 + delta.seconds) * 10**9 + delta.microseconds * 1000

    out = []
    decimal.getcontext().prec = 100
    for w, r in zip(wall, instant, strict=True):
        if w[0] is None:  # the row of nulls
            out.append([None] * 7)
            continue
        out.append([w[0], w[1], format(w[2].quantize(decimal.Decimal(1).scaleb(-10)), "f"),
                    {"wall_ns": ns(w[3].replace(tzinfo=utc)),
                     "instant_ns": ns(r[3].astimezone(utc))},
                    {"instant_ns": ns(r[4].astimezone(utc))}, w[5],
                    [[k, v] for k, v in w[6].items()]])
    _save(name, {"writer": f"ORC C++ (pyorc {pyorc.__version__}, ORC {pyorc.orc_version})",
                 "writer_zone": "Asia/Kolkata",
                 "made_by": "scripts/build_writers_corpus.py (pyorc.Writer)",
                 "read_by": f"pyorc {pyorc.__version__}", "char_trimmed": False,
                 "schema": schema, "rows": out})
    print("pyorc: written")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--orc-rust", type=Path, help="a checkout of orc-rust")
    parser.add_argument("--pyarrow-child", nargs=2, metavar=("OUT", "PREFIX"))
    args = parser.parse_args()
    if args.pyarrow_child:
        pyarrow_child(Path(args.pyarrow_child[0]), args.pyarrow_child[1])
        return
    OUT.mkdir(parents=True, exist_ok=True)
    build_java()
    build_hive()
    build_pyarrow()
    build_pyorc()
    build_orc_rust(args.orc_rust)
    for crc in OUT.glob(".*.crc"):
        crc.unlink()
    print(f"{sum(p.stat().st_size for p in OUT.iterdir())} bytes in {OUT}")


if __name__ == "__main__":
    sys.exit(main())
