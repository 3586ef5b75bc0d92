"""Query profiles on disk: one JSON file per query, written when it starts and when it ends.

A profile keeps what a user needs to understand a past query: its text, user, state, start and
end, row count, error, and the Spark stages that ran it with their timings. The store keeps an
in-memory index (loaded from the directory at start) so listing never re-reads every file, and
drops the oldest profiles past a configured count.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
import threading
import time
import uuid
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["STATE_CODES", "STATE_NAMES", "Profile", "ProfileStore"]

_log = logging.getLogger(__name__)

#: Drill's ``QueryState`` protobuf numbers and the display names its web UI uses.
STATE_CODES: dict[str, int] = {
    "STARTING": 0,
    "RUNNING": 1,
    "COMPLETED": 2,
    "CANCELED": 3,
    "FAILED": 4,
    "CANCELLATION_REQUESTED": 5,
    "ENQUEUED": 6,
    "PREPARING": 7,
    "PLANNING": 8,
}
STATE_NAMES: dict[str, str] = {
    "STARTING": "Starting",
    "RUNNING": "Running",
    "COMPLETED": "Succeeded",
    "CANCELED": "Canceled",
    "FAILED": "Failed",
    "CANCELLATION_REQUESTED": "Cancellation Requested",
    "ENQUEUED": "Enqueued",
    "PREPARING": "Preparing",
    "PLANNING": "Planning",
}


@dataclass
class Profile:
    """One query's record. Times are epoch milliseconds; ``end`` is 0 while running."""

    query_id: str
    query: str
    user: str
    session_id: str
    start: int
    end: int = 0
    state: str = "RUNNING"
    rows: int = 0
    error: str = ""
    verbose_error: str = ""
    columns: list[str] = field(default_factory=list)
    stages: list[dict[str, Any]] = field(default_factory=list)
    #: what the scans noticed (columns no file has, records skipped...): the result's messages
    warnings: list[str] = field(default_factory=list)
    #: per file scan: files listed, pruned and read, rows read, records skipped
    scans: list[dict[str, Any]] = field(default_factory=list)
    #: the plan that ran, the tree EXPLAIN gives with the rows and time Spark measured per
    #: operator (see :func:`auger.sql.planning.explain.plan_graph`)
    plan: dict[str, Any] | None = None
    #: when a pool thread took the query up, and when its planning was done (epoch ms; 0: not
    #: reached), which split the run into queued, planning and execution time
    run_start: int = 0
    planned: int = 0
    #: the server that ran the query (``host:port``): servers may share a profile store
    server: str = ""

    @property
    def finished(self) -> bool:
        return self.state in ("COMPLETED", "FAILED", "CANCELED")

    def to_json(
        self, foreman: str, ports: Mapping[str, int | None] | None = None
    ) -> dict[str, Any]:
        """The shape of Drill's serialized ``QueryProfile`` (plus auger's stage timings).

        ``ports`` are Drill's port names and the ports the server really listens on
        (:meth:`auger.engine.Engine.drill_ports`); one nothing listens on is left out."""
        part = uuid.UUID(self.query_id).int
        hi, lo = part >> 64, part & (2**64 - 1)
        signed = lambda v: v - 2**64 if v >= 2**63 else v  # noqa: E731 - Java longs are signed
        return {
            "id": {"part1": signed(hi), "part2": signed(lo)},
            "queryId": self.query_id,
            "type": 1,
            "start": self.start,
            "end": self.end,
            "query": self.query,
            "plan": plan_text(self.plan),
            "planTree": self.plan,
            "timings": self.timings(),
            "foreman": {
                "address": foreman,
                **{f"{name}Port": p for name, p in (ports or {}).items() if p is not None},
            },
            "state": STATE_CODES.get(self.state, 1),
            "stateName": self.state,
            "totalFragments": max(1, len(self.stages)),
            "finishedFragments": len([s for s in self.stages if s.get("status") == "COMPLETE"]),
            "fragmentProfile": [],
            "user": self.user,
            "error": self.error,
            "verboseError": self.verbose_error or self.error,
            "errorId": "",
            "errorNode": foreman if self.error else "",
            "queueName": "-",
            "totalCost": 1.0,
            "rows": self.rows,
            "columns": self.columns,
            "stages": self.stages,
            "warnings": self.warnings,
            "scans": self.scans,
            "server": self.server,
        }

    def timings(self) -> dict[str, int | None]:
        """Milliseconds queued (waiting for a thread), planning and executing; None for a
        phase the query did not reach, or one an older profile did not record."""
        end = self.end or int(time.time() * 1000)
        queued = self.run_start - self.start if self.run_start else None
        planning = self.planned - self.run_start if self.planned and self.run_start else None
        execution = end - self.planned if self.planned else None
        return {"queued": queued, "planning": planning, "execution": execution}

    def summary(self, foreman: str, base_url: str) -> dict[str, Any]:
        """One entry of ``/profiles.json`` (Drill's ``ProfileInfo``)."""
        end = self.end or int(time.time() * 1000)
        return {
            "queryId": self.query_id,
            "startTime": self.start,
            "endTime": end,
            "time": time.strftime("%m/%d/%Y %H:%M:%S", time.gmtime(self.start / 1000)),
            "link": f"{base_url}/profiles/{self.query_id}.json",
            "foreman": foreman,
            "server": self.server,
            "query": self.query[:150],
            "state": STATE_NAMES.get(self.state, self.state.title()),
            "user": self.user,
            "totalCost": 1.0,
            "queueName": "-",
            "duration": _duration(end - self.start),
        }


def plan_text(node: dict[str, Any] | None) -> str:
    """A plan tree as indented text, one operator a line (Drill's ``plan`` is text)."""
    if not node:
        return ""
    lines: list[str] = []

    def walk(n: dict[str, Any], depth: int) -> None:
        lines.append("  " * depth + str(n.get("detail") or n.get("name")))
        for child in n.get("children") or ():
            walk(child, depth + 1)

    walk(node, 0)
    return "\n".join(lines)


def _duration(ms: int) -> str:
    if ms < 60_000:
        return f"{ms / 1000:.3f} sec"
    minutes, ms = divmod(ms, 60_000)
    if minutes < 60:
        return f"{minutes} min {ms / 1000:.3f} sec"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} hr {minutes} min {ms / 1000:.3f} sec"


class ProfileStore:
    """Profiles in a directory, indexed in memory; thread-safe."""

    def __init__(self, directory: str, keep: int = 1000) -> None:
        self.directory = directory
        self.keep = keep
        self._lock = threading.Lock()
        self._index: dict[str, Profile] = {}
        os.makedirs(directory, mode=0o700, exist_ok=True)  # profiles hold users' queries
        self._load()

    def _load(self) -> None:
        for name in os.listdir(self.directory):
            if not name.endswith(".json"):
                continue
            try:
                with open(os.path.join(self.directory, name), encoding="utf-8") as fh:
                    data = json.load(fh)
                profile = Profile(**data)
            except (OSError, ValueError, TypeError):
                _log.warning("skipping unreadable profile %s", name)
                continue
            if not profile.finished:  # the server stopped while it ran
                profile.state = "FAILED"
                profile.error = profile.error or "The server stopped while the query ran"
            self._index[profile.query_id] = profile

    def save(self, profile: Profile) -> None:
        """Write (or rewrite) a profile atomically and index it."""
        with self._lock:
            self._index[profile.query_id] = profile
            stale = self._prune()
        path = os.path.join(self.directory, f"{profile.query_id}.json")
        try:
            fd, tmp = tempfile.mkstemp(prefix=".profile-", dir=self.directory)
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(asdict(profile), fh)
            os.replace(tmp, path)
        except OSError:
            _log.exception("could not write profile %s", profile.query_id)
        for query_id in stale:
            try:
                os.unlink(os.path.join(self.directory, f"{query_id}.json"))
            except OSError:
                pass

    def _prune(self) -> list[str]:
        finished = [p for p in self._index.values() if p.finished]
        if len(finished) <= self.keep:
            return []
        finished.sort(key=lambda p: p.start)
        stale = [p.query_id for p in finished[: len(finished) - self.keep]]
        for query_id in stale:
            self._index.pop(query_id, None)
        return stale

    def get(self, query_id: str) -> Profile | None:
        with self._lock:
            return self._index.get(query_id)

    def list(self) -> list[Profile]:
        """All profiles, newest first."""
        with self._lock:
            profiles = list(self._index.values())
        profiles.sort(key=lambda p: p.start, reverse=True)
        return profiles
