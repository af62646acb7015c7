"""The pruners' settings are checked, and successive halving's rungs live in the journal:
shared by every handle of a stored study and kept when it is resumed."""

import pytest

import mfbo
from mfbo.pruners import (HyperbandPruner, MedianPruner, NopPruner, PercentilePruner,
                          SuccessiveHalvingPruner, as_pruner)


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
