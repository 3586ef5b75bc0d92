"""auger's version: the one written in the source, and the installed package's."""

from __future__ import annotations

__all__ = ["__version__", "installed_version"]

__version__ = "0.1.0"


def installed_version() -> str:
    """The installed package's version (its metadata), or the source tree's."""
    # importlib.metadata is loaded only when asked: every command's start-up would pay for it
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("auger")
    except PackageNotFoundError:
        return __version__
