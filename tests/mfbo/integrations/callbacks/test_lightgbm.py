"""LightGBM's training-loop pruning: each boosting round's validation metric reported to the
running trial, and a training the pruner gives up on stopped."""

import pytest

lgb = pytest.importorskip("lightgbm", reason='the callback needs LightGBM '
                                             '(pip install "mfbo[lightgbm]")')

import numpy as np  # noqa: E402

import mfbo  # noqa: E402
from mfbo.integrations.callbacks.lightgbm import LightGBMPruningCallback  # noqa: E402

ROUNDS = 20


def _data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 5))
    y = X[:, 0] * 2 + np.sin(X[:, 1]) + 0.1 * rng.normal(size=300)
    train = lgb.Dataset(X[:200], y[:200])
    return train, lgb.Dataset(X[200:], y[200:], reference=train)


class Handle:
    """A trial handle that records reports and prunes after ``prune_after`` of them."""

    def __init__(self, prune_after=None):
        self.reports = []
        self.prune_after = prune_after

    def report(self, value, step):
        self.reports.append((step, value))

    def should_prune(self):
        return self.prune_after is not None and len(self.reports) >= self.prune_after


def _train(handle, metric="l2", valid_name="valid_0"):
    train, valid = _data()
    record = {}
    booster = lgb.train({"objective": "regression", "verbose": -1, "learning_rate": 0.1},
                        train, ROUNDS, valid_sets=[valid],
                        callbacks=[lgb.record_evaluation(record),
                                   LightGBMPruningCallback(handle, metric, valid_name)])
    return booster, record


def test_every_round_is_reported_as_lightgbm_evaluated_it():
    handle = Handle()
    _, record = _train(handle)
    assert [s for s, _ in handle.reports] == list(range(ROUNDS))
    assert [v for _, v in handle.reports] == pytest.approx(record["valid_0"]["l2"])


def test_a_pruned_trial_stops_the_training():
    handle = Handle(prune_after=4)
    with pytest.raises(mfbo.TrialPruned, match="after boosting round 3"):
        _train(handle)
    assert len(handle.reports) == 4


def test_pruned_trials_of_minimize_stop_early_and_are_recorded_pruned():
    train, valid = _data()

    def objective(learning_rate, trial):
        booster = lgb.train({"objective": "regression", "verbose": -1,
                             "learning_rate": learning_rate}, train, ROUNDS,
                            valid_sets=[valid], callbacks=[LightGBMPruningCallback(trial, "l2")])
        return booster.best_score["valid_0"]["l2"]

    result = mfbo.minimize(objective, {"learning_rate": mfbo.Real(1e-3, 0.5, log=True)},
                           n_calls=10, random_state=0, progress_bar=False,
                           pruner=mfbo.MedianPruner(n_startup_trials=2, n_warmup_steps=2))
    pruned = [t for t in result.trials if t.state == "pruned"]
    assert pruned and all(len(t.intermediate_values) < ROUNDS for t in pruned)
    assert all(len(t.intermediate_values) == ROUNDS for t in result.trials
               if t.state == "complete")


def test_a_metric_not_evaluated_and_bad_arguments_are_named():
    with pytest.raises(ValueError, match="metric 'auc' on valid_name 'valid_0' is not evaluated"):
        _train(Handle(), metric="auc")
    with pytest.raises(TypeError, match="trial must be a trial handle"):
        LightGBMPruningCallback(object(), "l2")
    with pytest.raises(ValueError, match="valid_name"):
        LightGBMPruningCallback(Handle(), "l2", valid_name="")
