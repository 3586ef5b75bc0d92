"""The Drill-compatible REST server: routes, wiring and ``serve()``.

Starlette on uvicorn. Request handlers stay on the event loop and never block: statements run
on the query pool (:mod:`auger.server.queries`), session clean-up (which deletes temporary
tables) on the default executor. Every failure becomes a JSON answer; nothing a request sends
can stop the server.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
import os
import socket
import sys
import threading
import time
import urllib.parse
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from importlib import resources
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response, StreamingResponse
from starlette.routing import Route

from auger.engine import Engine, Listener
from auger.errors import UserError
from auger.server.auth import (
    Authenticator,
    TooManyFailures,
    Unauthenticated,
    clear_cookie,
    set_cookie,
)
from auger.server.http import HttpError, json_response, read_body, text_response
from auger.server.origin import SameOriginGuard
from auger.server.pages import console_page, login_page, main_login_page
from auger.server.profiles import ProfileStore
from auger.server.queries import QueryManager
from auger.server.query_request import (
    BadRequest,
    QueryRequest,
    SubmissionFailed,
    apply_submission,
    is_internal,
)
from auger.server.resources import (
    cluster_json,
    log_files_json,
    log_lines,
    metrics_json,
    options_json,
    plugin_json,
    profiles_json,
    server_status_json,
    stats_json,
    storage_json,
    thread_dump,
)
from auger.server.server_options import register_server_options
from auger.server.sessions import SessionStore
from auger.server.settings import STOP_WAIT, ServerSettings
from auger.server.users import UserStore
from auger.spark import jobs

__all__ = ["ServerState", "build_app", "serve"]

_log = logging.getLogger(__name__)


@dataclass
class ServerState:
    engine: Engine
    settings: ServerSettings
    sessions: SessionStore
    queries: QueryManager
    profiles: ProfileStore
    auth: Authenticator
    foreman: str
    started: float = 0.0  # epoch seconds


def _state(request: Request) -> ServerState:
    return request.app.state.auger  # type: ignore[no-any-return]


def _base_url(request: Request) -> str:
    return str(request.base_url).rstrip("/")


# ------------------------------------------------------------------ /query.json
async def query_json(request: Request) -> Response:
    st = _state(request)
    raw = await read_body(request, st.settings.max_body_bytes, st.settings.body_timeout)
    caller = st.auth.require(request)
    web = caller.web
    try:
        body = _decode_query_body(raw, request.headers.get("content-type", ""))
        qr = QueryRequest.from_json(body)
        attempted, cap = await asyncio.get_running_loop().run_in_executor(
            None, apply_submission, qr, web.session
        )
    except BadRequest as exc:
        response = json_response({"errorMessage": str(exc)}, 400)
        return _finish_caller(st, caller, response)
    except SubmissionFailed as exc:
        response = json_response({"errorMessage": str(exc)}, 500)
        return _finish_caller(st, caller, response)
    statement = qr.statement()
    rq = st.queries.start(web, statement, internal=is_internal(request.headers, statement))
    on_done = (lambda: st.sessions.close(web)) if caller.temporary else None
    response = StreamingResponse(
        st.queries.stream(rq, qr.statement(), attempted, cap, on_done=on_done),
        media_type="application/json",
    )
    if caller.new:
        set_cookie(response, web)
    return response


def _finish_caller(st: ServerState, caller: Any, response: Response) -> Response:
    if caller.temporary:
        st.sessions.close(caller.web)
    elif caller.new:
        set_cookie(response, caller.web)
    return response


def _decode_query_body(raw: bytes, content_type: str) -> Any:
    if "application/x-www-form-urlencoded" in content_type:
        form = urllib.parse.parse_qs(raw.decode("utf-8", "replace"))
        return {k: v[-1] for k, v in form.items()}
    try:
        return json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise BadRequest("The request body is not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise BadRequest(f"Malformed JSON in the request body: {exc}") from None


# ------------------------------------------------------------------ login / logout
async def j_security_check(request: Request) -> Response:
    st = _state(request)
    raw = await read_body(request, 64 * 1024, st.settings.body_timeout)
    form = urllib.parse.parse_qs(raw.decode("utf-8", "replace"), keep_blank_values=True)
    name = (form.get("j_username") or [""])[-1]
    password = (form.get("j_password") or [""])[-1]
    redirect = _safe_redirect(
        (form.get("redirect") or [""])[-1] or request.query_params.get("redirect", "")
    )
    if not st.settings.auth:
        return RedirectResponse(redirect, status_code=303)
    loop = asyncio.get_running_loop()
    address = request.client.host if request.client else None
    try:
        web = await loop.run_in_executor(None, st.auth.login, name, password, address)
    except TooManyFailures as exc:
        page = login_page(error=True, redirect=redirect, reason=str(exc))
        return HTMLResponse(page, 429, headers={"Retry-After": str(exc.retry_after)})
    if web is None:
        return HTMLResponse(login_page(error=True, redirect=redirect), 200)
    old = st.auth.current(request)
    if old is not None and old is not web:
        await loop.run_in_executor(None, st.sessions.close, old)
    # Jetty's form authenticator: 303 See Other, or 302 for an HTTP/1.0 client.
    code = 302 if request.scope.get("http_version") == "1.0" else 303
    response = RedirectResponse(redirect, status_code=code)
    set_cookie(response, web)
    return response


def _safe_redirect(target: str) -> str:
    """Only local paths: a login must never bounce the browser to another site."""
    if not target.startswith("/") or target.startswith("//"):
        return "/"
    return target


async def login(request: Request) -> Response:
    st = _state(request)
    if request.method == "POST":
        return HTMLResponse(login_page(error=True), 200)
    redirect = _safe_redirect(request.query_params.get("redirect", "/"))
    if st.auth.current(request) is not None:
        return RedirectResponse(redirect, status_code=303)
    return HTMLResponse(login_page(redirect=redirect))


async def main_login(request: Request) -> Response:
    redirect = _safe_redirect(request.query_params.get("redirect", "/"))
    return HTMLResponse(main_login_page(urllib.parse.quote(redirect, safe="")))


async def logout(request: Request) -> Response:
    st = _state(request)
    web = st.auth.current(request)
    if web is not None:
        await asyncio.get_running_loop().run_in_executor(None, st.sessions.close, web)
    response = RedirectResponse("/", status_code=303)
    clear_cookie(response)
    return response


# ------------------------------------------------------------------ pages and status
def _wants_html(request: Request, default: bool = False) -> bool:
    """Whether to answer a page rather than JSON: browsers ask for ``text/html``, clients for
    ``application/json``; anything else (``*/*``, no header) gets the route's ``default``.

    A ``*.json`` address is JSON whatever the header says, as Drill's are: a browser following
    a link to ``/options.json`` sends ``Accept: text/html`` and still wants the document."""
    if request.url.path.endswith(".json"):
        return False
    accept = request.headers.get("accept", "")
    if "text/html" in accept:
        return True
    if "application/json" in accept:
        return False
    return default


def _page(request: Request, page: str, profile_id: str | None = None) -> Response:
    st = _state(request)
    web = st.auth.current(request)
    user = web.user if web else (None if st.settings.auth else "anonymous")
    admin = web.admin if web else not st.settings.auth
    return HTMLResponse(console_page(user, st.settings.auth, page, profile_id, admin))


async def home(request: Request) -> Response:
    return _page(request, "query")


async def query_page(request: Request) -> Response:
    """``/query``: the console's Query page; clients are told where statements go."""
    st = _state(request)
    _authenticated(st, request)
    if _wants_html(request):
        return _page(request, "query")
    return json_response({"submit": "POST /query.json", "queryTypes": ["SQL"]})


async def status(request: Request) -> Response:
    """``/status``: open to everyone, like Drill's; a page unless JSON is asked for."""
    st = _state(request)
    if _wants_html(request, default=True):
        return _page(request, "status")
    data = await asyncio.get_running_loop().run_in_executor(
        None,
        server_status_json,
        st.engine,
        st.started,
        len(st.sessions.all()),
        len(st.queries.running()),
    )
    return json_response(data)


async def status_json(request: Request) -> Response:
    return json_response({"status": "Running!"})


async def cluster(request: Request) -> Response:
    st = _state(request)
    return json_response(cluster_json(st.foreman, st.engine.drill_ports(), st.settings.auth))


async def metrics(request: Request) -> Response:
    st = _state(request)
    if _wants_html(request):
        return _page(request, "metrics")
    data = metrics_json(len(st.sessions.all()), len(st.queries.running()))
    return json_response(data, headers={"Access-Control-Allow-Origin": "*"})


async def stats(request: Request) -> Response:
    st = _state(request)
    return json_response(stats_json(st.foreman, st.engine.drill_ports()))


async def threads(request: Request) -> Response:
    st = _state(request)
    _authenticated(st, request)
    if request.url.path == "/threads" and _wants_html(request, default=True):
        return _page(request, "threads")
    return text_response(thread_dump())


async def options(request: Request) -> Response:
    """The options page, or the system's option values; ``?scope=session`` gives the values
    the caller's own session sees (its ``ALTER SESSION`` settings over the system's)."""
    st = _state(request)
    _authenticated(st, request)
    if _wants_html(request):
        return _page(request, "options")
    if request.query_params.get("scope", "").lower() == "session":
        caller = st.auth.require(request)
        response = json_response(options_json(st.engine, caller.web.session.options))
        return _finish_caller(st, caller, response)
    return json_response(options_json(st.engine))


async def logs(request: Request) -> Response:
    """``/logs``: the server's log files; admins only, since logs quote every user's queries."""
    st = _state(request)
    if _wants_html(request):
        _authenticated(st, request)
        return _page(request, "logs")
    _admin(st, request)
    return json_response(log_files_json(st.settings.log_dir))


async def log_content(request: Request) -> Response:
    """``/log/{name}/content``: the last lines of one of the server's log files (admins)."""
    st = _state(request)
    _admin(st, request)
    lines = await asyncio.get_running_loop().run_in_executor(
        None, log_lines, st.settings.log_dir, request.path_params["name"]
    )
    if lines is None:
        raise HttpError(404, f"No log file {request.path_params['name']}")
    return json_response({"name": request.path_params["name"], "lines": lines})


# ------------------------------------------------------------------ storage (admin)
def _admin(st: ServerState, request: Request) -> None:
    """Admin-only resources: a logged-in non-admin is forbidden (403), not a server failure."""
    caller = _authenticated(st, request)
    if caller is not None and not caller.web.admin:
        raise HttpError(403, "User not authorized.")


def _authenticated(st: ServerState, request: Request) -> Any:
    """The caller when auth is on (401/307 without one); None when auth is off."""
    if not st.settings.auth:
        return None
    return st.auth.require(request)


async def storage(request: Request) -> Response:
    st = _state(request)
    _admin(st, request)
    which = request.path_params.get("which", "all")
    return json_response(storage_json(st.engine, which))


async def storage_page(request: Request) -> Response:
    """``/storage``: the page or the plugins' JSON, for admins only in either form (the
    workspaces' locations are the server's layout, not every user's business)."""
    st = _state(request)
    _admin(st, request)
    if _wants_html(request):
        return _page(request, "storage")
    return json_response(storage_json(st.engine, "all"))


async def storage_plugin(request: Request) -> Response:
    """``/storage/{name}.json``: read a plugin; an admin's POST replaces its configuration
    (checked whole first, kept until the server restarts); plugins are not deleted here."""
    st = _state(request)
    _admin(st, request)
    name = request.path_params["name"]
    plugin = st.engine.config.plugins.get(name)
    if request.method == "GET":
        if plugin is None:
            return json_response({"name": name, "config": None})
        return json_response(plugin_json(plugin))
    raw = await read_body(request, st.settings.max_body_bytes, st.settings.body_timeout)
    if request.method == "DELETE":
        return json_response(
            {
                "result": "Error while deleting plugin: storage plugins are defined in auger's "
                "config file; disable the plugin instead"
            },
            500,
        )
    try:
        body = json.loads(raw or b"{}")
    except ValueError as exc:
        return json_response({"result": f"Error while saving plugin: invalid JSON: {exc}"}, 400)
    config = body.get("config", body) if isinstance(body, dict) else body
    return await _update_plugin(st, name, config)


async def _update_plugin(st: ServerState, name: str, config: Any) -> Response:
    try:
        await asyncio.get_running_loop().run_in_executor(
            None, st.engine.update_plugin, name, config
        )
    except UserError as exc:
        return json_response({"result": f"Error while saving plugin: {exc}"}, 400)
    _log.info("storage plugin %s changed", name)
    return json_response({"result": "Success"})


async def storage_enable(request: Request) -> Response:
    st = _state(request)
    _admin(st, request)
    name = request.path_params["name"]
    plugin = st.engine.config.plugins.get(name)
    if plugin is None:
        return json_response({"result": f"No plugin exists with the given name: {name}"}, 404)
    wanted = request.path_params["flag"].lower() == "true"
    if wanted == plugin.enabled:
        return json_response({"result": "Success"})
    if request.method != "POST":
        await read_body(request, st.settings.max_body_bytes, st.settings.body_timeout)
    return await _update_plugin(st, name, {**plugin_json(plugin)["config"], "enabled": wanted})


# ------------------------------------------------------------------ options
async def option_set(request: Request) -> Response:
    """``POST /option/{name}``: set an option for the caller's session (``scope`` SESSION) or,
    for admins, the whole server (SYSTEM, the default of Drill's form, which sends ``name``,
    ``value`` and ``kind``)."""
    st = _state(request)
    caller = st.auth.require(request)
    body = await _form_or_json(st, request)
    scope = str(body.get("scope", "SYSTEM")).upper()
    name = request.path_params["name"]
    reset = request.url.path.endswith("/reset")
    if scope not in ("SESSION", "SYSTEM"):
        raise HttpError(400, f"scope must be SESSION or SYSTEM, not {scope}")
    if scope == "SYSTEM" and st.settings.auth and not caller.web.admin:
        raise HttpError(403, "User not authorized.")
    if not reset and "value" not in body:
        raise HttpError(400, f"No value given for option {name}")
    target = caller.web.session.options if scope == "SESSION" else st.engine.system_options
    try:
        if reset:
            target.reset(name)
        else:
            target.set(name, body["value"])
    except UserError as exc:
        raise HttpError(400, exc.summary) from None
    response = json_response({"result": "Success"})
    return _finish_caller(st, caller, response)


async def _form_or_json(st: ServerState, request: Request) -> dict[str, Any]:
    raw = await read_body(request, st.settings.max_body_bytes, st.settings.body_timeout)
    if "application/x-www-form-urlencoded" in request.headers.get("content-type", ""):
        return dict(urllib.parse.parse_qsl(raw.decode("utf-8", "replace")))
    try:
        body = json.loads(raw or b"{}")
    except ValueError as exc:
        raise HttpError(400, f"The body is not JSON: {exc}") from None
    if not isinstance(body, dict):
        raise HttpError(400, "The body must be a JSON object")
    return body


# ------------------------------------------------------------------ profiles
def _profile_viewer(st: ServerState, request: Request) -> str | None:
    """None when the caller may see every profile (admins, or auth off), else their name."""
    caller = _authenticated(st, request)
    if caller is None or caller.web.admin:
        return None
    return str(caller.web.user)


async def profiles(request: Request) -> Response:
    st = _state(request)
    viewer = _profile_viewer(st, request)
    try:
        limit = max(int(request.query_params.get("max", "100")), 0)
    except ValueError:
        limit = 100
    data = profiles_json(st.profiles, st.queries, viewer, st.foreman, _base_url(request), limit)
    which = request.path_params.get("which")
    if which == "running":
        data = {"runningQueries": data["runningQueries"], "errors": []}
    elif which == "completed":
        data = {"finishedQueries": data["finishedQueries"], "errors": []}
    return json_response(data)


_PROFILE_ERROR = "{ 'message' : 'error (unable to serialize profile)' }"


async def profile(request: Request) -> Response:
    """A query's profile; while it runs, with the Spark stages done and running so far (what
    the console's progress line shows)."""
    st = _state(request)
    viewer = _profile_viewer(st, request)
    query_id = request.path_params["query_id"]
    found = st.profiles.get(query_id)
    if found is None:
        return Response(_PROFILE_ERROR, 500, media_type="application/json")
    if viewer is not None and found.user != viewer:
        raise HttpError(403, "User not authorized.")
    data = found.to_json(st.foreman, st.engine.drill_ports())
    if st.queries.get(query_id) is not None:
        data["stages"] = await asyncio.get_running_loop().run_in_executor(
            None, jobs.group_stages, query_id
        )
    return json_response(data)


async def cancel(request: Request) -> Response:
    st = _state(request)
    viewer = _profile_viewer(st, request)
    query_id = request.path_params["query_id"]
    rq = st.queries.get(query_id)
    if rq is not None and (viewer is None or rq.web.user == viewer):
        st.queries.cancel(query_id)
        return text_response(f"Cancelled query {query_id} on locally running node.")
    return text_response(
        f"Failure attempting to cancel query {query_id}.  Unable to find information about "
        "where query is actively running."
    )


async def profiles_page(request: Request) -> Response:
    """``/profiles``: the console's Profiles page, or the list as ``/profiles.json`` gives it."""
    if _wants_html(request):
        _authenticated(_state(request), request)
        return _page(request, "profiles")
    return await profiles(request)


async def profile_page(request: Request) -> Response:
    """``/profiles/{id}``: the console opened at one profile, or the profile's JSON."""
    if _wants_html(request):
        _authenticated(_state(request), request)
        return _page(request, "profile", request.path_params["query_id"])
    return await profile(request)


async def _profile_or_list(request: Request) -> Response:
    """``/profiles/running.json`` and ``/profiles/{id}.json`` share one path pattern."""
    which = request.path_params.get("which")
    if which in ("running", "completed"):
        return await profiles(request)
    request.path_params["query_id"] = which
    return await profile(request)


# ------------------------------------------------------------------ the console's files
_STATIC_TYPES = {
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".md": "text/plain; charset=utf-8",
}


async def static_file(request: Request) -> Response:
    """``/static/...``: the console's script, style sheet and vendored libraries, shipped in the
    package (nothing is fetched from the network at run time)."""
    path = request.path_params["path"]
    parts = path.split("/")
    suffix = "." + path.rsplit(".", 1)[-1] if "." in path else ""
    if suffix not in _STATIC_TYPES or any(p in ("", ".", "..") for p in parts):
        raise HttpError(404, f"No console file {path}")
    node = resources.files("auger.server").joinpath("static", *parts)
    if not node.is_file():
        raise HttpError(404, f"No console file {path}")
    return Response(
        node.read_bytes(),
        media_type=_STATIC_TYPES[suffix],
        headers={"Cache-Control": "no-cache"},
    )


# ------------------------------------------------------------------ errors
async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HttpError)
    return exc.response()


async def _unauthenticated(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, Unauthenticated)
    return exc.response()


async def _unexpected(request: Request, exc: Exception) -> Response:
    _log.exception("request %s %s failed", request.method, request.url.path)
    return json_response({"errorMessage": f"SYSTEM ERROR: {type(exc).__name__}: {exc}"}, 500)


async def _not_found(request: Request, exc: Exception) -> Response:
    status = getattr(exc, "status_code", 404)
    detail = getattr(exc, "detail", "Not Found")
    return json_response({"errorMessage": f"HTTP {status} {detail}"}, status)


# ------------------------------------------------------------------ assembly
ROUTES = [
    Route("/", home, methods=["GET", "HEAD"]),
    Route("/query", query_page, methods=["GET", "HEAD"]),
    Route("/query.json", query_json, methods=["POST"]),
    Route("/j_security_check", j_security_check, methods=["POST"]),
    Route("/login", login, methods=["GET", "POST"]),
    Route("/mainLogin", main_login, methods=["GET"]),
    Route("/logout", logout, methods=["GET", "POST"]),
    Route("/status", status, methods=["GET", "HEAD"]),
    Route("/status.json", status_json, methods=["GET", "HEAD"]),
    Route("/status/metrics", metrics, methods=["GET"]),
    Route("/metrics", metrics, methods=["GET", "HEAD"]),
    Route("/logs", logs, methods=["GET", "HEAD"]),
    Route("/options", options, methods=["GET", "HEAD"]),
    Route("/storage", storage_page, methods=["GET", "HEAD"]),
    Route("/status/threads", threads, methods=["GET"]),
    Route("/threads", threads, methods=["GET", "HEAD"]),
    Route("/log/{name:str}/content", log_content, methods=["GET"]),
    Route("/option/{name:str}", option_set, methods=["POST"]),
    Route("/option/{name:str}/reset", option_set, methods=["POST"]),
    Route("/cluster.json", cluster, methods=["GET"]),
    Route("/stats.json", stats, methods=["GET"]),
    Route("/options.json", options, methods=["GET"]),
    Route("/internal_options.json", options, methods=["GET"]),
    Route("/storage.json", storage, methods=["GET"]),
    Route("/storage/{which:str}-plugins.json", storage, methods=["GET"]),
    Route("/storage/{name:str}.json", storage_plugin, methods=["GET", "POST", "DELETE"]),
    Route("/storage/{name:str}/enable/{flag:str}", storage_enable, methods=["GET", "POST"]),
    Route("/profiles.json", profiles, methods=["GET"]),
    Route("/profiles/cancel/{query_id:str}", cancel, methods=["GET", "POST"]),
    Route("/profiles/{which:str}.json", _profile_or_list, methods=["GET"]),
    Route("/profiles", profiles_page, methods=["GET", "HEAD"]),
    Route("/profiles/{query_id:str}", profile_page, methods=["GET", "HEAD"]),
    Route("/static/{path:path}", static_file, methods=["GET", "HEAD"]),
]


def build_app(
    config: Any = None, engine: Engine | None = None, settings: ServerSettings | None = None
) -> Starlette:
    """The ASGI app over an engine (a new one on ``config`` unless given)."""
    register_server_options()
    engine = engine or Engine(config)
    settings = settings or ServerSettings.from_config(engine.config.server)
    profiles_store = ProfileStore(settings.profiles_dir, settings.profiles_kept)
    foreman = settings.host if settings.host not in ("0.0.0.0", "::", "") else socket.gethostname()
    queries = QueryManager(
        engine,
        profiles_store,
        settings.query_threads,
        settings.send_timeout,
        foreman,
        settings.keepalive,
    )
    cap = settings.max_sessions_per_user if settings.auth else 0  # auth off: one shared user
    queries.server = f"{foreman}:{settings.port}"
    sessions = SessionStore(engine, settings.session_timeout, queries.cancel, cap)
    users = UserStore(settings.users_file, settings.inline_users)
    engine.deny_path(settings.users_file, "the server's users file")
    engine.deny_path(settings.profiles_dir, "the server's query profiles")
    engine.deny_path(settings.log_dir, "the server's log files")
    state = ServerState(
        engine,
        settings,
        sessions,
        queries,
        profiles_store,
        Authenticator(settings, sessions, users),
        foreman,
        time.time(),
    )

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        engine.add_busy_check(functools.partial(_busy, queries))
        threading.Thread(target=_start_spark, args=(engine,), daemon=True).start()
        shortest = min(settings.session_timeout, settings.basic_session_timeout)
        reaper = asyncio.create_task(_reap(sessions, shortest))
        try:
            yield
        finally:
            reaper.cancel()
            queries.shutdown()
            await asyncio.get_running_loop().run_in_executor(None, sessions.close_all)

    app = Starlette(
        routes=ROUTES,
        lifespan=lifespan,
        middleware=[Middleware(SameOriginGuard, allowed=settings.allowed_origins)],
        exception_handlers={
            HttpError: _http_error,
            Unauthenticated: _unauthenticated,
            404: _not_found,
            405: _not_found,
            Exception: _unexpected,
        },
    )
    app.state.auger = state
    return app


def listening(app: Starlette, sock: socket.socket, protocol: str = "http") -> Listener:
    """Record that ``app`` serves ``protocol`` on ``sock``, a socket already bound: its real
    address is what ``sys.drillbits``, ``/cluster.json`` and the profiles report. Each
    listener a server opens is recorded here, so a new one (Flight SQL) is reported too."""
    host, port = sock.getsockname()[:2]
    listener = Listener(protocol, str(host), int(port))
    app.state.auger.engine.listen(listener)
    return listener


def _start_spark(engine: Engine) -> None:
    """Start Spark in the background so the first query does not pay for it alone (the
    engine then starts its Python workers once no query runs: :meth:`Engine.busy`)."""
    try:
        engine.spark  # noqa: B018 -- starting it is the point
    except Exception:
        _log.exception("Spark could not start")


def _busy(queries: QueryManager) -> bool:
    """Whether the server runs a query now."""
    return bool(queries.running())


async def _reap(sessions: SessionStore, timeout: float) -> None:
    interval = max(0.2, min(30.0, timeout / 4))
    loop = asyncio.get_running_loop()
    while True:
        await asyncio.sleep(interval)
        try:
            closed = await loop.run_in_executor(None, sessions.reap)
            if closed:
                _log.info("closed %d idle session(s)", closed)
        except Exception:
            _log.exception("session reaper failed")


def _log_to_file(settings: ServerSettings) -> None:
    """Also write the log to ``server-<port>.log`` in the log directory (the Logs page lists
    it); a directory that cannot be written leaves the log on stderr only."""

    try:
        os.makedirs(settings.log_dir, mode=0o700, exist_ok=True)  # logs quote users' queries
        handler = logging.FileHandler(
            os.path.join(settings.log_dir, f"server-{settings.port}.log"), encoding="utf-8"
        )
    except OSError as exc:
        _log.warning("not writing a log file in %s: %s", settings.log_dir, exc)
        return
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.getLogger().addHandler(handler)


def serve(
    config: Any = None,
    host: str | None = None,
    port: int | None = None,
    overrides: Mapping[str, Any] | None = None,
    *,
    flight_port: int | None = None,
    sock: socket.socket | None = None,
    prepare: Callable[[Starlette, ServerSettings], None] | None = None,
    log_to_file: bool = True,
) -> int:
    """Run the server until interrupted or stopped (``auger serve``, and the local background
    server of ``auger sql``).

    Args:
        config, host, port, overrides: the configuration, and what replaces its ``[server]``.
        flight_port: serve Arrow Flight SQL on this port too (replaces ``flight_port``).
        sock: a socket already bound (the local server picks a free port itself).
        prepare: called with the app and the settings once both are built, before the first
            request is served (the local server adds its token guard and idle watch there).
        log_to_file: also log to ``server-<port>.log`` in the log directory.
    """
    # deferred: loads uvicorn (heavy)
    import uvicorn

    # before the engine: its start-up sweep logs what crashed processes left behind
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    engine = Engine(config)
    server_cfg = {**dict(engine.config.server), **dict(overrides or {})}
    if host is not None:
        server_cfg["host"] = host
    if port is not None:
        server_cfg["port"] = port
    if flight_port is not None:
        server_cfg["flight_port"] = flight_port
    settings = ServerSettings.from_config(server_cfg)
    if log_to_file:
        _log_to_file(settings)
    _log.info(
        "serving on %s:%s (auth %s, Spark %s)",
        settings.host,
        settings.port,
        "on" if settings.auth else "off",
        engine.config.spark_master,
    )
    app = build_app(engine=engine, settings=settings)
    if prepare is not None:
        prepare(app, settings)
    tls = bool(settings.tls_certificate)
    flight_server = None
    flight: Listener | None = None
    if settings.flight_port:
        # deferred: loads protobuf (heavy)
        from auger.server.flight_sql import start_flight_server

        flight_server = start_flight_server(app.state.auger, settings.host, settings.flight_port)
        flight = Listener("flight-sql", settings.host, int(flight_server.port))
        app.state.auger.engine.listen(flight)
        print(
            f"auger: Arrow Flight SQL on grpc{'+tls' if tls else ''}://{settings.host}:"
            f"{flight.port}",
            file=sys.stderr,
            flush=True,
        )
    uv = uvicorn.Config(
        app,
        host=settings.host,
        port=settings.port,
        log_level="warning",
        timeout_keep_alive=30,
        # requests still open then are cancelled (their queries with them): see STOP_WAIT
        timeout_graceful_shutdown=STOP_WAIT,
        lifespan="on",
        h11_max_incomplete_event_size=64 * 1024,
        ssl_certfile=settings.tls_certificate or None,
        ssl_keyfile=settings.tls_private_key or None,
    )
    # bound here rather than by uvicorn, so that the port it really got is known and reported
    sock = sock if sock is not None else uv.bind_socket()
    http = listening(app, sock)
    print(
        f"auger: Drill REST API on http{'s' if tls else ''}://{settings.host}:{http.port}/ "
        f"(auth {'on' if settings.auth else 'off'})",
        file=sys.stderr,
        flush=True,
    )
    try:
        uvicorn.Server(uv).run(sockets=[sock])
    finally:
        engine.unlisten(http)
        if flight_server is not None:
            flight_server.stop()
            if flight is not None:
                engine.unlisten(flight)
    engine.shutdown()
    return 0
