"""Rule: members of maps that no file has, named under ``*``, read as NULL (Drill's answer)."""

from __future__ import annotations

from auger.sql.planning.missing_members import null_missing_members
from auger.sql.planning.select_plan import SelectPlan

__all__ = ["missing_members_as_null"]


def missing_members_as_null(plan: SelectPlan) -> None:
    """``t.m.zz`` of a file table read under ``*`` is NULL when no file's ``m`` has ``zz``."""
    if plan.starred:
        null_missing_members(plan.tree, plan.starred)
