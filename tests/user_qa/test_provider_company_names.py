"""A cloud written by its company's name is suggested as its provider id (`rent_providers: [amazon]` said
"did you mean lambda?")."""

from __future__ import annotations

import pytest

from planner.errors import closest_id

PROVIDERS = ["aws", "azure", "coreweave", "gcp", "hyperstack", "lambda", "runpod", "tensorwave", "vultr"]


@pytest.mark.parametrize(
    ("written", "meant"),
    [
        ("amazon", "aws"),
        ("Amazon Web Services", "aws"),
        ("Google", "gcp"),
        ("google-cloud", "gcp"),
        ("Microsoft", "azure"),
    ],
)
def test_company_names_mean_their_cloud(written: str, meant: str) -> None:
    assert closest_id(written, PROVIDERS) == meant

