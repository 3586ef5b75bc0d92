"""Session temporary locations: where a session's temporary tables live and how they go away.

As in Drill, every session stores its temporary tables under
``<default temporary workspace>/<session id>/`` (the *session temporary location*, created on
the first CTTAS, folder mode 700), each table in a folder named by a fresh UUID that masks the
user's name for it. The user's names map case-insensitively to those generated names. Closing
the session deletes every location it used, including ones in a former workspace location when
the workspace was moved while the session ran.

Beyond Drill, each session location carries a hidden owner marker (:data:`OWNER_MARKER`) naming
the engine process that made it (engine id, pid, host, process start time, session, user):

* an engine starting up removes locations whose owner engine is dead (a ``kill -9`` leaves them
  behind), and never one whose owner still runs;
* queries of other sessions that name a path inside a session location are refused
  (:func:`foreign_location` finds it; :mod:`auger.storage.denied` refuses it with the other
  denied paths), so a temporary table is reachable only through its own session.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import socket
import threading
import time
import uuid
from collections.abc import Collection, Iterable
from dataclasses import asdict, dataclass

from auger.errors import UserError
from auger.storage import filesystem as fs
from auger.storage import object_tables
from auger.storage.processes import process_alive, process_start
from auger.storage.table_files import TEMPORARY, remove_tree_atomically

__all__ = [
    "OWNER_MARKER",
    "EngineIdentity",
    "SessionTemporaryTables",
    "TemporaryTable",
    "foreign_location",
    "read_owner",
    "sweep_dead_locations",
]

_log = logging.getLogger(__name__)

OWNER_MARKER = ".auger-owner"
_FILE_SYSTEM = "file:///"


@dataclass(frozen=True)
class EngineIdentity:
    """Who owns a session location: one engine in one process on one host."""

    engine_id: str
    pid: int
    host: str
    pid_start: str | None
    started: float

    @classmethod
    def current(cls, engine_id: str) -> EngineIdentity:
        pid = os.getpid()
        return cls(engine_id, pid, socket.gethostname(), process_start(pid), time.time())

    def is_alive(self, live_engine_ids: Collection[str]) -> bool:
        """Whether the owner may still run. Unknown hosts count as alive (never swept)."""
        if self.host != socket.gethostname():
            return True
        if self.pid == os.getpid():
            return self.engine_id in live_engine_ids
        return process_alive(self.pid, self.pid_start)


def write_owner(location: str, owner: EngineIdentity, session_id: str, user: str) -> None:
    """Write the owner marker of a session location (mode 600, like the table files; in an
    object store one upload, whose ``engine_id`` the start-up sweep checks against leases)."""
    data = {**asdict(owner), "session": session_id, "user": user}
    if fs.is_uri(location):
        object_tables.write_json(fs.join(location, OWNER_MARKER), data)
        return
    path = os.path.join(location, OWNER_MARKER)
    tmp = f"{path}.{uuid.uuid4().hex}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, TEMPORARY.file_mode)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh)
        os.chmod(tmp, TEMPORARY.file_mode)
        os.replace(tmp, path)
    except BaseException:  # a full disk: no half-written marker stays behind
        with contextlib.suppress(OSError):
            os.remove(tmp)
        raise


def read_owner(location: str) -> EngineIdentity | None:
    """The owner recorded in a session location, or None when it has no (readable) marker."""
    try:
        with open(os.path.join(location, OWNER_MARKER), encoding="utf-8") as fh:
            data = json.load(fh)
        return EngineIdentity(
            str(data["engine_id"]),
            int(data["pid"]),
            str(data["host"]),
            None if data.get("pid_start") is None else str(data["pid_start"]),
            float(data.get("started", 0.0)),
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None


def has_owner_marker(location: str) -> bool:
    if fs.is_uri(location):
        return fs.isfile(fs.join(location, OWNER_MARKER))
    return os.path.isfile(os.path.join(location, OWNER_MARKER))


def delete_location(location: str, engine_id: str = "unknown") -> bool:
    """Remove a session location (or one table of it) and everything in it; True when
    something was removed. In an object store the prefix is hidden by a pending marker first
    (:func:`auger.storage.object_tables.remove_table`)."""
    if fs.is_uri(location):
        if not fs.exists(location):
            return False
        object_tables.remove_table(location, engine_id, "temporary table removal")
        return True
    if not os.path.lexists(location):
        return False
    remove_tree_atomically(location)
    return True


def sweep_dead_locations(workspace_location: str, live_engine_ids: Collection[str]) -> list[str]:
    """Remove session locations in a workspace whose owner engine no longer runs.

    Only folders with an owner marker are considered; a location of a live engine (in this
    process or another on this host) or of another host is never touched.

    Returns:
        The removed locations.
    """
    removed: list[str] = []
    try:
        entries = os.listdir(workspace_location)
    except OSError:
        return removed
    for entry in entries:
        location = os.path.join(workspace_location, entry)
        if entry.startswith((".", "_")) or not os.path.isdir(location):
            continue
        if not has_owner_marker(location):
            continue
        owner = read_owner(location)
        if owner is None or owner.is_alive(live_engine_ids):
            continue
        try:
            delete_location(location)
        except OSError as exc:
            _log.warning("Could not delete stale session location [%s]: %s", location, exc)
            continue
        # a warning: something crashed, and the CLI shows warnings without any logging set up
        _log.warning(
            "Deleted session temporary location [%s] of stopped engine (pid %s) from file "
            "system [%s]",
            location,
            owner.pid,
            _FILE_SYSTEM,
        )
        removed.append(location)
    return removed


def _real(path: str) -> str:
    return os.path.realpath(path)


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def foreign_location(
    path: str,
    own_locations: Collection[str],
    workspace_locations: Iterable[str],
    other_locations: Iterable[str] = (),
) -> str | None:
    """The session location of someone else that reading ``path`` would reach, if any.

    ``path`` reaches a location when it lies inside it or contains it (reading a whole
    directory). Locations are found among ``other_locations`` (other sessions of this engine)
    and, by owner marker, among the entries of each temporary workspace location.

    Args:
        path: an absolute table path, possibly with glob characters.
        own_locations: the asking session's locations (always allowed).
        workspace_locations: temporary workspace locations to look in for marked locations.
        other_locations: known locations of other sessions.
    """
    cut = min((i for i, ch in enumerate(path) if ch in "*?[{"), default=len(path))
    prefix = path[:cut]
    if fs.is_uri(path):
        if cut < len(path) and not prefix.endswith("/"):
            prefix = fs.dirname(prefix)
        return _foreign_object(
            fs.normpath(prefix), own_locations, workspace_locations, other_locations
        )
    if cut < len(path) and not prefix.endswith("/"):
        prefix = os.path.dirname(prefix)
    target = _real(prefix or "/")
    own = {_real(p) for p in own_locations}
    for location in other_locations:
        real = _real(location)
        if real not in own and (_inside(target, real) or _inside(real, target)):
            return location
    for ws in workspace_locations:
        root = _real(ws)
        if _inside(target, root) and target != root:
            first = target[len(root.rstrip("/")) + 1 :].split("/", 1)[0]
            candidate = os.path.join(root, first)
            if candidate not in own and has_owner_marker(candidate):
                return candidate
        elif _inside(root, target):
            try:
                entries = os.listdir(root)
            except OSError:
                continue
            for entry in entries:
                candidate = os.path.join(root, entry)
                if candidate not in own and has_owner_marker(candidate):
                    return candidate
    return None


def _foreign_object(
    target: str,
    own_locations: Collection[str],
    workspace_locations: Iterable[str],
    other_locations: Iterable[str],
) -> str | None:
    """:func:`foreign_location` in an object store: no links, so names are compared as they
    are; a location of another server is known by its owner marker object."""
    own = {fs.normpath(p) for p in own_locations if fs.is_uri(p)}
    for location in other_locations:
        if not fs.is_uri(location):
            continue
        loc = fs.normpath(location)
        if loc not in own and (_inside(target, loc) or _inside(loc, target)):
            return location
    for ws in workspace_locations:
        if not fs.is_uri(ws):
            continue
        root = fs.normpath(ws)
        if _inside(target, root) and target != root:
            first = target[len(root.rstrip("/")) + 1 :].split("/", 1)[0]
            candidate = fs.join(root, first)
            if candidate not in own and has_owner_marker(candidate):
                return candidate
        elif _inside(root, target):
            try:
                entries = fs.list_dir(root)
            except UserError:
                continue
            for entry in entries:
                name = fs.basename(entry.path)
                if not entry.is_dir or name.startswith((".", "_")) or entry.path in own:
                    continue
                if has_owner_marker(entry.path):
                    return entry.path
    return None


@dataclass(frozen=True)
class TemporaryTable:
    """One temporary table of a session.

    Attributes:
        name: the name as the user gave it at creation.
        generated: ``<session id>/<uuid>``, the masked name relative to the workspace.
        location: absolute path of the table folder.
        workspace: the workspace it lives in (the default temporary workspace).
    """

    name: str
    generated: str
    location: str
    workspace: str


class SessionTemporaryTables:
    """A session's temporary tables (case-insensitive names) and the locations it used."""

    def __init__(self, session_id: str, user: str, owner: EngineIdentity) -> None:
        self.session_id = session_id
        self.user = user
        self.owner = owner
        self._tables: dict[str, TemporaryTable] = {}
        self._locations: list[str] = []
        self._lock = threading.RLock()

    # ----- lookups
    @property
    def tables(self) -> dict[str, TemporaryTable]:
        """A copy of the map lower-cased name → table."""
        with self._lock:
            return dict(self._tables)

    @property
    def locations(self) -> list[str]:
        """Every session temporary location this session created, oldest first."""
        with self._lock:
            return list(self._locations)

    def get(self, name: str) -> TemporaryTable | None:
        with self._lock:
            return self._tables.get(name.lstrip("/").lower())

    def __bool__(self) -> bool:
        return bool(self._tables)

    # ----- creation
    def location_path(self, workspace_location: str) -> str:
        """``<workspace location>/<session id>``, whether it exists or not."""
        if fs.is_uri(workspace_location):
            return fs.join(fs.normpath(workspace_location), self.session_id)
        return os.path.join(os.path.abspath(workspace_location), self.session_id)

    def has_location(self, workspace_location: str) -> bool:
        """Whether this session already made its location in that workspace location."""
        with self._lock:
            return self.location_path(workspace_location) in self._locations

    def session_location(self, workspace_location: str) -> str:
        """``<workspace location>/<session id>``, created (700, with owner marker) if absent.

        The location is recorded before its marker is written, so a session whose marker
        could not be written (a full disk) still deletes the folder when it closes.
        """
        location = self.location_path(workspace_location)
        if fs.is_uri(location):
            # an object store has no folders: the owner marker is the location's first object
            with self._lock:
                if location not in self._locations:
                    self._locations.append(location)
                    write_owner(location, self.owner, self.session_id, self.user)
            return location
        with self._lock:
            if location not in self._locations or not os.path.isdir(location):
                TEMPORARY.create_path(location)
                os.chmod(location, TEMPORARY.folder_mode)
                if location not in self._locations:
                    self._locations.append(location)
            if not has_owner_marker(location):
                write_owner(location, self.owner, self.session_id, self.user)
        return location

    def discard_empty_location(self, workspace_location: str) -> None:
        """Delete the session location again when it holds no table (its first CTTAS failed)."""
        location = self.location_path(workspace_location)
        with self._lock:
            if any(t.location.startswith(location + "/") for t in self._tables.values()):
                return
            if location in self._locations:
                self._locations.remove(location)
            try:
                delete_location(location, self.owner.engine_id)
            except (OSError, UserError) as exc:
                _log.warning("Could not delete session temporary location [%s]: %s", location, exc)

    def allocate(self, workspace_location: str) -> tuple[str, str]:
        """A fresh masked table name and its (not yet existing) absolute folder path."""
        location = self.session_location(workspace_location)
        table_id = str(uuid.uuid4())
        return f"{self.session_id}/{table_id}", fs.join(location, table_id)

    def register(self, name: str, generated: str, location: str, workspace: str) -> TemporaryTable:
        table = TemporaryTable(name.lstrip("/"), generated, location, workspace)
        with self._lock:
            self._tables[table.name.lower()] = table
        return table

    # ----- removal
    def remove(self, name: str) -> TemporaryTable | None:
        """Forget a table and delete its folder; None when the session has no such table."""
        with self._lock:
            table = self._tables.pop(name.lstrip("/").lower(), None)
        if table is not None:
            with contextlib.suppress(FileNotFoundError):
                delete_location(table.location, self.owner.engine_id)
        return table

    def close(self) -> list[str]:
        """Delete every session location (and so every table); returns the deleted ones."""
        with self._lock:
            locations = list(self._locations)
            self._locations.clear()
            self._tables.clear()
        deleted: list[str] = []
        for location in locations:
            try:
                if delete_location(location, self.owner.engine_id):
                    deleted.append(location)
                    _log.info(
                        "Deleted session temporary location [%s] from file system [%s]",
                        location,
                        _FILE_SYSTEM,
                    )
            except (OSError, UserError) as exc:
                _log.warning("Could not delete session temporary location [%s]: %s", location, exc)
                if not fs.is_uri(location):
                    shutil.rmtree(location, ignore_errors=True)
        return deleted
