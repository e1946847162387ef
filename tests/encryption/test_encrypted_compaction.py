"""Compaction (stripe copy) of files with encrypted columns, as ORC Java's
``OrcFile.mergeFiles``: each source's stripe ids and encrypted local keys carried, the
statistics encrypted again under the merged file's own local keys. Judged by ORC Java
reading the merged files with and without keys, and by aorc's own reads with keys (values,
statistics, bloom-filter pruning) and without (the masked copies)."""

from __future__ import annotations

import hashlib
import random
import shutil
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from helpers.orc_java_enc import ENCRYPT, HR, KEY_SETS, MASKS, PII, OrcJava

import aorc
from aorc.format.tail import parse_tail

COLUMNS = ["id", "ssn", "email", "salary", "name"]


def keys() -> aorc.InMemoryKeys:
    return aorc.InMemoryKeys({"pii": PII, "hr": {1: HR}},
                             random_bytes=random.Random(3).randbytes)


def table(start: int, n: int) -> pa.Table:
    rng = random.Random(start)
    return pa.table({
        "id": pa.array(range(start, start + n), pa.int64()),
        "ssn": [f"SSN-{rng.randrange(10**9):09d}" for _ in range(n)],
        "email": [None if i % 5 == 1 else f"u{i}@example.com" for i in range(start, start + n)],
        "salary": pa.array([rng.randrange(10**6) for _ in range(n)], pa.int64()),
        "name": [f"Name {i}" for i in range(start, start + n)],
    })


def masked_rows(t: pa.Table) -> list[list[Any]]:
    return [[r["id"], None,
             None if r["email"] is None else hashlib.sha256(r["email"].encode()).hexdigest()
             .upper(), None, r["name"]] for r in t.to_pylist()]


def rows(t: pa.Table) -> list[list[Any]]:
    return [[r[c] for c in COLUMNS] for r in t.to_pylist()]


def stripe_ids(path: Path) -> list[tuple[int | None, int]]:
    data = path.read_bytes()
    tail = parse_tail(data, len(data))
    assert not isinstance(tail, aorc.format.tail.NeedBytes)
    return [(s.encryptStripeId if s.HasField("encryptStripeId") else None,
             len(s.encryptedLocalKeys)) for s in tail.footer.stripes]


async def test_compaction_merges_encrypted_files_as_orc_java(orc_java: OrcJava,
                                                            tmp_path: Path) -> None:
    ours, theirs = tmp_path / "aorc", tmp_path / "java"
    ours.mkdir()
    theirs.mkdir()
    parts = [table(0, 2500), table(2500, 1800), table(4300, 3100)]
    for i, t in enumerate(parts):
        await aorc.write_table(t, ours / f"f{i}.orc", keys=keys(), encrypt=ENCRYPT,
                               masks=MASKS, stripe_size=32 << 10, row_index_stride=1000,
                               bloom_filter_columns=["ssn"], compression="zstd")
    java_sizes = (12_000, 7_000)
    java_paths = [theirs / f"j{i}.orc" for i in range(len(java_sizes))]
    originals = tmp_path / "java-originals"
    out = orc_java.batch([["write", str(p), str(n), ENCRYPT, MASKS, "ZSTD", *KEY_SETS["all"]]
                          for p, n in zip(java_paths, java_sizes, strict=True)])
    assert not any(o.strip() for o in out), out
    shutil.copytree(theirs, originals)

    # without every key: left as they are, with a warning
    for folder, n in ((ours, 3), (theirs, 2)):
        with pytest.warns(aorc.AorcWarning, match="encrypted columns|no key"):
            result = await aorc.compact(folder, target_size=64 << 20)
        assert not result.written and len(list(folder.glob("*.orc"))) == n
        with pytest.warns(aorc.AorcWarning, match="no key 'hr'"):
            await aorc.compact(folder, target_size=64 << 20,
                               keys=aorc.InMemoryKeys({"pii": PII}))

    merged = []
    for folder in (ours, theirs):
        result = await aorc.compact(folder, target_size=64 << 20, keys=keys())
        assert result.stripe_copied == 1 and len(result.written) == 1
        assert len(list(folder.glob("*.orc"))) == 1
        merged.append(Path(result.written[0]))
    mine, java_merged = merged
    whole = pa.concat_tables(parts)

    # each source's first stripe carries its stripe id (1) and its local keys
    ids = stripe_ids(mine)
    assert len(ids) > 3 and [i for i in ids if i[0] is not None] == [(1, 3)] * 3  # 3 variants

    # aorc: with keys the values, statistics and bloom filters; without, the masks
    with aorc.sync.open_reader(mine, keys=keys()) as reader:
        assert rows(reader.read()) == rows(whole)
        ssn = whole.column("ssn").to_pylist()
        assert (reader.statistics[2].minimum, reader.statistics[2].maximum) == \
            (min(ssn), max(ssn))
        assert reader.statistics[4].maximum == max(whole.column("salary").to_pylist())
        got = reader.read(filters=[("ssn", "==", ssn[5000])])
        assert got.column("id").to_pylist() == [5000]
        assert reader.scan_stats.row_groups_pruned_by_bloom > 0  # the decrypted bloom filters
    assert rows(aorc.sync.read_table(mine)) == masked_rows(whole)

    # ORC Java reads both merged files, and the Java-written originals, with each key set
    java = orc_java.read([mine, mine, java_merged, java_merged, *sorted(originals.glob("*.orc"))],
                         [KEY_SETS["all"], [], KEY_SETS["all"], [], *[KEY_SETS["all"]] * 2])
    assert all(r.error is None for r in java), [r.error for r in java]
    assert java[0].rows == rows(whole)
    assert java[1].rows == masked_rows(whole)
    assert f"min: {min(ssn)} max: {max(ssn)} " in java[0].stats[2]  # decrypted by Java
    assert "min:" not in java[1].stats[2]
    originals_rows = java[4].rows + java[5].rows
    assert len(originals_rows) == sum(java_sizes)
    assert java[2].rows == originals_rows
    assert [r[1] for r in java[3].rows] == [None] * len(originals_rows)
    assert rows(aorc.sync.read_table(java_merged, keys=keys())) == originals_rows
    theirs_ssn = [r[1] for r in originals_rows]
    assert f"count: {sum(java_sizes)} " in java[2].stats[2]  # the merged, re-sealed stats
    assert f"min: {min(theirs_ssn)} max: {max(theirs_ssn)} " in java[2].stats[2]
