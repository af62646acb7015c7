"""The multi-fidelity benchmark (benchmarks/harness/multi_fidelity.py): scores by cost level
and the cost to reach a target read the runs' events as defined; a method's run spends the
cost it is given, counts only configurations trained to full budget and repeats itself for a
seed; the report ranks."""

import math

import pytest

from benchmarks.harness import multi_fidelity as bench
from benchmarks.problems.multi_fidelity import PROBLEMS


def _record(events, method="m", seed=0, problem="p", max_budget=10):
    return {"problem": problem, "method": method, "seed": seed, "events": events,
            "max_budget": max_budget, "optimum": 0.0}


def test_scores_and_costs_read_the_events():
    r = _record([(10, 3.0), (25, 2.0), (70, 1.0)])
    assert bench.score_at(r, 1) == 3.0 and bench.score_at(r, 5) == 2.0
    assert bench.score_at(r, 7) == 1.0 and bench.score_at(_record([(20, 1.0)]), 1) is None
    assert bench.cost_to_reach(r, 2.0) == 25 and bench.cost_to_reach(r, 0.5) == math.inf


@pytest.mark.parametrize("method", ["mondrian-hyperband", "mondrian-sh-from3", "tpe-median",
                                    "random-hyperband"])
def test_a_run_spends_its_cost_and_counts_full_budgets_only(method):
    problem = PROBLEMS["branin-mf"]
    events = bench.METHODS[method](problem, 0, 3 * problem.max_budget)
    costs = [c for c, _ in events]
    assert costs == sorted(costs) and costs[-1] <= 4 * problem.max_budget
    for _, value in events:  # each a full-budget value of a configuration of the space
        assert value >= problem.optimum - 1e-9
    # seeded: with Optuna's HyperbandPruner too (at this cost its brackets differ by name)
    again = [bench.METHODS[method](problem, 0, 10 * problem.max_budget) for _ in range(2)]
    assert again[0] == again[1]


def test_the_report_ranks_methods_per_cost_level():
    records = []
    for seed in range(3):
        records.append(_record([(10, 1.0)], "mondrian", seed))
        records.append(_record([(5, 0.5)], "mondrian-model", seed))
        records.append(_record([(200, 0.1)], "tpe-median", seed))
    text = bench.summarise(records)
    lines = [line for line in text.splitlines() if line.startswith("| 5 x")]
    assert lines == ["| 5 x max budget | 2.00 | 1.00 | 3.00 |"]
    assert "| 20 x max budget | 3.00 | 2.00 | 1.00 |" in text
    # mondrian-model reaches mondrian's 1.0 at cost 5 (mondrian at 10): a ratio of 0.5
    assert "| mondrian-model | 0.50 (0.50) | 0.50 |" in text
    assert "| tpe-median | 20.00 (20.00) | 20.00 |" in text
