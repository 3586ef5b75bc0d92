"""A cancelled REST query stays cancelled: a Spark job it submits after the cancel (it was still
planning, or between two stages) is cancelled too, until its worker is done (no Spark)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from auger.server import queries as queries_module
from auger.server.queries import CLIENT_GONE, USER_CANCEL, QueryManager
from auger.server.sessions import SessionStore
from tests.fakes import FakeEngine, FakeJobs


@pytest.fixture
def fake_jobs(monkeypatch: pytest.MonkeyPatch) -> FakeJobs:
    fake = FakeJobs()
    monkeypatch.setattr(queries_module.jobs, "cancel_group", fake.cancel_group)
    monkeypatch.setattr(queries_module, "RECANCEL_INTERVAL", 0.02)
    return fake


@pytest.fixture
def manager() -> Iterator[QueryManager]:
    qm = QueryManager(None, None, 1, 1.0, "here")  # type: ignore[arg-type]
    yield qm
    qm.shutdown()


def _wait_for(what: str, check: Any, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.01)


def _cancellers(query_id: str) -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == f"auger-cancel-{query_id[:8]}"]


def test_a_job_submitted_after_the_cancel_is_cancelled_too(
    fake_jobs: FakeJobs, manager: QueryManager
) -> None:
    web = SessionStore(FakeEngine(), 3600, lambda q: None).create("ann", False)  # type: ignore[arg-type]
    rq = manager.start(web, "SELECT 1", internal=True)
    fake_jobs.submit(rq.query_id, 1)
    assert manager.cancel(rq.query_id)
    assert fake_jobs.cancelled == [1]
    fake_jobs.submit(rq.query_id, 2)  # the next stage, started after the cancel
    _wait_for("the later job to be cancelled", lambda: fake_jobs.cancelled == [1, 2])

    # a second cancel keeps the first reason and adds no second canceller
    assert manager.cancel(rq.query_id, CLIENT_GONE)
    assert rq.cancel_reason == USER_CANCEL
    assert len(_cancellers(rq.query_id)) == 1

    # once the worker is done with the query, nothing is cancelled on its behalf any more
    manager._finish(rq)
    for thread in _cancellers(rq.query_id):
        thread.join(30)
        assert not thread.is_alive()
    assert not manager.cancel(rq.query_id)


def test_cancelling_stops_at_shutdown_even_for_a_query_that_never_ran(
    fake_jobs: FakeJobs, manager: QueryManager
) -> None:
    web = SessionStore(FakeEngine(), 3600, lambda q: None).create("bob", False)  # type: ignore[arg-type]
    rq = manager.start(web, "SELECT 1", internal=True)  # never given a thread
    manager.shutdown()
    assert rq.cancel_requested.is_set()
    for thread in _cancellers(rq.query_id):
        thread.join(30)
        assert not thread.is_alive()
