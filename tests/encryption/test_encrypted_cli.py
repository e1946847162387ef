"""Encryption through the CLI (``aorc convert --encrypt --mask --key/--keys``, ``aorc meta``),
datasets (``write_dataset(keys=...)`` read back by ``read_dataset(keys=...)``), compaction
and Polars (``scan_orc(keys=...)``)."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from helpers.cli import run
from helpers.orc_java_enc import HR as JHR
from helpers.orc_java_enc import PII as JPII
from helpers.orc_java_enc import JavaFiles

import aorc

PII = bytes(range(1, 33))
HR = bytes(range(40, 56))


def _input(tmp_path: Path) -> tuple[pa.Table, Path]:
    t = pa.table({"id": pa.array(range(50), pa.int64()),
                  "ssn": [f"ssn-{i:04d}" for i in range(50)],
                  "salary": pa.array([i * 10 for i in range(50)], pa.int64())})
    path = tmp_path / "in.parquet"
    pq.write_table(t, path)
    return t, path


def test_convert_and_meta(tmp_path: Path) -> None:
    t, src = _input(tmp_path)
    keyfile = tmp_path / "keys.txt"
    keyfile.write_text(f"# master keys\npii={PII.hex()}\nhr@1={HR.hex()}\n")
    out = tmp_path / "out.orc"
    done = run("convert", str(src), str(out), "--encrypt", "pii:ssn;hr:salary",
               "--mask", "sha256:ssn", "--keys", str(keyfile), "--no-progress")
    assert done.returncode == 0, done.stderr
    keys = aorc.InMemoryKeys({"pii": PII, "hr": {1: HR}})
    assert aorc.sync.read_table(out, keys=keys).equals(t)
    assert aorc.sync.read_table(out).column("salary").null_count == 50
    meta = run("meta", str(out))
    assert "column 2 ssn: key pii@0, mask sha256" in meta.stdout
    assert "column 3 salary: key hr@1, mask nullify" in meta.stdout
    assert PII.hex() not in meta.stdout and HR.hex() not in meta.stdout
    info = json.loads(run("meta", "--json", str(out)).stdout)
    assert [v["key"] for v in info["encryption"]["variants"]] == ["hr", "pii"]
    one = tmp_path / "one.orc"
    done = run("convert", str(src), str(one), "--encrypt", "pii:ssn", "--key",
               f"pii={PII.hex()}", "--no-progress")
    assert done.returncode == 0, done.stderr
    assert aorc.sync.read_table(one, keys=keys).equals(t)
    bad = run("convert", str(src), str(tmp_path / "bad.orc"), "--encrypt", "pii:ssn",
              "--key", "pii=" + "zz" * 32, "--no-progress")
    assert bad.returncode != 0 and "not hexadecimal" in bad.stderr
    assert "zz" * 32 not in bad.stderr
    assert not (tmp_path / "bad.orc").exists()
    none = run("convert", str(src), str(tmp_path / "nokey.orc"), "--encrypt", "pii:ssn",
               "--no-progress")
    assert none.returncode != 0 and "keys=" in none.stderr


def test_write_dataset_with_keys(tmp_path: Path) -> None:
    t, _ = _input(tmp_path)
    t = t.append_column("part", pa.array([i % 3 for i in range(50)], pa.int64()))
    keys = aorc.InMemoryKeys({"pii": PII})
    aorc.sync.write_dataset(t, tmp_path / "ds", partition_cols=["part"], encrypt="pii:ssn",
                            keys=keys)
    back = aorc.sync.read_dataset(tmp_path / "ds", keys=keys).sort_by("id")
    assert back.column("ssn").equals(t.column("ssn"))
    masked = aorc.sync.read_dataset(tmp_path / "ds").sort_by("id")
    assert masked.column("ssn").null_count == 50
    assert masked.column("salary").equals(t.column("salary"))


async def test_compaction_leaves_encrypted_files(tmp_path: Path) -> None:
    t, _ = _input(tmp_path)
    keys = aorc.InMemoryKeys({"pii": PII})
    folder = tmp_path / "small"
    folder.mkdir()
    for i in range(3):
        await aorc.write_table(t.slice(i * 10, 10), folder / f"f{i}.orc", encrypt="pii:ssn",
                               keys=keys)
    with pytest.warns(aorc.AorcWarning, match="encrypted columns"):
        result = await aorc.compact(folder)
    assert not result.written and len(list(folder.glob("*.orc"))) == 3
    back = (await aorc.read_dataset(folder, keys=keys)).sort_by("id")
    assert back.column("ssn").to_pylist() == t.column("ssn").to_pylist()[:30]


def test_polars_scan_with_keys(tmp_path: Path) -> None:
    pl = pytest.importorskip("polars")
    import aorc.polars as aorc_polars

    t, _ = _input(tmp_path)
    keys = aorc.InMemoryKeys({"pii": PII})
    aorc.sync.write_table(t, tmp_path / "p.orc", encrypt="pii:ssn", keys=keys)
    got = aorc_polars.scan_orc(tmp_path / "p.orc", keys=keys).filter(
        pl.col("ssn") == "ssn-0007").collect()
    assert got["id"].to_list() == [7]
    masked = aorc_polars.read_orc(tmp_path / "p.orc")
    assert masked["ssn"].null_count() == 50


async def test_rolling_sink_encrypts(tmp_path: Path) -> None:
    schema = pa.schema([("id", pa.int64()), ("ssn", pa.string()), ("day", pa.string())])
    batch = pa.record_batch([pa.array(range(40), pa.int64()),
                             pa.array([f"ssn-{i:03d}" for i in range(40)]),
                             pa.array(["a", "b"] * 20)], schema=schema)
    with pytest.raises(aorc.SchemaError, match="keys="):
        aorc.RollingSink(str(tmp_path), schema, encrypt="pii:ssn")
    keys = aorc.InMemoryKeys({"pii": PII})
    async with aorc.RollingSink(str(tmp_path / "sink"), schema, partition_by=["day"],
                                encrypt="pii:ssn", masks="sha256:ssn", keys=keys) as sink:
        await sink.write(batch, topic="people", partition=0, offsets=list(range(40)))
    files = sorted((tmp_path / "sink").rglob("*.orc"))
    assert len(files) == 2
    back = (await aorc.read_dataset(tmp_path / "sink", keys=keys)).sort_by("id")
    assert back.column("ssn").to_pylist() == batch.column(1).to_pylist()
    for f in files:
        data = f.read_bytes()
        assert b"ssn-0" not in data  # zstd or not, the values are not in the clear
        masked = aorc.sync.read_table(f).column("ssn").to_pylist()
        assert all(v is not None and len(v) == 64 for v in masked)


@pytest.mark.parametrize("how", ["file list", "folder"])
def test_dataset_filter_on_an_encrypted_column_with_keys(tmp_path: Path, how: str) -> None:
    """A dataset read with keys prunes small files by the decrypted statistics: a tail
    kept slim for the many-small-files path parsed its statistics again from the file's
    bytes, the masked ones (all null), and the filter then matched no file."""
    t, _ = _input(tmp_path)
    keys = aorc.InMemoryKeys({"pii": PII})
    folder = tmp_path / "ds"
    folder.mkdir()
    for part in range(2):
        aorc.sync.write_table(t.slice(part * 25, 25), folder / f"p{part}.orc",
                              encrypt="pii:ssn", keys=keys)
    source = [str(p) for p in sorted(folder.iterdir())] if how == "file list" else str(folder)
    wanted = t.column("ssn")[7].as_py()
    got = aorc.sync.read_dataset(source, keys=keys, filters=[("ssn", "==", wanted)])
    assert got.column("id").to_pylist() == [t.column("id")[7].as_py()]
    dataset = aorc.sync.open_dataset(source, keys=keys)
    assert dataset.read(filters=[("ssn", "==", wanted)]).num_rows == 1
    assert aorc.sync.read_dataset(source, filters=[("ssn", "==", wanted)]).num_rows == 0


def test_meta_head_cat_with_keys(java_files: JavaFiles, tmp_path: Path) -> None:
    """``aorc meta/head/cat --key/--keys`` on a file ORC Java wrote: the rows ORC Java reads
    with the same keys (and without them, the masked rows), the decrypted file statistics;
    the key bytes nowhere in the output."""
    path = java_files.paths["ZSTD"]
    keyfile = tmp_path / "keys.txt"
    keyfile.write_text(f"pii={JPII.hex()}\nhr@1={JHR.hex()}\n")
    java_all = java_files.reads["ZSTD", "all"]
    java_pii = java_files.reads["ZSTD", "pii"]
    java_none = java_files.reads["ZSTD", "none"]
    head = run("head", "-n", "5", str(path), "--keys", str(keyfile))
    assert head.returncode == 0, head.stderr
    assert [list(json.loads(line).values()) for line in head.stdout.splitlines()] == \
        java_all.rows[:5]
    head = run("head", "-n", "5", str(path), "--key", f"pii={JPII.hex()}")
    assert [list(json.loads(line).values()) for line in head.stdout.splitlines()] == \
        java_pii.rows[:5]
    head = run("head", "-n", "5", str(path))
    assert [list(json.loads(line).values()) for line in head.stdout.splitlines()] == \
        java_none.rows[:5]
    cat = run("cat", str(path), "--keys", str(keyfile), "--filter", "ssn == " +
              str(java_all.rows[777][1]), "--no-progress")
    assert cat.returncode == 0, cat.stderr
    assert [list(json.loads(line).values()) for line in cat.stdout.splitlines()] == \
        [r for r in java_all.rows if r[1] == java_all.rows[777][1]]
    csv = run("cat", "--format", "csv", str(path), "--keys", str(keyfile), "--no-progress")
    assert csv.stdout.splitlines()[1].split(",")[:2] == [str(java_all.rows[0][0]),
                                                         f'"{java_all.rows[0][1]}"']
    meta = run("meta", str(path), "--keys", str(keyfile))
    assert meta.returncode == 0, meta.stderr
    assert "column 2 ssn: key pii@0, mask nullify, decrypted" in meta.stdout
    ssn = [r[1] for r in java_all.rows]
    assert f"minimum={min(ssn)}, maximum={max(ssn)}" in meta.stdout  # the decrypted statistics
    masked = run("meta", str(path), "--key", f"pii={JPII.hex()}")
    assert "column 4 salary: key hr@1, mask nullify\n" in masked.stdout  # no hr key
    assert f"minimum={min(ssn)}" not in run("meta", str(path)).stdout
    info = json.loads(run("meta", "--json", str(path), "--keys", str(keyfile)).stdout)
    assert all(v["decrypted"] for v in info["encryption"]["variants"])
    wrong = run("head", str(path), "--key", "pii=" + "ab" * 32)
    assert wrong.returncode == 1 and "pii" in wrong.stderr
    for done in (head, cat, csv, meta, masked, wrong):
        for key in (JPII, JHR, bytes.fromhex("ab" * 32)):
            assert key.hex() not in done.stdout + done.stderr
