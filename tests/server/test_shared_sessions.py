"""The one session kept per HTTP Basic user: reuse, its own idle lifetime, clean-up (no Spark)."""

from __future__ import annotations

import time
from typing import Any

from auger.server.sessions import SessionStore


class FakeSession:
    opened = 0

    def __init__(self, user: str, admin: bool) -> None:
        FakeSession.opened += 1
        self.user, self.admin, self.id, self.closed = user, admin, f"s{FakeSession.opened}", False

    def close(self) -> None:
        self.closed = True


class FakeEngine:
    def open_session(self, user: str, admin: bool = True) -> Any:
        return FakeSession(user, admin)


def store(timeout: float = 3600.0) -> SessionStore:
    return SessionStore(FakeEngine(), timeout, lambda query_id: None)  # type: ignore[arg-type]


def test_one_session_per_key() -> None:
    sessions = store()
    first = sessions.shared("bob", "bob", False, 300)
    assert all(sessions.shared("bob", "bob", False, 300) is first for _ in range(100))
    other = sessions.shared("ann", "ann", False, 300)
    assert other is not first and len(sessions.all()) == 2
    # the token never reaches a client, but the store still finds nothing by guessing a key
    assert sessions.get("bob") is None


def test_shared_session_has_its_own_idle_lifetime() -> None:
    sessions = store(timeout=3600)
    web = sessions.shared("bob", "bob", False, timeout=0.05)
    cookie_web = sessions.create("ann", admin=False)
    time.sleep(0.1)
    assert sessions.reap() == 1  # the shared one only; the cookie session has an hour
    assert web.closed and web.session.closed and not cookie_web.closed
    again = sessions.shared("bob", "bob", False, timeout=0.05)
    assert again is not web and not again.closed


def test_running_query_keeps_it_open_and_expired_one_is_replaced() -> None:
    sessions = store()
    web = sessions.shared("bob", "bob", False, timeout=0.05)
    web.running.add("q1")
    time.sleep(0.1)
    assert sessions.reap() == 0 and sessions.shared("bob", "bob", False, 0.05) is web
    web.running.clear()
    time.sleep(0.1)
    replaced = sessions.shared("bob", "bob", False, 0.05)  # expired, not yet reaped
    assert replaced is not web and web.closed and web.session.closed
    assert sessions.all() == [replaced]
