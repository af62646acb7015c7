"""The tune-world suite: its problems and split, and each family's objective."""

import numpy as np
import pytest
from sklearn.base import BaseEstimator, RegressorMixin

import mfbo
from benchmarks.problems import tune_world
from benchmarks.problems.problems import SUITES, family_of, get_problem

SPECS = tune_world.specs()


def test_the_suite_is_every_family_on_every_data_set_of_its_task_split_by_data_set():
    names = [s["name"] for s in SPECS]
    assert len(names) == len(set(names)) == 62
    suite = SUITES["tune-world"]
    assert set(suite.dev) | set(suite.test) == set(names) and not set(suite.dev) & set(suite.test)
    assert (len(suite.dev), len(suite.test)) == (36, 26)
    for s in SPECS:
        dataset = s["name"].split("-", 2)[2]
        assert s["split"] == ("dev" if dataset in tune_world.DEV_DATASETS else "test")
        assert s["budget"] == 50 and s["optimum"] is None
        assert family_of(s["name"]) == s["family"]
    # every family is in both splits, so a default tuned on dev meets each one again on test
    families = {split: {s["family"] for s in SPECS if s["split"] == split}
                for split in ("dev", "test")}
    assert families["dev"] == families["test"]


def test_the_few_informative_data_sets_hide_a_narrow_l1_valley():
    # their point: an l1 penalty in a band of its weight beats l2 at any weight
    for dataset, family, l1, others in (
            ("few-informative", "logreg", {"C": 10 ** -0.8},
             [{"C": c} for c in (1e-2, 1e-1, 1.0, 1e2)]),
            ("few-informative-reg", "sgd", {"alpha": 10 ** -2.0},
             [{"alpha": a} for a in (1e-5, 1e-3, 1e-2, 1e-1)])):
        problem = tune_world.TuneWorldObjective(family, dataset)
        X, _ = problem.load()._data
        assert X.shape[1] == tune_world._N_FEATURES[dataset]
        base = ({"class_weight": None, "fit_intercept": True} if family == "logreg" else
                {"loss": "squared_error", "l1_ratio": 0.15, "learning_rate": "invscaling",
                 "eta0": 0.01})
        valley = problem({**base, **l1, "penalty": "l1"})
        assert all(valley < problem({**base, **o, "penalty": "l2"}) for o in others)
        wide = {k: v * 100 for k, v in l1.items()}  # outside the band, l1 loses its edge
        assert problem({**base, **wide, "penalty": "l1"}) > valley


@pytest.mark.parametrize("family", sorted(tune_world.FAMILIES))
def test_each_family_evaluates_a_random_configuration_the_same_twice(family):
    spec = next(s for s in SPECS if s["name"].startswith(f"world-{family}-")
                and s["name"].split("-", 2)[2] in ("moons", "diabetes"))
    space = mfbo.Space(spec["space"])
    params = space.from_unit(np.random.default_rng(0).random((1, len(space))))[0]
    problem = get_problem(spec["name"])
    first = problem(**params)
    assert np.isfinite(first) and first == problem(**params)


class _Infinite(RegressorMixin, BaseEstimator):
    def fit(self, X, y):
        return self

    def predict(self, X):
        return np.full(len(X), 1e200)  # finite, but its squared error overflows


def test_a_loss_that_is_not_finite_is_a_failed_evaluation(monkeypatch):
    objective = tune_world.TuneWorldObjective("poly", "diabetes")
    monkeypatch.setattr(objective, "estimator", lambda params: _Infinite())
    with pytest.raises(ValueError, match="poly on diabetes"):
        objective({"degree": 1, "interaction_only": False, "alpha": 1.0})


def test_the_selection_size_follows_the_data_set():
    assert tune_world.TuneWorldObjective("nb", "digits").space["k"].high == 64
    assert tune_world.TuneWorldObjective("nb", "moons").space["k"].high == 2
