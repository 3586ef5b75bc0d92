"""Users of the REST server and their password hashes.

Passwords are stored as scrypt hashes (stdlib ``hashlib.scrypt``) with a random salt per user,
in a JSON file only the owner can read. A hash is self-describing
(``scrypt$n$r$p$salt$key``, both base64), so the cost can be raised later without breaking old
entries. ``auger passwd USER`` is the way to write the file; the server only reads it (again
whenever it changes on disk, so a password change needs no restart).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import secrets
import tempfile
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from auger.errors import UserError

__all__ = ["User", "UserStore", "hash_password", "verify_password"]

# n=2**14, r=8 needs 16 MiB per check: strong enough, yet a login stays well under 100 ms.
_N, _R, _P, _KEYLEN = 2**14, 8, 1, 32


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def hash_password(password: str, *, n: int = _N, r: int = _R, p: int = _P) -> str:
    """A salted scrypt hash of ``password`` in the self-describing text form."""
    salt = secrets.token_bytes(16)
    key = hashlib.scrypt(
        password.encode("utf-8"), salt=salt, n=n, r=r, p=p, dklen=_KEYLEN, maxmem=64 * 1024**2
    )
    return f"scrypt${n}${r}${p}${_b64(salt)}${_b64(key)}"


def verify_password(password: str, stored: str) -> bool:
    """True when ``password`` matches ``stored`` (constant-time compare; False if malformed)."""
    try:
        scheme, n, r, p, salt, key = stored.split("$")
        if scheme != "scrypt":
            return False
        expected = base64.b64decode(key)
        got = hashlib.scrypt(
            password.encode("utf-8"),
            salt=base64.b64decode(salt),
            n=int(n),
            r=int(r),
            p=int(p),
            dklen=len(expected),
            maxmem=256 * 1024**2,
        )
    except (ValueError, TypeError):
        return False
    return hmac.compare_digest(got, expected)


@dataclass(frozen=True)
class User:
    name: str
    password_hash: str
    admin: bool = False


class UserStore:
    """The users file (plus users written inline in the config's ``[server.users]``).

    The file is re-read when its modification time changes, so ``auger passwd`` takes effect
    on a running server.
    """

    def __init__(self, path: str, inline: Mapping[str, Any] | None = None) -> None:
        self.path = path
        self._inline = {
            name: User(name, str(spec.get("password_hash", "")), bool(spec.get("admin", False)))
            for name, spec in (inline or {}).items()
            if isinstance(spec, Mapping)
        }
        self._users: dict[str, User] = {}
        self._stamp: float | None = None
        self._lock = threading.Lock()

    # ----- reading
    def _load(self) -> dict[str, User]:
        try:
            stamp = os.stat(self.path).st_mtime_ns
        except OSError:
            return dict(self._inline)
        with self._lock:
            if stamp != self._stamp:
                self._users = _read_users(self.path)
                self._stamp = stamp
            return {**self._inline, **self._users}

    def get(self, name: str) -> User | None:
        return self._load().get(name)

    def names(self) -> list[str]:
        return sorted(self._load())

    def authenticate(self, name: str, password: str) -> User | None:
        """The user when the password is right, else None (same cost for unknown users)."""
        user = self.get(name)
        if user is None:
            verify_password(password, _DUMMY_HASH)
            return None
        return user if verify_password(password, user.password_hash) else None

    # ----- writing (auger passwd)
    def set_password(self, name: str, password: str, admin: bool | None = None) -> User:
        """Create or update a user in the file; ``admin=None`` keeps the current role."""
        if not name or any(c.isspace() for c in name) or ":" in name:
            raise UserError.validation(f"Invalid user name [{name}]: no spaces or ':' allowed")
        users = _read_users(self.path) if os.path.exists(self.path) else {}
        old = users.get(name)
        role = admin if admin is not None else (old.admin if old else False)
        user = User(name, hash_password(password), role)
        users[name] = user
        _write_users(self.path, users)
        return user

    def delete(self, name: str) -> bool:
        users = _read_users(self.path) if os.path.exists(self.path) else {}
        if users.pop(name, None) is None:
            return False
        _write_users(self.path, users)
        return True


def _read_users(path: str) -> dict[str, User]:
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError) as exc:
        raise UserError.validation(f"Users file {path} cannot be read: {exc}") from exc
    out: dict[str, User] = {}
    for name, spec in dict(data.get("users", {})).items():
        out[name] = User(name, str(spec.get("password_hash", "")), bool(spec.get("admin", False)))
    return out


def _write_users(path: str, users: Mapping[str, User]) -> None:
    """Write atomically (temp file + rename) with mode 0600: hashes are still secrets."""
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, mode=0o700, exist_ok=True)
    data = {
        "users": {
            u.name: {"password_hash": u.password_hash, "admin": u.admin}
            for u in sorted(users.values(), key=lambda u: u.name)
        }
    }
    fd, tmp = tempfile.mkstemp(prefix=".users-", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=2)
            fh.write("\n")
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


_DUMMY_HASH = hash_password(secrets.token_hex(8))
