"""What a statement records as it is planned and run, for the user and for its profile.

A statement's :class:`Recordings` travel in its context (:mod:`auger.sql.context`); the
planner's rules add to them, and the statement's result carries them out
(:class:`~auger.sql.result.QueryResult`): the scan diagnostics
(:mod:`auger.sql.planning.diagnostics`, whose run-time part the scans' reports fill in) and the
tables the planner made DataFrames of, which EXPLAIN and the query profile name
(:mod:`auger.sql.planning.explain`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from auger.scan.plan import PlannedScan
from auger.sql.planning.diagnostics import Diagnostics

__all__ = ["PlannedTableScan", "Recordings"]


@dataclass(frozen=True)
class PlannedTableScan:
    """One table read as planned, and the ids of its DataFrame's output columns.

    ``planned`` is the file scan (None for a system or temporary table, which auger does not
    scan through its scan framework); ``listed`` the table's files before pruning.
    """

    table: str
    ids: tuple[int, ...]
    planned: PlannedScan | None = None
    listed: int = 0
    names: tuple[str, ...] = ()  # the DataFrame's column names


@dataclass
class Recordings:
    """What one statement records.

    Attributes:
        diagnostics: scan messages and figures, None where nobody will read them (a DataFrame
            planned again at fetch time).
        scans: each table the planner made a DataFrame of, for EXPLAIN and the query profile;
            None unless one of them asked (noting one asks Spark for its plan).
    """

    diagnostics: Diagnostics | None = field(default_factory=Diagnostics)
    scans: list[PlannedTableScan] | None = None
