"""The ``/query.json`` request body: parsing and the steps Drill applies before submitting.

Drill applies, in order, the impersonation target, the request's session options, the default
schema and the row limit; anything failing there is a *submission* failure (HTTP 500 with an
``errorMessage``), while failures of the statement itself are answered 200 with
``queryState: FAILED``. The row cap follows Drill: ``exec.query.max_rows`` is read before the
request's options are applied.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from auger.errors import UserError

if TYPE_CHECKING:
    from auger.session import UserSession

__all__ = [
    "INTERNAL_HEADER",
    "BadRequest",
    "QueryRequest",
    "SubmissionFailed",
    "apply_submission",
    "effective_limit",
    "is_internal",
]

#: A request header (value ``true``) marking a statement as a tool's own look-up: the shell's
#: completion, a console's metadata. It runs like any other statement but leaves no profile, so
#: the profile list shows what users asked, not what their tools asked on their behalf.
INTERNAL_HEADER = "X-Auger-Internal"


#: The look-ups a tool may run without a profile: metadata statements, and a query of no rows
#: (``SELECT * FROM t LIMIT 0``, how the shell learns a table's columns).
_LOOKUP = re.compile(
    r"\s*(?:(?:SHOW|DESCRIBE|DESC)\b.*|SELECT\s+\*\s+FROM\s+[^;]+?\s+LIMIT\s+0)\s*;?\s*",
    re.IGNORECASE | re.DOTALL,
)


def is_internal(headers: Mapping[str, str], statement: str) -> bool:
    """Whether a request is a tool's own look-up: it carries :data:`INTERNAL_HEADER` set to
    ``true`` (or ``1``) and the statement only reads metadata. Anything else keeps its profile
    whatever the header says, so the header cannot hide a user's work from administrators."""
    if headers.get(INTERNAL_HEADER, "").strip().lower() not in ("true", "1"):
        return False
    return _LOOKUP.fullmatch(statement) is not None and ";" not in statement.rstrip().rstrip(";")


class BadRequest(Exception):
    """The body is not a query request at all (HTTP 400)."""


class SubmissionFailed(Exception):
    """The request is well-formed but cannot be submitted (HTTP 500, Drill's wording first)."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"Query submission failed: {reason}")


@dataclass(frozen=True)
class QueryRequest:
    query: str
    query_type: str = "SQL"
    auto_limit: int = 0
    default_schema: str | None = None
    options: Mapping[str, Any] = field(default_factory=dict)
    user_name: str | None = None

    @classmethod
    def from_json(cls, body: Any) -> QueryRequest:
        """Read a decoded JSON body; unknown keys are ignored (clients never send them)."""
        if not isinstance(body, Mapping):
            raise BadRequest("The request body must be a JSON object")
        query = body.get("query")
        if not isinstance(query, str):
            raise BadRequest("Missing or non-string field [query]")
        qtype = body.get("queryType", "SQL")
        if qtype is None:
            qtype = "SQL"
        if not isinstance(qtype, str):
            raise BadRequest("Field [queryType] must be a string")
        options = body.get("options") or {}
        if not isinstance(options, Mapping):
            raise BadRequest("Field [options] must be an object of option names to values")
        schema = body.get("defaultSchema")
        user = body.get("userName")
        return cls(
            query=query,
            query_type=qtype.strip().upper(),
            auto_limit=_map_count(body.get("autoLimit")),
            default_schema=str(schema).strip() or None if schema is not None else None,
            options=dict(options),
            user_name=str(user).strip() or None if user is not None else None,
        )

    def statement(self) -> str:
        """The SQL to run: one trailing ``;`` is tolerated (as Drill's web form does)."""
        text = self.query.strip()
        while text.endswith(";"):
            text = text[:-1].rstrip()
        return text


def _map_count(value: Any) -> int:
    """Drill's ``mapCount``: a positive count from a string or number, else 0 (no cap)."""
    if value is None or isinstance(value, bool):
        return 0
    try:
        n = int(str(value).strip())
    except ValueError:
        return 0
    return max(n, 0)


def effective_limit(requested: int, max_rows: int) -> int:
    """Drill's ``applyRowLimit``: the smaller of two positive caps, else whichever is set."""
    if requested > 0 and max_rows > 0:
        return min(requested, max_rows)
    return max(requested, max_rows, 0)


def apply_submission(request: QueryRequest, session: UserSession) -> tuple[int, int]:
    """Apply the request's settings to the session.

    Returns:
        ``attemptedAutoLimit`` (what Drill echoes) and the row cap really applied, which also
        honours an ``exec.query.max_rows`` set by this very request.

    Raises:
        SubmissionFailed: unknown query type, impersonation, a bad option or schema.
    """
    if request.query_type != "SQL":
        raise SubmissionFailed(
            f"Unsupported query type [{request.query_type}]: auger runs SQL queries only"
        )
    max_rows = _max_rows(session)
    if request.user_name:
        raise SubmissionFailed("User impersonation is not enabled")
    try:
        for name, value in request.options.items():
            session.options.set(str(name), value)
        if request.default_schema:
            session.use_schema(request.default_schema)
    except UserError as exc:
        raise SubmissionFailed(exc.summary) from exc
    if not request.statement():
        raise SubmissionFailed("The query is empty")
    attempted = effective_limit(request.auto_limit, max_rows)
    return attempted, effective_limit(attempted, _max_rows(session))


def _max_rows(session: UserSession) -> int:
    try:
        return max(int(session.options.get("exec.query.max_rows")), 0)
    except (UserError, TypeError, ValueError):
        return 0
