"""Shared by the terminal tests: a program run in tmux, driven by keys and read from the screen."""

from __future__ import annotations

import contextlib
import itertools
import os
import re
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator

import pytest

WAIT = 400.0  # generous: the JVM starts inside the shell, and CI machines are shared
_names = itertools.count()


class Terminal:
    """A tmux session running one command, driven by keys and read from the screen.

    Each terminal has a tmux server of its own (``-L``): with one shared server, the server
    shutting down as the last test's session ends races the next test's ``new-session``
    ("server exited unexpectedly").
    """

    def __init__(self, name: str, command: str) -> None:
        self.name = name
        self.tmux = ["tmux", "-L", name]
        subprocess.run(
            [*self.tmux, "new-session", "-d", "-s", name, "-x", "160", "-y", "50", command],
            check=True,
        )
        self.socket = subprocess.run(
            [*self.tmux, "display-message", "-p", "#{socket_path}"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()

    def keys(self, *keys: str) -> None:
        subprocess.run([*self.tmux, "send-keys", "-t", self.name, *keys], check=True)

    def type(self, text: str) -> None:
        """Type literal text (tmux reads a trailing ';' as its own separator: escape it)."""
        if text.endswith(";"):
            self.keys("-l", text[:-1])
            self.keys("\\;")
        else:
            self.keys("-l", text)

    def line(self, text: str) -> None:
        self.type(text)
        self.keys("Enter")

    def screen(self) -> str:
        done = subprocess.run(
            [*self.tmux, "capture-pane", "-p", "-J", "-S", "-500", "-t", self.name],
            capture_output=True,
            text=True,
            check=True,
        )
        return done.stdout

    def wait_for(self, pattern: str, after: int = 0) -> re.Match[str]:
        """Wait until ``pattern`` shows on the screen past character ``after``."""
        deadline = time.monotonic() + WAIT
        while True:
            text = self.screen()
            m = re.compile(pattern, re.M).search(text, after)
            if m:
                return m
            if time.monotonic() > deadline:
                raise AssertionError(f"{pattern!r} never showed; the screen was:\n{text}")
            time.sleep(0.3)

    def close(self) -> None:
        subprocess.run([*self.tmux, "kill-server"], check=False)
        if self.socket:
            with contextlib.suppress(OSError):
                os.unlink(self.socket)


@pytest.fixture
def tmux() -> Iterator[Callable[[str], Terminal]]:
    """Factory: ``tmux(command)`` starts a terminal running ``command``; all are closed after."""
    assert shutil.which("tmux"), "the terminal tests need tmux (apt-get install -y tmux)"
    made: list[Terminal] = []

    def start(command: str) -> Terminal:
        term = Terminal(f"auger-test-{os.getpid()}-{next(_names)}", command)
        made.append(term)
        return term

    yield start
    for term in made:
        term.close()
