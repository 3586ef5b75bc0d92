"""The engine ("drillbit"): config, system options, open sessions, and Spark.

One engine per configuration in a process, all sharing the process's one SparkSession. Spark
starts on first use, so commands that need no data (``--help``, config errors) stay fast.

An engine's sessions never outlive it: shutting it down closes them all, which deletes their
temporary tables. Shutdown runs on ``Engine.shutdown()``, at interpreter exit (``atexit``) and on
SIGTERM (and on SIGINT when nothing else handles it). A ``kill -9`` cannot be caught; the next
engine to start on the same temporary workspace removes what such an engine left behind (see
:mod:`auger.storage.temporary`), and any engine removes the CTAS staging directories of dead
writers in its writable workspaces (:func:`auger.storage.table_files.sweep_dead_staging`). In an
object store a pid says nothing across hosts: there each engine keeps a lease object refreshed
every ``exec.lease_interval_seconds``, and what an engine with an expired lease left is removed
(:mod:`auger.storage.object_tables`).
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import functools
import getpass
import logging
import os
import signal
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from types import FrameType
from typing import Any

from auger.config import (
    Config,
    PluginConfig,
    build_plugin,
    check_temporary_workspace,
    load_config,
    state_dir,
)
from auger.errors import UserError
from auger.formats.registry import known_formats
from auger.options import SystemOptions
from auger.scan.cache import ENABLED, LOCATION, cache_location
from auger.session import UserSession
from auger.spark.bootstrap import (
    forget_dead_spark,
    get_spark,
    is_local_master,
    spark_alive,
    spark_is_running,
)
from auger.spark.kept_frames import KeptFrames
from auger.storage import filesystem as fs
from auger.storage.denied import DeniedPath
from auger.storage.object_tables import DEFAULT_LEASE_INTERVAL, ServerLease, sweep_workspace
from auger.storage.table_files import sweep_dead_staging
from auger.storage.temporary import EngineIdentity, sweep_dead_locations

__all__ = ["Engine", "Listener", "shutdown_all"]

_log = logging.getLogger(__name__)

# Engines of this process that have not been shut down (strong references: an engine that
# still has sessions must be reachable for the exit hooks).
_live: dict[str, Engine] = {}
_live_lock = threading.RLock()
_atexit_installed = False
_signals_installed = False


@dataclasses.dataclass(frozen=True)
class Listener:
    """A port this process really listens on for clients, as the server that opened it says.

    Attributes:
        protocol: what it speaks: ``http`` (the REST API and console); later ``flight-sql``.
        host: the address it is bound to (``0.0.0.0`` for every interface).
        port: the port the socket was given (the real one, also when 0 was asked for).
    """

    protocol: str
    host: str
    port: int


#: Drill's drillbit ports by name, each with the listener protocol that fills it; None: auger has
#: no such listener (Drill's control and data ports join drillbits; its user port speaks Drill's
#: native protocol), so the port is reported as absent, never as Drill's default number.
DRILL_PORTS: tuple[tuple[str, str | None], ...] = (
    ("user", None),
    ("control", None),
    ("data", None),
    ("http", "http"),
)


def _engine_defaults(config: Config) -> dict[str, Any]:
    """Option defaults this engine's set-up decides.

    The raw-file cache is on by default where Spark runs in this process (a ``local`` master):
    its default location, in the state directory, is on the machine that reads and writes the
    entries. Spark's executors on other machines (a cluster, or a Spark Connect server) could
    not read entries there, so the cache stays off by default unless ``auger.cache.location``
    is configured (a shared directory or an ``s3a://`` prefix).
    """
    location = str(SystemOptions(config.raw.get("options", {})).get(LOCATION) or "")
    if is_local_master(config.spark_master) or location.strip():
        return {}
    return {ENABLED: False}


class Engine:
    """A running auger: the unit that owns sessions and the Spark connection."""

    _default: Engine | None = None
    _default_lock = threading.Lock()

    def __init__(self, config: Config | Mapping[str, Any] | str | None = None) -> None:
        self.config = load_config(config)
        self.id = str(uuid.uuid4())
        self.identity = EngineIdentity.current(self.id)
        self.system_options = SystemOptions(
            self.config.raw.get("options", {}), _engine_defaults(self.config)
        )
        #: paths no query of any session may reach (see :mod:`auger.storage.denied`)
        home = os.path.abspath(os.path.expanduser(state_dir()))
        self.denied_paths: tuple[DeniedPath, ...] = tuple(
            DeniedPath(path, what, self.config.open_in_state_dir if path == home else ())
            for path, what in self.config.private_paths
        )
        self._sessions: dict[str, UserSession] = {}
        self._lock = threading.RLock()  # re-entrant: a signal handler may run while held
        # its own lock: starting Spark takes seconds, and shutting down (a server stopped
        # while its Spark still starts) must not wait for it; the process ends, and the JVM
        # it launched ends with it
        self._spark_lock = threading.Lock()
        self.deny_cache_location(self.system_options.get("auger.cache.location"))
        self._spark: Any = None
        #: the DataFrames of small whole-file reads, kept for the next statement over the same
        #: files; this engine's own, emptied when it shuts down
        self.kept_frames = KeptFrames()
        #: how many times Spark was started again after it died under the engine
        self.spark_restarts = 0
        #: statements of this engine's sessions running now, and what else keeps it busy (a
        #: server's queries, answers being streamed): see :meth:`busy`
        self._statements = 0
        self._last_statement = time.monotonic()
        self._busy_checks: list[Callable[[], bool]] = []
        # its own lock: a statement that needs no Spark (ALTER SESSION) must not wait for
        # another's to count itself
        self._busy_lock = threading.Lock()
        self.closed = False
        #: the ports servers opened over this engine (none when it is only embedded): what
        #: ``sys.drillbits``, ``/cluster.json`` and the profiles report, never Drill's defaults
        self._listeners: tuple[Listener, ...] = ()
        self._register_object_stores()
        #: this server's leases in the writable object-store workspaces (see
        #: :mod:`auger.storage.object_tables`): how other servers tell it is alive
        self.lease = ServerLease(
            self.id,
            [loc for loc in self._writable_locations() if fs.is_uri(loc)],
            _lease_interval(self.config.raw.get("exec", {})),
        )
        with _live_lock:
            _live[self.id] = self
        _install_exit_hooks()
        self.lease.start()
        self.sweep_stale_locations()

    @classmethod
    def default(cls) -> Engine:
        """The process's engine on the default configuration."""
        with cls._default_lock:
            if cls._default is None or cls._default.closed:
                cls._default = Engine()
            return cls._default

    @property
    def spark(self) -> Any:
        """The SparkSession, started on first use, and started again when Spark died.

        A JVM that exited under the engine (killed, out of memory) is noticed here, before a
        statement uses it: the dead session is dropped and a new one started, so the next
        query runs. Sessions, their options and their temporary tables (files in the
        temporary workspace) belong to the engine, not to Spark, and carry over.
        """
        spark = self._spark
        if spark is not None and self._spark_checked(spark):
            return spark
        with self._spark_lock:
            if self._spark is not None and not self._spark_checked(self._spark):
                _log.error("Spark stopped under the engine; starting it again")
                forget_dead_spark(self._spark)
                self._spark = None
                self.spark_restarts += 1
            if self._spark is None:
                # start-up cost: Spark (and pyspark) start with the first statement, not
                # the engine
                # a local Spark this engine starts (a cluster's executors would not see the
                # warm-up's file; Spark Connect's server warms its own)
                warm = is_local_master(self.config.spark_master) and not spark_is_running()
                self._spark = get_spark(self.config.spark_master, self.config.spark_conf)
                if warm:
                    self._warm_up(self._spark)
            return self._spark

    def _warm_up(self, spark: Any) -> None:
        """Start Spark's Python workers once this engine is idle (see
        :mod:`auger.spark.warm_up`): only after the engine started the process's Spark, so
        the first scan through the data source of a notebook, a shell or a server does not
        wait for them, while a process that ends right after its answer never starts it;
        then keep them from Spark's idle limit while the engine waits for statements (see
        :mod:`auger.spark.keep_warm`)."""
        # deferred: the warm-up (and its tempfile use) loads only once Spark has started
        from auger.spark import keep_warm, warm_up

        if not warm_up.warm_up_enabled():
            return

        def warm_and_keep() -> None:
            warm_up.warm_when_idle(spark, self.busy)
            # then keep the workers it started while a person is between queries
            keep_warm.keep_workers_warm(
                spark, self.busy, self.idle_seconds, lambda: self.closed or self._spark is not spark
            )

        threading.Thread(target=warm_and_keep, name="auger-warm-up", daemon=True).start()

    # ----- busy or idle
    @contextlib.contextmanager
    def running_statement(self) -> Iterator[None]:
        """Count a statement as running for as long as the block lasts."""
        with self._busy_lock:
            self._statements += 1
        try:
            yield
        finally:
            with self._busy_lock:
                self._statements -= 1
                self._last_statement = time.monotonic()

    def add_busy_check(self, check: Callable[[], bool]) -> None:
        """Also count the engine busy while ``check()`` is true (a server's running queries,
        whose answers stream after their statements returned)."""
        with self._busy_lock:
            self._busy_checks.append(check)

    def busy(self) -> bool:
        """Whether a statement runs, something registered with :meth:`add_busy_check` says it
        is busy, or the engine was shut down (nothing may start in the background then)."""
        if self.closed or self._statements:
            return True
        return any(check() for check in list(self._busy_checks))

    def idle_seconds(self) -> float:
        """Seconds since the engine's last statement ended (or since it started); 0 while
        one runs."""
        with self._busy_lock:
            if self._statements:
                return 0.0
            return time.monotonic() - self._last_statement

    @staticmethod
    def _spark_checked(spark: Any) -> bool:

        return spark_alive(spark)

    def spark_running(self) -> bool:
        """Whether Spark has started and its JVM is alive now (a live check; never starts it)."""
        spark = self._spark
        return spark is not None and self._spark_checked(spark)

    # ----- sessions
    def open_session(self, user: str | None = None, admin: bool = True) -> UserSession:
        """A new session; its temporary tables go when it closes or the engine shuts down.

        Raises:
            UserError: SYSTEM, when the engine has been shut down (nothing would clean up).
        """
        session = UserSession(self, user or _os_user(), admin=admin)
        with self._lock:
            if self.closed:
                raise UserError.system("The engine has been shut down; start a new one")
            self._sessions[session.id] = session
        return session

    def forget_session(self, session: UserSession) -> None:
        with self._lock:
            self._sessions.pop(session.id, None)

    def sessions(self) -> list[UserSession]:
        with self._lock:
            return list(self._sessions.values())

    def deny_cache_location(self, location: Any) -> None:
        """Make a local raw-file cache location a denied path (the default one lies in the
        state directory, denied already; an object-store prefix is no workspace's)."""

        path = cache_location({LOCATION: location})
        if not fs.is_uri(path):
            self.deny_path(path, "the raw-file cache")

    def deny_path(self, path: str, what: str) -> None:
        """Add a path no query may reach (a server's own files, known once it starts)."""
        entry = DeniedPath(os.path.abspath(path), what)
        with self._lock:
            if entry not in self.denied_paths:
                self.denied_paths = (*self.denied_paths, entry)

    # ----- listeners
    def listen(self, listener: Listener) -> None:
        """Record a port a server over this engine has bound (see :class:`Listener`)."""
        with self._lock:
            if listener not in self._listeners:
                self._listeners = (*self._listeners, listener)

    def unlisten(self, listener: Listener) -> None:
        """Forget a port its server has closed."""
        with self._lock:
            self._listeners = tuple(x for x in self._listeners if x != listener)

    def listeners(self, protocol: str | None = None) -> tuple[Listener, ...]:
        """The ports served over this engine, in the order they were opened; of one protocol
        when ``protocol`` is given."""
        found = self._listeners
        return found if protocol is None else tuple(x for x in found if x.protocol == protocol)

    def drill_ports(self) -> dict[str, int | None]:
        """Drill's port names (``user``, ``control``, ``data``, ``http``) and the port this
        engine really listens on for each, None where nothing listens."""
        out: dict[str, int | None] = {}
        for name, protocol in DRILL_PORTS:
            found = self.listeners(protocol) if protocol else ()
            out[name] = found[0].port if found else None
        return out

    # ----- temporary workspace
    def temporary_workspace_locations(self) -> list[str]:
        """Where session temporary locations may be: the temporary workspace's current
        location and every location a session of this engine used (it may have moved)."""
        found: list[str] = []
        located = self.config.workspace(self.config.default_temporary_workspace)
        if located is not None:
            found.append(located[1].location)
        for session in self.sessions():
            for location in session.temporary.locations:
                parent = location.rsplit("/", 1)[0] or "/"
                if parent not in found:
                    found.append(parent)
        return found

    def sweep_stale_locations(self) -> list[str]:
        """Delete what processes that died left behind: session locations in the temporary
        workspace, and CTAS staging directories in every writable workspace.

        Returns:
            The removed paths (each is also logged).
        """
        removed: list[str] = []
        located = self.config.workspace(self.config.default_temporary_workspace)
        with _live_lock:
            live = set(_live)
        try:
            if located is not None and not fs.is_uri(located[1].location):
                removed += sweep_dead_locations(located[1].location, live)
            for root in self._writable_locations():
                if fs.is_uri(root):
                    # pending tables and session locations of servers whose lease expired
                    removed += sweep_workspace(root, live)
                else:
                    removed += sweep_dead_staging(root)
        except Exception:  # start-up must not fail over a clean-up
            _log.exception("sweeping what stopped engines left behind failed")
        return removed

    def _register_object_stores(self) -> None:
        """Make the settings of every object-store workspace known to this process, so that
        leases and the start-up sweep reach them before any query names a workspace."""
        for plugin in self.config.plugins.values():
            if not plugin.enabled or not plugin.is_file_based:
                continue
            for ws in plugin.workspaces.values():
                remote = fs.config_for_plugin(ws.location, plugin.raw.get("config"))
                if remote is not None:
                    fs.register(remote)

    def _writable_locations(self) -> list[str]:
        """Distinct directories of the writable file workspaces (where CTAS writes)."""
        found: dict[str, None] = {}
        for plugin in self.config.plugins.values():
            if not plugin.enabled or not plugin.is_file_based or plugin.classpath:
                continue
            for ws in plugin.workspaces.values():
                if ws.writable:
                    remote = fs.is_uri(ws.location)
                    found.setdefault(
                        fs.normpath(ws.location) if remote else os.path.realpath(ws.location)
                    )
        return list(found)

    def update_plugin(self, name: str, config: Mapping[str, Any]) -> PluginConfig:
        """Replace a storage plugin's configuration while the engine runs (the console's
        storage editor), after checking all of it; nothing changes when a check fails.

        Args:
            name: the plugin (it must exist: plugins are added in the config file).
            config: the plugin as ``/storage/{name}.json`` shows it: ``type``, ``enabled``
                and, for file plugins, ``workspaces`` (``location``, ``writable``,
                ``defaultInputFormat``) and ``formats`` (``type``, ``extensions``, options).

        Returns:
            the new plugin. It lasts until the server restarts: the config file stays as it is.
        """

        old = self.config.plugins.get(name)
        if old is None:
            raise UserError.validation(
                f"No storage plugin [{name}]", ["Fix: add new plugins to auger's config file"]
            )
        if not isinstance(config, Mapping):
            raise UserError.validation(f"The configuration of plugin [{name}] must be an object")
        ptype = config.get("type", old.type)
        if ptype != old.type:
            raise UserError.validation(
                f"Plugin [{name}] is of type [{old.type}]; its type cannot change to [{ptype}]"
            )
        if "enabled" in config and not isinstance(config["enabled"], bool):
            raise UserError.validation(f"Plugin [{name}]: enabled must be true or false")
        raw = {**dict(old.raw), **{k: v for k, v in config.items() if k != "connection"}}
        if old.is_file_based:
            known = set(known_formats())
            for fname, spec in dict(config.get("formats") or {}).items():
                if isinstance(spec, Mapping) and spec.get("type", fname) not in known:
                    raise UserError.validation(
                        f"Format [{fname}] of plugin [{name}] has the unknown type "
                        f"[{spec.get('type', fname)}]",
                        [f"Fix: use one of {', '.join(sorted(known))}"],
                    )
        plugin = build_plugin(name, raw)
        if plugin.is_file_based and not plugin.classpath:
            for ws in plugin.workspaces.values():
                if not os.path.isdir(ws.location):
                    raise UserError.validation(
                        f"Workspace [{name}.{ws.name}] location {ws.location} is not a directory",
                        ["Fix: give the absolute path of an existing directory"],
                    )
        for ws in plugin.workspaces.values():
            if ws.default_format and ws.default_format not in plugin.formats:
                raise UserError.validation(
                    f"Workspace [{name}.{ws.name}] names the default input format "
                    f"[{ws.default_format}], which plugin [{name}] does not define",
                    [f"Fix: use one of {', '.join(sorted(plugin.formats))}"],
                )
        new_config = dataclasses.replace(self.config, plugins={**self.config.plugins, name: plugin})
        check_temporary_workspace(new_config)
        self.config = new_config
        return plugin

    # ----- life cycle
    def shutdown(self) -> None:
        """Close every open session (idempotent); Spark itself stays for other engines."""
        with self._lock:
            if self.closed:
                return
            self.closed = True
        for session in self.sessions():
            try:
                session.close()
            except Exception:  # keep closing the others
                _log.exception("closing session %s failed", session.id)
        self.kept_frames.clear()
        self.lease.stop()
        with _live_lock:
            _live.pop(self.id, None)


def _lease_interval(exec_config: Mapping[str, Any]) -> float:
    """``exec.lease_interval_seconds``: how often this server refreshes its leases."""
    raw = exec_config.get("lease_interval_seconds", DEFAULT_LEASE_INTERVAL)
    try:
        value = float(raw)
    except (TypeError, ValueError):
        value = -1.0
    if value <= 0:
        raise UserError.validation(
            f"exec.lease_interval_seconds must be a positive number of seconds, not [{raw}]",
            ["Fix: e.g. lease_interval_seconds = 30 under [exec]"],
        )
    return value


def shutdown_all() -> None:
    """Shut down every engine of this process (exit hooks call this)."""
    with _live_lock:
        engines = list(_live.values())
    for engine in engines:
        try:
            engine.shutdown()
        except Exception:
            _log.exception("shutting down engine %s failed", engine.id)


def _on_signal(previous: Any, signum: int, frame: FrameType | None) -> None:
    """Close every session, then do what the signal did before auger was loaded."""
    if signum == signal.SIGINT and callable(previous):
        # Python's KeyboardInterrupt (or a shell's handler) cancels the running statement;
        # sessions survive that, and an unhandled interrupt still ends in the atexit hook.
        previous(signum, frame)
        return
    if previous == signal.SIG_IGN:
        return
    shutdown_all()
    if callable(previous):
        previous(signum, frame)
        return
    raise SystemExit(128 + signum)


def _install_exit_hooks() -> None:
    """Register the atexit hook once, and the signal handlers once from the main thread (the
    only thread Python lets install them; an engine made elsewhere retries on the next one)."""
    global _atexit_installed, _signals_installed
    with _live_lock:
        if not _atexit_installed:
            atexit.register(shutdown_all)
            _atexit_installed = True
        if _signals_installed or threading.current_thread() is not threading.main_thread():
            return
        _signals_installed = True
    for sig in (signal.SIGTERM, signal.SIGINT):
        try:
            previous = signal.getsignal(sig)
            signal.signal(sig, functools.partial(_on_signal, previous))
        except (ValueError, OSError):  # not allowed here (embedded interpreters)
            _log.debug("cannot install a handler for signal %s", sig)


def _os_user() -> str:
    try:
        return getpass.getuser()
    except Exception:
        return "anonymous"
