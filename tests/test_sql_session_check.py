"""``scripts/check_layers.py`` fails when the SQL layer reaches for the session: a module of
``sql`` that names ``UserSession`` or imports ``auger.session`` (it takes the statement context
``auger.sql.context`` defines)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "auger"
SCRIPT = [sys.executable, str(ROOT / "scripts" / "check_layers.py")]


def _copy_of_auger(tmp_path: Path) -> Path:
    """auger's Python sources (no build products), to plant a module in."""
    dest = tmp_path / "auger"
    shutil.copytree(SRC, dest, ignore=shutil.ignore_patterns("*.so", "*.c", "data", "__pycache__"))
    return dest


def _run(src: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*SCRIPT, str(src)], capture_output=True, text=True, check=False)


def test_auger_sql_never_names_the_session() -> None:
    done = _run(SRC)
    assert done.returncode == 0, done.stdout
    assert "UserSession" not in done.stdout and "auger.session" not in done.stdout


def test_a_planted_sql_module_naming_the_session_fails_the_check(tmp_path: Path) -> None:
    src = _copy_of_auger(tmp_path)
    (src / "sql" / "planning" / "reaches_in.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "\n"
        "if TYPE_CHECKING:\n"
        "    from auger.session import UserSession\n"
        "\n"
        "\n"
        "def rule(session: 'UserSession') -> None:\n"
        "    from auger import session as s\n"
    )
    done = _run(src)
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    where = "auger/sql/planning/reaches_in.py"
    assert any(ln.startswith(f"{where}:4: sql imports auger.session") for ln in lines), lines
    assert any(ln.startswith(f"{where}:4: sql names UserSession") for ln in lines), lines
    assert any(ln.startswith(f"{where}:7: sql names UserSession") for ln in lines), lines
    assert any(ln.startswith(f"{where}:8: sql imports auger.session") for ln in lines), lines
    # ``--report`` lists the same and does not fail
    assert _run_report(src).returncode == 0


def test_the_same_module_outside_sql_is_no_concern_of_this_check(tmp_path: Path) -> None:
    src = _copy_of_auger(tmp_path)
    (src / "server" / "uses_session.py").write_text(
        "from auger.session import UserSession\n\n\ndef f(s: UserSession) -> None: ...\n"
    )
    done = _run(src)
    assert done.returncode == 0, done.stdout


def _run_report(src: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*SCRIPT, str(src), "--report"], capture_output=True, text=True, check=False
    )
