"""Running REST queries: a thread pool, Spark job groups, streamed JSON and profiles.

Spark calls block, so each query runs whole in one pool thread: Spark's job group is a
thread-local property, and keeping planning, execution and stage bookkeeping on one thread is
what makes cancelling the group (:mod:`auger.spark.jobs`) reach every job of the query. The
thread hands encoded chunks to the event loop through a small bounded queue, so a slow reader
slows its own query and nothing else, and a reader that vanished stops the encoding.

The answer is pulled from Spark's job one batch at a time (:class:`auger.spark.jobs.BatchStream`)
and encoded as it comes, so the server never holds a whole large result; a result past the
server's limit (``auger.result.max_rows``/``max_bytes``) ends, after the rows within it, with the
limit's RESOURCE error.

The body is written in Drill's streaming layout (one member per line, comma first). The
``queryId`` line goes out at once, which keeps clients with short read timeouts alive while
Spark works.

A reader that goes away (the connection closes: Ctrl-C in a client, a killed script) cancels
its query: the server notices the disconnect while the query runs, not only when the next chunk
is ready, and cancels the query's job group until the worker gives up.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
import traceback
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from auger.errors import UserError
from auger.server.encoding import encode_batch_rows, json_string, type_name
from auger.server.profiles import Profile, ProfileStore
from auger.spark import jobs
from auger.spark.errors import out_of_memory, spark_lost, unwrap_spark_error
from auger.sql.planning import explain

if TYPE_CHECKING:
    from auger.engine import Engine
    from auger.server.sessions import WebSession
    from auger.sql.recordings import PlannedTableScan

__all__ = ["QueryManager", "RunningQuery"]

_log = logging.getLogger(__name__)

#: Rows encoded per chunk of the streamed answer.
CHUNK_ROWS = 2000
#: Why a query was cancelled, as its profile says.
CLIENT_GONE = "Cancelled: the client closed the connection before the answer was complete"
USER_CANCEL = "Cancelled by the user"
#: Seconds between the cancels of a cancelled query still running: a Spark job it submits after
#: a cancel (it was still planning, or between two stages) joins the group and is cancelled too.
RECANCEL_INTERVAL = 1.0
_VERBOSE_OPTIONS = ("drill.exec.http.rest.errors.verbose", "exec.errors.verbose")


class _ClientGone(Exception):
    """The reader of the answer went away (or stopped reading for too long)."""


@dataclass
class RunningQuery:
    query_id: str
    web: WebSession
    profile: Profile
    cancel_requested: threading.Event = field(default_factory=threading.Event)
    cancel_reason: str = ""
    #: a tool's own look-up (completion, metadata): runs, but its profile is never saved
    internal: bool = False
    #: set once the query's worker is done with it (answered, failed or cancelled)
    finished: threading.Event = field(default_factory=threading.Event)


class QueryManager:
    """Runs queries for the REST layer and keeps track of the running ones.

    Args:
        engine: the engine (for Spark).
        profiles: where query profiles are written.
        threads: queries running at the same time; further ones wait for a thread.
        send_timeout: seconds a chunk may wait for a reader before the answer is abandoned.
        foreman: the host name shown in profiles and error ids.
        keepalive: seconds of silence after which a space is sent to the waiting client.
    """

    def __init__(
        self,
        engine: Engine,
        profiles: ProfileStore,
        threads: int,
        send_timeout: float,
        foreman: str,
        keepalive: float = 5.0,
    ) -> None:
        self.engine = engine
        self.keepalive = keepalive
        self.profiles = profiles
        self.send_timeout = send_timeout
        self.foreman = foreman
        #: this server as its profiles name it (``host:port``)
        self.server = foreman
        self.executor = ThreadPoolExecutor(threads, thread_name_prefix="auger-query")
        self._running: dict[str, RunningQuery] = {}
        self._lock = threading.Lock()
        self._stopped = threading.Event()

    # ----- bookkeeping
    def running(self) -> list[RunningQuery]:
        with self._lock:
            return list(self._running.values())

    def get(self, query_id: str) -> RunningQuery | None:
        with self._lock:
            return self._running.get(query_id)

    def cancel(self, query_id: str, reason: str = USER_CANCEL) -> bool:
        """Ask a running query to stop; False when it is not running here.

        Args:
            query_id: the query.
            reason: what its profile will say (the first reason given wins).
        """
        with self._lock:
            rq = self._running.get(query_id)
            if rq is None:
                return False
            first = not rq.cancel_requested.is_set()
            if first:
                rq.cancel_reason = reason
                rq.cancel_requested.set()
        jobs.cancel_group(query_id)  # the query's job group is its id
        if first:  # until the worker is done with the query
            jobs.keep_cancelling(
                query_id,
                rq.finished,
                RECANCEL_INTERVAL,
                lambda: not self._stopped.is_set(),
                name=f"auger-cancel-{query_id[:8]}",
            )
        return True

    def shutdown(self) -> None:
        for rq in self.running():
            self.cancel(rq.query_id)
        self._stopped.set()
        self.executor.shutdown(wait=False, cancel_futures=True)

    # ----- one query
    def start(self, web: WebSession, sql: str, internal: bool = False) -> RunningQuery:
        query_id = str(uuid.uuid4())
        profile = Profile(
            query_id=query_id,
            query=sql,
            user=web.user,
            session_id=web.session.id,
            start=_now_ms(),
            server=self.server,
        )
        rq = RunningQuery(query_id, web, profile, internal=internal)
        with self._lock:
            self._running[query_id] = rq
        web.running.add(query_id)
        if not internal:
            self.profiles.save(profile)
        return rq

    async def stream(
        self,
        rq: RunningQuery,
        sql: str,
        attempted_limit: int,
        row_cap: int,
        on_done: Callable[[], Any] | None = None,
    ) -> AsyncIterator[bytes]:
        """The answer's bytes, produced by a pool thread running the query."""
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[bytes | None] = asyncio.Queue(maxsize=4)
        gone = threading.Event()

        sent = [0]

        def emit(chunk: bytes | None) -> None:
            if gone.is_set():  # the reader left (and the loop may be closed by now)
                raise _ClientGone
            sent[0] += 1
            deadline = time.monotonic() + self.send_timeout
            fut = asyncio.run_coroutine_threadsafe(queue.put(chunk), loop)
            while True:
                if gone.is_set():
                    fut.cancel()
                    raise _ClientGone
                try:
                    fut.result(timeout=0.5)
                    return
                except TimeoutError:
                    if time.monotonic() > deadline:
                        fut.cancel()
                        raise _ClientGone from None

        def work() -> None:
            try:
                if gone.is_set():  # the client left while the query waited for a thread
                    rq.cancel_requested.set()
                    return
                self._run(rq, sql, attempted_limit, row_cap, emit)
            except _ClientGone:
                _log.info("client of query %s went away", rq.query_id)
            except BaseException as exc:  # never leave the reader hanging
                _log.exception("query %s failed unexpectedly", rq.query_id)
                if sent[0] == 0 and not gone.is_set():
                    message = json_string(f"SYSTEM ERROR: {type(exc).__name__}: {exc}")
                    try:
                        emit(f',"errorMessage":{message}\n,"queryState":"FAILED"\n}}'.encode())
                    except _ClientGone:
                        pass
            finally:
                self._finish(rq)
                try:
                    if not gone.is_set():
                        emit(None)
                except _ClientGone:
                    pass
                if on_done is not None:
                    try:
                        on_done()
                    except Exception:
                        _log.exception("after-query clean-up failed")

        future = loop.run_in_executor(self.executor, work)
        complete = False
        try:
            # The id goes out before the query gets a thread; while nothing else is ready a
            # space now and then (JSON whitespace) keeps clients' read timeouts from firing.
            # The spaces end the id's line, so every line keeps Drill's exact layout.
            yield f'{{"queryId":{json_string(rq.query_id)}'.encode()
            first = True
            while True:
                if first:
                    try:
                        chunk = await asyncio.wait_for(queue.get(), self.keepalive)
                    except TimeoutError:
                        yield b" "
                        continue
                else:
                    chunk = await queue.get()
                if chunk is None:
                    complete = True
                    break
                yield b"\n" + chunk if first else chunk
                first = False
        finally:
            gone.set()
            while not queue.empty():  # unblock a producer waiting on a full queue
                queue.get_nowait()
            if not complete and not future.done():  # the reader left mid-query: stop it
                _log.info("client of query %s went away: cancelling it", rq.query_id)
                self.cancel(rq.query_id, CLIENT_GONE)
            elif future.done() and not future.cancelled() and future.exception():
                _log.error("query worker crashed: %s", future.exception())

    def finish(self, rq: RunningQuery) -> None:
        """Forget a query run by another front door (Flight SQL), saving its profile."""
        self._finish(rq)

    def _finish(self, rq: RunningQuery) -> None:
        with self._lock:
            self._running.pop(rq.query_id, None)
        rq.finished.set()
        # used now, before it stops counting as running: the reaper, which closes sessions idle
        # for their lifetime with no query running, must not see it idle since the query began
        rq.web.touch()
        rq.web.running.discard(rq.query_id)
        profile = rq.profile
        if not profile.finished:  # the reader vanished or the worker broke
            profile.state = "CANCELED" if rq.cancel_requested.is_set() else "FAILED"
            profile.error = profile.error or rq.cancel_reason or "The client stopped reading"
        profile.end = _now_ms()
        if not rq.internal:
            self.profiles.save(profile)

    # ----- the worker (runs on a pool thread)
    def _run(
        self,
        rq: RunningQuery,
        sql: str,
        attempted_limit: int,
        row_cap: int,
        emit: Callable[[bytes | None], None],
    ) -> None:
        profile = rq.profile
        session = rq.web.session
        verbose = _verbose(session)
        answer: _Answer | None = None
        try:
            with self._job_group(rq):
                answer = self._answer(rq, session, sql, row_cap)
                first_batch = answer.next_batch()
        except Exception as exc:
            if answer is not None:
                answer.close()
            self._failed(rq, exc, verbose, emit)
            profile.stages = jobs.group_stages(rq.query_id)
            return
        names = answer.names
        profile.columns = names
        emit(
            (
                f',"columns":[{",".join(json_string(n) for n in names)}]\n'
                f',"metadata":[{",".join(json_string(t) for t in answer.types)}]\n'
                f',"attemptedAutoLimit":{attempted_limit}\n'
                ',"rows":['
            ).encode()
        )
        first = True
        batch = first_batch
        try:
            with self._job_group(rq):
                while batch is not None:
                    for offset in range(0, batch.num_rows, CHUNK_ROWS):
                        rows = encode_batch_rows(batch.slice(offset, CHUNK_ROWS), names)
                        text = "\n" + ("" if first else ",") + "\n,".join(rows)
                        first = False
                        emit(text.encode("utf-8"))
                        profile.rows += len(rows)
                    if rq.cancel_requested.is_set():
                        raise _Canceled
                    batch = answer.next_batch()
        except _ClientGone:
            raise
        except Exception as exc:
            # rows went out already: the array closes, then the error (Drill's REST closes
            # it with FAILED alone; the reason is what a client needs)
            emit(b"\n]")
            self._failed(rq, exc, verbose, emit)
            return
        finally:
            answer.close()
            profile.stages = jobs.group_stages(rq.query_id)
        answer.finish(rq)
        profile.state = "COMPLETED"
        emit(b'\n]\n,"queryState":"COMPLETED"\n}')

    def _failed(
        self,
        rq: RunningQuery,
        exc: Exception,
        verbose: bool,
        emit: Callable[[bytes | None], None],
    ) -> None:
        """End the answer with the query's error (or its cancellation)."""
        profile = rq.profile
        if isinstance(exc, _Canceled) or rq.cancel_requested.is_set():
            # a cancelled Spark job surfaces as whatever error the step saw
            profile.state = "CANCELED"
            profile.error = rq.cancel_reason or USER_CANCEL
            emit(b',"queryState":"CANCELED"\n}')
            return
        jobs.cancel_group(rq.query_id)  # a partition fetched ahead of the error: stop it
        if not isinstance(exc, UserError):
            error = _spark_error(exc)
            if error.kind.value == "SYSTEM":  # a bug or an unexpected Spark failure
                _log.error("query %s failed", rq.query_id, exc_info=exc)
            exc = error
        self._fail(rq, exc, verbose, emit)

    def _fail(
        self,
        rq: RunningQuery,
        exc: UserError,
        verbose: bool,
        emit: Callable[[bytes | None], None],
    ) -> None:
        # Drill names its user port here; auger's clients reach it on the port it really serves
        port = self.engine.drill_ports().get("http")
        where = f"{self.foreman}:{port}" if port else self.foreman
        message = f"{exc}\n\n[Error Id: {uuid.uuid4()} on {where}]"
        rq.profile.state = "FAILED"
        rq.profile.error = exc.summary
        rq.profile.verbose_error = message
        parts = []
        if verbose:
            parts.append(f',"exception":{json_string(_exception_name(exc))}\n')
        parts.append(f',"errorMessage":{json_string(message)}\n')
        if verbose:
            stack = traceback.format_exception(exc)
            lines = [ln for chunk in stack for ln in chunk.rstrip("\n").split("\n")]
            parts.append(f',"stackTrace":[{",".join(json_string(ln) for ln in lines)}]\n')
        parts.append(',"queryState":"FAILED"\n}')
        emit("".join(parts).encode("utf-8"))

    # ----- Spark work
    def _answer(self, rq: RunningQuery, session: Any, sql: str, row_cap: int) -> _Answer:
        """Run the statement: its answer's batches (at most ``row_cap`` rows when > 0), to be
        pulled one by one, with column names and Drill type names."""
        if rq.cancel_requested.is_set() or session.closed:
            raise _Canceled
        rq.profile.run_start = _now_ms()
        # the scans planned are recorded: the profile's plan names them as EXPLAIN does
        result = session.execute(sql, record_scans=True, row_cap=row_cap)
        scans = result.planned_scans or []
        rq.profile.planned = _now_ms()
        rq.profile.warnings = list(result.warnings)
        schema = result.schema
        names = [c.name for c in schema]
        types = [type_name(c) for c in schema]
        if rq.cancel_requested.is_set():
            raise _Canceled
        limit = jobs.ResultLimit.from_options(session.options)
        if result.table is not None:
            table = result.table
            if row_cap > 0:
                table = table.slice(0, row_cap)
            return _Answer(names, types, result, limit.batches(iter(table.to_batches())))
        df = result.dataframe.limit(row_cap) if row_cap > 0 else result.dataframe
        try:
            stream: Any = jobs.BatchStream(df, rq.query_id, rq.profile.query, limit)
        except jobs.NoArrowSchema:  # a type with no Arrow name on the Python side: in bulk
            stream = limit.batches(iter(jobs.to_arrow(df).to_batches()))
        return _Answer(names, types, result, stream, df, scans)

    @contextmanager
    def _job_group(self, rq: RunningQuery) -> Iterator[None]:
        """The query's Spark jobs (planning and execution, all on this thread) run in a job
        group named by its id; a failure to set one does not fail the query."""
        with contextlib.ExitStack() as stack:
            try:
                group = jobs.job_group(rq.query_id, rq.profile.query, self.engine.spark)
                stack.enter_context(group)
            except Exception:
                _log.debug("could not set a job group", exc_info=True)
            yield


class _Canceled(Exception):
    pass


@dataclass
class _Answer:
    """A statement's answer while it streams: its columns and the batches still to come."""

    names: list[str]
    types: list[str]
    result: Any
    batches: Iterator[pa.RecordBatch]
    df: Any = None
    scans: list[PlannedTableScan] = field(default_factory=list)

    def next_batch(self) -> pa.RecordBatch | None:
        """The next non-empty batch, or None at the end."""
        for batch in self.batches:
            if batch.num_rows:
                return batch
        return None

    def close(self) -> None:
        close = getattr(self.batches, "close", None)
        if callable(close):
            try:
                close()
            except Exception:  # a stream whose JVM is gone
                _log.debug("closing the result stream failed", exc_info=True)

    def finish(self, rq: RunningQuery) -> None:
        """What the profile keeps of a completed answer: the plan that ran, what the scans
        read and skipped."""
        if self.df is not None:
            rq.profile.plan = _plan_graph(self.df, self.scans)
        rq.profile.warnings = self.result.messages()
        rq.profile.scans = self.result.statistics()


def _plan_graph(df: Any, scans: list[PlannedTableScan]) -> dict[str, Any] | None:
    """The plan that ran, for the profile; None where it cannot be read (the query's answer
    does not depend on it)."""

    try:
        return explain.plan_graph(df, scans)
    except Exception:
        _log.debug("plan graph unavailable", exc_info=True)
        return None


def _spark_error(exc: BaseException) -> UserError:
    """The error a user sees for an exception that is not a ``UserError``: Spark's (and the
    JVM's) mapped to Drill's kinds, running out of memory a RESOURCE error, anything else a
    SYSTEM error naming the Python exception."""
    module = type(exc).__module__
    if module.startswith(("py4j", "pyspark")):
        return unwrap_spark_error(exc)
    return spark_lost(exc) or out_of_memory(exc) or UserError.system(f"{type(exc).__name__}: {exc}")


def _verbose(session: Any) -> bool:
    for name in _VERBOSE_OPTIONS:
        try:
            if session.options.get(name):
                return True
        except UserError:
            continue
    return False


def _exception_name(exc: UserError) -> str:
    return f"auger.UserError.{exc.kind.value}"


def _now_ms() -> int:
    return int(time.time() * 1000)
