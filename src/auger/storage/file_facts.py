"""What SHOW FILES and ``INFORMATION_SCHEMA.FILES`` say of one directory entry.

Both answer the same facts (name, kind, length, owner, group, permission, access and
modification time) for local directories and object-store prefixes, so they are read here once.
An object has no owner, group, permission bits or access time: they are shown as S3A reports
them (empty owner and group, ``rwxrwxrwx`` for a prefix and ``rw-rw-rw-`` for an object, the
modification time standing in for the access time). A local symbolic link is described by
itself, as Hadoop's file status describes one: neither a file nor a directory.
"""

from __future__ import annotations

import datetime as dt
import grp
import os
import pwd
import stat
from dataclasses import dataclass

from auger.storage import filesystem as fs

__all__ = ["FileFacts", "directory_facts"]


@dataclass(frozen=True)
class FileFacts:
    """One entry of a directory listing, as the file-listing tables show it."""

    name: str
    path: str
    is_directory: bool
    is_file: bool
    length: int
    owner: str
    group: str
    permission: str
    access_time: dt.datetime
    modification_time: dt.datetime


def _utc(seconds: float) -> dt.datetime:
    """A naive UTC timestamp, as Drill's TIMESTAMP columns hold it."""
    return dt.datetime.fromtimestamp(seconds, dt.UTC).replace(tzinfo=None)


def _owner(st: os.stat_result) -> tuple[str, str]:
    """The owner's and group's names, or their ids where the system knows no name."""
    try:
        user = pwd.getpwuid(st.st_uid).pw_name
    except KeyError:
        user = str(st.st_uid)
    try:
        group = grp.getgrgid(st.st_gid).gr_name
    except KeyError:
        group = str(st.st_gid)
    return user, group


def _local_facts(directory: str) -> list[FileFacts]:
    out: list[FileFacts] = []
    for name in sorted(os.listdir(directory)):
        full = os.path.join(directory, name)
        try:
            # a symbolic link is shown as itself (neither file nor directory, its own size and
            # times), never with its target's facts: the target may lie outside the workspace
            st = os.lstat(full)
        except OSError:  # vanished or unreadable since the listing: not shown
            continue
        user, group = _owner(st)
        out.append(
            FileFacts(
                name=name,
                path=full,
                is_directory=stat.S_ISDIR(st.st_mode),
                is_file=stat.S_ISREG(st.st_mode),
                length=st.st_size,
                owner=user,
                group=group,
                permission=stat.filemode(st.st_mode)[1:],
                access_time=_utc(st.st_atime),
                modification_time=_utc(st.st_mtime),
            )
        )
    return out


def _object_facts(directory: str) -> list[FileFacts]:
    out: list[FileFacts] = []
    for entry in fs.list_dir(directory):
        when = _utc(entry.mtime)
        out.append(
            FileFacts(
                name=fs.basename(entry.path),
                path=entry.path,
                is_directory=entry.is_dir,
                is_file=not entry.is_dir,
                length=entry.size,
                owner="",
                group="",
                permission="rwxrwxrwx" if entry.is_dir else "rw-rw-rw-",
                access_time=when,
                modification_time=when,
            )
        )
    return out


def directory_facts(directory: str) -> list[FileFacts]:
    """The entries directly inside ``directory`` (a local path or an object-store URI), sorted
    by name. Raises ``OSError`` for an unreadable local directory and ``UserError`` for a
    store that cannot be asked, so each caller decides whether that is an error."""
    return _object_facts(directory) if fs.is_uri(directory) else _local_facts(directory)
