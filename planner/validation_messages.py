"""Pydantic validation errors → one line a user can act on.

``format_validation_error`` renders them as ``file: field.path: problem (got value) — valid alternative``:
ranges are named (``must be in (0, 1e+06]``), unknown fields get "did you mean", missing ones what to add,
ids in the wrong form get their normalized spelling (``us-east`` → ``us_east``). An unknown field that is a
misspelling of a missing required one (``nme:`` for ``name:``) is one problem, not two (:func:`_typos`)."""

from __future__ import annotations

import datetime
import difflib
import math
import re
import types
import typing
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Union

import annotated_types
from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo

from planner.errors import closest_id, did_you_mean, id_spelling, inline_text, suggest_id
from planner.field_bounds import bounds_text, within_bounds
from planner.inputs import number_hint

_ID_PATTERN = r"^[a-z0-9]+(_[a-z0-9]+)*$"

_TYPE_WORDS = {"int_type": "a whole number", "float_type": "a number", "list_type": "a list"}
_TYPE_WORDS |= {"string_type": "text", "bool_type": "true or false", "dict_type": "a mapping"}
_TYPE_WORDS |= {"model_type": "a mapping", "model_attributes_type": "a mapping"}
_TYPE_WORDS |= {
    "int_from_float": "a whole number",
    "int_parsing": "a whole number",
    "float_parsing": "a number",
}
_RANGE_TYPES = {"greater_than", "greater_than_equal", "less_than", "less_than_equal"}
_SYNONYMS = {"optimizations": ("prefix_cache", "speculative"), "id": ("name",), "intermediate_size": ("ffn_size",)}
_SYNONYMS |= {"num_attention_heads": ("heads",), "num_key_value_heads": ("kv_heads",), "num_hidden_layers": ("layers",)}
_SYNONYMS |= {"num_experts": ("experts",), "num_experts_per_tok": ("experts_per_token",), "moe_intermediate_size": ("expert_ffn_size",)}
"""Unknown fields a user plausibly writes for others too far apart for difflib (``optimizations:``, the
deployments' JSON key, for the workload's ``prefix_cache:`` / ``speculative:``; ``id:`` for ``name:``; a Hugging Face
config.json's names for an inline training architecture's)."""
IdTable = Callable[[tuple[Any, ...]], Iterable[str] | None]
"""The valid ids at a location (``('hardware', 'gpus', 0)`` → the catalog's GPU ids), None where unknown."""


def _is_union_tag(part: object) -> bool:
    """pydantic adds the member type ('constrained-float', 'list[...]') to the location of a union error."""
    return isinstance(part, str) and bool(re.search(r"[\[\]\-]", part) or part in ("float", "int", "str"))


def _members(annotation: Any) -> list[Any]:
    """The non-None members of a union (or the annotation itself), Annotated kept."""
    origin = typing.get_origin(annotation)
    if origin is Union or origin is types.UnionType:
        return [a for a in typing.get_args(annotation) if a is not type(None)]
    return [annotation]


def _strip(annotation: Any) -> tuple[Any, list[Any]]:
    """(bare type, constraint metadata) of a possibly Annotated type."""
    metadata: list[Any] = []
    while typing.get_origin(annotation) is typing.Annotated:
        args = typing.get_args(annotation)
        annotation = args[0]
        for m in args[1:]:
            metadata.extend(m.metadata if isinstance(m, FieldInfo) else [m])
    return annotation, metadata


def _step(annotation: Any, part: object) -> tuple[Any, list[Any]] | None:
    """The annotation (and its field metadata) one location step below ``annotation``."""
    for member in _members(annotation):
        bare, _ = _strip(member)
        origin = typing.get_origin(bare)
        if isinstance(part, int) and origin in (list, tuple):
            return typing.get_args(bare)[0], []
        if isinstance(part, str) and isinstance(bare, type) and issubclass(bare, BaseModel):
            field = bare.model_fields.get(part)
            if field is not None:
                return field.annotation, list(field.metadata)
        if isinstance(part, str) and origin is dict:
            return typing.get_args(bare)[1], []
    return None


def _resolve(model: type[BaseModel], loc: tuple[Any, ...]) -> tuple[Any, list[Any]] | None:
    """Annotation and constraint metadata of the field at ``loc`` (None when it cannot be followed)."""
    annotation: Any = model
    metadata: list[Any] = []
    for part in loc:
        step = _step(annotation, part)
        if step is None:
            return None
        annotation, metadata = step
    numeric = [_strip(m) for m in _members(annotation)]
    for bare, extra in numeric:
        if bare in (int, float):
            return bare, metadata + extra
    return annotation, metadata


def _model_fields_at(model: type[BaseModel], loc: tuple[Any, ...]) -> list[str]:
    """Field names of the model that holds location ``loc`` (for 'did you mean' on unknown fields)."""
    if not loc:
        return list(model.model_fields)
    resolved = _resolve(model, loc)
    if resolved is None:
        return []
    for member in _members(resolved[0]):
        bare, _ = _strip(member)
        if isinstance(bare, type) and issubclass(bare, BaseModel):
            return list(bare.model_fields)
    return []


def _kind_of(value: object) -> str:
    """' (got a list)' / ' (got a mapping)' for containers, which are not echoed."""
    if isinstance(value, list):
        return " (got a list)"
    return " (got a mapping)" if isinstance(value, dict) else ""


def _field_info(model: type[BaseModel], loc: tuple[Any, ...]) -> FieldInfo | None:
    """The pydantic field at ``loc`` (None when ``loc`` does not end at a model's field)."""
    if not loc or not isinstance(loc[-1], str) or loc[-1] not in _model_fields_at(model, loc[:-1]):
        return None
    holder = _resolve(model, loc[:-1]) if loc[:-1] else (model, [])
    for member in _members(holder[0]) if holder is not None else []:
        bare, _ = _strip(member)
        if isinstance(bare, type) and issubclass(bare, BaseModel):
            return bare.model_fields[loc[-1]]
    return None


def _is_optional(model: type[BaseModel], loc: tuple[Any, ...]) -> bool:
    """Whether the field at ``loc`` has a default (so leaving it out is a valid alternative)."""
    field = _field_info(model, loc)
    return field is not None and not field.is_required()


def _shown(value: object) -> str:
    """The value as the message shows it: short (60 characters), a large whole float as written in YAML (-1e+11,
    not -100000000000.0) where that form is exact."""
    text = repr(value)
    if isinstance(value, float) and value.is_integer() and abs(value) >= 1e6 and float(f"{value:g}") == value:
        text = f"{value:g}"
    return text if len(text) <= 60 else text[:57] + "..."


def _unknown_field(name: str, fields: list[str]) -> str:
    """' — did you mean x?' for an unknown field (a synonym of a valid one first)."""
    meant = [f for f in _SYNONYMS.get(name, ()) if f in fields]
    if meant:
        return f" — did you mean {' or '.join(f'`{f}:`' for f in meant)}?"
    return did_you_mean(name, fields) if fields else ""


def _misplaced(model: type[BaseModel], loc: tuple[Any, ...]) -> str:
    """' — hardware is a top-level section: …' / ' — ttft_ms is a field of slo: …' for a field valid elsewhere
    (an indentation slip, or a per-workload `gpus:`: it was "unknown field — did you mean output_tokens?")."""
    name, holder = str(loc[-1]), loc[:-1]
    if holder and name in model.model_fields:
        return f" — {name} is a top-level section: write it at the start of its line, not indented"
    fields = _model_fields_at(model, holder)  # a near typo (site → sites) is one; a far one (tpot_ms → output_tokens) is not
    if difflib.get_close_matches(name, fields, n=1, cutoff=0.8):
        return ""
    typo = difflib.get_close_matches(name, fields, n=1, cutoff=0.5)  # as did_you_mean: then not another section's
    places = [(s, holder) for s in fields] + [(s, ()) for s in model.model_fields if holder and not typo]
    for section, base in places:
        if any(name in _model_fields_at(model, sub) for sub in ((*base, section), (*base, section, 0))):
            where = f"indent it under `{section}:`" if base == holder else f"move it under the top-level `{section}:`"
            return f" — {name} is a field of {section}: {where}"
    return ""


def _percent_hint(loc: tuple[Any, ...], value: object) -> str:
    """' — a fraction: write 0.5 for 50 %' for a ``*_frac`` (or ``*_ratio``) field given as a percentage."""
    names = [p for p in loc if isinstance(p, str)]
    if not names or not re.search("frac|ratio", names[-1]) or isinstance(value, bool) or not isinstance(value, int | float):
        return ""
    return f" — a fraction: write {value / 100:g} for {value:g} %" if 1 < value <= 100 else ""


def _text_hint(value: object) -> str:
    """How to write a value YAML read as something other than text (``no`` → false, ``2024-01-01`` → a
    date, ``1.5`` → a number) as text."""
    if isinstance(value, bool):
        return " — YAML reads yes/no/on/off/true/false as true or false: quote the text ('no')"
    if isinstance(value, datetime.date | int | float):
        return f" — quote it: '{value}'"
    return ""


def _named(model: type[BaseModel] | None, loc: tuple[Any, ...]) -> bool:
    """Whether the entries at ``loc`` (a list field, or one entry ``field[i]``) have a ``name:``."""
    return model is not None and "name" in _model_fields_at(model, loc if loc and isinstance(loc[-1], int) else (*loc, 0))


def _shape_hint(kind: str, value: object, loc: tuple[Any, ...], named: bool = False) -> str:
    """A value of the wrong shape: an empty section or list item, one value or a text of values where a list
    goes (``fp8`` → [fp8], ``us_east, us_west`` → [us_east, us_west]), values without brackets in a list item;
    ``named``: the entries have a ``name:`` (workloads keyed by name, ``workloads: [chat]``)."""
    words = _TYPE_WORDS[kind]
    if value is None:
        empty = " — an empty list item: delete the lone '-'" if loc and isinstance(loc[-1], int) else " — write the value after the colon"
        return " — the section is empty: indent its fields under it" if words == "a mapping" else empty
    if named and words == "a list" and isinstance(value, dict) and value and all(isinstance(v, dict) for v in value.values()):
        return f" — one entry per item: write `- name: {inline_text(next(iter(value)))}` with its fields indented under it"
    if named and words == "a mapping" and isinstance(value, str) and loc and isinstance(loc[-1], int):
        return f" — an entry is `- name: {inline_text(value)}` with its fields indented under it"
    one = isinstance(value, int | float) and not isinstance(value, bool)
    parts = re.split(r"[,\s]+", value.strip()) if isinstance(value, str) else [f"{value}"] if one else []
    if parts and all(re.fullmatch(r"[\w.]+", p) for p in parts) and (words == "a list" or len(parts) > 1):
        return f" — a list is written [{', '.join(parts)}]"
    return ""


def _whole_hint(value: object, metadata: list[Any] | None = None) -> str:
    """' — write 1000' for a whole number written as a float (``1e3``, ``500.0``); ' — write 4096 or 4097' for a
    fraction (``4096.5``); where the field's bounds (annotated_types ``metadata``) exclude that whole number, the
    bounds instead (' — must be in [1, 1e+07]'), so the hint does not lead to the next refusal."""
    if isinstance(value, float) and abs(value) < 1e15 and math.isfinite(value):
        low = math.floor(value)
        bounds = bounds_text(metadata or [])
        if bounds and not any(within_bounds(metadata or [], float(n)) for n in {low, math.ceil(value)}):
            return f" — {bounds}"
        return f" — write {low}" if value == low else f" — write {low} or {low + 1}"
    return ""


def _id_hint(value: object, loc: tuple[Any, ...], ids: IdTable | None) -> str:
    """' — did you mean x?' for an id in the wrong form: the valid id it means where the valid ids at ``loc``
    are known, else its id spelling; a name with no letters or digits of its own gets an example."""
    text = str(value)
    table = ids(loc) if ids is not None else None
    if table is not None:
        return suggest_id(text, table)
    fixed = id_spelling(text)
    if fixed:
        return f" — did you mean {fixed}?"
    head = next((p for p in loc if isinstance(p, str)), "id")
    return f" — e.g. {head.removesuffix('s')}_1"


def _message(
    model: type[BaseModel] | None, error: Any, loc: tuple[Any, ...], ids: IdTable | None = None
) -> str:
    """The problem of one pydantic error in the user's words, with a valid alternative where one exists."""
    kind, value = error["type"], error.get("input")
    got = f" (got {_shown(value)})" if not isinstance(value, dict | list) or kind == "too_long" else ""
    if kind == "extra_forbidden" and model is not None:
        return f"unknown field{_misplaced(model, loc) or _unknown_field(str(loc[-1]), _model_fields_at(model, loc[:-1]))}"
    if kind == "invalid_key":
        return (
            f"key {_shown(value)} is not text — a key is a field name; YAML reads yes/no/on/off as true/false "
            "and digits as numbers: quote it ('on')"
        )
    if kind in _RANGE_TYPES and model is not None:
        resolved = _resolve(model, loc)
        bounds = bounds_text(resolved[1]) if resolved else None
        if bounds:
            return f"{bounds}{got}{_percent_hint(loc, value)}"
    if kind == "missing" and model is not None:
        field = _field_info(model, loc)
        about = f" ({field.description.rstrip('.')})" if field is not None and field.description else ""
        return f"required — add `{loc[-1]}:`{about}"
    if kind == "finite_number":
        return f"must be a finite number, not NaN or infinity{got}"
    if kind == "string_pattern_mismatch" and error.get("ctx", {}).get("pattern") == _ID_PATTERN:
        return f"ids are lowercase letters, digits and single underscores{got}{_id_hint(value, loc, ids)}"
    if kind in _TYPE_WORDS:
        hint = _text_hint(value) if kind == "string_type" else number_hint(value, loc)
        if _TYPE_WORDS[kind] == "a whole number":
            resolved = _resolve(model, loc) if model is not None else None
            hint = _whole_hint(value, resolved[1] if resolved else None) or hint
        hint = hint or _shape_hint(kind, value, loc, _named(model, loc))
        return f"expected {_TYPE_WORDS[kind]}{got or _kind_of(value)}{hint}"
    if kind == "too_short" and isinstance(value, list | dict) and not value:
        optional = model is not None and _is_optional(model, loc)
        return "must not be empty — list at least one value" + (
            ", or leave the field out for the default" if optional else ""
        )
    if kind == "too_short":  # a list of a set length, e.g. 24 hourly fractions
        ctx = error.get("ctx", {})
        field = _field_info(model, loc) if model is not None else None
        most = next((m.max_length for m in field.metadata if isinstance(m, annotated_types.MaxLen)), None) if field else None
        exact = f": give exactly {most}" if most == ctx.get("min_length") else ""
        return f"must have at least {ctx.get('min_length')} entries (got {ctx.get('actual_length')}){exact}"
    if kind == "too_long":
        ctx = error.get("ctx", {})
        return (
            f"at most {ctx.get('max_length')} entries (got {ctx.get('actual_length')}) — shorten or split it"
        )
    if kind == "literal_error":  # '99' quoted, or 0.99 for the 99th percentile: the value to write
        named = re.fullmatch(r"\s*p(\d+)\s*", value, re.I) if isinstance(value, str) else None  # 'p99'
        hint = f" — write {named.group(1)}" if named else number_hint(value, loc) if isinstance(value, str) else ""
        if isinstance(value, float) and 0 < value < 1 and "percentile" in str(loc[-1]):
            hint = f" — write {value * 100:g} (a percentile, not a fraction)"
        options = re.findall(r"'([^']*)'", str(error.get("ctx", {}).get("expected", "")))
        best = closest_id(value, options) if isinstance(value, str) and options and not hint else None
        hint += f" — did you mean {best}?" if best else ""  # 'Rent', 'on-demand', 'min-cost
        return f"{error['msg'].replace('Input should be', 'must be')}{got}{hint}"
    return f"{str(error['msg']).removeprefix('Value error, ')}{got}"


def _errors(err: ValidationError) -> Iterator[tuple[tuple[Any, ...], Any]]:
    """(clean location, error) pairs; for a union, the error of the member that matches the input kind."""
    grouped: dict[tuple[Any, ...], list[Any]] = {}
    for e in err.errors():
        loc = tuple(p for p in e["loc"] if not _is_union_tag(p))
        grouped.setdefault(loc, []).append(e)
    for loc, errors in grouped.items():
        specific = [e for e in errors if e["type"] not in _TYPE_WORDS] or errors
        if specific[0]["type"] in _TYPE_WORDS and any(len(o) > len(loc) and o[: len(loc)] == loc for o in grouped):
            continue  # a union member of the other kind (a number where the list member's items are wrong)
        yield loc, specific[0]


def _typos(items: list[tuple[tuple[Any, ...], Any]]) -> tuple[list[tuple[tuple[Any, ...], Any]], dict[Any, str]]:
    """(the errors without the missing fields an unknown field of the same mapping misspells, {unknown
    field's location: the missing field it stands for}). Close means what :func:`did_you_mean` calls close."""
    missing = [loc for loc, e in items if e["type"] == "missing" and loc]
    meant: dict[Any, str] = {}
    for loc, e in items:
        if e["type"] != "extra_forbidden" or not loc:
            continue
        names = [str(m[-1]) for m in missing if m[:-1] == loc[:-1] and str(m[-1]) not in meant.values()]
        synonyms = [n for n in _SYNONYMS.get(str(loc[-1]), ()) if n in names]
        close = synonyms or difflib.get_close_matches(str(loc[-1]), names, n=1, cutoff=0.5)
        if close:
            meant[loc] = close[0]
    taken = {loc[:-1] + (name,) for loc, name in meant.items()}
    return [(loc, e) for loc, e in items if loc not in taken], meant


def _misspelled(model: type[BaseModel] | None, loc: tuple[Any, ...], name: str) -> str:
    """The problem of an unknown field that misspells the missing required field ``name``."""
    field = None if model is None else _field_info(model, loc[:-1] + (name,))
    about = f": {field.description.rstrip('.')}" if field is not None and field.description else ""
    return f"unknown field — did you mean `{name}:`? (required{about})"


def format_validation_error(
    path: str,
    err: ValidationError,
    prefix: str = "",
    model: type[BaseModel] | None = None,
    ids: IdTable | None = None,
) -> str:
    """One line: ``file: field.path: problem (got value) — alternative`` (at most 3 problems, '; '; a
    misspelt required field first, as one problem). ``ids``: the valid ids at a location, so an id in the
    wrong form is answered with the valid id it means (``meta-llama/Llama-3.1-8B`` → llama_3_1_8b)."""
    items, meant = _typos(list(_errors(err)))
    items.sort(key=lambda item: item[0] not in meant)  # stable: otherwise pydantic's order
    lines = []
    for loc, e in items:
        shown = loc[:-1] if e["type"] == "invalid_key" else loc  # the key is in the problem, not the path
        where = prefix + "".join(f"[{p}]" if isinstance(p, int) else f".{inline_text(p)}" for p in shown)
        problem = _misspelled(model, loc, meant[loc]) if loc in meant else _message(model, e, loc, ids)
        if problem.startswith("@") and ": " in problem:  # a model's check names the field: "@workloads[1].name: ..."
            field, problem = problem[1:].split(": ", 1)
            where += field if field.startswith("[") else f".{field}"
        lines.append(f"{path}: {where.lstrip('.') or '(top level)'}: {problem}")
    more = f" (and {len(lines) - 3} more)" if len(lines) > 3 else ""
    return "; ".join(lines[:3]) + more
