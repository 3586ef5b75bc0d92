"""A statement repeated over small files runs the DataFrame Spark planned for it before.

A warm query over a file of a few hundred kilobytes reads nothing: the rows are a kept frame's
local relation (:mod:`auger.spark.local_scan`, :mod:`auger.spark.kept_frames`). What is left is
Spark's fixed work per query, most of it planning: parsing and analysing the SQL, optimising
it, choosing the physical plan and wrapping it for adaptive execution (18-20 ms of a 55 ms
``GROUP BY`` over cp.`employee.json` on two cores). A DataFrame plans once and can run many
times, so the same Spark SQL over the same kept views runs the DataFrame planned the first
time, whose job still runs each time (measured: 23-27 ms against 56-74 ms).

Re-running a DataFrame gives what planning the same text again would give only when nothing it
reads or computes can differ between runs, so a plan is reused only when all of these hold:

- every table of the query is a kept frame whose rows the JVM holds (a small whole-file read,
  or a projection of one): those rows are fixed for as long as the frame is kept, and a changed
  file has another frame with another view name, so another text. A scan of files (the
  raw-file cache's entries, Parquet) is planned again each time: Spark's adaptive execution
  would otherwise reuse the map side of a shuffle it ran before, answering from an earlier
  read.
- its analysed plan is deterministic (no ``rand()``, ``uuid()``...) and has no expression Spark
  fixes while optimising (``CURRENT_TIMESTAMP``, ``NOW()``, ``CURRENT_DATE``,
  ``CURRENT_USER``...): those must be evaluated per statement.
- its last run gave the whole answer: a run that failed, was cancelled or was closed early can
  leave Spark's adaptive plan waiting for a stage that will never end, so such a DataFrame is
  dropped (:func:`ran` is told by :mod:`auger.spark.jobs`).
- no other statement is running it: a DataFrame runs once at a time (its metrics and adaptive
  plan are its own); a statement that finds it taken plans its own.

The plans are held by the engine's :class:`~auger.spark.kept_frames.KeptFrames` and leave with
the kept frames they read.
"""

from __future__ import annotations

import logging
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

__all__ = ["KEPT_PLANS", "ReusedPlans", "ran"]

_log = logging.getLogger(__name__)

#: The most statements' plans one engine keeps.
KEPT_PLANS = 64


@dataclass(eq=False)
class _Plan:
    frame: Any
    #: the kept views the query reads
    views: frozenset[str]
    #: whether its plan may run again (deterministic, nothing fixed at optimisation)
    reusable: bool
    #: a statement is running it, or it has not yet run to its end once
    taken: bool = True


#: the plans whose runs are awaited, by their DataFrame: who to tell of the outcome
_OWNERS: weakref.WeakKeyDictionary[Any, ReusedPlans] = weakref.WeakKeyDictionary()
_OWNERS_LOCK = threading.Lock()


def ran(frame: Any, whole: bool) -> None:
    """Tell the plans ``frame`` may belong to that a run of it ended: with the whole answer
    (``whole``), or not (it failed, was cancelled or was closed early)."""
    try:
        with _OWNERS_LOCK:
            owner = _OWNERS.get(frame)
    except TypeError:  # a frame that cannot be a key (none of those is ever kept)
        return
    if owner is not None:
        owner.settle(frame, whole)


class ReusedPlans:
    """The DataFrames of recent statements over kept views, by their Spark SQL text; the least
    recently used dropped past ``most`` (:data:`KEPT_PLANS`)."""

    def __init__(self, most: int = KEPT_PLANS) -> None:
        self.most = most
        self._plans: OrderedDict[str, _Plan] = OrderedDict()
        self._lock = threading.Lock()
        #: Spark's pattern of the expressions its optimiser fixes, with the JVM it is of (a
        #: look-up of a Scala object costs a round trip per part of its name)
        self._current_like: tuple[Any, Any] | None = None

    def take(self, text: str) -> Any:
        """The DataFrame planned before for ``text``, now taken by the caller's statement, or
        None (none planned, not reusable, or another statement is running it)."""
        with self._lock:
            plan = self._plans.get(text)
            if plan is None or not plan.reusable or plan.taken:
                return None
            plan.taken = True
            self._plans.move_to_end(text)
            frame = plan.frame
        _reset_metrics(frame)
        return frame

    def offer(self, text: str, views: Iterable[str], frame: Any) -> None:
        """Keep ``frame``, the DataFrame just planned for ``text`` over ``views``, to run again
        once a run of it has given the whole answer; a text found not reusable before is not
        looked at again."""
        with self._lock:
            known = self._plans.get(text)
            if known is not None and (not known.reusable or not known.taken):
                return  # never reusable, or another statement's plan is ready for the next
        plan = _Plan(frame, frozenset(views), _reusable(frame, self._current_like_pattern))
        with self._lock:
            known = self._plans.get(text)
            if known is not None and known.reusable and not known.taken:
                return  # another statement's run of the same text ended meanwhile
            self._plans[text] = plan
            self._plans.move_to_end(text)
            while len(self._plans) > self.most:
                self._plans.popitem(last=False)
        if plan.reusable:
            with _OWNERS_LOCK:
                _OWNERS[frame] = self

    def settle(self, frame: Any, whole: bool) -> None:
        """A run of ``frame`` ended (see :func:`ran`): free for the next statement, or
        dropped."""
        with self._lock:
            for text, plan in self._plans.items():
                if plan.frame is frame:
                    if whole:
                        plan.taken = False
                    else:
                        del self._plans[text]
                    return

    def forget(self, views: Iterable[str]) -> None:
        """Drop the plans that read any of ``views`` (their kept frames leave)."""
        gone = set(views)
        if not gone:
            return
        with self._lock:
            for text in [t for t, p in self._plans.items() if p.views & gone]:
                del self._plans[text]

    def clear(self) -> None:
        with self._lock:
            self._plans.clear()

    def _current_like_pattern(self, jvm: Any) -> Any:
        found = self._current_like
        if found is None or found[0] is not jvm:
            found = (jvm, jvm.org.apache.spark.sql.catalyst.trees.TreePattern.CURRENT_LIKE())
            self._current_like = found
        return found[1]

    def __len__(self) -> int:
        return len(self._plans)


def _reusable(frame: Any, current_like: Callable[[Any], Any]) -> bool:
    """Whether running ``frame`` again answers as planning its query again would: its analysed
    plan (subqueries included) is deterministic and holds nothing Spark's optimiser replaces
    by the value it has when it runs (the current time, date, user, database...), whose
    pattern ``current_like`` gives for a JVM."""
    try:
        analyzed = frame._jdf.queryExecution().analyzed()
        if not analyzed.deterministic():
            return False
        return not bool(analyzed.containsPattern(current_like(frame.sparkSession._jvm)))
    except Exception:  # a plan Spark cannot say this of is planned each time
        _log.debug("whether a plan may run again is not known", exc_info=True)
        return False


def _reset_metrics(frame: Any) -> None:
    """Zero what the last run of ``frame`` measured (a run read through Spark's row stream
    does not, and a query profile reads them)."""
    frame._jdf.queryExecution().executedPlan().resetMetrics()
