"""The ``auger`` command, run as a user would run it (a subprocess)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.spark, pytest.mark.slow]


def auger(
    *args: str, cwd: Path | None = None, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    return subprocess.run(
        [sys.executable, "-m", "auger", *args],
        capture_output=True,
        text=True,
        input=stdin,
        timeout=300,
        env=env,
        cwd=cwd,
    )


def test_sql_e_prints_three_rows_and_f_runs_a_file(tmp_path: Path) -> None:
    script = tmp_path / "q.sql"
    script.write_text(
        "SELECT full_name FROM cp.`employee.json` LIMIT 3;\n"
        "SELECT COUNT(*) AS n FROM cp.`tpch/region.parquet`;\n"
    )
    done = auger("sql", "-f", str(script), "--output", "ndjson")
    assert done.returncode == 0, done.stderr
    lines = [json.loads(x) for x in done.stdout.splitlines() if x.startswith("{")]
    assert lines[:3] == [
        {"full_name": "Sheri Nowmer"},
        {"full_name": "Derrick Whelply"},
        {"full_name": "Michael Spence"},
    ]
    assert lines[3] == {"n": 5}

    table = auger("sql", "-e", "SELECT full_name FROM cp.`employee.json` LIMIT 3")
    assert table.returncode == 0
    assert "| Sheri Nowmer" in table.stdout and "3 rows selected" in table.stdout

    array = auger(
        "sql", "-e", "SELECT r_name FROM cp.`tpch/region.parquet` LIMIT 2", "--output", "json"
    )
    assert array.returncode == 0, array.stderr
    assert json.loads(array.stdout) == [{"r_name": "AFRICA"}, {"r_name": "AMERICA"}]


def test_explain_prints_its_plan_as_lines() -> None:
    sql = "EXPLAIN PLAN FOR SELECT full_name FROM cp.`employee.json` LIMIT 1"
    done = auger("sql", "-e", sql)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("00-00") and "Screen" in lines[0]
    assert any(line.startswith("00-01") and "Scan(" in line for line in lines)
    assert "\\n" not in done.stdout and "| text" not in done.stdout
    as_csv = auger("sql", "-e", sql, "--output", "csv")
    assert as_csv.stdout.startswith("text,json\n")


def test_errors_exit_1_without_traceback() -> None:
    done = auger("sql", "-e", "SELECT * FROM cp.`nope.json`; SELECT 3 AS never")
    assert done.returncode == 1
    assert done.stderr.startswith("VALIDATION ERROR: Object 'nope.json' not found within 'cp'")
    assert "Traceback" not in done.stderr
    assert "never" not in done.stdout  # stops at the first failed statement
    bad = auger("sql", "-e", "SELECT FROM WHERE", "--output", "csv")
    assert bad.returncode == 1 and "PARSE ERROR" in bad.stderr


def test_force_runs_every_statement_and_says_how_many_failed(tmp_path: Path) -> None:
    script = (
        "SELECT * FROM cp.`nope.json`;\n"
        "SELECT 1/0 AS boom;\n"
        "-- a comment; with a semicolon\n"
        "SELECT r_name FROM cp.`tpch/region.parquet` ORDER BY r_name LIMIT 2;\n"
    )
    path = tmp_path / "q.sql"
    path.write_text(script)
    done = auger("sql", "-f", str(path), "--force", "--output", "csv")
    assert done.returncode == 1
    assert done.stderr.splitlines()[-1] == "2 of 3 statements failed."
    assert done.stdout == "r_name\nAFRICA\nAMERICA\n"
    errors = [ln for ln in done.stderr.splitlines() if " ERROR: " in ln]
    # integer division by zero: Drill reports the Java exception its generated code raised
    assert [e.split(":")[0] for e in errors] == ["VALIDATION ERROR", "SYSTEM ERROR"]
    assert "ArithmeticException: / by zero" in done.stderr
    assert "\x1b" not in done.stdout + done.stderr  # no escape codes off a terminal
    assert "Traceback" not in done.stderr


def test_demo_prints_tables() -> None:
    done = auger("demo")
    assert done.returncode == 0, done.stderr
    assert "Sheri Nowmer" in done.stdout and "AFRICA" in done.stdout


def test_sql_e_prints_every_row_uncapped() -> None:
    # The interactive shell shows 40 rows; scripts get the whole result, as with sqlline.
    done = auger("sql", "-e", "SELECT full_name FROM cp.`employee.json`")
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("\n| ") == 1155 + 1  # rows and the header
    assert "1155 rows selected (" in done.stdout and "shown" not in done.stdout
