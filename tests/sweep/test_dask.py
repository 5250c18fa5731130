"""The same sweep on Dask: a real LocalCluster, and a `dask scheduler` + `dask worker` pair started here on
127.0.0.1 (random free ports, bounded waits, stopped afterwards) — rows identical to the local run."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from planner.catalog import Catalog
from planner.errors import InputError
from planner.sweep import DaskEngine, SweepResult, run_sweep
from tests.sweep.helpers import ROOT, chat_sweep

distributed = pytest.importorskip("distributed")
START_TIMEOUT_S = 60.0


def _same_rows(a: SweepResult, b: SweepResult) -> None:
    assert [r.comparable() for r in a.rows] == [r.comparable() for r in b.rows]


def test_local_cluster_gives_the_local_rows(catalog: Catalog, local_result: SweepResult) -> None:
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, host="127.0.0.1"
    ) as cluster:
        seen: list[int] = []
        result = run_sweep(
            catalog,
            chat_sweep(catalog),
            DaskEngine(cluster.scheduler_address),
            on_row=lambda r: seen.append(r.index),
        )
    assert result.engine.startswith("dask tcp://127.0.0.1:")
    assert sorted(seen) == list(range(8))
    assert all(r.status == "optimal" for r in result.rows)
    _same_rows(local_result, result)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _dask_cli(*args: str) -> list[str]:
    script = Path(sys.executable).with_name("dask")
    return [str(script), *args] if script.exists() else [sys.executable, "-m", "dask", *args]


def _stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=15)


@pytest.fixture()
def scheduler_and_worker(tmp_path: Path) -> Iterator[tuple[str, int]]:
    """`dask scheduler` and one `dask worker` (with its nanny) on 127.0.0.1; yields the scheduler address
    and the nanny's process id."""
    address = f"tcp://127.0.0.1:{_free_port()}"
    port = address.rsplit(":", 1)[1]
    logs = [open(tmp_path / name, "wb") for name in ("scheduler.log", "worker.log")]  # noqa: SIM115
    procs: list[subprocess.Popen[bytes]] = []
    try:
        procs.append(
            subprocess.Popen(
                _dask_cli("scheduler", "--host", "127.0.0.1", "--port", port, "--no-dashboard"),
                cwd=ROOT,
                stdout=logs[0],
                stderr=subprocess.STDOUT,
            )
        )
        procs.append(
            subprocess.Popen(
                _dask_cli(
                    "worker",
                    address,
                    "--host",
                    "127.0.0.1",
                    "--nworkers",
                    "1",
                    "--nthreads",
                    "1",
                    "--no-dashboard",
                    "--death-timeout",
                    str(int(START_TIMEOUT_S)),
                ),
                cwd=ROOT,
                stdout=logs[1],
                stderr=subprocess.STDOUT,
            )
        )
        with distributed.Client(address, timeout=START_TIMEOUT_S, set_as_default=False) as client:
            client.wait_for_workers(1, timeout=START_TIMEOUT_S)
        yield address, procs[1].pid
    finally:
        for proc in reversed(procs):
            _stop(proc)
        for log in logs:
            log.close()


def test_scheduler_and_worker_on_localhost_give_the_local_rows(
    catalog: Catalog, local_result: SweepResult, scheduler_and_worker: tuple[str, int]
) -> None:
    address, _ = scheduler_and_worker
    start = time.perf_counter()
    result = run_sweep(catalog, chat_sweep(catalog), DaskEngine(address))
    assert time.perf_counter() - start < 120
    assert result.engine == f"dask {address}"
    _same_rows(local_result, result)


def test_a_killed_dask_worker_costs_no_row(
    catalog: Catalog, local_result: SweepResult, scheduler_and_worker: tuple[str, int]
) -> None:
    """After the first row the worker process is killed; its nanny starts a new one, the scheduler runs the
    lost tasks again, and every row still arrives, equal to the local run."""
    import psutil

    address, nanny_pid = scheduler_and_worker
    killed: list[int] = []

    def kill_once(_row: object) -> None:
        if not killed:
            for child in psutil.Process(nanny_pid).children(recursive=True):
                child.kill()
                killed.append(child.pid)

    result = run_sweep(catalog, chat_sweep(catalog), DaskEngine(address), on_row=kill_once)
    assert killed
    assert not result.failed
    _same_rows(local_result, result)


def test_no_scheduler_at_the_address_is_one_input_error(catalog: Catalog) -> None:
    sweep = chat_sweep(catalog, ["economics.rent_price_scale=1"])
    engine = DaskEngine(f"tcp://127.0.0.1:{_free_port()}", connect_timeout_s=2.0)
    with pytest.raises(InputError, match="no Dask scheduler answered"):
        run_sweep(catalog, sweep, engine)


def test_a_scheduler_without_workers_gives_error_rows_not_a_hang(catalog: Catalog) -> None:
    """No worker ever joins: after the engine's patience every variant is an error row naming the cause."""
    with distributed.LocalCluster(n_workers=0, processes=True, dashboard_address=None, host="127.0.0.1") as cluster:
        start = time.perf_counter()
        result = run_sweep(catalog, chat_sweep(catalog), DaskEngine(cluster.scheduler_address, no_worker_s=2.0))
        assert time.perf_counter() - start < 60
    assert len(result.rows) == 8
    assert all(r.status == "error" and "no Dask worker" in (r.error or "") for r in result.rows)
