"""Ctrl-C during a statement: the runner cancels it instead of dying (no Spark needed)."""

from __future__ import annotations

import io
import os
import signal
import threading
from typing import Any

import pytest

from auger.cli.runner import Cancelled, ProgressMeter, run_statement


class BlockingCursor:
    """Blocks in execute until cancel() is called, like a long Spark job."""

    def __init__(self) -> None:
        self.running = threading.Event()
        self.cancelled = threading.Event()
        self.cancel_calls = 0
        self.description: list[tuple[Any, ...]] | None = None

    def execute(self, sql: str) -> None:
        self.running.set()
        if not self.cancelled.wait(60):
            raise AssertionError("never cancelled")
        raise RuntimeError("job cancelled")

    def fetchall(self) -> list[tuple[Any, ...]]:
        return []

    def cancel(self) -> None:
        self.cancel_calls += 1
        self.cancelled.set()


class QuickCursor:
    def __init__(self) -> None:
        self.description = [("a", "INTEGER", None, None, None, None, True)]

    def execute(self, sql: str) -> None:
        self.sql = sql

    def fetchall(self) -> list[tuple[Any, ...]]:
        return [(1,), (2,)]

    def cancel(self) -> None:
        raise AssertionError("nothing to cancel")


def test_sigint_cancels_the_statement_and_restores_the_handler() -> None:
    before = signal.getsignal(signal.SIGINT)
    cursor = BlockingCursor()

    def press_ctrl_c() -> None:
        # only once the statement runs: the runner's handler is in place by then (a Ctrl-C
        # before it would reach the default handler and interrupt the test run itself)
        if cursor.running.wait(60):
            os.kill(os.getpid(), signal.SIGINT)

    presser = threading.Thread(target=press_ctrl_c, daemon=True)
    presser.start()
    with pytest.raises(Cancelled):
        run_statement(cursor, "SELECT slow")
    presser.join(60)
    assert cursor.cancel_calls >= 1
    assert signal.getsignal(signal.SIGINT) is before


def test_statement_outcome_and_errors_pass_through() -> None:
    outcome = run_statement(QuickCursor(), "SELECT a")
    assert outcome.names == ["a"] and outcome.rows == [(1,), (2,)] and outcome.seconds >= 0

    class Failing(QuickCursor):
        def execute(self, sql: str) -> None:
            raise ValueError("VALIDATION ERROR: nope")

    with pytest.raises(ValueError, match="VALIDATION ERROR: nope"):
        run_statement(Failing(), "SELECT a")


def test_progress_line_only_when_enabled() -> None:
    out = io.StringIO()
    quiet = ProgressMeter(out, QuickCursor(), enabled=False)
    quiet.started -= 10
    quiet.update()
    quiet.clear()
    assert out.getvalue() == ""
    loud = ProgressMeter(out, QuickCursor(), enabled=True)
    loud.started -= 10
    loud.update()
    assert out.getvalue().startswith("\r\x1b[2Krunning 10.")
    loud.clear()
    assert out.getvalue().endswith("\r\x1b[2K")
