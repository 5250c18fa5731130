"""Atomic file output: write to a temporary file in the target folder, then rename over the target.

A failure never leaves a partial file and never destroys an existing one.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

from planner.errors import InputError


@contextlib.contextmanager
def atomic_path(target: Path) -> Iterator[Path]:
    """Yield a temporary path next to ``target``; rename it over ``target`` only if the block succeeds."""
    folder = target.parent if str(target.parent) else Path(".")
    if not folder.is_dir():
        raise InputError(f"{target}: folder {folder} does not exist")
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        yield tmp
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp creates 0600; give the result the usual file mode
        os.replace(tmp, target)
    finally:
        if tmp.exists():
            tmp.unlink()


def atomic_write_text(target: Path, text: str) -> None:
    """Write ``text`` to ``target`` atomically (UTF-8)."""
    with atomic_path(target) as tmp:
        tmp.write_text(text, encoding="utf-8")


def atomic_write(target: Path, writer: Callable[[Path], None]) -> None:
    """Call ``writer(tmp_path)`` and move the result over ``target`` atomically."""
    with atomic_path(target) as tmp:
        writer(tmp)
