"""The interactive ``auger sql`` shell (prompt_toolkit): statements end with ``;``."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

__all__ = ["run_shell"]

_HISTORY = Path(os.environ.get("AUGER_HISTORY", Path.home() / ".auger_history"))


def run_shell(args: argparse.Namespace) -> int:
    from prompt_toolkit import PromptSession
    from prompt_toolkit.history import FileHistory

    import auger
    from auger.cli.main import run_statements
    from auger.sql.parser import split_statements

    session: PromptSession[str] = PromptSession(history=FileHistory(str(_HISTORY)))
    output = args.output
    with auger.connect(config=args.config, user=args.user) as conn:
        buffer = ""
        while True:
            try:
                line = session.prompt("auger> " if not buffer else "   . > ")
            except KeyboardInterrupt:
                buffer = ""
                continue
            except EOFError:
                return 0
            stripped = line.strip()
            if not buffer and stripped.startswith("!"):
                word = stripped[1:].split()
                if word and word[0] in ("quit", "exit", "q"):
                    return 0
                if word and word[0] == "tables":
                    run_statements(["SHOW SCHEMAS"], conn, output, sys.stdout, sys.stderr)
                    continue
                print(f"Unknown command: {stripped}")
                continue
            buffer += line + "\n"
            if not stripped.endswith(";"):
                continue
            statements, buffer = split_statements(buffer), ""
            run_statements(statements, conn, output, sys.stdout, sys.stderr, keep_going=True)
