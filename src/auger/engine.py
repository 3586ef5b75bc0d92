"""The engine ("drillbit"): config, system options, the catalog, open sessions, and Spark.

One engine per configuration in a process, all sharing the process's one SparkSession. Spark
starts on first use, so commands that need no data (``--help``, config errors) stay fast.
"""

from __future__ import annotations

import atexit
import getpass
import logging
import threading
from collections.abc import Mapping
from typing import Any

from auger.config import Config, load_config
from auger.options import SystemOptions
from auger.session import UserSession
from auger.sql.catalog import Catalog

__all__ = ["Engine"]

_log = logging.getLogger(__name__)


class Engine:
    """A running auger: the unit that owns sessions and the Spark connection."""

    _default: Engine | None = None
    _default_lock = threading.Lock()

    def __init__(self, config: Config | Mapping[str, Any] | str | None = None) -> None:
        self.config = load_config(config)
        self.system_options = SystemOptions(self.config.raw.get("options", {}))
        self.catalog = Catalog(self.config)
        self._sessions: dict[str, UserSession] = {}
        self._lock = threading.Lock()
        self._spark: Any = None
        self.closed = False
        atexit.register(self.shutdown)

    @classmethod
    def default(cls) -> Engine:
        """The process's engine on the default configuration."""
        with cls._default_lock:
            if cls._default is None or cls._default.closed:
                cls._default = Engine()
            return cls._default

    @property
    def spark(self) -> Any:
        if self._spark is None:
            from auger.spark.bootstrap import get_spark

            self._spark = get_spark(self.config.spark_master, self.config.spark_conf)
        return self._spark

    # ----- sessions
    def open_session(self, user: str | None = None, admin: bool = True) -> UserSession:
        session = UserSession(self, user or _os_user(), admin=admin)
        with self._lock:
            self._sessions[session.id] = session
        return session

    def forget_session(self, session: UserSession) -> None:
        with self._lock:
            self._sessions.pop(session.id, None)

    def sessions(self) -> list[UserSession]:
        with self._lock:
            return list(self._sessions.values())

    def shutdown(self) -> None:
        """Close every open session (idempotent); Spark itself stays for other engines."""
        if self.closed:
            return
        self.closed = True
        for session in self.sessions():
            try:
                session.close()
            except Exception:  # keep closing the others
                _log.exception("closing session %s failed", session.id)


def _os_user() -> str:
    try:
        return getpass.getuser()
    except Exception:
        return "anonymous"
