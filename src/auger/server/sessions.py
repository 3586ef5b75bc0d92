"""REST sessions: one :class:`~auger.session.UserSession` per cookie.

A cookie names a :class:`WebSession`, which owns one user session (so ``USE``, session options
and temporary tables carry from one request to the next) and knows the queries running in it.
A session ends at logout, after ``session_timeout`` idle seconds, or at shutdown; ending it
cancels its running queries (their Spark job groups) and closes the user session, which drops
its temporary tables. Session tokens are 256-bit random values, unrelated to the user
session's id, so the id that names a temporary directory never doubles as a credential.

Requests that log in with HTTP Basic and send no cookie (curl loops, scripts) would each open a
session that lingers for the whole idle timeout. They share one session per verified user
instead, kept under a key the client never sees and given its own, shorter idle lifetime.

A user may hold at most ``max_per_user`` sessions (a script logging in in a loop would
otherwise pile them up): a new one past the cap closes the user's least recently used session
that runs no query; when every one of them runs a query, the new login is refused.
"""

from __future__ import annotations

import logging
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from auger.server.http import HttpError

if TYPE_CHECKING:
    from auger.engine import Engine
    from auger.session import UserSession

__all__ = ["COOKIE_NAME", "SessionStore", "WebSession"]

_log = logging.getLogger(__name__)

#: Drill 1.22's cookie name (DRILL-8522); clients keep whatever cookie they get.
COOKIE_NAME = "Drill-Session-Id"


@dataclass
class WebSession:
    """A cookie-bound session and the queries running in it."""

    token: str
    session: UserSession
    last_used: float
    running: set[str] = field(default_factory=set)
    closed: bool = False
    timeout: float | None = None  # its own idle lifetime; None: the store's
    shared_key: str | None = None  # set for the one session kept per Basic user

    @property
    def user(self) -> str:
        return self.session.user

    @property
    def admin(self) -> bool:
        return bool(self.session.admin)

    def touch(self) -> None:
        self.last_used = time.monotonic()


class SessionStore:
    """All live REST sessions, their idle expiry and their clean-up; thread-safe.

    Args:
        engine: opens the user sessions.
        timeout: idle seconds before a session is closed.
        cancel_query: called with a query id for each running query of a closing session.
        max_per_user: sessions one user may hold (0: no cap).
    """

    def __init__(
        self,
        engine: Engine,
        timeout: float,
        cancel_query: Callable[[str], Any],
        max_per_user: int = 0,
    ) -> None:
        self.engine = engine
        self.timeout = timeout
        self.max_per_user = max_per_user
        self._cancel_query = cancel_query
        self._sessions: dict[str, WebSession] = {}
        self._shared: dict[str, WebSession] = {}
        self._lock = threading.Lock()
        self._shared_lock = threading.Lock()  # one session opened per key, even under a race

    def create(self, user: str, admin: bool) -> WebSession:
        """Open a session for ``user``, first making room under the per-user cap.

        Raises:
            HttpError: 429, when the user holds the most sessions allowed and each runs a query.
        """
        if self.max_per_user > 0:
            self._make_room(user)
        session = self.engine.open_session(user, admin=admin)
        web = WebSession(secrets.token_urlsafe(32), session, time.monotonic())
        with self._lock:
            self._sessions[web.token] = web
        return web

    def shared(self, key: str, user: str, admin: bool, timeout: float) -> WebSession:
        """The live session kept under ``key`` (opened on first use), marked used.

        Args:
            key: who may use it, e.g. the verified user name and role.
            user, admin: the session's identity when it has to be opened.
            timeout: its idle lifetime in seconds.
        """
        with self._shared_lock:
            with self._lock:  # checked and marked used at once: the reaper cannot come between
                web = self._shared.get(key)
                if web is not None and not web.closed and not self._idle(web):
                    web.touch()
                    return web
            if web is not None:
                self.close(web)  # expired but not yet reaped
            web = self.create(user, admin)
            web.timeout = timeout
            web.shared_key = key
            with self._lock:
                self._shared[key] = web
            return web

    def _make_room(self, user: str) -> None:
        """Close the user's least recently used sessions without a running query until a new
        one fits under the cap."""
        while True:
            with self._lock:
                mine = [w for w in self._sessions.values() if w.user == user and not w.closed]
                if len(mine) < self.max_per_user:
                    return
                quiet = [w for w in mine if not w.running]
                # chosen and closed under one lock: no request can pick it up in between
                oldest = min(quiet, key=lambda w: w.last_used) if quiet else None
                running = self._forget(oldest) if oldest is not None else None
            if oldest is None:
                raise HttpError(
                    429,
                    f"User [{user}] already has {len(mine)} open sessions, each running a "
                    f"query (server.max_sessions_per_user = {self.max_per_user}); log out of "
                    "one or wait for its query to finish",
                )
            _log.info("closed the least recently used session of %s: too many sessions", user)
            self._release(oldest, running or [])

    def _idle(self, web: WebSession, now: float | None = None) -> bool:
        """Idle for longer than its lifetime, with no query running."""
        limit = self.timeout if web.timeout is None else web.timeout
        return (now or time.monotonic()) - web.last_used > limit and not web.running

    def get(self, token: str | None) -> WebSession | None:
        """The live session of a cookie value (and mark it used), or None."""
        if not token:
            return None
        with self._lock:
            web = self._sessions.get(token)
            if web is None or web.closed:
                return None
            if not self._idle(web):
                # Marked used under the lock the reaper checks idleness under: a session found
                # live here is never closed by a reaper that looked at it a moment later.
                web.touch()
                return web
        # Expired: forget it now, release it off the caller's (event loop) thread.
        running = self._detach(web)
        if running is not None:
            threading.Thread(
                target=self._release, args=(web, running), name="auger-session-close"
            ).start()
        return None

    def close(self, web: WebSession) -> None:
        """End a session: cancel its queries, then close it (dropping its temporary tables)."""
        running = self._detach(web)
        if running is not None:
            self._release(web, running)

    def _detach(self, web: WebSession, only_if_idle: bool = False) -> list[str] | None:
        """Mark closed and forget; the running query ids, or None if already closed (or, with
        ``only_if_idle``, if it was used again since it was found idle)."""
        with self._lock:
            if web.closed:
                return None
            if only_if_idle and not self._idle(web):
                return None
            return self._forget(web)

    def _forget(self, web: WebSession) -> list[str]:
        """:meth:`_detach` with the lock held and the session known to be open."""
        web.closed = True
        self._sessions.pop(web.token, None)
        if web.shared_key is not None and self._shared.get(web.shared_key) is web:
            del self._shared[web.shared_key]
        return list(web.running)

    def _release(self, web: WebSession, running: list[str]) -> None:
        for query_id in running:
            try:
                self._cancel_query(query_id)
            except Exception:
                _log.exception("cancelling query %s failed", query_id)
        try:
            web.session.close()
        except Exception:
            _log.exception("closing session %s failed", web.session.id)

    def expired(self) -> list[WebSession]:
        now = time.monotonic()
        with self._lock:
            return [w for w in self._sessions.values() if self._idle(w, now)]

    def reap(self) -> int:
        """Close every idle session; returns how many were closed."""
        closed = 0
        for web in self.expired():
            running = self._detach(web, only_if_idle=True)
            if running is not None:
                self._release(web, running)
                closed += 1
        return closed

    def all(self) -> list[WebSession]:
        with self._lock:
            return list(self._sessions.values())

    def close_all(self) -> None:
        for web in self.all():
            self.close(web)
