"""Run a sweep's variants on local processes or on a Dask cluster: one driver, two executors.

Both engines hand out a :class:`concurrent.futures.Executor`: a ``ProcessPoolExecutor`` whose processes
receive the :class:`~planner.sweep.task.SweepContext` once (pool initializer), or a Dask
``Client.get_executor`` whose workers receive it once (``Client.scatter(..., broadcast=True)``). The driver
submits :func:`~planner.sweep.task.solve_variant` for every variant not already done, gathers rows as they
complete and calls ``on_row`` for each. A task lost with its worker (a killed process, a Dask worker gone)
is submitted again on a fresh executor, up to ``retries`` times; after that its row is an error. A Dask
scheduler without any worker for :data:`DASK_NO_WORKER_S` (none joined, or all went away and none came
back) ends the sweep's remaining variants as error rows instead of waiting for ever.
"""

from __future__ import annotations

import math
import multiprocessing
import os
import time
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, CancelledError, Executor, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Protocol

from planner.errors import InputError
from planner.sweep.result import SweepRow
from planner.sweep.spec import Variant
from planner.sweep.task import SweepContext, error_row, install_context, solve_variant

DASK_CONNECT_TIMEOUT_S = 10.0
"""How long ``--dask ADDRESS`` waits for the scheduler before giving up (exit 2)."""
DASK_NO_WORKER_S = 120.0
"""How long a Dask sweep waits while the scheduler has no worker before the variants left become error rows."""
WAIT_POLL_S = 1.0
"""How often the driver looks at the workers while no row arrives."""


class NoWorkers(RuntimeError):
    """The Dask scheduler had no worker for longer than the engine's patience."""


class Engine(Protocol):
    """Where tasks run: opens an executor and the context argument its tasks receive."""

    @property
    def name(self) -> str:
        """``local processes (N)`` or ``dask ADDRESS``."""
        ...

    def session(self, context: SweepContext) -> Any:
        """A context manager yielding (executor, context argument of solve_variant)."""
        ...


def default_workers() -> int:
    """Local worker processes by default: the CPU cores this process may use."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


@dataclass(frozen=True)
class LocalEngine:
    """``--workers N``: N local processes (forkserver start: no threads of the parent are forked)."""

    workers: int

    @property
    def name(self) -> str:
        """``local processes (N)``."""
        return f"local processes ({self.workers})"

    @contextmanager
    def session(self, context: SweepContext) -> Iterator[tuple[Executor, SweepContext | None]]:
        """A process pool whose every process holds ``context`` (tasks get None and read it there)."""
        method = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
        pool = ProcessPoolExecutor(
            max_workers=self.workers,
            mp_context=multiprocessing.get_context(method),
            initializer=install_context,
            initargs=(context,),
        )
        try:
            yield pool, None
        except BaseException:  # Ctrl-C, SIGTERM (planner.cli.guard) or an error: do not wait for running solves
            stop_workers(pool)
            raise
        finally:
            pool.shutdown(wait=True, cancel_futures=True)


STOP_GRACE_S = 2.0
"""Seconds a worker gets to end on SIGTERM before it is killed (:func:`stop_workers`)."""


def stop_workers(pool: ProcessPoolExecutor) -> None:
    """End the pool's worker processes now: ``shutdown(wait=True)`` alone waits for every running variant to
    finish — minutes of solving after an interrupted sweep said it stopped. SIGTERM first; a worker still
    alive after :data:`STOP_GRACE_S` (one that inherited a SIGTERM handler, planner.cli.guard's, turns the
    signal into an exception and waits for the next task) is killed. Workers hold nothing to save: the
    rows are written by this process."""
    processes = [p for p in list((getattr(pool, "_processes", None) or {}).values()) if p.is_alive()]
    for process in processes:
        process.terminate()
    for process in processes:
        process.join(STOP_GRACE_S)
        if process.is_alive():
            process.kill()


@dataclass(frozen=True)
class DaskEngine:
    """``--dask tcp://host:8786``: an existing dask.distributed scheduler (or a LocalCluster's address)."""

    address: str
    retries: int = 2
    connect_timeout_s: float = DASK_CONNECT_TIMEOUT_S
    no_worker_s: float = DASK_NO_WORKER_S

    @property
    def name(self) -> str:
        """``dask ADDRESS``."""
        return f"dask {self.address}"

    @contextmanager
    def session(self, context: SweepContext) -> Iterator[tuple[Executor, Any]]:
        """A Dask client executor; the context is scattered to every worker once and passed as a future."""
        import distributed
        from distributed.comm.addressing import resolve_address

        try:  # a malformed address is a usage mistake, found before a client exists (its clean-up would hang)
            resolve_address(self.address)
        except (ValueError, OSError) as exc:
            raise InputError(
                f"--dask {self.address}: {exc} — give the scheduler's host:port, e.g. tcp://10.0.0.5:8786"
            ) from None
        connect: Any = distributed.Client  # untyped library: the client is used through Any
        try:
            client: Any = connect(self.address, timeout=self.connect_timeout_s, set_as_default=False)
        except (OSError, TimeoutError) as exc:
            raise InputError(
                f"--dask {self.address}: no Dask scheduler answered ({type(exc).__name__}) — start one with "
                "`dask scheduler` and `dask worker ADDRESS`, or use --workers N for local processes"
            ) from None
        try:
            try:
                shared = client.scatter(context, broadcast=True, hash=False, timeout=self.no_worker_s)
            except TimeoutError:
                raise NoWorkers(f"no Dask worker at {self.address} for {self.no_worker_s:g} s") from None
            executor = client.get_executor(retries=self.retries, pure=False)
            yield executor, shared
        finally:
            client.close()

    def workers_alive(self, executor: Any) -> bool:
        """Whether the scheduler has at least one worker (``executor`` is the session's client executor)."""
        client = getattr(executor, "_client", None)  # distributed's ClientExecutor keeps its client there
        try:
            return client is None or bool(client.scheduler_info().get("workers"))
        except Exception:  # noqa: BLE001 - a scheduler that does not answer has no usable worker either
            return False


def _lost_errors() -> tuple[type[BaseException], ...]:
    """Exceptions that mean 'the worker went away', not 'the variant failed'."""
    # CancelledError: a Dask task whose scattered context was lost with its worker is cancelled; a new
    # session scatters the context again
    errors: list[type[BaseException]] = [BrokenProcessPool, CancelledError]
    try:
        from distributed import KilledWorker
        from distributed.comm.core import CommClosedError

        errors += [KilledWorker, CommClosedError]
    except ImportError:  # pragma: no cover - dask is a dependency; local sweeps work without it
        pass
    return tuple(errors)


def run_variants(
    engine: Engine,
    context: SweepContext,
    pending: list[Variant],
    on_row: Callable[[SweepRow], None],
    *,
    retries: int = 2,
) -> list[SweepRow]:
    """Solve ``pending`` on ``engine``; rows in completion order (``on_row`` sees each as it arrives)."""
    lost_errors = _lost_errors()
    rows: list[SweepRow] = []
    todo = list(pending)
    for attempt in range(retries + 1):
        if not todo:
            break
        try:
            with engine.session(context) as (executor, shared):
                futures, unsent = _submit(executor, shared, todo, lost_errors)
                lost = unsent + _gather(engine, executor, futures, rows, on_row, lost_errors)
        except NoWorkers as exc:
            for variant in sorted(todo, key=lambda v: v.index):
                row = error_row(variant, exc, 0.0)
                rows.append(row)
                on_row(row)
            return rows
        todo = sorted(lost, key=lambda v: v.index)
        if todo and attempt == retries:
            for variant in todo:
                row = error_row(variant, RuntimeError(f"worker lost {retries + 1} times"), 0.0)
                rows.append(row)
                on_row(row)
    return rows


def _submit(
    executor: Executor, shared: Any, todo: list[Variant], lost_errors: tuple[type[BaseException], ...]
) -> tuple[dict[Future[SweepRow], Variant], list[Variant]]:
    """Submit ``todo`` (futures → variant) and the variants not sent: a local pool whose worker died while
    the tasks were being submitted refuses the rest (BrokenProcessPool from ``submit``), and those are lost
    with it, to be retried like the ones it took down — not an exception out of the sweep."""
    futures: dict[Future[SweepRow], Variant] = {}
    for i, variant in enumerate(todo):
        try:
            futures[executor.submit(solve_variant, shared, variant)] = variant
        except lost_errors:
            return futures, todo[i:]
    return futures, []


def _gather(
    engine: Engine,
    executor: Executor,
    futures: dict[Future[SweepRow], Variant],
    rows: list[SweepRow],
    on_row: Callable[[SweepRow], None],
    lost_errors: tuple[type[BaseException], ...],
) -> list[Variant]:
    """Collect the rows of ``futures`` as they complete (``on_row`` for each); the variants lost with their
    worker, or still pending after the engine had no worker for its ``no_worker_s``."""
    lost: list[Variant] = []
    waiting = set(futures)
    alive = getattr(engine, "workers_alive", None)
    patience = float(getattr(engine, "no_worker_s", math.inf))
    idle_since: float | None = None
    while waiting:
        done, waiting = wait(waiting, timeout=WAIT_POLL_S, return_when=FIRST_COMPLETED)
        if not done:
            if alive is None or alive(executor):
                idle_since = None
            elif idle_since is None:
                idle_since = time.monotonic()
            elif time.monotonic() - idle_since >= patience:
                for future in waiting:
                    future.cancel()
                return lost + [futures[f] for f in waiting]
            continue
        for future in sorted(done, key=lambda f: futures[f].index):
            variant = futures[future]
            try:
                row = future.result()
            except lost_errors:
                lost.append(variant)
                continue
            except Exception as exc:  # e.g. a result that could not travel back
                row = error_row(variant, exc, 0.0)
            rows.append(row)
            on_row(row)
    return lost
