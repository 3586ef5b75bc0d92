"""Stand-ins shared by tests that need no Spark: job groups as far as cancelling goes, an
engine whose sessions only open and close, a clock that moves only when slept on, a count
of a function's calls, and a frame and a session as far as temporary views go."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest


class FakeJobs:
    """Spark's jobs per group, as far as cancelling goes: a cancel ends the running ones."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.running: dict[str, set[int]] = {}
        self.cancelled: list[int] = []

    def submit(self, group: str, job: int) -> None:
        with self.lock:
            self.running.setdefault(group, set()).add(job)

    def cancel_group(self, group: str) -> None:
        with self.lock:
            self.cancelled.extend(sorted(self.running.pop(group, set())))

    def wait_cancelled(self, jobs: list[int], seconds: float = 30) -> bool:
        """True once exactly ``jobs`` were cancelled, False if not within ``seconds``."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            with self.lock:
                if self.cancelled == jobs:
                    return True
            time.sleep(0.01)
        return False


class FakeSession:
    def __init__(self, user: str) -> None:
        self.user, self.admin, self.id, self.closed = user, False, f"s-{user}", False

    def close(self) -> None:
        self.closed = True


class FakeEngine:
    def open_session(self, user: str, admin: bool = True) -> Any:
        return FakeSession(user)


class FakeClock:
    """A monotonic clock (call it) whose time moves only by :meth:`sleep`: a loop that polls
    and sleeps runs at once, and the times it acted at are exact."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def count_calls(monkeypatch: pytest.MonkeyPatch, owner: Any, name: str) -> list[int]:
    """``owner.name`` replaced by itself counting its calls: the list gets a 1 for each."""
    calls: list[int] = []
    real = getattr(owner, name)

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, counted)
    return calls


class ViewFrame:
    """A frame that records the temporary views made of it."""

    def __init__(self) -> None:
        self.views: list[str] = []

    def createOrReplaceTempView(self, name: str) -> None:
        self.views.append(name)


class ViewSession:
    """A session that records the temporary views dropped from it."""

    def __init__(self) -> None:
        self.dropped: list[str] = []
        self.catalog = self

    def dropTempView(self, name: str) -> None:
        self.dropped.append(name)
