"""``auger passwd USER``: create a REST user or change a password in the users file.

The password is asked twice on a terminal; from a pipe the first line of standard input is
used (so scripts and tests can set passwords), with no echo either way.
"""

from __future__ import annotations

import getpass
import sys
from typing import Any

from auger.config import load_config
from auger.errors import UserError
from auger.server.settings import ServerSettings
from auger.server.users import UserStore

__all__ = ["run_passwd"]


def _read_password(user: str) -> str:
    if not sys.stdin.isatty():
        line = sys.stdin.readline()
        password = line.rstrip("\r\n")
    else:
        password = getpass.getpass(f"New password for {user}: ")
        again = getpass.getpass("Repeat it: ")
        if password != again:
            raise UserError.validation("The two passwords differ; nothing was changed")
    if not password:
        raise UserError.validation("An empty password is not allowed")
    return password


def run_passwd(
    config: Any, user: str, admin: bool | None = None, users_file: str | None = None
) -> int:
    """Set ``user``'s password; ``admin=True`` grants the admin role, None keeps the current."""

    path = users_file
    if not path:
        path = ServerSettings.from_config(load_config(config).server).users_file
    password = _read_password(user)
    store = UserStore(path)
    existed = store.get(user) is not None
    saved = store.set_password(user, password, admin=admin)
    role = "admin" if saved.admin else "user"
    verb = "updated" if existed else "created"
    print(f"{verb} {role} [{saved.name}] in {path}", file=sys.stderr)
    return 0
