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


@pytest.mark.parametrize("method", ["mondrian-hyperband", "mondrian-sh-from3",
                                    "mondrian-sh", "tpe-median", "random-hyperband"])
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


def test_the_iris_boosting_curve_is_a_dev_log_loss_that_falls_towards_zero():
    """``boosting-iris`` (dev): a boosting round a step on a data set of sklearn-tune's dev
    split, its loss the validation log-loss, which the best tabulated configuration drives
    below a tenth of its first round's (the classes are nearly separable)."""
    from benchmarks.problems import multi_fidelity as mf

    assert "boosting-iris" in mf.DEV and mf.FAMILIES["boosting-iris"] == "mf-boosting"
    p = PROBLEMS["boosting-iris"]
    params = {"learning_rate": 0.3993913359065052, "max_leaf_nodes": 54,
              "min_samples_leaf": 2, "l2_regularization": 8.13991084516204e-06}
    curve = list(p.curve(params))
    assert len(curve) == p.max_budget and curve == list(p.curve(params))
    assert curve[-1] < 0.05 and curve[-1] < 0.1 * curve[0]


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
