"""auger's SQL dialect: sqlglot's Drill dialect with the fixes Drill's own functions need.

sqlglot's Drill parser reads ``TO_TIMESTAMP(s, fmt)``'s format as a time zone and drops it; here
both ``TO_TIMESTAMP`` and ``TO_DATE`` keep their format verbatim: Drill's Joda patterns and
Spark's ``DateTimeFormatter`` patterns agree on everything tutorials use, and a round trip
through sqlglot's time-format tables would lose zero padding (``dd`` → ``d``).
"""

from __future__ import annotations

from typing import Any

from sqlglot import exp
from sqlglot.dialects.drill import Drill
from sqlglot.errors import ParseError
from sqlglot.tokens import TokenType

__all__ = ["AugerDrill"]


def _to_timestamp(args: list[Any], dialect: Any) -> exp.Expression:
    if len(args) == 2:
        # Drill's TIMESTAMP has no time zone: Spark's TIMESTAMP_NTZ
        return exp.Anonymous(this="TO_TIMESTAMP_NTZ", expressions=args)
    return exp.UnixToTime(this=args[0])


def _to_date(args: list[Any], dialect: Any) -> exp.Expression:
    if len(args) == 2:
        return exp.Anonymous(this="TO_DATE", expressions=args)
    return exp.TsOrDsToDate(this=args[0])


class AugerDrill(Drill):
    """Drill's SQL as auger reads it (registered with sqlglot as dialect ``augerdrill``)."""

    class Parser(Drill.Parser):  # type: ignore[valid-type,misc]
        FUNCTIONS = {  # noqa: RUF012 - sqlglot's own class-level table
            **Drill.Parser.FUNCTIONS,
            "TO_TIMESTAMP": _to_timestamp,
            "TO_DATE": _to_date,
        }

        def raise_error(self, message: str, token: Any = None) -> None:
            """Record whether the error was met past the last token: Drill reports such a
            statement as ending too soon (``Encountered "<EOF>"``), not at its last word."""

            # sqlglot marks "no token" with a token of type SENTINEL rather than None
            def absent(tok: Any) -> bool:
                return tok is None or getattr(tok, "token_type", None) == TokenType.SENTINEL

            at_end = absent(token) and absent(self._curr)
            try:
                super().raise_error(message, token)
            except ParseError as exc:
                if exc.errors:
                    exc.errors[-1]["at_end"] = at_end
                raise
            if self.errors and self.errors[-1].errors:
                self.errors[-1].errors[-1]["at_end"] = at_end
