"""A server starts Spark's Python workers while it waits for its first query, and only once
nothing has run for a moment: the decision is tested on a made-up clock, the read on Spark."""

from __future__ import annotations

import threading
from typing import Any

from auger.spark.warm_up import WARM_UP_GROUP, wait_until_idle, warm_python_workers


class _Spark:
    """A session whose status tracker answers the active jobs from a script, one per look."""

    def __init__(self, jobs: list[list[int]]) -> None:
        self.jobs = jobs
        self.sparkContext = self

    def statusTracker(self) -> Any:
        return self

    def getActiveJobsIds(self) -> list[int]:
        return self.jobs.pop(0) if len(self.jobs) > 1 else self.jobs[0]


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def test_idle_means_no_job_and_no_query_for_a_quiet_spell() -> None:
    clock = _Clock()
    # a job runs for the first three looks, then none
    spark = _Spark([[1], [1], [1], []])
    queries = iter([False] * 8 + [True] + [False] * 1000)  # one query comes in the quiet spell
    assert wait_until_idle(spark, lambda: next(queries), 1.0, 60.0, clock, clock.sleep)
    # 3 looks busy with the job, 5 quiet ones, the query's look, then 1 s of quiet again
    assert 2.7 <= clock.now <= 3.1


def test_a_server_never_idle_gives_up_warming() -> None:
    clock = _Clock()
    assert not wait_until_idle(_Spark([[7]]), lambda: False, 1.0, 10.0, clock, clock.sleep)
    assert 10.0 <= clock.now <= 10.5


def test_the_warm_up_reads_through_the_data_source_in_its_own_group(spark: Any) -> None:
    # on a thread of its own, as the server runs it (it sets that thread's job group)
    thread = threading.Thread(target=warm_python_workers, args=(spark,))
    thread.start()
    thread.join(timeout=120)
    assert not thread.is_alive()
    assert list(spark.sparkContext.statusTracker().getJobIdsForGroup(WARM_UP_GROUP))
