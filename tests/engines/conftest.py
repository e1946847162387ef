"""Fixtures of the distributed engines' tests: one small events dataset (Hive folders by
``day``, several stripes per file, ``id`` sorted so that a range filter prunes stripes),
written once per session; see
:mod:`helpers.engines`.

The engines themselves (Ray, a Dask LocalCluster, Daft) start once per session in each test
module's fixtures; without them those modules skip (``nox -s engines`` installs them and,
with ``CI=true``, fails instead of skipping: the ``ray``, ``dask`` and ``daft`` oracles).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.engines import Encrypted, Events, IcebergEvents, write_encrypted, write_events

import aorc

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def events(tmp_path_factory: pytest.TempPathFactory) -> Events:
    """The events dataset (local), written once."""
    ev = write_events(tmp_path_factory.mktemp("events"))
    with aorc.sync.open_reader(ev.files[0]) as reader:
        assert len(reader.stripes) >= 3, "each file must have several stripes"
    return ev


@pytest.fixture(scope="session")
def encrypted(tmp_path_factory: pytest.TempPathFactory) -> Encrypted:
    """A file with encrypted columns (``user`` masked by sha256, ``amount`` nullified) and
    its master key, written once."""
    return write_encrypted(tmp_path_factory.mktemp("encrypted"))


@pytest.fixture(scope="session")
def iceberg_events(tmp_path_factory: pytest.TempPathFactory) -> IcebergEvents:
    """An Iceberg table of events (ORC data files, partitioned by ``kind``, one file with
    position deletes) in pyiceberg's SQL catalog on SQLite, made once; skips (fails with
    ``CI=true``) without pyiceberg."""
    pytest.importorskip("pyiceberg")
    from helpers.engines import write_iceberg_events

    return write_iceberg_events(tmp_path_factory.mktemp("iceberg"))


@pytest.fixture(scope="session")
def worker_env() -> Iterator[None]:
    """Engine workers (new processes) import aorc from this tree."""
    old = os.environ.get("PYTHONPATH")
    here = Path(__file__).resolve().parent  # and the tests' helpers and modules (pickled
    paths = [str(ROOT), str(here.parent), str(here),  # by reference)
             *(old.split(os.pathsep) if old else [])]
    os.environ["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = old


