"""aorc.spark on GCS (gcp-storage-emulator) and Azure (Azurite): a DataFrame written by
aorc.spark.write, read back through aorc.spark.read with a filter, and the files checked with
pyarrow.orc from the store's own peer. The settings travel to Spark's Python workers in
``storage_options`` (they do not see the driver's environment changes)."""

from __future__ import annotations

import io
from typing import Any

import pyarrow.orc as po
import pytest
from helpers.store_fixtures import azure_connection_string
from helpers.store_harness import Backend, make_backend

import aorc.spark

pytestmark = [
    pytest.mark.spark,
    pytest.mark.filterwarnings("ignore:PySpark does not yet fully support pandas:FutureWarning"),
]


@pytest.fixture(params=["gs", "az"])
def backend(request: pytest.FixtureRequest) -> Backend:
    return make_backend(request.param, request)


def _options(backend: Backend) -> dict[str, Any]:
    if backend.name == "gs":
        return {"endpoint_url": backend.proxy.url, "token": "anon"}
    return {"connection_string": azure_connection_string(backend.proxy.url)}


def test_write_then_read(spark: Any, backend: Backend) -> None:
    options = _options(backend)
    df = spark.sql("select id, cast(id % 7 as int) as k, concat('v', cast(id as string)) as v "
                   "from range(20000)").repartition(2)
    uris = aorc.spark.write(df, backend.url("spark"), storage_options=options)
    assert len(uris) == 2 and all(u.startswith(backend.root + "/spark/") for u in uris)
    ids = []
    for name in backend.names():
        data = backend.get(name)
        assert data is not None
        ids += po.read_table(io.BytesIO(data)).column("id").to_pylist()
    assert sorted(ids) == list(range(20000))
    back = aorc.spark.read(spark, backend.url("spark"), storage_options=options,
                           filters=[("k", "==", 3)])
    expected = sorted(tuple(r) for r in df.where("k = 3").collect())
    assert sorted(tuple(r) for r in back.collect()) == expected
