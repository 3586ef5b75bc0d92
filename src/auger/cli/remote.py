"""A DB-API-shaped client of a running ``auger serve`` (or Drill) over Drill's REST API.

``auger sql --connect http://host:8047`` uses it so a statement costs an HTTP round trip instead
of a JVM start. The wire format is Drill's REST API (served by :mod:`auger.server`):
``POST /query.json`` with ``{"queryType": "SQL", "query": ...}``, form login at
``/j_security_check``, and a cookie that binds every request to one server-side session (so
``USE``, ``ALTER SESSION`` and temporary tables last as long as the shell).
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from auger.dbapi import (
    CANCELLED_MESSAGE,
    DatabaseError,
    Error,
    InterfaceError,
    OperationalError,
    ProgrammingError,
    bind_parameters,
    to_dbapi_error,
)
from auger.dbapi import Warning as AugerWarning
from auger.errors import ErrorKind, UserError

__all__ = ["RemoteConnection", "RemoteCursor", "connect_remote", "server_has_auth"]

_LOGIN_FAILED = "Invalid username/password credentials"
#: A request header marking a statement as the tool's own look-up (completion, metadata): the
#: server runs it like any other but records no profile. The server's name for it is
#: ``auger.server.query_request.INTERNAL_HEADER``; this module must not import the server.
INTERNAL_HEADER = "X-Auger-Internal"
_KIND_RE = re.compile(r"^([A-Z_]+) ERROR: ")
_ERROR_ID_RE = re.compile(r"\s*\[Error Id: [^\]]*\]\s*$")
_EPOCH = dt.datetime(1970, 1, 1)
_QUERY_ID_RE = re.compile(rb'"queryId"\s*:\s*"([^"]+)"')


def _connection_error(url: str, exc: BaseException) -> OperationalError:
    # requests nests the reason several levels deep; the errno text is what the user needs.
    m = re.search(r"\[Errno -?\d+\] ([^'\")]+)", str(exc))
    reason = m.group(1).strip() if m else type(exc).__name__
    return OperationalError(
        f"CONNECTION ERROR: Cannot reach the auger server at {url} ({reason}). "
        "Is `auger serve` running there?",
        ErrorKind.CONNECTION,
    )


def _server_error(text: str) -> Error:
    """The DB-API error for a Drill error text (``VALIDATION ERROR: ...``)."""
    text = _ERROR_ID_RE.sub("", text.strip())
    head, _, rest = text.partition("\n\n")
    m = _KIND_RE.match(head)
    if m and m.group(1) in ErrorKind.__members__:
        context = [ln for ln in rest.splitlines() if ln.strip()]
        return to_dbapi_error(UserError(m.group(1), head[m.end() :], context))
    return DatabaseError(text or "SYSTEM ERROR: the query failed", ErrorKind.SYSTEM)


def _decoder(type_name: str) -> Any:
    """Turn Drill's JSON encoding of a value back into Python (dates are epoch milliseconds)."""
    base = type_name.split("(", 1)[0]
    if base == "DATE":
        return lambda v: (_EPOCH + dt.timedelta(milliseconds=v)).date()
    if base == "TIMESTAMP":
        return lambda v: _EPOCH + dt.timedelta(milliseconds=v)
    if base == "TIME":
        return lambda v: (_EPOCH + dt.timedelta(milliseconds=v)).time()
    return None


# REST metadata names → the SQL names the embedded DB-API describes columns with.
_SQL_NAMES = {
    "INT": "INTEGER",
    "FLOAT4": "FLOAT",
    "FLOAT8": "DOUBLE",
    "VARDECIMAL": "DECIMAL",
    "BIT": "BOOLEAN",
    "VARCHAR": "CHARACTER VARYING",
    "VARBINARY": "BINARY VARYING",
    "MAP": "STRUCT",
}


class RemoteCursor:
    """A cursor whose statements run on the server; results arrive whole, as JSON."""

    def __init__(self, connection: RemoteConnection) -> None:
        self.connection = connection
        self.arraysize = 1
        self.rowcount = -1
        self.description: list[tuple[Any, ...]] | None = None
        self.job_group: str | None = None
        self.query_id: str | None = None
        self.closed = False
        self._rows: list[tuple[Any, ...]] = []
        self._pos = 0
        self._answer: Any = None  # the streaming HTTP answer being read, for cancel()
        self._cancelled = False
        #: the statement's scan messages, from its query profile (``Cursor.warnings``)
        self.warnings: list[str] = []
        #: the tool's own look-ups (completion): the server runs them but keeps no profile
        self.internal = False
        #: rows the server sends at most (Drill's ``autoLimit``): the shell asks for one past
        #: what it shows, so a large result never travels whole to be shown in part
        self.max_rows: int | None = None

    def execute(self, operation: str, parameters: Sequence[Any] | None = None) -> RemoteCursor:
        if self.closed:
            raise InterfaceError("Cursor is closed")
        sql = bind_parameters(operation, parameters).strip()
        while sql.endswith(";"):
            sql = sql[:-1].rstrip()
        self.description, self._rows, self._pos, self.rowcount = None, [], 0, -1
        self.query_id = None
        self._cancelled = False
        self.warnings = []
        try:
            body = self.connection._post_query(
                sql, self._started, self._reading, internal=self.internal, limit=self.max_rows
            )
        except OperationalError:
            if self._cancelled:  # cancel() hung up on the answer
                raise OperationalError(CANCELLED_MESSAGE, ErrorKind.EXECUTION) from None
            raise
        finally:
            self._answer = None
        self.query_id = body.get("queryId") or self.query_id
        if body.get("queryState") != "COMPLETED":
            state = body.get("queryState", "FAILED")
            if state == "CANCELED":
                raise OperationalError(CANCELLED_MESSAGE, ErrorKind.EXECUTION)
            raise _server_error(body.get("errorMessage") or f"SYSTEM ERROR: query {state}")
        names = list(body.get("columns", []))
        types = list(body.get("metadata", [])) or ["ANY"] * len(names)
        decoders = [_decoder(t) for t in types]
        rows = []
        for obj in body.get("rows", []):
            values = []
            for name, dec in zip(names, decoders, strict=True):
                v = obj.get(name)
                values.append(dec(v) if dec is not None and isinstance(v, int | float) else v)
            rows.append(tuple(values))
        bases = [t.split("(", 1)[0] for t in types]
        self.description = [
            (n, _SQL_NAMES.get(b, b), None, None, None, None, True)
            for n, b in zip(names, bases, strict=True)
        ]
        self._rows = rows
        cut = self.max_rows is not None and len(rows) >= self.max_rows
        self.rowcount = -1 if cut else len(rows)  # cut: the full count is unknown
        self.warnings = self._profile_warnings()
        return self

    @property
    def messages(self) -> list[tuple[type[AugerWarning], str]]:
        """PEP 249's ``messages``, as the embedded cursor has them."""
        return [(AugerWarning, text) for text in self.warnings]

    def _profile_warnings(self) -> list[str]:
        """The scan messages of the statement just run, from its profile: Drill's query answer
        has no place for them, and its clients must keep reading it unchanged. Nothing when the
        server keeps no such list (Drill itself) or the profile cannot be read."""
        if not self.query_id:
            return []
        try:
            answer = self.connection._get(f"/profiles/{self.query_id}.json")
            found = answer.json().get("warnings") if answer.status_code == 200 else None
        except (Error, ValueError, AttributeError):
            return []
        return [str(w) for w in found] if isinstance(found, list) else []

    def running_stages(self) -> list[tuple[int, int, int]]:
        """The unfinished Spark stages of the running statement, ``(stage id, tasks done,
        tasks)``, as the embedded cursor gives them, read from the server's profile of the
        query while it runs (``stages``, as the console's progress line reads it). Empty when
        the query's id has not arrived yet or the server (Drill itself) reports no stages."""
        query_id = self.query_id
        if not query_id or self.description is not None:
            return []
        try:
            answer = self.connection._get(f"/profiles/{query_id}.json")
            stages = answer.json().get("stages") if answer.status_code == 200 else None
        except (Error, ValueError, AttributeError):
            return []
        out = []
        for stage in stages if isinstance(stages, list) else []:
            try:
                sid, done, total = (
                    int(stage["stageId"]),
                    int(stage["numCompleteTasks"]),
                    int(stage["numTasks"]),
                )
                active = int(stage.get("numActiveTasks", 0))
            except (KeyError, TypeError, ValueError):
                continue
            if stage.get("status") == "ACTIVE" and done < total and (done or active):
                out.append((sid, done, total))
        return out

    def _started(self, query_id: str) -> None:
        self.query_id = query_id

    def _reading(self, answer: Any) -> None:
        self._answer = answer

    @property
    def abandon_on_cancel(self) -> bool:
        """Whether Ctrl-C should stop waiting at once: yes while the query id is unknown."""
        return self.query_id is None

    def fetchone(self) -> tuple[Any, ...] | None:
        rows = self.fetchmany(1)
        return rows[0] if rows else None

    def fetchmany(self, size: int | None = None) -> list[tuple[Any, ...]]:
        if self.description is None:
            raise ProgrammingError("No statement has been executed, or it returned no rows")
        n = self.arraysize if size is None else size
        out = self._rows[self._pos : self._pos + n]
        self._pos += len(out)
        return out

    def fetchall(self) -> list[tuple[Any, ...]]:
        return self.fetchmany(len(self._rows) - self._pos)

    def cancel(self) -> None:
        """Cancel the running statement; safe to call from another thread.

        The server is asked to cancel it (``/profiles/cancel/{id}``) and the waiting
        ``execute`` then ends with the server's CANCELED answer. When that cannot be asked
        (the query's id has not arrived yet) or the server does not confirm it, the answer's
        connection is shut down instead: the server cancels a query whose client went away,
        and ``execute`` ends with the same cancelled error.
        """
        self._cancelled = True
        if self.query_id:
            try:
                done = self.connection._get(f"/profiles/cancel/{self.query_id}")
                if done.status_code == 200 and done.text.startswith("Cancelled query"):
                    return
            except Exception:
                pass
        self._hang_up()

    def _hang_up(self) -> None:
        """Shut the streaming answer's socket down, which wakes the thread reading it."""
        answer = self._answer
        if answer is None:
            return
        try:
            answer.raw.shutdown()
        except Exception:  # already finished or released: nothing left to stop
            pass

    def close(self) -> None:
        self.closed = True


class RemoteConnection:
    """One server-side session, held by a cookie.

    Args:
        url: the server's base URL, e.g. ``http://localhost:8047``.
        user: log in as this user (form login); None for an open server.
        password: the password for ``user``.
        timeout: seconds to wait for an answer (None: no limit, queries may be long).
        headers: sent with every request (the local server's token and session user).
    """

    def __init__(
        self,
        url: str,
        user: str | None = None,
        password: str | None = None,
        timeout: float | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        # deferred: loads requests and more (heavy)
        import requests

        self.url = url.rstrip("/")
        self.user = user
        self.timeout = timeout
        self.closed = False
        self.default_schema: str | None = None
        self.http = requests.Session()
        self.http.headers["User-Agent"] = "auger-sql"
        self.http.headers.update(headers or {})
        if user is not None:
            self._login(user, password or "")

    # ----- HTTP
    def _request(self, method: str, path: str, **kwargs: Any) -> Any:
        # deferred: loads requests and more (heavy)
        import requests

        if self.closed:
            raise InterfaceError("Connection is closed")
        try:
            return self.http.request(method, self.url + path, timeout=self.timeout, **kwargs)
        except requests.RequestException as exc:
            raise _connection_error(self.url, exc) from None

    def _get(self, path: str) -> Any:
        return self._request("GET", path)

    def _login(self, user: str, password: str) -> None:
        answer = self._request(
            "POST", "/j_security_check", data={"j_username": user, "j_password": password}
        )
        if answer.status_code == 404:
            return  # the server has no authentication: every request is anonymous
        if _LOGIN_FAILED in answer.text or answer.status_code >= 400:
            raise ProgrammingError(
                f"PERMISSION ERROR: {_LOGIN_FAILED}. (user [{user}] at {self.url})",
                ErrorKind.PERMISSION,
            )

    def _post_query(
        self,
        sql: str,
        on_query_id: Callable[[str], None] | None = None,
        on_answer: Callable[[Any], None] | None = None,
        internal: bool = False,
        limit: int | None = None,
    ) -> dict[str, Any]:
        """Send one statement and read its answer as it streams in.

        The server writes ``{"queryId":"..."`` first, before the rows; ``on_query_id`` gets it
        as soon as it arrives, so the statement can be cancelled while it runs. ``on_answer``
        gets the streaming response before it is read, so another thread can hang up on it.
        ``internal`` marks the tool's own look-ups, which the server leaves out of its profiles;
        ``limit`` caps the rows sent (Drill's ``autoLimit``).
        """
        request: dict[str, Any] = {"queryType": "SQL", "query": sql}
        if limit:
            request["autoLimit"] = limit
        answer = self._request(
            "POST",
            "/query.json",
            json=request,
            headers={INTERNAL_HEADER: "true"} if internal else None,
            allow_redirects=False,
            stream=True,
        )
        if answer.status_code in (301, 302, 303, 307, 401, 403) or _login_page(answer):
            answer.close()
            raise ProgrammingError(
                f"PERMISSION ERROR: The server at {self.url} needs a login: "
                "run `auger sql --connect URL --user NAME`",
                ErrorKind.PERMISSION,
            )
        if on_answer is not None:
            on_answer(answer)
        text = self._read_streamed(answer, on_query_id)
        try:
            body = json.loads(text)
        except ValueError:
            raise OperationalError(
                f"SYSTEM ERROR: The server answered HTTP {answer.status_code} without JSON: "
                f"{text[:200]!r}",
                ErrorKind.SYSTEM,
            ) from None
        if answer.status_code != 200:
            raise _server_error(str(body.get("errorMessage") or f"HTTP {answer.status_code}"))
        if not isinstance(body, dict):
            raise OperationalError("SYSTEM ERROR: unexpected answer from the server")
        return body

    def _read_streamed(self, answer: Any, on_query_id: Callable[[str], None] | None) -> str:
        # deferred: loads requests and more (heavy)
        import requests

        chunks: list[bytes] = []
        seen_id = on_query_id is None
        try:
            for chunk in answer.iter_content(chunk_size=None):
                chunks.append(chunk)
                if not seen_id:
                    m = _QUERY_ID_RE.search(b"".join(chunks)[:1024])
                    if m:
                        seen_id = True
                        on_query_id(m.group(1).decode())  # type: ignore[misc]
        except requests.RequestException as exc:
            raise _connection_error(self.url, exc) from None
        finally:
            answer.close()
        return b"".join(chunks).decode(answer.encoding or "utf-8")

    # ----- DB-API surface the shell uses
    def cursor(self) -> RemoteCursor:
        if self.closed:
            raise InterfaceError("Connection is closed")
        return RemoteCursor(self)

    def execute(self, sql: str, parameters: Sequence[Any] | None = None) -> RemoteCursor:
        return self.cursor().execute(sql, parameters)

    def commit(self) -> None:
        """Nothing to commit (as Drill)."""

    def close(self) -> None:
        """End the server session (its temporary tables go) and the HTTP connection."""
        if self.closed:
            return
        try:
            self._request("GET", "/logout", allow_redirects=False)
        except Error:
            pass
        self.closed = True
        self.http.close()

    def __enter__(self) -> RemoteConnection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _login_page(answer: Any) -> bool:
    ctype = answer.headers.get("Content-Type", "")
    return "text/html" in ctype and 'action="/j_security_check"' in answer.text


def server_has_auth(url: str, timeout: float = 10.0) -> bool:
    """True if the server asks for a login.

    ``/cluster.json`` says so (``authEnabled``, open to everyone on Drill and auger); a server
    without it has authentication when it has a login page (Drill registers one only then).
    """
    # deferred: loads requests and more (heavy)
    import requests

    base = url.rstrip("/")
    try:
        answer = requests.get(base + "/cluster.json", timeout=timeout)
        if answer.status_code == 200:
            try:
                info = answer.json()
            except ValueError:
                info = None
            if isinstance(info, dict) and "authEnabled" in info:
                return bool(info["authEnabled"])
        login = requests.get(base + "/login", timeout=timeout, allow_redirects=False)
    except requests.RequestException as exc:
        raise _connection_error(url, exc) from None
    return login.status_code != 404


def connect_remote(
    url: str, user: str | None = None, password: str | None = None
) -> RemoteConnection:
    """Open a session on a running server (see :class:`RemoteConnection`)."""
    return RemoteConnection(url, user=user, password=password)
