"""Pruned optuna trials reach mfbo as pruned trials with their intermediate values: in
``MondrianSampler``'s mirror (both directions), through ``from_optuna`` and back with
``to_optuna``."""

import math

import pytest

optuna = pytest.importorskip("optuna")

from optuna.trial import TrialState  # noqa: E402

from mfbo.integrations.optuna import MondrianSampler, from_optuna, to_optuna  # noqa: E402

optuna.logging.set_verbosity(optuna.logging.WARNING)


def objective(trial):
    x = trial.suggest_float("x", 0.0, 1.0)
    for step in range(5):
        trial.report(x + 1.0 / (step + 1), step)
        if trial.should_prune():
            raise optuna.TrialPruned()
    return x + 0.2


@pytest.mark.parametrize("direction", ["minimize", "maximize"])
def test_the_sampler_tells_pruned_trials_as_pruned(direction):
    sign = 1.0 if direction == "minimize" else -1.0

    def signed(trial):
        return objective(_Signed(trial, sign))

    study = optuna.create_study(direction=direction,
                                sampler=MondrianSampler(seed=0, n_startup_trials=8),
                                pruner=optuna.pruners.PercentilePruner(25.0, n_startup_trials=2))
    study.optimize(signed, n_trials=11)  # the 11th trial's proposal is told the first 10
    mirror = study.sampler._mirror.optimizer
    pruned = [t for t in study.trials[:10] if t.state == TrialState.PRUNED]
    assert pruned, "the pruner stopped no trial: nothing was compared"
    told = {t.extra["optuna_number"]: t for t in mirror.trials if t.state != "pending"}
    for t in study.trials[:10]:
        mine = told[t.number]
        assert mine.state == t.state.name.lower()
        # the mirror minimises losses: values times the study's sign
        assert mine.intermediate_values == {s: sign * v for s, v in
                                            t.intermediate_values.items()}
        if t.state == TrialState.PRUNED:
            assert mine.value is None
    assert mirror.n_pruned == len(pruned)
    best = min((t for t in study.trials[:10] if t.state == TrialState.COMPLETE),
               key=lambda t: sign * t.value)
    assert mirror.best_trial.extra["optuna_number"] == best.number


class _Signed:
    """An optuna trial that reports (and returns through the objective) values times
    ``sign``, so one curve serves both directions."""

    def __init__(self, trial, sign):
        self._trial, self._sign = trial, sign

    def suggest_float(self, *args, **kwargs):
        return self._trial.suggest_float(*args, **kwargs)

    def report(self, value, step):
        self._trial.report(self._sign * value, step)

    def should_prune(self):
        return self._trial.should_prune()


def test_from_optuna_and_to_optuna_keep_pruned_trials():
    study = optuna.create_study(pruner=optuna.pruners.MedianPruner(n_startup_trials=2),
                                sampler=optuna.samplers.RandomSampler(seed=0))
    study.optimize(objective, n_trials=12)
    pruned = [t.number for t in study.trials if t.state == TrialState.PRUNED]
    assert pruned
    opt = from_optuna(study, surrogate="random")
    assert [t.state for t in opt.trials] == [t.state.name.lower() for t in study.trials]
    assert [t.intermediate_values for t in opt.trials] == \
        [t.intermediate_values for t in study.trials]
    assert all(t.extra["optuna_number"] == u.number for t, u in zip(opt.trials, study.trials))
    back = to_optuna(opt.result())
    assert [t.state for t in back.trials] == [t.state for t in study.trials]
    assert [t.intermediate_values for t in back.trials] == \
        [t.intermediate_values for t in study.trials]
    assert all(math.isclose(a.value, b.value) for a, b in zip(back.trials, study.trials)
               if a.state == TrialState.COMPLETE)
    opt.close()
