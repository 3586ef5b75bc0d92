"""Who is calling the Flight SQL endpoint, and which auger session serves the call.

The users are the REST API's (:class:`~auger.server.users.UserStore`) and so are the sessions
(:class:`~auger.server.sessions.SessionStore`: the same idle timeout, reaper and clean-up).

* Auth on: the Handshake call carries ``Authorization: Basic``; a valid user gets a new session
  and the answer's ``Authorization: Bearer <token>`` header names it. Later calls send the
  bearer token back; a wrong password, or a call with neither, is refused as unauthenticated.
  A call that sends Basic instead of a token runs in the one session kept per Basic user, as
  on the REST API.
* Auth off: every call is user ``anonymous``, an administrator. A call without a session gets
  one and a ``Set-Cookie`` naming it: a client that keeps cookies (the ADBC driver's cookie
  option, the JDBC driver) then stays in that session for the life of its connection.

A session stays provisional until a call presents its token: a client that keeps neither
cookies nor tokens opens one per statement, which is closed as soon as that statement's
results have been read (so one-shot queries leave nothing behind), or after the short idle
lifetime of Basic sessions when it has no results to read.
"""

from __future__ import annotations

import base64
import binascii
import threading
from collections.abc import Callable
from http.cookies import CookieError, SimpleCookie
from typing import Any

import pyarrow.flight as flight

from auger.server.auth import ANONYMOUS, Authenticator, TooManyFailures
from auger.server.sessions import COOKIE_NAME, SessionStore, WebSession
from auger.server.settings import ServerSettings
from auger.server.users import User

__all__ = ["MIDDLEWARE_KEY", "CallSession", "FlightAuth", "HandshakeHandler"]

#: The key the call's middleware is registered under (``context.get_middleware``).
MIDDLEWARE_KEY = "auger-session"

_INVALID = "Invalid username/password credentials."
_REQUIRED = (
    "Authentication required: connect with a user name and password (HTTP Basic in the "
    "handshake), then send the bearer token the server answers"
)
#: Calls that run nothing in a session: they need none opened for them.
_SESSIONLESS = {
    flight.FlightMethod.HANDSHAKE,
    flight.FlightMethod.LIST_ACTIONS,
    flight.FlightMethod.LIST_FLIGHTS,
    flight.FlightMethod.DO_GET,
}


class CallSession(flight.ServerMiddleware):  # type: ignore[misc]
    """One call's session, and the headers that tell the client about it."""

    def __init__(self, auth: FlightAuth, web: WebSession | None, headers: dict[str, str]):
        self.auth = auth
        self.web = web
        self._headers = headers
        self._on_completed: list[Callable[[], object]] = []

    def on_completed(self, action: Callable[[], object]) -> None:
        """Run ``action`` when the call ends, while its context is still valid."""
        self._on_completed.append(action)

    def sending_headers(self) -> dict[str, str]:
        return self._headers

    def call_completed(self, exception: Any) -> None:
        for action in self._on_completed:
            action()


class FlightAuth(flight.ServerMiddlewareFactory):  # type: ignore[misc]
    """Checks each call's credentials and finds (or opens) the session it runs in."""

    def __init__(self, settings: ServerSettings, sessions: SessionStore, logins: Authenticator):
        self.settings = settings
        self.sessions = sessions
        #: the REST API's: one check of passwords, and one slow-down of failed logins
        self.logins = logins
        self._provisional: set[str] = set()
        self._lock = threading.Lock()

    # ----- provisional sessions
    def provisional(self, web: WebSession) -> bool:
        with self._lock:
            return web.token in self._provisional

    def _confirm(self, web: WebSession) -> None:
        with self._lock:
            if web.token in self._provisional:
                self._provisional.discard(web.token)
                web.timeout = None

    def release(self, web: WebSession) -> None:
        """Close a session nobody came back to, once its one statement is over."""
        with self._lock:
            if web.token not in self._provisional:
                return
            self._provisional.discard(web.token)
        self.sessions.close(web)

    # ----- the middleware
    def start_call(self, info: Any, headers: dict[str, list[str]]) -> CallSession:
        scheme, credentials = _authorization(headers)
        if info.method == flight.FlightMethod.HANDSHAKE:
            return self._handshake(scheme, credentials)
        token = credentials if scheme == "bearer" else _cookie(headers)
        web = self.sessions.get(token) if token else None
        if web is not None:
            self._confirm(web)
            return CallSession(self, web, {})
        if scheme == "bearer":
            raise flight.FlightUnauthenticatedError(
                "The session of this bearer token has ended (closed, or idle for too long): "
                "connect again"
            )
        if self.settings.auth:
            if scheme != "basic":
                raise flight.FlightUnauthenticatedError(_REQUIRED)
            name, password = _basic(credentials)
            user = self._check(name, password)
            key = f"flight-basic\0{user.name}\0{'admin' if user.admin else 'user'}"
            shared = self.sessions.shared(
                key, user.name, user.admin, self.settings.basic_session_timeout
            )
            return CallSession(self, shared, {})
        if info.method in _SESSIONLESS:
            return CallSession(self, None, {})
        web = self.sessions.create(ANONYMOUS, admin=True)
        web.timeout = self.settings.basic_session_timeout
        with self._lock:
            self._provisional.add(web.token)
        return CallSession(self, web, {"set-cookie": f"{COOKIE_NAME}={web.token}; HttpOnly"})

    def _handshake(self, scheme: str, credentials: str) -> CallSession:
        if scheme == "basic":
            name, password = _basic(credentials)
            if self.settings.auth:
                user = self._check(name, password)
                web = self.sessions.create(user.name, admin=user.admin)
            else:
                web = self.sessions.create(ANONYMOUS, admin=True)
            return CallSession(self, web, {"authorization": f"Bearer {web.token}"})
        if self.settings.auth and scheme != "bearer":
            raise flight.FlightUnauthenticatedError(_REQUIRED)
        return CallSession(self, None, {})

    def _check(self, name: str, password: str) -> User:
        """The user these credentials are, through the REST API's check: failed tries slow
        the name's next ones down (the caller's address is not known to the middleware)."""
        try:
            user = self.logins.check(name, password, None)
        except TooManyFailures as exc:
            raise flight.FlightUnauthenticatedError(str(exc)) from None
        if user is None:
            raise flight.FlightUnauthenticatedError(_INVALID)
        return user


def _authorization(headers: dict[str, list[str]]) -> tuple[str, str]:
    """The scheme (lower case) and credentials of the call's Authorization header."""
    for value in headers.get("authorization", []) or headers.get("Authorization", []):
        scheme, _, rest = str(value).partition(" ")
        if rest:
            return scheme.lower(), rest.strip()
    return "", ""


class HandshakeHandler(flight.ServerAuthHandler):  # type: ignore[misc]
    """Lets the Handshake call through: its headers carry the credentials, which the middleware
    checks, and its answer's headers the bearer token. (Without a handler, pyarrow answers every
    handshake as unimplemented.)"""

    def authenticate(self, outgoing: Any, incoming: Any) -> None:
        return None

    def is_valid(self, token: bytes) -> str:
        return ""


def _basic(credentials: str) -> tuple[str, str]:
    padded = credentials + "=" * (-len(credentials) % 4)  # Go clients send it unpadded
    try:
        decoded = base64.b64decode(padded, validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        raise flight.FlightUnauthenticatedError("Malformed HTTP Basic credentials") from None
    name, sep, password = decoded.partition(":")
    if not sep:
        raise flight.FlightUnauthenticatedError("Malformed HTTP Basic credentials")
    return name, password


def _cookie(headers: dict[str, list[str]]) -> str | None:
    for value in headers.get("cookie", []):
        jar: SimpleCookie = SimpleCookie()
        try:
            jar.load(str(value))
        except CookieError:
            continue
        morsel = jar.get(COOKIE_NAME)
        if morsel is not None:
            return morsel.value
    return None
