"""The pruners (:mod:`mfbo.optimize.pruners`): each decides as Optuna's own pruner does on the
same reported curves (the same trials reporting the same values at the same steps, in the same
interleaved order, asked after every report: the prune/keep decisions must be identical, a
closed comparison); their settings are checked; successive halving's rungs live in the journal,
shared by every handle of a stored study and kept when it is resumed."""

import numpy as np
import pytest

import mfbo
from mfbo.pruners import (HyperbandPruner, MedianPruner, NopPruner, PercentilePruner,
                          SuccessiveHalvingPruner, as_pruner)

from mfbo import pruners

#: (mfbo pruner, the name of optuna's, the arguments both are built with)
PAIRS = {
    "nop": (pruners.NopPruner, "NopPruner", {}),
    "median": (pruners.MedianPruner, "MedianPruner", {}),
    "median-warmup-interval": (pruners.MedianPruner, "MedianPruner",
                               dict(n_startup_trials=2, n_warmup_steps=2, interval_steps=3)),
    "percentile-25": (pruners.PercentilePruner, "PercentilePruner",
                      dict(percentile=25.0, n_startup_trials=3, n_min_trials=2)),
    "percentile-80": (pruners.PercentilePruner, "PercentilePruner",
                      dict(percentile=80.0, n_startup_trials=1)),
    "sh": (pruners.SuccessiveHalvingPruner, "SuccessiveHalvingPruner",
           dict(min_resource=1, reduction_factor=3)),
    "sh-rate-bootstrap": (pruners.SuccessiveHalvingPruner,
                          "SuccessiveHalvingPruner",
                          dict(min_resource=2, reduction_factor=2, min_early_stopping_rate=1,
                               bootstrap_count=2)),
    "hyperband": (pruners.HyperbandPruner, "HyperbandPruner",
                  dict(min_resource=1, max_resource=12, reduction_factor=3)),
    "hyperband-eta2": (pruners.HyperbandPruner, "HyperbandPruner",
                       dict(min_resource=2, max_resource=20, reduction_factor=2,
                            bootstrap_count=1)),
}


def _run_both(optuna, mine, theirs, direction, seed, n_trials=24, n_running=3):
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
    optuna = pytest.importorskip("optuna")
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    mine, theirs, kwargs = PAIRS[name]
    theirs = getattr(optuna.pruners, theirs)
    pruned = 0
    for seed in range(3):
        (ours, optunas), opt, study = _run_both(optuna, mine(**kwargs), theirs(**kwargs),
                                                direction, seed)
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


@pytest.mark.parametrize("make, name", [
    (lambda: PercentilePruner(101.0), "percentile"),
    (lambda: PercentilePruner("50"), "percentile"),
    (lambda: MedianPruner(n_startup_trials=-1), "n_startup_trials"),
    (lambda: MedianPruner(n_warmup_steps=1.5), "n_warmup_steps"),
    (lambda: MedianPruner(interval_steps=0), "interval_steps"),
    (lambda: MedianPruner(n_min_trials=0), "n_min_trials"),
    (lambda: SuccessiveHalvingPruner(min_resource=0), "min_resource"),
    (lambda: SuccessiveHalvingPruner(reduction_factor=1), "reduction_factor"),
    (lambda: SuccessiveHalvingPruner(min_early_stopping_rate=-1), "min_early_stopping_rate"),
    (lambda: SuccessiveHalvingPruner(bootstrap_count=True), "bootstrap_count"),
    (lambda: SuccessiveHalvingPruner(competitors="all"), "competitors"),
    (lambda: HyperbandPruner(max_resource=0), "max_resource"),
    (lambda: HyperbandPruner(min_resource=5, max_resource=4), "max_resource"),
    (lambda: HyperbandPruner(max_resource=9, reduction_factor=1), "reduction_factor"),
])
def test_bad_settings_name_the_argument(make, name):
    with pytest.raises(ValueError, match=name):
        make()


def test_the_pruner_argument_is_checked():
    assert isinstance(as_pruner(None), NopPruner)
    with pytest.raises(TypeError, match="pruner must be"):
        mfbo.Optimizer({"x": (0.0, 1.0)}, pruner="median")
    with pytest.raises(TypeError, match="pruner must be"):
        as_pruner(MedianPruner)  # the class, not a pruner


def test_hyperband_brackets_take_their_shares():
    hb = HyperbandPruner(min_resource=1, max_resource=27, reduction_factor=3)
    assert hb.n_brackets == 4
    counts = [0] * 4
    for i in range(4000):
        counts[hb.bracket("s", i)] += 1
    # shares ceil(4 * 3**(3-s) / (4-s)) = 27, 12, 5, 1 of 45: the early brackets get more
    assert counts[0] > counts[1] > counts[2] > counts[3] > 0


def _climb(opt, trial, values):
    """Report ``values`` at steps 1, 2, ... asking after each; whether it was pruned."""
    for step, v in enumerate(values, start=1):
        opt.report(trial, step, v)
        if opt.should_prune(trial):
            opt.tell(trial, state="pruned")
            return True
    opt.tell(trial, values[-1])
    return False


def test_rungs_are_shared_by_the_handles_of_a_stored_study_and_kept_on_resume(tmp_path):
    db = str(tmp_path / "s.db")
    pruner = SuccessiveHalvingPruner(min_resource=1, reduction_factor=2)
    a = mfbo.Optimizer({"x": (0.0, 1.0)}, surrogate="random", random_state=0, storage=db,
                       pruner=pruner)
    b = mfbo.Optimizer({"x": (0.0, 1.0)}, surrogate="random", random_state=1, storage=db,
                       pruner=pruner)
    assert not _climb(a, a.ask(), [0.1, 0.1, 0.1])  # reaches rungs 0 (step 1) and 1 (step 2)
    t = b.ask()
    # b's trial is judged against a's rung values: worse at rung 0 of two, it stops
    assert _climb(b, t, [0.5, 0.5])
    told = b.trials[t.id]
    assert told.state == "pruned" and told.rungs == {0: 0.5}
    assert told.intermediate_values == {1: 0.5} and told.value is None
    a.close()
    b.close()
    resumed = mfbo.Optimizer({"x": (0.0, 1.0)}, surrogate="random", storage=db)
    assert [t.rungs for t in resumed.trials] == [{0: 0.1, 1: 0.1}, {0: 0.5}]
    assert resumed.n_pruned == 1 and resumed.best_trial.id == 0
    resumed.close()


def test_nop_never_prunes():
    opt = mfbo.Optimizer({"x": (0.0, 1.0)}, surrogate="random")
    for _ in range(3):
        assert not _climb(opt, opt.ask(), [1.0, 2.0, 3.0])
    assert isinstance(opt.pruner, NopPruner)


@pytest.mark.parametrize("pruner", [NopPruner(), MedianPruner(n_warmup_steps=2),
                                    PercentilePruner(25.0, n_min_trials=3),
                                    SuccessiveHalvingPruner(2, 4, 1, 3),
                                    SuccessiveHalvingPruner(competitors="reported"),
                                    HyperbandPruner(2, max_resource=50, reduction_factor=2)])
def test_a_pruner_reads_as_the_call_that_makes_it(pruner):
    assert repr(eval(repr(pruner), vars(mfbo))) == repr(pruner)


@pytest.mark.parametrize("competitors", ["judged", "reported"])
def test_reported_competitors_judge_trials_trained_side_by_side_together(competitors):
    """Six trials report their first step before any is judged, the worst first: judged
    against the trials judged before (Optuna's rule) each is the best so far and goes on;
    against every pending trial that reported the step, the rung keeps the best two of the
    six (6 // 3), as synchronous successive halving does.  A trial that reported the step
    and was stopped without being judged there never counts (it would leave one)."""
    opt = mfbo.Optimizer({"x": (0.0, 1.0)}, surrogate="random", random_state=0,
                         pruner=SuccessiveHalvingPruner(1, 3, competitors=competitors))
    gone = opt.ask()
    opt.report(gone, 1, -1.0)  # the best value, but stopped before it was judged
    opt.tell(gone, state="pruned")
    trials = opt.ask(6)
    for t, v in zip(trials, [0.6, 0.5, 0.4, 0.3, 0.2, 0.1]):
        opt.report(t, 1, v)
    kept = [not opt.should_prune(t) for t in trials]
    assert kept == ([True] * 6 if competitors == "judged" else [False] * 4 + [True] * 2)


def test_a_pruner_pickled_before_its_later_settings_reads_their_defaults():
    import pickle

    pruner = SuccessiveHalvingPruner(1, 3)
    for name in ("_competitors", "_stop_repeats"):
        del pruner.__dict__[name]  # as a pickle made before the setting existed holds it
    old = pickle.loads(pickle.dumps(pruner))
    assert (old._competitors, old._stop_repeats) == ("judged", 0)
    opt = mfbo.Optimizer({"x": (0.0, 1.0)}, surrogate="random", random_state=0, pruner=old)
    t = opt.ask()
    opt.report(t, 1, 0.5)
    assert not opt.should_prune(t)  # alone at its rung: it goes on
