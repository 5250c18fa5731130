"""Reading input files safely and turning validation errors into one line a user can act on.

``load_yaml_file`` is the one YAML reader of scenario and catalog files: size limit, UTF-8 check with the
line and column of a bad byte, YAML syntax errors with line and column, duplicate keys rejected, alias
(anchor-bomb) and nesting-depth limits, and YAML 1.2 floats (``1e3`` is a number, not a string).

Validation errors of what was read are rendered by :mod:`planner.validation_messages`."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from planner.errors import InputError
from planner.number_hints import number_hint as number_hint  # re-exported: validation messages, the CLI

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

_FLOAT_12 = re.compile(r"^[-+]?(?:\.[0-9][0-9_]*|[0-9][0-9_]*(?:\.[0-9_]*)?)(?:[eE][-+]?[0-9]+)?$")
"""YAML 1.2 core floats: ``1.5``, ``.5``, ``1.``, ``1e3``, ``2E-4`` (a plain integer matches the int resolver,
which is tried first); digit separators allowed."""
_INT_12 = re.compile(r"^(?:[-+]?[0-9][0-9_]*|0o[0-7]+|0x[0-9a-fA-F]+)$")
_BOOL_12 = re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$")
_YAML11_ONLY = {"tag:yaml.org,2002:bool", "tag:yaml.org,2002:int", "tag:yaml.org,2002:float"}


class _Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """Safe loader (libyaml when available) with YAML 1.2's numbers and booleans instead of YAML 1.1's.

    YAML 1.1 (PyYAML's default) reads ``1:30`` as the base-60 integer 90, ``010`` as the octal 8 and
    ``no`` / ``off`` / ``y`` as booleans (a site or model id ``no`` became False), and ``1e3`` as a string;
    here ``1:30`` and ``no`` stay strings (the schema then names the field), ``010`` is 10, ``1e3`` and
    ``2E-4`` are floats. Digit separators (``1_000_000``) are still read as numbers."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag not in _YAML11_ONLY]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_Loader.add_implicit_resolver("tag:yaml.org,2002:bool", _BOOL_12, list("tTfF"))
_Loader.add_implicit_resolver("tag:yaml.org,2002:int", _INT_12, list("-+0123456789"))
_Loader.add_implicit_resolver("tag:yaml.org,2002:float", _FLOAT_12, list("-+0123456789."))


def _construct_int(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> int:
    """A YAML 1.2 integer: decimal (a leading zero is not octal: ``010`` is 10), ``0o17`` or ``0x1f``."""
    text = str(loader.construct_scalar(node)).replace("_", "")
    sign = -1 if text.startswith("-") else 1
    digits = text.lstrip("+-")
    base = {"0x": 16, "0o": 8}.get(digits[:2], 10)
    return sign * int(digits[2:] if base != 10 else digits, base)


_Loader.add_constructor("tag:yaml.org,2002:int", _construct_int)
_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float", re.compile(r"^(?:[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"), list("-+.")
)


def yaml_value(text: str) -> Any:
    """``text`` read as one YAML value by the scenario reader's rules (YAML 1.2 numbers and booleans)."""
    return yaml.load(text, Loader=_Loader)  # noqa: S506 — _Loader is a safe loader


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
                            f"{path}: {_where(key.start_mark)}: duplicate key {key.value!r} (first at line "
                            f"{first}) — keep one"
                        )
                    keys[key.value] = key
                stack.append((key, depth + 1))
                stack.append((value, depth + 1))
        elif isinstance(node, yaml.SequenceNode):
            stack.extend((item, depth + 1) for item in node.value)
    return aliases


def _tab_hint(text: str, mark: Any) -> str:
    """' — line L starts with a tab: ...' when a tab in the indentation at or before the error explains it
    (YAML indents with spaces only; the parser's own words, 'found character that cannot start any token',
    do not say so)."""
    if mark is None:
        return ""
    lines = text.splitlines()
    for number in range(min(mark.line, len(lines) - 1), -1, -1):
        line = lines[number]
        indent = line[: len(line) - len(line.lstrip(" \t"))]
        if "\t" in indent:
            return f" — line {number + 1} is indented with a tab: YAML indents with spaces only"
        if number < mark.line - 1:
            break
    return ""


_PROBLEMS = {
    "but found another document": "a second YAML document starts here ('---'); a file holds one — delete this "
    "line and what follows it, or split the file",
}
"""The parser's words → what to do (``but found another document`` named neither the '---' nor the fix)."""
_FIXES = {
    "could not find expected ':'": "line {open} is not a `key: value` line (a colon needs a space after it: "
    "'horizon_months: 36')",
    "did not find expected ',' or ']'": "close the list opened at line {open} with ']' (values separated by ', ')",
    "did not find expected ',' or '}'": "close the mapping opened at line {open} with '}}' (entries separated by ', ')",
    "found unexpected end of stream": "a quote or bracket opened at line {open} is never closed",
    "mapping values are not allowed in this context": "quote a value that holds ': ' (name: 'a: b'), and indent the "
    "line as its neighbours (a space after '-')",
    "did not find expected key": "this line or the one above is not indented as the other fields of its section",
    "did not find expected '-' indicator": "indent this line as the entries of the list at line {open}, or start "
    "it with '- '",
}
"""The parser's words → the usual slip and its fix (``{open}``: the line where the unclosed part began)."""


def _fix(problem: str, exc: yaml.MarkedYAMLError) -> str:
    """' — <fix>' for a syntax error the parser names in its own words (nothing for others)."""
    mark = exc.context_mark or exc.problem_mark
    fix = _FIXES.get(problem)
    return f" — {fix.format(open=mark.line + 1)}" if fix and mark is not None else ""


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
        problem = _PROBLEMS.get(problem, problem)
        raise error(f"{where}: {at}invalid YAML: {problem}{_tab_hint(text, mark) or _fix(problem, exc)}") from None
    except yaml.YAMLError as exc:
        raise error(f"{where}: invalid YAML: {str(exc).splitlines()[0]}") from None
    except (ValueError, OverflowError, RecursionError) as exc:  # e.g. an out-of-range timestamp
        raise error(f"{where}: invalid YAML value: {exc}") from None
    finally:
        loader.dispose()


_MAGIC = (
    (b"PK\x03\x04", "a zip archive or an Excel workbook"),
    (b"%PDF", "a PDF document"),
    (b"\x89PNG", "a PNG image"),
    (b"\x7fELF", "a program"),
    (b"\x1f\x8b", "a gzip archive"),
)


def _binary_kind(raw: bytes) -> str | None:
    """What a binary file given as YAML looks like by its first bytes (``plan.xlsx`` passed as the scenario),
    None otherwise (other bytes are left to the UTF-8 and YAML checks, with their line and column)."""
    for magic, kind in _MAGIC:
        if raw.startswith(magic):
            return kind
    return None


def _yaml_files(folder: Path) -> list[str]:
    """Names of the YAML files in ``folder`` (at most 200 looked at; none when it cannot be listed)."""
    try:
        names = [e.name for _, e in zip(range(200), folder.iterdir(), strict=False)]
    except OSError:
        return []
    return sorted(n for n in names if n.endswith((".yaml", ".yml")))


def _file_inside(folder: Path) -> str:
    """' — did you mean DIR/scenario.yaml?' for a folder that holds one YAML file of the usual names."""
    names = _yaml_files(folder)
    for usual in ("scenario.yaml", "training.yaml"):
        if usual in names:
            return f" — did you mean {folder / usual}?"
    if len(names) == 1:
        return f" — did you mean {folder / names[0]}?"
    if names:
        return ""
    try:  # a folder of scenario folders (``planner plan examples``): name one of them
        entries = [e for _, e in zip(range(200), folder.iterdir(), strict=False)]
        inner = sorted(e / "scenario.yaml" for e in entries if (e / "scenario.yaml").is_file())
    except OSError:
        return ""
    if not inner:
        return ""
    more = f" (or another of its {len(inner)} scenario folders)" if len(inner) > 1 else ""
    return f" — give one scenario file, e.g. {inner[0]}{more}"


def _nearby_file(path: Path) -> str:
    """' — did you mean X?' for a missing file with a similar YAML file beside it, or the missing folder."""
    import difflib

    folder = path.parent
    if path.is_symlink():  # a dangling link: it was "did you mean <itself>?"
        return f" (a link to {path.readlink()}, which does not exist)"
    if str(path).startswith("~"):
        return " (~ is expanded by the shell only outside quotes: write the full path)"
    if not folder.is_dir():
        return f" (folder {folder} does not exist)"
    # names are compared without their suffix: the shared ".yaml" made "nothere.yaml" close to "t7.yaml"
    by_stem = {Path(n).stem: n for n in _yaml_files(folder) if n != path.name}
    close = difflib.get_close_matches(Path(path.name).stem, list(by_stem), n=1, cutoff=0.6)
    return f" — did you mean {folder / by_stem[close[0]]}?" if close else ""


_STREAMS: dict[str, bytes] = {}
"""Bytes read from a pipe or device (``planner plan <(envsubst < s.yaml)``, ``cat s.yaml | planner plan
/dev/stdin``), by path: a command reads its scenario more than once (the training-file check, then the
loader), and a pipe gives its bytes only once — the second read found it empty ("expected a mapping")."""


def _read_stream(path: Path, max_bytes: int) -> bytes:
    """At most ``max_bytes`` + 1 bytes of a file that is not a regular file (``/dev/zero`` never ends: it was
    read until memory ran out), once per process."""
    key = str(path)
    if key not in _STREAMS:
        with path.open("rb") as stream:
            _STREAMS[key] = stream.read(max_bytes + 1)
    return _STREAMS[key]


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
            raise error(f"{p}: is a directory, expected a {what} file{_file_inside(p)}")
        size = p.stat().st_size
        if size > max_bytes:
            raise error(f"{p}: {size:,} bytes — {what} files are limited to {max_bytes:,} bytes")
        raw = p.read_bytes() if p.is_file() else _read_stream(p, max_bytes)
        if len(raw) > max_bytes:
            raise error(f"{p}: more than {max_bytes:,} bytes — {what} files are limited to {max_bytes:,} bytes")
    except FileNotFoundError:
        stdin = " (to read standard input, give /dev/stdin)" if str(path) == "-" else ""
        raise error(f"{p}: {what} file not found{stdin or _nearby_file(p)}") from None
    except PermissionError:
        raise error(f"{p}: {what} file is not readable (permission denied)") from None
    except OSError as exc:
        raise error(f"{p}: cannot read the {what} file: {exc.strerror}") from None
    kind = _binary_kind(raw)
    if kind is not None:
        raise error(f"{p}: not a text file ({kind}) — give the {what} YAML file")

    def parse() -> Any:
        return parse_yaml_text(_decode(p, raw[:max_bytes], error), p, error)

    if not keep_parsed:
        return parse()
    from planner import parsed_yaml_cache

    return parsed_yaml_cache.parsed(raw, parse)
