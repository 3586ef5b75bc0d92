"""A collect or a streamed result never hangs waiting for the result of Spark's serving thread,
which has none when Python never connected to it or the thread died of a JVM error: a failed
read ends with its error, and so does a stream whose thread gave no result."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pyarrow as pa
import pytest

from auger.errors import ErrorKind, UserError
from auger.spark import jobs
from tests.fakes import count_calls

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

    monkeypatch.setattr(jobs, "SERVED_RESULT_WAIT_S", 1, raising=False)
    real = pyspark.util._load_from_socket
    refusing: list[threading.Thread] = []  # the test's thread alone: others collect as ever

    @contextmanager
    def refused() -> Iterator[Any]:
        raise ConnectionRefusedError("no connection to the result server")
        yield  # a generator, as pyspark's is

    def load(sock_info: Any, serializer: Any) -> Any:
        if threading.current_thread() in refusing:
            return refused()
        return real(sock_info, serializer)

    monkeypatch.setattr(pyspark.util, "_load_from_socket", load)
    df = spark.sql("SELECT id, id % 7 AS k FROM range(5000)")

    def collect_then_again() -> Any:
        refusing.append(threading.current_thread())
        try:
            jobs._collected(df)
        except ConnectionRefusedError as exc:
            failed = exc
        else:
            raise AssertionError("the collect did not fail")
        refusing.clear()  # the next statement on the same connection gets its answer
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


class _Served:
    """``df`` whose collect is served as Spark serves it, with the result (``getResult``) of
    another server: one never connected to, whose thread ends with no result (as a thread that
    died of a JVM error after serving a whole answer)."""

    def __init__(self, df: Any, orphan: Any) -> None:
        self._df, self._orphan = df, orphan

    def __getattr__(self, name: str) -> Any:
        return getattr(self._df, name)

    @property
    def _jdf(self) -> Any:
        served = self._df._jdf.collectAsArrowToPython()
        orphan = self._orphan

        class Jdf:
            def collectAsArrowToPython(self) -> list[Any]:
                return [served[0], served[1], orphan]

        return Jdf()


def test_an_answer_whose_server_gives_no_result_is_an_error(
    spark: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Spark ends the stream in a ``finally``: a thread killed by a JVM error (OutOfMemoryError
    while the job ran) still ends it, after none or some of the rows, and gives no result."""
    monkeypatch.setattr(jobs, "SERVED_RESULT_WAIT_S", 1)
    orphan = spark.sql("SELECT 1 AS one FROM range(3)")._jdf.collectAsArrowToPython()[2]
    df = _Served(spark.sql("SELECT id FROM range(1000)"), orphan)
    ended, got = _in_thread(lambda: jobs._collected(df), 60)
    assert ended, "the collect hung waiting for Spark's result server"
    assert isinstance(got, UserError), got
    assert got.kind is ErrorKind.SYSTEM
    assert "failed while it served the answer" in got.message


def test_a_streamed_results_failure_is_the_error_raised(
    spark: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked = count_calls(monkeypatch, jobs._ServedFailure, "getResult")
    df = spark.sql(
        "SELECT assert_true(id < 10, 'id passed ten') AS a FROM range(0, 50, 1, 5) ORDER BY id"
    )

    def stream() -> Any:
        return list(jobs.BatchStream(df, "collect-failures-stream", "a failing stream"))

    ended, got = _in_thread(stream, 120)
    assert ended
    assert isinstance(got, Exception) and "id passed ten" in str(got), got
    assert len(asked) == 1  # pyspark's reader asked the bounded server for the failure


def test_a_streamed_results_server_without_a_result_is_an_error(
    spark: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After telling Python of a failure, a thread that died of a JVM error has no result:
    the stream ends with an error, not a wait for ever (nor an end as if the rows had)."""
    monkeypatch.setattr(jobs, "SERVED_RESULT_WAIT_S", 1)
    df = spark.sql("SELECT 1 AS one FROM range(3)")
    orphan = df._jdf.collectAsArrowToPython()[2]
    ended, got = _in_thread(lambda: jobs._ServedFailure(df, orphan).getResult(), 60)
    assert ended
    assert isinstance(got, UserError) and got.kind is ErrorKind.SYSTEM, got
    assert "failed while it served the answer" in got.message
