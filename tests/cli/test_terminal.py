"""The interactive shell in a real terminal (tmux): what a user types and sees.

One shell (one JVM) goes through a whole session: a statement typed over three lines, a
temporary table, a long cross join cancelled with Ctrl-C while the progress line shows, the
session (and its table) still there afterwards, an output-format switch, and Ctrl-D to leave.
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
    env = f"AUGER_HISTORY={shlex.quote(str(history))} TERM=xterm"
    cmd = f"{shlex.quote(sys.executable)} -m auger --config {shlex.quote(str(config))} sql"
    command = f"cd {shlex.quote(os.getcwd())} && env {env} {cmd}; echo AUGER-EXIT=$?; sleep 600"
    return tmux(command), history


def test_shell_session_in_a_terminal(terminal: tuple[Any, Path]) -> None:
    term, history = terminal
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
