"""Spark's Python workers started while a server waits for its first query.

A Spark's first scan through the ``auger`` data source waits while Spark starts a Python
process to plan the read and a Python worker to run it, each importing pyarrow and auger's
readers: about 3 s on two cores, ten times the scan of a few small files once they run. A
server has time for that before anyone asks: once Spark has started and nothing has run for a
moment, it reads one tiny file through the data source.

Only when idle: a warm-up next to a query competes with it for the cores and, Spark's jobs
being served in order, could make it wait for a job it did not ask for (``auger demo``, whose
queries follow the server's start at once, measured 1.7 s slower with an eager warm-up). An
embedded engine does not warm up: its process may end right after its first answer.
"""

from __future__ import annotations

import logging
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from auger.spark.handles import is_connect

__all__ = ["WARM_UP_GROUP", "wait_until_idle", "warm_python_workers", "warm_when_idle"]

_log = logging.getLogger(__name__)

#: The Spark job group of the warm-up's read (Spark's UI shows it under this name).
WARM_UP_GROUP = "auger-warm-up"
#: Seconds with no Spark job and no query that count as idle.
QUIET_S = 1.0
#: Seconds after which a server that was never idle stops waiting to warm up.
PATIENCE_S = 120.0
#: Seconds between two looks.
POLL_S = 0.2


def wait_until_idle(
    spark: Any,
    busy: Callable[[], bool],
    quiet: float = QUIET_S,
    patience: float = PATIENCE_S,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> bool:
    """Whether Spark ran no job and ``busy()`` stayed false for ``quiet`` seconds in a row
    before ``patience`` seconds passed."""
    tracker = spark.sparkContext.statusTracker()
    start = clock()
    calm_since: float | None = None
    while True:
        now = clock()
        if busy() or len(tracker.getActiveJobsIds()) > 0:
            calm_since = None
        elif calm_since is None:
            calm_since = now
        elif now - calm_since >= quiet:
            return True
        if now - start >= patience:
            return False
        sleep(POLL_S)


def warm_python_workers(spark: Any) -> None:
    """Read one tiny file through the ``auger`` data source, so that Spark has started the
    Python processes a scan needs (a classic session: Spark Connect's server warms its own).
    Runs on a thread of its own, whose job group it sets."""
    if is_connect(spark):
        return
    with tempfile.TemporaryDirectory(prefix="auger-warm-up-") as root:
        (Path(root) / "warm.csvh").write_text("a\n1\n")
        spark.sparkContext.setJobGroup(WARM_UP_GROUP, "start Spark's Python workers", True)
        spark.read.format("auger").option("format", "csvh").load(root).collect()


def warm_when_idle(spark: Any, busy: Callable[[], bool]) -> bool:
    """:func:`warm_python_workers` once Spark and the server are idle; whether it ran. A
    failure (Spark stopping under it) is only logged: the first query starts the workers."""
    try:
        if not wait_until_idle(spark, busy):
            return False
        started = time.monotonic()
        warm_python_workers(spark)
        _log.info("Spark's Python workers started in %.1f s", time.monotonic() - started)
        return True
    except Exception:
        _log.debug("warming Spark's Python workers failed", exc_info=True)
        return False
