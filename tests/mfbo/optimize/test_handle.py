"""Objectives of :func:`mfbo.minimize` that report through a ``trial`` argument and stop by
raising :class:`mfbo.TrialPruned`; objectives without it are called as before."""

import os
import pickle
from concurrent.futures import ThreadPoolExecutor

import pytest

import mfbo
from mfbo.optimize.handle import TrialHandle, takes_trial

SPACE = {"x": (0.0, 1.0), "y": (0.0, 1.0)}


def curve(x, y, step):
    """A learning curve: the loss after ``step`` epochs of the configuration ``(x, y)``."""
    return (x - 0.3) ** 2 + y + 1.0 / (step + 1)


def learner(x, y, trial):
    for step in range(8):
        trial.report(curve(x, y, step), step)
        if trial.should_prune():
            raise mfbo.TrialPruned(f"stopped at step {step}")
    return curve(x, y, 7)


def test_an_objective_reporting_through_its_trial_is_pruned():
    res = mfbo.minimize(learner, SPACE, n_calls=20, surrogate="random", random_state=0,
                        progress_bar=False, pruner=mfbo.MedianPruner(n_startup_trials=3))
    states = [t.state for t in res.trials]
    assert len(states) == 20 and "pruned" in states and states.count("failed") == 0
    for t in res.trials:
        assert t.intermediate_values  # every trial reported, pruned or not
        steps = sorted(t.intermediate_values)
        assert steps == list(range(len(steps)))
        if t.state == "pruned":
            assert t.value is None and len(steps) < 8 and t.error is None
        else:
            assert len(steps) == 8 and t.value == t.intermediate_values[7]
    assert res.best_trial.state == "complete"
    assert res.best_value == min(t.value for t in res.trials if t.state == "complete")


def test_the_decorator_and_a_thread_pool_hand_over_the_trial():
    @mfbo.objective(SPACE)
    def f(x, y, trial):
        assert isinstance(trial, TrialHandle) and trial.params == {"x": x, "y": y}
        for step in range(3):
            trial.report(curve(x, y, step), step)
            if trial.should_prune():
                raise mfbo.TrialPruned()
        return curve(x, y, 2)

    res = f.minimize(n_calls=12, surrogate="random", random_state=1, progress_bar=False,
                     pruner=mfbo.SuccessiveHalvingPruner(min_resource=1))
    assert "pruned" in {t.state for t in res.trials}
    assert all(t.intermediate_values for t in res.trials)
    with ThreadPoolExecutor(2) as pool:
        res = mfbo.minimize(f.func, SPACE, n_calls=10, surrogate="random", random_state=2,
                            progress_bar=False, n_workers=2, executor=pool,
                            pruner=mfbo.MedianPruner(n_startup_trials=2))
    assert len(res.trials) == 10 and all(t.intermediate_values for t in res.trials)


def plain(x, y):
    return curve(x, y, 7)


def silent(x, y, trial):
    return curve(x, y, 7)


def test_objectives_without_reports_see_the_same_study():
    runs = [mfbo.minimize(g, SPACE, n_calls=12, random_state=3, progress_bar=False)
            for g in (plain, silent)]
    assert [(t.params, t.state, t.value) for t in runs[0].trials] == \
        [(t.params, t.state, t.value) for t in runs[1].trials]
    assert all(not t.intermediate_values for r in runs for t in r.trials)
    assert takes_trial(silent) and not takes_trial(plain) and not takes_trial(lambda **kw: 0)


def test_trial_pruned_without_a_trial_argument_is_a_pruned_trial():
    def give_up(x, y):
        if x > 0.5:
            raise mfbo.TrialPruned()
        return x

    res = mfbo.minimize(give_up, SPACE, n_calls=10, surrogate="random", random_state=0,
                        progress_bar=False)
    assert {t.state for t in res.trials} == {"pruned", "complete"}
    assert all((t.state == "pruned") == (t.params["x"] > 0.5) for t in res.trials)


def test_worker_processes_report_through_the_study_process(tmp_path):
    res = mfbo.minimize(learner, SPACE, n_calls=12, n_workers=2, surrogate="random",
                        random_state=0, progress_bar=False, storage=str(tmp_path / "s.db"),
                        pruner=mfbo.MedianPruner(n_startup_trials=3))
    assert len(res.trials) == 12 and "pruned" in {t.state for t in res.trials}
    assert all(t.intermediate_values for t in res.trials)
    assert {t.worker.split(":")[1] for t in res.trials} != {str(os.getpid())}
    # a bad report in a worker is the trial's failure, with the study's own message
    with pytest.warns(UserWarning, match="no trial succeeded"):
        res = mfbo.minimize(reports_nan, SPACE, n_calls=2, n_workers=2, surrogate="random",
                            random_state=0, progress_bar=False)
    assert all(t.state == "failed" and "value must be finite" in t.error for t in res.trials)


def reports_nan(x, y, trial):
    trial.report(float("nan"), 0)
    return x


def test_a_space_parameter_named_trial_is_refused_and_handles_stay_home():
    with pytest.raises(ValueError, match="parameter 'trial'"):
        mfbo.minimize(learner, {**SPACE, "trial": (0.0, 1.0)}, n_calls=4, progress_bar=False)
    opt = mfbo.Optimizer(SPACE)
    with pytest.raises(TypeError, match="process of its study only"):
        pickle.dumps(TrialHandle(opt, 0, {"x": 0.5, "y": 0.5}))
    opt.close()
