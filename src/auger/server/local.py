"""The guard of a user's local background server (``auger sql`` without ``--connect``).

``auger sql`` keeps one server per configuration running in the background, as a Drill user's
sqlline talks to a running drillbit, so a statement costs an HTTP round trip instead of a JVM
start. That server listens on 127.0.0.1 only, and every request must carry the secret token
its state file holds (a file only its owner can read): other users of the machine reach the
port but not the server. The client names the session's user in :data:`USER_HEADER`, so a
session there runs as the same user it would run as in-process.

The guard also keeps the server's activity (requests in flight, the last one's end) for the
idle watch, which stops the server once it has had no request and no session for its
``idle_timeout``.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from starlette.types import ASGIApp, Receive, Scope, Send

from auger.server.sessions import SessionStore

__all__ = [
    "TOKEN_HEADER",
    "USER_HEADER",
    "USER_SCOPE_KEY",
    "Activity",
    "TokenGuard",
    "watch_idle",
    "watch_installation",
]

#: How often a local server checks that its installation's files are still there.
INSTALLATION_CHECK_SECONDS = 5.0

#: The request header carrying the server's secret token.
TOKEN_HEADER = "X-Auger-Token"
#: The request header naming the user a new session runs as (trusted only with the token).
USER_HEADER = "X-Auger-User"
#: Where the guard leaves that user name in the ASGI scope for the authenticator.
USER_SCOPE_KEY = "auger.user"


class Activity:
    """Requests in flight and when the last one ended; thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.in_flight = 0
        self.last = time.monotonic()

    def begin(self) -> None:
        with self._lock:
            self.in_flight += 1
            self.last = time.monotonic()

    def end(self) -> None:
        with self._lock:
            self.in_flight -= 1
            self.last = time.monotonic()

    def idle_for(self) -> float:
        """Seconds since the last request ended; 0 while one is in flight."""
        with self._lock:
            return 0.0 if self.in_flight else time.monotonic() - self.last


class TokenGuard:
    """ASGI middleware: only requests with the token pass (403 otherwise); counts activity.

    Args:
        app: the application behind the guard.
        token: the secret every request must send in :data:`TOKEN_HEADER`.
        activity: where requests are counted.
    """

    def __init__(self, app: ASGIApp, token: str, activity: Activity) -> None:
        self.app = app
        self.token = token.encode()
        self.activity = activity

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or ())
        sent = headers.get(TOKEN_HEADER.lower().encode(), b"")
        if not secrets.compare_digest(sent, self.token):
            await _forbidden(send)
            return
        user = headers.get(USER_HEADER.lower().encode(), b"").decode("utf-8", "replace").strip()
        if user:
            scope = {**scope, USER_SCOPE_KEY: user}
        self.activity.begin()
        try:
            await self.app(scope, receive, send)
        finally:
            self.activity.end()


async def _forbidden(send: Send) -> None:
    body = b'{"errorMessage": "This auger server answers only its owner (no valid token)"}'
    await send(
        {
            "type": "http.response.start",
            "status": 403,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def watch_idle(
    activity: Activity,
    sessions: SessionStore,
    idle_timeout: float,
    on_idle: Callable[[], bool],
    stop: threading.Event | None = None,
) -> threading.Thread:
    """Start a daemon thread calling ``on_idle`` once the server has been idle long enough.

    Idle means no request in flight, none for ``idle_timeout`` seconds, and no open session (a
    shell left open keeps its server until the session's own idle timeout closes it).
    ``on_idle`` returns True when it stopped the server; False (a client is starting to use it)
    keeps watching.
    """
    done = stop or threading.Event()
    interval = max(0.2, min(10.0, idle_timeout / 4))

    def run() -> None:
        while not done.wait(interval):
            if activity.idle_for() < idle_timeout or sessions.all():
                continue
            if on_idle():
                return

    thread = threading.Thread(target=run, name="auger-idle-watch", daemon=True)
    thread.start()
    return thread


def watch_installation(
    files: Sequence[Path],
    on_gone: Callable[[Path], None],
    interval: float = INSTALLATION_CHECK_SECONDS,
    stop: threading.Event | None = None,
) -> threading.Thread:
    """Start a daemon thread calling ``on_gone`` with the first of ``files`` that no longer
    exists (once; then it ends).

    A local server outlives the command that started it; when its installation is removed (a
    checkout deleted, a virtual environment rebuilt) it can no longer import what it has not
    loaded yet or read the sample data, and would answer with errors about files it lacks. It
    stops instead, and the next client starts a server of its own installation.
    """
    done = stop or threading.Event()

    def run() -> None:
        while not done.wait(interval):
            missing = next((f for f in files if not f.exists()), None)
            if missing is not None:
                on_gone(missing)
                return

    thread = threading.Thread(target=run, name="auger-installation-watch", daemon=True)
    thread.start()
    return thread
