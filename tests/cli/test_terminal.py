"""The interactive shell in a real terminal (tmux): what a user types and sees.

One shell (one JVM) goes through a whole session: a statement typed over three lines, a
temporary table, a long cross join cancelled with Ctrl-C while the progress line shows, the
session (and its table) still there afterwards, an output-format switch, and Ctrl-D to leave.
A second one, on the local background server as a user starts it, goes through the DuckDB
user's habits: dot commands, the files ``.tables`` lists, the row cap and its footer, wide results
fitted to the terminal, the pager, paths completed inside backquotes, an EXPLAIN's plan as lines,
Spark's stages in the progress line, and the vertical and json modes.
"""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.spark, pytest.mark.slow]


@pytest.fixture
def terminal(tmp_path: Path, tmux: Callable[[str], Any]) -> tuple[Any, Path]:
    """The shell as a user starts it: on the local background server."""
    return _terminal(tmp_path, tmux)


@pytest.fixture
def embedded_terminal(tmp_path: Path, tmux: Callable[[str], Any]) -> tuple[Any, Path]:
    """The shell with Spark in its own process (``--embedded``): Spark's stages show."""
    return _terminal(tmp_path, tmux, "--embedded")


def _terminal(tmp_path: Path, tmux: Callable[[str], Any], *extra: str) -> tuple[Any, Path]:
    workspace = tmp_path / "tmp"
    workspace.mkdir()
    config = tmp_path / "auger.toml"
    config.write_text(
        "[storage.dfs.workspaces.tmp]\n"
        f'location = "{workspace}"\n'
        "writable = true\n"
        "[spark]\n"
        'master = "local[2]"\n'
    )
    history = tmp_path / "history"
    # The pager is the default one (less), whatever the machine running the tests prefers.
    env = f"-u PAGER -u AUGER_PAGER -u LESS AUGER_HISTORY={shlex.quote(str(history))} TERM=xterm"
    env += " LANG=C.UTF-8"
    # a tmux server started earlier has its own environment: name the run's state directory
    env += f" AUGER_HOME={shlex.quote(os.environ['AUGER_HOME'])}"
    cmd = f"{shlex.quote(sys.executable)} -m auger --config {shlex.quote(str(config))} sql"
    cmd += "".join(f" {shlex.quote(arg)}" for arg in extra)
    command = f"cd {shlex.quote(os.getcwd())} && env {env} {cmd}; echo AUGER-EXIT=$?; sleep 600"
    return tmux(command), history


def test_shell_session_in_a_terminal(embedded_terminal: tuple[Any, Path]) -> None:
    term, history = embedded_terminal
    term.wait_for(r"^auger>")

    # A statement over three lines runs at the ';' and prints a boxed table.
    term.line("SELECT n_name, n_regionkey")
    term.wait_for(r"^\. \. \.>")
    term.line("FROM cp.`tpch/nation.parquet`")
    term.line("WHERE n_regionkey = 1 ORDER BY n_name;")
    end = term.wait_for(r"^5 rows selected \(\d+\.\d{3} seconds\)").end()
    screen = term.screen()
    assert "| n_name        | n_regionkey |" in screen
    assert "| UNITED STATES | 1           |" in screen

    # Session state: a temporary table.
    term.line("CREATE TEMPORARY TABLE kept AS SELECT n_name FROM cp.`tpch/nation.parquet`;")
    end = term.wait_for(r"^\| 0_0 +\| 25 ", end).end()

    # A long query: the progress line shows, Ctrl-C cancels it, the prompt comes back.
    term.line(
        "SELECT COUNT(a.employee_id + b.employee_id + c.employee_id) AS n "
        "FROM cp.`employee.json` a CROSS JOIN cp.`employee.json` b "
        "CROSS JOIN cp.`employee.json` c;"
    )
    term.wait_for(r"\[Stage \d+: [=> ]+ \d+/\d+\]", end)
    term.keys("C-c")
    end = term.wait_for(r"^Query cancelled\.\n^auger>", end).end()

    # Same session: the temporary table is still there.
    term.line("!set outputformat csv")
    term.line("SELECT COUNT(n_name) AS c FROM kept;")
    end = term.wait_for(r"^c\n25\n^1 row selected", end).end()

    # Ctrl-D at an empty prompt closes the session and leaves with status 0.
    term.keys("C-d")
    term.wait_for(r"^AUGER-EXIT=0$", end)
    saved = history.read_text()
    assert "+SELECT n_name, n_regionkey\n+FROM cp.`tpch/nation.parquet`\n" in saved
    assert "+SELECT COUNT(n_name) AS c FROM kept;" in saved


def test_duckdb_habits_in_a_terminal(terminal: tuple[Any, Path]) -> None:
    term, _ = terminal  # 160 columns, 50 lines
    term.wait_for(r"^auger>")

    # .tables runs at the end of its line (no ';') and the prompt comes back, not ". . .>".
    term.line(".tables")
    end = term.wait_for(
        r"^\| sys +\| version +\| SYSTEM_TABLE +\|\n"
        r"^\| cp +\| employee\.json +\| FILE +\|\n(?:.*\n)*?^\d+ rows selected\n^auger>"
    ).end()

    # 1155 rows: the first 40 show, with a footer that says so.
    term.line("SELECT employee_id, full_name FROM cp.`employee.json`;")
    end = term.wait_for(r"^first 40 rows shown, more not fetched \(\d+\.\d{3} seconds\)", end).end()
    shown = term.screen()[:end].rsplit("auger> SELECT employee_id", 1)[1]
    assert "| 1           | Sheri Nowmer " in shown
    assert shown.count("\n| ") == 1 + 40  # the header and forty rows

    term.line(".maxrows 3")
    term.line("SELECT employee_id, full_name FROM cp.`employee.json`;")
    end = term.wait_for(
        r"^\| 4 +\| Michael Spence +\|\n^\+-+\+-+\+\n^first 3 rows shown", end
    ).end()

    # Sixteen columns do not fit 160 characters: the widest are cut, with an ellipsis, names too.
    term.line("SELECT * FROM cp.`employee.json`;")
    match = term.wait_for(r"^\| employ… +\| full_n… .*\n(?:.*\n)*?^first 3 rows shown", end)
    end = match.end()
    table = match.group(0).splitlines()[:-1]
    assert all(len(line) <= 160 for line in table), table
    assert "…" in match.group(0)

    # Thirty columns cannot fit even cut: one value per line.
    columns = ", ".join(f"{i} AS column_{i:02d}" for i in range(30))
    term.line(f"SELECT {columns} FROM (VALUES(1));")
    end = term.wait_for(r"^column_00  0\n^column_01  1\n", end).end()

    # .mode chosen by the user: printed as asked, csv with every row.
    term.line(".mode csv")
    term.line(".timer off")
    term.line("SELECT n_name FROM cp.`tpch/nation.parquet` WHERE n_regionkey = 0 ORDER BY n_name;")
    end = term.wait_for(r"^n_name\nALGERIA\n(?:.*\n){4}^auger>", end).end()

    # Taller than the terminal: the pager (less) shows it; G goes to the end, q leaves it.
    term.line(".mode table")
    term.line(".timer on")
    term.line(".maxrows 100")
    term.line("SELECT employee_id FROM cp.`employee.json` LIMIT 60;")
    term.wait_for(r"^:\s*$", end)
    term.keys("G")
    term.wait_for(r"^60 rows selected \(\d+\.\d{3} seconds\)\n^\(END\)", end)
    term.keys("q")
    end = term.wait_for(r"^60 rows selected .*\n(?:.*\n)*?^auger> *$", end).end()

    # Tab completes a directory, then a file in it, inside the backquotes after a workspace.
    term.type("SELECT COUNT(*) AS n FROM cp.`tp")
    term.keys("Tab")
    # (from ``end``, just past the prompt, the line reads on from the prompt)
    term.wait_for(r"SELECT COUNT\(\*\) AS n FROM cp\.`tpch/ *$", end)
    term.type("reg")
    term.keys("Tab")
    term.wait_for(r"SELECT COUNT\(\*\) AS n FROM cp\.`tpch/region\.parquet` *$", end)
    term.line(";")
    end = term.wait_for(r"^\| 5 +\|\n(?:.*\n)*?^1 row selected", end).end()

    # EXPLAIN: the plan's own lines, wider than the terminal yet neither cut nor paged.
    term.line(
        "EXPLAIN PLAN FOR SELECT full_name, position_title FROM cp.`employee.json` "
        "WHERE salary > 1000 AND education_level = 'Graduate Degree' LIMIT 2;"
    )
    match = term.wait_for(r"^00-00 +Screen\n(?:^00-\d\d .*\n)+^1 row selected .*\n^auger>", end)
    end = match.end()
    assert "Scan(table=[cp.employee.json]" in match.group(0) and "\\n" not in match.group(0)

    # On the server, too, the progress line shows Spark's stages and their tasks.
    term.line(
        "SELECT COUNT(a.employee_id + b.employee_id + c.employee_id) AS n "
        "FROM cp.`employee.json` a CROSS JOIN cp.`employee.json` b "
        "CROSS JOIN cp.`employee.json` c;"
    )
    term.wait_for(r"\[Stage \d+: [=> ]+ \d+/\d+\]", end)
    term.keys("C-c")
    end = term.wait_for(r"^Query cancelled\.\n^auger>", end).end()

    # vertical: a blank line between records; json: one array.
    term.line(".mode vertical")
    term.line("SELECT r_regionkey, r_name FROM cp.`tpch/region.parquet` LIMIT 2;")
    end = term.wait_for(r"^r_regionkey +0\n^r_name +AFRICA\n\n^r_regionkey +1\n", end).end()
    term.line(".mode json")
    term.line("SELECT r_regionkey, r_name FROM cp.`tpch/region.parquet` LIMIT 2;")
    end = term.wait_for(
        r'^\[\{"r_regionkey": 0, "r_name": "AFRICA"\},\n'
        r'^\{"r_regionkey": 1, "r_name": "AMERICA"\}\]',
        end,
    ).end()

    term.line(".quit")
    term.wait_for(r"^AUGER-EXIT=0$", end)
