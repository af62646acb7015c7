"""The model-based pruner (:mod:`mfbo.optimize.pruners.mondrian`): far from every report its
chance reverts to the prior's closed form; a dominated trial is pruned and the best never; no
trial is pruned during the warm-up; its settings are checked; a pickled pruner, a resumed study
and a second handle of a stored study decide as the uninterrupted run."""

import math
import pickle

import numpy as np
import pytest

import mfbo
from mfbo.optimize.pruners.mondrian import Curve, CurveForest, MondrianPruner

SPACE = {"x": (0.0, 1.0), "y": (0.0, 1.0)}


def _curve(params, steps):
    """A learning curve whose final loss is smallest at (0.3, 0.7)."""
    final = (params["x"] - 0.3) ** 2 + (params["y"] - 0.7) ** 2
    return [final + (0.5 + params["x"]) / s for s in range(1, steps + 1)]


def _run(opt, n_trials, steps=9, sign=1.0):
    """Ask, report every step (``sign`` times the loss) and ask after each report; the
    decisions (id, step, prune)."""
    decisions = []
    for i in range(n_trials):
        t = opt.ask()
        values = [sign * v for v in _curve(t.params, steps)]
        for s, v in enumerate(values, start=1):
            opt.report(t, s, v)
            prune = opt.should_prune(t)
            decisions.append((t.id, s, prune))
            if prune:
                opt.tell(t, state="pruned")
                break
        else:
            opt.tell(t, values[-1])
    return decisions


def _configs(n, seed):
    rng = np.random.default_rng(seed)
    return [{"x": float(a), "y": float(b)} for a, b in rng.uniform(0, 1, (n, 2))]


def _optimizer(storage=None, pruner=None, configs=()):
    opt = mfbo.Optimizer(SPACE, surrogate="random", random_state=0, storage=storage,
                         pruner=pruner or MondrianPruner(max_resource=9))
    if configs:
        opt.enqueue(configs)
    return opt


def test_far_from_the_reports_the_chance_is_the_priors():
    # reports in a corner of the configurations and at small budgets; a query at the far
    # corner and at full budget: the forest's prior (mean and sample std of the losses)
    rng = np.random.default_rng(0)
    rule = CurveForest(max_resource=10 ** 6)
    curves = []
    for k in range(30):
        u = rng.uniform(0, 0.05, 2)
        curves.append(Curve(k, u, {s: u.sum() + 1 / s for s in (1, 2, 3)}, 1.0, u.sum()))
    assert rule.feed(curves) == 90
    losses = np.array([v for c in curves for v in c.values.values()])
    mean, std = rule.predict_final([1.0, 1.0], 10 ** 6, 0.4)
    assert mean == pytest.approx(0.4, abs=1e-12)  # its own value: no improvement expected
    assert std == pytest.approx(losses.std(ddof=1), rel=0.01)
    for loss in (0.2, 0.5, 0.9):
        prior = 0.5 * math.erfc((loss - 0.3) / (losses.std(ddof=1) * math.sqrt(2)))
        assert rule.chance([1.0, 1.0], 10 ** 6, loss, 0.3) == pytest.approx(prior, abs=0.01)
    assert rule.feed(curves) == 0  # each report is fed once


def test_a_dominated_trial_is_pruned_and_the_best_never():
    configs = _configs(20, 1)
    opt = _optimizer(configs=configs)
    _run(opt, 20)
    # the best configuration of the space, and one far worse than any trial
    opt.enqueue([{"x": 0.3, "y": 0.7}, {"x": 1.0, "y": 0.0}])
    best = opt.ask()
    for s, v in enumerate(_curve(best.params, 9), start=1):
        opt.report(best, s, v)
        assert not opt.should_prune(best)
    opt.tell(best, v)
    worst = opt.ask()
    opt.report(worst, 1, 10.0)
    assert opt.should_prune(worst)
    assert opt.n_pruned >= 1


def test_nothing_is_pruned_during_the_warm_up():
    opt = _optimizer(pruner=MondrianPruner(max_resource=9, n_startup_trials=4,
                                           n_warmup_steps=3), configs=_configs(10, 2))
    for t_id, s, prune in _run(opt, 10):
        if t_id < 4 or s < 3:
            assert not prune
    # a study with one complete trial that reached step 2 only: nobody reached step 5
    opt = _optimizer(pruner=MondrianPruner(max_resource=9, n_startup_trials=1))
    t = opt.ask()
    opt.report(t, 1, 0.1)
    opt.report(t, 2, 0.1)
    opt.tell(t, 0.1)
    u = opt.ask()
    opt.report(u, 5, 100.0)
    assert not opt.should_prune(u)
    opt.report(u, 1, 100.0)  # at step 1 it is judged (a complete trial reached step 1)
    assert not opt.should_prune(u)  # (not a new interval: 1 is below its latest step 5)


def test_the_decisions_are_those_of_the_seed_and_the_reports():
    a = _run(_optimizer(configs=_configs(25, 3)), 25)
    b = _run(_optimizer(configs=_configs(25, 3)), 25)
    assert a == b and any(p for _, _, p in a)


def test_a_resumed_study_and_a_second_handle_decide_as_the_uninterrupted_run(tmp_path):
    configs = _configs(24, 4)
    whole = _run(_optimizer(configs=configs), 24)
    db = str(tmp_path / "s.db")
    first = _optimizer(storage=db, configs=configs)
    head = _run(first, 10)
    first.close()
    resumed = _optimizer(storage=db)  # the queue is durable; a fresh pruner
    assert head + _run(resumed, 14) == whole
    resumed.close()
    # a second handle of the study, asking about a trial of the first
    other = _optimizer(storage=db)
    lead = _optimizer(storage=db)
    t = lead.ask()
    lead.report(t, 1, 10.0)
    assert other.should_prune(t.id) == lead.should_prune(t) is True
    lead.close()
    other.close()


def test_a_pickled_pruner_decides_as_the_original():
    configs = _configs(24, 5)
    whole = _run(_optimizer(configs=configs), 24)
    opt = _optimizer(configs=configs)
    head = _run(opt, 12)
    opt.pruner = pickle.loads(pickle.dumps(opt.pruner))
    assert head + _run(opt, 12) == whole


@pytest.mark.parametrize("kwargs, name", [
    (dict(max_resource=0), "max_resource"), (dict(max_resource=2.5), "max_resource"),
    (dict(max_resource=9, threshold=0.0), "threshold"),
    (dict(max_resource=9, threshold=1.5), "threshold"),
    (dict(max_resource=9, threshold="low"), "threshold"),
    (dict(max_resource=9, n_startup_trials=0), "n_startup_trials"),
    (dict(max_resource=9, n_warmup_steps=-1), "n_warmup_steps"),
    (dict(max_resource=9, interval_steps=0), "interval_steps"),
    (dict(max_resource=9, n_min_trials=0), "n_min_trials"),
    (dict(max_resource=9, n_estimators=0), "n_estimators"),
    (dict(max_resource=9, min_samples_split=1), "min_samples_split"),
    (dict(max_resource=9, seed=-1), "seed"), (dict(max_resource=9, seed=1.5), "seed")])
def test_bad_settings_are_refused_naming_the_argument(kwargs, name):
    with pytest.raises((ValueError, TypeError), match=name):
        MondrianPruner(**kwargs)


def test_a_pruner_serves_one_search_space_per_study():
    rule = CurveForest(max_resource=4, n_startup_trials=1)
    rule.feed([Curve(0, np.zeros(2), {1: 0.5}, 1.0, 0.5)])
    fed = {k: set(v) for k, v in rule.fed.items()}
    with pytest.raises(ValueError, match="3 coordinates"):
        rule.feed([Curve(1, np.zeros(3), {1: 0.5}, 1.0, None)])
    assert rule.fed == fed and rule.forest.n_samples_seen_ == 1


def test_it_maximises_as_it_minimises():
    configs = _configs(20, 6)

    up = mfbo.Optimizer(SPACE, surrogate="random", direction="maximize",
                        pruner=MondrianPruner(max_resource=9))
    up.enqueue(configs)
    assert _run(up, 20, sign=-1.0) == _run(_optimizer(configs=configs), 20)


def test_repr_reads_as_the_call_that_makes_it():
    p = MondrianPruner(max_resource=27, threshold=0.1, seed=3)
    assert repr(eval(repr(p), {"MondrianPruner": MondrianPruner})) == repr(p)


def test_it_prunes_trials_that_run_in_parallel():
    from concurrent.futures import ThreadPoolExecutor

    def train(x, y, trial):
        values = _curve({"x": x, "y": y}, 9)
        for s, v in enumerate(values, start=1):
            trial.report(v, s)
            if trial.should_prune():
                raise mfbo.TrialPruned()
        return values[-1]
    pruner = MondrianPruner(max_resource=9)
    with ThreadPoolExecutor(2) as pool:
        result = mfbo.minimize(train, SPACE, n_calls=30, n_workers=2, executor=pool,
                               surrogate="random", random_state=0, progress_bar=False,
                               pruner=pruner)
    assert result.n_pruned >= 3 and len(result.trials) == 30
    assert result.best_trial.state == "complete"
    # the forest was fed reports of the study's trials, each once
    fed = pruner.rule("default").fed
    assert fed and all(fed[t.id] <= set(t.intermediate_values) for t in result.trials
                       if t.id in fed)
