"""auger's configuration: storage plugins, workspaces, formats, Spark and the server.

One TOML file (``--config PATH`` or ``AUGER_CONFIG``) or the same structure as a dict. Keys follow
Drill's names. A given config is merged over the embedded defaults: a plugin or workspace it names
replaces the default one of that name; everything else (``cp``, ``dfs.tmp``...) stays.
"""

from __future__ import annotations

import copy
import functools
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from auger.errors import UserError

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

# tomllib, tempfile and importlib.metadata are imported by the calls that need them: every
# format imports this module, in each Python process Spark starts, and most never load a
# config file nor look up a plugin.

__all__ = [
    "COMPRESSION_SUFFIXES",
    "DEFAULT_FORMATS",
    "FORMAT_ENTRY_POINTS",
    "PLUGIN_DEFAULT_FORMATS",
    "Config",
    "FormatConfig",
    "PluginConfig",
    "WorkspaceConfig",
    "build_plugin",
    "check_temporary_workspace",
    "default_formats",
    "default_tmp_location",
    "format_entry_points",
    "format_option",
    "load_config",
    "server_log_dir",
    "server_profiles_dir",
    "server_users_file",
    "snake_case",
    "state_dir",
]

#: Suffixes of compressed inputs, as Drill's Hadoop codecs name them (``.deflate`` is zlib,
#: ``.snappy``/``.lz4`` Hadoop's block framing, ``.zip`` its first entry); the format is the
#: extension before it (``a.json.gz`` is JSON). ``auger.formats.base.open_input`` reads them.
COMPRESSION_SUFFIXES = (".gz", ".bz2", ".zst", ".zstd", ".deflate", ".snappy", ".lz4", ".zip")

#: Drill's default formats of a file plugin (``dfs``'s bootstrap storage-plugins.json) that
#: auger's built-in readers read.
DEFAULT_FORMATS: dict[str, dict[str, Any]] = {
    "csv": {"type": "text", "extensions": ["csv"], "delimiter": ","},
    "tsv": {"type": "text", "extensions": ["tsv"], "delimiter": "\t"},
    "psv": {"type": "text", "extensions": ["psv", "tbl"], "delimiter": "|"},
    "csvh": {"type": "text", "extensions": ["csvh"], "delimiter": ",", "extract_header": True},
    "json": {"type": "json", "extensions": ["json"]},
    "parquet": {"type": "parquet", "extensions": ["parquet"]},
    # table formats: a directory of either layout is one table (auger.formats.lakehouse)
    "iceberg": {"type": "iceberg", "extensions": []},
    "delta": {"type": "delta", "extensions": []},
}

#: Drill's default formats of ``dfs`` whose readers auger ships as plugins, with Drill's
#: options (each of Drill's format modules adds its own to ``dfs``): a file plugin has each
#: while a plugin of its type is installed, so a format joins the defaults by registering its
#: entry point. Drill's other defaults (sequencefile, pcap, image ...) have no auger reader.
PLUGIN_DEFAULT_FORMATS: dict[str, dict[str, Any]] = {
    "avro": {"type": "avro", "extensions": ["avro"]},
    "excel": {"type": "excel", "extensions": ["xlsx"]},
    "httpd": {
        "type": "httpd",
        "extensions": ["httpd"],
        "logFormat": "common\ncombined",
        "maxErrors": 0,
        "flattenWildcards": False,
    },
    "ltsv": {"type": "ltsv", "extensions": ["ltsv"]},
    "syslog": {"type": "syslog", "extensions": ["syslog"], "maxErrors": 0},
    "xml": {"type": "xml", "extensions": ["xml"]},
}

#: The entry-point group format plugins register under (see docs/plugins.md).
FORMAT_ENTRY_POINTS = "auger.formats"


@functools.lru_cache(maxsize=1)
def format_entry_points() -> tuple[EntryPoint, ...]:
    """The installed format plugins' entry points, looked up once per process."""
    # deferred: keeps start-up light (import auger, the CLI, Spark's workers)
    from importlib.metadata import entry_points

    return tuple(entry_points(group=FORMAT_ENTRY_POINTS))


def default_formats() -> dict[str, dict[str, Any]]:
    """A file plugin's default formats: the built-in readers' and those of the installed
    plugins among :data:`PLUGIN_DEFAULT_FORMATS` (a type not installed is left out)."""
    installed = {ep.name.lower() for ep in format_entry_points()}
    plugins = {
        name: spec
        for name, spec in PLUGIN_DEFAULT_FORMATS.items()
        if str(spec["type"]).lower() in installed
    }
    return {**DEFAULT_FORMATS, **plugins}


def default_tmp_location() -> str:
    """Where ``dfs.tmp`` writes unless the config says otherwise: ``tmp`` in a private
    ``$AUGER_HOME`` (so everything of that auger stays under it), else ``auger-<user>`` in the
    system's temporary directory."""
    home = os.environ.get("AUGER_HOME")
    if home:
        return os.path.join(os.path.abspath(os.path.expanduser(home)), "tmp")
    # deferred: keeps start-up light (import auger, the CLI, Spark's workers)
    import tempfile  # only for the shared default

    user = os.environ.get("USER") or (str(os.getuid()) if hasattr(os, "getuid") else "user")
    return str(Path(tempfile.gettempdir()) / f"auger-{user}")


#: what the state directory is, in denied-path messages (its ``tmp``, the default temporary
#: workspace under a private ``$AUGER_HOME``, stays open: see :meth:`Config.private_paths`)
_STATE_DIR = "auger's state directory"


def state_dir() -> str:
    """auger's own directory (``$AUGER_HOME``, default ``~/.auger``): users, query profiles.

    It belongs to the user running auger, not to a directory every user shares, and no query
    can reach it (see :attr:`Config.private_paths`).
    """
    return os.environ.get("AUGER_HOME") or os.path.join(os.path.expanduser("~"), ".auger")


def server_users_file(server: Mapping[str, Any]) -> str:
    """The users file of a ``[server]`` section: ``users_file``, else in the state directory."""
    return str(server.get("users_file") or os.path.join(state_dir(), "users.json"))


def server_profiles_dir(server: Mapping[str, Any]) -> str:
    """The profile store of a ``[server]`` section: ``profiles_dir``, else in the state
    directory."""
    return str(server.get("profiles_dir") or os.path.join(state_dir(), "profiles"))


def server_log_dir(server: Mapping[str, Any]) -> str:
    """The log directory of a ``[server]`` section: ``log_dir``, else ``logs`` in the state
    directory."""
    return str(server.get("log_dir") or os.path.join(state_dir(), "logs"))


def _bundled_data() -> str:
    return str(Path(__file__).resolve().parent / "data")


def _embedded_defaults() -> dict[str, Any]:
    return {
        "exec": {"default_temporary_workspace": "dfs.tmp"},
        "storage": {
            "dfs": {
                "type": "file",
                "workspaces": {
                    "root": {"location": "/", "writable": False},
                    "tmp": {"location": default_tmp_location(), "writable": True},
                },
            },
            "cp": {
                "type": "file",
                "workspaces": {"default": {"location": _bundled_data(), "writable": False}},
                "classpath": True,
            },
        },
        "spark": {"master": "local[*]", "conf": {}},
        "server": {"host": "127.0.0.1", "port": 8047, "auth": False, "session_timeout": 3600},
    }


#: Where a camelCase name breaks into words: before a capital that follows a small letter or
#: digit, and before the last capital of a run followed by a small letter (``JSONRecords``).
_WORD_BREAK = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def snake_case(name: str) -> str:
    """Drill's camelCase option name in snake_case: ``maxErrors`` → ``max_errors``,
    ``skipMalformedJSONRecords`` → ``skip_malformed_json_records``; snake_case stays."""
    return _WORD_BREAK.sub("_", name).lower()


def format_option(options: Mapping[str, Any], name: str, default: Any = None) -> Any:
    """A format option under Drill's camelCase name or its snake_case form, else ``default``.

    ``name`` may be either spelling. A format block pasted from a Drill storage configuration
    keeps Drill's spelling (``allTextMode``); auger's own style, and every table function
    option (which arrives snake_cased), is ``all_text_mode``. The snake_case form wins when
    both are set: a table function's options are laid over the workspace format's, and the
    query's own value must be the one used.
    """
    snake = snake_case(name)
    if snake in options:
        return options[snake]
    for key, value in options.items():
        if snake_case(key) == snake:
            return value
    return default


@dataclass(frozen=True)
class FormatConfig:
    """A named format of a file plugin: its reader type, extensions and reader options.

    ``options`` keep the spelling they were given in, Drill's camelCase or snake_case; read
    them through :meth:`option`, which finds either.
    """

    name: str
    type: str
    extensions: tuple[str, ...]
    options: Mapping[str, Any] = field(default_factory=dict)

    def option(self, key: str, default: Any = None) -> Any:
        """The option ``key`` (either spelling, see :func:`format_option`), else ``default``."""
        return format_option(self.options, key, default)

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, "extensions": list(self.extensions), **dict(self.options)}


@dataclass(frozen=True)
class WorkspaceConfig:
    """A directory tree under a file plugin, addressed as ``plugin.workspace``."""

    name: str
    location: str
    writable: bool = False
    default_format: str | None = None
    #: scans follow links that lead out of the workspace (an admin's choice; by default such
    #: links are skipped, as naming them is refused)
    follow_links: bool = False


@dataclass(frozen=True)
class PluginConfig:
    """A storage plugin; only file plugins (``type = "file"``) hold workspaces and formats."""

    name: str
    type: str
    workspaces: Mapping[str, WorkspaceConfig]
    formats: Mapping[str, FormatConfig]
    enabled: bool = True
    classpath: bool = False
    raw: Mapping[str, Any] = field(default_factory=dict)

    @property
    def is_file_based(self) -> bool:
        return self.type == "file"

    def format_for(self, path: str) -> FormatConfig | None:
        """The format whose extension matches the file name (compression suffixes ignored)."""
        name = path.rsplit("/", 1)[-1].lower()
        for comp in COMPRESSION_SUFFIXES:
            if name.endswith(comp):
                name = name[: -len(comp)]
                break
        ext = name.rsplit(".", 1)[-1] if "." in name else ""
        for fmt in self.formats.values():
            if ext in fmt.extensions:
                return fmt
        return None


@dataclass(frozen=True)
class Config:
    """The whole validated configuration."""

    plugins: Mapping[str, PluginConfig]
    default_temporary_workspace: str
    spark_master: str
    spark_conf: Mapping[str, str]
    server: Mapping[str, Any]
    raw: Mapping[str, Any]
    #: the TOML file it was read from (None for a dict or the defaults)
    source: str | None = None

    @property
    def private_paths(self) -> tuple[tuple[str, str], ...]:
        """Paths no query may reach, with what each is: the config file, the state directory,
        the server's users file and profile store (configured or default, so an embedded
        engine guards a server's files too), and ``[security] denied_paths``."""
        found = [
            (state_dir(), _STATE_DIR),
            (server_users_file(self.server), "the server's users file"),
            (server_profiles_dir(self.server), "the server's query profiles"),
        ]
        if self.source:
            found.append((self.source, "the config file"))
        extra = dict(self.raw.get("security", {})).get("denied_paths", [])
        found.extend((str(p), "a denied path ([security] denied_paths)") for p in extra)
        return tuple((os.path.abspath(os.path.expanduser(p)), what) for p, what in found)

    @property
    def open_in_state_dir(self) -> tuple[str, ...]:
        """Directories inside the state directory that queries may reach all the same: the
        default temporary workspace when it lives there (a private ``$AUGER_HOME`` keeps its
        ``tmp`` under it). The users file and profile store stay denied on their own."""
        home = os.path.abspath(os.path.expanduser(state_dir()))
        found = self.workspace(self.default_temporary_workspace)
        if found is None:
            return ()
        location = os.path.abspath(found[1].location)
        return (location,) if location.startswith(home.rstrip("/") + "/") else ()

    def workspace(self, full_name: str) -> tuple[PluginConfig, WorkspaceConfig] | None:
        """Look up ``plugin.workspace`` (case-sensitive, as Drill's config is)."""
        plugin_name, _, ws_name = full_name.partition(".")
        plugin = self.plugins.get(plugin_name)
        if plugin is None:
            return None
        ws = plugin.workspaces.get(ws_name or "default")
        return None if ws is None else (plugin, ws)


def _merge(base: dict[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(base)
    for key, value in override.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def _format_configs(raw: Mapping[str, Any] | None) -> dict[str, FormatConfig]:
    """A file plugin's formats: Drill's defaults (:func:`default_formats`), then the plugin's
    own by name.

    A format the plugin lists replaces the default of that name whole (a user who writes
    ``[storage.dfs.formats.csv]`` states every option of it) or adds a new one; ``enabled =
    false`` switches a format off, a default or the plugin's own.
    """
    own = dict(raw or {})
    for name, spec in own.items():
        if not isinstance(spec, Mapping):
            raise UserError.validation(
                f"Format [{name}] must be a table of options, not {spec!r}",
                [f'Fix: write [storage.<plugin>.formats.{name}] with type = "..." under it'],
            )
    # the plugin's own come first, so where one claims a default's extension it wins
    formats: dict[str, Mapping[str, Any]] = {**own}
    formats.update((n, s) for n, s in default_formats().items() if n not in own)
    out = {}
    for name, spec in formats.items():
        spec = dict(spec)
        if not spec.pop("enabled", True):
            continue
        ftype = str(spec.pop("type", name))
        # Drill's log-style plugins spell it ``extension`` (one name, or a list)
        named = spec.pop("extensions", None)
        if named is None:
            named = spec.pop("extension", None) or [name]
        exts = tuple(str(e).lower() for e in ([named] if isinstance(named, str) else named))
        out[name] = FormatConfig(name, ftype, exts, spec)
    return out


def _remote_root(connection: str) -> str:
    """``scheme://authority`` of an object store's connection (``s3a://bucket``), else ``""``."""
    scheme, sep, rest = connection.partition("://")
    if not sep or scheme.lower() == "file" or not scheme.replace("+", "").isalnum():
        return ""
    return f"{scheme.lower()}://" + "/".join(p for p in rest.split("/") if p and p != ".")


def _remote_join(root: str, location: str) -> str:
    parts = [p for p in location.split("/") if p and p != "."]
    if ".." in parts:
        raise UserError.validation(
            f"Workspace location [{location}] under {root} may not hold '..'",
            ["Fix: write the location as a path below the connection"],
        )
    return "/".join([root, *parts])


def build_plugin(name: str, raw: Mapping[str, Any]) -> PluginConfig:
    """A plugin from its raw settings (a config file's table, or the JSON the storage editor
    sends), checking the shapes of its workspaces and formats."""
    workspaces = raw.get("workspaces", {})
    if not isinstance(workspaces, Mapping):
        raise UserError.validation(f"Plugin [{name}]: workspaces must be an object of workspaces")
    for ws_name, ws in workspaces.items():
        if not isinstance(ws, Mapping):
            raise UserError.validation(
                f"Workspace [{name}.{ws_name}] must be an object with location and writable"
            )
        if not isinstance(ws.get("location", "/"), str) or not ws.get("location", "/"):
            raise UserError.validation(f"Workspace [{name}.{ws_name}]: location must be a path")
        if not isinstance(ws.get("writable", False), bool):
            raise UserError.validation(
                f"Workspace [{name}.{ws_name}]: writable must be true or false"
            )
    formats = raw.get("formats")
    if formats is not None and not isinstance(formats, Mapping):
        raise UserError.validation(f"Plugin [{name}]: formats must be an object of formats")
    for fmt_name, spec in dict(formats or {}).items():
        exts = spec.get("extensions", []) if isinstance(spec, Mapping) else []
        if not isinstance(exts, list | tuple) or not all(isinstance(e, str) for e in exts):
            raise UserError.validation(
                f"Format [{fmt_name}] of plugin [{name}]: extensions must be a list of strings"
            )
    return _plugin(name, raw)


def check_temporary_workspace(cfg: Config) -> None:
    """The default temporary workspace exists, is file-based and writable."""
    _validate_temporary_workspace(cfg)


def _follow_links(plugin: str, name: str, ws: Mapping[str, Any]) -> bool:
    """A workspace's ``follow_links`` (``followLinks`` in the storage page's JSON); checked
    here for config files and the editor alike, since ``"false"`` must not read as true."""
    value = ws.get("follow_links", ws.get("followLinks", False))
    if not isinstance(value, bool):
        raise UserError.validation(
            f"Workspace [{plugin}.{name}]: follow_links must be true or false, not [{value}]"
        )
    return value


def _plugin(name: str, raw: Mapping[str, Any]) -> PluginConfig:
    ptype = str(raw.get("type", "file"))
    workspaces: dict[str, WorkspaceConfig] = {}
    connection = str(raw.get("connection", "file:///"))
    if connection.startswith("file://"):
        connection = connection[len("file://") :] or "/"
    remote = _remote_root(connection)
    for ws_name, ws in dict(raw.get("workspaces", {})).items():
        location = str(ws.get("location", "/"))
        if remote:
            # in an object store a workspace lies below the connection, leading ``/`` or not
            location = _remote_join(remote, location)
        elif not os.path.isabs(location):
            location = os.path.join(connection, location)
        workspaces[ws_name] = WorkspaceConfig(
            ws_name,
            location if remote else os.path.normpath(location),
            bool(ws.get("writable", False)),
            ws.get("default_format") or ws.get("defaultInputFormat"),
            _follow_links(name, ws_name, ws),
        )
    if ptype == "file" and "default" not in workspaces:
        # Drill gives every file plugin a ``default`` workspace at the connection root.
        root = remote or os.path.normpath(connection)
        workspaces["default"] = WorkspaceConfig("default", root, False)
    return PluginConfig(
        name=name,
        type=ptype,
        workspaces=workspaces,
        formats=_format_configs(raw.get("formats")),
        enabled=bool(raw.get("enabled", True)),
        classpath=bool(raw.get("classpath", False)),
        raw=dict(raw),
    )


def _validate_temporary_workspace(cfg: Config) -> None:
    """Drill's start-up checks of the default temporary workspace: it exists, is writable and is
    file-based."""
    name = cfg.default_temporary_workspace
    found = cfg.workspace(name) if "." in name else None
    if found is None:
        raise UserError.validation(
            f"Default temporary workspace [{name}] is not found: it must name an existing "
            "workspace as <plugin>.<workspace> (case-sensitive)",
            ["Fix: set exec.default_temporary_workspace to a writable file workspace"],
        )
    plugin, ws = found
    if not plugin.is_file_based:
        raise UserError.validation(
            f"Temporary workspace [{name}] must be file-based, instance of "
            "WorkspaceSchemaFactory.WorkspaceSchema"
        )
    if not ws.writable:
        raise UserError.validation(
            f"Unable to create or drop tables/views. Schema [{name}] is immutable.",
            ["Fix: mark the default temporary workspace writable = true"],
        )
    if _remote_root(ws.location):
        return  # an object store has no directories to make; writes show what is wrong
    try:
        os.makedirs(ws.location, exist_ok=True)
    except OSError as exc:
        raise UserError.validation(
            f"Default temporary workspace [{name}] directory {ws.location} cannot be created: "
            f"{exc.strerror}"
        ) from exc
    if not os.access(ws.location, os.W_OK | os.X_OK):
        raise UserError.validation(
            f"Default temporary workspace [{name}] directory {ws.location} is not writable"
        )


def build_config(
    raw_override: Mapping[str, Any] | None = None, source: str | None = None
) -> Config:
    """Merge ``raw_override`` over the embedded defaults and validate the result."""
    raw = _merge(_embedded_defaults(), raw_override or {})
    plugins = {name: _plugin(name, spec) for name, spec in raw.get("storage", {}).items()}
    exec_cfg = raw.get("exec", {})
    spark = raw.get("spark", {})
    cfg = Config(
        plugins=plugins,
        default_temporary_workspace=str(exec_cfg.get("default_temporary_workspace", "dfs.tmp")),
        spark_master=str(spark.get("master", "local[*]")),
        spark_conf={str(k): str(v) for k, v in dict(spark.get("conf", {})).items()},
        server=dict(raw.get("server", {})),
        raw=raw,
        source=source,
    )
    _validate_temporary_workspace(cfg)
    return cfg


def load_config(
    source: str | os.PathLike[str] | Mapping[str, Any] | Config | None = None,
) -> Config:
    """Load a config from a TOML path, a dict, ``AUGER_CONFIG``, or the embedded defaults."""
    if isinstance(source, Config):
        return source
    if source is None:
        env = os.environ.get("AUGER_CONFIG")
        source = env if env else None
    if source is None:
        return build_config()
    if isinstance(source, Mapping):
        return build_config(source)
    # deferred: keeps start-up light (import auger, the CLI, Spark's workers)
    import tomllib

    path = Path(source)
    try:
        with path.open("rb") as fh:
            raw = tomllib.load(fh)
    except FileNotFoundError:
        raise UserError.validation(f"Config file not found: {path}") from None
    except tomllib.TOMLDecodeError as exc:
        raise UserError.parse(f"Config file {path} is not valid TOML: {exc}") from exc
    return build_config(raw, os.path.abspath(path))
