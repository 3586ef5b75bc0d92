"""A collect whose result stream Python fails to read ends with an error, never hangs: Spark's
serving thread has no result to give when Python never connected to it."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pyarrow as pa
import pytest

from auger.spark import jobs

pytestmark = pytest.mark.spark


def _in_thread(fn: Any, seconds: float) -> tuple[bool, Any]:
    """(whether ``fn`` ended within ``seconds``, what it returned or raised), run on a thread of
    its own (its own py4j connection, as a statement's thread has)."""
    out: list[Any] = []

    def run() -> None:
        try:
            out.append(fn())
        except BaseException as exc:
            out.append(exc)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(seconds)
    return not t.is_alive(), out[0] if out else None


def test_a_collect_python_never_connected_to_fails_instead_of_hanging(
    spark: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import pyspark.util

    monkeypatch.setattr(jobs, "SERVED_FAILURE_WAIT_S", 1, raising=False)

    @contextmanager
    def refused(sock_info: Any, serializer: Any) -> Iterator[Any]:
        raise ConnectionRefusedError("no connection to the result server")
        yield  # a generator, as pyspark's is

    df = spark.sql("SELECT id, id % 7 AS k FROM range(5000)")
    with monkeypatch.context() as m:
        m.setattr(pyspark.util, "_load_from_socket", refused)

        def collect_then_again() -> Any:
            try:
                jobs._collected(df)
            except ConnectionRefusedError as exc:
                failed = exc
            else:
                raise AssertionError("the collect did not fail")
            m.undo()  # the next statement on the same connection gets its answer
            return failed, jobs._collected(df)

        ended, got = _in_thread(collect_then_again, 60)
    assert ended, "the collect hung waiting for Spark's result server"
    assert not isinstance(got, BaseException), got
    failed, table = got
    assert "no connection" in str(failed)
    assert isinstance(table, pa.Table) and table.num_rows == 5000
    assert sum(table.column("k").to_pylist()) == sum(i % 7 for i in range(5000))


def test_the_jobs_failure_is_still_the_error_raised(spark: Any) -> None:
    df = spark.sql("SELECT assert_true(id < 10, 'id passed ten') AS a FROM range(50)")
    ended, got = _in_thread(lambda: jobs._collected(df), 120)
    assert ended
    assert isinstance(got, Exception) and "id passed ten" in str(got)
