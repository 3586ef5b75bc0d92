"""Spark's Python daemon, whose workers end quietly when Spark stops reading them.

Spark forks its Python workers from one daemon process (pyspark's ``daemon`` module). When a
task is cancelled (a statement cancelled by its user, a cache build giving way) Spark closes
the worker's socket while the worker is still writing its rows; the write raises
``BrokenPipeError``, and pyspark's daemon prints the traceback of the worker's end on the
JVM's standard error: on the console of the shell or the script that cancelled, a traceback
for every task, though nothing failed. This module is Spark's daemon module
(``spark.python.daemon.module``, set by :mod:`auger.spark.bootstrap`): it runs pyspark's
daemon as it is, with each forked worker's socket going away counted as the end of its work.
Any other error of a worker is printed as before.

It imports nothing but pyspark's daemon: the daemon must start no thread before it forks.
"""

from __future__ import annotations

import socket
from typing import Any

__all__ = ["main"]


def main() -> None:
    """Run pyspark's daemon with :func:`_quiet` around each forked worker."""
    # deferred: pyspark is imported when the daemon runs, not when auger is
    from pyspark import daemon

    worker = daemon.worker

    def quiet(sock: socket.socket, authenticated: bool) -> Any:
        return _quiet(worker, sock, authenticated)

    daemon.worker = quiet
    daemon.manager()


def _quiet(worker: Any, sock: socket.socket, authenticated: bool) -> Any:
    """``worker(sock, authenticated)``; a socket Spark closed ends it as a worker whose work
    is over (a code that makes the daemon's child exit, not reused)."""
    try:
        return worker(sock, authenticated)
    except (BrokenPipeError, ConnectionResetError):
        return 1


if __name__ == "__main__":
    main()
