"""Master keys from text: ``InMemoryKeys.from_specs``, ``InMemoryKeys.from_file`` and
``read_key_specs`` (the CLI's ``--keys FILE`` and the Spark data source's ``keysFile``),
and the Spark data source's key options, which need no Spark session to check."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pyarrow as pa
import pytest

import aorc
from aorc.errors import SchemaError
from aorc.keys import HadoopKMS, InMemoryKeys, KeyVersion, read_key_specs
from aorc.spark import source

PII = bytes(range(1, 33))
PII_1 = bytes(range(60, 92))
HR = bytes(range(40, 56))


def _file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "keys.txt"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_key_file_gives_the_keys_it_lists(tmp_path: Path) -> None:
    path = _file(tmp_path, f"# the team's keys\n\npii={PII.hex()}\n  pii@1={PII_1.hex()}  \n"
                           f"hr@0={HR.hex().upper()}\n")
    assert read_key_specs(path) == [f"pii={PII.hex()}", f"pii@1={PII_1.hex()}",
                                    f"hr@0={HR.hex().upper()}"]
    keys = InMemoryKeys.from_file(path)
    assert asyncio.run(keys.key_names()) == ["hr", "pii"]
    assert asyncio.run(keys.current_version("pii")) == KeyVersion("pii", 1, "AES_CTR_256")
    assert asyncio.run(keys.current_version("hr")) == KeyVersion("hr", 0, "AES_CTR_128")
    assert PII.hex() not in repr(keys)


def test_keys_from_a_file_read_what_keys_in_memory_wrote(tmp_path: Path) -> None:
    table = pa.table({"id": pa.array(range(100), pa.int64()),
                      "ssn": [f"ssn-{i:04d}" for i in range(100)],
                      "salary": pa.array(range(0, 1000, 10), pa.int64())})
    out = tmp_path / "t.orc"
    aorc.sync.write_table(table, out, encrypt="pii:ssn;hr:salary",
                          keys=InMemoryKeys({"pii": PII, "hr": HR}))
    both = InMemoryKeys.from_file(_file(tmp_path, f"pii={PII.hex()}\nhr={HR.hex()}\n"))
    assert aorc.sync.read_table(out, keys=both).equals(table)
    only_pii = InMemoryKeys.from_specs([f"pii={PII.hex()}"])
    got = aorc.sync.read_table(out, keys=only_pii)
    assert got.column("ssn").equals(table.column("ssn"))
    assert got.column("salary").null_count == 100  # hr's column stays masked (nullify)


@pytest.mark.parametrize(("line", "reason"), [
    ("pii", "NAME=HEX"),
    ("pii@x=" + PII.hex(), "version"),
    ("pii=" + PII.hex()[:-1] + "z", "not hexadecimal"),
    ("pii=" + PII.hex()[:40], "16 bytes"),
])
def test_a_bad_line_is_named_by_its_number_not_its_text(tmp_path: Path, line: str,
                                                         reason: str) -> None:
    path = _file(tmp_path, f"# keys\nhr={HR.hex()}\n{line}\n")
    with pytest.raises(ValueError, match=reason) as info:
        InMemoryKeys.from_file(path)
    assert f"{path}, line 3" in str(info.value)
    assert PII.hex()[:20] not in str(info.value) and HR.hex() not in str(info.value)


def _settings(**options: str) -> source._SourceSettings:
    return source._SourceSettings.from_options({"path": "/tmp/x", **options})


def test_the_data_source_takes_a_keys_file_or_a_kms(tmp_path: Path) -> None:
    assert _settings().keys is None
    keys = _settings(keysFile=str(_file(tmp_path, f"pii={PII.hex()}\n"))).keys
    assert isinstance(keys, InMemoryKeys)
    assert asyncio.run(keys.key_names()) == ["pii"]
    kms = _settings(KEYPROVIDER="kms://http@127.0.0.1:9600/kms").keys
    assert isinstance(kms, HadoopKMS) and kms.url == "http://127.0.0.1:9600/kms"


@pytest.mark.parametrize("name", ["key", "Keys", "masterKey"])
def test_the_data_source_refuses_keys_as_options(name: str) -> None:
    with pytest.raises(SchemaError, match="keysFile") as info:
        _settings(**{name: f"pii={PII.hex()}"})
    assert PII.hex()[:20] not in str(info.value)


def test_the_data_source_names_what_is_wrong_with_its_key_options(tmp_path: Path) -> None:
    path = _file(tmp_path, f"pii={PII.hex()}\n")
    with pytest.raises(SchemaError, match="not both"):
        _settings(keysFile=str(path), keyProvider="kms://http@127.0.0.1:9600/kms")
    with pytest.raises(SchemaError, match="cannot read it"):
        _settings(keysFile=str(tmp_path / "missing.txt"))
    with pytest.raises(SchemaError, match="line 1"):
        _settings(keysFile=str(_file(tmp_path, "pii=12\n")))
    with pytest.raises(SchemaError, match="KMS URL"):
        _settings(keyProvider="ftp://kms")
