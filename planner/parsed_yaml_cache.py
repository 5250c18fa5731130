"""Parsed catalog YAML, kept on disk by content so that a command does not parse the same bytes again.

Every command reads the eight bundled catalog files (about 130 kB). Parsing them with the safety checks
of :mod:`planner.inputs` takes about 0.05 s of a 0.3 s start; reading a parsed copy takes under 1 ms.
A copy is keyed by the SHA-256 of

    the file's bytes ‖ the source of planner/inputs.py (the loader and its limits) ‖ PyYAML's version and
    whether libyaml is used ‖ marshal's format version and the Python version,

so an edited file, a changed loader or another interpreter never reads a stale copy: it parses and
writes a new one. Only data that parsed without error is kept (errors are raised by the parser as
before), and only plain values marshal can hold (dicts, lists, text, numbers, booleans, None); anything
else is simply not kept. The folder is ``$PLANNER_CACHE_DIR``, else ``$XDG_CACHE_HOME/ai-infra-planner``,
else ``~/.cache/ai-infra-planner``; ``PLANNER_CACHE_DIR=""`` switches the cache off, as does a user
without a home folder. A folder that cannot
be written, or a copy that cannot be read, costs a parse and nothing else. At most
:data:`MAX_ENTRIES` copies are kept (the oldest are removed).
"""

from __future__ import annotations

import hashlib
import marshal
import os
import sys
import tempfile
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

MAX_ENTRIES = 64
"""Parsed copies kept; one catalog is 8 files, so several catalogs and versions fit."""

SUFFIX = ".marshal"


def cache_dir() -> Path | None:
    """The folder of parsed copies (module docstring), or None when the cache is switched off."""
    explicit = os.environ.get("PLANNER_CACHE_DIR")
    if explicit is not None:
        return Path(explicit) / "parsed-yaml" if explicit else None
    base = os.environ.get("XDG_CACHE_HOME")
    if not base:
        try:
            base = str(Path.home() / ".cache")
        except (RuntimeError, KeyError):  # no $HOME and no passwd entry (a container's arbitrary uid): no cache
            return None  # (every command that reads the catalog was "internal error: RuntimeError", exit 4)
    return Path(base) / "ai-infra-planner" / "parsed-yaml"


@lru_cache(maxsize=1)
def _parser_fingerprint() -> bytes:
    """What besides the bytes decides the parse: the loader's source, PyYAML, marshal and Python."""
    loader_source = Path(__file__).with_name("inputs.py").read_bytes()
    versions = f"{yaml.__version__}|{yaml.__with_libyaml__}|{marshal.version}|{sys.version_info[:3]}"
    return hashlib.sha256(loader_source).digest() + versions.encode()


def _key(raw: bytes) -> str:
    return hashlib.sha256(raw + b"\0" + _parser_fingerprint()).hexdigest()


def _read(path: Path) -> tuple[bool, Any]:
    """(True, value) from a readable copy, else (False, None)."""
    try:
        return True, marshal.loads(path.read_bytes())
    except (OSError, EOFError, ValueError, TypeError):
        return False, None


def _write(folder: Path, path: Path, value: Any) -> None:
    """Keep ``value`` at ``path`` (atomically: a reader sees the whole copy or none); failures are ignored."""
    try:
        blob = marshal.dumps(value)
    except ValueError:  # a value marshal cannot hold (e.g. a date): not kept
        return
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(blob)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        _prune(folder)
    except OSError:
        return


def _prune(folder: Path) -> None:
    """Remove the oldest copies beyond :data:`MAX_ENTRIES`."""
    copies = sorted(folder.glob(f"*{SUFFIX}"), key=lambda p: p.stat().st_mtime)
    for old in copies[: max(0, len(copies) - MAX_ENTRIES)]:
        old.unlink(missing_ok=True)


def parsed(raw: bytes, parse: Callable[[], Any]) -> Any:
    """The value ``parse()`` returns for the file content ``raw``: read from its kept copy when there is
    one, else parsed (errors propagate unchanged) and kept."""
    folder = cache_dir()
    if folder is None:
        return parse()
    path = folder / f"{_key(raw)}{SUFFIX}"
    hit, value = _read(path)
    if hit:
        return value
    value = parse()
    _write(folder, path, value)
    return value
