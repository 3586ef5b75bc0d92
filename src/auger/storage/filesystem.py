"""File systems: local disk and object stores behind one set of path functions.

Every place auger lists, stats or opens a file goes through this module, so a path may be a
local one (``/data/logs/a.csv``) or a URI of an object store (``s3a://bucket/logs/a.csv``). Local
paths keep Python's own ``open``/``os`` calls; URIs go through :mod:`pyarrow.fs`, whose S3 file
system needs no Hadoop jars and reads Parquet footers and row groups with ranged requests.

A file plugin whose ``connection`` is ``s3a://bucket`` (or ``s3://``, ``s3n://``) is configured
with Hadoop's S3A keys under its ``config`` table (see docs/storage.md): ``fs.s3a.endpoint``,
``fs.s3a.access.key``, ``fs.s3a.secret.key``, ``fs.s3a.session.token``,
``fs.s3a.path.style.access``, ``fs.s3a.endpoint.region``, ``fs.s3a.connection.establish.timeout``
and ``fs.s3a.connection.timeout`` (milliseconds), ``fs.s3a.attempts.maximum``. Without keys the
credentials come from the environment and AWS profiles as the AWS SDK inside pyarrow reads them.
Other schemes pyarrow knows (``gs://``, ``hdfs://``, ``abfs://``) are built from the URI alone.

Which settings belong to which bucket is kept in a process-wide table (:func:`register`), filled
on the driver from the storage plugins and shipped to executors inside each scan spec
(:func:`shipped_for`, :func:`install`), so a Spark worker with no config file opens the same
objects with the same settings.
"""

from __future__ import annotations

import fnmatch
import io
import os
import posixpath
import re
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import lru_cache
from typing import IO, Any, TypeVar

from auger.errors import UserError
from auger.storage import read_budget

__all__ = [
    "FileInfo",
    "FileSystemConfig",
    "arrow_input_stream",
    "arrow_owned_reads",
    "basename",
    "config_for_plugin",
    "delete_dir",
    "delete_file",
    "dirname",
    "exists",
    "file_info",
    "glob_paths",
    "install",
    "is_uri",
    "isdir",
    "isfile",
    "join",
    "list_dir",
    "makedirs",
    "normpath",
    "open_input",
    "open_output",
    "open_random",
    "parallel_map",
    "parquet_fragment",
    "read_parquet_footer",
    "read_text",
    "register",
    "relpath",
    "shipped_for",
    "storage_error",
    "walk_files",
    "write_count",
]

#: URI schemes of object stores, and the pyarrow file system each one means.
_SCHEMES = {
    "s3": "s3",
    "s3a": "s3",
    "s3n": "s3",
    "gs": "gcs",
    "gcs": "gcs",
    "hdfs": "hdfs",
    "viewfs": "hdfs",
    "abfs": "abfs",
    "abfss": "abfs",
}

_URI = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://(.*)$", re.DOTALL)

#: Defaults for an S3 connection when the plugin says nothing: answer within seconds, not the
#: SDK's minutes, so an endpoint that is down is an error and not a hang.
_DEFAULT_CONNECT_TIMEOUT_MS = 5000
_DEFAULT_REQUEST_TIMEOUT_MS = 30000
_DEFAULT_ATTEMPTS = 3

#: Requests to an object store in flight at once when listing the sub-prefixes of a large
#: prefix or reading many Parquet footers: each request mostly waits on the network.
IO_THREADS = 16

#: How many levels below a prefix are listed one level at a time (a delimiter listing each) to
#: find sub-prefixes to list in parallel, before each is listed whole.
_FANOUT_LEVELS = 3

#: More sub-prefixes than this on one level are not listed one request each.
_MAX_PREFIXES = 4 * IO_THREADS

_T = TypeVar("_T")
_R = TypeVar("_R")


def _split(path: str) -> tuple[str, str] | None:
    """``("s3a", "bucket/key")`` for an object-store URI; None for a local path."""
    m = _URI.match(path)
    if m is None:
        return None
    scheme = m.group(1).lower()
    if scheme == "file":
        return None
    return scheme, m.group(2)


def is_uri(path: str) -> bool:
    """Whether ``path`` names an object in a remote file system (not ``file://``)."""
    return _split(path) is not None


def _local(path: str) -> str:
    return path[len("file://") :] or "/" if path.lower().startswith("file://") else path


# --- path arithmetic that keeps ``scheme://authority`` intact -------------------------------


def _parts(path: str) -> tuple[str, str]:
    """(``"s3a://bucket"``, ``"/key/part"``) for a URI; (``""``, path) for a local path."""
    split = _split(path)
    if split is None:
        return "", _local(path)
    scheme, rest = split
    authority, _, key = rest.partition("/")
    return f"{scheme}://{authority}", "/" + key


def normpath(path: str) -> str:
    """``os.path.normpath`` that keeps a URI's ``scheme://authority`` and drops a trailing
    ``/``."""
    root, key = _parts(path)
    if not root:
        return os.path.normpath(key)
    norm = posixpath.normpath(key)
    return root if norm == "/" else root + norm


def join(base: str, *parts: str) -> str:
    """Join path parts below ``base`` (a leading ``/`` in a part does not restart the path)."""
    root, key = _parts(base)
    if not root:
        return os.path.join(key, *parts)
    out = key
    for part in parts:
        out = posixpath.join(out, part.lstrip("/")) if part else out
    return normpath(root + out)


def dirname(path: str) -> str:
    root, key = _parts(path)
    if not root:
        return os.path.dirname(key)
    return normpath(root + posixpath.dirname(key.rstrip("/") or "/"))


def basename(path: str) -> str:
    root, key = _parts(path)
    return os.path.basename(key) if not root else posixpath.basename(key.rstrip("/"))


def relpath(path: str, start: str) -> str:
    """``path`` relative to ``start``; both local, or both under the same bucket."""
    root, key = _parts(path)
    sroot, skey = _parts(start)
    if not root and not sroot:
        if os.sep == "/" and (below := _below(key, skey)) is not None:
            return below
        return os.path.relpath(key, skey)
    if root != sroot:
        raise ValueError(f"{path} is not below {start}")
    if (below := _below(key, skey)) is not None:
        return below
    return posixpath.relpath(key, skey)


def _below(key: str, start: str) -> str | None:
    """``key`` relative to ``start`` by its text, when both are plain absolute ``/`` paths
    (no ``.``/``..`` steps, doubled or trailing slashes) and ``key`` is ``start`` or lies below
    it; else None. The general ``relpath`` normalizes both first, which is most of a listing's
    planning for thousands of files."""
    if not (_plain(key) and _plain(start)):
        return None
    if key == start:
        return "."
    prefix = start if start == "/" else start + "/"
    return key[len(prefix) :] if key.startswith(prefix) else None


def _plain(path: str) -> bool:
    return (
        path.startswith("/")
        and "//" not in path
        and "/." not in path
        and (path == "/" or not path.endswith("/"))
    )


# --- configuration ---------------------------------------------------------------------------


@dataclass(frozen=True)
class FileSystemConfig:
    """The settings of one remote root (``s3a://bucket``): Hadoop-style keys as strings.

    Attributes:
        root: ``scheme://authority``, lower-case scheme.
        options: the plugin's ``config`` table (``fs.s3a.endpoint`` ...), sorted pairs.
    """

    root: str
    options: tuple[tuple[str, str], ...] = field(default=())

    def option(self, key: str, default: str | None = None) -> str | None:
        for k, v in self.options:
            if k == key:
                return v
        return default

    def to_dict(self) -> dict[str, Any]:
        return {"root": self.root, "options": [list(kv) for kv in self.options]}

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> FileSystemConfig:
        return cls(str(raw["root"]), tuple((str(k), str(v)) for k, v in raw.get("options", ())))


def config_for_plugin(
    connection: str, settings: Mapping[str, Any] | None
) -> FileSystemConfig | None:
    """The file-system settings of a plugin's ``connection``; None for local disk."""
    if not is_uri(connection):
        return None
    root, _ = _parts(connection)
    scheme, _, authority = root.partition("://")
    if not authority:
        raise UserError.validation(
            f"Storage connection [{connection}] names no bucket or host",
            [f'Fix: write connection = "{scheme}://<bucket>"'],
        )
    opts = tuple(sorted((str(k), _setting_text(v)) for k, v in dict(settings or {}).items()))
    return FileSystemConfig(root, opts)


def _setting_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


_REGISTRY: dict[str, FileSystemConfig] = {}
_LOCK = threading.Lock()


def _key(root: str) -> str:
    scheme, _, authority = root.partition("://")
    return f"{scheme.lower()}://{authority}"


def register(config: FileSystemConfig) -> None:
    """Use ``config`` for every path under ``config.root`` in this process."""
    with _LOCK:
        _REGISTRY[_key(config.root)] = config


def shipped_for(paths: Iterable[str]) -> list[dict[str, Any]]:
    """The registered settings the given paths need, as JSON-friendly values for executors."""
    roots: dict[str, None] = {}
    for p in paths:
        root, _ = _parts(p)
        if root:
            roots[_key(root)] = None
    with _LOCK:
        return [_REGISTRY[r].to_dict() for r in roots if r in _REGISTRY]


def install(shipped: Iterable[Mapping[str, Any]]) -> None:
    """Register settings that :func:`shipped_for` produced on the driver."""
    for raw in shipped:
        register(FileSystemConfig.from_dict(raw))


def _config_of(path: str) -> FileSystemConfig:
    root, _ = _parts(path)
    with _LOCK:
        return _REGISTRY.get(_key(root)) or FileSystemConfig(_key(root))


def settings_of(path: str) -> FileSystemConfig:
    """The settings registered for the store ``path`` lies in (empty ones if none are)."""
    return _config_of(path)


def _true(text: str | None) -> bool:
    return (text or "").strip().lower() in ("true", "1", "yes")


def _seconds(text: str | None, default_ms: int, key: str) -> float:
    """Hadoop timeouts are milliseconds; ``5s``/``2m`` suffixes are accepted as S3A does."""
    raw = (text or "").strip().lower()
    if not raw:
        return default_ms / 1000
    units = {"ms": 0.001, "s": 1.0, "m": 60.0}
    for suffix in ("ms", "s", "m"):
        if raw.endswith(suffix) and raw[: -len(suffix)].strip().replace(".", "", 1).isdigit():
            return float(raw[: -len(suffix)]) * units[suffix]
    try:
        return float(raw) / 1000
    except ValueError:
        raise UserError.validation(
            f"Timeout {key} [{text}] is not a number of milliseconds",
            [f'Fix: write e.g. "{key}" = "5000"'],
        ) from None


@lru_cache(maxsize=64)
def _filesystem(config: FileSystemConfig) -> Any:
    # deferred: loads pyarrow (heavy)
    import pyarrow.fs as pafs  # optional dependency of local reads: loaded on first remote use

    scheme = config.root.partition("://")[0]
    kind = _SCHEMES.get(scheme)
    if kind == "s3":
        return _s3(config, pafs)
    if kind is None:
        raise UserError.validation(
            f"File system [{scheme}://] is not supported",
            [
                "Supported: s3a:// (s3://, s3n://) and what pyarrow.fs reads: gs://, hdfs://, abfs://"
            ],
        )
    fs, _ = pafs.FileSystem.from_uri(config.root)
    return fs


def _s3(config: FileSystemConfig, pafs: Any) -> Any:
    opt = config.option
    kwargs: dict[str, Any] = {}
    endpoint = opt("fs.s3a.endpoint")
    if endpoint:
        scheme, sep, host = endpoint.partition("://")
        if not sep:
            scheme, host = (
                ("true" if _true(opt("fs.s3a.connection.ssl.enabled", "true")) else ""),
                endpoint,
            )
            scheme = "https" if scheme else "http"
        kwargs["endpoint_override"] = host.rstrip("/")
        kwargs["scheme"] = scheme
        # path-style is pyarrow's default with an endpoint; S3A's default is virtual hosts
        if not _true(opt("fs.s3a.path.style.access", "true")):
            kwargs["force_virtual_addressing"] = True
    region = opt("fs.s3a.endpoint.region") or opt("fs.s3a.region")
    if region:
        kwargs["region"] = region
    elif endpoint:
        kwargs["region"] = "us-east-1"  # a custom endpoint has no region to look up
    access, secret = opt("fs.s3a.access.key"), opt("fs.s3a.secret.key")
    if access or secret:
        kwargs["access_key"] = access or ""
        kwargs["secret_key"] = secret or ""
        token = opt("fs.s3a.session.token")
        if token:
            kwargs["session_token"] = token
    provider = opt("fs.s3a.aws.credentials.provider") or ""
    if "Anonymous" in provider:
        kwargs["anonymous"] = True
    for arg, key, default in (
        ("connect_timeout", "fs.s3a.connection.establish.timeout", _DEFAULT_CONNECT_TIMEOUT_MS),
        ("request_timeout", "fs.s3a.connection.timeout", _DEFAULT_REQUEST_TIMEOUT_MS),
    ):
        kwargs[arg] = _seconds(opt(key), default, key)
    raw_attempts = (opt("fs.s3a.attempts.maximum") or "").strip()
    if raw_attempts and not raw_attempts.isdigit():
        raise UserError.validation(
            f"fs.s3a.attempts.maximum [{raw_attempts}] is not a whole number",
            [f"Storage: {config.root}", 'Fix: write e.g. "fs.s3a.attempts.maximum" = "3"'],
        )
    attempts = int(raw_attempts or _DEFAULT_ATTEMPTS)
    kwargs["retry_strategy"] = pafs.AwsStandardS3RetryStrategy(max_attempts=max(1, attempts))
    return pafs.S3FileSystem(**kwargs)


def _resolve(path: str) -> tuple[Any, str]:
    """(pyarrow file system, path inside it) for a URI."""
    root, key = _parts(path)
    fs = _filesystem(_config_of(path))
    authority = root.partition("://")[2]
    return fs, (authority + key).rstrip("/") or authority


# --- errors ----------------------------------------------------------------------------------

_DENIED = (
    "ACCESS_DENIED",
    "AccessDenied",
    "INVALID_ACCESS_KEY",
    "InvalidAccessKeyId",
    "SIGNATURE_DOES_NOT_MATCH",
    "SignatureDoesNotMatch",
    "Forbidden",
    "403",
    "UNRECOGNIZED_CLIENT",
    "EXPIRED_TOKEN",
    "No response body",
)
_NO_BUCKET = ("NO_SUCH_BUCKET", "NoSuchBucket", "Bucket does not exist", "bucket does not exist")
_NETWORK = (
    "NETWORK_CONNECTION",
    "curlCode",
    "Couldn't connect",
    "Connection refused",
    "Timeout",
    "timed out",
    "REQUEST_TIMEOUT",
    "Could not resolve",
)


def storage_error(exc: BaseException, path: str, action: str = "read") -> UserError:
    """A plain-words :class:`UserError` for a failed file-system call on ``path``.

    Missing object → VALIDATION (Drill's not-found); wrong credentials → PERMISSION; a missing
    bucket → RESOURCE; an endpoint that is down or too slow → DATA_READ.
    """
    if isinstance(exc, UserError):
        return exc
    text = str(exc)
    root, _ = _parts(path)
    where = [f"Path: {path}"]
    if isinstance(exc, FileNotFoundError) or "Path does not exist" in text:
        return UserError.validation(f"Object '{path}' not found", where)
    if any(s in text for s in _NO_BUCKET):
        return _no_bucket(path)
    if any(s in text for s in _NETWORK):
        endpoint = _config_of(path).option("fs.s3a.endpoint") if root else None
        return UserError.data_read(
            f"Cannot reach the storage of [{path}]: the endpoint did not answer"
            + (f" ({endpoint})" if endpoint else ""),
            [
                *where,
                "Fix: check fs.s3a.endpoint and that the service is up; "
                "fs.s3a.connection.establish.timeout (connecting) and fs.s3a.connection.timeout "
                "(a request) set how long to wait, fs.s3a.attempts.maximum how often to try",
            ],
        )
    if isinstance(exc, PermissionError) or any(s in text for s in _DENIED):
        return UserError.permission(
            f"Access to [{path}] was denied: the credentials are wrong or lack permission",
            [
                *where,
                "Fix: check fs.s3a.access.key / fs.s3a.secret.key, or the AWS profile "
                "and environment",
            ],
        )
    first = text.strip().splitlines()[0] if text.strip() else type(exc).__name__
    return UserError.data_read(f"Cannot {action} [{path}]: {first}", where)


# --- stat, list ------------------------------------------------------------------------------


@dataclass(frozen=True)
class FileInfo:
    """What a listing or a stat says of one entry."""

    path: str
    is_dir: bool
    size: int = 0
    mtime: float = 0.0  # seconds since the epoch


def _info_of(path: str, info: Any) -> FileInfo:
    # deferred: loads pyarrow (heavy)
    import pyarrow.fs as pafs  # loaded on first remote use

    mtime = info.mtime.timestamp() if info.mtime is not None else 0.0
    return FileInfo(path, info.type == pafs.FileType.Directory, int(info.size or 0), mtime)


def file_info(path: str) -> FileInfo | None:
    """The entry at ``path`` (following symbolic links locally); None when there is none.

    Raises:
        UserError: when a remote store cannot be asked (:func:`storage_error`).
    """
    if not is_uri(path):
        local = _local(path)
        try:
            st = os.stat(local)
        except OSError:
            return None
        return FileInfo(path, os.path.isdir(local), st.st_size, st.st_mtime)
    # deferred: loads pyarrow (heavy)
    import pyarrow.fs as pafs  # loaded on first remote use

    fs, inner = _resolve(path)
    try:
        info = fs.get_file_info(inner)
    except OSError as exc:
        raise storage_error(exc, path, "stat") from exc
    bucket = inner.split("/", 1)[0]
    if info.type == pafs.FileType.NotFound:
        # an object store answers "no such key" for a bucket that is missing too: say which
        try:
            missing = "/" not in inner or fs.get_file_info(bucket).type == pafs.FileType.NotFound
        except OSError as exc:
            raise storage_error(exc, path, "stat") from exc
        if missing:
            raise _no_bucket(path)
        return None
    return _info_of(normpath(path), info)


def _no_bucket(path: str) -> UserError:
    root, _ = _parts(path)
    return UserError.resource(
        f"Bucket [{root}] does not exist",
        [f"Path: {path}", "Fix: create the bucket or correct the plugin's connection"],
    )


def exists(path: str) -> bool:
    return file_info(path) is not None


def isdir(path: str) -> bool:
    info = file_info(path)
    return info is not None and info.is_dir


def isfile(path: str) -> bool:
    info = file_info(path)
    return info is not None and not info.is_dir


def _children(path: str, recursive: bool) -> list[FileInfo]:
    # deferred: loads pyarrow (heavy)
    import pyarrow.fs as pafs  # loaded on first remote use

    fs, inner = _resolve(path)
    root, _ = _parts(path)
    authority = root.partition("://")[2]
    try:
        infos = fs.get_file_info(pafs.FileSelector(inner, recursive=recursive))
    except OSError as exc:
        raise storage_error(exc, path, "list") from exc
    scheme = root.partition("://")[0]
    out = []
    for info in infos:
        p = info.path
        key = p[len(authority) :] if p.startswith(authority) else "/" + p
        out.append(_info_of(f"{scheme}://{authority}{key}", info))
    return out


def list_dir(path: str) -> list[FileInfo]:
    """The entries directly inside a directory, sorted by name."""
    if not is_uri(path):
        local = _local(path)
        out = []
        for name in sorted(os.listdir(local)):
            full = os.path.join(local, name)
            try:
                st = os.stat(full)
            except OSError:
                continue
            out.append(FileInfo(full, os.path.isdir(full), st.st_size, st.st_mtime))
        return out
    return sorted(_children(path, False), key=lambda f: f.path)


def walk_files(path: str, hidden: Any = None) -> list[FileInfo]:
    """Every file below a directory, sorted by path, skipping (with everything below them)
    entries whose name ``hidden(name)`` says to skip."""
    keep = (lambda _n: True) if hidden is None else (lambda n: not hidden(n))
    if not is_uri(path):
        local = _local(path)
        found: list[FileInfo] = []
        for dirpath, dirnames, filenames in os.walk(local, followlinks=False):
            dirnames[:] = sorted(d for d in dirnames if keep(d))
            for name in sorted(filenames):
                if not keep(name):
                    continue
                full = os.path.join(dirpath, name)
                try:
                    st = os.stat(full)
                except OSError:
                    continue
                found.append(FileInfo(full, False, st.st_size, st.st_mtime))
        return found
    return _walk_remote(normpath(path), keep)


def _walk_remote(base: str, keep: Callable[[str], bool]) -> list[FileInfo]:
    """Every object below ``base``. A flat listing returns 1,000 keys a request, one page after
    the other; so the prefix is listed a level at a time (a delimiter listing: objects and
    sub-prefixes) until there are :data:`IO_THREADS` sub-prefixes or :data:`_FANOUT_LEVELS`
    levels, and then every sub-prefix is listed whole, in parallel. A level of more than
    :data:`_MAX_PREFIXES` sub-prefixes (a partition per day) is not split: its prefixes are
    listed whole instead. Hidden sub-prefixes are never listed."""
    files: list[FileInfo] = []
    frontier = [base]
    for _ in range(_FANOUT_LEVELS):
        here: list[FileInfo] = []
        below: list[str] = []
        for entries in parallel_map(lambda p: _children(p, False), frontier, force=True):
            for info in entries:
                if not keep(basename(info.path)):
                    continue
                if info.is_dir:
                    below.append(info.path)
                else:
                    here.append(info)
        if len(below) > _MAX_PREFIXES:
            break  # one request per sub-prefix would cost more than listing this level whole
        files.extend(here)
        frontier = below
        if len(frontier) >= IO_THREADS or not frontier:
            break

    def whole(prefix: str) -> list[FileInfo]:
        found = []
        for info in _children(prefix, True):
            if not info.is_dir and all(keep(p) for p in relpath(info.path, prefix).split("/")):
                found.append(info)
        return found

    for entries in parallel_map(whole, frontier, force=True):
        files.extend(entries)
    return sorted(files, key=lambda f: f.path)


def parallel_map(fn: Callable[[_T], _R], items: Sequence[_T], force: bool = False) -> Iterator[_R]:
    """``map(fn, items)``, in order, run by :data:`IO_THREADS` threads when the items are many
    and (``force``, or the items being object-store paths) the calls wait on a remote store;
    in this thread otherwise. The first failing call's exception is raised when its result is
    reached, and calls not started yet are cancelled."""
    remote = force or any(isinstance(i, str) and is_uri(i) for i in items[:1])
    if len(items) < 2 or not remote:
        yield from map(fn, items)
        return
    pool = ThreadPoolExecutor(min(IO_THREADS, len(items)), thread_name_prefix="auger-io")
    try:
        for future in [pool.submit(fn, item) for item in items]:
            yield future.result()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def glob_paths(pattern: str) -> list[str]:
    """Entries (files and directories) matching a glob whose wildcards stay within one path
    level each (``*``, ``?``, ``[a-b]``; braces expanded by the caller)."""
    if not is_uri(pattern):
        # deferred: keeps start-up light (import auger, the CLI, Spark's workers)
        import glob

        return glob.glob(_local(pattern))
    first = re.search(r"[*?\[]", pattern)
    head = pattern[: first.start()] if first else pattern
    base = head.rsplit("/", 1)[0]
    depth = pattern.count("/")
    try:
        entries = _children(base, True)
    except UserError as exc:
        if "not found" in str(exc):
            return []
        raise
    return [
        e.path
        for e in entries
        if e.path.count("/") == depth and fnmatch.fnmatchcase(e.path, pattern)
    ]


# --- open, write, delete ---------------------------------------------------------------------


class _ArrowRaw(io.RawIOBase):
    """A pyarrow input file as a Python raw stream (seekable, ``readinto``)."""

    def __init__(self, native: Any, path: str) -> None:
        super().__init__()
        self._f = native
        self._path = path

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def seek(self, pos: int, whence: int = 0) -> int:
        return int(self._f.seek(pos, whence))

    def tell(self) -> int:
        return int(self._f.tell())

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        try:
            data = self._f.read(len(view))
        except OSError as exc:
            raise storage_error(exc, self._path) from exc
        n = len(data)
        view[:n] = data
        return n

    def close(self) -> None:
        if not self.closed:
            self._f.close()
        super().close()


def open_random(path: str) -> Any:
    """A seekable binary input for ``path``: a Python file locally, a pyarrow
    ``RandomAccessFile`` (ranged reads) for an object (as Parquet's reader wants)."""
    if not is_uri(path):
        return _local(path)
    fs, inner = _resolve(path)
    try:
        return fs.open_input_file(inner)
    except OSError as exc:
        raise storage_error(exc, path) from exc


def read_parquet_footer(path: str, size: int | None = None, int96_unit: str = "us") -> Any:
    """A Parquet file's footer: (``pyarrow.parquet.FileMetaData``, its Arrow schema with INT96
    values as timestamps of ``int96_unit``).

    ``size``: the file's size as its listing gave it. An object is then asked for the footer's
    bytes only (one ranged request for a small footer, :func:`parquet_fragment`); opening a
    file of unknown size asks for its size first (a HEAD request), which doubles the requests
    of planning over many small objects. A size that is wrong makes the read fail.

    Raises:
        OSError, pyarrow.ArrowException: the file cannot be read or is not Parquet.
        UserError: an object that cannot be opened (:func:`storage_error`).
    """
    # deferred: loads pyarrow (heavy)
    import pyarrow.parquet as pq  # loaded with the readers that use it

    fragment = parquet_fragment(path, size, int96_unit)
    if fragment is None:
        with pq.ParquetFile(open_random(path), coerce_int96_timestamp_unit=int96_unit) as pf:
            return pf.metadata, pf.schema_arrow
    try:
        return fragment.metadata, fragment.physical_schema
    except OSError as exc:
        raise storage_error(exc, path) from exc


def parquet_fragment(path: str, size: int | None, int96_unit: str = "us") -> Any:
    """An object's Parquet file as a ``pyarrow.dataset.ParquetFileFragment`` of known size, or
    None for a local file or an unknown size.

    pyarrow opens an object by path only after asking its size (a HEAD request); a dataset
    fragment made with the size the listing gave is the one way it reads the object without
    asking (its footer by a ranged GET, then its column chunks)."""
    if not (size and is_uri(path)):
        return None
    # deferred: loads pyarrow and more (heavy)
    import pyarrow.dataset as ds  # loaded on first remote use

    fs, inner = _resolve(path)
    fmt = ds.ParquetFileFormat(
        read_options=ds.ParquetReadOptions(coerce_int96_timestamp_unit=int96_unit)
    )
    return fmt.make_fragment(inner, fs, file_size=size)


def arrow_input_stream(path: str, compression: str | None = "detect") -> Any:
    """A pyarrow input stream of the file, decompressed by suffix when ``compression`` is
    ``"detect"`` (gzip, bz2, zstd, lz4 frames), for pyarrow's own CSV and JSON readers."""
    # deferred: loads pyarrow (heavy)
    import pyarrow as pa  # loaded with the readers that use it

    if not is_uri(path):
        stream = pa.input_stream(_local(path), compression=compression)
    else:
        fs, inner = _resolve(path)
        try:
            stream = fs.open_input_stream(inner, compression=compression)
        except OSError as exc:
            raise storage_error(exc, path) from exc
    if compression == "detect" and read_budget.active() and read_budget.is_compressed(path):
        # a read whose decompressed bytes are being counted (see read_budget)
        return pa.PythonFile(io.BufferedReader(_Charged(stream)), mode="r")
    return stream


def arrow_owned_reads(source: Any) -> Any:
    """``source``, a Python file-like object, as a pyarrow input stream whose every read is
    copied into memory pyarrow owns, for pyarrow's streaming CSV and JSON readers.

    Those readers read ahead and parse on pyarrow's own threads. Read straight from a Python
    object, a block refers to a Python ``bytes``, and whichever thread drops the block's last
    reference must take the GIL to release it: that can be one of pyarrow's threads, after the
    reader was closed, while the interpreter is already exiting, and Python 3.11 then ends the
    thread in a way C++ turns into ``std::terminate`` (the process aborts after printing its
    answer). Copied blocks hold no Python object; the copy costs little beside the parse (a
    buffer smaller than a block makes each read one copy, straight into the block)."""
    # deferred: loads pyarrow (heavy)
    import pyarrow as pa  # loaded with the readers that use it

    return pa.BufferedInputStream(pa.PythonFile(source, mode="r"), _OWNED_BUFFER)


#: the buffer of :func:`arrow_owned_reads`: smaller than the readers' blocks, so that a block's
#: read goes straight into the block
_OWNED_BUFFER = 64 << 10


class _Charged(io.RawIOBase):
    """A decompressing pyarrow stream whose output is charged to the thread's read budget."""

    def __init__(self, inner: Any) -> None:
        super().__init__()
        self._inner = inner

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        data = self._inner.read(len(buffer))
        n = len(data)
        read_budget.charge(n)
        buffer[:n] = data
        return n

    def close(self) -> None:
        self._inner.close()
        super().close()


def open_input(path: str) -> io.BufferedReader:
    """``open(path, "rb")`` for a local path or an object (seekable, buffered).

    Raises:
        OSError: locally, as ``open`` does.
        UserError: for an object that cannot be opened (:func:`storage_error`).
    """
    if not is_uri(path):
        return open(_local(path), "rb")
    native = open_random(path)
    return io.BufferedReader(_ArrowRaw(native, path), buffer_size=1 << 20)


def read_text(path: str) -> str:
    """The whole of a small UTF-8 file (a view, a schema file)."""
    with open_input(path) as fh:
        return fh.read().decode("utf-8")


_writes = 0


def _wrote() -> None:
    """Count a change this process makes to a file system (see :func:`write_count`)."""
    global _writes
    _writes += 1


def write_count() -> int:
    """How many writes and deletions this process has made through this module: a listing
    kept from before a change auger made itself is not used after it."""
    return _writes


def open_output(path: str) -> IO[bytes]:
    """A new file (replacing any) at ``path``; parent directories are made as needed."""
    _wrote()
    if not is_uri(path):
        local = _local(path)
        os.makedirs(os.path.dirname(local) or ".", exist_ok=True)
        return open(local, "wb")
    fs, inner = _resolve(path)
    try:
        return fs.open_output_stream(inner)  # type: ignore[no-any-return]
    except OSError as exc:
        raise storage_error(exc, path, "write") from exc


def rename(source: str, target: str) -> None:
    """Move a file to ``target``, replacing any: a rename on a local disk (readers see the old
    file or the new one, never a part), a server-side copy on an object store (the new object
    appears whole)."""
    if not is_uri(source):
        os.replace(_local(source), _local(target))
        return
    fs, inner = _resolve(source)
    _, inner_target = _resolve(target)
    try:
        fs.move(inner, inner_target)
    except OSError as exc:
        raise storage_error(exc, target, "write") from exc


def makedirs(path: str) -> None:
    _wrote()
    if not is_uri(path):
        os.makedirs(_local(path), exist_ok=True)
        return
    fs, inner = _resolve(path)
    try:
        fs.create_dir(inner, recursive=True)
    except OSError as exc:
        raise storage_error(exc, path, "create") from exc


def delete_file(path: str) -> None:
    _wrote()
    if not is_uri(path):
        os.remove(_local(path))
        return
    fs, inner = _resolve(path)
    try:
        fs.delete_file(inner)
    except OSError as exc:
        raise storage_error(exc, path, "delete") from exc


def delete_dir(path: str) -> None:
    """Remove a directory and every file below it (every object under the prefix)."""
    _wrote()
    if not is_uri(path):
        # deferred: keeps start-up light (import auger, the CLI, Spark's workers)
        import shutil

        shutil.rmtree(_local(path))
        return
    fs, inner = _resolve(path)
    try:
        fs.delete_dir(inner)
    except OSError as exc:
        raise storage_error(exc, path, "delete") from exc
