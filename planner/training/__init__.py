"""Training planner (issue 14): GPUs, parallelism, memory and schedule to train a model by a deadline.

Same house as the serving optimizer: :mod:`.scenario` (the question), :mod:`.terms` (model FLOPs, GPU peak
and links), :mod:`.memory` and :mod:`.layout` (the card-4 ledgers evaluated for one layout),
:mod:`.pricing` (the run's cash lines), :mod:`.search` (the optimizer: enumerate, keep what fits, cheapest
that meets the deadline), :mod:`.readout` (:class:`~.readout.TrainingPlan`, the only thing outputs read),
:mod:`.plan` (orchestration) and :mod:`.predict` (one given layout).
"""
