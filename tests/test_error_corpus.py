"""Broken queries get Drill's error kind and words, and nothing of the machinery.

``tests/data/broken_queries.jsonl`` holds one broken statement per line with the error kind
Drill gives it and a fragment of Drill's message. Each is sent through the DB-API; its
message must start with ``<KIND> ERROR:``, hold the fragment, and hold no text of sqlglot,
of Spark (error conditions, SQLSTATEs, advice about its settings or ``try_`` functions,
positions in the SQL auger gave Spark) or of Python and Java (tracebacks, class names).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

import auger
from auger.errors import ErrorKind
from auger.sql.frontend.parser import parse_statement

CORPUS = Path(__file__).parent / "data" / "broken_queries.jsonl"
ENTRIES: list[dict[str, str]] = [
    json.loads(line) for line in CORPUS.read_text().splitlines() if line.strip()
]

# Text that belongs to the machinery, never to a message for a user.
MACHINERY = [
    re.compile(p)
    for p in (
        r"sqlglot",
        r"<class ",
        r"Required keyword",
        r"\[[A-Z][A-Z_]{3,}(\.[A-Z_]+)?\]",  # a Spark error condition
        r"SQLSTATE",
        r"spark\.sql\.",
        r"\btry_\w+",
        r"Spark condition",
        r"search path",
        r"spark_catalog",
        r"\bpos \d+",
        r"Traceback",
        r"File \".*\.py\"",
        r"\bjava\.",
        r"\borg\.apache\.",
        r"[Pp]y4[Jj]",
        r"__auger",
    )
]


def machinery_in(text: str) -> list[str]:
    return [m.group(0) for p in MACHINERY if (m := p.search(text))]


def test_corpus_is_large_and_covers_every_kind() -> None:
    assert len(ENTRIES) >= 50
    kinds = {e["kind"] for e in ENTRIES}
    assert {"PARSE", "VALIDATION", "FUNCTION", "SYSTEM"} <= kinds
    for entry in ENTRIES:
        ErrorKind(entry["kind"])  # every kind is one of Drill's
        assert entry["fragment"].strip()


@pytest.mark.parametrize(
    "entry", ENTRIES, ids=[f"{n:02d}-{e['sql'][:40]}" for n, e in enumerate(ENTRIES)]
)
def test_broken_query_answers_in_drills_words(conn: Any, entry: dict[str, str]) -> None:
    cur = conn.cursor()
    with pytest.raises(auger.Error) as info:
        cur.execute(entry["sql"])
        cur.fetchall()
    text = str(info.value)
    assert text.startswith(f"{entry['kind']} ERROR: "), text
    assert entry["fragment"] in text, text
    assert machinery_in(text) == [], text


def test_parse_error_puts_a_caret_under_the_spot() -> None:
    with pytest.raises(auger.errors.UserError) as info:
        parse_statement("SELECT *\nFROM t\nWHERE a = 1)")
    err = info.value
    assert err.message == 'Encountered ")" at line 3, column 12.'
    assert err.context == ["SQL Query: SELECT *\nFROM t\nWHERE a = 1)\n           ^"]


def test_parse_error_caret_on_the_first_line_is_shifted_past_the_label() -> None:
    with pytest.raises(auger.errors.UserError) as info:
        parse_statement("SELEC * FROM t")
    assert str(info.value) == (
        'PARSE ERROR: Encountered "SELEC" at line 1, column 1.\n\n'
        "SQL Query: SELEC * FROM t\n"
        "           ^"
    )


def test_machinery_patterns_catch_what_users_saw_before() -> None:
    # the texts of the report this corpus answers, each caught by the check above
    before = [
        "Required keyword: 'expression' missing for <class 'sqlglot.expressions.core.Mul'>",
        "[PARSE_SYNTAX_ERROR] Syntax error at or near end of input. (line 1, pos 78)",
        "Cannot resolve routine `NOSUCHFN` on search path [`system`.`builtin`]",
        'If necessary set "spark.sql.ansi.enabled" to "false" to bypass this error.',
        "[UNRESOLVED_ROUTINE] Cannot resolve routine `SQLTYPEOF`; line 1 pos 896",
    ]
    for text in before:
        assert machinery_in(text), text
