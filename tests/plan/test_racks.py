"""Scale-up domains (issue 13 item 3): TP inside the NVLink domain, GB200 NVL72 by the rack, sync ratio limit."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

from planner import performance as perf
from planner.candidates import build_candidates
from planner.catalog import Catalog
from planner.plan import plan
from planner.scenario import Scenario, load_scenario

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples/nvl72_rack/scenario.yaml"


def _example(catalog: Catalog, **update: object) -> Scenario:
    scenario = load_scenario(EXAMPLE, catalog)
    hardware = update.pop("hardware", None)
    if hardware is not None:
        update["hardware"] = scenario.hardware.model_copy(update=hardware)
    return scenario.model_copy(update=update)


@pytest.mark.parametrize(
    ("gpu", "tp", "allowed"),
    [
        ("gb200_nvl72", 16, True),
        ("gb200_nvl72", 32, True),
        ("gb200_nvl72", 72, True),
        ("gb200", 4, True),  # a tray alone: its own 4 GPUs
        ("gb200", 8, False),  # trays bought one by one are not one NVLink domain
        ("h100_sxm", 8, True),
        ("h100_sxm", 16, False),  # would need TP over InfiniBand
        ("l40s", 8, True),  # no NVLink: the node's PCIe is the domain
        ("l40s", 16, False),
    ],
)
def test_tp_stays_inside_the_nvlink_domain(catalog: Catalog, gpu: str, tp: int, allowed: bool) -> None:
    acc = catalog.gpu(gpu)
    if allowed:
        links = perf.group_links(catalog, acc, tp=tp, pp=2)
        assert links.tp is not None and links.tp.kind in ("scale_up", "host")
        if gpu == "gb200_nvl72":
            assert links.tp.id == "nvlink5" and links.pp is not None
            assert links.pp.id == ("nvlink5" if 2 * tp <= 72 else "ib_ndr")  # PP2 stays in the rack if it fits
    else:
        # the domain as the GPU has it: NVLink, or the node where the GPUs have no scale-up link (l40s)
        domain = "one l40s node (8 GPUs, no scale-up link)" if gpu == "l40s" else "NVLink domain"
        with pytest.raises(perf.UnsupportedDeployment, match=re.escape(domain)):
            perf.group_links(catalog, acc, tp=tp, pp=1)


def test_pp_may_cross_racks_over_infiniband(catalog: Catalog) -> None:
    links = perf.group_links(catalog, catalog.gpu("gb200_nvl72"), tp=72, pp=2)
    assert links.tp is not None and links.tp.id == "nvlink5"
    assert links.pp is not None and links.pp.id == "ib_ndr"
    links = perf.group_links(catalog, catalog.gpu("h100_sxm"), tp=8, pp=2)
    assert links.pp is not None and links.pp.id == "ib_ndr"


def test_the_rack_is_the_unit_of_supply_with_its_power(catalog: Catalog) -> None:
    rack = catalog.gpu("gb200_nvl72")
    assert rack.gpus_per_node == rack.scale_up_domain_gpus == 72
    # 127.5 kW (midpoint of the sourced 120-135 kW) / 72 slots = 1,771 W
    assert rack.tdp_w * rack.gpus_per_node / 1e3 == pytest.approx(127.5, abs=0.1)
    assert rack.purchase is not None and rack.purchase.usd_per_node == 18 * 180_000


def test_a_405b_bf16_model_is_planned_on_nvl72_racks(catalog: Catalog) -> None:
    """8 × H100 cannot hold 810 GB and a 4-GPU tray may not run TP8 across trays: only the rack can."""
    scenario = _example(catalog)
    result = plan(catalog, scenario, with_alternatives=False)
    assert result.status == "optimal"
    assert {d.gpu for d in result.deployments} == {"gb200_nvl72"}
    assert all(d.tp >= 8 and d.sync_ratio <= scenario.max_sync_ratio for d in result.deployments)
    assert result.supply and all(s.unit_gpus == 72 and s.gpus % 72 == 0 for s in result.supply)


def test_tp16_replicas_pack_four_to_a_rack(catalog: Catalog) -> None:
    """TP16 does not divide 72: each replica holds 72/⌊72/16⌋ = 18 GPUs, so R replicas need ⌈R/4⌉ racks."""
    scenario = _example(catalog, max_sync_ratio=1.0, hardware={"gpus": ["gb200_nvl72"], "tp": [16]})
    result = plan(catalog, scenario, with_alternatives=False)
    replicas = sum(d.replicas for d in result.deployments)
    assert {d.tp for d in result.deployments} == {16}
    assert sum(s.gpus for s in result.supply) == 72 * math.ceil(replicas / 4)


def test_max_sync_ratio_refuses_candidates_with_the_reason(catalog: Catalog) -> None:
    loose = build_candidates(catalog, _example(catalog, max_sync_ratio=1.0))
    default = build_candidates(catalog, _example(catalog))
    lc, dc = loose.candidates.set_index("cand"), default.candidates.set_index("cand")
    rack = lc[(lc["gpu"] == "gb200_nvl72") & lc["feasible"]]
    assert set(rack[rack["role"] == "colocated"]["tp"]) >= {8, 16, 32}  # allowed inside the rack when loose
    for k in rack.index:
        best = loose.points[loose.points["cand"] == k]["sync_ratio"].min()
        kept = default.points[default.points["cand"] == k]
        # the limit drops exactly the points above it; the rest are untouched
        assert (kept["sync_ratio"] <= 0.30 + 1e-12).all()
        expected = loose.points[(loose.points["cand"] == k) & (loose.points["sync_ratio"] <= 0.30 + 1e-12)]
        assert kept["batch"].tolist() == expected["batch"].tolist()
        if best > 0.30:
            assert not dc.loc[k, "feasible"]
            assert dc.loc[k, "reason"].startswith(f"sync ratio {best:.2f} > 0.30")
    # the workload-level limit overrides the scenario's
    scenario = _example(catalog, max_sync_ratio=1.0)
    assert build_candidates(catalog, scenario.model_copy(update={"max_sync_ratio": 0.30})).points[
        "sync_ratio"
    ].max() <= 0.30 + 1e-12
    tight = scenario.model_copy(
        update={"workloads": [scenario.workloads[0].model_copy(update={"max_sync_ratio": 0.30})]}
    )
    assert build_candidates(catalog, tight).points["sync_ratio"].max() <= 0.30 + 1e-12


def test_max_sync_ratio_binds_only_where_it_should(catalog: Catalog) -> None:
    """Loose (1.0) and default (0.30) give the same cost here (TP8 at 0.18 is cheapest); 0.10 leaves no
    candidate, and the answer names the sync ratio and the relaxation."""
    loose = plan(catalog, _example(catalog, max_sync_ratio=1.0), with_alternatives=False)
    default = plan(catalog, _example(catalog), with_alternatives=False)
    assert default.total_cost_usd == pytest.approx(loose.total_cost_usd, rel=1e-9)
    tight = plan(catalog, _example(catalog, max_sync_ratio=0.10), with_alternatives=False)
    assert tight.status == "infeasible"
    (why,) = tight.infeasibility
    assert why.requirement == "sync_ratio"
    assert "fits as gb200_nvl72 TP8xPP1 bf16 at us_east but sync ratio 0.16 > 0.10" in why.message
    assert why.relaxation == "raise chat_405b.max_sync_ratio to 0.17"


def test_alternatives_say_why_a_node_cannot_hold_the_model(catalog: Catalog) -> None:
    """The H100 and GB200-tray alternatives lose because TP may not leave their NVLink domain."""
    from planner.optimize.explain_slo import closest_miss

    table = build_candidates(catalog, _example(catalog))
    scenario = _example(catalog)
    rows = table.candidates[table.candidates["gpu"] == "h100_sxm"]
    why = closest_miss(rows, scenario.workloads[0].slo)
    assert why.startswith("does not fit in memory at any TP inside the NVLink domain")
    assert "TP16 leaves the 8-GPU NVLink domain of h100_sxm" in why


def test_an_infeasible_plan_names_why_no_configuration_can_run(catalog: Catalog) -> None:
    """H100 only at TP16: every configuration leaves the NVLink domain, so no candidate (and no PD pool) is
    built; the explanation quotes the candidates' reason instead of "no candidates"."""
    scenario = _example(catalog, hardware={"gpus": ["h100_sxm"], "tp": [16]})
    result = plan(catalog, scenario, with_alternatives=False)
    assert result.status == "infeasible"
    (why,) = result.infeasibility
    assert "no candidates" not in why.message
    assert "TP16 leaves the 8-GPU NVLink domain of h100_sxm" in why.message
    assert "larger TP" not in why.relaxation  # a larger TP leaves the domain further


def test_pools_carry_the_sync_ratio_of_their_own_step(catalog: Catalog) -> None:
    """A prefill pool replica is measured on its prefill step, a decode pool replica on its decode step
    (planner/performance/sync.py): TP16 in the rack exposes 0.26 of a prefill step — kept under 0.30 —
    while the same configuration co-located (decode-bound steps) is refused."""
    table = build_candidates(catalog, _example(catalog))
    c, pts = table.candidates.set_index("cand"), table.points
    tp16 = c[(c["gpu"] == "gb200_nvl72") & (c["tp"] == 16)]
    by_role = {role: tp16[tp16["role"] == role].iloc[0] for role in ("colocated", "prefill", "decode")}
    assert not by_role["colocated"]["feasible"] and by_role["colocated"]["sync_ratio"] > 0.30
    prefill = by_role["prefill"]
    assert prefill["feasible"] and 0.2 < prefill["sync_ratio"] <= 0.30
    assert 0.0 < pts[pts["cand"] == prefill.name]["sync_ratio"].max() <= 0.30 + 1e-12
    decode = by_role["decode"]
    assert not decode["feasible"] and decode["reason"].startswith("sync ratio")
    assert "decode step" in decode["reason"]
    pools = c[(c["role"] != "colocated") & (c["tp"] > 1) & c["feasible"]]
    assert (pts[pts["cand"].isin(pools.index)]["sync_ratio"] > 0).all()  # TP > 1 always communicates
