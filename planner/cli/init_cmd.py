"""``planner init``: write a commented starter scenario that plans as written."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from planner.cli.common import fail, run_guarded, wrote
from planner.errors import InputError

STARTER = """\
# A starter scenario for `planner plan` — every field is explained in `planner schema`.
# Units are in the names: _ms milliseconds, _usd US dollars, _frac fractions (0.1 = 10 %).
name: my-first-plan
horizon_months: 12            # how long the plan runs (costs are summed over it)
objective: min_cost           # or max_throughput with a `budget:`
workloads:
  - name: chat                # your name for this traffic
    models: [qwen3_8b]        # candidates: `planner catalog models`
    quantizations: [bf16, fp8]  # weight formats: `planner catalog formats`
    requests_per_s: 5         # peak demand; a list gives one value per period
    input_tokens: 1000        # prompt tokens per request
    output_tokens: 250        # generated tokens per request
    slo: {ttft_ms: 1500, tpot_ms: 60}   # time to first token, time per output token
    sites: [us_east]          # where it may run: `planner catalog sites`
    engine: vllm              # serving engine: vllm, sglang, trtllm, ... (catalogs/engines.yaml)
    # engine_settings: {memory_claim_frac: 0.95, max_running_sequences: 256}  # the engine as you run it
hardware:
  gpus: [h100_sxm, l40s, a100_sxm_80gb]  # candidates: `planner catalog gpus`, prices: `planner catalog prices`
  tp: [1, 2, 4]               # tensor-parallel degrees to try
  pp: [1]                     # pipeline-parallel degrees to try
procurement: [rent]           # add `buy` to compare buying (then try `planner compare`)
"""

TRAINING_STARTER = """\
# A starter training scenario for `planner train` — every field is explained in `planner schema --kind training`.
# Units are in the names: _tokens tokens, _days days, _usd US dollars.
kind: training
name: my-first-training-run
model: qwen3_8b               # a catalog model (`planner catalog models`) or {layers, hidden_size, ...}
training_tokens: 1.0e11       # tokens to train on
seq_len_tokens: 4096          # sequence length
global_batch_tokens: 4194304  # tokens per optimizer step (a multiple of seq_len_tokens), or global_batch_sequences
deadline_days: 30             # finish within (objective min_cost); or objective: earliest_finish + budget_usd
procurement: [rent]           # rent, buy (datacenter sites), owned (needs inventory)
hardware:
  gpus: [h100_sxm, h200_sxm]  # candidates: `planner catalog gpus`
  max_gpus: 512               # the most GPUs one run may use
# sites: [us_east, dc1]       # where it may run (default: every cloud and datacenter site)
"""


def init(
    path: Annotated[Path, typer.Argument(help="Scenario file to create.")] = Path("scenario.yaml"),
    force: Annotated[bool, typer.Option("--force", help="Overwrite an existing file.")] = False,
    kind: Annotated[
        str,
        typer.Option("--kind", help="inference (for `planner plan`) or training (for `planner train`).", metavar="KIND"),
    ] = "inference",
) -> None:
    """Write a commented starter scenario (then: `planner plan scenario.yaml`, or `planner train` with --kind
    training)."""
    starters = {"inference": STARTER, "training": TRAINING_STARTER}
    if kind not in starters:
        fail(InputError(f"--kind {kind}: not a scenario kind — use inference or training"))
    from planner.report.files import atomic_write_text

    try:
        is_dir, exists = path.is_dir(), path.exists()
    except OSError as exc:  # a name over 255 bytes: it was "internal error: OSError", exit 4
        fail(InputError(f"{path}: {exc.strerror or exc} — choose another name"))
    if is_dir:  # "already exists — pass --force" sent the user to a second refusal
        name = "training.yaml" if kind == "training" else "scenario.yaml"
        fail(InputError(f"{path}: is a directory — give a file name, e.g. {path / name}"))
    if exists and not force:
        fail(InputError(f"{path}: already exists — choose another name or pass --force"))
    if path.suffix.lower() not in (".yaml", ".yml"):
        fail(InputError(f"{path}: a scenario file name ends in .yaml"))
    run_guarded(lambda: atomic_write_text(path, starters[kind]))
    wrote(path)
