"""``auger --version`` and ``auger --help``: what a new user types first (no Spark needed)."""

from __future__ import annotations

import re
import subprocess
import sys
from importlib.metadata import version


def auger(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "auger", *args], capture_output=True, text=True, timeout=120
    )


def test_version_comes_from_the_package_metadata() -> None:
    done = auger("--version")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"auger {version('auger')}"


def test_help_is_plain_text_with_examples_that_a_shell_takes_as_written() -> None:
    for args in (("--help",), ("sql", "--help")):
        done = auger(*args)
        assert done.returncode == 0, done.stderr
        text = done.stdout
        assert "``" not in text and ":func:" not in text  # no reStructuredText markup
        assert "examples:\n  auger sql" in text
        # A backquoted table name inside double quotes would be command substitution.
        for line in text.splitlines():
            if line.lstrip().startswith("auger") and "`" in line:
                assert not re.search(r'"[^"]*`[^"]*"', line), line
    sql_help = auger("sql", "--help").stdout
    assert "print every row" in sql_help and ".maxrows" in sql_help


def test_force_is_sqllines_name_for_going_on_past_failures() -> None:
    from auger.cli.main import build_parser

    parser = build_parser()
    for flag in ("--force", "--continue"):
        assert parser.parse_args(["sql", "-f", "q.sql", flag]).keep_going
    assert not parser.parse_args(["sql", "-f", "q.sql"]).keep_going
    assert parser.parse_args(["sql", "--output", "ndjson"]).output == "ndjson"
