"""Error types the CLI maps to exit codes, and which id a user meant (the "did you mean" of every input: scenario
fields, catalog lookups, command-line options).

CatalogError / ScenarioError -> exit 2 (invalid input), InfeasiblePlan -> exit 3,
SolverError / AuditError -> exit 4.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections.abc import Iterable


class PlannerError(Exception):
    """Base class of every error the planner raises on purpose."""

    exit_code = 4


class InputError(PlannerError):
    """Invalid user input (catalog, scenario or command-line value)."""

    exit_code = 2


class CatalogError(InputError):
    """A catalog file is malformed or refers to an unknown record."""


class ScenarioError(InputError):
    """A scenario file is malformed or refers to an unknown record."""


class InfeasiblePlan(PlannerError):
    """No plan satisfies the requirements; the message says which requirement binds."""

    exit_code = 3


class SolverError(PlannerError):
    """The MILP solver failed (not infeasibility: a crash, an unknown status, ...)."""

    exit_code = 4


class AuditError(PlannerError):
    """A solved plan violates an SLO or memory limit when re-evaluated with the exact ledgers."""

    exit_code = 4


def inline_text(text: object) -> str:
    """Text from the user's file as an error message quotes it: as written where it is one line of printable
    characters, else escaped (``'a\\nb'``) — a key or name holding a newline split the one-line message."""
    written = str(text)
    return written if written.isprintable() else repr(written)


NEAR_MATCH = 0.8
"""difflib ratio at or above which one of the choices a value begins is named alone."""


def _spelled(name: str) -> str:
    """``name`` as an id would spell it, for matching: lower case, letters and digits only."""
    return re.sub(r"[^a-z0-9]", "", name.lower())


def meant_ids(value: str, choices: Iterable[str]) -> list[str]:
    """The choices ``value`` plainly means: the one it spells in another case or with other separators
    (A100_SXM_80GB, Llama-3.1-70B, trt-llm), else the up to three it begins (a100 → a100_pcie_80gb,
    a100_sxm_80gb; of those the one it is a letter short of: gpu → gpus, not gpu_share_fracs); else none."""
    options = sorted(set(choices))
    key = _spelled(value)
    spelled = {_spelled(o): o for o in options}
    if key in spelled:
        return [spelled[key]]
    starting = [o for o in options if len(key) >= 2 and _spelled(o).startswith(key)]
    near = [o for o in starting if difflib.SequenceMatcher(None, key, _spelled(o)).ratio() >= NEAR_MATCH]
    if len(near) == 1:
        return near
    return starting if len(starting) <= 3 else []


def did_you_mean(value: str, choices: Iterable[str]) -> str:
    """Return ``" — did you mean x?"`` for the choice meant (:func:`meant_ids`, else the closest), or a list
    of valid values.

    >>> did_you_mean("h100sxm", ["h100_sxm", "h200_sxm"])
    ' — did you mean h100_sxm?'
    >>> did_you_mean("A100", ["a100_pcie_80gb", "a100_sxm_80gb", "a10g"])
    ' — did you mean a100_pcie_80gb or a100_sxm_80gb?'
    """
    options = sorted(set(choices))
    meant = meant_ids(value, options)
    if meant:
        return f" — did you mean {' or '.join(meant)}?"
    key = _spelled(value)
    spelled = {_spelled(o): o for o in options}
    close = difflib.get_close_matches(key, list(spelled), n=1, cutoff=0.5) or difflib.get_close_matches(
        value, options, n=1, cutoff=0.5
    )
    if close:
        return f" — did you mean {spelled.get(close[0], close[0])}?"
    shown = ", ".join(options[:8]) + (", ..." if len(options) > 8 else "")
    return f" — valid values: {shown}"


_ID_AFFIXES = ("nvidia_", "amd_", "intel_", "meta_", "google_")
"""Vendor and organisation prefixes a written id may carry (``NVIDIA H100`` → h100: :func:`closest_id`)."""
_ID_SUFFIXES = ("_instruct", "_chat", "_hf", "_base", "_it")
"""Variant suffixes a written model id may carry (``Llama-3.1-8B-Instruct``)."""
_ID_ALIASES = {
    "awq": "int4", "gptq": "int4", "w4a16": "int4", "gptq_int4": "int4", "int4_awq": "int4", "q4_k_m": "int4",
    "q4_0": "int4", "w8a8": "int8", "w8a16": "int8", "q8_0": "int8", "e4m3": "fp8", "fp8_e4m3": "fp8",
    "amazon": "aws", "amazon_web_services": "aws", "ec2": "aws", "google": "gcp", "google_cloud": "gcp",
    "microsoft": "azure", "microsoft_azure": "azure",
}
"""Names a user writes for an id: quantization methods and file formats → the storage format (awq → int4),
company names → their cloud's provider id (amazon → aws: it suggested lambda)."""


def id_spelling(value: str) -> str:
    """The id form of ``value``: accents dropped, lowercase, runs of other characters → one underscore
    (``H100-SXM`` → h100_sxm, ``Zürich`` → zurich)."""
    ascii_text = unicodedata.normalize("NFKD", value).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]+", "_", ascii_text.lower()).strip("_")


def _id_forms(value: str) -> list[str]:
    """``value`` in id form, then without an organisation (``meta-llama/Llama-3.1-8B`` → llama_3_1_8b), a
    vendor prefix (``NVIDIA H100`` → h100) or a variant suffix (``_instruct``)."""
    forms = [id_spelling(value), id_spelling(value.rsplit("/", 1)[-1])]
    for form in list(forms):
        for prefix in _ID_AFFIXES:
            if form.startswith(prefix):
                forms.append(form.removeprefix(prefix))
    for form in list(forms):
        for suffix in _ID_SUFFIXES:
            if form.endswith(suffix):
                forms.append(form.removesuffix(suffix))
    return [f for i, f in enumerate(forms) if f and f not in forms[:i]]


def closest_id(value: str, choices: Iterable[str]) -> str | None:
    """The valid id ``value`` most plausibly means (its id form, a close spelling of it, or an id starting
    with the same first word: ``NVIDIA H100 80GB HBM3`` → h100_sxm), None when nothing is close."""
    options = sorted(set(choices))
    forms = _id_forms(value)
    forms += [_ID_ALIASES[f] for f in forms if f in _ID_ALIASES]  # awq → int4: the method's storage format
    for form in forms:
        if form in options:
            return form
    for form in forms:
        close = difflib.get_close_matches(form, options, n=1, cutoff=0.6)
        if close:
            return close[0]
    for form in forms:
        head = form.split("_", 1)[0]
        same_head = [o for o in options if o.split("_", 1)[0] == head]
        if same_head:
            return (difflib.get_close_matches(form, same_head, n=1, cutoff=0.0) or same_head)[0]
    close = difflib.get_close_matches(value, options, n=1, cutoff=0.5)
    return close[0] if close else None


def suggest_id(value: str, choices: Iterable[str]) -> str:
    """``" — did you mean x?"`` (:func:`closest_id`), else the valid values (as :func:`did_you_mean`)."""
    options = sorted(set(choices))
    best = closest_id(value, options)
    meant = meant_ids(value, options)  # A100 → a100_pcie_80gb or a100_sxm_80gb, not the closest (a10g)
    if meant and best not in meant:
        return f" — did you mean {' or '.join(meant)}?"
    return f" — did you mean {best}?" if best is not None else did_you_mean(value, options)
