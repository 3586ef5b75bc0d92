"""The ``[server]`` section of the config, read once into a frozen value.

Every knob of the REST server lives here with its default, so the rest of the package never
digs through the raw config dict. Keys follow the config file (snake_case); Drill's own names are
noted where one exists.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from auger.config import server_log_dir, server_profiles_dir, server_users_file
from auger.errors import UserError

__all__ = ["STOP_WAIT", "ServerSettings", "default_users_file"]

#: Seconds a stopping server waits for the requests and Flight calls still open. A client that
#: stopped reading an answer (a paused BI tool, a process stopped in a debugger) holds its
#: request open for as long as it likes, and both uvicorn's graceful shutdown and gRPC's wait for
#: every one: the server would never stop.
STOP_WAIT = 10


def default_users_file() -> str:
    """Where ``auger passwd`` and the server keep users when the config names no file."""
    return server_users_file({})


@dataclass(frozen=True)
class ServerSettings:
    """Validated server settings.

    Attributes:
        host, port: where to listen (Drill: ``drill.exec.http.port``).
        auth: form/Basic login required (Drill: ``drill.exec.security.user.auth.enabled``).
        session_timeout: idle seconds before a session is closed (Drill:
            ``drill.exec.http.session_max_idle_secs``).
        anonymous_sessions: ``cookie`` keeps one session per cookie without auth (our default,
            a superset of Drill); ``per_request`` is Drill's strict behaviour.
        users_file: JSON file of users and password hashes (``auger passwd``); default in the
            state directory (:func:`auger.config.state_dir`).
        profiles_dir: where query profiles are written; default in the state directory.
        log_dir: where ``auger serve`` writes its log (``server-<port>.log``) and where the
            Logs page looks; default ``logs`` in the state directory.
        max_body_bytes: larger request bodies get 413.
        body_timeout: seconds a client may take to send its request body (408 after that).
        send_timeout: seconds a streamed answer may wait for a client that stopped reading.
        query_threads: queries run at the same time (each is a blocking Spark call).
        profiles_kept: finished profiles kept on disk (oldest removed first).
        keepalive: seconds of silence in a streamed answer before a space is sent, so clients
            with short read timeouts (pydrill: 10 s) survive slow queries.
        allowed_origins: web origins besides the server's own whose pages may send
            state-changing requests (``https://notebook.example:8443``); others get 403.
        basic_session_timeout: idle seconds of the one session kept per user for HTTP Basic
            requests that carry no session cookie.
        idle_timeout: idle seconds (no request, no session) after which the local background
            server that ``auger sql`` starts stops itself; ``auger serve`` ignores it.
        flight_port: the port of the Arrow Flight SQL endpoint on the same host; 0 (the
            default) serves none.
        tls_certificate, tls_private_key: PEM files; when both are set the REST API is served
            over HTTPS and the Flight SQL endpoint over TLS.
        login_delay: seconds a user name and a client address wait after a failed login
            before the next try is checked (0: no wait); doubles with each further failure.
        login_delay_max: the longest such wait.
        max_sessions_per_user: open sessions one user may hold with auth on; a new login past
            it closes the user's least recently used session that runs no query (0: no cap).
    """

    host: str = "127.0.0.1"
    port: int = 8047
    auth: bool = False
    session_timeout: float = 3600.0
    anonymous_sessions: str = "cookie"
    users_file: str = ""
    profiles_dir: str = ""
    log_dir: str = ""
    max_body_bytes: int = 1024 * 1024
    body_timeout: float = 30.0
    send_timeout: float = 300.0
    query_threads: int = 16
    profiles_kept: int = 1000
    keepalive: float = 5.0
    inline_users: Mapping[str, Any] | None = None
    allowed_origins: tuple[str, ...] = ()
    basic_session_timeout: float = 300.0
    idle_timeout: float = 1800.0
    flight_port: int = 0
    tls_certificate: str = ""
    tls_private_key: str = ""
    login_delay: float = 1.0
    login_delay_max: float = 30.0
    max_sessions_per_user: int = 100

    @classmethod
    def from_config(cls, server: Mapping[str, Any]) -> ServerSettings:
        try:
            settings = cls(
                host=str(server.get("host", "127.0.0.1")),
                port=int(server.get("port", 8047)),
                auth=bool(server.get("auth", False)),
                session_timeout=float(server.get("session_timeout", 3600)),
                anonymous_sessions=str(server.get("anonymous_sessions", "cookie")),
                users_file=server_users_file(server),
                profiles_dir=server_profiles_dir(server),
                log_dir=server_log_dir(server),
                max_body_bytes=int(server.get("max_body_bytes", 1024 * 1024)),
                body_timeout=float(server.get("body_timeout", 30)),
                send_timeout=float(server.get("send_timeout", 300)),
                query_threads=int(server.get("query_threads", 16)),
                profiles_kept=int(server.get("profiles_kept", 1000)),
                keepalive=float(server.get("keepalive", 5)),
                inline_users=dict(server.get("users", {}) or {}),
                allowed_origins=_origins(server.get("allowed_origins", ())),
                basic_session_timeout=float(server.get("basic_session_timeout", 300)),
                idle_timeout=float(server.get("idle_timeout", 1800)),
                flight_port=int(server.get("flight_port", 0) or 0),
                tls_certificate=str(server.get("tls_certificate", "") or ""),
                tls_private_key=str(server.get("tls_private_key", "") or ""),
                login_delay=float(server.get("login_delay", 1)),
                login_delay_max=float(server.get("login_delay_max", 30)),
                max_sessions_per_user=int(server.get("max_sessions_per_user", 100)),
            )
        except (TypeError, ValueError) as exc:
            raise UserError.validation(f"Invalid [server] setting: {exc}") from exc
        if settings.anonymous_sessions not in ("cookie", "per_request"):
            raise UserError.validation(
                f"server.anonymous_sessions must be 'cookie' or 'per_request', "
                f"not [{settings.anonymous_sessions}]"
            )
        if bool(settings.tls_certificate) != bool(settings.tls_private_key):
            raise UserError.validation(
                "server.tls_certificate and server.tls_private_key go together: set both PEM "
                "files to serve TLS, or neither"
            )
        if not 0 <= settings.flight_port <= 65535:
            raise UserError.validation(
                "server.flight_port must be a port number (0 for none), not "
                f"[{settings.flight_port}]"
            )
        knobs = (settings.session_timeout, settings.basic_session_timeout, settings.idle_timeout)
        if min(*knobs, settings.query_threads, settings.keepalive) <= 0:
            raise UserError.validation(
                "server.session_timeout, basic_session_timeout, idle_timeout, query_threads and "
                "keepalive must be positive"
            )
        if min(settings.login_delay, settings.login_delay_max, settings.max_sessions_per_user) < 0:
            raise UserError.validation(
                "server.login_delay, login_delay_max and max_sessions_per_user must not be negative"
            )
        return settings


def _origins(value: Any) -> tuple[str, ...]:
    """``allowed_origins`` as a tuple of strings (one string is one origin)."""
    if isinstance(value, str):
        return (value,) if value else ()
    if not isinstance(value, list | tuple):
        raise TypeError(f"server.allowed_origins must be a list of origins, not [{value!r}]")
    return tuple(str(v) for v in value)
