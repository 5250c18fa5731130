"""Reading input files safely and turning validation errors into one line a user can act on.

``load_yaml_file`` is the one YAML reader of scenario and catalog files: size limit, UTF-8 check with the
line and column of a bad byte, YAML syntax errors with line and column, duplicate keys rejected, alias
(anchor-bomb) and nesting-depth limits, and YAML 1.2 floats (``1e3`` is a number, not a string).

``format_validation_error`` renders pydantic errors as ``file: field.path: problem (got value) — valid
alternative``: ranges are named (``must be in (0, 1e+06]``), unknown fields get "did you mean", missing ones
what to add, ids in the wrong form get their normalized spelling (``us-east`` → ``us_east``)."""

from __future__ import annotations

import re
import types
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Union

import annotated_types
import yaml
from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo

from planner.errors import InputError, did_you_mean

MAX_FILE_BYTES = 1_000_000
"""Largest catalog YAML file read, bytes (the bundled catalog's biggest file is under 40 kB)."""
MAX_SCENARIO_BYTES = 256_000
"""Largest scenario file, bytes: 100 workloads with 120 per-period values each fit in about 100 kB, and a
file this size is refused before parsing (10,000 workloads would take seconds just to parse)."""
MAX_DEPTH = 32
"""Deepest nesting of mappings/lists in one YAML file."""
MAX_NODES = 1_000_000
"""Most YAML values (scalars, lists, mappings) in one file with every alias expanded: an anchor bomb
(``b: &b [*a, *a, ...]`` nested) expands exponentially and is refused here, before it is built."""

_ID_PATTERN = r"^[a-z0-9]+(_[a-z0-9]+)*$"
_FLOAT_12 = re.compile(
    r"""^(?:[-+]?(?:[0-9][0-9_]*)(?:\.[0-9_]*)?(?:[eE][-+]?[0-9]+)
    |[-+]?\.[0-9_]+(?:[eE][-+][0-9]+)?)$""",
    re.X,
)


class _Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """Safe loader (libyaml when available) that also reads ``1e3`` / ``2E-4`` as floats (YAML 1.2)."""


_Loader.add_implicit_resolver("tag:yaml.org,2002:float", _FLOAT_12, list("-+0123456789."))


def _where(mark: Any) -> str:
    """``line L, column C`` (1-based) of a YAML mark."""
    return f"line {mark.line + 1}, column {mark.column + 1}"


def _decode(path: Path, raw: bytes, error: type[InputError]) -> str:
    """``raw`` as UTF-8 text; the error names the line and column of the first invalid byte."""
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        before = raw[: exc.start]
        line = before.count(b"\n") + 1
        column = exc.start - (before.rfind(b"\n") + 1) + 1
        raise error(
            f"{path}: line {line}, column {column}: not UTF-8 text (byte 0x{raw[exc.start]:02x}) — "
            "save the file as UTF-8"
        ) from None


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def _check_expanded_size(path: Path, root: yaml.Node, error: type[InputError]) -> None:
    """Refuse a document whose alias-expanded size exceeds MAX_NODES, or a recursive alias (iterative)."""
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        if id(node) in sizes:
            continue
        children = _children(node)
        if done:
            open_nodes.discard(id(node))
            sizes[id(node)] = 1 + sum(sizes[id(c)] for c in children)
            if sizes[id(node)] > MAX_NODES:
                raise error(
                    f"{path}: {_where(node.start_mark)}: expands to more than {MAX_NODES:,} values through "
                    "aliases (*name) — write the values out or shorten the file"
                )
            continue
        open_nodes.add(id(node))
        stack.append((node, True))
        for child in children:
            if id(child) in open_nodes:
                raise error(f"{path}: {_where(child.start_mark)}: recursive alias — a value contains itself")
            if id(child) not in sizes:
                stack.append((child, False))


def _check_nodes(path: Path, root: yaml.Node, error: type[InputError]) -> int:
    """Depth and duplicate-key limits on a composed YAML node graph (iterative); returns the alias count."""
    seen: set[int] = set()
    aliases = 0
    stack: list[tuple[yaml.Node, int]] = [(root, 1)]
    while stack:
        node, depth = stack.pop()
        if id(node) in seen:
            aliases += 1
            continue
        seen.add(id(node))
        if depth > MAX_DEPTH:
            raise error(f"{path}: {_where(node.start_mark)}: nesting deeper than {MAX_DEPTH} levels")
        if isinstance(node, yaml.MappingNode):
            keys: dict[str, yaml.Node] = {}
            for key, value in node.value:
                if isinstance(key, yaml.ScalarNode) and key.tag != "tag:yaml.org,2002:merge":
                    if key.value in keys:
                        first = keys[key.value].start_mark.line + 1
                        raise error(
                            f"{path}: {_where(key.start_mark)}: duplicate key '{key.value}' (first at line "
                            f"{first}) — keep one"
                        )
                    keys[key.value] = key
                stack.append((key, depth + 1))
                stack.append((value, depth + 1))
        elif isinstance(node, yaml.SequenceNode):
            stack.extend((item, depth + 1) for item in node.value)
    return aliases


def parse_yaml_text(text: str, path: Path | str, error: type[InputError] = InputError) -> Any:
    """Parse YAML ``text`` safely (limits as in the module docstring); ``error`` names ``path``."""
    where = Path(path)
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        if _check_nodes(where, node, error):
            _check_expanded_size(where, node, error)
        return loader.construct_document(node)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        at = f"{_where(mark)}: " if mark is not None else ""
        problem = exc.problem or exc.context or "syntax error"
        raise error(f"{where}: {at}invalid YAML: {problem}") from None
    except yaml.YAMLError as exc:
        raise error(f"{where}: invalid YAML: {str(exc).splitlines()[0]}") from None
    except (ValueError, OverflowError, RecursionError) as exc:  # e.g. an out-of-range timestamp
        raise error(f"{where}: invalid YAML value: {exc}") from None
    finally:
        loader.dispose()


def load_yaml_file(
    path: Path | str,
    error: type[InputError] = InputError,
    what: str = "YAML",
    max_bytes: int = MAX_FILE_BYTES,
    *,
    keep_parsed: bool = False,
) -> Any:
    """Read and parse a YAML file with the limits of this module; every failure is ``error`` (exit 2).
    ``keep_parsed``: read the parsed value of these exact bytes from the on-disk cache of
    :mod:`planner.parsed_yaml_cache` when it has one, and keep it there once parsed (catalog files: read by
    every command)."""
    p = Path(path)
    try:
        if p.is_dir():
            raise error(f"{p}: is a directory, expected a {what} file")
        size = p.stat().st_size
        if size > max_bytes:
            raise error(f"{p}: {size:,} bytes — {what} files are limited to {max_bytes:,} bytes")
        raw = p.read_bytes()
    except FileNotFoundError:
        raise error(f"{p}: {what} file not found") from None
    except PermissionError:
        raise error(f"{p}: {what} file is not readable (permission denied)") from None
    except OSError as exc:
        raise error(f"{p}: cannot read the {what} file: {exc.strerror}") from None
    def parse() -> Any:
        return parse_yaml_text(_decode(p, raw[:max_bytes], error), p, error)

    if not keep_parsed:
        return parse()
    from planner import parsed_yaml_cache

    return parsed_yaml_cache.parsed(raw, parse)


# --------------------------------------------------------------------------------------------------
# pydantic errors → one line
# --------------------------------------------------------------------------------------------------

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


def format_validation_error(
    path: str, err: ValidationError, prefix: str = "", model: type[BaseModel] | None = None
) -> str:
    """One line: ``file: field.path: problem (got value) — alternative`` (at most 3 problems, '; ')."""
    lines = []
    for loc, e in _errors(err):
        where = prefix + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc)
        lines.append(f"{path}: {where.lstrip('.') or '(top level)'}: {_message(model, e, loc)}")
    more = f" (and {len(lines) - 3} more)" if len(lines) > 3 else ""
    return "; ".join(lines[:3]) + more
