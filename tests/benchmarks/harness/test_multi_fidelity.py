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


def test_a_batched_initial_design_trains_every_configuration_a_step_then_the_best_first():
    """``initial_steps=1``: the whole initial design reports its first step before any of its
    configurations goes further, and the first to go on is the one best at that step; with
    nothing yet at the later rungs it is trained to full budget straight away."""
    import mfbo

    problem = PROBLEMS["branin-mf"]
    run = bench._mfbo(lambda p: bench._sh_repeats(p, 3), initial_per_dim=5,
                      on_pruned="shift", initial_steps=1)
    events = run(problem, 0, 5 * problem.max_budget)
    design = mfbo.Optimizer(problem.space, random_state=0, n_initial=10).ask(10)
    curves = [problem.curve_of(t.params) for t in design]
    first = min(curves, key=lambda c: c[0])
    assert events[0] == (10 + problem.max_budget - 1, float(first[-1]))
    # one at a time (the default): the first configuration is trained to full budget first
    events = bench._mfbo(lambda p: bench._sh_repeats(p, 3), initial_per_dim=5,
                         on_pruned="shift")(problem, 0, 5 * problem.max_budget)
    assert events[0] == (problem.max_budget, float(curves[0][-1]))


def test_the_best_of_a_front_at_step_one_is_trained_first_and_the_others_stopped_or_go_on():
    """``front=n``: the first ``n`` configurations of the initial design are trained one
    step each and the best of them to full budget before anything else; the others are told
    pruned, or with ``front_rest="continue"`` go on in the order asked (the first of them is
    then alone at every later rung, so it is trained to full budget next)."""
    import mfbo

    problem = PROBLEMS["branin-mf"]
    R = problem.max_budget
    design = mfbo.Optimizer(problem.space, random_state=0, n_initial=10).ask(6)
    curves = [problem.curve_of(t.params) for t in design]
    lead = min(range(6), key=lambda i: curves[i][0])
    for rest in ("pruned", "continue"):
        events = bench._mfbo(lambda p: bench._sh_repeats(p, 3), initial_per_dim=5,
                             on_pruned="shift", front=6, front_rest=rest)(problem, 0, 5 * R)
        assert events[0] == (6 + R - 1, float(curves[lead][-1]))
        if rest == "continue":
            after = next(i for i in range(6) if i != lead)
            assert events[1] == (6 + 2 * (R - 1), float(curves[after][-1]))
        else:
            assert events[1][1] not in {float(c[-1]) for c in curves}


def test_the_start_options_are_checked():
    with pytest.raises(ValueError, match="front_rest"):
        bench._mfbo(bench._successive_halving, front=3, front_rest="later")
    with pytest.raises(ValueError, match="sampler"):
        bench._mfbo(bench._successive_halving, lambda p, s: None, initial_steps=1)


class _Rows:
    """A problem whose tabulated configuration is the params' ``row`` (None: computed)."""

    @staticmethod
    def row_of(params):
        return params["row"]


def _done(i, row, steps, state, origin):
    from mfbo.study.trial import Trial

    return Trial(id=i, params={"row": row}, state=state, origin=origin,
                 intermediate_values={s: 1.0 for s in range(1, steps + 1)})


def test_spend_counts_the_steps_of_copies_of_a_configuration_trained_to_full_budget():
    trials = [_done(0, 7, 9, "complete", "design"), _done(1, 7, 1, "pruned", "design"),
              _done(2, 3, 3, "pruned", "design"), _done(3, 3, 9, "complete", "parzen"),
              _done(4, 7, 3, "pruned", "parzen"), _done(5, 3, 3, "pruned", "acquisition"),
              _done(6, 3, 2, "pending", "parzen"), _done(7, None, 9, "complete", "local"),
              _done(8, None, 1, "pruned", "local")]
    out = bench.spend(_Rows, trials)
    # trial 1 repeats 0 in the design; 2 comes before row 3 was complete, 3 itself is not a copy
    assert out["design"] == {"trials": 3, "steps": 13, "copies": 1, "copy_steps": 1}
    assert out["model"] == {"trials": 6, "steps": 27, "copies": 3, "copy_steps": 8}
    assert out["by_origin"] == {"parzen": 2, "acquisition": 1}


def test_a_traced_run_is_the_same_run_and_shows_where_its_cost_went():
    problem = PROBLEMS["boosting-iris"]
    seen = []
    method = bench.METHODS["mondrian-sh"]
    traced = method(problem, 0, 6 * problem.max_budget, trace=seen.append)
    assert traced == method(problem, 0, 6 * problem.max_budget) and len(seen) == 1
    trials = seen[0].study.trials
    out = bench.spend(problem, trials)
    # every step of the run is a step of the design or after it
    assert out["design"]["steps"] + out["model"]["steps"] == sum(
        len(t.intermediate_values) for t in trials) >= 6 * problem.max_budget
    text = bench.trace("mondrian-sh", ["branin-mf"], 1)
    assert text.splitlines()[2].startswith("| branin-mf |") and "| 0.0 (0%) |" in text
    with pytest.raises(ValueError, match="method"):
        bench.trace("smac-mf", ["branin-mf"], 1)
    with pytest.raises(ValueError, match="method"):
        bench.trace("no-such-method", ["branin-mf"], 1)
    for bad in (0, True, 1.5):
        with pytest.raises(ValueError, match="seeds"):
            bench.trace("mondrian-sh", ["branin-mf"], bad)
