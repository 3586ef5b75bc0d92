"""Cross-site request refusal: state-changing requests must come from the server's own pages.

A web page on another site can make a visitor's browser send a form POST to
``http://127.0.0.1:8047/query.json``. Without auth nothing else stops it, and with HTTP Basic
the browser adds the cached credentials by itself. Browsers say where such a request comes
from (``Origin`` on every POST, ``Referer`` mostly, ``Sec-Fetch-Site`` in current ones), so
a request that names another origin is refused before any handler runs.

Scripts and API clients (curl, requests, pydrill, sqlalchemy-drill, ``auger sql --connect``)
send none of these headers and pass. The server's own origin is the request's scheme and its
``Host`` header, so the check needs no configuration behind a name or a port mapping; other
origins may be allowed with ``server.allowed_origins``.
"""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Iterable

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from auger.server.http import json_response

__all__ = ["SameOriginGuard", "normalise_origin", "refusal"]

#: Methods that change state on any path.
_UNSAFE_METHODS = frozenset({"POST", "PUT", "DELETE", "PATCH"})
#: GET paths that change state (kept from Drill's web console, which links to them).
_UNSAFE_GET = re.compile(r"^/(logout$|profiles/cancel/|storage/[^/]+/enable/)")
_DEFAULT_PORTS = {"http": 80, "https": 443}


def normalise_origin(url: str) -> str | None:
    """``scheme://host:port`` of a URL or origin (port always written), or None if it has
    no scheme and host (``null``, garbage)."""
    try:
        parts = urllib.parse.urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if not scheme or not parts.hostname:
        return None
    port = port or _DEFAULT_PORTS.get(scheme)
    return f"{scheme}://{parts.hostname.lower()}:{port}"


def _own_origin(scope: Scope, headers: Headers) -> str | None:
    scheme = scope.get("scheme", "http")
    host = headers.get("host")
    if not host and scope.get("server"):
        server_host, server_port = scope["server"]
        host = f"{server_host}:{server_port}"
    return normalise_origin(f"{scheme}://{host}") if host else None


def _changes_state(method: str, path: str) -> bool:
    return method in _UNSAFE_METHODS or (method == "GET" and bool(_UNSAFE_GET.match(path)))


def refusal(scope: Scope, headers: Headers, allowed: Iterable[str] = ()) -> str | None:
    """Why this request is refused as cross-site, or None when it may go on.

    Args:
        scope: the ASGI scope (method, path, scheme).
        headers: the request's headers.
        allowed: further origins (normalised) that may send state-changing requests.
    """
    if not _changes_state(scope.get("method", "GET"), scope.get("path", "")):
        return None
    own = _own_origin(scope, headers)
    claimed = headers.get("origin")
    source = "Origin"
    if claimed is None:
        claimed, source = headers.get("referer"), "Referer"
    if claimed is None:
        if headers.get("sec-fetch-site") in ("cross-site", "same-site"):
            return (
                "Cross-site request refused: the browser marks it as coming from another "
                "site (Sec-Fetch-Site)"
            )
        return None  # not sent by a browser on behalf of a page
    origin = normalise_origin(claimed)
    if origin is not None and (origin == own or origin in allowed):
        return None
    return (
        f"Cross-site request refused: {source} [{claimed}] is not this server's origin "
        f"[{own or 'unknown'}]; list it in server.allowed_origins to allow it"
    )


class SameOriginGuard:
    """ASGI middleware answering 403 ``{"errorMessage": ...}`` to cross-site requests.

    Args:
        app: the application behind it.
        allowed: origins besides the server's own allowed to change state (any URL form).
    """

    def __init__(self, app: ASGIApp, allowed: Iterable[str] = ()) -> None:
        self.app = app
        self.allowed = frozenset(o for o in map(normalise_origin, allowed) if o is not None)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            reason = refusal(scope, Headers(scope=scope), self.allowed)
            if reason is not None:
                await json_response({"errorMessage": reason}, 403)(scope, receive, send)
                return
        await self.app(scope, receive, send)
