"""A streamed result of one partition is collected and served in one stream.

Spark's partition-by-partition protocol writes small pieces unbuffered, and over TCP each
partition then waits for Python's delayed acknowledgement; a result of one partition (a small
GROUP BY, a LIMIT) is collected whole instead, which the driver holds either way. It must give
what the partition-by-partition stream gives: the same batches, the job's failure, an early
close that leaves the session serving."""

from __future__ import annotations

import threading
from typing import Any

import pyarrow as pa
import pytest

from auger.spark import jobs
from tests.fakes import count_calls

pytestmark = pytest.mark.spark


def _table(stream: jobs.BatchStream) -> pa.Table:
    return pa.Table.from_batches(list(stream), stream.schema)


def test_one_partition_is_served_whole_and_answers_as_many_do(
    spark: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    whole = count_calls(monkeypatch, jobs, "_served_frames")
    query = "SELECT id % 5 AS k, COUNT(*) AS n, SUM(id) AS s FROM range(0, 1000, 1, 4) GROUP BY 1"
    one = spark.sql(query).coalesce(1)
    many = spark.sql(query).repartition(3)
    assert one.rdd.getNumPartitions() == 1 and many.rdd.getNumPartitions() == 3

    got_one = _table(jobs.BatchStream(one, "batch-stream-one", "one partition"))
    assert len(whole) == 1
    got_many = _table(jobs.BatchStream(many, "batch-stream-many", "three partitions"))
    assert len(whole) == 1  # three partitions come one at a time, as before
    expected = sorted((k, 200, sum(i for i in range(1000) if i % 5 == k)) for k in range(5))
    for got in (got_one, got_many):
        assert sorted(zip(*(c.to_pylist() for c in got.columns), strict=True)) == expected
    assert got_one.schema == got_many.schema == jobs.stream_schema(one)


def test_a_one_partition_results_failure_is_the_error_raised(spark: Any) -> None:
    df = spark.sql(
        "SELECT assert_true(id < 10, 'id passed ten') AS a FROM range(0, 50, 1, 3)"
    ).coalesce(1)
    with pytest.raises(Exception, match="id passed ten"):
        list(jobs.BatchStream(df, "batch-stream-failure", "a failing partition"))


def test_a_one_partition_stream_closed_early_leaves_the_session_serving(spark: Any) -> None:
    spark.conf.set("spark.sql.execution.arrow.maxRecordsPerBatch", "100")
    try:
        df = spark.sql("SELECT id, repeat('x', 200) AS s FROM range(0, 20000, 1, 1)")
        stream = jobs.BatchStream(df, "batch-stream-closed", "closed after a batch")
        first = next(stream)
        assert first.num_rows == 100 and first.column("id").to_pylist()[:3] == [0, 1, 2]
        stream.close()
        with pytest.raises(StopIteration):
            next(stream)
    finally:
        spark.conf.unset("spark.sql.execution.arrow.maxRecordsPerBatch")
    # the serving thread ends with its socket; the next streams get their answers
    out: list[Any] = []
    t = threading.Thread(
        target=lambda: out.append(
            _table(jobs.BatchStream(spark.sql("SELECT 42 AS x FROM range(1)"), "g", "after"))
        ),
        daemon=True,
    )
    t.start()
    t.join(60)
    assert out and out[0].column("x").to_pylist() == [42]
