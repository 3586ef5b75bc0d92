"""The interactive ``auger sql`` shell, in the manner of Drill's sqlline and DuckDB's CLI.

- prompt_toolkit line editing, history kept in ``~/.auger_history`` (``$AUGER_HISTORY``);
- a statement may span lines and runs when a line ends with ``;`` outside quotes and comments;
- a line starting with ``.`` is one of DuckDB's dot commands (``.tables``, ``.mode csv``...)
  and runs at the end of the line, as a ``!`` command (sqlline's) does;
- Tab completes keywords, commands, schemas, tables (files of the default schema) and
  the columns of the tables the statement reads;
- results print as table, vertical, csv, tsv, json, ndjson or markdown (``.mode csv``),
  followed by ``N rows selected (1.234 seconds)``; an EXPLAIN's plan prints as its lines;
- ``.files`` lists the files of a workspace, and ``.tables`` the files of ``cp`` and of the
  default schema beside every schema's tables and views;
- table and vertical results show their first 40 rows (``.maxrows``) and say how many more
  there are; on a terminal a table too wide for it has its widest columns cut (with ``…``) or,
  when even that cannot fit, prints one value per line, unless the user chose the format; output
  taller or wider than the terminal goes through a pager (``$AUGER_PAGER``, ``$PAGER`` or
  ``less -FRSX``);
- while Spark works a progress line shows stages and tasks, and Ctrl-C cancels the statement
  (not the shell: the session and its temporary tables stay);
- ``!quit``, Ctrl-D at an empty prompt, or end of input close the session and leave.
"""

from __future__ import annotations

import difflib
import os
import re
import shlex
import signal
import subprocess
import sys
import threading
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from auger.cli.output import (
    OUTPUT_FORMATS,
    fit_table,
    plan_text,
    render,
    render_warnings,
    rows_selected,
    rows_shown,
)
from auger.cli.runner import Cancelled, run_statement, start_engine
from auger.dbapi import Error
from auger.errors import UserError

__all__ = ["MODES", "Settings", "Shell", "history_path", "run_shell", "statement_complete"]

_SCHEMA_CHANGED = re.compile(r"^Default schema changed to \[(.+)\]$")
_CHANGES_CATALOG = re.compile(r"^\s*(USE|CREATE|DROP|ALTER|REFRESH)\b", re.I)

HELP = """\
Statements end with ';' and may span several lines; a command (.name or !name) is one line and
needs no ';'. Tab completes names; Ctrl-C cancels the running statement (or clears the line);
Ctrl-D, .quit or !quit leaves.

.help, !help             this text
.quit, .exit, !quit      close the session and leave
.tables [PATTERN]        the tables and views of every schema, and the files of cp and of
                         the default schema (names LIKE PATTERN)
.files [SCHEMA[.`DIR`]]  the files of a workspace or a directory in it (SHOW FILES);
                         default: the default schema, else cp
.schema [TABLE]          the columns of a table (of every listed table without one)
.mode [FORMAT]           show or set the output format: table, vertical (or line), csv,
                         tsv (or tabs), json (one array), ndjson (one object a line) or
                         markdown; an EXPLAIN's plan prints as its lines in table and vertical
.maxrows [N]             show or set how many rows a table shows (0: all; default 40)
.timer on|off            print 'N rows selected (t seconds)' after each statement
.pager on|off            page output taller or wider than the terminal ($AUGER_PAGER, $PAGER)
!tables                  as .tables
!files [SCHEMA[.`DIR`]]  as .files
!schemas                 list the schemas (SHOW SCHEMAS)
!columns TABLE           the columns of a table (also !describe TABLE)
!set                     show the settings
!set outputformat FMT    as .mode FMT (also !outputformat FMT)
!set showtime BOOL       as .timer
!set maxrows N           as .maxrows N
!set progress BOOL       show Spark's stages and their tasks done while a statement runs
                         ([Stage 3: =====>     5/8]), on the shell's server or embedded
!set pager BOOL          as .pager
!run FILE                run the statements of a file
!history                 the statements typed so far
"""

# DuckDB's names for the formats, beside sqlline's (the keys of ``OUTPUT_FORMATS``).
MODES: dict[str, str] = {
    **{name: name for name in OUTPUT_FORMATS},
    "box": "table",
    "duckbox": "table",
    "line": "vertical",
    "tabs": "tsv",
    "jsonlines": "ndjson",
}

# Formats for reading on screen: capped at ``maxrows`` and fitted to the terminal. The others
# are data for another program and always hold every row, as in DuckDB.
_DISPLAY_FORMATS = ("table", "vertical", "markdown")


def history_path() -> Path:
    """Where history is kept: ``$AUGER_HISTORY`` or ``~/.auger_history``."""
    return Path(os.environ.get("AUGER_HISTORY") or Path.home() / ".auger_history")


def statement_complete(text: str) -> bool:
    """True when the buffer should run: a ``!`` or ``.`` command (one line, no ``;``), or SQL
    ending in a top-level ``;``."""
    stripped = text.strip()
    if not stripped or stripped.startswith(("!", ".")):
        return True
    # deferred: loads sqlglot (heavy)
    from sqlglot.errors import TokenError

    # deferred: loads sqlglot (heavy)
    from sqlglot.tokens import TokenType

    # deferred: loads sqlglot (heavy)
    from auger.sql.frontend.dialect import AugerDrill

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


def _parse_count(text: str) -> int:
    try:
        return max(int(text), 0)
    except ValueError:
        raise ValueError(f"Expected a number of rows (0 for all), not {text!r}") from None


@dataclass
class Settings:
    """The shell's switches; ``!set`` lists and sets them by these names.

    ``format_chosen`` records that the user picked the output format (``--output``, ``.mode``,
    ``!set outputformat``): the shell then prints that format as it is, never fitting a wide
    table to the terminal.
    """

    outputformat: str = "table"
    showtime: bool = True
    progress: bool = True
    maxrows: int = 40
    pager: bool = True
    format_chosen: bool = field(default=False, repr=False)

    def names(self) -> list[str]:
        return [name for name in vars(self) if name != "format_chosen"]


class _Capped:
    """A cursor whose ``fetchall`` stops after ``limit + 1`` rows.

    ``run_statement`` fetches a whole result; through this, the shell fetches one row past its
    cap, enough to know that more exist, and never pulls a large result in only to show its
    first rows. Everything else goes to the cursor itself.
    """

    def __init__(self, cursor: Any, limit: int) -> None:
        self._cursor = cursor
        self._limit = limit

    def fetchall(self) -> list[tuple[Any, ...]]:
        return list(self._cursor.fetchmany(self._limit + 1))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._cursor, name)


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
        # deferred: loads prompt_toolkit (heavy)
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
        # The terminal's (columns, lines), or None when ``out`` is no terminal; a test sets it.
        self.terminal_size: Callable[[], tuple[int, int] | None] = lambda: _terminal_size(out)
        self.dot_commands: dict[str, Callable[[list[str]], object]] = {
            "quit": self._quit,
            "exit": self._quit,
            "help": self._help,
            "tables": self._tables,
            "files": self._files,
            "schema": self._schema,
            "mode": self._mode,
            "maxrows": self._maxrows,
            "timer": lambda a: self._switch("showtime", a, ".timer"),
            "pager": lambda a: self._switch("pager", a, ".pager"),
        }
        self.commands: dict[str, Callable[[list[str]], object]] = {
            "quit": self._quit,
            "exit": self._quit,
            "q": self._quit,
            "help": self._help,
            "?": self._help,
            "tables": self._tables,
            "files": self._files,
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
        """A metadata query for completion, on its own cursor; a server keeps no profile of it."""
        cur = self.conn.cursor()
        if hasattr(cur, "internal"):  # a remote cursor: mark the look-up as the shell's own
            cur.internal = True
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
        if stripped.startswith("."):
            return self.command(stripped[1:], dot=True)
        # deferred: loads sqlglot (heavy)
        from auger.sql.frontend.parser import split_statements

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

        progress = self.err if (self.interactive_err and self.settings.progress) else None
        cap = self._cap()
        if hasattr(self.cursor, "max_rows"):  # a server's cursor: the server stops at the cap
            self.cursor.max_rows = None if cap is None else cap + 1
        cursor = self.cursor if cap is None else _Capped(self.cursor, cap)
        try:
            outcome = run_statement(cursor, sql, progress)
        except Cancelled:
            self._print("Query cancelled.", self.err)
            # The cancelled statement may still be winding down on its thread: use a new cursor.
            self.cursor = self.conn.cursor()
            return False
        except Error as exc:
            self._print(str(exc), self.err)
            if self.verbose:
                traceback.print_exc(file=self.err)
            return False
        rows, total = outcome.rows, None
        if cap is not None and len(rows) > cap:
            rows = rows[:cap]
            count = getattr(self.cursor, "rowcount", -1)
            total = count if isinstance(count, int) and count > cap else None
            seconds = outcome.seconds if self.settings.showtime else None
            footer = rows_shown(cap, total, seconds)
        elif self.settings.showtime:
            footer = rows_selected(len(rows), outcome.seconds)
        else:
            footer = ""
        self._show(outcome.names, rows, footer, sql)
        self._print(render_warnings(outcome.warnings, self.interactive_err), self.err)
        self._after(sql, outcome.names, outcome.rows)
        return True

    def _cap(self) -> int | None:
        """How many rows the current format shows, or None for all of them."""
        if self.settings.maxrows > 0 and self.settings.outputformat in _DISPLAY_FORMATS:
            return self.settings.maxrows
        return None

    def _show(
        self, names: list[str], rows: list[tuple[Any, ...]], footer: str, sql: str = ""
    ) -> None:
        """Print a result and its footer, fitted to the terminal and paged when it is long."""
        mode = self.settings.outputformat
        size = self.terminal_size()
        plan = plan_text(sql, names, rows) if mode in ("table", "vertical") else None
        if plan is not None:
            text = plan
        elif size is not None and mode == "table" and not self.settings.format_chosen and names:
            ellipsis = "…" if "utf" in (getattr(self.out, "encoding", "") or "").lower() else "~"
            fitted = fit_table(names, rows, size[0], ellipsis)
            # too many columns for the terminal even when cut: one value per line
            text = render("vertical", names, rows) if fitted is None else fitted
        else:
            text = render(mode, names, rows)
        output = "\n".join(part for part in (text, footer) if part)
        if not output:
            return
        # a plan's long lines wrap on the terminal, to be read whole: only its height pages it
        paged = size is not None and self.settings.pager and _too_big(output, size, plan is None)
        if not (paged and _page(output)):
            self._print(output)

    def _after(self, sql: str, names: list[str], rows: list[tuple[Any, ...]]) -> None:
        """Keep completion in step: a new default schema, new tables, columns just seen."""
        if names == ["ok", "summary"] and rows:
            m = _SCHEMA_CHANGED.match(str(rows[0][1]))
            if m:
                self.cache.default_schema = m.group(1)
        if _CHANGES_CATALOG.match(sql):
            self.cache.invalidate()

    # ----- ! commands
    def command(self, line: str, dot: bool = False) -> bool:
        """Run a ``!`` command (sqlline's), or with ``dot`` a ``.`` command (DuckDB's)."""
        mark, table = (".", self.dot_commands) if dot else ("!", self.commands)
        try:
            words = shlex.split(line)
        except ValueError:
            words = line.split()
        if not words:
            self._print(f"Unknown command: {mark}; try {mark}help", self.err)
            return False
        name, args = words[0].lower(), words[1:]
        handler = table.get(name)
        if handler is None:
            close = difflib.get_close_matches(name, table, n=1)
            hint = f"; did you mean {mark}{close[0]}?" if close else f"; try {mark}help"
            self._print(f"Unknown command: {mark}{name}{hint}", self.err)
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
        """sqlline's !tables and DuckDB's .tables: every table and view, from
        INFORMATION_SCHEMA when it has them, then the files of ``cp`` and of the default schema
        (what a new user queries first; INFORMATION_SCHEMA does not list files, as in Drill);
        ``.tables PATTERN`` keeps names LIKE the pattern."""

        if len(args) > 1:
            raise ValueError("Usage: .tables [PATTERN]  (a LIKE pattern: .tables emp%)")
        where = f" WHERE TABLE_NAME LIKE {_quote(args[0])}" if args else ""
        listing = (
            "SELECT TABLE_SCHEMA, TABLE_NAME, TABLE_TYPE FROM INFORMATION_SCHEMA.`TABLES`"
            f"{where} ORDER BY TABLE_SCHEMA, TABLE_NAME"
        )
        try:
            names, rows = self._lookup(listing)
        except Error:
            self.run_sql("SHOW TABLES" + (f" LIKE {_quote(args[0])}" if args else ""))
            return
        like = _like(args[0]) if args else None
        schemas = ("cp", self.cache.default_schema) if len(names) == 3 else ()
        for schema in dict.fromkeys(s for s in schemas if s):
            try:  # listed afresh: a file just written shows at once
                _, files = self._lookup(f"SHOW FILES IN {schema}")
            except Error:  # a schema that holds no files (sys, INFORMATION_SCHEMA)
                continue
            for name, is_dir, *_ in files:
                if like is None or like.fullmatch(str(name)):
                    rows.append((schema, str(name), "DIRECTORY" if is_dir else "FILE"))
        footer = rows_selected(len(rows), 0.0).split(" (")[0] if self.settings.showtime else ""
        self._show(names, rows, footer)

    def _files(self, args: list[str]) -> None:
        """``.files [SCHEMA[.`DIR`]]``: the files of a workspace or of a directory in it, as
        ``SHOW FILES IN`` lists them; by default of the default schema, else of ``cp``."""
        if len(args) > 1:
            raise ValueError("Usage: .files [SCHEMA[.`DIR`]]  (.files cp, .files dfs.`/data`)")
        target = args[0] if args else self.cache.default_schema or "cp"
        self.run_sql(f"SHOW FILES IN {target}")

    def _schema(self, args: list[str]) -> None:
        """DuckDB's .schema: the columns of one table (DESCRIBE), or of every listed table."""
        if args:
            self.run_sql(f"DESCRIBE {' '.join(args)}")
            return
        self.run_sql(
            "SELECT TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME, DATA_TYPE "
            "FROM INFORMATION_SCHEMA.`COLUMNS` ORDER BY TABLE_SCHEMA, TABLE_NAME, ORDINAL_POSITION"
        )

    def _mode(self, args: list[str]) -> None:
        if not args:
            self._print(f"current output mode: {self.settings.outputformat}")
            return
        if len(args) != 1:
            raise ValueError("Usage: .mode FORMAT")
        self._set(["outputformat", args[0]])

    def _maxrows(self, args: list[str]) -> None:
        if not args:
            self._print(f"maxrows: {self.settings.maxrows} (0: all)")
            return
        if len(args) != 1:
            raise ValueError("Usage: .maxrows N  (0 shows every row)")
        self.settings.maxrows = _parse_count(args[0])

    def _switch(self, key: str, args: list[str], usage: str) -> None:
        if len(args) != 1:
            raise ValueError(f"Usage: {usage} on|off")
        setattr(self.settings, key, _parse_bool(args[0]))

    def _columns(self, args: list[str]) -> None:
        if not args:
            raise ValueError("Usage: !columns TABLE")
        self.run_sql(f"DESCRIBE {' '.join(args)}")

    def _set(self, args: list[str]) -> None:
        keys = self.settings.names()
        if not args:
            for key in keys:
                value = getattr(self.settings, key)
                shown = str(value).lower() if isinstance(value, bool) else value
                self._print(f"{key:<14}{shown}")
            return
        aliases = {"showelapsedtime": "showtime", "rowlimit": "maxrows"}
        key = aliases.get(args[0].lower(), args[0].lower())
        if len(args) != 2 or key not in keys:
            raise ValueError(f"Usage: !set {{{'|'.join(keys)}}} VALUE")
        value = args[1]
        if key == "outputformat":
            mode = MODES.get(value.lower())
            if mode is None:
                raise ValueError(
                    f"Unknown output format {value!r}; use one of {', '.join(OUTPUT_FORMATS)}"
                    " (or DuckDB's box, duckbox, line, tabs, jsonlines)"
                )
            self.settings.outputformat = mode
            self.settings.format_chosen = True
        elif key == "maxrows":
            self.settings.maxrows = _parse_count(value)
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


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _like(pattern: str) -> re.Pattern[str]:
    """A SQL LIKE pattern (``%`` any run, ``_`` one character) as a regular expression."""
    parts = ("." if c == "_" else ".*" if c == "%" else re.escape(c) for c in pattern)
    return re.compile("".join(parts), re.S)


def _terminal_size(stream: TextIO) -> tuple[int, int] | None:
    """(columns, lines) of the terminal ``stream`` writes to, or None when it is not one."""
    try:
        if not stream.isatty():
            return None
        size = os.get_terminal_size(stream.fileno())
    except (AttributeError, OSError, ValueError):
        return None
    return (size.columns, size.lines) if size.columns > 0 and size.lines > 0 else None


def _too_big(text: str, size: tuple[int, int], width_counts: bool = True) -> bool:
    """True when ``text`` will not fit the terminal: more lines than it has (less one for the
    prompt that follows), or, if ``width_counts``, a line wider than it."""
    lines = text.split("\n")
    if not width_counts:  # long lines wrap: count the screen lines they take
        return sum(max(1, -(-len(line) // size[0])) for line in lines) >= size[1]
    return len(lines) >= size[1] or any(len(line) > size[0] for line in lines)


def pager_command() -> str:
    """The pager: ``$AUGER_PAGER``, ``$PAGER``, or ``less -FRSX`` (quit at once if the text fits
    one screen, keep ANSI colours, scroll long lines sideways rather than folding them, leave
    the text on screen after quitting)."""
    return os.environ.get("AUGER_PAGER") or os.environ.get("PAGER") or "less -FRSX"


def _page(text: str) -> bool:
    """Show ``text`` through the pager; False if no pager could run (the caller prints it)."""

    command = pager_command()
    if command.strip().lower() in ("", "cat", "none"):
        return False
    on_main = threading.current_thread() is threading.main_thread()
    # Ctrl-C belongs to the pager while it runs (less uses it to stop a search).
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN) if on_main else None
    try:
        sys.stdout.flush()
        encoding = getattr(sys.stdout, "encoding", None) or "utf-8"
        done = subprocess.run(
            command, shell=True, input=text + "\n", encoding=encoding, errors="replace", check=False
        )
    except OSError:
        return False
    finally:
        if on_main:
            signal.signal(signal.SIGINT, previous)
    return done.returncode != 127  # 127: the shell found no such command


def _prompt_session(shell: Shell) -> Any:
    # deferred: loads prompt_toolkit (heavy)
    from prompt_toolkit import PromptSession

    # deferred: loads prompt_toolkit (heavy)
    from prompt_toolkit.completion import ThreadedCompleter

    # deferred: loads prompt_toolkit (heavy)
    from prompt_toolkit.history import FileHistory

    # deferred: loads prompt_toolkit (heavy)
    from prompt_toolkit.key_binding import KeyBindings

    # deferred: loads prompt_toolkit (heavy)
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
        # deferred: loads prompt_toolkit (heavy)
        from prompt_toolkit.history import InMemoryHistory

        history = InMemoryHistory()
    commands = ["!" + c for c in shell.commands] + ["." + c for c in shell.dot_commands]
    completer = SqlCompleter(shell.cache, commands)
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

    err = _terminal_err()
    shell = Shell(conn, sys.stdout, err, settings, interactive_err=err.isatty(), verbose=verbose)
    if not verbose:
        start_engine(conn, background=True)
    session = _prompt_session(shell)
    shell._print("auger shell: statements end with ';', .help for commands, Ctrl-D to leave.")
    while not shell.done:
        try:
            text = session.prompt(shell.prompt, prompt_continuation=_continuation)
        except KeyboardInterrupt:
            continue
        except EOFError:
            break
        shell.handle(text)
    return 0
