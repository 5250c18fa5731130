"""`planner sweep --resume` after the catalog changed: the resume file named only the scenario, so rows solved
with last week's prices were read back beside rows solved with today's, one sweep mixing two catalogs
silently. The header now carries the catalog's digest (with the planner version); another one is refused
(exit 2, one line, the file untouched) and an unchanged catalog still resumes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from planner.catalog import Catalog
from planner.errors import InputError
from planner.sweep import LocalEngine, run_sweep
from planner.sweep.resume import catalog_digest
from tests.sweep.helpers import chat_sweep

VARY = ["economics.rent_price_scale=1", "workloads.chat.slo.tpot_ms=50"]


def test_resume_refuses_rows_of_another_catalog(catalog: Catalog, tmp_path: Path) -> None:
    log = tmp_path / "rows.jsonl"
    first = run_sweep(catalog, chat_sweep(catalog, VARY), LocalEngine(1), resume=log)
    header = json.loads(log.read_text().splitlines()[0])
    assert header["catalog_sha256"] == catalog_digest(catalog)
    again = run_sweep(catalog, chat_sweep(catalog, VARY), LocalEngine(1), resume=log)
    assert again.resumed == 1 and again.rows[0].total_cost_usd == first.rows[0].total_cost_usd

    cheaper = [p.model_copy(update={"usd_per_gpu_hour": p.usd_per_gpu_hour / 2}) for p in catalog.prices]
    repriced = catalog.model_copy(update={"prices": tuple(cheaper)})
    assert catalog_digest(repriced) != catalog_digest(catalog)
    before = log.read_bytes()
    with pytest.raises(InputError, match="its rows were solved with another catalog or planner version"):
        run_sweep(repriced, chat_sweep(repriced, VARY), LocalEngine(1), resume=log)
    assert log.read_bytes() == before


def test_a_header_without_the_catalog_digest_is_refused(catalog: Catalog, tmp_path: Path) -> None:
    """A file of an older planner says nothing of its catalog: its rows cannot be trusted to match."""
    log = tmp_path / "rows.jsonl"
    run_sweep(catalog, chat_sweep(catalog, VARY), LocalEngine(1), resume=log)
    lines = log.read_text().splitlines()
    header = json.loads(lines[0])
    del header["catalog_sha256"]
    log.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    with pytest.raises(InputError, match="another catalog or planner version"):
        run_sweep(catalog, chat_sweep(catalog, VARY), LocalEngine(1), resume=log)
