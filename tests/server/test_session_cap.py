"""The cap on sessions per user: the least recently used idle one goes (no Spark)."""

from __future__ import annotations

import pytest

from auger.server.http import HttpError
from auger.server.sessions import SessionStore

from .test_shared_sessions import FakeEngine


def capped(limit: int) -> SessionStore:
    return SessionStore(FakeEngine(), 3600.0, lambda query_id: None, limit)  # type: ignore[arg-type]


def test_a_new_session_past_the_cap_closes_the_least_recently_used() -> None:
    sessions = capped(3)
    first, second, third = (sessions.create("bob", False) for _ in range(3))
    first.last_used = third.last_used + 1  # bob used his first session last
    other = sessions.create("ann", False)  # other users' sessions neither count nor go
    fourth = sessions.create("bob", False)
    assert second.closed and second.session.closed
    assert not (first.closed or third.closed or other.closed)
    assert sessions.get(second.token) is None
    kept = {first.token, third.token, fourth.token, other.token}
    assert {w.token for w in sessions.all()} == kept


def test_sessions_running_queries_are_kept_and_the_login_refused() -> None:
    sessions = capped(2)
    a, b = sessions.create("bob", False), sessions.create("bob", False)
    a.running.add("q1")
    b.running.add("q2")
    with pytest.raises(HttpError) as err:
        sessions.create("bob", False)
    assert err.value.status == 429
    assert "server.max_sessions_per_user = 2" in err.value.message
    assert not (a.closed or b.closed)
    b.running.clear()
    sessions.create("bob", False)
    assert b.closed and not a.closed


def test_no_cap() -> None:
    sessions = capped(0)
    made = [sessions.create("bob", False) for _ in range(50)]
    assert not any(w.closed for w in made)
