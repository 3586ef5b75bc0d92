"""Running one statement from the command line: progress while Spark works, Ctrl-C to cancel.

The statement runs (execute and fetch) on a worker thread while the main thread watches it. The
main thread owns SIGINT, so during a statement Ctrl-C only sets a flag: the watcher then cancels
the statement's Spark job group (``Cursor.cancel``) and the worker comes back with an error, while
the session, its options and its temporary tables stay. No exception is ever thrown into the
middle of a py4j call, which would leave the JVM connection half-read.

The progress line shows the stages and tasks of the statement's jobs (Spark's status tracker),
only on a terminal and only once the statement has taken more than a moment.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, TextIO

__all__ = ["Cancelled", "Outcome", "ProgressMeter", "run_statement"]

# How long a statement runs before a progress line appears ("more than a moment").
PROGRESS_DELAY = 0.8
_POLL = 0.1
# How often the progress line asks for the stages again; the elapsed time moves at each poll.
STAGES_EVERY = 0.5


class Cancelled(Exception):
    """The user pressed Ctrl-C while the statement ran; it was cancelled."""


@dataclass
class Outcome:
    """What a statement gave: column names and rows, how long it took, and the warnings the
    engine had for it (``Cursor.warnings``: columns no file has, ...)."""

    names: list[str] = field(default_factory=list)
    rows: list[tuple[Any, ...]] = field(default_factory=list)
    seconds: float = 0.0
    warnings: list[str] = field(default_factory=list)


class ProgressMeter:
    """One self-overwriting line on a terminal: ``[Stage 3: 5/8 tasks] 12.3 s``."""

    def __init__(self, out: TextIO, cursor: Any, enabled: bool) -> None:
        self.out = out
        self.cursor = cursor
        self.enabled = enabled
        self.started = time.monotonic()
        self.shown = False
        self.note = ""
        self.status = ""
        self.refresh_at = 0.0

    def _status(self) -> str:
        # Both cursors report the running statement's stages: the embedded one from Spark's
        # status tracker, a server's from the query's profile.
        stages = getattr(self.cursor, "running_stages", None)
        if stages is None:
            return ""
        bars = [_bar(stage, done, n) for stage, done, n in stages()]
        return " ".join(bars[:3])

    def update(self) -> None:
        now = time.monotonic()
        elapsed = now - self.started
        if not self.enabled or elapsed < PROGRESS_DELAY:
            return
        if now >= self.refresh_at:  # the stages cost a look-up (on a server, a request)
            self.refresh_at = now + STAGES_EVERY
            try:
                self.status = self._status()
            except Exception:  # progress is a nicety; never let it fail a statement
                self.status = ""
        text = " ".join(x for x in (self.status or "running", f"{elapsed:.1f} s", self.note) if x)
        self.out.write("\r\x1b[2K" + text)
        self.out.flush()
        self.shown = True

    def clear(self) -> None:
        if self.shown:
            self.out.write("\r\x1b[2K")
            self.out.flush()
            self.shown = False


def _bar(stage: int, done: int, total: int, width: int = 20) -> str:
    filled = width * done // max(total, 1)
    arrow = ">" if filled < width else ""
    pad = " " * (width - filled - len(arrow))
    return f"[Stage {stage}: {'=' * filled}{arrow}{pad} {done}/{total}]"


@contextmanager
def _sigint_sets(flag: threading.Event) -> Iterator[None]:
    """While the block runs, Ctrl-C sets ``flag`` instead of raising (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, lambda signum, frame: flag.set())
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def run_statement(cursor: Any, sql: str, progress_out: TextIO | None = None) -> Outcome:
    """Execute ``sql`` on ``cursor`` and fetch all its rows, cancellable with Ctrl-C.

    Args:
        cursor: a DB-API cursor (embedded or remote) with ``cancel()``.
        sql: one statement.
        progress_out: where the progress line goes (a terminal), or None for no progress.

    Raises:
        Cancelled: Ctrl-C was pressed and the statement was cancelled.
        auger.dbapi.Error: the statement failed.
    """
    box: dict[str, Any] = {}
    started = time.monotonic()

    def work() -> None:
        try:
            cursor.execute(sql)
            box["names"] = [d[0] for d in cursor.description or []]
            box["rows"] = cursor.fetchall() if cursor.description is not None else []
            box["warnings"] = list(getattr(cursor, "warnings", None) or [])
        except BaseException as exc:
            box["error"] = exc

    worker = threading.Thread(target=work, name="auger-statement", daemon=True)
    interrupted = threading.Event()
    meter = ProgressMeter(progress_out, cursor, progress_out is not None)  # type: ignore[arg-type]
    cancelled_at: float | None = None
    polls = 0
    with _sigint_sets(interrupted):
        worker.start()
        while worker.is_alive():
            worker.join(_POLL)
            polls += 1
            if cancelled_at is not None and polls % 10 == 0:
                # Jobs submitted after the first cancel (the statement was still planning)
                # belong to the same group: cancel again until the worker gives up.
                try:
                    cursor.cancel()
                except Exception:
                    pass
            if interrupted.is_set():
                interrupted.clear()
                if cancelled_at is None:
                    cancelled_at = time.monotonic()
                    meter.note = "cancelling..."
                    try:
                        cursor.cancel()
                    except Exception:
                        pass
                    if getattr(cursor, "abandon_on_cancel", False):
                        break
                else:  # a second Ctrl-C: stop waiting for the engine
                    break
            meter.update()
    meter.clear()
    if cancelled_at is not None:
        raise Cancelled()
    if "error" in box:
        raise box["error"]
    elapsed = time.monotonic() - started
    return Outcome(box.get("names", []), box.get("rows", []), elapsed, box.get("warnings", []))


@contextmanager
def _stderr_silenced() -> Iterator[None]:
    """Point file descriptor 2 at /dev/null for the block.

    The JVM that Spark starts inherits the descriptor, so its start-up chatter (log4j defaults
    before auger's settings apply) never reaches the terminal, where it would garble the prompt.
    """
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError):
        yield
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 2)
    try:
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)


def start_engine(conn: Any, background: bool) -> threading.Thread | None:
    """Start Spark for an embedded connection without its console noise.

    In the shell this runs in the background while the user types the first statement (a
    statement that needs Spark simply waits for it); for ``-e``/``-f`` it runs first. A failure
    here (no Java...) is left for the first statement to report as the error it is.
    """
    session = getattr(conn, "session", None)
    engine = getattr(session, "engine", None)
    if engine is None:
        return None

    def start() -> None:
        with _stderr_silenced():
            try:
                _ = engine.spark
            except Exception:
                pass

    if not background:
        start()
        return None
    thread = threading.Thread(target=start, name="auger-spark-start", daemon=True)
    thread.start()
    return thread
