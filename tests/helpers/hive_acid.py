"""Hive 2.3's own ACID writer and reader as a test oracle: ``tests/dataset/acid/
HiveAcidHelper.java`` compiled against PySpark's jars (``hive-exec-2.3.*-core.jar`` and the
Hadoop client) into a cache folder keyed by the jars' names and the source's hash, run as one
JVM per test session that takes commands on stdin (see the Java file's header).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["HiveAcid", "HiveError", "compile_helper", "hive_classpath", "hive_jars",
           "java_opens"]

SOURCE = Path(__file__).resolve().parents[1] / "dataset" / "acid" / "HiveAcidHelper.java"
MAIN = "org.apache.hadoop.hive.ql.io.orc.HiveAcidHelper"


def hive_jars() -> Path | None:
    """PySpark's jar folder when it holds Hive 2.3's ``hive-exec`` core jar, else None."""
    spec = importlib.util.find_spec("pyspark")
    if spec is None or spec.origin is None:
        return None
    jars = Path(spec.origin).parent / "jars"
    return jars if any(jars.glob("hive-exec-2.3.*-core.jar")) else None


def java_opens() -> list[str]:
    """The ``--add-opens`` flags Hive 2.3 needs on Java 17."""
    return [f"--add-opens=java.base/{p}=ALL-UNNAMED" for p in
            ("java.net", "java.lang", "java.util", "java.nio", "sun.nio.ch",
             "java.lang.reflect", "java.io")]


def hive_classpath(jars: Path) -> str:
    """The jars folder as a class path with Hive's own jars first: PySpark 3.5's folder also
    holds ``hive-storage-api`` 2.8, whose ``ValidTxnList`` lacks what Hive 2.3's ACID reader
    calls (``isValidBase``), and a ``jars/*`` wildcard may list it first."""
    first = sorted(str(p) for pattern in ("hive-common-*.jar", "hive-exec-*-core.jar")
                   for p in jars.glob(pattern))
    return ":".join([*first, f"{jars}/*"])


def compile_helper(jars: Path) -> Path:
    """The folder of the compiled helper (compiled once per jar set and source)."""
    key = hashlib.sha256(SOURCE.read_bytes())
    for jar in sorted(p.name for p in jars.glob("*.jar")):
        key.update(jar.encode())
    out = Path(tempfile.gettempdir()) / f"aorc-hive-acid-{key.hexdigest()[:16]}"
    if (out / "done").exists():
        return out
    work = Path(tempfile.mkdtemp(prefix="aorc-hive-acid-build-"))
    subprocess.run(["javac", "-nowarn", "-d", str(work), "-cp", hive_classpath(jars),
                    str(SOURCE)],
                   check=True, capture_output=True, timeout=300)
    (work / "done").write_text("ok")
    try:
        work.rename(out)
    except OSError:  # another session compiled it meanwhile
        shutil.rmtree(work, ignore_errors=True)
    return out


class HiveError(Exception):
    """Hive's code failed on a command (the JVM goes on)."""


def _text(value: Any) -> str:
    if value is None:
        return "\\N"
    if isinstance(value, float) and value in (float("inf"), float("-inf")):
        return "Infinity" if value > 0 else "-Infinity"
    return str(value)


class HiveAcid:
    """One JVM running the helper: write tables with Hive's OrcRecordUpdater, read them with
    Hive's ACID reader."""

    def __init__(self, jars: Path, classes: Path) -> None:
        env = dict(os.environ, HADOOP_USER_NAME="aorc")
        self._log = tempfile.NamedTemporaryFile(prefix="aorc-hive-acid-", suffix=".log",
                                                delete=False)
        self._proc = subprocess.Popen(
            ["java", *java_opens(), "-Xmx512m", "-cp", f"{classes}:{hive_classpath(jars)}", MAIN],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._log,
            text=True, encoding="utf-8", env=env)
        self.commands = 0

    def _send(self, line: str) -> None:
        assert self._proc.stdin is not None
        self._proc.stdin.write(line + "\n")
        self._proc.stdin.flush()
        self.commands += 1

    def _line(self) -> str:
        """The helper's next answer line (``K`` done, ``T\t...`` a list, ``R\t...`` a row,
        ``E`` the end of the rows); other lines (Log4j's status logger) are skipped."""
        assert self._proc.stdout is not None
        line = self._proc.stdout.readline()
        while line and line[0] not in "KTREX":
            line = self._proc.stdout.readline()
        if line.startswith("X\t"):
            raise HiveError(line[2:].rstrip("\n"))
        if not line:
            self._proc.wait(timeout=30)
            log = Path(self._log.name).read_text(errors="replace")[-3000:]
            raise RuntimeError(f"the Hive helper JVM ended (exit {self._proc.poll()}):\n{log}")
        return line.rstrip("\n")

    def run(self, *fields: Any) -> None:
        """Send one command (fields joined by tabs; None as \\N)."""
        self._send("\t".join(_text(f) for f in fields))

    def updater(self, table: str | Path, kind: str, low: int, high: int, stmt: int,
                bucket: int) -> None:
        """Open Hive's record updater for a ``delta`` (``stmt`` -1: no statement id in the
        folder name) or a ``base``."""
        self.run("updater", table, kind, low, high, stmt, bucket)

    def insert(self, txn: int, row: tuple[Any, ...]) -> None:
        """Insert a row ``(id, name, score)`` as transaction ``txn``."""
        self.run("insert", txn, *row)

    def delete(self, txn: int, key: tuple[int, int, int]) -> None:
        """Delete the row of key ``(originalTransaction, bucket, rowId)`` (send keys sorted,
        as Hive's plans do)."""
        self.run("delete", txn, *key)

    def original(self, path: str | Path) -> None:
        """Start a plain (pre-transactional) ORC file written by Hive's ORC writer."""
        self.run("original", path)

    def flush(self) -> None:
        """Flush the open updater (writes its ``_flush_length`` side file)."""
        self.run("flush")
        assert self._line() == "K"

    def close(self) -> None:
        """Close the open updater or original file."""
        self.run("close")
        assert self._line() == "K"

    def txn_list(self, hwm: int, open_ids: list[int], aborted: list[int]) -> str:
        """Hive 2.3's ``ValidReadTxnList`` string form."""
        self.run("txnlist", hwm, ",".join(map(str, open_ids)) or "-",
                 ",".join(map(str, aborted)) or "-")
        return self._line().split("\t", 1)[1]

    def read(self, table: str | Path, txns: str | None = None) -> list[tuple[Any, ...]]:
        """The rows Hive's ACID reader returns: ``(writeid, bucket, rowid, id, name,
        score)``, sorted."""
        self.run("read", table, txns or "-")
        rows = []
        while (line := self._line()) != "E":
            f = [None if x == "\\N" else x for x in line.split("\t")[1:]]
            rows.append((int(f[0]), int(f[1]), int(f[2]),
                         None if f[3] is None else int(f[3]), f[4],
                         None if f[5] is None else float(f[5])))
        return sorted(rows, key=repr)

    def stop(self) -> None:
        """End the JVM."""
        if self._proc.stdin is not None:
            self._proc.stdin.close()
        try:
            self._proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        if self._proc.stdout is not None:
            self._proc.stdout.close()
        self._log.close()
        os.unlink(self._log.name)
