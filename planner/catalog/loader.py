"""Load ``catalogs/*.yaml`` into a validated, cross-checked :class:`Catalog`.

Errors name the file, the field path and a valid alternative, e.g.
``catalogs/prices.yaml: prices[3].gpu: unknown gpu 'h100sxm' — did you mean h100_sxm?``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from planner import inputs, validation_messages
from planner.catalog.calibration_schema import CalibrationFamily
from planner.catalog.engine_settings import EngineKeyError, parse_engine_key
from planner.catalog.engine_settings import resolve as resolve_engine
from planner.catalog.schema import (
    Accelerator,
    Engine,
    Interconnect,
    Model,
    NumericFormat,
    RentalPrice,
    Site,
)
from planner.errors import CatalogError, did_you_mean

DEFAULT_CATALOG_DIR = Path(__file__).resolve().parents[2] / "catalogs"

# file name -> (top-level key, record type)
CATALOG_FILES: dict[str, tuple[str, type[BaseModel]]] = {
    "formats.yaml": ("formats", NumericFormat),
    "interconnects.yaml": ("interconnects", Interconnect),
    "accelerators.yaml": ("accelerators", Accelerator),
    "models.yaml": ("models", Model),
    "sites.yaml": ("sites", Site),
    "prices.yaml": ("prices", RentalPrice),
    "calibration.yaml": ("calibration", CalibrationFamily),
    "engines.yaml": ("engines", Engine),
}

R = TypeVar("R", bound=BaseModel)

MAX_CATALOG_ROWS = 5000
"""Most records in one catalog file (the bundled files hold under 100 each)."""


class Catalog(BaseModel):
    """All catalog records, keyed by id (prices and calibration as lists)."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    formats: dict[str, NumericFormat]
    interconnects: dict[str, Interconnect]
    accelerators: dict[str, Accelerator]
    models: dict[str, Model]
    sites: dict[str, Site]
    prices: tuple[RentalPrice, ...]
    calibration: dict[str, CalibrationFamily]
    engines: dict[str, Engine] = {}

    def gpu(self, gpu_id: str) -> Accelerator:
        """The accelerator ``gpu_id``; CatalogError with a suggestion if unknown."""
        return _lookup(self.accelerators, gpu_id, "gpu")

    def model(self, model_id: str) -> Model:
        """The model ``model_id``; CatalogError with a suggestion if unknown."""
        return _lookup(self.models, model_id, "model")

    def format(self, format_id: str) -> NumericFormat:
        """The numeric format ``format_id``; CatalogError with a suggestion if unknown."""
        return _lookup(self.formats, format_id, "format")

    def kv_format_refusal(self, format_id: str) -> str:
        """Why ``format_id`` cannot be a KV-cache format, naming the ones that can (weight-only formats such as
        int4 or mxfp4 store no activations)."""
        usable = ", ".join(sorted(f for f, fmt in self.formats.items() if fmt.kv_cache))
        return f"format {format_id} cannot hold the KV cache — KV formats: {usable}"

    def site(self, site_id: str) -> Site:
        """The site ``site_id``; CatalogError with a suggestion if unknown."""
        return _lookup(self.sites, site_id, "site")

    def engine(self, engine_id: str) -> Engine:
        """The serving engine ``engine_id``: an id of catalogs/engines.yaml, or a key ``ID[field=value,...]``
        with a workload's settings (planner.catalog.engine_settings); CatalogError with a suggestion if
        unknown."""
        try:
            base_id, settings = parse_engine_key(engine_id)
        except EngineKeyError as exc:
            raise CatalogError(str(exc)) from None
        return resolve_engine(self, engine_id, _lookup(self.engines, base_id, "engine"), settings)

    def interconnect(self, link_id: str) -> Interconnect:
        """The interconnect ``link_id``; CatalogError with a suggestion if unknown."""
        return _lookup(self.interconnects, link_id, "interconnect")

    def rental_prices(self, gpu_id: str) -> list[RentalPrice]:
        """Every rental quote for ``gpu_id``."""
        return [p for p in self.prices if p.gpu == gpu_id]


def _lookup(table: Mapping[str, R], key: str, what: str) -> R:
    try:
        return table[key]
    except KeyError:
        raise CatalogError(f"unknown {what} '{key}'{did_you_mean(key, table)}") from None


def format_validation_error(
    path: str, err: ValidationError, prefix: str = "", model: type[BaseModel] | None = None
) -> str:
    """One line: ``file: field.path: problem (got value) — alternative`` (see :mod:`planner.validation_messages`)."""
    return validation_messages.format_validation_error(path, err, prefix=prefix, model=model)


def _read_yaml(path: Path) -> Any:
    return inputs.load_yaml_file(path, CatalogError, what="catalog", keep_parsed=True)


def _parse_records(path: Path, key: str, record_type: type[R]) -> list[R]:
    data = _read_yaml(path)
    if not isinstance(data, dict) or key not in data or not isinstance(data[key], list):
        raise CatalogError(f"{path}: expected a top-level '{key}:' list")
    extra = set(data) - {key}
    if extra:
        raise CatalogError(f"{path}: unexpected top-level key(s) {sorted(extra)}; only '{key}' is allowed")
    if len(data[key]) > MAX_CATALOG_ROWS:
        raise CatalogError(
            f"{path}: {key}: {len(data[key]):,} records — a catalog file holds at most {MAX_CATALOG_ROWS:,}"
        )
    records: list[R] = []
    for i, raw in enumerate(data[key]):
        try:
            records.append(record_type.model_validate(raw))
        except ValidationError as err:
            raise CatalogError(
                format_validation_error(str(path), err, prefix=f"{key}[{i}]", model=record_type)
            ) from None
    return records


def _by_id(path: Path, key: str, records: Iterable[Any], id_attr: str = "id") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for i, rec in enumerate(records):
        rid = getattr(rec, id_attr)
        if rid in out:
            raise CatalogError(f"{path}: {key}[{i}].{id_attr}: duplicate id '{rid}'")
        out[rid] = rec
    return out


def _check_ref(path: Path, loc: str, value: str | None, table: Mapping[str, Any], what: str) -> None:
    if value is not None and value not in table:
        raise CatalogError(f"{path}: {loc}: unknown {what} '{value}'{did_you_mean(value, table)}")


def validate_references(catalog: Catalog, directory: Path) -> None:
    """Cross-record checks: every id a record names exists (with a 'did you mean' suggestion)."""
    acc_path = directory / "accelerators.yaml"
    for i, acc in enumerate(catalog.accelerators.values()):
        loc = f"accelerators[{i}]"
        _check_ref(acc_path, f"{loc}.scale_up", acc.scale_up, catalog.interconnects, "interconnect")
        _check_ref(acc_path, f"{loc}.host_link", acc.host_link, catalog.interconnects, "interconnect")
        _check_ref(acc_path, f"{loc}.scale_out", acc.scale_out, catalog.interconnects, "interconnect")
        for j, fmt_id in enumerate(acc.native_formats):
            _check_ref(acc_path, f"{loc}.native_formats[{j}]", fmt_id, catalog.formats, "format")
        if acc.family not in catalog.calibration:
            raise CatalogError(
                f"{acc_path}: {loc}.family: no calibration for family '{acc.family}'"
                f"{did_you_mean(acc.family, catalog.calibration)}"
            )
    fmt_path = directory / "formats.yaml"
    for i, fmt in enumerate(catalog.formats.values()):
        _check_ref(fmt_path, f"formats[{i}].high_precision", fmt.high_precision, catalog.formats, "format")
    model_path = directory / "models.yaml"
    for i, model in enumerate(catalog.models.values()):
        _check_ref(model_path, f"models[{i}].native_format", model.native_format, catalog.formats, "format")
    site_path = directory / "sites.yaml"
    for i, site in enumerate(catalog.sites.values()):
        for j, gpu in enumerate(site.gpus_available or ()):
            _check_ref(site_path, f"sites[{i}].gpus_available[{j}]", gpu, catalog.accelerators, "gpu")
        for gpu in site.devices:
            _check_ref(site_path, f"sites[{i}].devices", gpu, catalog.accelerators, "gpu")
    price_path = directory / "prices.yaml"
    for i, price in enumerate(catalog.prices):
        _check_ref(price_path, f"prices[{i}].gpu", price.gpu, catalog.accelerators, "gpu")
        for j, site_id in enumerate(price.sites):
            _check_ref(price_path, f"prices[{i}].sites[{j}]", site_id, catalog.sites, "site")
        node = catalog.accelerators[price.gpu].gpus_per_node
        for j, size in enumerate(price.gpus_per_instance):
            if node % size:
                raise CatalogError(
                    f"{price_path}: prices[{i}].gpus_per_instance[{j}]: {size} GPUs does not divide the "
                    f"{node} GPUs per {price.gpu} node (use one of "
                    f"{', '.join(str(d) for d in range(1, node + 1) if node % d == 0)})"
                )


def load_catalog(directory: Path | str | None = None) -> Catalog:
    """Load and validate every catalog file in ``directory`` (default: the bundled ``catalogs/``)."""
    root = Path(directory) if directory is not None else DEFAULT_CATALOG_DIR
    parsed: dict[str, Any] = {}
    for name, (key, record_type) in CATALOG_FILES.items():
        path = root / name
        records = _parse_records(path, key, record_type)
        if key == "prices":
            parsed[key] = tuple(records)
        elif key == "calibration":
            parsed[key] = _by_id(path, key, records, id_attr="family")
        else:
            parsed[key] = _by_id(path, key, records)
    catalog = Catalog(**parsed)
    validate_references(catalog, root)
    return catalog


@lru_cache(maxsize=1)
def default_catalog() -> Catalog:
    """The bundled catalog, loaded once per process."""
    return load_catalog()
