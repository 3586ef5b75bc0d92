"""Tables in an object store: a commit readers respect, removal, and server leases.

An object store has no rename, so a table directory cannot be written aside and moved into
place in one step as on local disk. Instead a table under a prefix is hidden while it is being
written or removed by a *pending marker*, the object ``<table>/.auger-pending``:

1. :func:`begin` uploads the marker first (it names the writing server);
2. the data objects are written below the table prefix (by Spark tasks);
3. :func:`commit` deletes the marker: one request, after which the whole table is visible.

Readers skip every directory that holds a pending marker (:func:`hide_pending`, applied by
:mod:`auger.storage.selection` to the listing it makes anyway, so no request is added), and a
table path that holds one is not found. A failed write removes its data objects and then the
marker, last (:func:`abort`); removing a table (DROP TABLE, a temporary table at session close)
puts a marker first, so readers never see a half-deleted table either (:func:`remove_table`).

A server that is killed cannot clean up, and on several hosts its pid says nothing. Every server
keeps a *lease* in each writable object-store workspace, ``.auger-servers/<engine id>.json``,
written at start and refreshed every ``exec.lease_interval_seconds`` by a daemon thread
(:class:`ServerLease`). A lease older than three intervals (by the clock recorded in it) is dead,
and so is a missing one; the start-up sweep (:func:`sweep_workspace`) removes the pending tables
and session temporary locations whose owner's lease is dead, then the dead lease itself.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import socket
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from auger.errors import UserError
from auger.storage import filesystem as fs

__all__ = [
    "LEASE_DIR",
    "OWNER_MARKER",
    "PENDING_MARKER",
    "ServerLease",
    "abort",
    "begin",
    "commit",
    "hide_pending",
    "is_pending",
    "lease_alive",
    "read_json",
    "remove_table",
    "sweep_workspace",
    "write_json",
]

_log = logging.getLogger(__name__)

PENDING_MARKER = ".auger-pending"
#: the owner marker of a session temporary location (the same name as on local disk)
OWNER_MARKER = ".auger-owner"
LEASE_DIR = ".auger-servers"
#: a lease not refreshed for this many intervals belongs to a dead server
LEASE_EXPIRY_INTERVALS = 3
DEFAULT_LEASE_INTERVAL = 30.0

Clock = Callable[[], float]


def write_json(path: str, value: Any) -> None:
    """Upload a small JSON object (one request: it appears whole or not at all)."""
    with fs.open_output(path) as out:
        out.write(json.dumps(value).encode("utf-8"))


def read_json(path: str) -> Any:
    """A small JSON object, or None when it is missing or unreadable."""
    try:
        return json.loads(fs.read_text(path))
    except (OSError, ValueError, UserError):
        return None


# --- the commit --------------------------------------------------------------------------------


def begin(table: str, engine_id: str, query: str) -> None:
    """Hide ``table`` (a prefix) before any of its objects is written."""
    write_json(
        fs.join(table, PENDING_MARKER),
        {"engine_id": engine_id, "query": query, "host": socket.gethostname(), "at": time.time()},
    )


def commit(table: str) -> None:
    """Make a table written after :func:`begin` visible: delete its pending marker."""
    fs.delete_file(fs.join(table, PENDING_MARKER))


def is_pending(table: str) -> bool:
    """Whether ``table`` is hidden by a pending marker (being written or removed)."""
    return fs.isfile(fs.join(table, PENDING_MARKER))


def _delete_below(table: str) -> None:
    """Delete every object below ``table`` except its pending marker, which goes last."""
    marker = fs.join(table, PENDING_MARKER)
    try:
        below = fs.walk_files(table)
    except UserError:  # nothing there (any more)
        below = []
    for info in below:
        if info.path != marker:
            with contextlib.suppress(UserError):  # already gone
                fs.delete_file(info.path)
    with contextlib.suppress(UserError):
        fs.delete_file(marker)
    with contextlib.suppress(UserError):
        fs.delete_dir(table)  # a directory placeholder object, if the store made one


def abort(table: str) -> None:
    """Undo a write begun with :func:`begin`: data objects first, the marker last."""
    _delete_below(table)


def remove_table(table: str, engine_id: str, query: str = "DROP TABLE") -> None:
    """Remove a table (every object under its prefix, or the one object it is) so that no
    reader sees it half deleted: it is hidden by a pending marker first."""
    info = fs.file_info(table)
    if info is None:
        return
    if not info.is_dir:
        fs.delete_file(table)
        return
    begin(table, engine_id, query)
    _delete_below(table)


def hide_pending(files: Sequence[fs.FileInfo], root: str) -> list[fs.FileInfo]:
    """The files of a listing of ``root`` without those below a directory holding a pending
    marker, and without the markers; raise not-found when ``root`` itself is pending.

    The listing must include the markers (they are hidden names that listings skip otherwise).
    """
    pending = [fs.dirname(f.path) for f in files if fs.basename(f.path) == PENDING_MARKER]
    if not pending:
        return list(files)
    base = fs.normpath(root)
    if base in pending:
        raise UserError.validation(
            f"Table [{root}] not found: it is being written or removed",
            [f"Path: {root}", "A table appears once the statement writing it has committed"],
        )
    prefixes = tuple(p.rstrip("/") + "/" for p in pending)
    return [
        f
        for f in files
        if not f.path.startswith(prefixes) and fs.basename(f.path) != PENDING_MARKER
    ]


# --- leases ------------------------------------------------------------------------------------


def _lease_path(workspace_location: str, engine_id: str) -> str:
    return fs.join(workspace_location, LEASE_DIR, f"{engine_id}.json")


@dataclass(frozen=True)
class LeaseState:
    """What a lease object says: who, when it was last written, how often it is refreshed."""

    engine_id: str
    written: float
    interval: float

    def alive(self, now: float) -> bool:
        return now - self.written <= LEASE_EXPIRY_INTERVALS * self.interval


def _read_lease(path: str) -> LeaseState | None:
    raw = read_json(path)
    try:
        return LeaseState(str(raw["engine_id"]), float(raw["written"]), float(raw["interval"]))
    except (TypeError, KeyError, ValueError):
        return None


def lease_alive(workspace_location: str, engine_id: str, clock: Clock = time.time) -> bool:
    """Whether the server ``engine_id`` holds a live lease in that workspace."""
    state = _read_lease(_lease_path(workspace_location, engine_id))
    return state is not None and state.alive(clock())


class ServerLease:
    """This server's leases in the writable object-store workspaces, refreshed in the background.

    Args:
        engine_id: the server's id (recorded in the pending and owner markers it writes).
        locations: workspace locations (URIs) to keep a lease in.
        interval: seconds between refreshes; a lease is dead after three missed ones.
        clock: seconds since the epoch (tests pass a fake one).
    """

    def __init__(
        self,
        engine_id: str,
        locations: Iterable[str],
        interval: float = DEFAULT_LEASE_INTERVAL,
        clock: Clock = time.time,
    ) -> None:
        if interval <= 0:
            raise UserError.validation(
                f"exec.lease_interval_seconds must be positive, not [{interval}]"
            )
        self.engine_id = engine_id
        self.locations = list(dict.fromkeys(locations))
        self.interval = interval
        self.clock = clock
        self._stop = threading.Event()
        # held for each refresh and by stop: a refresh under way when stop is called finishes
        # before the leases are deleted, and none starts after (else it would re-create one)
        self._writing = threading.Lock()
        self._thread: threading.Thread | None = None

    def refresh(self) -> None:
        """Write every lease now (a failed upload is logged; the next refresh retries)."""
        body = {
            "engine_id": self.engine_id,
            "written": self.clock(),
            "interval": self.interval,
            "host": socket.gethostname(),
            "pid": os.getpid(),
        }
        with self._writing:
            for location in self.locations:
                if self._stop.is_set():
                    return
                try:
                    write_json(_lease_path(location, self.engine_id), body)
                except (OSError, UserError) as exc:
                    _log.warning("Could not write the server lease in [%s]: %s", location, exc)

    def start(self) -> None:
        """Write the leases and keep refreshing them until :meth:`stop`."""
        if not self.locations:
            return
        self.refresh()
        self._thread = threading.Thread(
            target=self._run, name=f"auger-lease-{self.engine_id[:8]}", daemon=True
        )
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self.refresh()

    def stop(self) -> None:
        """Stop refreshing and delete the leases (a clean shutdown leaves nothing behind)."""
        self._stop.set()
        with self._writing:
            for location in self.locations:
                with contextlib.suppress(OSError, UserError):
                    fs.delete_file(_lease_path(location, self.engine_id))


# --- the start-up sweep ------------------------------------------------------------------------


def sweep_workspace(
    workspace_location: str, live_engine_ids: Iterable[str], clock: Clock = time.time
) -> list[str]:
    """Remove what dead servers left in an object-store workspace.

    Pending tables (a killed CTAS) and session temporary locations (a killed server's temporary
    tables) whose owner is neither one of ``live_engine_ids`` (engines of this process) nor
    holds a live lease are removed; then the dead leases.

    Returns:
        The removed table and location prefixes.
    """
    live = set(live_engine_ids)
    now = clock()
    removed: list[str] = []
    try:
        everything = fs.walk_files(workspace_location)
    except UserError as exc:
        _log.warning("Could not list [%s] to sweep it: %s", workspace_location, exc)
        return removed
    lease_root = fs.join(workspace_location, LEASE_DIR) + "/"
    leases: dict[str, LeaseState | None] = {}
    owned: list[tuple[str, str]] = []  # (prefix to remove, owner engine id)
    for info in everything:
        name = fs.basename(info.path)
        if info.path.startswith(lease_root):
            leases[name.removesuffix(".json")] = _read_lease(info.path)
        elif name in (PENDING_MARKER, OWNER_MARKER):
            raw = read_json(info.path)
            owner = raw.get("engine_id") if isinstance(raw, dict) else None
            if owner:
                owned.append((fs.dirname(info.path), str(owner)))

    def dead(engine_id: str) -> bool:
        if engine_id in live:
            return False
        state = leases.get(engine_id)
        return state is None or not state.alive(now)

    for prefix, owner in owned:
        if not dead(owner) or any(prefix.startswith(r + "/") for r in removed):
            continue
        try:
            remove_table(prefix, next(iter(live), "sweep"), "start-up sweep")
        except UserError as exc:
            _log.warning("Could not remove [%s] left by a dead server: %s", prefix, exc)
            continue
        _log.warning("Removed [%s] left by server %s, whose lease has expired", prefix, owner)
        removed.append(prefix)
    for engine_id, state in leases.items():
        if dead(engine_id) and (state is None or engine_id == state.engine_id):
            with contextlib.suppress(UserError):
                fs.delete_file(_lease_path(workspace_location, engine_id))
    return removed
