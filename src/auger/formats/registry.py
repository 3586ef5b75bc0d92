"""Format plugins by reader type: built-ins loaded lazily, third parties by entry point.

Third-party plugins register a ``FormatPlugin`` subclass under the entry-point group
``auger.formats``; the entry-point name is the reader type used in workspace configs. A second
registration of the same type name is an error, so a plugin never silently replaces another.

A plugin registered in code (``register_format``) exists only in the process that registered
it; Spark's Python workers never ran that line. Such a plugin travels with each scan instead:
:func:`shipped_plugin` pickles it by value (cloudpickle, as Spark ships functions) into the scan
spec, and :func:`install_shipped` registers it in the worker before the scan runs.
"""

from __future__ import annotations

import importlib
import pickle
import sys
from typing import Any

from auger.errors import AugerError, UserError
from auger.formats.base import FormatPlugin

__all__ = [
    "DuplicateFormatError",
    "get_format",
    "install_shipped",
    "known_formats",
    "register_format",
    "shipped_plugin",
    "unregister_format",
]


class DuplicateFormatError(AugerError, ValueError):
    """A second plugin registered under a reader type name that is already taken."""


_BUILTIN: dict[str, str] = {
    "text": "auger.formats.text:TextFormat",
    "json": "auger.formats.json:JsonFormat",
    "parquet": "auger.formats.parquet:ParquetFormat",
    "iceberg": "auger.formats.lakehouse.plugin:IcebergFormat",
    "delta": "auger.formats.lakehouse.plugin:DeltaFormat",
}

_instances: dict[str, FormatPlugin] = {}
_registered: dict[str, type[FormatPlugin]] = {}
_entry_points_loaded = False
_from_entry_points: set[str] = set()
_shipped: dict[str, str] = {}  # type name -> the pickled plugin, made once


def register_format(name: str, plugin: type[FormatPlugin] | FormatPlugin) -> None:
    """Register a plugin (class or instance) under a reader type name.

    Raises:
        DuplicateFormatError: the name is a built-in or already registered.
        TypeError: the object is not a ``FormatPlugin``.
    """
    if name in _BUILTIN or name in _registered:
        raise DuplicateFormatError(f"format plugin [{name}] is already registered")
    if isinstance(plugin, FormatPlugin):
        _registered[name] = type(plugin)
        _instances[name] = plugin
        return
    if not (isinstance(plugin, type) and issubclass(plugin, FormatPlugin)):
        raise TypeError(f"format plugin [{name}] must be a FormatPlugin, not {plugin!r}")
    _registered[name] = plugin


def unregister_format(name: str) -> None:
    """Forget a registered (non built-in) plugin; for tests and embedded re-configuration.
    A plugin registered under the name later is that code's: shipped to the workers, even if
    the name was an entry point's (which the workers would find instead)."""
    _registered.pop(name, None)
    _shipped.pop(name, None)
    _from_entry_points.discard(name)
    if name not in _BUILTIN:
        _instances.pop(name, None)


def entry_points(group: str) -> Any:
    """The installed entry points of ``group``. ``importlib.metadata`` is imported here, on
    first use: a Python worker Spark starts for a scan of a built-in format never needs it."""
    # deferred: keeps start-up light (import auger, the CLI, Spark's workers)
    from importlib.metadata import entry_points as installed

    return installed(group=group)


def _load_entry_points() -> None:
    global _entry_points_loaded
    if _entry_points_loaded:
        return
    _entry_points_loaded = True
    for ep in entry_points(group="auger.formats"):
        register_format(ep.name, ep.load())
        _from_entry_points.add(ep.name)


def known_formats() -> list[str]:
    _load_entry_points()
    return sorted({*_BUILTIN, *_registered})


def get_format(name: str) -> FormatPlugin:
    """The plugin instance for a reader type; an unknown type is a VALIDATION error."""
    if name in _instances:
        return _instances[name]
    if name not in _BUILTIN:
        # a built-in needs no entry point loaded: a Spark worker scanning JSON imports only the
        # JSON reader, not every installed plugin
        _load_entry_points()
    if name not in _BUILTIN and name not in _registered:
        # a table function's ``type => 'logregex'`` arrives lower-cased: type names are
        # matched without regard to case when that is unambiguous
        same = [known for known in known_formats() if known.lower() == name.lower()]
        if len(same) == 1:
            name = same[0]
            if name in _instances:
                return _instances[name]
    if name in _BUILTIN:
        module, _, cls_name = _BUILTIN[name].partition(":")
        cls = getattr(importlib.import_module(module), cls_name)
    elif name in _registered:
        cls = _registered[name]
    else:
        raise UserError.validation(
            f"Unknown format type [{name}]", [f"Known types: {', '.join(known_formats())}"]
        )
    _instances[name] = cls()
    return _instances[name]


def shipped_plugin(name: str) -> str:
    """A plugin registered in code under ``name``, pickled by value for other processes.

    Empty for built-ins and entry points, which every process finds by itself. The plugin's
    module is pickled by value too, so a module the workers cannot import (a script, a test
    file loaded by path) still arrives whole.
    """
    if name in _BUILTIN or name in _from_entry_points or name not in _registered:
        return ""
    if name not in _shipped:
        # deferred: keeps start-up light (import auger, the CLI, Spark's workers)
        import base64

        # deferred: loads pyspark (heavy)
        from pyspark import cloudpickle

        plugin: object = _instances.get(name) or _registered[name]
        module_name = (plugin if isinstance(plugin, type) else type(plugin)).__module__
        module = sys.modules.get(module_name)
        by_value = module is not None and module_name != "__main__"
        if by_value:
            cloudpickle.register_pickle_by_value(module)
        try:
            blob = cloudpickle.dumps(plugin)
        finally:
            if by_value:
                cloudpickle.unregister_pickle_by_value(module)
        _shipped[name] = base64.b64encode(blob).decode("ascii")
    return _shipped[name]


def install_shipped(name: str, shipped: str) -> None:
    """Register a plugin that came with a scan spec, unless this process already knows it."""
    if not shipped or name in _BUILTIN or name in _registered:
        return
    _load_entry_points()
    if name in _registered:
        return
    # deferred: keeps start-up light (import auger, the CLI, Spark's workers)
    import base64

    plugin = pickle.loads(base64.b64decode(shipped))  # the driver pickled it for us
    register_format(name, plugin)
