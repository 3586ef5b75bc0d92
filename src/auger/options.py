"""Typed option registry with Drill's SYSTEM and SESSION scopes.

An engine owns one :class:`SystemOptions` (``ALTER SYSTEM``); each session layers a
:class:`SessionOptions` over it (``ALTER SESSION``). Option names and defaults are Drill's where
Drill has the option.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from auger.errors import UserError, closest_name

__all__ = [
    "OPTIONS",
    "OptionDefinition",
    "OptionKind",
    "OptionValue",
    "SessionOptions",
    "SystemOptions",
]

OptionKind = str  # "BOOLEAN" | "LONG" | "DOUBLE" | "STRING"


@dataclass(frozen=True)
class OptionDefinition:
    name: str
    kind: OptionKind
    default: Any
    description: str = ""
    scopes: str = "ALL"  # accessibleScopes: ALL, SYSTEM, SESSION...
    #: how the system value bounds a non-admin session's: "" not at all; "most" (a session
    #: may set at most the system value, 0 turns the feature off); "limit" (0 means no limit,
    #: so a session may not set 0 over a system limit either)
    cap: str = ""

    def exceeds(self, value: Any, system: Any) -> bool:
        """Whether a session's ``value`` would go past the system's ``system`` (see ``cap``)."""
        if self.cap == "most":
            return int(value) > int(system)
        if self.cap == "limit":
            return int(system) > 0 and (int(value) <= 0 or int(value) > int(system))
        return False

    def coerce(self, value: Any) -> Any:
        """Check and convert a value for this option, or raise a VALIDATION error."""
        kind = self.kind
        try:
            if kind == "BOOLEAN":
                if isinstance(value, bool):
                    return value
                if isinstance(value, str) and value.lower() in ("true", "false"):
                    return value.lower() == "true"
                raise TypeError
            if kind == "LONG":
                if isinstance(value, bool):
                    raise TypeError
                if isinstance(value, float) and not value.is_integer():
                    raise TypeError
                return int(value)
            if kind == "DOUBLE":
                if isinstance(value, bool):
                    raise TypeError
                return float(value)
            return value if isinstance(value, str) else str(value)
        except (TypeError, ValueError):
            raise UserError.validation(
                f"Option {self.name} must be of type {kind} but you tried to set to "
                f"{type(value).__name__.upper()}: {value!r}."
            ) from None


def _d(
    name: str, kind: OptionKind, default: Any, description: str = "", cap: str = ""
) -> OptionDefinition:
    return OptionDefinition(name, kind, default, description, cap=cap)


_DEFINITIONS: tuple[OptionDefinition, ...] = (
    _d("store.format", "STRING", "parquet", "Output format of CREATE TABLE AS"),
    _d("store.json.all_text_mode", "BOOLEAN", False, "Read every JSON scalar as VARCHAR"),
    _d("store.json.read_numbers_as_double", "BOOLEAN", False, "Read JSON numbers as DOUBLE"),
    _d("store.json.reader.skip_invalid_records", "BOOLEAN", False, "Skip malformed JSON"),
    _d("store.json.reader.print_skipped_invalid_record_number", "BOOLEAN", False),
    _d("store.json.reader.allow_nan_inf", "BOOLEAN", True, "Read NaN and Infinity as DOUBLE"),
    _d(
        "store.json.reader.allow_escape_any_char",
        "BOOLEAN",
        False,
        "Accept a backslash before any character in JSON strings",
    ),
    _d("store.json.writer.uglify", "BOOLEAN", False),
    _d("store.json.writer.allow_nan_inf", "BOOLEAN", True, "Write NaN and Infinity as bare tokens"),
    _d("store.parquet.compression", "STRING", "snappy"),
    _d(
        "store.parquet.reader.int96_as_timestamp",
        "BOOLEAN",
        False,
        "Read Parquet INT96 values as TIMESTAMP instead of VARBINARY",
    ),
    _d("store.table.use_schema_file", "BOOLEAN", True, "Use .drill.schema provided schemas"),
    _d(
        "storage.list_files_recursively",
        "BOOLEAN",
        False,
        "INFORMATION_SCHEMA.FILES lists workspace directories recursively",
    ),
    _d(
        "auger.storage.listing_ttl_ms",
        "LONG",
        1000,
        "An object-store prefix listed this recently is not listed again (0: always list)",
    ),
    _d("store.text.writer.add_header", "BOOLEAN", True),
    _d("exec.persistent_table.umask", "STRING", "002", "umask of persistent CTAS output"),
    _d("exec.query.max_rows", "LONG", 0, "Rows returned at most (0: no limit)"),
    _d(
        "auger.result.max_rows",
        "LONG",
        0,
        "Rows a result may have; past them it fails with a RESOURCE error (0: no limit)",
        cap="limit",
    ),
    _d(
        "auger.result.max_bytes",
        "LONG",
        0,
        "Bytes (Arrow's size) a result may have; past them it fails with a RESOURCE error "
        "(0: no limit)",
        cap="limit",
    ),
    _d("exec.query.return_result_set_for_ddl", "BOOLEAN", True),
    _d("exec.errors.verbose", "BOOLEAN", False),
    _d("drill.exec.http.rest.errors.verbose", "BOOLEAN", False, "REST errors carry stack traces"),
    _d("exec.enable_union_type", "BOOLEAN", False),
    _d("planner.enable_limit_pushdown", "BOOLEAN", True),
    _d("planner.slice_target", "LONG", 100000),
    _d("drill.exec.functions.cast_empty_string_to_null", "BOOLEAN", False),
    _d("drill.exec.storage.implicit.fqn.column.label", "STRING", "fqn"),
    _d("drill.exec.storage.implicit.filepath.column.label", "STRING", "filepath"),
    _d("drill.exec.storage.implicit.filename.column.label", "STRING", "filename"),
    _d("drill.exec.storage.implicit.suffix.column.label", "STRING", "suffix"),
    _d("drill.exec.storage.implicit.last_modified_time.column.label", "STRING", "lmt"),
    _d("drill.exec.storage.file.partition.column.label", "STRING", "dir"),
    _d(
        "auger.scan.batch_rows",
        "LONG",
        4096,
        "Rows per scan batch (the loader's row limit)",
        cap="most",
    ),
    _d(
        "auger.scan.batch_bytes",
        "LONG",
        16 * 1024 * 1024,
        "Bytes any one column of a scan batch may hold (the loader's vector size limit); a row "
        "that would pass it starts the next batch",
        cap="most",
    ),
    _d(
        "auger.scan.json_sample_rows",
        "LONG",
        1000,
        "JSON rows sampled per file to find a schema (-1: every row)",
    ),
    _d("auger.scan.target_split_bytes", "LONG", 128 * 1024 * 1024, "Bytes per Spark task"),
    _d("auger.scan.parallelism", "LONG", 0, "Spark tasks a scan aims for (0: the cores)"),
    _d(
        "auger.scan.parallel_discovery_files",
        "LONG",
        64,
        "Discovery uses Spark past this",
        cap="most",
    ),
    _d(
        "auger.scan.local_limit_rows",
        "LONG",
        10_000,
        "LIMITs up to this are read on the driver",
        cap="most",
    ),
    _d(
        "auger.scan.local_bytes",
        "LONG",
        4 * 1024 * 1024,
        "Scans of whole files up to this many uncompressed bytes in all are read on the driver",
        cap="most",
    ),
    _d(
        "auger.scan.local_answer_bytes",
        "LONG",
        512 * 1024 * 1024,
        "A bare SELECT * of files up to this many uncompressed bytes is answered on the driver",
        cap="most",
    ),
    _d(
        "auger.scan.text_max_field_bytes",
        "LONG",
        16 * 1024 * 1024,
        "Longest text field accepted",
        cap="most",
    ),
    _d("auger.scan.text_force_python", "BOOLEAN", False, "Read text with the Python parser only"),
    _d(
        "auger.scan.text_reader",
        "VARCHAR",
        "auto",
        "Text tokenizer before any fallback: auto (auger's own when built) or arrow (pyarrow's)",
    ),
    _d("auger.scan.json_force_python", "BOOLEAN", False, "Read JSON with the Python parser only"),
    _d("auger.scan.native_parquet", "BOOLEAN", True, "Parquet through Spark's reader if exact"),
    _d(
        "auger.cache.enabled",
        "BOOLEAN",
        True,
        "Keep what scans parse of raw files as Parquet (off by default on a cluster or Spark "
        "Connect unless auger.cache.location is set)",
    ),
    _d(
        "auger.cache.location",
        "VARCHAR",
        "",
        "Where the raw-file cache is (a directory or an s3a:// prefix; empty: in the state dir)",
    ),
    _d("auger.cache.max_bytes", "LONG", 10 * 1024**3, "Bytes the raw-file cache may hold (LRU)"),
)

OPTIONS: Mapping[str, OptionDefinition] = {d.name: d for d in _DEFINITIONS}


@dataclass(frozen=True)
class OptionValue:
    """One row of ``sys.options`` / ``/options.json``."""

    name: str
    kind: OptionKind
    value: Any
    default: Any
    scope: str  # BOOT, SYSTEM or SESSION: where the current value comes from
    accessible_scopes: str


def _lookup(name: str) -> OptionDefinition:
    found = OPTIONS.get(name) or next(
        (d for d in OPTIONS.values() if d.name.lower() == name.lower()), None
    )
    if found is None:
        close = closest_name(name, OPTIONS)
        hint = f" Did you mean '{close}'?" if close else ""
        raise UserError.validation(f"The option '{name}' does not exist.{hint}")
    return found


class SystemOptions:
    """Engine-wide option values (``ALTER SYSTEM``), thread-safe.

    ``defaults``: the engine's own defaults where they differ from an option's definition (what
    the engine's set-up decides, such as the raw-file cache being off where Spark runs on other
    machines); ``ALTER SYSTEM RESET`` returns to them, and ``sys.options`` reports them.
    """

    def __init__(
        self, overrides: Mapping[str, Any] | None = None, defaults: Mapping[str, Any] | None = None
    ) -> None:
        self._values: dict[str, Any] = {}
        self._defaults: dict[str, Any] = {}
        self._lock = threading.Lock()
        for name, value in (defaults or {}).items():
            d = _lookup(name)
            self._defaults[d.name] = d.coerce(value)
        for name, value in (overrides or {}).items():
            self.set(name, value)

    def default(self, name: str) -> Any:
        """The value ``name`` has when nobody set it: the engine's default, else the
        definition's."""
        d = _lookup(name)
        return self._defaults.get(d.name, d.default)

    def definition(self, name: str) -> OptionDefinition:
        return _lookup(name)

    def set(self, name: str, value: Any) -> str:
        d = _lookup(name)
        with self._lock:
            self._values[d.name] = d.coerce(value)
        return d.name

    def reset(self, name: str) -> str:
        d = _lookup(name)
        with self._lock:
            self._values.pop(d.name, None)
        return d.name

    def reset_all(self) -> None:
        with self._lock:
            self._values.clear()

    def get(self, name: str) -> Any:
        d = _lookup(name)
        with self._lock:
            if d.name in self._values:
                return self._values[d.name]
        return self._defaults.get(d.name, d.default)

    def scope_of(self, name: str) -> str:
        return "SYSTEM" if _lookup(name).name in self._values else "BOOT"


class SessionOptions:
    """A session's option values layered over the system's (``ALTER SESSION``).

    Options that move work into the server process or raise its limits (their definition's
    ``cap``) are bounded by their system value in a session that is not an administrator's:
    one user cannot make the server read a large scan itself, or lift the result limit, for a
    server every user shares. Such a session may lower them; raising one is a PERMISSION error.
    """

    def __init__(self, system: SystemOptions, user: str | None = None) -> None:
        self.system = system
        #: the non-admin user whose session this is (None: not capped)
        self.capped_user = user
        self._values: dict[str, Any] = {}

    def set(self, name: str, value: Any) -> str:
        d = _lookup(name)
        value = d.coerce(value)
        if self.capped_user is not None and d.exceeds(value, self.system.get(d.name)):
            raise UserError.permission(
                f"Option {d.name} cannot be set to {value} in a session of user "
                f"[{self.capped_user}]: the server allows at most {self.system.get(d.name)}"
                + (" (and not 0, which means no limit)" if d.cap == "limit" else ""),
                ["Fix: an administrator can raise it for everyone with ALTER SYSTEM SET"],
            )
        self._values[d.name] = value
        return d.name

    def reset(self, name: str) -> str:
        d = _lookup(name)
        self._values.pop(d.name, None)
        return d.name

    def reset_all(self) -> None:
        self._values.clear()

    def get(self, name: str) -> Any:
        d = _lookup(name)
        if d.name in self._values:
            return self._values[d.name]
        return self.system.get(d.name)

    def __getitem__(self, name: str) -> Any:
        return self.get(name)

    def values(self) -> Iterator[OptionValue]:
        """Every option with its current value and where it comes from, sorted by name."""
        for d in sorted(OPTIONS.values(), key=lambda d: d.name):
            if d.name in self._values:
                scope, value = "SESSION", self._values[d.name]
            else:
                scope, value = self.system.scope_of(d.name), self.system.get(d.name)
            yield OptionValue(d.name, d.kind, value, self.system.default(d.name), scope, d.scopes)

    def snapshot(self, prefix: str = "") -> dict[str, Any]:
        """Current values of all options whose names start with ``prefix`` (for scan specs)."""
        return {v.name: v.value for v in self.values() if v.name.startswith(prefix)}
