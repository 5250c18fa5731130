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
