"""A query that runs out of memory is a RESOURCE error whose fix names the limit that was hit."""

from __future__ import annotations

from auger.errors import ErrorKind
from auger.spark.errors import OUT_OF_MEMORY, out_of_memory


def _wrapped(message: str) -> Exception:
    try:
        try:
            raise RuntimeError(message)
        except RuntimeError as inner:
            raise ValueError("the job failed") from inner
    except ValueError as outer:
        return outer


def test_result_size_limit_names_max_result_size() -> None:
    err = out_of_memory(
        _wrapped(
            "Job aborted: Total size of serialized results of 3 tasks (300.1 MiB) is bigger "
            "than spark.driver.maxResultSize (256.0 MiB)"
        )
    )
    assert err is not None
    assert err.kind is ErrorKind.RESOURCE
    assert OUT_OF_MEMORY in str(err)
    assert "spark.driver.maxResultSize" in str(err)


def test_heap_exhaustion_names_driver_memory() -> None:
    err = out_of_memory(_wrapped("java.lang.OutOfMemoryError: Java heap space"))
    assert err is not None
    assert "spark.driver.memory" in str(err)
    assert "maxResultSize" not in str(err)


def test_other_failures_are_not_memory() -> None:
    assert out_of_memory(_wrapped("division by zero")) is None
