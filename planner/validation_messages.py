"""Pydantic validation errors → one line a user can act on.

``format_validation_error`` renders them as ``file: field.path: problem (got value) — valid alternative``:
ranges are named (``must be in (0, 1e+06]``), unknown fields get "did you mean", missing ones what to add,
ids in the wrong form get their normalized spelling (``us-east`` → ``us_east``). An unknown field that is a
misspelling of a missing required one (``nme:`` for ``name:``) is one problem, not two (:func:`_typos`)."""

from __future__ import annotations

import difflib
import re
import types
import typing
from collections.abc import Iterator
from typing import Any, Union

import annotated_types
from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo

from planner.errors import did_you_mean

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


def _bounds_text(metadata: list[Any]) -> str | None:
    """'in (0, 1e+06]', '≥ 1', ... from annotated_types constraints."""
    lo = hi = None
    for m in metadata:
        if isinstance(m, annotated_types.Gt):
            lo = f"({m.gt:g}"
        elif isinstance(m, annotated_types.Ge):
            lo = f"[{m.ge:g}"
        elif isinstance(m, annotated_types.Lt):
            hi = f"{m.lt:g})"
        elif isinstance(m, annotated_types.Le):
            hi = f"{m.le:g}]"
    if lo and hi:
        return f"must be in {lo}, {hi}"
    if lo:
        return f"must be {'>' if lo[0] == '(' else '≥'} {lo[1:]}"
    if hi:
        return f"must be {'<' if hi[-1] == ')' else '≤'} {hi[:-1]}"
    return None


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


def id_spelling(value: str) -> str:
    """The id form of ``value``: lowercase, runs of other characters → one underscore (``H100-SXM`` → h100_sxm)."""
    return re.sub(r"[^a-z0-9]+", "_", value.lower()).strip("_")


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _message(model: type[BaseModel] | None, error: Any, loc: tuple[Any, ...]) -> str:
    """The problem of one pydantic error in the user's words, with a valid alternative where one exists."""
    kind, value = error["type"], error.get("input")
    got = f" (got {_shown(value)})" if not isinstance(value, dict | list) or kind == "too_long" else ""
    if kind == "extra_forbidden" and model is not None:
        fields = _model_fields_at(model, loc[:-1])
        hint = did_you_mean(str(loc[-1]), fields) if fields else ""
        return f"unknown field{hint}"
    if kind in _RANGE_TYPES and model is not None:
        resolved = _resolve(model, loc)
        bounds = _bounds_text(resolved[1]) if resolved else None
        if bounds:
            return f"{bounds}{got}"
    if kind == "missing" and model is not None:
        field = _field_info(model, loc)
        about = f" ({field.description.rstrip('.')})" if field is not None and field.description else ""
        return f"required — add `{loc[-1]}:`{about}"
    if kind == "finite_number":
        return f"must be a finite number, not NaN or infinity{got}"
    if kind == "string_pattern_mismatch" and error.get("ctx", {}).get("pattern") == _ID_PATTERN:
        fixed = id_spelling(str(value))
        hint = f" — did you mean {fixed}?" if fixed else ""
        return f"ids are lowercase letters, digits and single underscores{got}{hint}"
    if kind in _TYPE_WORDS:
        return f"expected {_TYPE_WORDS[kind]}{got or _kind_of(value)}"
    if kind == "too_short" and isinstance(value, list | dict) and not value:
        optional = model is not None and _is_optional(model, loc)
        return "must not be empty — list at least one value" + (
            ", or leave the field out for the default" if optional else ""
        )
    if kind == "too_long":
        ctx = error.get("ctx", {})
        return (
            f"at most {ctx.get('max_length')} entries (got {ctx.get('actual_length')}) — shorten or split it"
        )
    if kind == "literal_error":
        return f"{error['msg'].replace('Input should be', 'must be')}{got}"
    return f"{str(error['msg']).removeprefix('Value error, ')}{got}"


def _errors(err: ValidationError) -> Iterator[tuple[tuple[Any, ...], Any]]:
    """(clean location, error) pairs; for a union, the error of the member that matches the input kind."""
    grouped: dict[tuple[Any, ...], list[Any]] = {}
    for e in err.errors():
        loc = tuple(p for p in e["loc"] if not _is_union_tag(p))
        grouped.setdefault(loc, []).append(e)
    for loc, errors in grouped.items():
        specific = [e for e in errors if e["type"] not in _TYPE_WORDS] or errors
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
        close = difflib.get_close_matches(str(loc[-1]), names, n=1, cutoff=0.5)
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
    path: str, err: ValidationError, prefix: str = "", model: type[BaseModel] | None = None
) -> str:
    """One line: ``file: field.path: problem (got value) — alternative`` (at most 3 problems, '; '; a
    misspelt required field first, as one problem)."""
    items, meant = _typos(list(_errors(err)))
    items.sort(key=lambda item: item[0] not in meant)  # stable: otherwise pydantic's order
    lines = []
    for loc, e in items:
        where = prefix + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc)
        problem = _misspelled(model, loc, meant[loc]) if loc in meant else _message(model, e, loc)
        lines.append(f"{path}: {where.lstrip('.') or '(top level)'}: {problem}")
    more = f" (and {len(lines) - 3} more)" if len(lines) > 3 else ""
    return "; ".join(lines[:3]) + more
