"""MondrianSearchCV (mfbo.integrations.sklearn).

scikit-learn's own estimator checks run on two of the instances scikit-learn's common tests
build for ``RandomizedSearchCV`` (LogisticRegression, and Ridge in a Pipeline after PCA), with
the check scikit-learn expects its search CVs to fail.  The rest re-states the
behaviours of ``sklearn/model_selection/tests/test_search.py`` that users rely on: pipeline
``step__param`` names, every kind of ``refit``, multi-metric scoring and its errors, ``n_jobs``
and ``random_state`` reproducibility, ``error_score``, fit-parameter routing, the best
estimator refit on all data, and delegated ``predict`` & co.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin, is_regressor
from sklearn.datasets import make_classification
from sklearn.decomposition import PCA
from sklearn.exceptions import FitFailedWarning, NotFittedError
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.model_selection import GroupKFold, KFold
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC
from sklearn.utils.estimator_checks import parametrize_with_checks

import mfbo
from mfbo import Categorical, Integer, Real
from mfbo.integrations.sklearn import MondrianSearchCV

X, y = make_classification(n_samples=120, n_features=6, n_informative=4, random_state=0)


def small(estimator, space, **kwargs):
    kwargs.setdefault("n_iter", 4)
    kwargs.setdefault("cv", 3)
    kwargs.setdefault("random_state", 0)
    return MondrianSearchCV(estimator, space, **kwargs)


# -- scikit-learn's estimator checks ------------------------------------------------------------

CHECKED = [
    MondrianSearchCV(LogisticRegression(), {"C": Real(0.1, 1.0, log=True)}, n_iter=2, cv=2,
                     error_score="raise", random_state=0),
    MondrianSearchCV(Pipeline([("pca", PCA()), ("ridge", Ridge())]),
                     {"ridge__alpha": Real(0.1, 1.0, log=True)}, n_iter=2, cv=2,
                     error_score="raise", random_state=0),
    MondrianSearchCV(LogisticRegression(), {"C": Real(0.1, 1.0, log=True)}, n_iter=3, cv=3,
                     error_score="raise", random_state=0, racing=True),
]


def expected_failures(estimator):
    """What scikit-learn's common tests expect of its own search CVs (RandomizedSearchCV,
    GridSearchCV) and holds here: a regressor's 2-d y is passed on without the warning."""
    if is_regressor(estimator):
        return {"check_supervised_y_2d": "DataConversionWarning not caught"}
    return {}


@parametrize_with_checks(CHECKED, expected_failed_checks=expected_failures)
def test_sklearn_estimator_checks(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FitFailedWarning)
        check(estimator)


# -- what users rely on ---------------------------------------------------------------------------

def test_pipeline_params_and_estimator_choices():
    pipe = Pipeline([("my-scaler", StandardScaler()), ("clf", SVC())])
    space = {"clf": [SVC(), LogisticRegression()], "clf__C": Real(1e-2, 1e2, log=True),
             "my-scaler__with_mean": [True, False]}
    search = small(pipe, space, n_iter=6).fit(X, y)
    params = search.cv_results_["params"]
    assert len(params) == 6
    for p in params:
        assert set(p) == {"clf", "clf__C", "my-scaler__with_mean"}
        assert type(p["clf"]) in (SVC, LogisticRegression)
        assert 1e-2 <= p["clf__C"] <= 1e2 and p["my-scaler__with_mean"] in (True, False)
    best = search.best_estimator_
    assert type(best.named_steps["clf"]) is type(search.best_params_["clf"])
    assert best.named_steps["clf"].C == search.best_params_["clf__C"]


def test_refit_true_fits_the_best_on_all_data_and_delegates():
    search = small(LogisticRegression(), {"C": Real(1e-3, 1e2, log=True)}, n_iter=5).fit(X, y)
    r = search.cv_results_
    assert search.best_index_ == int(np.argmax(r["mean_test_score"]))
    assert search.best_score_ == r["mean_test_score"][search.best_index_]
    assert search.best_params_ == r["params"][search.best_index_]
    assert search.n_splits_ == 3 and search.refit_time_ >= 0 and not search.multimetric_
    assert callable(search.scorer_)
    ref = LogisticRegression(C=search.best_params_["C"]).fit(X, y)
    np.testing.assert_allclose(search.best_estimator_.coef_, ref.coef_)
    np.testing.assert_array_equal(search.predict(X), ref.predict(X))
    np.testing.assert_allclose(search.predict_proba(X), ref.predict_proba(X))
    np.testing.assert_allclose(search.decision_function(X), ref.decision_function(X))
    assert search.score(X, y) == ref.score(X, y)
    np.testing.assert_array_equal(search.classes_, ref.classes_)


def test_refit_false_and_callable():
    search = small(LogisticRegression(), {"C": Real(1e-3, 1e2, log=True)}, refit=False)
    search.fit(X, y)
    assert not hasattr(search, "best_estimator_") and hasattr(search, "best_params_")
    with pytest.raises(AttributeError, match="predict"):
        search.predict(X)

    def lowest_c(results):
        return int(np.argmin([p["C"] for p in results["params"]]))

    search = small(LogisticRegression(), {"C": Real(1e-3, 1e2, log=True)}, refit=lowest_c)
    search.fit(X, y)
    assert search.best_index_ == lowest_c(search.cv_results_)
    assert not hasattr(search, "best_score_")
    assert search.best_estimator_.C == min(p["C"] for p in search.cv_results_["params"])


def test_multimetric_scoring_optimises_the_refit_metric(monkeypatch):
    told = []
    tell = mfbo.Optimizer.tell
    monkeypatch.setattr(mfbo.Optimizer, "tell",
                        lambda self, t, v=None, **k: (told.append(v), tell(self, t, v, **k))[1])
    scoring = {"acc": "accuracy", "nll": "neg_log_loss"}
    search = small(LogisticRegression(), {"C": Real(1e-3, 1e2, log=True)}, scoring=scoring,
                   refit="nll").fit(X, y)
    r = search.cv_results_
    assert search.multimetric_ and set(search.scorer_) == {"acc", "nll"}
    # the optimizer maximises the refit metric: it is told the scores as they are
    np.testing.assert_allclose(told, r["mean_test_nll"])
    assert search.best_index_ == int(np.argmax(r["mean_test_nll"]))
    assert search.best_score_ == r["mean_test_nll"][search.best_index_]
    with pytest.raises(ValueError, match="refit must be a scorer name"):
        small(LogisticRegression(), {"C": Real(0.1, 1.0)}, scoring=scoring,
              refit=False).fit(X, y)
    with pytest.raises(ValueError, match="For multi-metric scoring, the parameter refit"):
        small(LogisticRegression(), {"C": Real(0.1, 1.0)}, scoring=scoring,
              refit="nope").fit(X, y)

    def two(est, X_, y_):
        return {"a": est.score(X_, y_), "b": -est.score(X_, y_)}

    search = small(LogisticRegression(), {"C": Real(0.1, 1.0)}, scoring=two, refit="b")
    assert search.fit(X, y).best_index_ == int(np.argmax(search.cv_results_["mean_test_b"]))


def test_a_list_of_scorer_names_optimises_the_refit_one():
    search = small(LogisticRegression(), {"C": Real(1e-3, 1e2, log=True)},
                   scoring=["accuracy", "f1"], refit="f1").fit(X, y)
    r = search.cv_results_
    assert {"mean_test_accuracy", "mean_test_f1", "rank_test_accuracy"} <= set(r)
    assert search.best_index_ == int(np.argmax(r["mean_test_f1"]))
    assert not hasattr(search, "pareto_front_")


def test_several_scorers_optimised_together(monkeypatch):
    told = []
    tell = mfbo.Optimizer.tell
    monkeypatch.setattr(mfbo.Optimizer, "tell",
                        lambda self, t, v=None, **k: (told.append(v), tell(self, t, v, **k))[1])
    scoring = {"acc": "accuracy", "nll": "neg_log_loss", "f1": "f1"}
    space = {"C": Real(1e-3, 1e2, log=True)}
    search = small(LogisticRegression(), space, n_iter=10, scoring=scoring, refit="acc",
                   objectives=["acc", "nll"]).fit(X, y)
    r = search.cv_results_
    # each objective's mean score, as it is (maximised); every scorer in cv_results_
    assert told == [{"acc": a, "nll": b} for a, b in zip(r["mean_test_acc"],
                                                          r["mean_test_nll"])]
    assert {"mean_test_f1", "rank_test_f1"} <= set(r)
    S = np.column_stack([r["mean_test_acc"], r["mean_test_nll"]])
    brute = [i for i in range(len(S)) if not any(
        np.all(S[j] >= S[i]) and np.any(S[j] > S[i]) for j in range(len(S)))]
    assert list(search.pareto_front_) == brute
    assert search.best_index_ == int(np.argmax(r["mean_test_acc"]))
    # refit=False: no refit, the front all the same; a list of names
    none = small(LogisticRegression(), space, n_iter=6, scoring=["accuracy", "f1"],
                 refit=False, objectives=["accuracy", "f1"]).fit(X, y)
    assert len(none.pareto_front_) >= 1 and not hasattr(none, "best_index_")


@pytest.mark.parametrize("kwargs, match", [
    ({"objectives": ["acc"]}, "two or more distinct scorer names"),
    ({"objectives": ["acc", "acc"]}, "two or more distinct scorer names"),
    ({"objectives": ["acc", "zz"]}, r"objectives names \['zz'\], which scoring does not"),
    ({"objectives": ["acc", "nll"], "racing": True}, "cannot be used with racing"),
    ({"objectives": ["a", "b"], "scoring": "accuracy"}, "scorers of multi-metric scoring"),
    ({"objectives": ["acc", "nll"], "optimizer_kwargs": {"directions": ["minimize"]}},
     "cannot set 'directions'"),
])
def test_bad_objectives_are_refused_before_anything_is_fitted(kwargs, match, monkeypatch):
    fits = []
    monkeypatch.setattr(LogisticRegression, "fit", lambda self, *a, **k: fits.append(1))
    options = {"scoring": {"acc": "accuracy", "nll": "neg_log_loss"}, "refit": "acc", **kwargs}
    with pytest.raises(ValueError, match=match):
        small(LogisticRegression(), {"C": Real(0.1, 1.0)}, **options).fit(X, y)
    assert not fits


def closed_optimizers(monkeypatch) -> list:
    """The optimizers closed from now on, in order (a search closes its own)."""
    seen = []
    close = mfbo.Optimizer.close
    monkeypatch.setattr(mfbo.Optimizer, "close", lambda self: (seen.append(self), close(self)))
    return seen


#: two scores of Brittle: its own, and how small its ``a`` is
TWO_SCORES = {"s": lambda est, X_, y_: est.score(X_, y_), "small": lambda est, X_, y_: -est.a}


@pytest.mark.filterwarnings("ignore:One or more of the test scores are non-finite")
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.FitFailedWarning")
def test_several_scorers_with_failed_fits(monkeypatch):
    seen = closed_optimizers(monkeypatch)
    scoring = TWO_SCORES
    search = small(Brittle(), {"a": Real(0.0, 1.0)}, n_iter=12, n_points=4, scoring=scoring,
                   refit="s", objectives=["s", "small"]).fit(X, y)
    r = search.cv_results_
    failed = np.isnan(r["mean_test_s"])
    assert failed.any() and not set(search.pareto_front_) & set(np.flatnonzero(failed))
    opt, = seen
    assert opt.on_failure == "infeasible"
    assert sum(t.state == "failed" for t in opt.trials) == failed.sum()
    # the front: the scores' trade-off between a = 0.4 (best s) and a = 0 (best small)
    assert all(0.0 <= r["params"][i]["a"] <= 0.4 + 1e-12 for i in search.pareto_front_)

def test_n_jobs_and_random_state_reproducibility():
    space = {"C": Real(1e-3, 1e2, log=True), "fit_intercept": [True, False]}

    def run(**kwargs):
        search = small(LogisticRegression(), space, n_iter=6, n_points=2, **kwargs).fit(X, y)
        return search.cv_results_["params"], search.cv_results_["mean_test_score"]

    params, scores = run(n_jobs=1)
    params2, scores2 = run(n_jobs=2)
    assert params2 == params
    np.testing.assert_allclose(scores2, scores)
    assert run(random_state=1)[0] != params
    assert run(random_state=np.random.RandomState(0))[0] == \
        run(random_state=np.random.RandomState(0))[0]


class Brittle(ClassifierMixin, BaseEstimator):
    """Fails to fit above ``limit``; records the fit parameters it was given."""

    def __init__(self, a=0.0, limit=0.5):
        self.a = a
        self.limit = limit

    def fit(self, X, y, sample_weight=None, note=None):
        if self.a > self.limit:
            raise ValueError("a too large")
        self.classes_ = np.unique(y)
        self.seen_ = (None if sample_weight is None else len(sample_weight), note, len(X))
        return self

    def predict(self, X):
        return np.full(len(X), self.classes_[0])

    def score(self, X, y, sample_weight=None):
        return 1.0 - abs(self.a - 0.4)


@pytest.mark.filterwarnings("ignore:One or more of the test scores are non-finite")
def test_error_score():
    # one candidate per batch: a failing one is left out of cv_results_ (scikit-learn refuses
    # a batch whose every fit failed) and the optimizer is told it failed
    search = small(Brittle(), {"a": Real(0.0, 1.0)}, n_iter=8)
    with pytest.warns(FitFailedWarning, match="failed trials of the optimizer"):
        search.fit(X, y)
    params = search.cv_results_["params"]
    assert 0 < len(params) < 8 and all(p["a"] <= 0.5 for p in params)
    assert not np.isnan(search.cv_results_["mean_test_score"]).any()
    # batches mixing good and failing candidates: the failing ones score NaN (error_score)
    search = small(Brittle(), {"a": Real(0.0, 1.0)}, n_iter=8, n_points=4)
    with pytest.warns(FitFailedWarning):
        search.fit(X, y)
    scores = search.cv_results_["mean_test_score"]
    assert len(scores) == 8 and np.isnan(scores).any()
    assert all(p["a"] > 0.5 for p, s in zip(search.cv_results_["params"], scores)
               if np.isnan(s))
    assert search.best_params_["a"] <= 0.5
    with pytest.raises(ValueError, match="a too large"):
        small(Brittle(limit=-1.0), {"a": Real(0.0, 1.0)}, error_score="raise").fit(X, y)
    # nothing could be scored: scikit-learn's error
    with pytest.warns(FitFailedWarning), pytest.raises(ValueError, match="fits failed"):
        small(Brittle(limit=-1.0), {"a": Real(0.0, 1.0)}).fit(X, y)


def test_fit_params_and_groups_are_routed():
    weights = np.ones(len(y))
    search = small(Brittle(), {"a": Real(0.0, 0.5)}, cv=GroupKFold(n_splits=3))
    search.fit(X, y, sample_weight=weights, note="hi", groups=np.arange(len(y)) % 3)
    # split for the folds, whole for the refit on all data
    assert search.best_estimator_.seen_ == (len(y), "hi", len(y))
    assert search.n_splits_ == 3


def test_batches_subspaces_and_finite_spaces():
    search = small(LogisticRegression(), {"C": Real(1e-3, 1e2, log=True)}, n_iter=5,
                   n_points=3).fit(X, y)
    assert len(search.cv_results_["params"]) == 5
    spaces = [({"C": Real(1e-3, 1e2, log=True)}, 3), {"C": Categorical([0.5, 1.0])}]
    search = small(LogisticRegression(), spaces, n_iter=4).fit(X, y)
    cs = [p["C"] for p in search.cv_results_["params"]]
    assert len(cs) == 5 and sorted(cs[3:]) == [0.5, 1.0]  # the finite space is used up
    space = mfbo.Space({"C": Real(0.1, 10.0, log=True), "max_iter": Integer(50, 200)})
    search = small(LogisticRegression(), space, n_iter=3).fit(X, y)
    assert all(isinstance(p["max_iter"], int) for p in search.cv_results_["params"])


def test_bad_search_spaces_are_named():
    from scipy.stats import loguniform

    with pytest.raises(TypeError, match=r"search_spaces\['C'\].*Real\(low, high\)"):
        small(LogisticRegression(), {"C": loguniform(1e-3, 1e2)}).fit(X, y)
    with pytest.raises(ValueError, match=r"search_spaces\['C'\].*low < high"):
        small(LogisticRegression(), {"C": (1.0, 0.1)}).fit(X, y)
    with pytest.raises(ValueError, match="n_iter"):
        small(LogisticRegression(), {"C": Real(0.1, 1.0)}, n_iter=0).fit(X, y)
    with pytest.raises(ValueError, match="search_spaces"):
        small(LogisticRegression(), "C").fit(X, y)
    with pytest.raises(ValueError, match=r"\(space, n_iter\)"):
        small(LogisticRegression(), [({"C": Real(0.1, 1.0)}, 0)]).fit(X, y)
    with pytest.raises(ValueError, match="'random_state'"):
        small(LogisticRegression(), {"C": Real(0.1, 1.0)},
              optimizer_kwargs={"random_state": 1}).fit(X, y)


def test_not_fitted():
    with pytest.raises(NotFittedError):
        small(Ridge(), {"alpha": Real(0.1, 1.0)}).predict(X)


def test_regression_with_kfold():
    yr = X @ np.arange(6.0)
    search = small(Ridge(), {"alpha": Real(1e-4, 1e2, log=True)}, n_iter=6,
                   cv=KFold(3, shuffle=True, random_state=0), scoring="r2").fit(X, yr)
    assert search.best_score_ > 0.99


def test_importing_mfbo_imports_neither_search_module_nor_optuna(python_run):
    proc = python_run("""
        import sys
        import mfbo
        print(sorted(m for m in ("sklearn.model_selection", "optuna") if m in sys.modules))
        print(mfbo.MondrianSearchCV.__module__)
        """, 120)
    assert proc.stdout.split("\n")[:2] == ["[]", "mfbo.integrations.sklearn"], proc.stderr[-2000:]


# -- racing -------------------------------------------------------------------------------------

RACED = {"C": Real(1e-4, 1e2, log=True)}


def test_racing_keeps_every_candidate_and_says_which_folds_ran():
    search = small(LogisticRegression(), RACED, n_iter=12, cv=5, racing=True).fit(X, y)
    r = search.cv_results_
    splits = np.column_stack([r[f"split{k}_test_score"] for k in range(5)])
    assert len(r["params"]) == 12 and splits.shape == (12, 5)
    np.testing.assert_array_equal(r["n_splits_run"], (~np.isnan(splits)).sum(axis=1))
    # a candidate ran its first folds: the NaN are the last ones
    assert all(np.isnan(row[n:]).all() for row, n in zip(splits, r["n_splits_run"]))
    assert (r["n_splits_run"] < 5).any() and r["n_splits_run"].min() >= 1
    np.testing.assert_allclose(r["mean_test_score"], np.nanmean(splits, axis=1))
    # the best is the best candidate every fold scored; those rank first
    complete = r["n_splits_run"] == 5
    assert complete[search.best_index_]
    assert search.best_score_ == r["mean_test_score"][complete].max()
    assert r["rank_test_score"][complete].max() < r["rank_test_score"][~complete].min()
    assert search.best_estimator_.C == search.best_params_["C"]
    # each fold run scored as scikit-learn scores it on the same split
    from sklearn.model_selection import StratifiedKFold, cross_val_score
    for p, row in list(zip(r["params"], splits))[:6]:
        full = cross_val_score(LogisticRegression(**p), X, y, cv=StratifiedKFold(5))
        ran = ~np.isnan(row)
        np.testing.assert_allclose(row[ran], full[ran])


def test_racing_that_never_stops_is_the_search_without_racing():
    plain = small(LogisticRegression(), RACED, n_iter=8, cv=4).fit(X, y).cv_results_
    raced = small(LogisticRegression(), RACED, n_iter=8, cv=4, racing=True,
                  racing_z=1e9).fit(X, y).cv_results_
    assert (raced.pop("n_splits_run") == 4).all()
    for key, value in plain.items():
        if "time" not in key:
            np.testing.assert_array_equal(np.asarray(raced[key]), np.asarray(value), key)
    assert set(raced) == set(plain)


def test_a_candidate_stops_when_clearly_behind_the_incumbent():
    from mfbo.integrations.sklearn import _Race
    race = _Race(None, True, 4)
    inc, worse, close = race.add([{}, {}, {}])
    race.scores[inc][:] = [0.9, 0.8, 0.9, 0.8]  # standard deviation 0.0577 (ddof=1)
    race.update_incumbent([inc])
    race.scores[worse][:2] = [0.8, 0.7]  # 0.1 behind: more than 0.0577 / sqrt(2)
    race.scores[close][:2] = [0.88, 0.78]  # 0.02 behind
    assert race.behind(worse, 1, 1.0) and not race.behind(close, 1, 1.0)
    assert not race.behind(worse, 1, 3.0)  # 3 standard errors: 0.122
    race.scores[close][2:] = [0.95, 0.85]
    race.update_incumbent([close])
    assert race.incumbent == close
    alone = _Race(None, True, 4)  # no incumbent yet: nothing stops
    first = alone.add([{}])[0]
    alone.scores[first][0] = 0.0
    assert not alone.behind(first, 0, 1.0)


def test_a_candidate_tied_with_the_incumbent_stops_from_the_second_fold():
    from mfbo.integrations.sklearn import _Race
    race = _Race(None, True, 4)
    inc, tied, cancelled, ahead = race.add([{}, {}, {}, {}])
    race.scores[inc][:] = [0.9, 0.8, 0.9, 0.8]
    race.update_incumbent([inc])
    race.scores[tied][:2] = [0.9, 0.8]
    race.scores[cancelled][:2] = [0.95, 0.75]  # the same mean, up to rounding
    race.scores[ahead][:2] = [0.9, 0.81]
    assert not race.behind(tied, 0, 0.0)  # one fold: a tie goes on
    assert race.behind(tied, 1, 0.0) and race.behind(cancelled, 1, 0.0)
    assert not race.behind(ahead, 1, 0.0)
    assert not race.behind(tied, 1, 1.0)  # a tie is not behind by a standard error
    # a tie could not replace the incumbent had it run every fold
    race.scores[tied][2:] = [0.9, 0.8]
    race.update_incumbent([tied])
    assert race.incumbent == inc


def test_racing_stops_candidates_that_score_as_the_incumbent():
    # every candidate predicts the majority class: each fold's accuracy is the same for all
    search = small(Brittle(limit=2.0), {"a": Real(0.0, 1.0)}, n_iter=6, cv=4, racing=True,
                   scoring="accuracy").fit(X, y)
    r = search.cv_results_
    assert r["n_splits_run"].tolist() == [4, 2, 2, 2, 2, 2]
    splits = np.column_stack([r[f"split{k}_test_score"] for k in range(4)])
    assert np.isnan(splits[1:, 2:]).all() and (splits[1:, :2] == splits[0, :2]).all()
    assert search.best_index_ == 0


def test_racing_with_several_metrics_and_batches_races_the_refit_metric():
    search = small(LogisticRegression(), RACED, n_iter=9, cv=4, racing=True, n_points=3,
                   scoring={"acc": "accuracy", "ll": "neg_log_loss"}, refit="ll").fit(X, y)
    r = search.cv_results_
    assert len(r["params"]) == 9 and "rank_test_ll" in r and "rank_test_acc" in r
    assert r["n_splits_run"][search.best_index_] == 4
    assert search.best_score_ == np.nanmax(np.where(r["n_splits_run"] == 4,
                                                    r["mean_test_ll"], np.nan))


@pytest.mark.filterwarnings("ignore:One or more of the test scores are non-finite")
def test_racing_failed_candidates_are_failed_trials():
    search = small(Brittle(), {"a": Real(0.0, 1.0)}, n_iter=8, racing=True, n_points=4)
    with pytest.warns(FitFailedWarning):
        search.fit(X, y)
    r = search.cv_results_
    failed = np.isnan(r["mean_test_score"])
    assert failed.any() and (r["n_splits_run"][failed] == 1).all()
    assert search.best_params_["a"] <= 0.5


def test_bad_racing_settings_are_named():
    with pytest.raises(ValueError, match="racing_z"):
        small(LogisticRegression(), RACED, racing=True, racing_z=-1.0).fit(X, y)
    with pytest.raises((ValueError, TypeError), match="racing"):
        small(LogisticRegression(), RACED, racing="yes").fit(X, y)


@pytest.mark.filterwarnings("ignore:One or more of the test scores are non-finite")
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.FitFailedWarning")
def test_outcome_options_reach_the_search_s_optimizer(monkeypatch):
    seen = closed_optimizers(monkeypatch)
    scoring = TWO_SCORES
    options = {"outcome_options": {"dominating_centre": "uniform", "local_every": 3}}
    small(Brittle(), {"a": Real(0.0, 1.0)}, n_iter=8, n_points=4, scoring=scoring, refit="s",
          objectives=["s", "small"], optimizer_kwargs=options).fit(X, y)
    search_step = seen[0].proposer.steps[-1]
    assert (search_step.dominating_centre, search_step.local_every) == ("uniform", 3)
    with pytest.raises(ValueError, match="outcome_options has no setting 'centre'"):
        small(Brittle(), {"a": Real(0.0, 1.0)}, scoring=scoring, refit="s",
              objectives=["s", "small"],
              optimizer_kwargs={"outcome_options": {"centre": "gaps"}}).fit(X, y)
