"""The DataFrames of recent small whole-file reads, kept for the next statement over the same
files (see :mod:`auger.spark.local_scan`), and of recent scans over raw-file cache entries (see
:mod:`auger.spark.cached_scan`), kept for the next statement over the same parts.

Each :class:`~auger.engine.Engine` owns one :class:`KeptFrames` and empties it when it shuts
down; statements reach it through their context (``StatementContext.kept_frames``). Two
engines of one process never see each other's frames. Nothing here loads pyarrow or pyspark:
the engine makes one when it starts.

A frame kept in a classic session is also a temporary view of that session, registered once
when it is kept. ``spark.sql(query, frame=...)`` registers and drops a view of each frame it
is given around every query, which costs more than a small query's own analysis; a query
over a kept frame names its view instead (:meth:`KeptFrames.views_of`). A view is dropped
when its frame leaves, but never while a statement is analysing a query over it.

The projection a statement applies to a scan's frame (a headerless file's ``columns[n]`` as
plain columns) is kept with a kept frame too, view and all (:meth:`KeptFrames.derived`):
made anew, it cost a warm query over the raw-file cache as much planning again as the frame
itself.

The DataFrames of statements over the views of small reads are kept here too
(:attr:`KeptFrames.plans`, see :mod:`auger.spark.plan_reuse`), and leave with the frames they
read.
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from auger.spark.plan_reuse import ReusedPlans

__all__ = [
    "DERIVED_PER_FRAME",
    "KEPT_FRAME_BYTES",
    "LISTED_FILE_BYTES",
    "PLAN_FRAME_BYTES",
    "KeptFrames",
]

_log = logging.getLogger(__name__)

#: The most Arrow bytes of whole-file reads whose frames one engine keeps, in all (a frame of
#: no rows counting for :data:`PLAN_FRAME_BYTES`).
KEPT_FRAME_BYTES = 32 * 1024 * 1024
#: What a kept frame that holds no rows (a scan over files: its plan) counts for against
#: :data:`KEPT_FRAME_BYTES`, so that the bound also bounds how many such frames are kept (512),
#: and what each file it lists adds (Spark keeps each one's status in the plan): a frame over
#: 4,096 files counts 4 MiB more.
PLAN_FRAME_BYTES = 64 * 1024
LISTED_FILE_BYTES = 1024
#: The most frames made of one kept frame (:meth:`KeptFrames.derived`) kept with it.
DERIVED_PER_FRAME = 8


@dataclass(eq=False)
class _Kept:
    frame: Any
    #: what the frame's maker reports of it each time it is used (its read's facts)
    facts: Any
    nbytes: int
    spark: Any
    #: the session's temporary view of the frame (None: the frame has none)
    view: str | None = None
    #: the frame's rows are held by the JVM (a small read, or a frame made of one), not read
    #: from files when it runs
    local: bool = False
    #: statements analysing a query over the view right now
    pins: int = 0
    #: no longer kept: the last statement to unpin it drops its view
    gone: bool = False
    #: frames made of this one (the projections statements apply to it), by what they are
    derived: OrderedDict[str, _Kept] = field(default_factory=OrderedDict)


class KeptFrames:
    """The DataFrames of recent small whole-file reads, by spec, and of scans over raw-file
    cache entries, by spec and parts; least recently used dropped first past ``most_bytes``
    (:data:`KEPT_FRAME_BYTES`).

    Tied to one SparkSession (the JVM holds the rows of each kept frame): a frame asked for
    under another session empties it. A changed file has another spec (its size or modification
    time), so its old frame is never found again and ages out.
    """

    def __init__(self, most_bytes: int = KEPT_FRAME_BYTES) -> None:
        self.most_bytes = most_bytes
        self._owner: Any = None
        self._entries: OrderedDict[str, _Kept] = OrderedDict()
        #: the entries by their frame's identity, to find a statement's frames among them
        self._by_frame: dict[int, _Kept] = {}
        self._bytes = 0
        self._lock = threading.Lock()
        #: the entries by their view's name
        self._by_view: dict[str, _Kept] = {}
        #: statements' plans over the views of local frames (:mod:`auger.spark.plan_reuse`)
        self.plans = ReusedPlans()

    def get(self, spark: Any, key: str) -> tuple[Any, Any] | None:
        """The frame and read facts kept for ``key`` under ``spark``, or None."""
        with self._lock:
            if spark is not self._owner:
                return None
            entry = self._entries.get(key)
            if entry is None:
                return None
            self._entries.move_to_end(key)
            return entry.frame, entry.facts

    def put(
        self,
        spark: Any,
        key: str,
        frame: Any,
        facts: Any,
        nbytes: int,
        view: bool = False,
        local: bool = False,
    ) -> None:
        """Keep ``frame`` (built from ``nbytes`` of Arrow data, or :data:`PLAN_FRAME_BYTES`
        for a frame of no rows) with ``facts`` (what its maker reports of it: a read's
        :class:`~auger.spark.scan_report.TaskFacts`...) under ``key``; with ``view``, as a
        temporary view of ``spark`` too (a classic session's frame); ``local``: the frame's
        rows are held by the JVM (a read on the driver), not read from files."""
        if nbytes > self.most_bytes:
            return
        entry = _Kept(frame, facts, nbytes, spark, local=local)
        if view:
            entry.view = f"kept{uuid.uuid4().hex[:16]}"
            frame.createOrReplaceTempView(entry.view)
        left: list[_Kept] = []
        with self._lock:
            if spark is not self._owner:
                left.extend(self._entries.values())
                self._entries.clear()
                self._bytes = 0
                self._owner = spark
            old = self._entries.pop(key, None)
            if old is not None:
                self._bytes -= old.nbytes
                left.append(old)
            self._entries[key] = entry
            self._by_frame[id(frame)] = entry
            if entry.view is not None:
                self._by_view[entry.view] = entry
            self._bytes += nbytes
            while self._bytes > self.most_bytes:
                _, dropped = self._entries.popitem(last=False)
                self._bytes -= dropped.nbytes
                left.append(dropped)
            views = self._leave(left)
        _drop_views(views)

    def derived(self, frame: Any, what: str, make: Callable[[], Any]) -> Any:
        """The frame ``make()`` makes of ``frame`` (the projection a statement applies to a
        scan's frame), ``what`` saying what it is.

        When ``frame`` is kept, so is the frame made of it, for as long as ``frame`` is (the
        last :data:`DERIVED_PER_FRAME` of them), with a view of its own when ``frame`` has one:
        the next statement that asks for the same projection neither makes it nor registers
        a view of it."""
        with self._lock:
            entry = self._by_frame.get(id(frame))
            if entry is None or entry.frame is not frame or entry.gone:
                return make()
            found = entry.derived.get(what)
            if found is not None:
                entry.derived.move_to_end(what)
                return found.frame
        made = make()
        child = _Kept(made, entry.facts, 0, entry.spark, local=entry.local)
        if entry.view is not None:
            child.view = f"kept{uuid.uuid4().hex[:16]}"
            made.createOrReplaceTempView(child.view)
        with self._lock:
            if entry.gone or what in entry.derived:
                # its frame left meanwhile, or another statement kept the same projection
                views = self._leave([child])
            else:
                entry.derived[what] = child
                self._by_frame[id(made)] = child
                if child.view is not None:
                    self._by_view[child.view] = child
                views = []
                while len(entry.derived) > DERIVED_PER_FRAME:
                    _, oldest = entry.derived.popitem(last=False)
                    views += self._leave([oldest])
        _drop_views(views)
        return made

    @contextmanager
    def views_of(self, frames: Mapping[str, Any]) -> Iterator[dict[str, str]]:
        """The temporary views of those of ``frames`` (a query's tables by name) that are kept
        frames with a view, by name; each view stays while the block runs (a classic session
        analyses a query in ``spark.sql``, so the block is around that call)."""
        pinned: list[_Kept] = []
        views: dict[str, str] = {}
        with self._lock:
            for name, frame in frames.items():
                entry = self._by_frame.get(id(frame))
                if entry is None or entry.frame is not frame or entry.view is None:
                    continue
                entry.pins += 1
                pinned.append(entry)
                views[name] = entry.view
        try:
            yield views
        finally:
            done: list[tuple[Any, str]] = []
            with self._lock:
                for entry in pinned:
                    entry.pins -= 1
                    if entry.gone and entry.pins == 0 and entry.view is not None:
                        done.append((entry.spark, entry.view))
            _drop_views(done)

    def reusable_plans(self, views: Mapping[str, str]) -> ReusedPlans | None:
        """The plans a query over ``views`` (the views :meth:`views_of` named for its
        tables) may reuse: this engine's when every one is the view of a kept frame whose
        rows the JVM holds, else None (none when there are no views)."""
        if not views:
            return None
        with self._lock:
            for view in views.values():
                entry = self._by_view.get(view)
                if entry is None or entry.gone or not entry.local:
                    return None
        return self.plans

    def clear(self) -> None:
        """Forget every kept frame, and drop their views (the engine that owns them shuts
        down; Spark stays for other engines)."""
        with self._lock:
            views = self._leave(list(self._entries.values()))
            self._entries.clear()
            self._bytes = 0
            self._owner = None
        self.plans.clear()
        _drop_views(views)

    def _leave(self, entries: list[_Kept]) -> list[tuple[Any, str]]:
        """Mark ``entries`` no longer kept (the lock held); the views to drop now, those no
        statement is analysing a query over."""
        views = []
        for entry in entries:
            if self._by_frame.get(id(entry.frame)) is entry:
                del self._by_frame[id(entry.frame)]
            entry.gone = True
            if entry.view is not None:
                if self._by_view.get(entry.view) is entry:
                    del self._by_view[entry.view]
                self.plans.forget([entry.view])
            if entry.view is not None and entry.pins == 0:
                views.append((entry.spark, entry.view))
            views += self._leave(list(entry.derived.values()))  # they go with it
        return views

    def view_names(self) -> set[str]:
        """The temporary views of the kept frames, and of the frames made of them."""
        with self._lock:
            kept = [*self._entries.values()]
            kept += [d for e in self._entries.values() for d in e.derived.values()]
            return {e.view for e in kept if e.view is not None}

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def nbytes(self) -> int:
        """The Arrow bytes the kept frames were built from."""
        return self._bytes


def _drop_views(views: list[tuple[Any, str]]) -> None:
    """Drop those temporary views; a session that has stopped took them with it."""
    for spark, view in views:
        try:
            spark.catalog.dropTempView(view)
        except Exception:  # the session or its JVM is gone
            _log.debug("dropping kept view %s failed", view, exc_info=True)
