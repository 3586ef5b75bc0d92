"""The JSON shapes of Drill's informational endpoints, built from auger's state.

Each function returns plain data; the routes in :mod:`auger.server.app` decide who may see it.
Shapes follow Drill's Jackson output (``StatusResources``, ``StorageResources``,
``ProfileResources``, ``DrillRoot``).
"""

from __future__ import annotations

import os
import sys
import threading
import time
import traceback
from collections import deque
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from auger.options import SessionOptions
from auger.spark.handles import executor_count
from auger.sql.catalog.sys_tables import DRILL_VERSION
from auger.version import installed_version

if TYPE_CHECKING:
    from auger.config import PluginConfig
    from auger.engine import Engine
    from auger.server.profiles import ProfileStore
    from auger.server.queries import QueryManager

__all__ = [
    "cluster_json",
    "log_files_json",
    "log_lines",
    "metrics_json",
    "options_json",
    "plugin_json",
    "profiles_json",
    "server_status_json",
    "stats_json",
    "storage_json",
    "thread_dump",
]


def _text(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def options_json(engine: Engine, session: SessionOptions | None = None) -> list[dict[str, Any]]:
    """Option values (Drill's ``OptionWrapper`` list, sorted by name): the system's, or those a
    session sees when one is given."""
    return [
        {
            "name": v.name,
            "value": v.value,
            "defaultValue": _text(v.default),
            "accessibleScopes": v.accessible_scopes,
            "kind": v.kind,
            "optionScope": v.scope,
        }
        for v in (session or SessionOptions(engine.system_options)).values()
    ]


def plugin_json(plugin: PluginConfig) -> dict[str, Any]:
    """A storage plugin as Drill's ``PluginConfigWrapper`` shows it."""
    config: dict[str, Any] = {"type": plugin.type, "enabled": plugin.enabled}
    if plugin.is_file_based:
        connection = "classpath:///" if plugin.classpath else "file:///"
        config["connection"] = connection
        config["workspaces"] = {
            name: {
                "location": ws.location,
                "writable": ws.writable,
                "defaultInputFormat": ws.default_format,
                "followLinks": ws.follow_links,
                "allowAccessOutsideWorkspace": False,
            }
            for name, ws in sorted(plugin.workspaces.items())
        }
        config["formats"] = {name: fmt.to_dict() for name, fmt in sorted(plugin.formats.items())}
    else:
        config.update({k: v for k, v in plugin.raw.items() if k not in ("type", "enabled")})
    return {"name": plugin.name, "config": config}


def storage_json(engine: Engine, which: str = "all") -> list[dict[str, Any]]:
    plugins = sorted(engine.config.plugins.values(), key=lambda p: p.name)
    if which == "enabled":
        plugins = [p for p in plugins if p.enabled]
    elif which == "disabled":
        plugins = [p for p in plugins if not p.enabled]
    return [plugin_json(p) for p in plugins]


def profiles_json(
    store: ProfileStore,
    queries: QueryManager,
    user: str | None,
    foreman: str,
    base_url: str,
    max_finished: int = 100,
) -> dict[str, Any]:
    """``/profiles.json``: running and finished queries; ``user=None`` means all users."""
    running_ids = {rq.query_id for rq in queries.running()}
    running: list[dict[str, Any]] = []
    finished: list[dict[str, Any]] = []
    for profile in store.list():
        if user is not None and profile.user != user:
            continue
        if profile.query_id in running_ids or not profile.finished:
            if profile.query_id in running_ids:
                running.append(profile.summary(foreman, base_url))
        elif len(finished) < max_finished:
            finished.append(profile.summary(foreman, base_url))
    return {
        "runningQueries": running,
        "finishedQueries": finished,
        "errors": [],
        "maxFetchedQueries": max_finished,
        "queriesPerPage": "10,25,50,100",
    }


def cluster_json(address: str, ports: Mapping[str, int | None], auth: bool) -> dict[str, Any]:
    """``/cluster.json``: this server as Drill's one drillbit. ``ports`` are Drill's port names
    and the ports really listened on (:meth:`auger.engine.Engine.drill_ports`); one nothing
    listens on is left out, as Drill leaves out absent values (ports are strings there)."""
    return {
        "drillbits": [
            {
                "address": address,
                **{f"{name}Port": str(port) for name, port in ports.items() if port is not None},
                "version": DRILL_VERSION,
                "current": True,
                "versionMatch": True,
                "state": "ONLINE",
            }
        ],
        "currentVersion": DRILL_VERSION,
        "mismatchedVersions": [],
        "userEncryptionEnabled": False,
        "bitEncryptionEnabled": False,
        "authEnabled": auth,
    }


def metrics_json(sessions: int, running: int) -> dict[str, Any]:
    """A Dropwizard-shaped metrics document (pydrill's ``metrics()`` reads ``gauges``)."""

    def gauge(value: Any) -> dict[str, Any]:
        return {"value": value}

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else -1.0
    return {
        "version": "4.0.0",
        "gauges": {
            "drill.queries.running": gauge(running),
            "drill.sessions.open": gauge(sessions),
            "threads.count": gauge(threading.active_count()),
            "os.load.avg": gauge(load),
        },
        "counters": {},
        "histograms": {},
        "meters": {},
        "timers": {},
    }


def server_status_json(
    engine: Engine, started: float, sessions: int, running: int
) -> dict[str, Any]:
    """What ``/status`` shows: version, uptime, Spark master and executors, open sessions.

    Asking never starts Spark: before the first query it reports ``sparkRunning: false``.
    ``executors`` counts Spark's block managers (the driver included, which is where a local
    master runs its tasks); None when Spark runs behind Spark Connect, which does not say.
    """

    running = engine.spark_running()  # a live check: a JVM that died is not running
    spark = engine._spark if running else None
    executors: int | None = 0
    if spark is not None:
        try:
            executors = executor_count(spark)
        except Exception:  # a stopping JVM: report what is known
            executors = None
    return {
        "status": "Running!",
        "version": installed_version(),
        "drillVersion": DRILL_VERSION,
        "uptime": _uptime(time.time() - started),
        "startTime": int(started * 1000),
        "sparkMaster": engine.config.spark_master,
        "sparkRunning": running,
        "executors": executors,
        "openSessions": sessions,
        "runningQueries": running,
    }


def _uptime(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    days, hours = divmod(hours, 24)
    head = f"{days} day{'s' if days != 1 else ''} " if days else ""
    return f"{head}{hours:02d}:{minutes:02d}:{secs:02d}"


def log_files_json(directory: str) -> list[dict[str, Any]]:
    """The server's log files (Drill's ``/logs.json``: name, size, last modified), by name.

    A directory that does not exist yet has no log files.
    """

    try:
        names = sorted(os.listdir(directory))
    except OSError:
        return []
    files = []
    for name in names:
        path = os.path.join(directory, name)
        try:
            st = os.stat(path)
        except OSError:
            continue
        if not os.path.isfile(path):
            continue
        files.append(
            {
                "name": name,
                "size": st.st_size,
                "lastModified": time.strftime("%m/%d/%Y %H:%M:%S", time.gmtime(st.st_mtime)),
            }
        )
    return files


#: The most lines of a log file the console shows (its end: the latest entries).
LOG_LINES = 5000


def log_lines(directory: str, name: str) -> list[str] | None:
    """The last :data:`LOG_LINES` lines of the log file ``name`` in ``directory``; None when
    there is no such file (a name with a path in it never matches)."""

    if not name or name != os.path.basename(name) or name.startswith("."):
        return None
    path = os.path.join(directory, name)
    if not os.path.isfile(path):
        return None
    with open(path, encoding="utf-8", errors="replace") as fh:
        return [line.rstrip("\n") for line in deque(fh, LOG_LINES)]


def stats_json(address: str, ports: Mapping[str, int | None]) -> list[dict[str, Any]]:
    """The pre-1.7 ``/stats.json`` list that pydrill's ``stats()`` still parses; a port nothing
    listens on has no entry."""
    listed = [
        {"name": f"{name.title()} Port Address", "value": f"{address}:{port}"}
        for name, port in ports.items()
        if port is not None
    ]
    return [
        {"name": "Number of Drill Bits", "value": 1},
        {"name": "Bit #0", "value": f"{address} initialized"},
        *listed,
        {"name": "Maximum Direct Memory", "value": 0},
    ]


def thread_dump() -> str:
    names = {t.ident: t.name for t in threading.enumerate()}
    out = []
    for ident, frame in sys._current_frames().items():
        out.append(f'"{names.get(ident, ident)}"')
        out.extend(line.rstrip() for line in traceback.format_stack(frame))
        out.append("")
    return "\n".join(out) + "\n"
