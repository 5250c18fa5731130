"""What a sweep varies: ``--vary PATH=V1,V2,...`` axes over dotted scenario paths, and the variants they make.

A PATH walks the scenario's fields (``economics.rent_price_scale``, ``hardware.gpus``); a list of named
records (``workloads``, ``sites``) is addressed by the record's name (``workloads.chat.slo.tpot_ms``). A
value is read as YAML (``8`` → 8, ``0.5`` → 0.5, ``true``, ``h100_sxm``), and ``a+b`` is the list [a, b]
(``hardware.gpus=h100_sxm+h200_sxm,b200``). ``--grid`` (default) makes every combination of the axes'
values (the product of their lengths); ``--zip`` pairs the i-th values (every axis the same length).

Every variant is parsed as a :class:`~planner.scenario.Scenario` and checked against the catalog before any
is solved, so a bad path or value is one line naming the path and a valid alternative (exit 2).
"""

from __future__ import annotations

import copy
import itertools
import math
import re
import types
import typing
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import yaml
from pydantic import BaseModel

from planner.catalog.loader import Catalog
from planner.errors import InputError, ScenarioError, did_you_mean
from planner.inputs import yaml_value
from planner.readout.sweep import format_value
from planner.scenario import Scenario, parse_scenario, validate_against_catalog

Mode = Literal["grid", "zip"]
NAMED_LISTS = ("workloads", "sites")
"""Scenario lists whose records a path addresses by their ``name``."""
MAX_VARIANTS = 100_000


@dataclass(frozen=True)
class Axis:
    """One ``--vary``: a dotted scenario path and the values it takes (YAML scalars or lists)."""

    path: str
    values: tuple[Any, ...]


@dataclass(frozen=True)
class Variant:
    """One point of the sweep: its index (row order) and the value of every axis, in axis order."""

    index: int
    values: tuple[tuple[str, Any], ...]

    @property
    def key(self) -> str:
        """A stable text key of the varied values (resume files match rows on it)."""
        return "; ".join(f"{path}={format_value(v)}" for path, v in self.values)


def _scalar(text: str) -> Any:
    """A number when ``text`` is one (``8``, ``0.5``, ``1e-3``), else the YAML scalar as the scenario reader
    reads it (planner.inputs.yaml_value: ``true``, ``h100_sxm``; YAML 1.1's on/off/yes/no stay words, so
    ``disaggregation=off`` is the mode 'off', and ``1:30`` is not the base-60 number 90)."""
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    try:
        value = yaml_value(text) if text.strip() else ""
    except yaml.YAMLError:  # '@x', '*ref', '{': not a YAML scalar; the scenario check judges the text as written
        return text
    return value if isinstance(value, str | int | float | bool) or value is None else text


def _empty_list(text: str) -> bool:
    """Whether a value is written as the empty list ``[]`` (spaces allowed: ``[ ]``)."""
    return text.replace(" ", "") == "[]"


def parse_value(text: str) -> Any:
    """``"8"`` → 8, ``"0.5"`` → 0.5, ``"h100_sxm"`` → 'h100_sxm', ``"a+b"`` → ['a', 'b'], ``"[]"`` → []
    (an empty list, e.g. ``hardware.gpu_share_fracs=[]``: whole GPUs only)."""
    text = text.strip()
    if _empty_list(text):
        return []
    if "+" in text and not _is_number(text):
        return [_scalar(part) for part in text.split("+") if part.strip()]
    return _scalar(text)


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def parse_axis(option: str) -> Axis:
    """``"economics.rent_price_scale=0.5,1,2"`` → Axis('economics.rent_price_scale', (0.5, 1, 2))."""
    path, sep, values = option.partition("=")
    path = path.strip()
    if not sep or not path or not values.strip():
        raise InputError(
            f"--vary {option!r}: expected PATH=V1,V2,... — e.g. --vary economics.rent_price_scale=0.5,1,2"
        )
    pieces = values.split(",")
    given = [v.strip() for v in pieces if v.strip()]
    if given and len(given) < len(pieces):  # '4,,8' dropped the empty value unsaid
        raise InputError(
            f"--vary {option!r}: an empty value between commas — write each value once, e.g. "
            f"--vary {path}={','.join(given)}"
        )
    texts = [v for v in pieces if v.strip()]
    if any(t.strip().startswith("[") or t.strip().endswith("]") for t in texts if not _empty_list(t)):
        bare = ",".join(t.strip().strip("[]").strip() for t in texts)  # '=[4,8]' split into '[4' and '8]'
        raise InputError(
            f"--vary {option!r}: the values are listed without brackets — write --vary {path}={bare} "
            "(a+b is one list value, [] the empty list)"
        )
    parsed = tuple(parse_value(v) for v in texts)
    if not parsed or any(v == [] and not _empty_list(t) for t, v in zip(texts, parsed, strict=True)):
        raise InputError(
            f"--vary {option!r}: no value given — write PATH=V1,V2,... with at least one value, "
            "e.g. --vary economics.rent_price_scale=0.5,1,2"
        )
    return Axis(path, parsed)


def _repeat_key(value: Any) -> tuple[Any, ...]:
    """What makes two varied values the same variant: equal numbers (4 and 4.0), else the text as written."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return ("number", float(value))
    return (type(value).__name__, format_value(value))


def _check_repeats(axis: Axis) -> None:
    """A value given twice would solve the same variant twice (and two rows share one resume key)."""
    seen: set[tuple[Any, ...]] = set()
    for value in axis.values:
        key = _repeat_key(value)
        if key in seen:
            raise InputError(
                f"--vary {axis.path}: the value {format_value(value)} is given twice — give each value once"
            )
        seen.add(key)


def variants(axes: Sequence[Axis], mode: Mode) -> list[Variant]:
    """The grid (every combination, last axis fastest) or the zip (i-th values together) of ``axes``."""
    if not axes:
        raise InputError("sweep: give at least one --vary PATH=V1,V2,...")
    paths = [a.path for a in axes]
    dupes = sorted({p for p in paths if paths.count(p) > 1})
    if dupes:
        raise InputError(f"--vary: {dupes[0]} is given twice — give each path once with all its values")
    if mode == "zip":
        lengths = {len(a.values) for a in axes}
        if len(lengths) > 1:
            shown = ", ".join(f"{a.path} has {len(a.values)}" for a in axes)
            raise InputError(f"--zip: every --vary needs the same number of values ({shown}) — or use --grid")
        total = len(axes[0].values)
    else:
        total = math.prod(len(a.values) for a in axes)
    if total > MAX_VARIANTS:
        raise InputError(
            f"--{mode}: {total:,} variants is over the limit of {MAX_VARIANTS:,} — vary fewer values"
        )
    for a in axes:
        _check_repeats(a)
    if mode == "zip":
        combos: list[tuple[Any, ...]] = list(zip(*(a.values for a in axes), strict=True))
    else:
        combos = list(itertools.product(*(a.values for a in axes)))
    return [Variant(i, tuple(zip(paths, combo, strict=True))) for i, combo in enumerate(combos)]


def _unwrap(annotation: Any) -> Any:
    """The model class inside ``X | None``, ``list[X]``, ``Annotated[X, ...]`` (else the annotation)."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _unwrap(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        for arg in typing.get_args(annotation):
            inner = _unwrap(arg)
            if isinstance(inner, type) and issubclass(inner, BaseModel):
                return inner
        return annotation
    if origin is list:
        return _unwrap(typing.get_args(annotation)[0])
    return annotation


def _check_path(path: str, data: dict[str, Any], catalog_sites: Sequence[str] = ()) -> list[str | int]:
    """Resolve a dotted path against the Scenario model and the base data; returns the concrete keys
    (list positions for named records). A catalog site the scenario does not override yet gets an override
    record ``{name}`` appended to ``data`` (``sites.us_east.rtt_ms`` varies the catalog site's RTT). Unknown
    fields/names → InputError with a did-you-mean."""
    model: Any = Scenario
    node: Any = data
    keys: list[str | int] = []
    parts = path.split(".")
    i = 0
    while i < len(parts):
        part = parts[i]
        where = ".".join(parts[:i]) or "the scenario"
        numbered = re.fullmatch(r"(\w+)\[(\d+)\]", part)
        if i == 0 and numbered and numbered.group(1) in NAMED_LISTS:
            records = [r for r in data.get(numbered.group(1)) or [] if isinstance(r, dict) and "name" in r]
            k = int(numbered.group(2))
            name = str(records[min(k, len(records) - 1)]["name"]) if records else "NAME"
            raise InputError(
                f"--vary {path}: a {numbered.group(1)} entry is addressed by its name, not its position — write "
                f"{'.'.join([numbered.group(1), name, *parts[1:]])}"
            )
        if not (isinstance(model, type) and issubclass(model, BaseModel)):
            raise InputError(f"--vary {path}: {where} is a value, it has no field '{part}'")
        if part not in model.model_fields:
            raise InputError(
                f"--vary {path}: {where} has no field '{part}'{did_you_mean(part, model.model_fields)}"
            )
        annotation = model.model_fields[part].annotation
        keys.append(part)
        node = node.get(part) if isinstance(node, dict) else None
        model = _unwrap(annotation)
        named = part in NAMED_LISTS and len(keys) == 1
        if i + 1 < len(parts) and _is_record_list(annotation) and not named:
            raise InputError(
                f"--vary {path}: {'.'.join(parts[: i + 1])} is a list of records without names — a sweep "
                "cannot address one entry; write a scenario file per case instead"
            )
        if part in NAMED_LISTS and len(keys) == 1 and i + 1 < len(parts):
            name = parts[i + 1]
            names = [r.get("name") for r in node or []]
            if part == "sites" and name not in names and name in catalog_sites:
                node = data.setdefault("sites", [])
                node.append({"name": name})
                names.append(name)
            if name not in names:
                raise InputError(
                    f"--vary {path}: no {part[:-1]} named '{name}'"
                    f"{did_you_mean(name, [str(n) for n in names] + list(catalog_sites if part == 'sites' else []))}"
                )
            keys.append(names.index(name))
            node = node[names.index(name)]
            i += 1
        i += 1
    return keys


def _is_list_field(path: str) -> bool:
    """True when the field at ``path`` only takes lists (``hardware.gpus``, ``workloads.NAME.models``)."""
    _model, annotation = _field_at(path)
    members = [a for a in _members(annotation) if a is not type(None)]
    return bool(members) and all(typing.get_origin(a) is list for a in members)


def _field_at(path: str) -> tuple[Any, Any]:
    """(the type, the annotation) of the Scenario field at the dotted ``path`` (a checked path; the name after a
    named list such as ``workloads`` picks a record and is skipped)."""
    model: Any = Scenario
    annotation: Any = None
    parts = path.split(".")
    skip = False
    for i, part in enumerate(parts):
        if skip:
            skip = False
            continue
        annotation = model.model_fields[part].annotation
        model = _unwrap(annotation)
        skip = part in NAMED_LISTS and i == 0 and i + 1 < len(parts)
    return model, annotation


def _is_record_list(annotation: Any) -> bool:
    """True when the field holds a list of records (``inventory``, ``economics.rent_volume_tiers``)."""
    inner = _unwrap(annotation)
    return (
        isinstance(inner, type)
        and issubclass(inner, BaseModel)
        and any(typing.get_origin(m) is list for m in _members(annotation))
    )


def _check_not_record(axis: Axis) -> None:
    """A path that ends at a record (``workloads.chat``, ``economics``, ``workloads.chat.slo``) or a list of
    records (``inventory``) takes no value written on the command line but null (leave an optional record
    out): name one of its fields instead."""
    parts = axis.path.split(".")
    model, annotation = _field_at(axis.path)
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        return
    if all(v is None for v in axis.values):
        return
    fields = [f for f in model.model_fields if f != "name"]
    by_name = parts[0] in NAMED_LISTS and len(parts) <= 2  # workloads (the list), workloads.chat (one record)
    if _is_record_list(annotation) and not by_name:
        raise InputError(
            f"--vary {axis.path}: that is a list of records ({model.__name__}), not a value — a sweep cannot "
            "vary it; write a scenario file per case instead"
        )
    if parts[-1] in NAMED_LISTS and len(parts) == 1:
        raise InputError(
            f"--vary {axis.path}: that is a list of records ({model.__name__}), not a value — vary a field of "
            f"one of them by its name, e.g. {axis.path}.NAME.{fields[0]}"
        )
    shown = ", ".join(f"{axis.path}.{f}" for f in fields[:3]) + (", ..." if len(fields) > 3 else "")
    raise InputError(
        f"--vary {axis.path}: that is a record ({model.__name__}), not a value — vary one of its fields: {shown}"
    )


def _members(annotation: Any) -> list[Any]:
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _members(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        return [m for arg in typing.get_args(annotation) for m in _members(arg)]
    return [annotation]


def apply(data: dict[str, Any], keys: Sequence[str | int], value: Any) -> None:
    """Set ``data[k0][k1]...`` = ``value`` in place (missing mappings on the way are created)."""
    node: Any = data
    for key in keys[:-1]:
        if isinstance(key, str) and node.get(key) is None:
            node[key] = {}
        node = node[key]
    node[keys[-1]] = copy.deepcopy(value)


@dataclass(frozen=True)
class SweepPlan:
    """The validated sweep: the base scenario (as data), its axes and variants, and each variant's data."""

    scenario_name: str
    base: dict[str, Any]
    axes: tuple[Axis, ...]
    mode: Mode
    variants: tuple[Variant, ...]
    resolved: tuple[tuple[str | int, ...], ...]
    """Concrete keys of each axis' path (list positions for named records)."""

    def variant_data(self, variant: Variant) -> dict[str, Any]:
        """The scenario data of ``variant`` (a deep copy of the base with its values set)."""
        data = copy.deepcopy(self.base)
        for keys, (_, value) in zip(self.resolved, variant.values, strict=True):
            apply(data, keys, value)
        return data


def plan_sweep(
    scenario: Scenario, catalog: Catalog, axes: Sequence[Axis], mode: Mode, *, path: str = "scenario"
) -> SweepPlan:
    """Resolve every axis path and validate every variant (Scenario + catalog ids) before any is solved."""
    base = scenario.model_dump(mode="json")
    resolved = tuple(tuple(_check_path(a.path, base, tuple(catalog.sites))) for a in axes)
    for a in axes:
        _check_not_record(a)
    axes = [
        Axis(a.path, tuple(v if isinstance(v, list) else [v] for v in a.values))
        if _is_list_field(a.path)
        else a
        for a in axes
    ]
    plan = SweepPlan(scenario.name, base, tuple(axes), mode, tuple(variants(axes, mode)), resolved)
    for variant in plan.variants:
        where = f"{path} with {variant.key}"
        try:
            checked = parse_scenario(plan.variant_data(variant), path=where, catalog=catalog)
            validate_against_catalog(checked, catalog, where)
        except ScenarioError as exc:
            raise ScenarioError(f"--vary: {exc}") from None
    return plan
