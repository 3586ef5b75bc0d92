"""The scan schema tracker: from a project list (and maybe a schema) to the scan's output schema.

A scan starts with a project list and, perhaps, a schema: a *defined* schema (the planner's exact
output schema), or a *provided* schema (hints from ``.drill.schema``, lenient or strict). Each
projected column starts *dynamic* (type LATE) unless a schema types it. Then, in order:

1. the implicit-column resolver marks file metadata and partition columns
   (:meth:`ScanSchemaTracker.expand_implicit_col`, :meth:`~ScanSchemaTracker.apply_implicit_cols`);
2. each reader receives the :meth:`~ScanSchemaTracker.reader_input_schema` and a
   :meth:`~ScanSchemaTracker.projection_filter`, may declare an early schema
   (:meth:`~ScanSchemaTracker.apply_early_reader_schema`), and after a batch reports what it
   produced (:meth:`~ScanSchemaTracker.apply_reader_schema`);
3. the columns it did not produce (:meth:`~ScanSchemaTracker.missing_columns`) get types from the
   missing-column handler (:meth:`~ScanSchemaTracker.resolve_missing_cols`).

Once no column is dynamic (and a wildcard has been expanded) the schema is *resolved*. With a
wildcard and ``allow_schema_change`` later readers may still add columns (the version grows);
without it, the first reader's schema is committed and later new columns are not projected.

Output order: the project list's order; a wildcard's columns go where the ``*`` was, in the order
of the first schema that expanded it (provided schema, else reader); partition columns added for a
wildcard follow the table columns.
"""

from __future__ import annotations

import enum
import logging
from collections.abc import Iterable, Sequence

from auger.projection import (
    ProjectionParseResult,
    RequestedColumn,
    RequestedTuple,
    is_consistent,
    is_wildcard,
    parse_projection,
)
from auger.scan.conflicts import (
    ErrorContext,
    ScanStateError,
    SchemaMismatchError,
    projection_conflict,
    type_conflict,
)
from auger.scan.filter import (
    PROJECT_ALL,
    PROJECT_NONE,
    ProjectionFilter,
    SchemaFilter,
    same_type,
)
from auger.scan.schema import ScanColumn, ScanTuple, dynamic_column, is_excluded_from_wildcard
from auger.types import ColumnMetadata, TupleSchema

__all__ = ["STRICT_PROPERTY", "ProjectionType", "ScanSchemaTracker"]

log = logging.getLogger(__name__)

#: Table property of a provided schema that makes it strict (the schema *is* the column list).
STRICT_PROPERTY = "drill.strict"


class ProjectionType(enum.StrEnum):
    """What the scan projects: all columns (``*``), some (a list), or none (``COUNT(*)``)."""

    ALL = "ALL"
    SOME = "SOME"
    NONE = "NONE"

    def __call__(self) -> ProjectionType:
        # Lets ``tracker.projection_type()`` read like Drill's method as well as a property.
        return self


class _Version(int):
    """An int that may also be called, so ``schema_version`` and ``schema_version()`` agree."""

    def __call__(self) -> int:
        return int(self)


def is_strict(schema: object) -> bool:
    """Does a provided schema carry ``drill.strict = true`` among its table properties?"""
    props = getattr(schema, "properties", None) or {}
    return str(props.get(STRICT_PROPERTY, "false")).strip().lower() == "true"


def _is_dynamic_wildcard(schema: TupleSchema) -> bool:
    """A defined schema of just ``**`` says nothing: the planner did not know the columns."""
    return len(schema) == 1 and is_wildcard(schema[0].name)


class ScanSchemaTracker:
    """Tracks a scan's schema from project list to resolved output (see the module docstring).

    Build with :meth:`build`; the constructor is internal.
    """

    def __init__(
        self,
        parse: ProjectionParseResult,
        allow_schema_change: bool,
        error_context: ErrorContext | None,
    ) -> None:
        self._parse = parse
        self._allow_schema_change = allow_schema_change
        self._context = error_context or ErrorContext()
        self._version = 1
        self._strict = False
        self._defined = False
        # Has a schema (provided, early or reader) filled in the wildcard yet?
        self._expanded = False
        self._implicit_expansions = 0
        if parse.is_project_none:
            self._type = ProjectionType.NONE
        elif parse.is_project_all:
            self._type = ProjectionType.ALL
        else:
            self._type = ProjectionType.SOME
        self._schema = ScanTuple(open=parse.is_project_all, projection=parse.columns)
        for proj in parse.columns:
            self._schema.append(ScanColumn(dynamic_column(proj.name), proj))
        self._schema.insert_point = parse.wildcard_posn if parse.is_project_all else -1

    # ------------------------------------------------------------------------------ building
    @classmethod
    def build(
        cls,
        projection: Sequence[str] | None,
        defined_schema: TupleSchema | None = None,
        provided_schema: TupleSchema | None = None,
        allow_schema_change: bool = True,
        *,
        strict: bool | None = None,
        error_context: ErrorContext | None = None,
    ) -> ScanSchemaTracker:
        """Create the tracker for one scan.

        Args:
            projection: the project list (``["*"]``, ``["a", "m.x", "c[2]"]``, ``[]``);
                ``None`` means ``*``.
            defined_schema: the planner's exact output schema. Must match the project list
                name for name (unless the list is a wildcard). Columns may be LATE.
            provided_schema: type hints (a ``TupleSchema``, or an object with ``.schema`` and
                table ``.properties`` such as a ``.drill.schema`` file); strict if the table
                property ``drill.strict`` is true (or ``strict=True``), in which case a
                wildcard means exactly its columns.
            allow_schema_change: with a wildcard, may later readers add columns?
            strict: overrides the provided schema's ``drill.strict`` property.
            error_context: scan-level context lines for errors.

        Raises:
            SchemaMismatchError: the defined schema and the project list disagree.
            UserError: a schema column cannot meet its projection (``a[2]`` on an INT).
        """
        parse = parse_projection(projection)
        tracker = cls(parse, allow_schema_change, error_context)
        if defined_schema is not None and not _is_dynamic_wildcard(defined_schema):
            tracker._apply_defined(defined_schema)
        elif provided_schema is not None:
            # A provided-schema file object (``storage.schema_file.SchemaFile``: ``.schema`` and
            # table ``.properties``) is accepted as well as a bare ``TupleSchema``.
            columns = provided_schema
            if not isinstance(provided_schema, TupleSchema):
                columns = getattr(provided_schema, "schema", provided_schema)
            tracker._apply_provided(
                columns, is_strict(provided_schema) if strict is None else strict
            )
        tracker._version = 1
        return tracker

    def _apply_defined(self, defined: TupleSchema) -> None:
        requested = self._parse.columns
        if not requested.is_project_all():
            _verify_defined(requested, defined, "")
        self._defined = self._strict = True
        self._expanded = True
        self._schema = ScanTuple(open=False, projection=requested)
        for col in defined:
            proj = requested.get(col.name)
            self._schema.append(self._make_column(col, proj, "Defined", True, keep_order=True))
        # The defined schema is the column list, even under a wildcard.
        self._type = ProjectionType.NONE if defined.is_empty() else ProjectionType.SOME

    def _apply_provided(self, provided: TupleSchema, strict: bool) -> None:
        if self._type is ProjectionType.NONE:
            return  # COUNT(*) reads no columns, whatever the schema says
        self._strict = strict
        if self._type is ProjectionType.ALL:
            self._merge(self._schema, provided, "Provided", self._context, "ignore", closed=strict)
            self._expanded = True
            if strict:
                self._type = ProjectionType.SOME
                self._schema.open = False
            return
        for sc in self._schema.columns():
            pc = provided.column(sc.name)
            if pc is not None and sc.is_dynamic:
                self._schema.replace(
                    sc, self._make_column(pc, sc.projection, "Provided", strict, self._context)
                )

    # ----------------------------------------------------------------------- column building
    def _make_column(
        self,
        col: ColumnMetadata,
        proj: RequestedColumn | None,
        source: str,
        closed: bool,
        context: ErrorContext | None = None,
        keep_order: bool = False,
    ) -> ScanColumn:
        """A scan column for ``col`` as projected by ``proj``: maps keep the projected members
        (explicit ones first) and, if projected whole and not closed, stay open for more."""
        if col.is_dynamic:
            return ScanColumn(col, proj)
        if proj is not None and not is_consistent(proj, col):
            raise projection_conflict(source, proj, col, context or self._context)
        if not col.is_map:
            return ScanColumn(col, proj)
        wanted = proj.members if proj is not None else None
        specific = wanted is not None and not wanted.is_project_all()
        members = ScanTuple(open=not specific and not closed, projection=wanted)
        children = list(col.children or ())

        def member(child: ColumnMetadata | None, mp: RequestedColumn | None, name: str) -> None:
            if child is None:
                members.append(ScanColumn(dynamic_column(name), mp))
            else:
                members.append(self._make_column(child, mp, source, closed, context, keep_order))

        if keep_order:
            for child in children:
                member(child, wanted.get(child.name) if wanted else None, child.name)
        else:
            for mp in wanted or ():
                member(col.member(mp.name), mp, mp.name)
            if not specific:
                for child in children:
                    if child.name not in members and not is_excluded_from_wildcard(child):
                        member(child, None, child.name)
        return ScanColumn(col.with_children(()), proj, members)

    def _merge(
        self,
        tup: ScanTuple,
        schema: Iterable[ColumnMetadata],
        source: str,
        context: ErrorContext | None,
        unknown: str,
        closed: bool = False,
    ) -> bool:
        """Fold ``schema`` into ``tup``; return whether the scan schema changed.

        ``unknown`` says what to do with a column ``tup`` does not have and cannot take:
        ``"ignore"`` it, or raise (``"error"``: the reader wrote a column never projected).
        """
        changed = False
        # The first schema to fill a wildcard moves explicitly listed, still dynamic columns to
        # the wildcard's place, so ``SELECT *, a`` keeps the table's own order.
        expanding = tup is self._schema and self._type is ProjectionType.ALL and not self._expanded
        for col in schema:
            sc = tup.get(col.name)
            if sc is None:
                if tup.open and not is_excluded_from_wildcard(col):
                    tup.insert_table_column(self._make_column(col, None, source, closed, context))
                    changed = True
                elif unknown == "error" and tup is self._schema:
                    raise ScanStateError(
                        f"{source} returned column `{col.name}`, which the scan did not project",
                        (context or self._context).all_lines(),
                    )
                continue
            if sc.is_implicit:
                log.warning(
                    "%s column %s shadows implicit column %s; the implicit column wins",
                    source,
                    col.name,
                    sc.name,
                )
                continue
            if sc.is_dynamic:
                resolved = self._make_column(col, sc.projection, source, closed, context)
                if expanding and sc.projection is not None and not col.is_dynamic:
                    tup.remove(sc)
                    tup.insert_table_column(resolved)
                else:
                    tup.replace(sc, resolved)
                changed = changed or not col.is_dynamic
                continue
            scan_col = sc.column
            if not col.is_dynamic and not same_type(scan_col, col):
                raise type_conflict(source, sc.metadata(), col, context or self._context)
            if sc.members is not None and col.is_map:
                changed = (
                    self._merge(sc.members, col.children or (), source, context, "ignore", closed)
                    or changed
                )
        return changed

    def _bump(self, changed: bool) -> None:
        if changed:
            self._version += 1

    def _commit(self) -> None:
        """After the first reader: without schema change, the scan schema is final."""
        if self._type is ProjectionType.ALL:
            self._expanded = True
        if not self._allow_schema_change:
            if self._type is ProjectionType.ALL:
                self._type = ProjectionType.SOME
            self._schema.close()

    # ---------------------------------------------------------------------------- queries
    @property
    def projection_type(self) -> ProjectionType:
        """ALL, SOME or NONE; a wildcard becomes SOME under a strict schema or once committed."""
        return self._type

    @property
    def schema_version(self) -> int:
        """Starts at 1 and grows each time the output schema really changes."""
        return _Version(self._version)

    @property
    def allow_schema_change(self) -> bool:
        return self._allow_schema_change

    @property
    def is_strict(self) -> bool:
        """True with a strict provided schema or a defined schema."""
        return self._strict

    def projection(self) -> RequestedTuple:
        """The parsed project list."""
        return self._parse.columns

    def is_resolved(self) -> bool:
        """Is every column's type known (and, for a wildcard, the column set)?"""
        if self._type is ProjectionType.NONE:
            return True
        if self._type is ProjectionType.ALL and not self._expanded:
            return False
        return self._schema.is_resolved()

    def internal_schema(self) -> ScanTuple:
        """The live scan schema (mostly for tests and the implicit-column resolver)."""
        return self._schema

    def error_context(self) -> ErrorContext:
        return self._context

    def reader_input_schema(self) -> TupleSchema:
        """What a reader should produce: the scan schema minus implicit columns (LATE where
        the reader chooses the type)."""
        return self._schema.to_schema(include_implicit=False)

    def output_schema(self) -> TupleSchema:
        """The scan's output: table and implicit columns in output order."""
        return self._schema.to_schema()

    def missing_columns(self, reader_output: Iterable[ColumnMetadata]) -> TupleSchema:
        """Columns of the reader input schema the reader did not produce (maps: the missing
        members only, inside their map). Extra reader columns are ignored."""
        return TupleSchema(_missing(self._schema, TupleSchema(reader_output)))

    def projection_filter(self, error_context: ErrorContext | None = None) -> ProjectionFilter:
        """The filter a reader's result set loader uses to decide which columns to keep."""
        if self._type is ProjectionType.NONE:
            return PROJECT_NONE
        if self._type is ProjectionType.ALL and not self._expanded and len(self._schema) == 0:
            return PROJECT_ALL
        return SchemaFilter.of(self._schema, "Reader", error_context or self._context)

    # ------------------------------------------------------------------------- lifecycle
    def expand_implicit_col(self, resolved: ColumnMetadata, marker: object) -> None:
        """Add an implicit column a wildcard brings (partition columns ``dirN``), after the
        table columns."""
        self._schema.insert_after_table_columns(
            ScanColumn(resolved, None, None, marker), self._implicit_expansions
        )
        self._implicit_expansions += 1

    def apply_implicit_cols(self) -> TupleSchema:
        """Finish implicit-column resolution; return the implicit columns in output order.

        A list of only implicit columns (``SELECT filename``) reads no table columns, like
        ``COUNT(*)``.
        """
        if self._type is ProjectionType.SOME and all(c.is_implicit for c in self._schema.columns()):
            self._type = ProjectionType.NONE
        if (
            self._type is ProjectionType.ALL
            and len(self._parse.columns) > 0
            and all(c.is_implicit for c in self._schema.columns())
        ):
            # ``fqn, *, filename``: every named column is known; the wildcard may still add.
            self._expanded = True
        return self._schema.implicit_schema()

    def apply_early_reader_schema(
        self, reader_schema: Iterable[ColumnMetadata], error_context: ErrorContext | None = None
    ) -> None:
        """A reader that knows its schema before reading declares it here; columns the scan does
        not want are ignored."""
        changed = self._merge(
            self._schema, reader_schema, "Reader", error_context or self._context, "ignore"
        )
        self._bump(changed)
        self._commit()

    def apply_reader_schema(
        self, reader_output: Iterable[ColumnMetadata], error_context: ErrorContext | None = None
    ) -> None:
        """Fold the schema a reader actually produced into the scan schema.

        Raises:
            UserError: a type conflicts with its projection or with the settled type.
            ScanStateError: the reader produced a column the scan did not project.
        """
        changed = self._merge(
            self._schema, reader_output, "Reader", error_context or self._context, "error"
        )
        self._bump(changed)
        self._commit()

    def resolve_missing_cols(self, missing: Iterable[ColumnMetadata]) -> None:
        """Take the types the missing-column handler chose for columns no reader produced."""
        changed = self._merge(self._schema, missing, "Missing", self._context, "ignore")
        self._bump(changed)

    def __repr__(self) -> str:
        return (
            f"ScanSchemaTracker({self._type.value}, v{self._version}, "
            f"{'resolved' if self.is_resolved() else 'unresolved'}: {self._schema!r})"
        )


def _missing(tup: ScanTuple, produced: TupleSchema) -> list[ColumnMetadata]:
    out: list[ColumnMetadata] = []
    for sc in tup.columns():
        if sc.is_implicit:
            continue
        got = produced.column(sc.name)
        if got is None:
            out.append(sc.metadata())
        elif sc.members is not None and got.is_map:
            sub = _missing(sc.members, got.schema)
            if sub:
                out.append(sc.column.with_children(sub))
    return out


def _verify_defined(requested: RequestedTuple, defined: TupleSchema, prefix: str) -> None:
    """A defined schema must list exactly the projected columns, in order (maps: recursively
    for member projections)."""
    names = [c.name for c in requested]
    have = defined.names()
    if [n.lower() for n in names] != [n.lower() for n in have]:
        where = f" in map `{prefix}`" if prefix else ""
        raise SchemaMismatchError(
            f"Defined schema does not match the project list{where}",
            [
                f"Projection: {', '.join(c.project_string() for c in requested)}",
                f"Defined schema: {defined}",
            ],
        )
    for proj in requested:
        col = defined[proj.name]
        if proj.members is None or proj.members.is_project_all() or col.is_dynamic:
            continue
        if not col.is_map:
            raise SchemaMismatchError(
                f"Defined column `{col.name}` is not a map but is projected as one",
                [f"Projected column: {proj.project_string()}", f"Defined column: {col}"],
            )
        _verify_defined(proj.members, col.schema, col.name)
