"""`planner train` outputs recomputed by hand from card 4 (ledgers.md) and the catalog's published inputs, the
train workbook's units and formulas, scenario errors that name their field, and `planner ledger` numeric
options (nan/inf/negative/zero divisors are usage errors, exit 2, one line)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
import typer
import yaml
from openpyxl import load_workbook
from typer.testing import CliRunner

from planner.cli.main import app as main_app
from planner.cli.train import register

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples/train_8b/training.yaml"
runner = CliRunner()
app = typer.Typer()
register(app)

# Qwen3-8B (models.md): 36 layers, d = 4,096, 32 Q / 8 KV heads of 128, FFN 12,288, vocabulary 151,936
LAYERS, D, HEADS, KV, HEAD_DIM, FFN, VOCAB = 36, 4096, 32, 8, 128, 12288, 151936
N_PARAMS = 8_190_735_360
LINEAR_PARAMS = LAYERS * (2 * D * D + 2 * D * KV * HEAD_DIM + 3 * D * FFN) + D * VOCAB  # + LM head
H100_PEAK_FLOP_PER_S = 989.4e12  # dense BF16 (hardware.md)
SEQ = 4096
BATCH_TOKENS = 4_194_304
TOKENS = 1.0e11


def _example_json() -> dict[str, Any]:
    res = runner.invoke(app, ["train", str(EXAMPLE), "--json"])
    assert res.exit_code == 0, res.stderr
    data: dict[str, Any] = json.loads(res.stdout)
    return data


def test_example_flops_mfu_checkpoint_and_days_by_hand() -> None:
    data = _example_json()
    # card 4: 3 × (linear + LM head + causal attention) forward FLOPs per token
    attention_fwd = 4 * HEADS * HEAD_DIM * LAYERS * (SEQ + 1) / 2
    flop_per_token = 3 * (2 * LINEAR_PARAMS + attention_fwd)
    assert data["n_params"] == N_PARAMS
    # (the code also counts the 2 × 128 QK-norm weights per layer as linear: 1e-6 of the total)
    assert data["train_flop"] == pytest.approx(flop_per_token * TOKENS, rel=1e-5)
    # C4.3: forward of one 8,192-token sequence, head on every token = 143.789 TFLOP
    forward_8k = 8192 * (2 * LINEAR_PARAMS + 4 * HEADS * HEAD_DIM * LAYERS * 8193 / 2)
    assert forward_8k == pytest.approx(143.789e12, abs=0.0005e12)
    t = data["iteration_time_s"]
    assert data["mfu"] == pytest.approx(
        flop_per_token * BATCH_TOKENS / (t * data["gpus"] * H100_PEAK_FLOP_PER_S), rel=1e-4
    )
    # checkpoint 14 B/param at 7 GB/s; λ = n / (8,088 h); τ* = sqrt(2c/λ); L = c/τ + λτ/2 + λ·600 s
    c = 14 * N_PARAMS / 7e9
    lam = data["gpus"] / (337 * 24 * 3600)
    tau = math.sqrt(2 * c / lam)
    loss = c / tau + lam * tau / 2 + lam * 600
    ck = data["checkpoint"]
    assert (ck["write_s"], ck["interval_s"]) == (pytest.approx(c), pytest.approx(tau))
    assert ck["failure_overhead_frac"] == pytest.approx(loss)
    steps = math.ceil(TOKENS / BATCH_TOKENS)
    assert data["steps"] == steps == 23_842
    assert data["days"] == pytest.approx(steps * t * (1 + loss) / 86400)
    # ZeRO-3 states 16 B/param over 8 ranks
    assert data["memory_states_gib_per_gpu"] == pytest.approx(16 * N_PARAMS / data["gpus"] / 2**30)
    # rent: 8 GPUs × hours × $1.90 (hyperstack on-demand, prices catalog)
    assert data["total_cost_usd"] == pytest.approx(8 * 1.90 * 24 * data["days"])


def test_terminal_shows_the_terms_days_come_from() -> None:
    res = runner.invoke(app, ["train", str(EXAMPLE)])
    assert res.exit_code == 0, res.stderr
    for label in ("checkpoint.failure_overhead_frac", "run_days", "start_delay_days", "23,842"):
        assert label in res.stdout


def test_workbook_labels_carry_units_and_totals_are_formulas(tmp_path: Path) -> None:
    out = tmp_path / "t.xlsx"
    res = runner.invoke(app, ["train", str(EXAMPLE), "-o", str(out)])
    assert res.exit_code == 0, res.stderr
    data = _example_json()
    wb = load_workbook(out)
    summary = {r[0].value: (r[1].value, r[2].value) for r in wb["Summary"].iter_rows(min_row=2)}
    assert [c.value for c in wb["Summary"][1]][:3] == ["quantity", "value", "unit"]
    assert summary["memory_per_gpu_gib"][1] == "GiB (2^30 B)"
    assert summary["train_flop"][1] == "FLOP" and summary["tokens_per_s"][1] == "tokens/s"
    assert summary["total_cost_usd"] == (f"=Costs!D{len(data['cost_lines']) + 2}", "USD")  # under its column
    assert summary["failure_overhead_frac"][0] == pytest.approx(data["checkpoint"]["failure_overhead_frac"])
    iteration = wb["Iteration"]
    headers = [c.value for c in iteration[1]]
    assert headers[1] == "time per iteration (s)"
    rows = {r[0].value: r for r in iteration.iter_rows(min_row=2)}
    assert rows["dp_comm_s"][2].value is None  # overlapped: no share of the iteration
    assert rows["iteration_time_s"][1].value == "=B2+B3+B4+B5+B7"
    b = data["breakdown"]
    assert b["compute_s"] + b["bubble_s"] + b["tp_comm_s"] + b["pp_comm_s"] + b["dp_comm_exposed_s"] == (
        pytest.approx(data["iteration_time_s"])
    )
    options = [c.value for c in wb["Options"][1]]
    assert {"Finish (days)", "Total cost (USD)", "Memory per GPU (GiB)", "Iteration time (s)"} <= set(options)
    assert "cost (USD, present value)" in [c.value for c in wb["Costs"][1]]  # the header is row 1 now


def _write(tmp_path: Path, changes: dict[str, Any]) -> Path:
    data = yaml.safe_load(EXAMPLE.read_text())
    data.update(changes)
    data = {k: v for k, v in data.items() if v is not None}
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def test_buy_lines_by_hand(tmp_path: Path) -> None:
    path = _write(tmp_path, {"procurement": ["buy"], "sites": ["dc1"], "deadline_days": 120})
    res = runner.invoke(app, ["train", str(path), "--json"])
    assert res.exit_code == 0, res.stderr
    data = json.loads(res.stdout)
    lines = {c["kind"]: c for c in data["cost_lines"]}
    node = 325_000.0  # hardware.md: 8 × H100 HGX node, midpoint
    assert lines["capex"]["usd"] == pytest.approx(node)
    # resale: 50 % of the straight-line (4-year) book value after the run's one month
    assert lines["resale"]["usd"] == pytest.approx(-0.5 * node * (1 - 1 / 48))
    assert "$318,229/node" in lines["resale"]["note"]
    assert data["start_delay_days"] == pytest.approx(60.0)  # 2-month lead time
    assert data["days"] == pytest.approx(60.0 + data["run_days"])


def test_owned_running_line_reproduces_from_its_note(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        {"procurement": ["owned"], "inventory": [{"gpu": "h100_sxm", "count": 4, "site": "dc1"}],
         "hardware": {"gpus": ["h100_sxm"], "max_gpus": 8}},
    )  # fmt: skip
    res = runner.invoke(app, ["train", str(path), "--json"])
    assert res.exit_code == 0, res.stderr
    (line,) = json.loads(res.stdout)["cost_lines"]
    days = json.loads(res.stdout)["days"]
    note = line["note"]
    power = float(note.split("power $")[1].split(" ")[0])
    colocation = float(note.split("colocation $")[1].split(")")[0])
    assert "(1 + 10% operations)" in note
    assert line["usd"] == pytest.approx((power + colocation) * 1.1 * 4 * days / 30, rel=1e-3)


@pytest.mark.parametrize(
    ("changes", "fragment"),
    [
        ({"procurement": []}, "procurement: list at least one of rent, buy, owned"),
        ({"model": "qwen3_8bb"}, "s.yaml: model: unknown model 'qwen3_8bb' — did you mean qwen3_8b?"),
        ({"global_batch_tokens": 4194305}, "global_batch_tokens: 4194305 must be a multiple of seq_len_tokens"
         " 4096 — use 4194304 (1,024 sequences)"),
        ({"objective": "earliest_finish"}, "s.yaml: budget_usd: objective earliest_finish needs budget_usd"),
        ({"procurement": ["owned"]}, "s.yaml: inventory: procurement owned needs an inventory"),
    ],
)  # fmt: skip
def test_scenario_errors_name_the_field(tmp_path: Path, changes: dict[str, Any], fragment: str) -> None:
    res = runner.invoke(app, ["train", str(_write(tmp_path, changes))])
    assert res.exit_code == 2, res.output
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and fragment in lines[0], lines


@pytest.mark.parametrize(
    "args",
    [
        ["spec-decode", "--verify-ms", "0"],
        ["completion-time", "--tokens", "1e400"],
        ["training-time", "--params", "nan"],
        ["kv-quant", "--saved-mib", "-1"],
        ["buy-vs-rent", "--payg-usd-per-task", "-1"],
        ["rtt-crossover", "--rtt-s", "-1"],
    ],
)
def test_ledger_numeric_options_refuse_nonsense(args: list[str]) -> None:
    res = runner.invoke(main_app, ["ledger", *args])
    assert res.exit_code == 2, res.output
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and args[1] in lines[0] and "Traceback" not in res.stderr


def test_ledger_defaults_still_run_by_hand() -> None:
    """remote-exec's default local time is +inf (no local option); C4.7 completion table at the defaults."""
    res = runner.invoke(main_app, ["ledger", "remote-exec", "--json"])
    assert res.exit_code == 0 and json.loads(res.stdout)["local_s"] is None
    res = runner.invoke(main_app, ["ledger", "completion-time", "--json"])
    data = json.loads(res.stdout)
    assert data["finish_days"] == pytest.approx(5 + 31_790 * 52.8 * 1.0108 / 86400, abs=5e-3)  # 24.6 days


def test_listed_gpu_without_the_precision_is_said_not_dropped(tmp_path: Path) -> None:
    path = _write(
        tmp_path, {"precision": "fp8", "hardware": {"gpus": ["a100_sxm_80gb", "h100_sxm"], "max_gpus": 8}}
    )
    res = runner.invoke(app, ["train", str(path), "--json"])
    assert res.exit_code == 0, res.stderr
    data = json.loads(res.stdout)
    assert [a["gpu"] for a in data["alternatives"]] == ["h100_sxm"]
    (excluded,) = data["excluded_gpus"]
    assert excluded.startswith("a100_sxm_80gb: no fp8 peak") and "precision: bf16" in excluded
    assert "a100_sxm_80gb: no fp8 peak" in res.stderr


def test_deadline_reason_names_max_gpus_when_it_binds(tmp_path: Path) -> None:
    """C4.5-style count: ⌈F·(1 + L)/(Π·η·T)⌉ H100 for 1e11 Qwen3-8B tokens in 2 days, far above max_gpus 16."""
    path = _write(tmp_path, {"deadline_days": 2, "hardware": {"gpus": ["h100_sxm"], "max_gpus": 16}})
    res = runner.invoke(app, ["train", str(path), "--json"])
    assert res.exit_code == 3
    (reason,) = json.loads(res.stdout)["infeasibility"]
    needed = int(reason.split("needs ≥ ")[1].split(" ")[0])
    # 4.90e21 FLOP at ≤ 50 % of 989.4 TFLOP/s in 172,800 s needs at least 58 GPUs
    assert needed >= math.ceil(4.9033e21 / (0.5 * H100_PEAK_FLOP_PER_S * 2 * 86400))
    assert f"within hardware.max_gpus 16 — raise it to at least {needed}" in reason


def test_global_batch_larger_than_the_run_is_refused(tmp_path: Path) -> None:
    path = _write(tmp_path, {"global_batch_tokens": None, "global_batch_sequences": 100_000_000})
    res = runner.invoke(app, ["train", str(path)])
    assert res.exit_code == 2
    # 1e11 tokens / 4,096 tokens per sequence = 24,414,062 sequences at most
    assert "global_batch_sequences: one optimizer step of 409,600,000,000 tokens" in res.stderr
    assert "use at most 24,414,062 sequences per step" in res.stderr


def test_workbook_path_is_checked_before_the_search_and_named(tmp_path: Path) -> None:
    folder = tmp_path / "d.xlsx"
    folder.mkdir()
    res = runner.invoke(app, ["train", str(EXAMPLE), "-o", str(folder)])
    assert res.exit_code == 2 and res.stderr.startswith(f"error: -o {folder}")


@pytest.mark.parametrize("rate", ["0", "-1"])
def test_predict_load_must_be_positive(rate: str) -> None:
    res = runner.invoke(
        main_app, ["predict", "--model", "qwen3_8b", "--gpu", "h100_sxm", "--requests-per-s", rate]
    )
    assert res.exit_code == 2 and "must be above 0 requests/s" in res.stderr


def test_ledger_table_shows_missing_values_as_a_dash() -> None:
    res = runner.invoke(main_app, ["ledger", "training-time"])
    assert res.exit_code == 0
    row = next(line for line in res.stdout.splitlines() if "cards_for_deadline" in line)
    assert "—" in row and "None" not in row


def test_predict_train_inline_architecture_error_says_what_is_wrong() -> None:
    args = ["predict-train", "--layers", "2", "--hidden-size", "100", "--ffn-size", "10", "--heads", "3"]
    res = runner.invoke(app, [*args, "--gpu", "h100_sxm", "--gpus", "1"])
    assert res.exit_code == 2
    assert "hidden_size must be a multiple of heads" in res.stderr and "pydantic.dev" not in res.stderr


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["checkpoint-interval", "--checkpoint-s", "0"], "--checkpoint-s 0: checkpoint_s must be positive"),
        (["training-time", "--deadline-days", "0"], "--deadline-days 0: "),
    ],
)
def test_ledger_formula_errors_name_the_option(args: list[str], fragment: str) -> None:
    res = runner.invoke(main_app, ["ledger", *args])
    assert res.exit_code == 2 and fragment in res.stderr


def test_bought_lines_discounted_at_the_cost_of_capital_by_hand(tmp_path: Path) -> None:
    """16 H100 bought (2 nodes) for a 221-day run: 8 whole months; resale at d(8) = 1.1^(−8/12)."""
    path = _write(
        tmp_path,
        {"training_tokens": 3.0e12, "deadline_days": 400, "procurement": ["buy"], "sites": ["dc1"],
         "hardware": {"gpus": ["h100_sxm"], "max_gpus": 64},
         "economics": {"cost_of_capital_frac_per_year": 0.1}},
    )  # fmt: skip
    res = runner.invoke(app, ["train", str(path), "--json"])
    assert res.exit_code == 0, res.stderr
    data = json.loads(res.stdout)
    months = math.ceil(data["run_days"] / 30)
    nodes = data["gpus"] // 8
    lines = {c["kind"]: c for c in data["cost_lines"]}
    book = 325_000.0 * (1 - months / 48)
    assert lines["resale"]["usd"] == pytest.approx(-0.5 * book * nodes * 1.1 ** (-months / 12))
    assert f"present-value factor {1.1 ** (-months / 12):.4f}" in lines["resale"]["note"]
    # running: month m paid at its start, d(m) = 1.1^(−m/12)
    per_gpu_month = float(lines["running"]["note"].split("= $")[1].split("/GPU-month")[0])
    expected = per_gpu_month * 8 * nodes * sum(1.1 ** (-m / 12) for m in range(months))
    assert lines["running"]["usd"] == pytest.approx(expected, rel=1e-4)
    assert data["total_cost_usd"] == pytest.approx(sum(c["usd"] for c in data["cost_lines"]))


def test_buying_a_gpu_without_a_purchase_price_says_so(tmp_path: Path) -> None:
    """a10g has no purchase record in the catalog: buy-only said "no allowed site offers it with procurement
    buy" although dc1 was listed."""
    path = _write(tmp_path, {"procurement": ["buy"], "sites": ["dc1"], "hardware": {"gpus": ["a10g"]}})
    res = runner.invoke(app, ["train", str(path)])
    assert res.exit_code == 3
    assert "a10g: the catalog has no purchase price for it" in res.stdout + res.stderr
    assert "add rent to procurement" in res.stdout + res.stderr


@pytest.mark.parametrize(
    ("changes", "line"),
    [
        ({"hardware": {"gpus": []}}, "hardware.gpus: must not be empty"),
        (
            {"procurement": ["rent", "owned"], "inventory": [{"gpu": "h100_sxm", "count": 8, "site": "dc9"}]},
            "inventory[0].site: unknown site 'dc9' — did you mean dc1?",
        ),
    ],
)
def test_training_input_mistakes_name_the_field(tmp_path: Path, changes: dict[str, Any], line: str) -> None:
    """An empty GPU list was accepted (inference refuses it); an inventory site was named 'inventory[0].site[0]'."""
    res = runner.invoke(app, ["train", str(_write(tmp_path, changes))])
    assert res.exit_code == 2 and line in res.stderr
