"""The idle-session reaper against requests arriving and queries ending at the same moment: a
session a request found live, or whose query just ended, stays open (no Spark).

A fake clock stands in for time, and the reaper is made to run at the exact point where a
request or a query's end used to leave a gap, so each test fails the same way every time the
gap is there.
"""

from __future__ import annotations

import threading
from types import SimpleNamespace

import pytest

from auger.server import sessions as sessions_module
from auger.server.profiles import Profile
from auger.server.queries import QueryManager, RunningQuery
from auger.server.sessions import SessionStore, WebSession
from tests.fakes import FakeEngine


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The sessions' time, in seconds; set ``clock[0]`` to move it."""
    now = [0.0]
    monkeypatch.setattr(sessions_module, "time", SimpleNamespace(monotonic=lambda: now[0]))
    return now


class ReaperAtFirstCheck:
    """Right after the store's next idleness check, time jumps to ``later`` and the reaper
    runs on its own thread, as the server's reaper would at that moment."""

    def __init__(self, store: SessionStore, clock: list[float], later: float) -> None:
        self.store, self.clock, self.later = store, clock, later
        self.original = store._idle
        self.reaped: list[int] = []  # sessions the reaper closed
        self.thread: threading.Thread | None = None

    def idle(self, web: WebSession, now: float | None = None) -> bool:
        found = self.original(web, now)
        if self.thread is None:
            self.clock[0] = self.later
            self.thread = threading.Thread(target=lambda: self.reaped.append(self.store.reap()))
            self.thread.start()
            self.thread.join(0.5)  # done by then, unless it waits for the caller's lock
        return found

    def join(self) -> None:
        assert self.thread is not None, "the store never checked idleness"
        self.thread.join(30)
        assert not self.thread.is_alive()


def test_a_session_found_live_is_not_reaped_before_it_is_marked_used(
    clock: list[float], monkeypatch: pytest.MonkeyPatch
) -> None:
    store = SessionStore(FakeEngine(), 10.0, lambda query_id: None)  # type: ignore[arg-type]
    web = store.create("ann", admin=False)
    clock[0] = 9.0  # one second of its lifetime left when the request comes
    reaper = ReaperAtFirstCheck(store, clock, 11.0)
    monkeypatch.setattr(store, "_idle", reaper.idle)
    got = store.get(web.token)
    reaper.join()
    assert got is web
    assert not web.closed and not web.session.closed  # the request's session stays open
    assert reaper.reaped == [0]
    assert store.get(web.token) is web


def test_the_shared_session_found_live_is_not_reaped_before_it_is_marked_used(
    clock: list[float], monkeypatch: pytest.MonkeyPatch
) -> None:
    store = SessionStore(FakeEngine(), 3600.0, lambda query_id: None)  # type: ignore[arg-type]
    web = store.shared("bob", "bob", False, 10.0)
    clock[0] = 9.0
    reaper = ReaperAtFirstCheck(store, clock, 11.0)
    monkeypatch.setattr(store, "_idle", reaper.idle)
    got = store.shared("bob", "bob", False, 10.0)
    reaper.join()
    assert got is web and not web.closed and not web.session.closed
    assert reaper.reaped == [0]


class _ReapedOnDiscard(set[str]):
    """A session's running queries; the reaper runs the moment one is taken off."""

    store: SessionStore | None = None

    def discard(self, item: str) -> None:
        super().discard(item)
        if self.store is not None:
            self.store.reap()


def test_a_session_whose_long_query_just_ended_is_not_reaped(clock: list[float]) -> None:
    store = SessionStore(FakeEngine(), 3.0, lambda query_id: None)  # type: ignore[arg-type]
    web = store.create("ann", admin=False)
    running = _ReapedOnDiscard()
    running.store = store
    web.running = running
    queries = QueryManager(None, None, 1, 1.0, "here")  # type: ignore[arg-type]
    try:
        profile = Profile(query_id="q1", query="SELECT 1", user="ann", session_id="s", start=0)
        rq = RunningQuery("q1", web, profile, internal=True)
        web.running.add("q1")
        clock[0] = 10.0  # the query ran for longer than the session's idle lifetime
        queries._finish(rq)
    finally:
        queries.executor.shutdown(wait=False)
    assert not web.running
    assert not web.closed and not web.session.closed  # the client's next request finds it
    assert store.get(web.token) is web
