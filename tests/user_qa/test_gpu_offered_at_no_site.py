"""A workload whose GPU types are offered at none of its sites is told so, not a configuration's fault.

examples/chat_70b_cloud with `hardware.gpus: [apple_m3_ultra]` said "weight format fp8 is not supported natively
on apple_m3_ultra" and "allow a TP/PP degree or GPU that the reason above permits": the most common row reason,
while bf16 and int4 fail too, because no apple_m3_ultra is to be had at us_east or us_west (helper-79's finding)."""

from __future__ import annotations

from pathlib import Path

import yaml
from typer.testing import CliRunner

from planner.cli.main import app

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "chat_70b_cloud" / "scenario.yaml"


def _plan(tmp_path: Path, gpus: list[str], tpot_ms: float = 50.0) -> tuple[int, str]:
    data = yaml.safe_load(EXAMPLE.read_text(encoding="utf-8"))
    data["hardware"]["gpus"] = gpus
    data["workloads"][0]["slo"]["tpot_ms"] = tpot_ms
    path = tmp_path / "scenario.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    result = CliRunner().invoke(app, ["plan", str(path)])
    return result.exit_code, " ".join(result.stderr.split())


def test_no_site_offers_the_gpu(tmp_path: Path) -> None:
    code, said = _plan(tmp_path, ["apple_m3_ultra"])
    assert code == 3
    assert said.endswith(
        "chat: no allowed (model, format, GPU, TP, PP, site) fits in memory or can run: apple_m3_ultra not available "
        "at us_east; apple_m3_ultra not available at us_west smallest relaxation: allow a GPU type the site offers "
        "(sites[].gpus_available), or another site"
    )
    assert "fp8 is not supported" not in said


def test_a_gpu_offered_somewhere_keeps_the_configuration_reason(tmp_path: Path) -> None:
    """With an L4 (rented at us_east) beside it and a 5 ms TPOT, the cause is again what no configuration can do."""
    code, said = _plan(tmp_path, ["apple_m3_ultra", "l4"], tpot_ms=5.0)
    assert code == 3
    assert "not available at" not in said
    assert "lowest TPOT for llama_3_1_70b on any allowed GPU is" in said
