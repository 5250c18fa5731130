"""Input bounds of a ``kind: training`` scenario and of ``planner predict-train`` (one place, no pydantic:
the CLI checks its options with them before loading anything heavy)."""

from __future__ import annotations

MAX_TRAINING_TOKENS = 1e16
"""Training tokens D at most (about 700× Llama 3's 15T): the step count stays an exact integer."""
MAX_DAYS = 3650.0
"""A deadline or a setup time, days (ten years)."""
MAX_GLOBAL_BATCH_SEQUENCES = 1_000_000_000
"""Sequences per optimizer step (the layouts' DP degrees are its divisors)."""
MAX_LAYERS = 100_000
"""Layers of an inline architecture."""
MAX_DIMENSION = 10_000_000
"""Any width, head count or vocabulary of an inline architecture."""

SERVING_ECONOMICS = frozenset(("spot_availability_frac", "spot_preemption_overhead_frac", "max_spot_frac", "purchase_every_months"))
"""Economics fields only `planner plan` reads (a training run rents on demand and orders its nodes once)."""
SERVING_FIELDS = ("workloads", "rental_kinds", "rent_providers", "budget", "horizon_months", "period_months", "max_batch")
"""Serving scenario fields a training file may carry over (an unknown field got "did you mean restart_s?")."""
