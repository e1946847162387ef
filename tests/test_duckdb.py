"""DuckDB with aorc (issue 22, item 4): a DuckDB query over an aorc stream whose filter is
pushed into aorc's ``filters=`` (only the matching stripes are read), compared with DuckDB
over pyarrow.orc's table; and a DuckDB result written to ORC on S3 (moto) as a stream, batch
by batch, compared with pyarrow.orc."""

from __future__ import annotations

import io
import pathlib
from collections.abc import Iterator
from typing import Any

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.orc as po

import aorc
import aorc.sync

ROWS = 60_000


def events(n: int = ROWS, seed: int = 22) -> pa.Table:
    rng = np.random.default_rng(seed)
    return pa.table({
        "id": pa.array(np.arange(n), pa.int64()),
        "country": pa.array(rng.choice(["DE", "FR", "NL", "PL"], n)),
        "amount": pa.array(rng.integers(0, 10_000, n), pa.int64()),
    })


def test_a_filter_pushed_into_aorc_reads_only_the_matching_stripes(
        tmp_path: pathlib.Path) -> None:
    path = tmp_path / "events.orc"
    aorc.sync.write_table(events(), str(path), stripe_size=48 << 10)
    orc = po.ORCFile(str(path))
    assert orc.nstripes >= 6
    ends = np.cumsum([orc.read_stripe(i).num_rows for i in range(orc.nstripes)])
    wanted = int(ends[-3])  # the last two stripes (and a few rows of the one before)
    sql = ("SELECT country, count(*) AS n, sum(amount) AS total FROM src "
           f"WHERE id >= {wanted - 10} GROUP BY country ORDER BY country")
    src = po.read_table(str(path))  # noqa: F841 - DuckDB finds it by its name
    expected = duckdb.sql(sql).fetchall()
    with aorc.sync.open_reader(str(path)) as reader:
        src = reader.to_reader(["id", "country", "amount"],  # noqa: F841 - as above
                               filters=[("id", ">=", wanted - 10)])
        assert duckdb.sql(sql).fetchall() == expected
        stats = reader.scan_stats
        assert stats.stripes_total == orc.nstripes
        assert stats.stripes_pruned_by_stats == orc.nstripes - 3
        assert stats.rows_read <= ROWS - int(ends[-4])  # three stripes decoded at most
        assert stats.bytes < path.stat().st_size  # the pruned stripes' bytes never fetched


class Counted:
    """A DuckDB relation's Arrow stream, counting the batches the writer pulls."""

    def __init__(self, relation: Any) -> None:
        self.relation = relation
        self.batches = 0

    def __arrow_c_stream__(self, requested_schema: object | None = None) -> object:
        source = pa.RecordBatchReader.from_stream(self.relation)

        def counted() -> Iterator[pa.RecordBatch]:
            for batch in source:
                self.batches += 1
                yield batch

        reader = pa.RecordBatchReader.from_batches(source.schema, counted())
        return reader.__arrow_c_stream__(requested_schema)


def test_a_duckdb_result_streams_to_orc_on_s3(s3_bucket: str, s3_client: Any) -> None:
    con = duckdb.connect()
    query = ("SELECT i AS id, i % 7 AS k, 'row ' || i::VARCHAR AS s, i * 0.5 AS x "
             "FROM range(200000) t(i) ORDER BY i")
    source = Counted(con.sql(query))
    url = f"s3://{s3_bucket}/duck/out.orc"
    aorc.sync.write_table(source, url, stripe_size=1 << 20)
    assert source.batches > 1  # the writer got the result batch by batch
    body = s3_client.get_object(Bucket=s3_bucket, Key="duck/out.orc")["Body"].read()
    theirs = po.read_table(io.BytesIO(body))
    assert po.ORCFile(io.BytesIO(body)).nstripes > 1
    want = con.sql(query).to_arrow_table()
    assert theirs.num_rows == 200_000
    assert theirs.column_names == want.column_names
    assert theirs.schema.equals(want.schema), (theirs.schema, want.schema)
    assert theirs.equals(want)
    # ... and DuckDB reads it back from S3 through aorc
    back = aorc.sync.record_batch_reader(url, filters=[("k", "==", 3)])  # noqa: F841
    assert con.sql("SELECT count(*) FROM back").fetchall() == [(len(range(3, 200_000, 7)),)]
