"""An engine keeps Spark's Python workers from Spark's idle minute while a person is between
queries: when to read is tested on a made-up clock, the read itself on Spark."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from auger.spark.keep_warm import (
    KEEP_EVERY_S,
    KEEP_FOR_S,
    KEEP_WARM_GROUP,
    keep_workers_warm,
    touch_python_workers,
)
from tests.fakes import FakeClock


class _Spark:
    """A session whose status tracker says whether a job runs, by ``running(now)``."""

    def __init__(self, clock: FakeClock, running: Any = lambda now: False) -> None:
        self.clock = clock
        self.running = running
        self.sparkContext = self

    def statusTracker(self) -> Any:
        return self

    def getActiveJobsIds(self) -> list[int]:
        return [3] if self.running(self.clock.now) else []


def _run(
    spark: _Spark,
    clock: FakeClock,
    until: float,
    statements: list[tuple[float, float]] = [(-10.0, 0.0)],  # noqa: B006 - never changed
) -> list[float]:
    """The times of the touches ``keep_workers_warm`` makes until ``until`` on ``clock``, for
    an engine whose statements ran over the ``(start, end)`` spells given."""
    touches: list[float] = []

    def touched(session: Any) -> None:
        assert session is spark
        touches.append(clock.now)

    def busy() -> bool:
        return any(start <= clock.now < end for start, end in statements)

    def idle_for() -> float:
        ended = [end for _, end in statements if end <= clock.now]
        return 0.0 if busy() or not ended else clock.now - max(ended)

    keep_workers_warm(
        spark, busy, idle_for, lambda: clock.now >= until, touched, clock, clock.sleep
    )
    return touches


def test_an_idle_engine_reads_every_so_often_within_sparks_minute() -> None:
    clock = FakeClock()
    touches = _run(_Spark(clock), clock, until=200.0)
    assert touches == pytest.approx([40.0, 80.0, 120.0, 160.0, 200.0])
    assert KEEP_EVERY_S < 60.0  # Spark stops workers idle for a minute


def test_no_read_while_a_statement_or_a_job_runs() -> None:
    clock = FakeClock()
    # a statement runs from 35 to 50 s, a job (a cache build, say) from 85 to 95 s
    touches = _run(
        _Spark(clock, running=lambda now: 85.0 <= now < 95.0),
        clock,
        until=140.0,
        statements=[(-10.0, 0.0), (35.0, 50.0)],
    )
    # each read waits for the engine to be quiet (a second after a statement), and the next
    # one counts from it
    assert touches == pytest.approx([51.0, 95.0, 135.0])


def test_statements_one_after_the_other_never_wait_for_a_read() -> None:
    clock = FakeClock()
    # a script: a statement every second, half a second apart
    script = [(k + 0.2, k + 0.7) for k in range(300)]
    touches = _run(_Spark(clock), clock, until=400.0, statements=script)
    # none while it runs; once it ended, a second of quiet, then every 40 s again
    assert touches == pytest.approx([301.0, 341.0, 381.0])


def test_the_workers_are_let_go_long_after_the_last_statement() -> None:
    clock = FakeClock()
    last = 100.0
    touches = _run(_Spark(clock), clock, until=last + KEEP_FOR_S + 200.0, statements=[(0, last)])
    assert touches  # kept while the person may come back
    assert max(touches) <= last + KEEP_FOR_S
    assert min(touches) == pytest.approx(last + 1.0)  # while the statement ran: none


def test_a_failing_read_ends_the_loop() -> None:
    clock = FakeClock()

    def failing(spark: Any) -> None:
        raise RuntimeError("Spark stopped")

    never = lambda: False  # noqa: E731
    touched = keep_workers_warm(
        _Spark(clock), never, lambda: 5.0, never, failing, clock, clock.sleep
    )
    assert touched == 0
    assert clock.now == pytest.approx(KEEP_EVERY_S)


def test_the_read_plans_and_reads_through_the_data_source_in_its_own_group(spark: Any) -> None:
    out: list[int] = []
    # on a thread of its own, as the engine runs it (job groups are set per thread)
    thread = threading.Thread(target=lambda: out.append(touch_python_workers(spark)))
    started = time.monotonic()
    thread.start()
    thread.join(timeout=120)
    assert not thread.is_alive()
    assert out == [2]
    tracker = spark.sparkContext.statusTracker()
    jobs = list(tracker.getJobIdsForGroup(KEEP_WARM_GROUP))
    assert jobs
    assert all(tracker.getJobInfo(j).status == "SUCCEEDED" for j in jobs)
    assert time.monotonic() - started < 60
