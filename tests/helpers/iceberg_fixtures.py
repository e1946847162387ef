"""pytest fixtures for Iceberg tests: pyiceberg's SQL catalog on SQLite, with a local or a
moto-S3 warehouse (a plugin of ``tests/conftest.py``; tests skip without pyiceberg, and with
``CI=true`` the iceberg extra is part of the test install)."""

from __future__ import annotations

import pathlib
from collections.abc import Iterator
from typing import Any

import pytest

CATALOG_NAME = "aorc"
MOTO = {"s3.access-key-id": "testing", "s3.secret-access-key": "testing",
        "s3.region": "us-east-1"}


def local_catalog(root: pathlib.Path) -> Any:
    """A SQL catalog on SQLite with its warehouse in ``root`` and a namespace ``db``."""
    from pyiceberg.catalog.sql import SqlCatalog

    root.mkdir(parents=True, exist_ok=True)
    catalog = SqlCatalog(CATALOG_NAME, uri=f"sqlite:///{root}/catalog.db",
                         warehouse=f"file://{root}/warehouse")
    catalog.create_namespace("db")
    return catalog


@pytest.fixture
def catalog(tmp_path: pathlib.Path) -> Iterator[Any]:
    """pyiceberg's SqlCatalog on SQLite, local warehouse, namespace ``db``."""
    pytest.importorskip("pyiceberg")
    c = local_catalog(tmp_path / "iceberg")
    try:
        yield c
    finally:
        c.engine.dispose()


@pytest.fixture
def s3_catalog(tmp_path: pathlib.Path, s3_env: str, s3_bucket: str) -> Iterator[Any]:
    """pyiceberg's SqlCatalog on SQLite with its warehouse on moto's S3, namespace ``db``."""
    pytest.importorskip("pyiceberg")
    from pyiceberg.catalog.sql import SqlCatalog

    c = SqlCatalog(CATALOG_NAME, uri=f"sqlite:///{tmp_path}/catalog.db",
                   warehouse=f"s3://{s3_bucket}/warehouse", **{"s3.endpoint": s3_env, **MOTO})
    c.create_namespace("db")
    try:
        yield c
    finally:
        c.engine.dispose()
