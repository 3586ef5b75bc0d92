"""Scan diagnostics: what a statement's scans did that the user should hear about.

Drill answers ``SELECT regoin FROM dfs.data.sales`` with a column of NULLs (blanks for text)
and says nothing, so a typo looks like missing data. auger answers the same rows and adds a
message naming the column, how many files lacked it, and a close name the files do have:

    Column [regoin] was not found in any of the 3 files of dfs.data.sales; did you mean [region]?

Messages (things that changed what the query sees) are:

* a column the query names that no file has (with a "did you mean"), or that some files lack
  (read as NULL there);
* a column whose files disagree on its type, read as the wider type;
* columns a ``SELECT *`` left out because the table's provided schema is strict;
* invalid records skipped under the skip options, with file and line (at run time).

Statistics (what every scan has, so a clean query has them and no messages): per scan, the files
listed, pruned by the WHERE clause on ``dirN``/implicit columns, and read, and the rows read.

Both are collected per statement: the statement's context (:mod:`auger.sql.context`) carries
one :class:`Diagnostics`, which the planner hands to :func:`scan_planned` and the other
functions here (nothing is collected outside a statement, e.g. when a result's DataFrame is
re-planned at fetch time: that context carries None). Run-time facts come from the scans'
reports (:mod:`auger.spark.scan_report`), which the scans add to :attr:`Diagnostics.reports`,
once the rows are fetched. They reach the
user through the statement result: PEP 249's ``Cursor.messages`` in the DB-API, dimmed lines
after the results in the shell, and the query profile over REST.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from auger.errors import closest_name
from auger.formats.conflicts import conflict_of
from auger.scan.spec import ColumnSource, FileSplit
from auger.spark.discovery import discover_schema, file_schemas
from auger.spark.scan_report import ScanReport
from auger.sql.planning.header_hint import header_hint
from auger.types import ColumnMetadata, DataMode, TupleSchema

if TYPE_CHECKING:
    from auger.scan.plan import PlannedScan, ScanTable
    from auger.sql.catalog.resolution import FileTable
    from auger.sql.planning.columns import Requested

__all__ = [
    "Diagnostics",
    "ScanStats",
    "column_not_found",
    "scan_planned",
    "table_label",
]

#: File names a message lists before it says "...".
_FILES_SHOWN = 3

#: The option bounding how many records of a JSON file its schema is learned from.
_JSON_SAMPLE_OPTION = "auger.scan.json_sample_rows"
_JSON_SAMPLE_DEFAULT = 1000
#: JSON files up to this size that lack a column in their sample are looked at whole.
_RECHECK_BYTES = 4 << 20


@dataclass
class ScanStats:
    """One planned file scan's figures.

    Attributes:
        table: the table as the user wrote it (``dfs.data.sales``).
        files_listed: the files its path and format select.
        files_pruned: of those, the files the WHERE clause ruled out before reading.
        root: the scan's selection root and ``table`` its name in the spec (to find its report).
    """

    table: str
    files_listed: int
    files_pruned: int
    root: str
    spec_table: str


@dataclass
class Diagnostics:
    """What one statement's scans noticed: plan-time messages, per-scan figures, and the
    reports run-time facts arrive in."""

    notes: list[str] = field(default_factory=list)
    scans: list[ScanStats] = field(default_factory=list)
    #: the scans' run-time reports: every scan frame the statement builds adds its own
    reports: list[ScanReport] = field(default_factory=list)

    def note(self, text: str) -> None:
        """Add one message (once)."""
        if text not in self.notes:
            self.notes.append(text)

    def _label(self, report: ScanReport) -> str:
        spec = report.spec
        for scan in self.scans:
            if scan.root == spec.selection_root and scan.spec_table == spec.table:
                return scan.table
        return spec.table or spec.selection_root

    def messages(self) -> list[str]:
        """The plan-time messages, then what the scans that ran skipped."""
        out = list(self.notes)
        for report in self.reports:
            skipped: dict[str, tuple[int, list[int]]] = {}
            for facts in report.facts():
                for path, (count, lines) in facts.skipped.items():
                    total, known = skipped.get(path, (0, []))
                    skipped[path] = (total + count, sorted(set(known).union(lines)))
            for path, (count, lines) in skipped.items():
                text = (
                    f"Skipped {count} invalid record{'s' if count != 1 else ''} of "
                    f"{_file_name(path)} in {self._label(report)}"
                )
                if lines:
                    shown = ", ".join(str(n) for n in lines[:10])
                    more = ", ..." if len(lines) > 10 or len(lines) < count else ""
                    text += f" (line{'s' if len(lines) > 1 else ''} {shown}{more})"
                if text not in out:
                    out.append(text)
        return out

    def statistics(self) -> list[dict[str, Any]]:
        """Per planned file scan: table, files listed / pruned / read, rows read and records
        skipped (these three once its rows were fetched; None before, or where the scan's
        tasks cannot report, as over Spark Connect), and the files read from the raw-file
        cache instead of parsed (known at planning)."""
        out: list[dict[str, Any]] = []
        for scan in self.scans:
            mine = [
                r
                for r in self.reports
                if r.spec.selection_root == scan.root and r.spec.table == scan.spec_table
            ]
            facts = [f for r in mine for f in r.facts()]
            ran = bool(facts)
            read = {p for f in facts for p in f.files}
            out.append(
                {
                    "table": scan.table,
                    "files_listed": scan.files_listed,
                    "files_pruned": scan.files_pruned,
                    "files_read": len(read) if ran and read else None,
                    "rows_read": sum(f.rows for f in facts) if ran else None,
                    "records_skipped": (
                        sum(c for f in facts for c, _ in f.skipped.values()) if ran else None
                    ),
                    "files_from_cache": sum(r.from_cache for r in mine),
                }
            )
        return out


def table_label(table: FileTable) -> str:
    """The table as the user writes it: ``dfs.data.sales``, ``cp.employee.json``."""
    return f"{table.schema.removesuffix('.default')}.{table.name}"


def _file_name(path: str) -> str:
    return path.rstrip("/").rsplit("/", 1)[-1]


def _files(paths: Sequence[str]) -> str:
    names = [_file_name(p) for p in paths[:_FILES_SHOWN]]
    if len(paths) > _FILES_SHOWN:
        names.append("...")
    return ", ".join(names)


def scan_planned(
    diagnostics: Diagnostics | None,
    found: ScanTable,
    requested: Requested,
    planned: PlannedScan,
    options: Mapping[str, Any],
) -> None:
    """Note what planning one file scan found: its files listed and pruned, the columns the
    query names that some of its files lack or type differently, and the columns a ``SELECT *``
    leaves out under a strict provided schema."""
    if diagnostics is None:
        return
    current = diagnostics
    table = found.label
    spec = planned.spec
    listed = len(found.selection.files)
    read = list(dict.fromkeys(f.path for f in spec.files))
    current.scans.append(
        ScanStats(table, listed, max(0, listed - len(read)), spec.selection_root, spec.table)
    )
    _strict_star(current, found, requested, table, options)
    if _positional(found):
        hint = header_hint(found)
        if hint is not None:
            current.note(hint)
    known = (found.schema.column(lname) for lname in requested.columns)
    named = [
        c.name for c in known if c is not None and spec.sources.get(c.name) == ColumnSource.TABLE
    ]
    if len(read) < 2 or not named or _positional(found):
        return
    splits = {f.path: f for f in spec.files}
    per_file = file_schemas(list(splits.values()), found.fmt, options)
    if len(per_file) < 2:
        return
    for name in named:
        _column_across_files(current, found, table, name, per_file, splits, options)


def _positional(found: ScanTable) -> bool:
    """Text without a header: one ``columns`` array, the same in every file."""
    return found.fmt.type == "text" and found.schema.names() == ["columns"]


def _column_across_files(
    diagnostics: Diagnostics,
    found: ScanTable,
    table: str,
    name: str,
    per_file: list[tuple[str, TupleSchema]],
    splits: Mapping[str, FileSplit],
    options: Mapping[str, Any],
) -> None:
    merged = found.schema.column(name)
    if merged is None:
        return
    lacking: list[str] = []
    having: list[tuple[str, ColumnMetadata]] = []
    for path, schema in per_file:
        col = schema.column(name)
        if col is None:
            lacking.append(path)
        else:
            having.append((path, col))
    unsure = False
    if lacking and having:
        lacking, found_late, unsure = _past_the_sample(found, name, lacking, splits, options)
        having.extend(found_late)
    if lacking and having:
        filled = "empty" if found.fmt.type == "text" else "NULL"
        text = (
            f"Column [{name}] is missing from {len(lacking)} of {len(per_file)} files of "
            f"{table} ({_files(lacking)}); read as {filled} there"
        )
        if unsure:
            sample = options.get(_JSON_SAMPLE_OPTION, _JSON_SAMPLE_DEFAULT)
            text += (
                f" (of large JSON files only the first {sample} records were looked at: "
                f"{_JSON_SAMPLE_OPTION})"
            )
        diagnostics.note(text)
    by_type: dict[str, list[str]] = {}
    for path, col in having:
        by_type.setdefault(_type(col), []).append(path)
    if merged.is_map or found.provided is not None or conflict_of(merged) is not None:
        return  # maps merge member by member; a provided type or a conflict is no widening
    if len(by_type) > 1:
        kinds = " and ".join(f"{kind} in {_files(paths)}" for kind, paths in by_type.items())
        diagnostics.note(f"Column [{name}] of {table} is {kinds}; read as {_type(merged)}")


def _past_the_sample(
    found: ScanTable,
    name: str,
    lacking: list[str],
    splits: Mapping[str, FileSplit],
    options: Mapping[str, Any],
) -> tuple[list[str], list[tuple[str, ColumnMetadata]], bool]:
    """A JSON file's schema comes from a sample of its records, so a file may lack a column
    only in its first records. Files up to :data:`_RECHECK_BYTES` are looked at whole; a larger
    one still lacking the column is reported as unsure.

    Returns:
        The files that lack the column, those that have it after all, and whether any of the
        lacking ones was judged by its sample only.
    """
    sample = int(options.get(_JSON_SAMPLE_OPTION, _JSON_SAMPLE_DEFAULT))
    if found.fmt.type != "json" or sample < 0:
        return lacking, [], False
    small = [splits[p] for p in lacking if p in splits and splits[p].size <= _RECHECK_BYTES]
    whole = dict(file_schemas(small, found.fmt, {**options, _JSON_SAMPLE_OPTION: -1}))
    still: list[str] = []
    late: list[tuple[str, ColumnMetadata]] = []
    unsure = False
    for path in lacking:
        col = whole[path].column(name) if path in whole else None
        if col is not None:
            late.append((path, col))
            continue
        still.append(path)
        unsure = unsure or path not in whole
    return still, late, unsure


def _type(col: ColumnMetadata) -> str:
    """The column's type without its nullability (a file may have it NOT NULL, another not)."""
    if col.mode is DataMode.REQUIRED:
        col = col.with_mode(DataMode.OPTIONAL)
    return col.type_string()


def _strict_star(
    diagnostics: Diagnostics,
    found: ScanTable,
    requested: Requested,
    table: str,
    options: Mapping[str, Any],
) -> None:
    provided = found.provided
    if not requested.star or provided is None or not provided.strict or not found.selection.files:
        return
    try:
        discovered = discover_schema(found.selection, found.fmt, options)
    except Exception:  # diagnostics never fail a query: the scan reports its own errors
        return
    left = [c.name for c in discovered if provided.schema.column(c.name) is None]
    if left:
        listed = ", ".join(f"[{n}]" for n in left)
        diagnostics.note(
            f"SELECT * over {table} left out {listed}: the table's provided schema is strict "
            "and does not name " + ("it" if len(left) == 1 else "them")
        )


def column_not_found(
    diagnostics: Diagnostics | None,
    table: str,
    column: str,
    files: int,
    known: Iterable[str],
    within: str = "",
) -> None:
    """Note a column (or map member) the query names that no file of ``table`` has (its values
    are NULLs).

    Args:
        diagnostics: the statement's, or None (nothing is noted).
        table: the table as the user wrote it (``dfs.data.sales``).
        column: the column as the query spells it; for a member, its name in its map.
        files: how many files the table's schema was learned from.
        known: the columns the files do have (the members of the map), for a "did you mean".
        within: for a member, the path of its map (``m``, ``m.inner``), put before the names.
    """
    if diagnostics is None or files <= 0:
        return  # an empty directory has no columns at all: nothing is misspelt
    prefix = f"{within}." if within else ""
    where = "the file" if files == 1 else f"any of the {files} files"
    text = f"Column [{prefix}{column}] was not found in {where} of {table}"
    close = closest_name(column, known)
    if close:
        text += f"; did you mean [{prefix}{close}]?"
    diagnostics.note(text)
