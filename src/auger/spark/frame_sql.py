"""Spark SQL over DataFrames: how the planner hands its scans to ``spark.sql``.

The planner turns a Drill query into Spark SQL whose tables are DataFrames it built (scans,
views, system tables). They are passed to ``spark.sql(query, **frames)``, which binds each
``{name}`` in the text to its DataFrame, rather than registered as session views: a classic
session registers and drops them around its (eager) analysis, and Spark Connect sends the
DataFrames' plans with the query, so a lazily analysed query can never lose one. Nothing is
left in the session's catalog, and no other module needs to know how the names look. The one
exception is a kept frame of a small read, a view for as long as it is kept
(:mod:`auger.spark.kept_frames`).

The planner writes each table as a plain identifier from :func:`frame_names`, unique to the
query, and :func:`sql_over_frames` turns those identifiers into placeholders (doubling every
other brace, which ``spark.sql`` would otherwise read as one).
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from auger.spark.plan_reuse import ReusedPlans

__all__ = ["frame_names", "sql_over_frames"]


def frame_names(count: int) -> list[str]:
    """``count`` identifiers for a query's tables, unlike any name a user could write."""
    token = uuid.uuid4().hex[:16]
    return [f"frame{token}_{n}" for n in range(count)]


def sql_over_frames(
    spark: Any,
    sql: str,
    frames: Mapping[str, Any],
    views: Mapping[str, str] | None = None,
    plans: ReusedPlans | None = None,
) -> Any:
    """The DataFrame of ``sql``, whose tables named in ``frames`` are those DataFrames.

    ``views`` names, by table, the temporary views already registered for some of those
    frames (kept frames, see :mod:`auger.spark.kept_frames`): those tables are written as
    their views, and only the others are bound for this query. When every table is a view,
    the DataFrame ``plans`` (None: none) kept for the same text is taken rather than planned
    again, and a new one is offered to it (:mod:`auger.spark.plan_reuse`).
    """
    views = views or {}
    bound = {name: frame for name, frame in frames.items() if name not in views}
    # braces are doubled only where ``spark.sql`` formats the text (when it binds frames)
    text = sql.replace("{", "{{").replace("}", "}}") if bound else sql

    def table(m: re.Match[str]) -> str:
        name = m.group(1)
        return f"`{views[name]}`" if name in views else "{" + name + "}"

    if frames:
        names = re.compile(r"\b(" + "|".join(re.escape(name) for name in frames) + r")\b")
        text = names.sub(table, text)
    if plans is None or bound:
        return spark.sql(text, **bound)
    found = plans.take(text)
    if found is not None:
        return found
    frame = spark.sql(text)
    plans.offer(text, views.values(), frame)
    return frame
