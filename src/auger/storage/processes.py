"""Whether the process that left something on disk still runs.

Things a process leaves behind while it works (a session's temporary location, a CTAS staging
directory) record their owner: host, pid and the kernel's start time of that pid (so a pid reused
by another process is told apart). A start-up sweep removes what belongs to a dead owner and
never what belongs to a live one, or to a process on another host it cannot see.
"""

from __future__ import annotations

import hashlib
import os
import socket

__all__ = ["host_key", "pid_exists", "process_alive", "process_start"]


def process_start(pid: int) -> str | None:
    """The kernel's start time of ``pid`` (clock ticks since boot), to tell a reused pid apart."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
            text = fh.read()
    except OSError:
        return None
    # Field 2 (the command) may contain spaces and parentheses; fields after it are fixed.
    tail = text.rsplit(")", 1)[-1].split()
    return tail[19] if len(tail) > 19 else None


def pid_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's live process
    except OSError:
        return False
    return True


def host_key() -> str:
    """A short fixed-length tag of this host's name, for file names that record an owner."""
    return hashlib.sha1(socket.gethostname().encode("utf-8")).hexdigest()[:8]


def process_alive(pid: int, start: str | None) -> bool:
    """Whether process ``pid`` of this host, started at ``start`` (None: unknown), still runs."""
    if not pid_exists(pid):
        return False
    if start is None:
        return True
    current = process_start(pid)
    return current is None or current == start
