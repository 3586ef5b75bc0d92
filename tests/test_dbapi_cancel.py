"""A cancelled DB-API statement stays cancelled: a Spark job it starts after the cancel (it was
still planning, or between two stages) is cancelled too, until the statement's call returns
(no Spark: the job group's jobs are simulated)."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from auger import dbapi
from auger.spark import jobs
from tests.fakes import FakeJobs


@pytest.fixture
def fake_jobs(monkeypatch: pytest.MonkeyPatch) -> FakeJobs:
    fake = FakeJobs()

    @contextlib.contextmanager
    def job_group(group: str, description: str, spark: Any = None) -> Iterator[None]:
        yield

    monkeypatch.setattr(jobs, "cancel_group", fake.cancel_group)
    monkeypatch.setattr(jobs, "job_group", job_group)
    monkeypatch.setattr(dbapi, "RECANCEL_INTERVAL", 0.02)
    return fake


class TwoStageSession:
    """A statement that runs one job, then (after the cancel) a second one; it ends when the
    second is cancelled, as Spark's call does, or after a bound that stands for its full run."""

    id = "s-1"
    closed = False

    def __init__(self, fake: FakeJobs) -> None:
        self.fake = fake
        self.cursor: dbapi.Cursor | None = None
        self.first_running = threading.Event()
        self.cancelled_once = threading.Event()
        self.second_cancelled = False

    def execute(self, sql: str) -> Any:
        assert self.cursor is not None and self.cursor.job_group is not None
        group = self.cursor.job_group
        self.fake.submit(group, 1)
        self.first_running.set()
        assert self.cancelled_once.wait(30)
        self.fake.submit(group, 2)  # the next stage, started after the cancel
        self.second_cancelled = self.fake.wait_cancelled([1, 2], seconds=10)
        raise RuntimeError("Job 2 cancelled part of cancelled job group")


def test_a_job_started_after_the_cancel_is_cancelled_too(fake_jobs: FakeJobs) -> None:
    session = TwoStageSession(fake_jobs)
    cur = session.cursor = dbapi.Connection(session).cursor()
    failure: list[BaseException] = []

    def run() -> None:
        try:
            cur.execute("SELECT something slow")
        except BaseException as exc:
            failure.append(exc)

    worker = threading.Thread(target=run)
    worker.start()
    assert session.first_running.wait(30)
    cur.cancel()
    assert fake_jobs.cancelled == [1]
    session.cancelled_once.set()
    worker.join(60)
    assert not worker.is_alive()
    assert session.second_cancelled, "the job started after the cancel ran to its end"
    assert len(failure) == 1 and isinstance(failure[0], dbapi.OperationalError)
    assert str(failure[0]) == dbapi.CANCELLED_MESSAGE
    # once the statement's call returned, nothing more is cancelled on its behalf
    for thread in [t for t in threading.enumerate() if t.name == "auger-cancel"]:
        thread.join(30)
        assert not thread.is_alive()
