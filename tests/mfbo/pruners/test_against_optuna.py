"""Each pruner decides as Optuna's own pruner does on the same reported curves: the same
trials reporting the same values at the same steps, in the same interleaved order, asked after
every report; the prune/keep decisions must be identical (a closed comparison)."""

import numpy as np
import pytest

optuna = pytest.importorskip("optuna")

import mfbo  # noqa: E402
from mfbo import pruners  # noqa: E402

optuna.logging.set_verbosity(optuna.logging.WARNING)

#: (mfbo pruner, optuna pruner) built from the same arguments
PAIRS = {
    "nop": (pruners.NopPruner, optuna.pruners.NopPruner, {}),
    "median": (pruners.MedianPruner, optuna.pruners.MedianPruner, {}),
    "median-warmup-interval": (pruners.MedianPruner, optuna.pruners.MedianPruner,
                               dict(n_startup_trials=2, n_warmup_steps=2, interval_steps=3)),
    "percentile-25": (pruners.PercentilePruner, optuna.pruners.PercentilePruner,
                      dict(percentile=25.0, n_startup_trials=3, n_min_trials=2)),
    "percentile-80": (pruners.PercentilePruner, optuna.pruners.PercentilePruner,
                      dict(percentile=80.0, n_startup_trials=1)),
    "sh": (pruners.SuccessiveHalvingPruner, optuna.pruners.SuccessiveHalvingPruner,
           dict(min_resource=1, reduction_factor=3)),
    "sh-rate-bootstrap": (pruners.SuccessiveHalvingPruner,
                          optuna.pruners.SuccessiveHalvingPruner,
                          dict(min_resource=2, reduction_factor=2, min_early_stopping_rate=1,
                               bootstrap_count=2)),
    "hyperband": (pruners.HyperbandPruner, optuna.pruners.HyperbandPruner,
                  dict(min_resource=1, max_resource=12, reduction_factor=3)),
    "hyperband-eta2": (pruners.HyperbandPruner, optuna.pruners.HyperbandPruner,
                       dict(min_resource=2, max_resource=20, reduction_factor=2,
                            bootstrap_count=1)),
}


def _run_both(mine, theirs, direction, seed, n_trials=24, n_running=3):
    """Drive an mfbo optimizer and an optuna study through one random schedule; the
    decisions of each (trial id, step, prune?) in order."""
    rng = np.random.default_rng(seed)
    opt = mfbo.Optimizer({"x": (0.0, 1.0)}, surrogate="random", random_state=seed,
                         direction=direction, pruner=mine, study_name="cmp")
    study = optuna.create_study(direction=direction, pruner=theirs, study_name="cmp",
                                sampler=optuna.samplers.RandomSampler(seed=seed))
    sign = 1.0 if direction == "minimize" else -1.0
    running = {}  # id -> (mfbo trial, optuna trial, steps left, curve level, next step)
    decisions = ([], [])
    started = 0
    while started < n_trials or running:
        if started < n_trials and (len(running) < n_running and rng.random() < 0.6
                                   or not running):
            t, u = opt.ask(), study.ask()
            assert t.id == u.number
            level = np.round(rng.uniform(0, 1), 1)  # ties happen: they test the <= rules
            running[t.id] = [t, u, int(rng.integers(4, 16)), level, 0]
            started += 1
            continue
        tid = list(running)[rng.integers(len(running))]
        t, u, left, level, step = running[tid]
        loss = np.round(level + 1.0 / (step + 1) + rng.normal(0, 0.05), 2)
        value = float(sign * loss)
        opt.report(t, step, value)
        u.report(value, step)
        mine_says, theirs_says = opt.should_prune(t), u.should_prune()
        decisions[0].append((tid, step, mine_says))
        decisions[1].append((tid, step, theirs_says))
        left -= 1
        if theirs_says or left == 0:
            del running[tid]
            if theirs_says:
                opt.tell(t, state="pruned")
                study.tell(u, state=optuna.trial.TrialState.PRUNED)
            else:
                opt.tell(t, value)
                study.tell(u, value)
        else:
            # steps are irregular at times: the interval rules see gaps
            running[tid][2:] = [left, level, step + int(rng.integers(1, 3))]
    opt.close()
    return decisions, opt, study


@pytest.mark.parametrize("direction", ["minimize", "maximize"])
@pytest.mark.parametrize("name", list(PAIRS))
def test_same_decisions_as_optuna(name, direction):
    mine, theirs, kwargs = PAIRS[name]
    pruned = 0
    for seed in range(3):
        (ours, optunas), opt, study = _run_both(mine(**kwargs), theirs(**kwargs), direction,
                                                seed)
        assert ours == optunas
        pruned += sum(p for *_, p in ours)
        # the states and curves are Optuna's too
        states = [t.state.name.lower() for t in study.trials]
        assert [t.state for t in opt.trials] == states
        assert [t.intermediate_values for t in opt.trials] == \
            [t.intermediate_values for t in study.trials]
        assert opt.n_pruned == states.count("pruned")
    if name != "nop":
        assert pruned > 0  # the comparison saw prune decisions, not only keeps
