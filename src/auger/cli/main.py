"""``auger`` command line: ``auger sql``, ``auger demo``, ``auger serve``, ``auger stop``.

``auger sql`` and ``auger demo`` run on the local background server of their configuration
(:mod:`auger.cli.local`) unless given ``--connect URL`` (another server) or ``--embedded``
(Spark in this process).

Errors a user causes print as Drill prints them (``VALIDATION ERROR: ...``) and exit with status
1; a traceback appears only with ``--verbose``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable, Sequence
from typing import Any, TextIO

import auger
from auger.errors import UserError
from auger.version import installed_version

__all__ = ["main", "run_statements", "split_script"]

DEMO_QUERIES: tuple[tuple[str, str], ...] = (
    ("Three employees", "SELECT full_name, position_title, salary FROM cp.`employee.json` LIMIT 3"),
    (
        "Head count and payroll by education",
        "SELECT education_level, COUNT(*) AS employees, ROUND(AVG(salary), 2) AS avg_salary "
        "FROM cp.`employee.json` GROUP BY education_level ORDER BY employees DESC",
    ),
    (
        "Nations of each TPC-H region (Parquet join)",
        "SELECT r.r_name, COUNT(*) AS nations FROM cp.`tpch/nation.parquet` n "
        "JOIN cp.`tpch/region.parquet` r ON n.n_regionkey = r.r_regionkey "
        "GROUP BY r.r_name ORDER BY r.r_name",
    ),
    (
        "Implicit columns",
        "SELECT filename, suffix, COUNT(*) AS `rows` FROM cp.`region.json` "
        "GROUP BY filename, suffix",
    ),
    ("Drill's version", "SELECT version FROM sys.version"),
)


def _print(text: str, out: TextIO) -> None:
    out.write(text + "\n")
    out.flush()


def run_statements(
    statements: Iterable[str],
    conn: Any,
    output: str,
    out: TextIO,
    err: TextIO,
    keep_going: bool = False,
    verbose: bool = False,
    timing: bool = True,
) -> int:
    """Run statements one by one, printing results; return the exit status.

    The status is 1 after the first failed statement (or, with ``keep_going``, after all of
    them when any failed, which ends with ``2 of 5 statements failed.``) and 130 when Ctrl-C
    cancelled one. A progress line appears only when ``err`` is a terminal, so pipes and files
    never see escape codes.
    """
    # deferred: keeps start-up light (import auger, the CLI, Spark's workers)
    from auger.cli.output import plan_text, render, render_warnings, rows_selected

    # deferred: keeps start-up light (import auger, the CLI, Spark's workers)
    from auger.cli.runner import Cancelled, run_statement

    # deferred: keeps start-up light (import auger, the CLI, Spark's workers)
    from auger.dbapi import Error

    statements = list(statements)
    failed = 0
    cursor = conn.cursor()
    progress = err if _isatty(err) else None
    for sql in statements:
        try:
            outcome = run_statement(cursor, sql, progress)
        except Cancelled:
            _print("Query cancelled.", err)
            return 130
        except Error as exc:
            _print(str(exc), err)
            if verbose:
                # deferred: keeps start-up light (import auger, the CLI, Spark's workers)
                import traceback

                traceback.print_exc(file=err)
            failed += 1
            if not keep_going:
                return 1
            continue
        plan = plan_text(sql, outcome.names, outcome.rows)
        if plan is not None and output in ("table", "vertical"):
            text = plan
        else:
            text = render(output, outcome.names, outcome.rows)
        if text:
            _print(text, out)
        if timing and output in ("table", "vertical"):
            _print(rows_selected(len(outcome.rows), outcome.seconds), out)
        if outcome.warnings:  # on the error stream: csv and json output stay parseable
            _print(render_warnings(outcome.warnings, _isatty(err)), err)
    if failed:
        noun = "statement" if len(statements) == 1 else "statements"
        _print(f"{failed} of {len(statements)} {noun} failed.", err)
    return 1 if failed else 0


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def _connect(args: argparse.Namespace) -> Any:
    """The connection a command runs on: a server at ``--connect``; with ``--embedded`` an
    engine in this process; otherwise the local background server of the configuration
    (started on first use, see :mod:`auger.cli.local`)."""
    url = getattr(args, "connect", None)
    if url:
        return _connect_remote(url, getattr(args, "user", None), getattr(args, "password", None))
    if not getattr(args, "embedded", False):
        # deferred: keeps start-up light (import auger, the CLI, Spark's workers)
        from auger.cli.local import connect_local

        return connect_local(args.config, getattr(args, "user", None), sys.stderr)

    return auger.connect(config=args.config, user=getattr(args, "user", None))


def _connect_remote(url: str, user: str | None, password: str | None = None) -> Any:
    """A session on a running ``auger serve``.

    When the server has authentication, the user comes from ``--user`` (or is asked for on a
    terminal) and the password from ``--password``, ``$AUGER_PASSWORD`` or a getpass prompt.
    """
    # deferred: keeps start-up light (import auger, the CLI, Spark's workers)
    import os

    # deferred: keeps start-up light (import auger, the CLI, Spark's workers)
    from auger.cli.remote import RemoteConnection, server_has_auth

    if "://" not in url:
        url = "http://" + url
    if not server_has_auth(url):
        return RemoteConnection(url)
    if user is None and sys.stdin.isatty():
        user = input("User: ").strip() or None
    if user is None:
        return RemoteConnection(url)  # the first statement explains that a login is needed
    if password is None:
        password = os.environ.get("AUGER_PASSWORD")
    if password is None:
        # deferred: keeps start-up light (import auger, the CLI, Spark's workers)
        import getpass

        password = getpass.getpass(f"Password for {user}: ")
    return RemoteConnection(url, user=user, password=password)


def split_script(text: str) -> list[str]:
    """The statements of a script, as :func:`auger.sql.frontend.parser.split_statements` splits.

    A script with no ``;`` (but a last one after balanced quotes of one kind) and no comment is one
    statement, found without loading the SQL front end: sqlglot's import would be the largest
    part of a warm ``auger sql -e`` on the local server. Anything else goes through the SQL
    tokenizer.
    """
    body = text.strip()
    quotes = [body.count(q) for q in "'\"`"]
    if body.endswith(";") and sum(1 for n in quotes if n) <= 1 and all(n % 2 == 0 for n in quotes):
        body = body[:-1].rstrip()  # quotes of one kind, balanced: the last ';' ends it
    if ";" not in body and "--" not in body and "/*" not in body:
        return [body] if body else []
    # deferred: loads sqlglot (heavy)
    from auger.sql.frontend.parser import split_statements

    return split_statements(text)


def _read_statements(args: argparse.Namespace) -> list[str] | None:
    """Statements from -e, -f or piped stdin; None means: start the interactive shell."""
    split_statements = split_script
    if args.execute is not None:
        return split_statements(args.execute)
    if args.file is not None:
        path = args.file
        if path == "-":
            return split_statements(sys.stdin.read())
        with open(path, encoding="utf-8") as fh:
            return split_statements(fh.read())
    if not sys.stdin.isatty():
        return split_statements(sys.stdin.read())
    return None


def _cmd_sql(args: argparse.Namespace) -> int:
    try:
        statements = _read_statements(args)
    except OSError as exc:
        _print(f"Cannot read {args.file}: {exc.strerror}", sys.stderr)
        return 1
    with _connect(args) as conn:
        if statements is None:
            # deferred: keeps start-up light (import auger, the CLI, Spark's workers)
            from auger.cli.shell import Settings, run_shell

            chosen = args.output is not None
            settings = Settings(outputformat=args.output or "table", format_chosen=chosen)
            return run_shell(conn, settings, verbose=bool(args.verbose))
        if not args.verbose:
            # deferred: keeps start-up light (import auger, the CLI, Spark's workers)
            from auger.cli.runner import start_engine

            start_engine(conn, background=False)
        return run_statements(
            statements,
            conn,
            args.output or "table",
            sys.stdout,
            sys.stderr,
            keep_going=args.keep_going,
            verbose=bool(args.verbose),
        )


def _cmd_demo(args: argparse.Namespace) -> int:
    with _connect(args) as conn:
        if not args.verbose:
            # deferred: keeps start-up light (import auger, the CLI, Spark's workers)
            from auger.cli.runner import start_engine

            start_engine(conn, background=False)
        for title, sql in DEMO_QUERIES:
            _print(f"\n-- {title}\n{sql};", sys.stdout)
            status = run_statements(
                [sql], conn, "table", sys.stdout, sys.stderr, verbose=args.verbose
            )
            if status:
                return status
    return 0


def _cmd_serve(args: argparse.Namespace) -> int:
    if args.local_state:
        # deferred: keeps start-up light (import auger, the CLI, Spark's workers)
        from auger.cli.local import run_local_server

        return run_local_server(args.config, args.local_state, args.log_file or "")
    # deferred: loads starlette, pyarrow and more (heavy)
    from auger.server.app import serve

    return int(
        serve(config=args.config, host=args.host, port=args.port, flight_port=args.flight_port) or 0
    )


def _cmd_stop(args: argparse.Namespace) -> int:
    # deferred: keeps start-up light (import auger, the CLI, Spark's workers)
    from auger.cli.local import stop_all, stop_local

    if args.all:
        return stop_all(sys.stdout)
    return stop_local(args.config, sys.stdout)


def _cmd_passwd(args: argparse.Namespace) -> int:
    # deferred: loads starlette, pyarrow and more (heavy)
    from auger.server.passwd import run_passwd

    return run_passwd(args.config, args.user, admin=args.admin, users_file=args.users_file)


DESCRIPTION = "auger: Apache Drill's schema-free SQL over files, run by Spark."

EXAMPLES = """\
examples:
  auger sql                                   an interactive shell (.help lists its commands)
  auger sql -e 'SELECT full_name FROM cp.`employee.json` LIMIT 3'
  auger sql -e 'SELECT * FROM cp.`region.json`' --output csv > regions.csv
  auger sql -f queries.sql --force            run a file, going on past failures
  auger sql --connect http://127.0.0.1:8047   the shell against a running auger serve
  auger sql --embedded -e 'SELECT 1 AS x FROM (VALUES(1))'   Spark in this process
  auger stop                                  stop the background server auger sql keeps
  auger demo                                  a few queries over the bundled sample data
  auger serve --port 8047                     Drill's REST API for Drill's clients
  auger serve --flight-port 32010             ... and Arrow Flight SQL for BI tools and ADBC
  auger --config auger.toml sql               storage and formats from a config file
"""

SQL_EXAMPLES = """\
examples:
  auger sql -e 'SELECT COUNT(*) FROM cp.`employee.json`'
  auger sql -e "USE dfs.tmp; SHOW FILES" --output csv
  auger sql -f queries.sql
  echo "SELECT 1 AS x FROM (VALUES(1));" | auger sql --output json

auger sql runs its statements on a local background server that it starts on first use and
reuses (one per configuration; it stops after [server] idle_timeout seconds unused, or at
`auger stop`); --embedded runs Spark in this process instead.

-e, -f and piped input print every row of every result. The interactive shell shows the first
40 rows of a table (.maxrows N to change), fits wide tables to the terminal and pages long
output; .help in the shell lists its commands.
"""


EMBEDDED_HELP = (
    "run Spark in this process instead of the local background server (slow to start: a JVM"
    " per command)"
)


class _VersionAction(argparse.Action):
    """``--version``, reading the package metadata only when asked (that import is a
    measurable part of every command's start)."""

    def __call__(self, parser: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> None:

        print(f"auger {installed_version()}")  # on stdout, as argparse's own version action
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="auger",
        description=DESCRIPTION,
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--version", action=_VersionAction, nargs=0, help="show the version and exit"
    )
    parser.add_argument("--config", help="TOML config file (default: $AUGER_CONFIG or built-in)")
    parser.add_argument("--verbose", action="store_true", help="print tracebacks on errors")
    sub = parser.add_subparsers(dest="command", required=True)

    sql = sub.add_parser(
        "sql",
        help="run SQL: -e, -f, stdin, or an interactive shell",
        description="Run SQL statements: from -e, from a file, from piped input, or typed into"
        " an interactive shell (when none of those is given).",
        epilog=SQL_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sql.add_argument("-e", "--execute", help="statements to run (separated by ';')")
    sql.add_argument("-f", "--file", help="file of statements to run ('-' for stdin)")
    sql.add_argument(
        "--output",
        default=None,
        choices=["table", "vertical", "csv", "tsv", "json", "ndjson", "markdown"],
        help="result format (default: table); json is one array, ndjson one object a line",
    )
    sql.add_argument(
        "--force",
        "--continue",
        dest="keep_going",
        action="store_true",
        help="go on after a failed statement, then say how many failed (the exit status is"
        " still 1), as sqlline's --force",
    )
    sql.add_argument("--user", help="session user name; with --connect, log in as this user")
    sql.add_argument("--connect", help="URL of a running `auger serve` (e.g. http://host:8047)")
    sql.add_argument(
        "--password", help="with --connect: the password (better: $AUGER_PASSWORD or the prompt)"
    )
    sql.add_argument("--verbose", action="store_true", default=argparse.SUPPRESS, help="tracebacks")
    sql.add_argument("--embedded", action="store_true", help=EMBEDDED_HELP)
    sql.set_defaults(func=_cmd_sql)

    demo = sub.add_parser("demo", help="run a few queries over the bundled sample data")
    demo.add_argument("--embedded", action="store_true", help=EMBEDDED_HELP)
    demo.set_defaults(func=_cmd_demo)

    serve = sub.add_parser("serve", help="serve Drill's REST API")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8047)
    serve.add_argument(
        "--flight-port",
        type=int,
        default=None,
        help="also serve Arrow Flight SQL (ADBC, JDBC, ODBC, BI tools) on this port",
    )
    serve.add_argument("--config", default=argparse.SUPPRESS, help="TOML config file")
    # the local background server that `auger sql` starts (auger.cli.local), not for users
    serve.add_argument("--local-state", default=None, help=argparse.SUPPRESS)
    serve.add_argument("--log-file", default=None, help=argparse.SUPPRESS)
    serve.set_defaults(func=_cmd_serve)

    stop = sub.add_parser(
        "stop",
        help="stop the background server `auger sql` started for this configuration",
        description="Stop the local background server that `auger sql` keeps running for this"
        " configuration (--config or $AUGER_CONFIG); its sessions end first.",
    )
    stop.add_argument("--config", default=argparse.SUPPRESS, help="TOML config file")
    stop.add_argument("--all", action="store_true", help="stop every configuration's server")
    stop.set_defaults(func=_cmd_stop)

    passwd = sub.add_parser("passwd", help="set a REST user's password (server.users_file)")
    passwd.add_argument("user")
    passwd.add_argument("--admin", action="store_true", default=None, help="make an admin")
    passwd.add_argument("--users-file", help="users file (default: the config's)")
    passwd.add_argument("--config", default=argparse.SUPPRESS, help="TOML config file")
    passwd.set_defaults(func=_cmd_passwd)
    return parser


def _quiet_engine_loggers() -> None:
    """PySpark logs every failed query's Java stack as JSON; the CLI prints Drill's text instead."""
    # deferred: keeps start-up light (import auger, the CLI, Spark's workers)
    import logging

    for name in ("SQLQueryContextLogger", "py4j", "pyspark"):
        logging.getLogger(name).setLevel(logging.CRITICAL)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    for name in ("config", "verbose"):
        if not hasattr(args, name):
            setattr(args, name, None)
    if not args.verbose:
        _quiet_engine_loggers()
    try:
        return int(args.func(args))
    except UserError as exc:
        _print(str(exc), sys.stderr)
        if args.verbose:
            raise
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader went away (`auger sql -e ... | head`): stop quietly, as other tools do.
        # deferred: keeps start-up light (import auger, the CLI, Spark's workers)
        import os

        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141
    except Exception as exc:  # last resort: never a bare traceback unless asked
        # deferred: keeps start-up light (import auger, the CLI, Spark's workers)
        from auger.dbapi import Error

        if isinstance(exc, Error):
            _print(str(exc), sys.stderr)
        else:
            _print(f"SYSTEM ERROR: {type(exc).__name__}: {exc}", sys.stderr)
        if args.verbose:
            raise
        return 1


if __name__ == "__main__":
    sys.exit(main())
