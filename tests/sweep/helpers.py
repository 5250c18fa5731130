"""Shared sweep test inputs: the bundled 70B chat example and a small grid over it."""

from __future__ import annotations

import os
from pathlib import Path

import typer

from planner.catalog import Catalog
from planner.cli.sweep import register
from planner.scenario import load_scenario
from planner.sweep import SweepPlan, parse_axis, plan_sweep

ROOT = Path(__file__).resolve().parents[2]
CHAT = ROOT / "examples" / "chat_70b_cloud" / "scenario.yaml"
GRID = [
    "economics.rent_price_scale=0.5,1",
    "workloads.chat.slo.tpot_ms=30,50",
    "workloads.chat.requests_per_s=4,8",
]


def chat_sweep(catalog: Catalog, vary: list[str] | None = None, mode: str = "grid") -> SweepPlan:
    """The grid (default: 2 × 2 × 2 = 8 variants) over the chat example."""
    scenario = load_scenario(CHAT, catalog)
    axes = [parse_axis(v) for v in (vary or GRID)]
    return plan_sweep(scenario, catalog, axes, "zip" if mode == "zip" else "grid", path=str(CHAT))


def die() -> None:
    """A process-pool initializer that kills its process (a lost worker)."""
    os._exit(13)


def sweep_app() -> typer.Typer:
    """A Typer app holding only the sweep command (the CLI tests invoke it)."""
    app = typer.Typer()

    @app.callback()
    def root() -> None:
        """Test root."""

    register(app)
    return app
