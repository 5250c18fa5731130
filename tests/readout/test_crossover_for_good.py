"""The crossover month is when buying gets ahead for good (QA: owned GPUs serving alike until month 17, then
buying behind and ending $332,988 against $213,773, read "crossover month 1")."""

from __future__ import annotations

from planner.readout.ledger import CashLine, CostLedger, crossover_month


def _ledger(flows: list[float]) -> CostLedger:
    return CostLedger(len(flows), tuple(CashLine(m, "rent", "x", "rent", v, v) for m, v in enumerate(flows)), 1.0)


def test_equal_then_behind_is_no_crossover() -> None:
    renting = _ledger([10.0] * 6)
    buying = _ledger([10.0, 10.0, 10.0, 30.0, 10.0, 10.0])  # equal through month 2, behind from month 3 on
    assert crossover_month(buying, renting) is None


def test_ahead_then_behind_then_ahead_counts_the_last_lead() -> None:
    renting = _ledger([10.0] * 6)  # cumulative 10 20 30 40 50 60
    buying = _ledger([5.0, 5.0, 40.0, 0.0, 0.0, 0.0])  # 5 10 50 50 50 50: ahead, behind, ahead from month 4
    # the first month of the final run where buying is at most renting (a tie counts), below at the end
    assert crossover_month(buying, renting) == 4


def test_ending_level_is_no_crossover() -> None:
    assert crossover_month(_ledger([5.0, 15.0]), _ledger([10.0, 10.0])) is None  # 5 20 vs 10 20: never below at the end
