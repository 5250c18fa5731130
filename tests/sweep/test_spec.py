"""--vary parsing, dotted paths, grid/zip variants and validation before solving (no solver runs)."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from planner.catalog import Catalog
from planner.errors import InputError, ScenarioError
from planner.sweep.spec import Axis, format_value, parse_axis, parse_value, variants
from tests.sweep.helpers import chat_sweep


def test_values_are_read_as_yaml_and_plus_makes_a_list() -> None:
    assert parse_value("8") == 8 and isinstance(parse_value("8"), int)
    assert parse_value("0.5") == 0.5
    assert parse_value("1e-3") == 0.001
    assert parse_value("h100_sxm") == "h100_sxm"
    assert parse_value("h100_sxm+h200_sxm") == ["h100_sxm", "h200_sxm"]
    assert parse_value("+2") == 2  # a signed number, not a list
    assert parse_value("true") is True and parse_value("False") is False
    # YAML 1.1 reads off/on/yes/no as booleans; a sweep value keeps the word (disaggregation=off is the mode)
    assert parse_value("off") == "off" and parse_value("on") == "on" and parse_value("yes") == "yes"
    assert parse_axis("workloads.chat.disaggregation=off,auto") == Axis("workloads.chat.disaggregation", ("off", "auto"))
    assert format_value(["h100_sxm", "h200_sxm"]) == "h100_sxm+h200_sxm"
    assert parse_axis("hardware.gpus=h100_sxm+h200_sxm,b200") == Axis(
        "hardware.gpus", (["h100_sxm", "h200_sxm"], "b200")
    )
    assert parse_value("1:30") == "1:30"  # not YAML 1.1's base-60 number 90
    # an explicit empty list (whole GPUs only), shown as written
    assert parse_axis("hardware.gpu_share_fracs=[],0.5") == Axis("hardware.gpu_share_fracs", ([], 0.5))
    assert format_value([]) == "[]"


def test_grid_is_the_product_last_axis_fastest_and_zip_pairs() -> None:
    a, b = Axis("x", (1, 2, 3)), Axis("y", ("p", "q"))
    grid = variants([a, b], "grid")
    assert len(grid) == 6
    assert [v.values for v in grid[:3]] == [
        (("x", 1), ("y", "p")),
        (("x", 1), ("y", "q")),
        (("x", 2), ("y", "p")),
    ]
    assert [v.index for v in grid] == list(range(6))
    zipped = variants([a, Axis("y", ("p", "q", "r"))], "zip")
    assert [v.key for v in zipped] == ["x=1; y=p", "x=2; y=q", "x=3; y=r"]
    with pytest.raises(InputError, match="same number of values"):
        variants([a, b], "zip")
    with pytest.raises(InputError, match="given twice"):
        variants([a, a], "grid")


def test_paths_address_workloads_by_name_and_set_values(catalog: Catalog) -> None:
    sweep = chat_sweep(
        catalog,
        [
            "workloads.chat.slo.tpot_ms=30",
            "hardware.gpus=h100_sxm+h200_sxm",
            "economics.purchase_price_scale=2",
        ],
    )
    data = sweep.variant_data(sweep.variants[0])
    assert data["workloads"][0]["slo"]["tpot_ms"] == 30
    assert data["hardware"]["gpus"] == ["h100_sxm", "h200_sxm"]
    assert data["economics"]["purchase_price_scale"] == 2
    assert sweep.base["workloads"][0]["slo"]["tpot_ms"] == 50  # the base is not modified


def test_a_catalog_site_the_scenario_does_not_override_gets_an_override_record(catalog: Catalog) -> None:
    """``sites.us_east.rtt_ms`` with no ``sites:`` entry for us_east varies the catalog site: each variant carries
    an override record {name: us_east, rtt_ms: V}; two axes on the same site share one record."""
    sweep = chat_sweep(catalog, ["sites.us_east.rtt_ms=5,200", "sites.us_east.pue=1.2"])
    assert sweep.base["sites"] == [{"name": "us_east"}]
    assert [sweep.variant_data(v)["sites"] for v in sweep.variants] == [
        [{"name": "us_east", "rtt_ms": 5, "pue": 1.2}], [{"name": "us_east", "rtt_ms": 200, "pue": 1.2}]
    ]


@pytest.mark.parametrize(
    ("vary", "message"),
    [
        ("economics.rent_price_scal=1", "did you mean rent_price_scale"),
        ("workloads.chta.requests_per_s=1", "no workload named 'chta' — did you mean chat"),
        ("workloads.chat.slo.tpot=30", "has no field 'tpot' — did you mean tpot_ms"),
        ("workloads.chat.requests_per_s.x=3", "is a value, it has no field 'x'"),
        ("hardware.gpus=h100sxm+h200_sxm", "unknown gpu 'h100sxm' — did you mean h100_sxm"),
        ("economics.rent_price_scale=1,-1", "economics.rent_price_scale"),
        ("workloads.chat.models=llama_70b", "unknown model 'llama_70b'"),
        ("economics.rent_price_scale", "expected PATH=V1,V2"),
        ("sites.mars_1.rtt_ms=5", "no site named 'mars_1' — valid values: ap_northeast, "),
        # an internal error (YAML ParserError, exit 4) where '[4' and '8]' were read as YAML
        ("workloads.chat.requests_per_s=[4, 8]", "the values are listed without brackets — write --vary "
         "workloads.chat.requests_per_s=4,8 (a+b is one list value, [] the empty list)"),
        ("workloads.chat.requests_per_s=@4", "requests_per_s: expected a number (got '@4')"),  # ScannerError, exit 4
        ("workloads.chat.requests_per_s=*x", "requests_per_s: expected a number (got '*x')"),  # ComposerError, exit 4
        # was "the scenario has no field 'workloads[0]' — did you mean workloads?"
        ("workloads[0].slo.ttft_ms=100", "a workloads entry is addressed by its name, not its position — write "
         "workloads.chat.slo.ttft_ms"),
    ],
)  # fmt: skip
def test_bad_paths_and_values_fail_before_any_solve(catalog: Catalog, vary: str, message: str) -> None:
    with pytest.raises(InputError) as info:
        chat_sweep(catalog, [vary])
    assert message in str(info.value)
    assert "\n" not in str(info.value)


def test_a_bad_value_in_a_later_variant_names_that_variant(catalog: Catalog) -> None:
    with pytest.raises(ScenarioError, match=r"with workloads.chat.requests_per_s=0; .*requests_per_s"):
        chat_sweep(catalog, ["workloads.chat.requests_per_s=4,0", "economics.rent_price_scale=1"])


@given(st.lists(st.lists(st.integers(-5, 50), min_size=1, max_size=4, unique=True), min_size=1, max_size=3))
def test_grid_has_every_combination_once(value_lists: list[list[int]]) -> None:
    axes = [Axis(f"k{i}", tuple(vs)) for i, vs in enumerate(value_lists)]
    grid = variants(axes, "grid")
    assert len(grid) == math.prod(len(vs) for vs in value_lists)
    assert len({v.key for v in grid}) == len(grid)
    assert {tuple(x for _, x in v.values) for v in grid} == set(itertools.product(*value_lists))


def test_an_empty_value_between_commas_is_refused() -> None:
    # '4,,8' swept 4 and 8 without a word about the empty one (QA)
    with pytest.raises(InputError, match=r"an empty value between commas — write each value once, e\.g\. --vary "
                       r"workloads\.chat\.requests_per_s=4,8"):
        parse_axis("workloads.chat.requests_per_s=4,,8")
    with pytest.raises(InputError, match="an empty value between commas"):
        parse_axis("economics.rent_price_scale=0.5,1,")
    assert parse_axis("economics.rent_price_scale=0.5") == Axis("economics.rent_price_scale", (0.5,))
