"""Independent tasks of one command on all the cores this process may use: ``fn(i)`` over task indices in
forked children of this process (:func:`fork_map`), or one computation in a forked child while this process
goes on with another (:class:`Background`).

The children are made by ``fork()``: they inherit the catalog, the candidate table and the solved plan
(whatever ``fn`` closes over) without pickling; only each task's small result is pickled back through a
pipe. Scheduling is dynamic: each child asks for the next task when it has sent its result, tasks are handed
out in the caller's ``order`` (expensive ones first), and results come back in task order whatever the
completion order, so the answers are those of the serial loop ``[fn(i) for i in range(n)]`` as long as
``fn`` is deterministic and its tasks do not depend on one another.

Serial (no fork) when :func:`workers_for` says one worker: ``PLANNER_WORKERS=1``; not Linux or no "fork"
start method; not the main thread; inside a sweep task (local forkserver workers and Dask workers never
nest pools: :func:`forbid_forking`) or inside a forked child; a daemonic process. A task whose child dies
(OOM killer, signal) or raises is run again here, in this process, after the others: the command never
hangs on a lost child and an exception surfaces here with its own traceback. Children never write to
stdout (fd 1 goes to /dev/null; they leave by ``os._exit``, so buffered output of the parent is not flushed
twice).
"""

from __future__ import annotations

import contextlib
import gc
import multiprocessing
import os
import signal
import sys
import threading
import warnings
from collections.abc import Callable, Sequence
from multiprocessing.connection import Connection, wait
from typing import Any, Generic, TypeVar

from planner.highs_threads import no_solver_workers

T = TypeVar("T")

WORKERS_ENV = "PLANNER_WORKERS"
"""Environment variable: worker processes for independent tasks (1: serial; unset: the usable CPUs)."""

_STATE = {"forbidden": False}
"""Process-wide: True in a sweep task and in a forked child (no pool inside a pool)."""

_DONE = "done"
"""Message to a child: no more tasks, exit."""


def forbid_forking() -> None:
    """Make every later :func:`fork_map` in this process serial (sweep workers, forked children)."""
    _STATE["forbidden"] = True


def can_fork() -> bool:
    """True where tasks may run in forked children: Linux with the "fork" start method, not inside a sweep
    task or a forked child (:func:`forbid_forking`), not a daemonic process, and called from the main
    thread (work running in a thread pool forks nothing: another of its threads may hold a lock the child
    would wait on forever)."""
    return (
        sys.platform.startswith("linux")
        and hasattr(os, "fork")
        and "fork" in multiprocessing.get_all_start_methods()
        and not _STATE["forbidden"]
        and not multiprocessing.current_process().daemon
        and threading.current_thread() is threading.main_thread()  # a thread's siblings may hold locks
    )


def usable_cpus() -> int:
    """CPUs this process may run on (its affinity mask), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def workers_for(n_tasks: int) -> int:
    """Worker processes for ``n_tasks`` independent tasks: ``PLANNER_WORKERS`` when set (a positive integer;
    1 = serial), else :func:`usable_cpus`, capped by ``n_tasks``; 1 where :func:`can_fork` is False."""
    raw = os.environ.get(WORKERS_ENV, "").strip()
    try:
        wanted = int(raw) if raw else usable_cpus()
    except ValueError:
        wanted = 1  # a malformed value never costs an answer: serial
    if n_tasks <= 1 or wanted <= 1 or not can_fork():
        return 1
    return min(wanted, n_tasks)


def _child(conn: Connection, fn: Callable[[int], Any]) -> None:
    """A worker: run the task index it is sent, send back ``(index, True, result)`` (``(index, False,
    None)`` when it raised or its result cannot be pickled), until told :data:`_DONE`."""
    forbid_forking()
    gc.disable()  # a short-lived child: collections would only touch (and copy) the inherited heap's pages
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)  # nothing a child does (a solver's banner) reaches stdout
    os.close(devnull)
    while True:
        i = conn.recv()
        if i == _DONE:
            return
        try:
            conn.send((i, True, fn(i)))
        except Exception:  # run again in the parent, where it raises with its traceback
            conn.send((i, False, None))


def _fork(fn: Callable[[int], Any], inherited: list[Connection]) -> tuple[int, Connection]:
    """Fork one worker; (its pid, the parent's end of its pipe). ``inherited``: the parent's ends of the
    workers made before, closed in the child (so a dead child's pipe reads EOF in the parent)."""
    mine, theirs = multiprocessing.Pipe(duplex=True)
    with warnings.catch_warnings():
        # Python >= 3.12 warns that fork() with other threads alive may deadlock the child. The other
        # threads here are OpenBLAS's (numpy; fork-safe through pthread_atfork) and the CLI spinner's
        # (planner.cli.progress: it holds no lock the child takes, and the child never prints); no HiGHS
        # worker thread exists while no concurrent solve runs (a child's solve would wait on it forever).
        warnings.filterwarnings("ignore", message=r".*use of fork\(\) may lead to deadlocks", category=DeprecationWarning)
        with no_solver_workers():
            pid = os.fork()
    if pid == 0:  # the child: never returns
        code = 0
        try:
            mine.close()
            for c in inherited:
                c.close()
            _child(theirs, fn)
        except BaseException:
            code = 1
        finally:
            os._exit(code)
    theirs.close()
    return pid, mine


def _hand(conn: Connection, queue: list[int], busy: dict[Connection, int]) -> None:
    """Send ``conn``'s child the next task of ``queue`` (popped from its end; noted in ``busy``), or
    :data:`_DONE` when none is left. A child gone meanwhile leaves its task in ``queue`` for another."""
    task = queue.pop() if queue else None
    try:
        conn.send(_DONE if task is None else task)
    except OSError:  # the child died (broken pipe)
        if task is not None:
            queue.append(task)
        return
    if task is not None:
        busy[conn] = task


def fork_map(
    fn: Callable[[int], T],
    n_tasks: int,
    order: Sequence[int] | None = None,
    meanwhile: Callable[[], None] | None = None,
) -> list[T]:
    """``[fn(i) for i in range(n_tasks)]``, run in :func:`workers_for` forked children (serially in this
    process when that is 1). ``order``: the order tasks are handed out (default ``range(n_tasks)``; put the
    expensive ones first). Results are in task order. A task whose child died or raised is run here.
    ``meanwhile``: other work of this process, called once: here, as soon as no more tasks are left than
    workers (each child then needs at most one more task from this process, and its core would idle while they
    work: with the expensive tasks first, the running ones outlast it), or after the tasks when they run
    serially."""
    workers = workers_for(n_tasks)
    if workers <= 1:
        out = [fn(i) for i in range(n_tasks)]
        if meanwhile is not None:
            meanwhile()
        return out
    queue = list(order) if order is not None else list(range(n_tasks))
    if sorted(queue) != list(range(n_tasks)):
        raise ValueError(f"order must be a permutation of range({n_tasks})")
    queue.reverse()  # pop() from the end
    results: dict[int, T] = {}
    sys.stdout.flush()
    sys.stderr.flush()
    pids: dict[Connection, int] = {}
    busy: dict[Connection, int] = {}
    try:
        gc.freeze()  # the heap at fork time is out of the children's (and this process') collections
        try:
            for _ in range(workers):
                pid, conn = _fork(fn, list(pids))
                pids[conn] = pid
                _hand(conn, queue, busy)
        finally:
            gc.unfreeze()
        while busy:
            if meanwhile is not None and len(queue) <= workers:  # the last round is queued: this process's work now
                pending, meanwhile = meanwhile, None
                pending()
            for ready in wait(list(busy)):
                child = next(c for c in busy if c is ready)
                del busy[child]
                try:
                    i, ok, value = child.recv()
                except (EOFError, OSError):  # the child died: its task is run here
                    continue
                if ok:
                    results[i] = value
                _hand(child, queue, busy)
    finally:
        for conn, pid in pids.items():
            if conn in busy:  # interrupted: stop the children still working
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            conn.close()
            os.waitpid(pid, 0)
    out = [results[i] if i in results else fn(i) for i in range(n_tasks)]
    if meanwhile is not None:  # not called yet (the children were gone before every task was handed out)
        meanwhile()
    return out


class Background(Generic[T]):
    """``fn()`` computed in a forked child while this process goes on; :meth:`result` waits for it.

    The child starts at once where :func:`workers_for` gives two workers (else nothing is forked and
    :meth:`result` computes ``fn()`` here); it inherits what ``fn`` closes over and pickles back only the
    result. A child that died or raised has ``fn()`` run again here by :meth:`result` (an exception then
    surfaces with its traceback), so the answer is ``fn()``'s either way. :meth:`cancel` (a result not
    needed after all) kills the child; use the object as a context manager so that no child outlives it.
    """

    def __init__(self, fn: Callable[[], T], *, fork: bool = True) -> None:
        """``fork``: False computes ``fn()`` here, in :meth:`result` (work too small to pay for a fork)."""
        self._fn = fn
        self._child: tuple[int, Connection] | None = None
        if fork and workers_for(2) > 1:
            sys.stdout.flush()
            sys.stderr.flush()
            gc.freeze()
            try:
                self._child = _fork(lambda _i: fn(), [])
            finally:
                gc.unfreeze()
            try:
                self._child[1].send(0)
            except OSError:  # died at once: computed here
                self._reap(kill=False)

    @property
    def forked(self) -> bool:
        """True while the result is being computed in a child (False: :meth:`result` computes it here)."""
        return self._child is not None

    def result(self) -> T:
        """``fn()``: the child's answer, or computed here (no child, or it died or raised)."""
        if self._child is not None:
            conn = self._child[1]
            try:
                _i, ok, value = conn.recv()
            except (EOFError, OSError):
                ok = False
            if ok:
                with contextlib.suppress(OSError):
                    conn.send(_DONE)
            self._reap(kill=not ok)
            if ok:
                return value  # type: ignore[no-any-return]
        return self._fn()

    def cancel(self) -> None:
        """Stop the child (its result is not wanted); :meth:`result` would then compute ``fn()`` here."""
        if self._child is not None:
            self._reap(kill=True)

    def _reap(self, *, kill: bool) -> None:
        assert self._child is not None
        pid, conn = self._child
        self._child = None
        if kill:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        conn.close()
        os.waitpid(pid, 0)

    def __enter__(self) -> Background[T]:
        return self

    def __exit__(self, *exc: object) -> None:
        self.cancel()
