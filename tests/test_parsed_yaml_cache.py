"""The on-disk cache of parsed catalog YAML (planner.parsed_yaml_cache): a kept copy is read instead of
parsing, and only for the very same bytes; errors, switched-off and unwritable caches behave as no cache."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from planner import inputs, parsed_yaml_cache
from planner.catalog.loader import CATALOG_FILES, DEFAULT_CATALOG_DIR, load_catalog
from planner.errors import CatalogError


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("PLANNER_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache" / "parsed-yaml"


def _count_parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    seen: list[str] = []
    real = inputs.parse_yaml_text

    def counting(text: str, path: Any, error: Any = inputs.InputError) -> Any:
        seen.append(Path(path).name)
        return real(text, path, error)

    monkeypatch.setattr(inputs, "parse_yaml_text", counting)
    return seen


def test_second_load_reads_kept_copies_and_gives_the_same_catalog(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    parses = _count_parses(monkeypatch)
    first = load_catalog()
    assert sorted(parses) == sorted(CATALOG_FILES) and len(list(cache.glob("*.marshal"))) == len(CATALOG_FILES)
    parses.clear()
    second = load_catalog()
    assert parses == []
    assert second == first
    assert second.gpu("h100_sxm").memory_gb == first.gpu("h100_sxm").memory_gb > 0


def test_an_edited_file_is_parsed_again(cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "catalogs"
    folder.mkdir()
    for name in CATALOG_FILES:
        (folder / name).write_bytes((DEFAULT_CATALOG_DIR / name).read_bytes())
    before = load_catalog(folder).gpu("h100_sxm").memory_gb
    path = folder / "accelerators.yaml"
    text = path.read_text()
    assert f"memory_gb: {before:g}" in text or f"memory_gb: {before}" in text
    path.write_text(text.replace(f"memory_gb: {before:g}", "memory_gb: 123", 1))
    parses = _count_parses(monkeypatch)
    edited = load_catalog(folder)
    assert parses == ["accelerators.yaml"]
    assert 123 in {g.memory_gb for g in edited.accelerators.values()}


def test_a_broken_file_is_never_kept(cache: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("gpus: [unclosed\n")
    for _ in range(2):
        with pytest.raises(CatalogError, match=r"bad\.yaml: line 2, column 1: invalid YAML"):
            inputs.load_yaml_file(bad, CatalogError, keep_parsed=True)
    assert not cache.exists() or list(cache.glob("*.marshal")) == []


def test_a_damaged_copy_is_parsed_again_and_replaced(cache: Path, tmp_path: Path) -> None:
    good = tmp_path / "good.yaml"
    good.write_text("a: [1, 2.5, x]\n")
    assert inputs.load_yaml_file(good, keep_parsed=True) == {"a": [1, 2.5, "x"]}
    (copy,) = cache.glob("*.marshal")
    copy.write_bytes(b"\x00not marshal")
    assert inputs.load_yaml_file(good, keep_parsed=True) == {"a": [1, 2.5, "x"]}
    assert copy.read_bytes() != b"\x00not marshal"


def test_switched_off_or_unwritable_cache_still_loads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    good = tmp_path / "good.yaml"
    good.write_text("a: 1e3\n")
    monkeypatch.setenv("PLANNER_CACHE_DIR", "")
    assert parsed_yaml_cache.cache_dir() is None
    assert inputs.load_yaml_file(good, keep_parsed=True) == {"a": 1000.0}
    blocker = tmp_path / "file-not-folder"
    blocker.write_text("")
    monkeypatch.setenv("PLANNER_CACHE_DIR", str(blocker))  # mkdir under a file fails: no copy, no error
    assert inputs.load_yaml_file(good, keep_parsed=True) == {"a": 1000.0}


def test_values_marshal_cannot_hold_are_not_kept(cache: Path, tmp_path: Path) -> None:
    dated = tmp_path / "dated.yaml"
    dated.write_text("day: 2026-12-03\n")
    value = inputs.load_yaml_file(dated, keep_parsed=True)
    assert str(value["day"]) == "2026-12-03"
    assert not cache.exists() or list(cache.glob("*.marshal")) == []


def test_oldest_copies_are_pruned(cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parsed_yaml_cache, "MAX_ENTRIES", 3)
    for i in range(5):
        f = tmp_path / f"f{i}.yaml"
        f.write_text(f"n: {i}\n")
        inputs.load_yaml_file(f, keep_parsed=True)
        for copy in cache.glob("*.marshal"):  # distinct, increasing mtimes whatever the clock resolution
            os.utime(copy, (copy.stat().st_mtime - 10, copy.stat().st_mtime - 10))
    assert len(list(cache.glob("*.marshal"))) == 3


def test_default_folder_follows_xdg(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("PLANNER_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert parsed_yaml_cache.cache_dir() == tmp_path / "ai-infra-planner" / "parsed-yaml"
