"""Scan diagnostics: what planning a statement's scans found that the user should hear about.

Drill answers ``SELECT regoin FROM dfs.data.sales`` with a column of NULLs (blanks for text)
and says nothing, so a typo looks like missing data. auger answers the same rows and adds a
message naming the column, how many files lacked it, and a close name the files do have:

    Column [regoin] was not found in any of the 3 files of dfs.data.sales; did you mean [region]?

Messages are collected per statement: :func:`collecting` opens a collector around one statement
and :func:`note` adds to it (nothing is collected outside a statement, e.g. when a result's
DataFrame is re-planned at fetch time). They reach the user as the statement result's
``warnings``: PEP 249's ``Cursor.messages`` in the DB-API, dimmed lines after the results in the
shell, and the query profile over REST. A clean query has none.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ["collecting", "column_not_found", "note"]

_notes: ContextVar[list[str] | None] = ContextVar("auger_scan_notes", default=None)


@contextmanager
def collecting() -> Iterator[list[str]]:
    """Collect the messages of one statement into the yielded list (nested statements, such
    as a view's query, add to the outermost one)."""
    outer = _notes.get()
    if outer is not None:
        yield outer
        return
    notes: list[str] = []
    token = _notes.set(notes)
    try:
        yield notes
    finally:
        _notes.reset(token)


def note(text: str) -> None:
    """Add one message to the current statement's (once; outside a statement, nothing)."""
    notes = _notes.get()
    if notes is not None and text not in notes:
        notes.append(text)


def column_not_found(table: str, column: str, files: int, known: Iterable[str]) -> None:
    """Note a column the query names that no file of ``table`` has (its values are NULLs).

    Args:
        table: the table as the user wrote it (``dfs.data.sales``).
        column: the column as the query spells it.
        files: how many files the table's schema was learned from.
        known: the columns the files do have, for a "did you mean".
    """
    if files <= 0:
        return  # an empty directory has no columns at all: nothing is misspelt
    where = "the file" if files == 1 else f"any of the {files} files"
    text = f"Column [{column}] was not found in {where} of {table}"
    spelled = {name.lower(): name for name in known}
    close = difflib.get_close_matches(column.lower(), list(spelled), n=1, cutoff=0.75)
    if close:
        text += f"; did you mean [{spelled[close[0]]}]?"
    note(text)
