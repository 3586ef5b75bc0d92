"""The interactive ``auger sql`` shell, in the manner of Drill's sqlline and DuckDB's CLI.

- prompt_toolkit line editing, history kept in ``~/.auger_history`` (``$AUGER_HISTORY``);
- a statement may span lines and runs when a line ends with ``;`` outside quotes and comments;
- Tab completes keywords, ``!`` commands, schemas, tables (files of the default schema) and
  the columns of the tables the statement reads;
- results print as table, vertical, csv, tsv or json (``!set outputformat csv``), followed by
  ``N rows selected (1.234 seconds)``;
- while Spark works a progress line shows stages and tasks, and Ctrl-C cancels the statement
  (not the shell: the session and its temporary tables stay);
- ``!quit``, Ctrl-D at an empty prompt, or end of input close the session and leave.
"""

from __future__ import annotations

import os
import re
import shlex
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from auger.cli.output import OUTPUT_FORMATS, render, render_warnings, rows_selected
from auger.cli.runner import Cancelled, run_statement

__all__ = ["Shell", "history_path", "run_shell", "statement_complete"]

_SCHEMA_CHANGED = re.compile(r"^Default schema changed to \[(.+)\]$")
_CHANGES_CATALOG = re.compile(r"^\s*(USE|CREATE|DROP|ALTER|REFRESH)\b", re.I)

HELP = """\
Statements end with ';' and may span several lines. Tab completes names; Ctrl-C cancels the
running statement (or clears the line); Ctrl-D or !quit leaves.

!help                    this text
!quit, !exit, !q         close the session and leave
!tables                  list the tables and views of every schema
!schemas                 list the schemas (SHOW SCHEMAS)
!columns TABLE           the columns of a table (also !describe TABLE)
!set                     show the settings
!set outputformat FMT    table, vertical, csv, tsv or json (also !outputformat FMT)
!set showtime BOOL       print 'N rows selected (t seconds)' after each statement
!set progress BOOL       show Spark stage and task progress while a statement runs
!run FILE                run the statements of a file
!history                 the statements typed so far
"""


def history_path() -> Path:
    """Where history is kept: ``$AUGER_HISTORY`` or ``~/.auger_history``."""
    return Path(os.environ.get("AUGER_HISTORY") or Path.home() / ".auger_history")


def statement_complete(text: str) -> bool:
    """True when the buffer should run: a ``!`` command, or SQL ending in a top-level ``;``."""
    stripped = text.strip()
    if not stripped or stripped.startswith("!"):
        return True
    from sqlglot.errors import TokenError
    from sqlglot.tokens import TokenType

    from auger.sql.dialect import AugerDrill

    try:
        tokens = AugerDrill().tokenize(text)
    except TokenError:
        return False  # an open quote or comment: keep reading
    if not tokens or tokens[-1].token_type != TokenType.SEMICOLON:
        return False
    # A trailing "-- comment" after the ';' hides inside the token; a ';' inside it does not count.
    tail = text[tokens[-1].end + 1 :]
    return "/*" not in tail or "*/" in tail


def _parse_bool(text: str) -> bool:
    if text.lower() in ("true", "on", "yes", "1"):
        return True
    if text.lower() in ("false", "off", "no", "0"):
        return False
    raise ValueError(f"Expected true or false, not {text!r}")


@dataclass
class Settings:
    outputformat: str = "table"
    showtime: bool = True
    progress: bool = True


class Shell:
    """The shell's state and commands, separate from the terminal so that it can be tested.

    Args:
        conn: a DB-API connection (embedded) or a remote connection.
        out, err: where results and errors go.
        settings: output format and switches.
        interactive_err: True when ``err`` is a terminal (progress lines are shown).
    """

    def __init__(
        self,
        conn: Any,
        out: TextIO,
        err: TextIO,
        settings: Settings | None = None,
        interactive_err: bool = False,
        verbose: bool = False,
    ) -> None:
        from auger.cli.completion import MetadataCache

        self.conn = conn
        self.out = out
        self.err = err
        self.settings = settings or Settings()
        self.interactive_err = interactive_err
        self.verbose = verbose
        self.cursor = conn.cursor()
        self.cache = MetadataCache(self._lookup)
        self.cache.default_schema = getattr(getattr(conn, "session", None), "default_schema", None)
        self.typed: list[str] = []
        self.done = False
        self.commands: dict[str, Callable[[list[str]], object]] = {
            "quit": self._quit,
            "exit": self._quit,
            "q": self._quit,
            "help": self._help,
            "?": self._help,
            "tables": self._tables,
            "schemas": lambda a: self.run_sql("SHOW SCHEMAS"),
            "columns": self._columns,
            "describe": self._columns,
            "set": self._set,
            "outputformat": lambda a: self._set(["outputformat", *a]),
            "run": self._run_file,
            "history": self._history,
        }

    # ----- helpers
    def _print(self, text: str, stream: TextIO | None = None) -> None:
        target = stream or self.out
        if text:
            target.write(text + "\n")
        target.flush()

    def _lookup(self, sql: str) -> tuple[list[str], list[tuple[Any, ...]]]:
        """A metadata query for completion, on its own cursor."""
        cur = self.conn.cursor()
        try:
            cur.execute(sql)
            names = [d[0] for d in cur.description or []]
            return names, cur.fetchall()
        finally:
            cur.close()

    @property
    def prompt(self) -> str:
        schema = self.cache.default_schema
        return f"auger ({schema})> " if schema else "auger> "

    # ----- running input
    def handle(self, text: str) -> bool:
        """Run one submitted buffer (statements or a ``!`` command); False if anything failed."""
        stripped = text.strip()
        if not stripped:
            return True
        self.typed.append(stripped)
        if stripped.startswith("!"):
            return self.command(stripped[1:])
        from auger.errors import UserError
        from auger.sql.parser import split_statements

        try:
            statements = split_statements(text)
        except UserError as exc:
            self._print(str(exc), self.err)
            return False
        ok = True
        for sql in statements:
            ok = self.run_sql(sql) and ok
        return ok

    def run_sql(self, sql: str) -> bool:
        """Run one statement and print its result; False if it failed or was cancelled."""
        from auger.dbapi import Error

        progress = self.err if (self.interactive_err and self.settings.progress) else None
        try:
            outcome = run_statement(self.cursor, sql, progress)
        except Cancelled:
            self._print("Query cancelled.", self.err)
            # The cancelled statement may still be winding down on its thread: use a new cursor.
            self.cursor = self.conn.cursor()
            return False
        except Error as exc:
            self._print(str(exc), self.err)
            if self.verbose:
                import traceback

                traceback.print_exc(file=self.err)
            return False
        self._print(render(self.settings.outputformat, outcome.names, outcome.rows))
        if self.settings.showtime:
            self._print(rows_selected(len(outcome.rows), outcome.seconds))
        self._print(render_warnings(outcome.warnings, self.interactive_err), self.err)
        self._after(sql, outcome.names, outcome.rows)
        return True

    def _after(self, sql: str, names: list[str], rows: list[tuple[Any, ...]]) -> None:
        """Keep completion in step: a new default schema, new tables, columns just seen."""
        if names == ["ok", "summary"] and rows:
            m = _SCHEMA_CHANGED.match(str(rows[0][1]))
            if m:
                self.cache.default_schema = m.group(1)
        if _CHANGES_CATALOG.match(sql):
            self.cache.invalidate()

    # ----- ! commands
    def command(self, line: str) -> bool:
        try:
            words = shlex.split(line)
        except ValueError:
            words = line.split()
        if not words:
            self._print("Unknown command: !", self.err)
            return False
        name, args = words[0].lower(), words[1:]
        handler = self.commands.get(name)
        if handler is None:
            import difflib

            close = difflib.get_close_matches(name, self.commands, n=1)
            hint = f"; did you mean !{close[0]}?" if close else "; try !help"
            self._print(f"Unknown command: !{name}{hint}", self.err)
            return False
        try:
            handler(args)
        except ValueError as exc:
            self._print(str(exc), self.err)
            return False
        return True

    def _quit(self, args: list[str]) -> None:
        self.done = True

    def _help(self, args: list[str]) -> None:
        self._print(HELP.rstrip())

    def _tables(self, args: list[str]) -> None:
        """sqlline's !tables: every table and view, from INFORMATION_SCHEMA when it has them."""
        from auger.dbapi import Error

        listing = (
            "SELECT TABLE_SCHEMA, TABLE_NAME, TABLE_TYPE FROM INFORMATION_SCHEMA.`TABLES` "
            "ORDER BY TABLE_SCHEMA, TABLE_NAME"
        )
        try:
            names, rows = self._lookup(listing)
        except Error:
            self.run_sql("SHOW TABLES")
            return
        self._print(render(self.settings.outputformat, names, rows))
        if self.settings.showtime:
            self._print(rows_selected(len(rows), 0.0).split(" (")[0])

    def _columns(self, args: list[str]) -> None:
        if not args:
            raise ValueError("Usage: !columns TABLE")
        self.run_sql(f"DESCRIBE {' '.join(args)}")

    def _set(self, args: list[str]) -> None:
        if not args:
            for key, value in vars(self.settings).items():
                shown = str(value).lower() if isinstance(value, bool) else value
                self._print(f"{key:<14}{shown}")
            return
        key = args[0].lower()
        if key == "showelapsedtime":
            key = "showtime"
        if len(args) != 2 or key not in vars(self.settings):
            raise ValueError(f"Usage: !set {{{'|'.join(vars(self.settings))}}} VALUE")
        value = args[1]
        if key == "outputformat":
            if value.lower() not in OUTPUT_FORMATS:
                raise ValueError(
                    f"Unknown output format {value!r}; use one of {', '.join(OUTPUT_FORMATS)}"
                )
            self.settings.outputformat = value.lower()
        else:
            setattr(self.settings, key, _parse_bool(value))

    def _run_file(self, args: list[str]) -> None:
        if len(args) != 1:
            raise ValueError("Usage: !run FILE")
        try:
            text = Path(args[0]).expanduser().read_text(encoding="utf-8")
        except OSError as exc:
            raise ValueError(f"Cannot read {args[0]}: {exc.strerror}") from None
        self.handle(text)

    def _history(self, args: list[str]) -> None:
        for i, text in enumerate(self.typed[:-1], 1):
            self._print(f"{i:>4}  {text}")


def _prompt_session(shell: Shell) -> Any:
    from prompt_toolkit import PromptSession
    from prompt_toolkit.completion import ThreadedCompleter
    from prompt_toolkit.history import FileHistory
    from prompt_toolkit.key_binding import KeyBindings

    from auger.cli.completion import SqlCompleter

    bindings = KeyBindings()

    @bindings.add("enter")
    def _enter(event: Any) -> None:
        buffer = event.current_buffer
        if buffer.complete_state:  # Enter picks the highlighted completion
            buffer.complete_state = None
            return
        if statement_complete(buffer.text):
            buffer.validate_and_handle()
        else:
            buffer.insert_text("\n")

    path = history_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        history: Any = FileHistory(str(path))
    except OSError:
        from prompt_toolkit.history import InMemoryHistory

        history = InMemoryHistory()
    completer = SqlCompleter(shell.cache, ["!" + c for c in shell.commands])
    return PromptSession(
        history=history,
        completer=ThreadedCompleter(completer),
        complete_while_typing=False,
        multiline=True,
        key_bindings=bindings,
        enable_history_search=True,
    )


def _continuation(width: int, line_number: int, wrap_count: int) -> str:
    if wrap_count:  # a long line wrapped on screen, not a new line of the statement
        return " " * width
    return (". " * width)[: max(width - 2, 0)].ljust(width - 2) + "> "


def _terminal_err() -> TextIO:
    """A stream on the terminal's stderr that outlives ``start_engine`` silencing descriptor 2."""
    try:
        return os.fdopen(os.dup(sys.stderr.fileno()), "w", buffering=1, encoding="utf-8")
    except (OSError, ValueError, AttributeError):
        return sys.stderr


def run_shell(conn: Any, settings: Settings, verbose: bool = False) -> int:
    """Read statements from the terminal until ``!quit`` or Ctrl-D; returns the exit status."""
    from auger.cli.runner import start_engine

    err = _terminal_err()
    shell = Shell(conn, sys.stdout, err, settings, interactive_err=err.isatty(), verbose=verbose)
    if not verbose:
        start_engine(conn, background=True)
    session = _prompt_session(shell)
    shell._print("auger shell: statements end with ';', !help for commands, Ctrl-D to leave.")
    while not shell.done:
        try:
            text = session.prompt(shell.prompt, prompt_continuation=_continuation)
        except KeyboardInterrupt:
            continue
        except EOFError:
            break
        shell.handle(text)
    return 0
