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


class StagedCursor(QuickCursor):
    """A cursor whose statement has Spark stages under way, as both real cursors report them."""

    def __init__(self) -> None:
        super().__init__()
        self.asked = 0

    def running_stages(self) -> list[tuple[int, int, int]]:
        self.asked += 1
        return [(3, 5, 8)]


def test_progress_line_shows_the_stages_and_their_tasks() -> None:
    out = io.StringIO()
    cursor = StagedCursor()
    meter = ProgressMeter(out, cursor, enabled=True)
    meter.started -= 10
    meter.update()
    line = out.getvalue()
    assert line.startswith("\r\x1b[2K[Stage 3: ============>        5/8] 10.")
    meter.update()  # the elapsed time moves; the stages are asked again only now and then
    assert cursor.asked == 1


def test_a_server_cursor_reads_the_stages_from_the_running_query_profile() -> None:
    from auger.cli.remote import RemoteConnection, RemoteCursor

    stages = [
        {"stageId": 0, "status": "COMPLETE", "numTasks": 4, "numCompleteTasks": 4},
        {"stageId": 1, "status": "ACTIVE", "numTasks": 8, "numCompleteTasks": 5,
         "numActiveTasks": 2},
        {"stageId": 2, "status": "ACTIVE", "numTasks": 4, "numCompleteTasks": 0,
         "numActiveTasks": 0},  # waiting for its parent
    ]  # fmt: skip

    class Answer:
        status_code = 200

        def json(self) -> dict[str, Any]:
            return {"queryId": "q1", "stages": stages}

    asked: list[str] = []

    class Server(RemoteConnection):
        def __init__(self) -> None:
            self.closed = False

        def _get(self, path: str) -> Any:
            asked.append(path)
            return Answer()

    cursor = RemoteCursor(Server())
    assert cursor.running_stages() == []  # no query id yet: nothing to ask about
    cursor.query_id = "q1"
    assert cursor.running_stages() == [(1, 5, 8)]
    assert asked == ["/profiles/q1.json"]
