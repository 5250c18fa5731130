"""Safe file output: paths are checked before any work, files are written atomically.

``check_output_file`` / ``check_output_dir`` refuse, with exit 2 and one line, an output path that cannot
or must not be written: a missing or read-only folder, a directory given as a file, a read-only file, a
device or ``/proc`` / ``/sys`` / ``/dev`` path, or one of the command's input files. The CLI calls them
before solving, so a bad path never costs a solve.

``atomic_path`` writes to a temporary file in the target folder and renames it over the target only when
the block succeeds. A failure, Ctrl-C or SIGTERM (see planner/cli/guard.py) removes the temporary file and
leaves any previous output unchanged.

``write_workbook`` saves an openpyxl workbook through ``atomic_path``. openpyxl stamps the write time into
the file (docProps/core.xml "created"/"modified", which Excel shows under File › Info, and every zip
entry), so two writes of the same plan differ in those bytes only. With ``SOURCE_DATE_EPOCH`` set (the
reproducible-builds convention: whole seconds since 1970-01-01 UTC) every one of those stamps is that time
instead, and the same input gives a byte-identical workbook.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import signal
import stat
import tempfile
import zipfile
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from planner.errors import InputError

SYSTEM_ROOTS = (Path("/proc"), Path("/sys"), Path("/dev"))
"""Pseudo file systems no output may go to."""


def _under_system_root(path: Path) -> Path | None:
    resolved = path.resolve()
    for root in SYSTEM_ROOTS:
        if resolved == root or root in resolved.parents:
            return root
    return None


def _writable(path: Path) -> bool:
    """Writable by this process, and (even for root) not marked read-only by its permission bits."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return False
    return os.access(path, os.W_OK) and bool(mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))


def _check_folder(folder: Path, shown: str) -> None:
    if not folder.exists():
        raise InputError(f"{shown}: folder {folder} does not exist — create it first or choose another path")
    if not folder.is_dir():
        raise InputError(f"{shown}: {folder} is not a folder")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise InputError(f"{shown}: folder {folder} is not writable — choose another path")


def check_output_file(path: Path | str, option: str, inputs: Iterable[Path | str] = ()) -> None:
    """Refuse (InputError, exit 2) a file path that must not be written; see the module docstring."""
    target = Path(path)
    shown = f"{option} {target}"
    root = _under_system_root(target)
    if root is not None:
        raise InputError(f"{shown}: cannot write under {root} — choose a path in a normal folder")
    if target.is_dir():
        suffix = target.suffix or (".json" if "json" in option else ".xlsx")
        raise InputError(f"{shown}: is a directory — give a file name, e.g. {target / ('plan' + suffix)}")
    for source in inputs:
        source_path = Path(source)
        if source_path.exists() and target.exists() and source_path.resolve() == target.resolve():
            raise InputError(f"{shown}: that is an input file of this command — choose another path")
    _check_folder(target.parent if str(target.parent) else Path("."), shown)
    if target.exists():
        if not target.is_file():
            raise InputError(f"{shown}: exists and is not a regular file — choose another path")
        if not _writable(target):
            raise InputError(
                f"{shown}: the existing file is read-only — choose another path or make it writable"
            )


def check_output_dir(path: Path | str, option: str) -> None:
    """Refuse a folder for output files (e.g. --plots) that does not exist and cannot be created here, or that
    the system refuses to look at (a name over 255 bytes was "internal error: OSError", exit 4)."""
    try:
        _check_output_dir(Path(path), option)
    except OSError as exc:
        raise InputError(f"{option} {path}: {exc.strerror or exc} — choose another folder") from None


def _check_output_dir(target: Path, option: str) -> None:
    shown = f"{option} {target}"
    root = _under_system_root(target)
    if root is not None:
        raise InputError(f"{shown}: cannot write under {root} — choose a path in a normal folder")
    if target.exists():
        if not target.is_dir():
            raise InputError(f"{shown}: is a file, expected a folder")
        if not os.access(target, os.W_OK | os.X_OK):
            raise InputError(f"{shown}: folder is not writable — choose another folder")
        return
    _check_folder(target.parent if str(target.parent) else Path("."), shown)


@contextlib.contextmanager
def atomic_path(target: Path) -> Iterator[Path]:
    """Yield a temporary path next to ``target``; rename it over ``target`` only if the block succeeds."""
    check_output_file(target, "output")
    folder = target.parent if str(target.parent) else Path(".")
    tmp: Path | None = None
    blocked = {signal.SIGINT, signal.SIGTERM}
    try:
        previous = signal.pthread_sigmask(signal.SIG_BLOCK, blocked)  # no signal between create and track
        try:
            fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
            tmp = Path(tmp_name)
            os.close(fd)
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, previous)
        yield tmp
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp creates 0600; give the result the usual file mode
        os.replace(tmp, target)
    finally:
        if tmp is not None and tmp.exists():
            tmp.unlink()


def atomic_write_text(target: Path, text: str) -> None:
    """Write ``text`` to ``target`` atomically (UTF-8)."""
    with atomic_path(target) as tmp:
        tmp.write_text(text, encoding="utf-8")


def atomic_write(target: Path, writer: Callable[[Path], None]) -> None:
    """Call ``writer(tmp_path)`` and move the result over ``target`` atomically."""
    with atomic_path(target) as tmp:
        writer(tmp)


SOURCE_DATE_EPOCH = "SOURCE_DATE_EPOCH"
"""Environment variable fixing the time written into workbooks (seconds since 1970-01-01 UTC)."""
ZIP_EPOCH = datetime(1980, 1, 1, tzinfo=UTC)
"""The earliest time a zip entry can carry; an earlier SOURCE_DATE_EPOCH is raised to it."""


def fixed_write_time() -> datetime | None:
    """The time SOURCE_DATE_EPOCH fixes (UTC, at least 1980-01-01), None when it is unset or empty; a value
    that is not whole seconds is a usage error (exit 2) naming a valid one."""
    raw = os.environ.get(SOURCE_DATE_EPOCH, "").strip()
    if not raw:
        return None
    if not re.fullmatch(r"\d{1,11}", raw):
        raise InputError(
            f"{SOURCE_DATE_EPOCH}={raw!r}: expected whole seconds since 1970-01-01 UTC "
            f"(e.g. {SOURCE_DATE_EPOCH}=1767225600 for 2026-01-01), or unset it to stamp the write time"
        )
    return max(datetime.fromtimestamp(int(raw), UTC), ZIP_EPOCH)


def restamped_xlsx(xlsx: bytes, stamp: datetime) -> bytes:
    """``xlsx`` with every write time openpyxl put in it set to ``stamp``: the document's created and
    modified properties (docProps/core.xml) and each zip entry's time; the contents are unchanged."""
    w3c = stamp.strftime("%Y-%m-%dT%H:%M:%SZ").encode()
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(xlsx)) as zin, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zout:
        for info in zin.infolist():
            data = zin.read(info)
            if info.filename == "docProps/core.xml":
                data = re.sub(rb"(<dcterms:(?:created|modified)\b[^>]*>)[^<]*", lambda m: m.group(1) + w3c, data)
            entry = zipfile.ZipInfo(info.filename, date_time=stamp.timetuple()[:6])
            entry.compress_type, entry.external_attr = zipfile.ZIP_DEFLATED, info.external_attr
            zout.writestr(entry, data)
    return out.getvalue()


def write_workbook(target: Path, workbook: Any) -> None:
    """Save the openpyxl ``workbook`` to ``target`` atomically, with SOURCE_DATE_EPOCH's time in place of
    the write time when it is set (module docstring)."""
    stamp = fixed_write_time()
    if stamp is None:
        atomic_write(target, workbook.save)
        return
    buffer = io.BytesIO()
    workbook.save(buffer)
    with atomic_path(target) as tmp:
        tmp.write_bytes(restamped_xlsx(buffer.getvalue(), stamp))
