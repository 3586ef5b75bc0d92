"""What one statement runs with: the one value the SQL layer receives from its caller.

The SQL layer never sees a session. A session (:mod:`auger.session`) builds a
:class:`StatementContext` for each statement and hands it to
:func:`auger.sql.router.execute_statement`; every handler, the planner and each of its rules
take it (a rule reads and writes only its :class:`~auger.sql.planning.select_plan.SelectPlan`,
which carries the context). What the context holds:

* ``catalog``: the one name resolver (:class:`~auger.sql.catalog.resolution.SessionCatalog`),
  with the session's default schema, denied paths and temporary-table store;
* ``options`` (the session's options, which ``SET``/``RESET`` change) and ``settings`` (their
  values, taken once when the statement first reads them: one snapshot the whole plan reads;
  a statement that plans nothing, such as ``SET``, takes none);
* the user, and whether they are an administrator;
* ``engine``: the few things a statement asks of the engine (:class:`EngineServices`), Spark
  among them, started only when a statement first needs it, and the frames of small reads it
  keeps for the next statement;
* ``recordings``: what the statement notes on its way
  (:class:`~auger.sql.recordings.Recordings`): its scan diagnostics, whose scan reports the
  scans fill in, and the scans EXPLAIN or a query profile names.

What a statement changes of the session is written back by the session: the default schema
(``USE``) through the catalog; options and temporary tables are the session's own objects.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from auger.errors import UserError
from auger.options import SessionOptions, SystemOptions
from auger.spark.kept_frames import KeptFrames
from auger.sql.catalog.resolution import SessionCatalog
from auger.sql.planning.diagnostics import Diagnostics
from auger.sql.recordings import Recordings
from auger.storage.temporary import SessionTemporaryTables

__all__ = ["EngineServices", "Recordings", "StatementContext"]


class EngineServices(Protocol):
    """What a statement may ask of the engine it runs on."""

    @property
    def system_options(self) -> SystemOptions:
        """The engine's options (``ALTER SYSTEM``)."""
        ...

    @property
    def spark(self) -> Any:
        """The SparkSession (started on first use)."""
        ...

    @property
    def kept_frames(self) -> KeptFrames:
        """The engine's DataFrames of small whole-file reads, kept for the next statement."""
        ...

    def drill_ports(self) -> dict[str, int | None]:
        """Drill's port names and the ports really listened on (``sys.drillbits``)."""
        ...

    def deny_cache_location(self, location: Any) -> None:
        """Make a raw-file cache location unreachable to queries."""
        ...


@dataclass(frozen=True)
class StatementContext:
    """One statement's view of its session and engine (see the module).

    Attributes:
        sql: the statement's text as the user sent it.
        catalog: the session's name resolver.
        options: the session's options (live: ``SET`` changes them).
        user: the session's user name.
        admin: whether the user may change system options and the like.
        engine: what the statement may ask of the engine.
        recordings: what the statement records.
        row_cap: the most rows the client takes of the answer (a server's ``autoLimit`` or
            ``exec.query.max_rows``; 0: all of them): a bare ``SELECT *`` is then not read
            whole on the driver, where Spark would stop after those rows.
    """

    sql: str
    catalog: SessionCatalog
    options: SessionOptions
    user: str
    admin: bool
    engine: EngineServices
    recordings: Recordings = field(default_factory=Recordings)
    row_cap: int = 0

    @functools.cached_property
    def settings(self) -> Mapping[str, Any]:
        """The options' values, one snapshot for the whole statement (taken on first use)."""
        return self.options.snapshot()

    @property
    def spark(self) -> Any:
        """The SparkSession the statement's plans use."""
        return self.engine.spark

    @property
    def default_schema(self) -> str | None:
        """The session's default schema (``USE``), or None."""
        return self.catalog.default_schema

    @property
    def temporary(self) -> SessionTemporaryTables:
        """The session's temporary-table store."""
        return self.catalog.temporary

    @property
    def diagnostics(self) -> Diagnostics | None:
        """The statement's scan diagnostics (None: not recorded)."""
        return self.recordings.diagnostics

    def require_admin(self, what: str) -> None:
        """Raises:
        UserError: PERMISSION, when the user is no administrator."""
        if not self.admin:
            raise UserError.permission(
                f"{what} needs an administrator; user [{self.user}] is not one"
            )

    def recording_scans(self) -> StatementContext:
        """This context with a fresh list of planned scans (what EXPLAIN names)."""
        recordings = dataclasses.replace(self.recordings, scans=[])
        return dataclasses.replace(self, recordings=recordings)

    def unrecorded(self) -> StatementContext:
        """This context recording nothing: for a plan made again after the statement (a
        result's DataFrame built at fetch time), which must not count its scans twice."""
        return dataclasses.replace(self, recordings=Recordings(None, None))
