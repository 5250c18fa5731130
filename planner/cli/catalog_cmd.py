"""``planner catalog gpus|models|formats|sites|interconnects|prices``: list or show catalog records."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from planner.cli.common import JsonFlag, JsonOut, check_output_path, emit, fail, note, run_guarded, show, text

catalog_app = typer.Typer(
    help="List or show catalog records (gpus, models, formats, sites, interconnects, prices).",
    no_args_is_help=True,
)

COLUMNS = {
    "gpus": ["id", "name", "placement", "memory_gb", "memory_bandwidth_gb_per_s", "tdp_w", "gpus_per_node"],
    "models": ["id", "name", "layers", "hidden_size", "q_heads", "kv_heads", "params_published_b", "max_context_tokens"],
    "formats": ["id", "name", "bits_per_value", "group_size_values", "compute_format", "quality_tier"],
    "sites": ["id", "name", "kind", "rtt_ms", "electricity_usd_per_kwh", "pue"],
    "interconnects": ["id", "name", "kind", "gb_per_s_per_direction", "latency_us", "as_of"],
}
RENTAL_KINDS = ("on_demand", "reserved_1y", "reserved_3y", "spot")


def _catalog() -> Any:
    from planner.catalog import default_catalog

    return run_guarded(default_catalog)


def _records(catalog: Any, kind: str) -> dict[str, Any]:
    tables: dict[str, dict[str, Any]] = {
        "gpus": catalog.accelerators,
        "models": catalog.models,
        "formats": catalog.formats,
        "sites": catalog.sites,
        "interconnects": catalog.interconnects,
    }
    return tables[kind]


def _one_record(catalog: Any, kind: str, record_id: str) -> dict[str, Any]:
    from planner.errors import CatalogError, suggest_id

    table = _records(catalog, kind)
    if record_id not in table:
        error = CatalogError(f"unknown {kind[:-1]} '{record_id}'{suggest_id(record_id, table)}")
        fail(error)
    record = table[record_id]
    payload: dict[str, Any] = record.model_dump(mode="json")
    if kind == "models":
        from planner.ledgers import architecture as arch

        payload["derived"] = {
            "params": arch.params_total(record),
            "params_active_per_token": arch.params_active_per_token(record),
            "kv_bytes_per_token_bf16": arch.kv_bytes_per_token(record),
            "attention": record.attention_kind,
        }
    return payload


def show_records(kind: str, record_id: str | None, as_json: bool, json_out: Path | None) -> None:
    """List every record of ``kind`` (a table of its key columns) or show one record field by field."""
    run_guarded(lambda: check_output_path(json_out, "--json-out"))  # not a YAML file (a catalog), not /proc
    catalog = _catalog()
    if record_id is not None:
        payload = _one_record(catalog, kind, record_id)
        if emit(payload, as_json, json_out):
            return
        t = Table(title=text(f"{kind[:-1]} {record_id}"))
        t.add_column("field")
        t.add_column("value")
        for key, value in payload.items():
            t.add_row(key, text(json.dumps(value, ensure_ascii=False) if isinstance(value, dict | list) else value))
        show(t)
        return
    table = _records(catalog, kind)
    if emit([r.model_dump(mode="json") for r in table.values()], as_json, json_out):
        return
    t = Table(title=f"catalog {kind} ({len(table)})")
    records = list(table.values())
    for c in COLUMNS[kind]:
        values = [getattr(r, c) for r in records]
        numeric = any(_is_number(v) for v in values) and all(_is_number(v) or v is None for v in values)
        t.add_column(c, justify="right" if numeric else "left")
    for r in records:
        t.add_row(*(_cell(getattr(r, c)) for c in COLUMNS[kind]))
    show(t)


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _cell(value: object) -> str:
    """A table cell: a whole float without its '.0' (80.0 GB → 80), thousands separated, None as '—', others
    as text."""
    if value is None:
        return "—"
    if _is_number(value):
        number = float(value)  # type: ignore[arg-type]
        return f"{number:,.0f}" if number.is_integer() else f"{number:,.6g}"
    return text(value)


def price_rows(catalog: Any, gpu: str | None) -> list[dict[str, Any]]:
    """One row per (GPU, provider, regions): the newest quote of each rental kind in USD per GPU-hour and
    the instance sizes sold (``gpus_per_instance``: GPUs per rented instance; a quote that lists none is
    sold by the whole node, ``gpus_per_node`` of the accelerator).

    Regions are the quote's sites, or every catalog cloud site the provider serves ("any" when none lists it).
    """
    rows: dict[tuple[str, str, tuple[str, ...]], dict[str, Any]] = {}
    for p in catalog.prices:
        if gpu is not None and p.gpu != gpu:
            continue
        regions = tuple(p.sites) or tuple(
            s.id for s in catalog.sites.values() if s.kind == "cloud" and p.provider in s.providers
        )
        row = rows.setdefault(
            (p.gpu, p.provider, regions),
            {"gpu": p.gpu, "provider": p.provider, "regions": list(regions) or ["any"], "as_of": p.as_of,
             "gpus_per_instance": []},
        )
        node = catalog.accelerators[p.gpu].gpus_per_node if p.gpu in catalog.accelerators else 1
        sizes = set(row["gpus_per_instance"]) | set(p.gpus_per_instance or (node,))
        row["gpus_per_instance"] = sorted(sizes)
        key = f"{p.kind}_usd_per_gpu_hour"
        if key not in row or str(p.as_of) >= str(row[f"{p.kind}_as_of"]):
            row[key] = p.usd_per_gpu_hour
            row[f"{p.kind}_as_of"] = p.as_of
            row["as_of"] = max(str(row["as_of"]), str(p.as_of))
    return [rows[k] for k in sorted(rows)]


def _money(value: float | None) -> str:
    return "—" if value is None else f"${value:,.2f}"


@catalog_app.command("prices")
def catalog_prices(
    gpu: Annotated[str | None, typer.Argument(help="Only this accelerator id (e.g. h100_sxm).")] = None,
    as_json: JsonFlag = False,
    json_out: JsonOut = None,
) -> None:
    """Rental prices per GPU, provider and region (USD per GPU-hour, newest quote per kind), like `sky show-gpus`."""
    from planner.errors import CatalogError, suggest_id

    run_guarded(lambda: check_output_path(json_out, "--json-out"))
    catalog = _catalog()
    if gpu is not None and gpu not in catalog.accelerators:
        providers = sorted({p.provider for p in catalog.prices})
        if gpu in providers or gpu.lower() in providers:  # prices are looked up by GPU; providers are a column
            hint = f" — '{gpu}' is a provider: give a GPU id (planner catalog prices h100_sxm), or none for every GPU"
        else:
            hint = suggest_id(gpu, catalog.accelerators)
        error = CatalogError(f"unknown gpu '{gpu}'{hint}")
        fail(error)
    rows = price_rows(catalog, gpu)
    if emit(rows, as_json, json_out):
        return
    if gpu is not None and not rows:  # an edge device or a card no provider rents: say so, not an empty table
        accelerator = catalog.accelerators[gpu]
        bought = f"; `planner catalog gpus {gpu}` shows its purchase price" if accelerator.purchase else ""
        note(f"{gpu}: no provider rents it (no quote in catalogs/prices.yaml; {accelerator.placement} placement){bought}")
        return
    t = Table(title=f"rental prices, USD per GPU-hour ({len(rows)} rows)")
    for c in ("gpu", "provider", "regions", "GPUs per instance", *RENTAL_KINDS, "as of"):
        t.add_column(c, justify="right" if c in RENTAL_KINDS else "left")
    for r in rows:
        kinds = (_money(r.get(f"{k}_usd_per_gpu_hour")) for k in RENTAL_KINDS)
        t.add_row(
            text(r["gpu"]), text(r["provider"]), text(", ".join(r["regions"])),
            text(", ".join(str(n) for n in r["gpus_per_instance"])), *kinds, text(r["as_of"]),
        )
    show(t)


IdArg = Annotated[str | None, typer.Argument(help="Record id to show (omit to list all).")]


@catalog_app.command("gpus")
def catalog_gpus(record_id: IdArg = None, as_json: JsonFlag = False, json_out: JsonOut = None) -> None:
    """List accelerators, or show one (e.g. `planner catalog gpus h100_sxm`)."""
    show_records("gpus", record_id, as_json, json_out)


@catalog_app.command("models")
def catalog_models(record_id: IdArg = None, as_json: JsonFlag = False, json_out: JsonOut = None) -> None:
    """List models, or show one with its derived parameter and KV figures."""
    show_records("models", record_id, as_json, json_out)


@catalog_app.command("formats")
def catalog_formats(record_id: IdArg = None, as_json: JsonFlag = False, json_out: JsonOut = None) -> None:
    """List numeric formats (bytes per value include group scales)."""
    show_records("formats", record_id, as_json, json_out)


@catalog_app.command("sites")
def catalog_sites(record_id: IdArg = None, as_json: JsonFlag = False, json_out: JsonOut = None) -> None:
    """List sites (cloud regions, data centers, edge locations)."""
    show_records("sites", record_id, as_json, json_out)


@catalog_app.command("interconnects")
def catalog_interconnects(
    record_id: IdArg = None, as_json: JsonFlag = False, json_out: JsonOut = None
) -> None:
    """List link technologies (NVLink, PCIe, InfiniBand, ...): GB/s per direction and start-up latency."""
    show_records("interconnects", record_id, as_json, json_out)
