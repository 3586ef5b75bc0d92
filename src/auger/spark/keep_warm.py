"""Spark's Python workers kept while a person is between queries.

Spark stops the idle Python processes of a kind (its ``PythonWorkerFactory``: the workers that
run the ``auger`` data source's tasks, and those that create the source and plan its reads on
the driver) once none of them has finished any work for a minute, a limit Spark does not let
a user set. A person exploring files thinks between queries, often longer than that, and then
every query over raw files starts those processes again (each imports pyarrow and auger's
readers): measured on two cores, a GROUP BY over 300 MB of CSV with a header took 1.1-1.3 s a
few seconds after the previous query and 2.5-3.0 s 70-130 s after it, the job
starting 1.2 s later (planning in new processes) and running 0.6 s longer (new workers).
Queries answered from the raw-file cache read through Spark's own reader and lose nothing.

So an engine that warmed its local Spark up (:mod:`auger.spark.warm_up`) also reads a file of
two lines through the data source every :data:`KEEP_EVERY_S` seconds while it is idle (about
0.2 s on two cores), for up to :data:`KEEP_FOR_S` after its last statement; then Spark may
stop the workers, as it does for any idle session. The read is never cancelled for a query
that arrives meanwhile (a cancelled task loses its worker, the very thing kept): the query
waits for it, a fraction of a second at most. ``AUGER_WARM_UP=0`` turns it off with the rest
of the warm-up.
"""

from __future__ import annotations

import logging
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from auger.spark.datasource import PLANNED_SOURCE
from auger.spark.handles import is_connect
from auger.spark.warm_up import QUIET_S, anything_running

__all__ = [
    "KEEP_EVERY_S",
    "KEEP_FOR_S",
    "KEEP_WARM_GROUP",
    "keep_workers_warm",
    "touch_python_workers",
]

_log = logging.getLogger(__name__)

#: Seconds between two reads: within Spark's minute, which its monitor checks every 10 s.
KEEP_EVERY_S = 40.0
#: Seconds after an engine's last statement for which its workers are kept.
KEEP_FOR_S = 1800.0
#: Seconds between two looks at the engine.
LOOK_S = 1.0
#: The Spark job group of the read (Spark's UI shows it under this name).
KEEP_WARM_GROUP = "auger-keep-warm"


def touch_python_workers(spark: Any) -> int:
    """Plan and read a file of two lines through the ``auger`` data source, on the calling
    thread in :data:`KEEP_WARM_GROUP`: Spark counts the planning processes and one task's
    worker busy again, which keeps every idle process of their kinds. The rows read."""
    with tempfile.TemporaryDirectory(prefix="auger-keep-warm-") as root:
        (Path(root) / "keep.csv").write_text("1,a\n2,b\n")
        spark.sparkContext.setJobGroup(KEEP_WARM_GROUP, "keep Spark's Python workers", False)
        frame = spark.read.format(PLANNED_SOURCE).option("format", "csv").load(root)
        return int(frame.count())


def keep_workers_warm(
    spark: Any,
    busy: Callable[[], bool],
    idle_for: Callable[[], float],
    ended: Callable[[], bool],
    touch: Callable[[Any], Any] = touch_python_workers,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> int:
    """Until ``ended()``: :func:`touch_python_workers` once :data:`KEEP_EVERY_S` passed since
    the last touch (or the call), when neither ``busy()`` nor a Spark job runs and
    ``idle_for()`` (seconds since the engine's last statement) is between
    :data:`auger.spark.warm_up.QUIET_S` and :data:`KEEP_FOR_S`: a script's statements, one
    after the other, never wait for a touch.
    How many touches ran. A failing touch (Spark stopped under it) ends the loop: an engine
    that starts Spark again warms the new one up itself."""
    if is_connect(spark):
        return 0
    touched = 0
    last = clock()
    while not ended():
        sleep(LOOK_S)
        idle = idle_for()
        if clock() - last < KEEP_EVERY_S or not QUIET_S <= idle <= KEEP_FOR_S:
            continue
        if anything_running(spark, busy):
            continue
        try:
            touch(spark)
        except Exception:
            _log.debug("keeping Spark's Python workers failed", exc_info=True)
            return touched
        touched += 1
        last = clock()
    return touched
