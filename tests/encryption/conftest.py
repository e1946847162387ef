"""Fixtures of the encryption tests: ORC Java (compiled helper, see
``tests/helpers/orc_java_enc.py``), the files it writes with encrypted columns, and what it
reads from them with every set of keys -- all made once per session in one JVM run."""

from __future__ import annotations

import pytest
from helpers.orc_java_enc import (
    CODECS,
    ENCRYPT,
    KEY_SETS,
    MASKS,
    ROWS,
    JavaFiles,
    OrcJava,
    orc_java_or_none,
)


@pytest.fixture(scope="session")
def orc_java() -> OrcJava:
    """The compiled ORC Java helper (skips without Java or PySpark's jars)."""
    java = orc_java_or_none()
    if java is None:
        pytest.skip("needs Java (javac) and PySpark's ORC Java jars")
    return java


@pytest.fixture(scope="session")
def java_files(orc_java: OrcJava, tmp_path_factory: pytest.TempPathFactory) -> JavaFiles:
    """Encrypted files written by ORC Java, one per codec, and its readings of them."""
    root = tmp_path_factory.mktemp("java-encrypted")
    paths = {codec: root / f"java-{codec.lower()}.orc" for codec in CODECS}
    pairs = [(codec, name) for codec in CODECS for name in KEY_SETS]
    out = orc_java.batch([["write", str(p), str(ROWS), ENCRYPT, MASKS, codec, *KEY_SETS["all"]]
                          for codec, p in paths.items()]
                         + [["read", str(paths[c]), *KEY_SETS[n]] for c, n in pairs])
    assert not any(o.strip() for o in out[:len(paths)]), out[:len(paths)]
    results = [OrcJava.parse_read(o) for o in out[len(paths):]]
    return JavaFiles(paths, dict(zip(pairs, results, strict=True)))
