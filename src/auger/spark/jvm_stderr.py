"""The JVM's standard error without the notice it prints at every start.

Spark's launcher starts the JVM with Java's incubating vector module (Spark's vectorised code
uses it when it is there), and Java then announces ``WARNING: Using incubator modules:
jdk.incubator.vector`` on standard error, once per JVM, on every embedded run. Java has no switch
for it, so :func:`jvm_notice_filtered` gives the JVM that is started inside its block a pipe as
standard error instead of this process's; a daemon thread copies what the JVM writes there to the
real standard error, line by line, leaving that notice out. Anything else the JVM says (a crash,
an error log line) still reaches the user.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["JVM_NOTICES", "jvm_notice_filtered"]

#: Lines the JVM writes at start-up that say nothing a user can act on.
JVM_NOTICES: tuple[bytes, ...] = (b"WARNING: Using incubator modules:",)


def _copy(source: int, target: int) -> None:
    """Copy lines from ``source`` to ``target`` until the last writer closes it, leaving out
    the notices."""
    try:
        with os.fdopen(source, "rb") as lines:
            for line in lines:
                if not line.startswith(JVM_NOTICES):
                    os.write(target, line)
    except OSError:  # the real standard error went away: nothing left to copy to
        pass
    finally:
        os.close(target)


@contextmanager
def jvm_notice_filtered() -> Iterator[None]:
    """Run the block (which starts the JVM) with descriptor 2 on a filtering pipe.

    The JVM inherits the pipe and keeps it for its life; this process gets its own standard
    error back when the block ends. Output this process writes during the block passes through
    the same filter. Where descriptors cannot be changed (no descriptor 2), the block runs as is.
    """
    try:
        sys.stderr.flush()
        target = os.dup(2)
    except (OSError, ValueError):
        yield
        return
    source, sink = os.pipe()
    saved = os.dup(2)
    os.dup2(sink, 2)
    os.close(sink)
    threading.Thread(
        target=_copy, args=(source, target), name="auger-jvm-stderr", daemon=True
    ).start()
    try:
        yield
    finally:
        try:
            sys.stderr.flush()
        except (OSError, ValueError):
            pass
        os.dup2(saved, 2)
        os.close(saved)
