"""The local background server behind ``auger sql``: found, started, reused and stopped.

Like sqlline and a drillbit, ``auger sql`` (and ``-e``, ``-f``, ``auger demo``) talks to a
server that keeps Spark running, so only the first statement after a while pays for starting a
JVM. There is one server per configuration (the config file's absolute path, or none) and
state directory (``$AUGER_HOME``). Its state file, ``servers/<key>.json`` in the state
directory, holds its pid, its port on 127.0.0.1 and a secret token; only its owner can read it,
and the server answers only requests that send the token (:mod:`auger.server.local`).

* The first client starts the server detached (its own session, its output in
  ``local-<key>.log`` of the server's log directory) and waits until its state file appears.
  A lock file makes clients that start at once share one server.
* A state file whose process is gone (a crash, ``kill -9``, a reboot) is removed and a new
  server started.
* The server stops itself after ``[server] idle_timeout`` seconds (default 1800) with no
  request and no open session; ``auger stop`` stops it at once.
* Each client is one REST session, so ``USE``, ``ALTER SESSION`` and temporary tables last as
  long as the shell or the ``-e`` run, and the session ends (temporary tables dropped) with it.
* A client uses only a server of its own auger: the same version, package directory and
  interpreter (the state file says which). Another one (an upgrade, a second checkout, a
  checkout since removed) is stopped and a new server started, the user told so once.
* ``auger stop`` stops a server whatever auger wrote its state file: only the pid is needed.
* A server whose package files disappear (its checkout removed) stops itself: it could no
  longer load its own modules or read the ``cp`` sample data.
"""

from __future__ import annotations

import contextlib
import fcntl
import getpass
import hashlib
import json
import logging
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from auger.cli.remote import RemoteConnection
from auger.config import load_config, server_log_dir, state_dir
from auger.errors import ErrorKind, UserError
from auger.spark.bootstrap import get_spark
from auger.version import __version__, package_dir

if TYPE_CHECKING:
    from starlette.applications import Starlette

    from auger.cli.remote import RemoteConnection
    from auger.server.settings import ServerSettings

__all__ = [
    "LocalServer",
    "connect_local",
    "live_server",
    "run_local_server",
    "state_file",
    "stop_all",
    "stop_local",
]

_log = logging.getLogger(__name__)

#: How long a client waits for a server it started to write its state file. The server writes
#: it before Spark starts (Spark starts in the background), so this covers Python's imports and
#: the engine's start-up sweep on a busy machine.
START_TIMEOUT = 120.0
#: How long ``auger stop`` waits for a server to finish its sessions before killing it.
STOP_TIMEOUT = 30.0
#: How long a client waits for a running server to answer that it is there.
CHECK_TIMEOUT = 10.0
#: The server's names for these headers are ``auger.server.local.TOKEN_HEADER`` and
#: ``USER_HEADER``; the client does not import the server (its import would cost every command
#: most of a second).
TOKEN_HEADER = "X-Auger-Token"
USER_HEADER = "X-Auger-User"


@dataclass(frozen=True)
class LocalServer:
    """What a local server's state file says about it.

    Attributes:
        pid: the server's process id.
        port: its port on 127.0.0.1.
        token: the secret each request sends (``X-Auger-Token``).
        config: the config file it runs (absolute path), or None for the built-in one.
        log: its log file.
        messages: warnings it logged while starting (what a start-up sweep removed), shown
            by the client that started it.
    """

    pid: int
    port: int
    token: str
    config: str | None = None
    log: str = ""
    messages: list[str] = field(default_factory=list)
    version: str = ""
    installation: str = ""
    python: str = ""

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def same_auger(self) -> bool:
        """Whether this server runs the very auger of this process (version, package
        directory, interpreter); a state file of an older auger, which names none, does not."""
        return (self.version, self.installation, self.python) == _identity()

    def describe(self) -> str:
        """The auger the server runs, for a message."""
        if not self.version:
            return "an older auger"
        return f"auger {self.version} from {self.installation}"


def _identity() -> tuple[str, str, str]:
    """This process's auger: its version, its package directory and its interpreter."""
    return __version__, str(package_dir()), sys.executable


def _config_path(config: str | None) -> str | None:
    """The config file a command runs: ``--config``, else ``$AUGER_CONFIG``, as an absolute
    path; None for the built-in configuration."""
    found = config or os.environ.get("AUGER_CONFIG") or None
    return os.path.abspath(found) if found else None


def _servers_dir() -> Path:
    return Path(state_dir()) / "servers"


def state_file(config: str | None) -> Path:
    """The state file of the local server for a configuration (``--config`` or None)."""
    path = _config_path(config)
    key = "default" if path is None else hashlib.sha256(path.encode()).hexdigest()[:16]
    return _servers_dir() / f"{key}.json"


def read_state(path: Path) -> LocalServer | None:
    """The server a state file describes, or None when there is none (or it is unreadable)."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        return LocalServer(
            pid=int(raw["pid"]),
            port=int(raw["port"]),
            token=str(raw["token"]),
            config=raw.get("config"),
            log=str(raw.get("log", "")),
            messages=[str(m) for m in raw.get("messages", [])],
            version=str(raw.get("version", "")),
            installation=str(raw.get("installation", "")),
            python=str(raw.get("python", "")),
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _state_pid(path: Path) -> int | None:
    """The pid a state file names, whatever else it holds or lacks (any auger's)."""
    try:
        return int(json.loads(path.read_text(encoding="utf-8"))["pid"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _write_state(path: Path, server: LocalServer) -> None:
    """Write the state file atomically, readable by its owner only (it holds the token)."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump(asdict(server), fh)
    os.replace(tmp, path)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process took the pid: not our server
        return False
    return True


def live_server(config: str | None, clean: bool = False) -> LocalServer | None:
    """The running local server of a configuration, by its state file and pid.

    Args:
        config: ``--config`` (None: ``$AUGER_CONFIG`` or the built-in configuration).
        clean: remove a state file left by a dead server (only with the lock held, so that
            it never races a server being started).
    """
    path = state_file(config)
    found = read_state(path)
    if found is None:
        return None
    if not _alive(found.pid):
        if clean:
            _remove_state(path, found.pid)
        return None
    return found


def _remove_state(path: Path, pid: int) -> None:
    """Remove the state file if it still describes ``pid`` (a new server may have replaced
    it)."""
    current = read_state(path)
    if current is not None and current.pid != pid:
        return
    with contextlib.suppress(FileNotFoundError):
        path.unlink()


@contextlib.contextmanager
def _locked(path: Path, wait: bool = True) -> Iterator[bool]:
    """Hold the lock file beside a state file; yields False when ``wait`` is off and another
    process holds it."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd = os.open(path.with_suffix(".lock"), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            yield False
            return
        yield True
    finally:
        os.close(fd)  # closing releases the lock


# ------------------------------------------------------------------ the client side
def connect_local(
    config: str | None, user: str | None = None, err: TextIO | None = None
) -> RemoteConnection:
    """A session on the local server of ``config``, started first if none runs.

    Args:
        config: ``--config`` (None: ``$AUGER_CONFIG`` or the built-in configuration).
        user: the session's user (default: the operating-system user, as in-process).
        err: where the warnings of a server this call started are written.

    Raises:
        UserError: the configuration is invalid, or the server could not be started.
    """

    server = _running_server(config)
    if server is None or not server.same_auger():
        state = state_file(config)
        with _locked(state):
            # another client may have started it meanwhile; a dead one's state goes
            server = _running_server(config, clean=True)
            if server is not None and not server.same_auger():
                if err is not None:
                    err.write(
                        f"auger: restarting the background server (pid {server.pid}): it runs "
                        f"{server.describe()}, this is auger {__version__} from "
                        f"{package_dir()}\n"
                    )
                _stop_pid(state, server.pid)
                server = None
            if server is None:
                server = _start(config)
                for message in server.messages:
                    if err is not None:
                        err.write(message + "\n")
    headers = {TOKEN_HEADER: server.token, USER_HEADER: user or _os_user()}
    return RemoteConnection(server.url, headers=headers)


def _running_server(config: str | None, clean: bool = False) -> LocalServer | None:
    """The live server, checked by a request (which also tells its idle watch it is in use);
    with ``clean`` (the lock held), a state file whose server is gone or does not listen is
    removed."""
    # deferred: loads requests and more (heavy)
    import requests

    server = live_server(config, clean)
    if server is None:
        return None
    try:
        answer = requests.get(
            server.url + "/status.json",
            headers={TOKEN_HEADER: server.token},
            timeout=CHECK_TIMEOUT,
        )
    except requests.ConnectionError:
        answer = None  # refused: the pid now belongs to another program, or it is stopping
    except requests.Timeout:
        raise UserError.system(
            f"The local auger server (pid {server.pid}) does not answer",
            [f"Fix: `auger stop` ends it; its log is {server.log}"],
        ) from None
    if answer is not None and answer.status_code == 200:
        return server
    if clean:
        _remove_state(state_file(config), server.pid)
    return None


def _start(config: str | None) -> LocalServer:
    """Start a server in the background and wait for its state file (the lock is held)."""

    path = _config_path(config)
    cfg = load_config(path)  # a bad config is reported here, as in-process
    state = state_file(config)
    log_dir = Path(server_log_dir(cfg.server))
    log_dir.mkdir(mode=0o700, parents=True, exist_ok=True)  # logs quote users' queries
    log = log_dir / f"local-{state.stem}.log"
    command = [sys.executable, "-m", "auger"]
    if path is not None:
        command += ["--config", path]
    command += ["serve", "--local-state", str(state), "--log-file", str(log)]
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)  # it quotes queries
    with os.fdopen(fd, "ab") as out:
        proc = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # no terminal's Ctrl-C or hang-up reaches it
            close_fds=True,
        )
    deadline = time.monotonic() + START_TIMEOUT
    while True:
        found = read_state(state)
        if found is not None and found.pid == proc.pid:
            return found
        if proc.poll() is not None:
            raise _start_failure(log, proc.returncode)
        if time.monotonic() > deadline:
            proc.kill()
            raise UserError.system(
                f"The local auger server did not start within {START_TIMEOUT:.0f} s",
                [f"Log: {log}"],
            )
        time.sleep(0.05)


def _start_failure(log: Path, status: int | None = None) -> UserError:
    """The error a server that exited while starting printed (a bad ``[server]`` setting is
    a VALIDATION error, as in-process), else the end of its log and how it ended (``status``:
    its exit status, negative for the signal that ended it)."""
    tail = _tail(log, 20)
    for line in reversed(tail):
        m = re.match(r"([A-Z_]+) ERROR: (.+)", line)
        if m and m.group(1) in ErrorKind.__members__:
            return UserError(m.group(1), m.group(2), [f"Log: {log}"])
    how = []
    if status is not None:
        how = [f"Killed by signal {-status}" if status < 0 else f"Exit status: {status}"]
    return UserError.system(
        "The local auger server could not start", [*tail[-5:], *how, f"Log: {log}"]
    )


def _tail(log: Path, lines: int = 5) -> list[str]:
    try:
        text = log.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    return [ln for ln in text.splitlines() if ln.strip()][-lines:]


def stop_local(config: str | None, out: TextIO) -> int:
    """``auger stop``: stop the local server of ``config``; its sessions end first."""
    if not _stop(state_file(config), out):
        out.write("No auger server is running for this configuration.\n")
    return 0


def stop_all(out: TextIO) -> int:
    """``auger stop --all``: stop every local server of this state directory."""
    stopped = [p for p in sorted(_servers_dir().glob("*.json")) if _stop(p, out)]
    if not stopped:
        out.write("No auger server is running.\n")
    return 0


def _stop(state: Path, out: TextIO) -> bool:
    """Stop the server of a state file, written by any auger (only its pid is read). False if
    none ran."""
    with _locked(state):
        pid = _state_pid(state)
        if pid is None or not _alive(pid):
            with contextlib.suppress(FileNotFoundError):
                state.unlink()
            return False
        _stop_pid(state, pid)
    out.write(f"Stopped the auger server (pid {pid}).\n")
    return True


def _stop_pid(state: Path, pid: int) -> None:
    """Stop the server ``pid`` of a state file (its lock held): SIGTERM (its sessions end,
    temporary tables go), then after :data:`STOP_TIMEOUT` its whole process group is killed."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + STOP_TIMEOUT
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    if _alive(pid):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGKILL)
    _remove_state(state, pid)


def _os_user() -> str:

    try:
        return getpass.getuser()
    except Exception:
        return "anonymous"


# ------------------------------------------------------------------ the server side
def run_local_server(config: str | None, state_path: str, log_file: str) -> int:
    """The background server itself (``auger serve --local-state``): 127.0.0.1, a free port,
    a token guard, the idle watch, and the state file while it runs."""
    _check_settings(config)  # a server that cannot serve says so before any JVM starts
    _start_spark_early(config)
    # deferred: loads starlette, pyarrow and more (heavy)
    from auger.server.app import serve

    # deferred: loads starlette, pyarrow and more (heavy)
    from auger.server.local import Activity, TokenGuard, watch_idle, watch_installation

    state = Path(state_path)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    port = int(sock.getsockname()[1])
    token = secrets.token_urlsafe(32)
    activity = Activity()
    startup = _Collect()
    logging.getLogger().addHandler(startup)

    def on_idle() -> bool:
        with _locked(state, wait=False) as held:
            if not held or activity.idle_for() <= 0:
                return False  # a client is starting to use it
            _remove_state(state, os.getpid())
        _log.info("no request and no session for the idle timeout: stopping")
        os.kill(os.getpid(), signal.SIGTERM)  # uvicorn's own graceful shutdown
        return True

    def on_gone(missing: Path) -> None:
        # no lock: a client waiting on it would wait for a server that cannot serve anyway
        _remove_state(state, os.getpid())
        _log.warning("the package files of this auger are gone (%s): stopping", missing)
        os.kill(os.getpid(), signal.SIGTERM)

    def prepare(app: Starlette, settings: ServerSettings) -> None:
        app.add_middleware(TokenGuard, token=token, activity=activity)
        watch_idle(activity, app.state.auger.sessions, settings.idle_timeout, on_idle)
        watch_installation(installation_files(), on_gone)
        logging.getLogger().removeHandler(startup)
        version, installation, python = _identity()
        server = LocalServer(
            os.getpid(),
            port,
            token,
            config,
            log_file,
            startup.messages,
            version=version,
            installation=installation,
            python=python,
        )
        _write_state(state, server)

    overrides = {**_LOCAL_SETTINGS, "port": port}
    try:
        return serve(config, overrides=overrides, sock=sock, prepare=prepare, log_to_file=False)
    finally:
        _remove_state(state, os.getpid())


def installation_files() -> list[Path]:
    """Files the server needs from its installation for as long as it runs: its package (a
    module imported late) and the ``cp`` plugin's sample data."""
    here = package_dir()
    return [here / "__init__.py", here / "data"]


#: What the local server's ``[server]`` settings are, whatever the configuration says.
_LOCAL_SETTINGS = {"host": "127.0.0.1", "auth": False, "anonymous_sessions": "cookie"}


def _check_settings(config: str | None) -> None:
    """Raise the VALIDATION error a bad ``[server]`` setting gets, before Spark starts: an
    error printed while a JVM is being launched beside it could be lost with the process."""
    # deferred: loads starlette, pyarrow and more (heavy)
    from auger.server.settings import ServerSettings  # the server's modules load late

    server = dict(load_config(config).server)
    ServerSettings.from_config({**server, **_LOCAL_SETTINGS})


def _start_spark_early(config: str | None) -> None:
    """Start Spark on a thread before the server's own modules load: the JVM starts in a
    process of its own, so its seconds overlap the imports instead of following them (the
    engine later finds the running session). A failure (no Java) is left for the first query
    to report, as in-process."""

    cfg = load_config(config)

    def start() -> None:
        try:
            get_spark(cfg.spark_master, cfg.spark_conf)
        except Exception:
            _log.debug("starting Spark early failed", exc_info=True)

    threading.Thread(target=start, name="auger-spark-start", daemon=True).start()


class _Collect(logging.Handler):
    """Keeps the warnings logged while the server starts, for the client that started it."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []
        self._guard = threading.Lock()

    def emit(self, record: logging.LogRecord) -> None:
        with self._guard:
            self.messages.append(record.getMessage())
