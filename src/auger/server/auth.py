"""Who is asking: cookie sessions, HTTP Basic, form login and logout.

The rules follow Drill's web server:

* Auth off: every request is user ``anonymous``, an administrator (on a user's local background
  server, the user its token-checked client names: see :mod:`auger.server.local`). Sessions
  still bind to a cookie (configurable), so ``USE``, options and temporary tables survive
  between requests.
* Auth on: a valid session cookie wins; otherwise an ``Authorization: Basic`` header is
  checked on every request, and the request runs in the one session kept for that user's Basic
  requests (no cookie is set: such clients keep none, and a session each would pile up until
  the idle timeout); ``POST /j_security_check`` is always a form login, whatever other headers
  come with it (pydrill sends Basic there too).
* Unauthenticated calls to protected resources: browsers (``Accept: text/html``) are sent to
  the login page with Drill's 307 to ``/mainLogin?redirect=…``; API clients get 401 with a JSON
  ``errorMessage``, which both Python clients turn into a clear error.
* Failed password checks (form or Basic) slow the next try down, per user name and per client
  address (:mod:`auger.server.throttle`): a try during the wait gets 429 with ``Retry-After``.
"""

from __future__ import annotations

import base64
import binascii
import urllib.parse
from dataclasses import dataclass

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from auger.server.http import HttpError, json_response
from auger.server.local import USER_SCOPE_KEY
from auger.server.sessions import COOKIE_NAME, SessionStore, WebSession
from auger.server.settings import ServerSettings
from auger.server.throttle import LoginThrottle
from auger.server.users import User, UserStore

__all__ = ["ANONYMOUS", "Authenticator", "Caller", "TooManyFailures"]

ANONYMOUS = "anonymous"


@dataclass
class Caller:
    """The session serving a request, and whether the answer must set its cookie."""

    web: WebSession
    new: bool = False
    temporary: bool = False  # per-request anonymous session: close after the answer


class Authenticator:
    def __init__(self, settings: ServerSettings, sessions: SessionStore, users: UserStore) -> None:
        self.settings = settings
        self.sessions = sessions
        self.users = users
        self.throttle = LoginThrottle(settings.login_delay, settings.login_delay_max)

    @property
    def enabled(self) -> bool:
        return self.settings.auth

    def current(self, request: Request) -> WebSession | None:
        """The session of the request's cookie, if it is live."""
        return self.sessions.get(request.cookies.get(COOKIE_NAME))

    def caller(self, request: Request, create: bool = True) -> Caller | None:
        """The caller's session; with ``create``, one is opened when the request may have one.

        Returns None when auth is on and the request carries no valid credentials.
        """
        web = self.current(request)
        if web is not None:
            return Caller(web)
        if not self.enabled:
            if not create:
                return None
            temporary = self.settings.anonymous_sessions == "per_request"
            # the local server's token guard names the user its owner runs the shell as
            name = str(request.scope.get(USER_SCOPE_KEY) or ANONYMOUS)
            return Caller(self.sessions.create(name, admin=True), not temporary, temporary)
        basic = _basic_credentials(request)
        if basic is None:
            return None
        try:
            user = self.check(*basic, _address(request))
        except TooManyFailures as exc:
            raise HttpError(429, str(exc), headers={"Retry-After": str(exc.retry_after)}) from None
        if user is None:
            raise HttpError(401, "Invalid username/password credentials.")
        key = f"basic\0{user.name}\0{'admin' if user.admin else 'user'}"
        timeout = self.settings.basic_session_timeout
        return Caller(self.sessions.shared(key, user.name, user.admin, timeout))

    def require(self, request: Request, create: bool = True) -> Caller:
        """Like :meth:`caller`, but an unauthenticated request raises ``_Unauthenticated``."""
        found = self.caller(request, create=create)
        if found is None:
            raise Unauthenticated(request)
        return found

    def check(self, name: str, password: str, address: str | None) -> User | None:
        """The user whose password this is, or None; failures slow the next try down.

        Raises:
            TooManyFailures: the name or the address is still waiting after a failure (the
                password is not checked then).
        """
        keys = self.throttle.keys(name, address)
        wait = self.throttle.admit(keys)
        if wait:
            raise TooManyFailures(wait)
        user = self.users.authenticate(name, password)
        if user is None:
            self.throttle.failed(keys)
        else:
            self.throttle.succeeded(keys)
        return user

    def login(self, name: str, password: str, address: str | None = None) -> WebSession | None:
        """A new session for a form login, or None for wrong credentials.

        Raises:
            TooManyFailures: see :meth:`check`.
            HttpError: 429 from the per-user session cap.
        """
        user = self.check(name, password, address)
        if user is None:
            return None
        return self.sessions.create(user.name, admin=user.admin)


class TooManyFailures(Exception):
    """A login tried while its user name or address waits after failed ones."""

    def __init__(self, retry_after: int) -> None:
        super().__init__(
            f"Too many failed logins: try again in {retry_after} s (failed logins slow down "
            "per user and per address)"
        )
        self.retry_after = retry_after


def _address(request: Request) -> str | None:
    return request.client.host if request.client else None


class Unauthenticated(Exception):
    """No credentials on a protected resource."""

    def __init__(self, request: Request) -> None:
        super().__init__(request.url.path)
        self.request = request

    def response(self) -> Response:
        accept = self.request.headers.get("accept", "")
        if "text/html" in accept:
            target = self.request.url.path
            if self.request.url.query:
                target += "?" + self.request.url.query
            quoted = urllib.parse.quote(target, safe="")
            return RedirectResponse(f"/mainLogin?redirect={quoted}", status_code=307)
        return json_response(
            {
                "errorMessage": "Authentication required: log in with POST /j_security_check "
                "(j_username, j_password) or send HTTP Basic credentials"
            },
            401,
        )


def set_cookie(response: Response, web: WebSession, secure: bool = False) -> None:
    response.set_cookie(
        COOKIE_NAME, web.token, path="/", httponly=True, samesite="strict", secure=secure
    )


def clear_cookie(response: Response) -> None:
    response.delete_cookie(COOKIE_NAME, path="/", httponly=True, samesite="strict")


def _basic_credentials(request: Request) -> tuple[str, str] | None:
    header = request.headers.get("authorization", "")
    scheme, _, value = header.partition(" ")
    if scheme.lower() != "basic" or not value:
        return None
    try:
        decoded = base64.b64decode(value.strip(), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        raise HttpError(401, "Malformed HTTP Basic credentials") from None
    name, sep, password = decoded.partition(":")
    if not sep:
        raise HttpError(401, "Malformed HTTP Basic credentials")
    return name, password
