"""Running REST queries: a thread pool, Spark job groups, streamed JSON and profiles.

Spark calls block, so each query runs whole in one pool thread: Spark's job group is a
thread-local property, and keeping planning, execution and stage bookkeeping on one thread is
what makes ``cancelJobGroup`` reach every job of the query. The thread hands encoded chunks to
the event loop through a small bounded queue, so a slow reader slows its own query and nothing
else, and a reader that vanished stops the encoding.

The body is written in Drill's streaming layout (one member per line, comma first). The
``queryId`` line goes out at once, which keeps clients with short read timeouts alive while
Spark works.

A reader that goes away (the connection closes: Ctrl-C in a client, a killed script) cancels
its query: the server notices the disconnect while the query runs, not only when the next chunk
is ready, and cancels the query's job group until the worker gives up.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
import traceback
import uuid
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from auger.errors import UserError
from auger.server.encoding import encode_batch_rows, json_string, type_name
from auger.server.profiles import Profile, ProfileStore

if TYPE_CHECKING:
    from auger.engine import Engine
    from auger.server.sessions import WebSession

__all__ = ["QueryManager", "RunningQuery"]

_log = logging.getLogger(__name__)

#: Rows encoded per chunk of the streamed answer.
CHUNK_ROWS = 2000
#: Why a query was cancelled, as its profile says.
CLIENT_GONE = "Cancelled: the client closed the connection before the answer was complete"
USER_CANCEL = "Cancelled by the user"
#: Seconds between the cancels of an abandoned query still running (jobs it submits after the
#: first cancel, while it was still planning, join the same group).
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
        self.executor = ThreadPoolExecutor(threads, thread_name_prefix="auger-query")
        self._running: dict[str, RunningQuery] = {}
        self._lock = threading.Lock()
        self._cancellers: set[asyncio.Task[None]] = set()  # kept alive until they finish

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
        rq = self.get(query_id)
        if rq is None:
            return False
        if not rq.cancel_requested.is_set():
            rq.cancel_reason = reason
        rq.cancel_requested.set()
        spark = self.engine._spark
        from auger.spark.bootstrap import interrupt_tag, is_connect

        if spark is not None and is_connect(spark):
            interrupt_tag(query_id)  # Spark Connect: the query's operations carry its id
        elif spark is not None:
            try:
                spark.sparkContext.cancelJobGroup(query_id)
            except Exception:
                _log.debug("cancelJobGroup(%s) failed", query_id, exc_info=True)
        return True

    def shutdown(self) -> None:
        for rq in self.running():
            self.cancel(rq.query_id)
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
                self._abandon(rq, future)
            elif future.done() and not future.cancelled() and future.exception():
                _log.error("query worker crashed: %s", future.exception())

    def _abandon(self, rq: RunningQuery, worker: asyncio.Future[None]) -> None:
        """Cancel the query of a reader that went away, again and again until it stops."""
        _log.info("client of query %s went away: cancelling it", rq.query_id)
        self.cancel(rq.query_id, CLIENT_GONE)

        async def keep_cancelling() -> None:
            while not worker.done():
                await asyncio.wait([worker], timeout=RECANCEL_INTERVAL)
                if not worker.done():
                    self.cancel(rq.query_id, CLIENT_GONE)

        task = asyncio.get_running_loop().create_task(keep_cancelling())
        self._cancellers.add(task)
        task.add_done_callback(self._cancellers.discard)

    def _finish(self, rq: RunningQuery) -> None:
        with self._lock:
            self._running.pop(rq.query_id, None)
        rq.web.running.discard(rq.query_id)
        rq.web.touch()
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
        sc = self._job_group(rq)
        table: pa.Table | None = None
        try:
            if rq.cancel_requested.is_set() or session.closed:
                raise _Canceled
            result = session.execute(sql)
            profile.warnings = list(result.warnings)
            schema = result.schema
            names = [c.name for c in schema]
            types = [type_name(c) for c in schema]
            if rq.cancel_requested.is_set():
                raise _Canceled
            if result.table is not None:
                table = result.table
                if row_cap > 0:
                    table = table.slice(0, row_cap)
            else:
                df = result.dataframe.limit(row_cap) if row_cap > 0 else result.dataframe
                try:
                    table = df.toArrow()
                except Exception as exc:
                    if rq.cancel_requested.is_set():
                        raise _Canceled from exc
                    from auger.spark.errors import unwrap_spark_error

                    raise unwrap_spark_error(exc) from exc
            if rq.cancel_requested.is_set():
                raise _Canceled
        except Exception as exc:
            if isinstance(exc, _Canceled) or rq.cancel_requested.is_set():
                # a cancelled Spark job surfaces as whatever error the step saw
                profile.state = "CANCELED"
                profile.error = rq.cancel_reason or USER_CANCEL
                emit(b',"queryState":"CANCELED"\n}')
            elif isinstance(exc, UserError):
                self._fail(rq, exc, verbose, emit)
            else:  # a bug or an unexpected Spark failure: still a clean answer
                _log.exception("query %s failed", rq.query_id)
                self._fail(rq, UserError.system(f"{type(exc).__name__}: {exc}"), verbose, emit)
            return
        finally:
            profile.stages = self._stages(sc, rq.query_id)
            self._clear_job_group(sc)
        assert table is not None
        profile.columns = names
        emit(
            (
                f',"columns":[{",".join(json_string(n) for n in names)}]\n'
                f',"metadata":[{",".join(json_string(t) for t in types)}]\n'
                f',"attemptedAutoLimit":{attempted_limit}\n'
                ',"rows":['
            ).encode()
        )
        first = True
        for offset in range(0, table.num_rows, CHUNK_ROWS):
            rows = encode_batch_rows(table.slice(offset, CHUNK_ROWS), names)
            text = "\n" + ("" if first else ",") + "\n,".join(rows)
            first = False
            emit(text.encode("utf-8"))
            profile.rows += len(rows)
        profile.state = "COMPLETED"
        emit(b'\n]\n,"queryState":"COMPLETED"\n}')

    def _fail(
        self,
        rq: RunningQuery,
        exc: UserError,
        verbose: bool,
        emit: Callable[[bytes | None], None],
    ) -> None:
        message = f"{exc}\n\n[Error Id: {uuid.uuid4()} on {self.foreman}:31010]"
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

    # ----- Spark job groups and stage timings
    def _job_group(self, rq: RunningQuery) -> Any:
        """The SparkContext with the query's job group set; under Spark Connect (no
        SparkContext) the query's operations are tagged instead and the tag's remover is
        returned, for :meth:`_clear_job_group`."""
        try:
            from auger.spark.bootstrap import is_connect, tag_operations

            if is_connect(self.engine.spark):
                return tag_operations(rq.query_id)
            sc = self.engine.spark.sparkContext
            sc.setJobGroup(rq.query_id, rq.profile.query[:200], interruptOnCancel=True)
            return sc
        except Exception:
            _log.debug("could not set a job group", exc_info=True)
            return None

    @staticmethod
    def _clear_job_group(sc: Any) -> None:
        if sc is None:
            return
        if callable(sc):  # a Spark Connect tag's remover
            sc()
            return
        for key in ("spark.jobGroup.id", "spark.job.description", "spark.job.interruptOnCancel"):
            try:
                sc.setLocalProperty(key, None)
            except Exception:
                pass

    @staticmethod
    def _stages(sc: Any, group: str) -> list[dict[str, Any]]:
        """The Spark stages of the query's jobs with their timings (best effort)."""
        if sc is None or callable(sc):  # none to read under Spark Connect
            return []
        out: list[dict[str, Any]] = []
        try:
            tracker = sc.statusTracker()
            store = sc._jsc.sc().statusStore()
            for job_id in sorted(tracker.getJobIdsForGroup(group)):
                info = tracker.getJobInfo(job_id)
                for stage_id in sorted(info.stageIds if info else ()):
                    out.append(_stage_record(store, job_id, stage_id))
        except Exception:
            _log.debug("stage timings unavailable", exc_info=True)
        return out


class _Canceled(Exception):
    pass


def _stage_record(store: Any, job_id: int, stage_id: int) -> dict[str, Any]:
    record: dict[str, Any] = {"jobId": job_id, "stageId": stage_id}
    try:
        data = store.lastStageAttempt(stage_id)
    except Exception:
        return record

    def opt_ms(value: Any) -> int | None:
        try:
            return int(value.get().getTime()) if value.isDefined() else None
        except Exception:
            return None

    record.update(
        {
            "name": str(data.name()),
            "status": str(data.status()),
            "numTasks": int(data.numTasks()),
            "submissionTime": opt_ms(data.submissionTime()),
            "firstTaskLaunchedTime": opt_ms(data.firstTaskLaunchedTime()),
            "completionTime": opt_ms(data.completionTime()),
            "executorRunTime": int(data.executorRunTime()),
            "inputRecords": int(data.inputRecords()),
            "outputRecords": int(data.outputRecords()),
        }
    )
    return record


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
