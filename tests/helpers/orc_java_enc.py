"""ORC Java as an oracle: small Java programs compiled against the PySpark jars (orc-core,
orc-shims, hadoop-client-api, ...). ``OrcEncHelper.java`` (the default) reads encrypted files
with an ``InMemoryKeystore`` (with and without keys), writes them, and lists the secret keys of
a JCEKS key store; ``OrcGeoHelper.java`` (:data:`GEO_SOURCE`) writes and reads GEOMETRY and
GEOGRAPHY columns. Each is compiled once into a temporary folder named after the jars and the
source, so later runs reuse it; commands run in batches, one JVM per batch.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import tempfile
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "CODECS",
    "ENCRYPT",
    "GEO_SOURCE",
    "HR",
    "KEY_SETS",
    "MASKS",
    "PII",
    "ROWS",
    "JavaFiles",
    "JavaReadResult",
    "OrcJava",
    "geo_jars",
    "key_arg",
    "orc_java_or_none",
]

_SOURCE = Path(__file__).with_name("OrcEncHelper.java")
#: The geospatial helper (needs an orc-core with ORC-1903: ORC Java 2.3, PySpark 4.3's jars).
GEO_SOURCE = Path(__file__).with_name("OrcGeoHelper.java")


def _jars() -> Path | None:
    spec = importlib.util.find_spec("pyspark")
    if spec is None or spec.origin is None:
        return None
    jars = Path(spec.origin).parent / "jars"
    return jars if any(jars.glob("orc-core-*.jar")) else None


def geo_jars() -> Path | None:
    """PySpark's jars folder when its orc-core has geospatial types (ORC-1903, ORC Java 2.3:
    PySpark 4.3), else ``None``."""
    jars = _jars()
    if jars is None:
        return None
    for jar in jars.glob("orc-core-*.jar"):
        with zipfile.ZipFile(jar) as z:
            if "org/apache/orc/GeospatialColumnStatistics.class" in z.namelist():
                return jars
    return None


def key_arg(name: str, version: int, key: bytes) -> str:
    """A key as the helper takes it: ``NAME:VERSION:HEX``."""
    return f"{name}:{version}:{key.hex()}"


@dataclass
class JavaReadResult:
    """What ORC Java read: the rows (lists, one value per top-level column) and the file
    statistics' text per column id."""

    rows: list[list[Any]] = field(default_factory=list)
    stats: dict[int, str] = field(default_factory=dict)
    error: str | None = None


class OrcJava:
    """The compiled helper; :meth:`batch` runs commands in one JVM."""

    def __init__(self, classes: Path, jars: Path, main: str = "OrcEncHelper") -> None:
        self._classpath = f"{classes}{os.pathsep}{jars}/*"
        self._main = main

    def batch(self, commands: Sequence[Sequence[str]]) -> list[str]:
        """Run the commands in one JVM; each one's standard output."""
        with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
            f.write("\n".join("\t".join(c) for c in commands))
        try:
            out = subprocess.run(["java", "-Xmx512m", "-cp", self._classpath, self._main,
                                  "batch", f.name], capture_output=True, text=True, check=True,
                                 timeout=600).stdout
        finally:
            os.unlink(f.name)
        parts = out.split("@@@ ")[1:]
        assert len(parts) == len(commands), out[-2000:]
        return [p.split("\n", 1)[1] if "\n" in p else "" for p in parts]

    @staticmethod
    def parse_read(text: str) -> JavaReadResult:
        """The output of a ``read`` command."""
        result = JavaReadResult()
        for line in text.splitlines():
            if line.startswith("["):
                result.rows.append(json.loads(line))
            elif line.startswith("stats "):
                _, column, rest = line.split(" ", 2)
                result.stats[int(column)] = json.loads(rest)
            elif line.startswith("error "):
                result.error = json.loads(line[6:])
        return result

    def read(self, files: Sequence[str | Path], keys: Sequence[Sequence[str]]
             ) -> list[JavaReadResult]:
        """ORC Java's reading of each file with the matching key arguments."""
        out = self.batch([["read", str(f), *k] for f, k in zip(files, keys, strict=True)])
        return [self.parse_read(o) for o in out]

    def keystore(self, path: str | Path, password: str) -> dict[str, bytes]:
        """The secret keys of a JCEKS key store by alias (``pii@0``)."""
        text = self.batch([["keystore", str(path), password]])[0]
        return {alias: bytes.fromhex(hexkey)
                for alias, hexkey in (line.split() for line in text.splitlines() if line)}


def orc_java_or_none(source: Path = _SOURCE) -> OrcJava | None:
    """The helper of ``source``, compiled if needed; ``None`` without Java, javac or the
    PySpark jars."""
    jars = _jars()
    if jars is None or shutil.which("javac") is None or shutil.which("java") is None:
        return None
    digest = hashlib.sha256(source.read_bytes())
    for jar in sorted(p.name for p in jars.glob("*.jar")):
        digest.update(jar.encode())
    classes = Path(tempfile.gettempdir()) / f"aorc-orc-java-enc-{digest.hexdigest()[:16]}"
    if not (classes / f"{source.stem}.class").exists():
        work = Path(tempfile.mkdtemp(prefix="aorc-orc-java-enc-"))
        subprocess.run(["javac", "-nowarn", "-d", str(work), "-cp", f"{jars}/*", str(source)],
                       check=True, capture_output=True, timeout=600)
        try:
            work.rename(classes)
        except OSError:  # compiled by another run meanwhile
            shutil.rmtree(work, ignore_errors=True)
    return OrcJava(classes, jars, source.stem)


#: Master keys of the Java-written files: ``pii`` (AES_CTR_256, version 0) and ``hr``
#: (AES_CTR_128, version 1).
PII = bytes(range(32))
HR = bytes(range(100, 116))
ENCRYPT = "pii:ssn,email;hr:salary"
MASKS = "sha256:email"
CODECS = ("NONE", "ZLIB", "ZSTD")
ROWS = 12_000
#: The key sets the files are read with, by name: ORC Java's ``NAME:VERSION:HEX`` arguments.
KEY_SETS = {
    "all": [key_arg("pii", 0, PII), key_arg("hr", 1, HR)],
    "pii": [key_arg("pii", 0, PII)],
    "none": [],
}


@dataclass
class JavaFiles:
    """Files ORC Java wrote (by codec) and what it reads from each with each key set."""

    paths: dict[str, Path]
    reads: dict[tuple[str, str], JavaReadResult]
