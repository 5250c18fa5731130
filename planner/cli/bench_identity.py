"""Same answers before and after a speed change: ``python -m planner.cli.bench_identity OUT_DIR``.

Writes the JSON of ``planner plan`` (with alternatives) of every example and of the 5-workload bench scenario
(planner.cli.bench.bench_scenario: the alternatives run in forked workers there), and of
``planner compare examples/buy_vs_rent``, without timing fields, one file each, and prints each run's wall
and CPU seconds. Run it on two checkouts (``PYTHONPATH=<checkout>``) and ``diff -r`` the two folders: a
speed change must leave them byte-identical.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def without_timing(data: Any) -> Any:
    """``data`` without the keys that hold seconds (``*_seconds``)."""
    if isinstance(data, dict):
        return {k: without_timing(v) for k, v in data.items() if not k.endswith("_seconds")}
    if isinstance(data, list):
        return [without_timing(v) for v in data]
    return data


def write_outputs(out: Path) -> list[str]:
    """Write the plan and compare JSON of the examples into ``out``; one timing line per run."""
    from planner.catalog import default_catalog
    from planner.cli.bench import bench_scenario
    from planner.compare import compare
    from planner.errors import PlannerError
    from planner.plan import plan
    from planner.scenario import load_scenario

    out.mkdir(parents=True, exist_ok=True)
    catalog = default_catalog()
    lines = []

    def run(name: str, make: Any) -> None:
        t, cpu = time.perf_counter(), time.process_time()
        data = make().to_json()
        lines.append(f"{name}: {time.perf_counter() - t:.2f} s wall, {time.process_time() - cpu:.2f} s CPU")
        (out / f"{name}.json").write_text(json.dumps(without_timing(data), indent=1, sort_keys=True) + "\n")

    for path in sorted(EXAMPLES.glob("*/scenario.yaml")):
        try:
            scenario = load_scenario(path, catalog)
        except PlannerError:  # not an inference scenario (examples/train_8b)
            continue
        run(f"plan_{path.parent.name}", lambda s=scenario: plan(catalog, s, with_alternatives=True))
    run("plan_bench_5_workloads", lambda: plan(catalog, bench_scenario(), with_alternatives=True))  # type: ignore[arg-type]
    buy_vs_rent = load_scenario(EXAMPLES / "buy_vs_rent" / "scenario.yaml", catalog)
    run("compare_buy_vs_rent", lambda: compare(catalog, buy_vs_rent))
    return lines


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print("usage: python -m planner.cli.bench_identity OUT_DIR", file=sys.stderr)
        sys.exit(2)
    for line in write_outputs(Path(sys.argv[1])):
        print(line)
