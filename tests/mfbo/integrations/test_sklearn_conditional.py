"""MondrianSearchCV over conditional spaces (mfbo.integrations.sklearn).

A list of dicts, as scikit-learn's searches take it, is one conditional mfbo space (a branch
choice, each dict's parameters active only under its branch); a dict or Space may carry
``when=`` conditions and forbidden configurations directly.  The ``cv_results_`` of such a
search are compared with ``GridSearchCV``'s on the very same candidates: scikit-learn's masked
``param_<name>`` arrays, ``params`` and scores, entry for entry.
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import make_classification
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC
from sklearn.tree import DecisionTreeClassifier

import mfbo
from mfbo import Categorical, In, Integer, Less, NotEquals, Real, Relation, Space
from mfbo.integrations import sklearn as integration
from mfbo.integrations.sklearn import MondrianSearchCV

X, y = make_classification(n_samples=60, n_features=5, n_informative=3, random_state=0)

SVC_KEYS = {"clf", "clf__C", "clf__kernel"}
TREE_KEYS = {"clf", "clf__max_depth"}


def pipeline_space():
    """Two branches of a pipeline's step ``clf``, one with a condition of its own."""
    return [{"clf": [SVC()], "clf__C": Real(1e-2, 1e2, log=True),
             "clf__kernel": ["rbf", "poly"],
             "clf__degree": Integer(2, 4, when={"clf__kernel": "poly"})},
            {"clf": [DecisionTreeClassifier(random_state=0)], "clf__max_depth": Integer(1, 6)}]


def search(estimator, space, **kwargs):
    kwargs.setdefault("n_iter", 8)
    kwargs.setdefault("cv", 2)
    kwargs.setdefault("random_state", 0)
    return MondrianSearchCV(estimator, space, **kwargs).fit(X, y)


def pipe():
    return Pipeline([("scale", StandardScaler()), ("clf", SVC())])


def assert_results_as_grid_search(found, estimator):
    """``found.cv_results_`` is what GridSearchCV gives for the same candidates, in order."""
    params = found.cv_results_["params"]
    grid = GridSearchCV(estimator, [{k: [v] for k, v in p.items()} for p in params],
                        cv=found.cv).fit(X, y)
    mine, theirs = found.cv_results_, grid.cv_results_
    assert list(mine) == list(theirs)  # the same keys, param_<name> in the same order
    assert mine["params"] == theirs["params"]
    for key in (k for k in theirs if k.startswith("param_")):
        assert isinstance(mine[key], np.ma.MaskedArray), key
        assert mine[key].dtype == theirs[key].dtype, key
        np.testing.assert_array_equal(np.ma.getmaskarray(mine[key]),
                                      np.ma.getmaskarray(theirs[key]), err_msg=key)
        assert mine[key].compressed().tolist() == theirs[key].compressed().tolist(), key
    np.testing.assert_allclose(mine["mean_test_score"], theirs["mean_test_score"])
    np.testing.assert_array_equal(mine["rank_test_score"], theirs["rank_test_score"])
    return grid


def test_list_of_dicts_is_one_conditional_search(monkeypatch):
    spaces = []
    init = mfbo.Optimizer.__init__
    monkeypatch.setattr(integration.Optimizer, "__init__",
                        lambda self, space, **k: (spaces.append(space), init(self, space, **k))[1])
    found = search(pipe(), pipeline_space())
    # one optimizer, over one space whose first dimension is the branch
    assert len(spaces) == 1 and spaces[0].names[0] == "branch"
    params = found.cv_results_["params"]
    assert len(params) == 8
    kinds = []
    for p in params:  # each candidate holds exactly one branch's active parameters
        assert list(p) == sorted(p)  # as scikit-learn's samplers give them
        if isinstance(p["clf"], SVC):
            assert set(p) == SVC_KEYS | ({"clf__degree"} if p["clf__kernel"] == "poly" else set())
            assert 1e-2 <= p["clf__C"] <= 1e2
        else:
            assert type(p["clf"]) is DecisionTreeClassifier and set(p) == TREE_KEYS
            assert 1 <= p["clf__max_depth"] <= 6
        kinds.append(type(p["clf"]))
    assert set(kinds) == {SVC, DecisionTreeClassifier}  # both branches were searched
    grid = assert_results_as_grid_search(found, pipe())
    # the best: its own parameters only, refit with its branch's estimator
    assert found.best_index_ == grid.best_index_
    assert found.best_params_ == params[found.best_index_]
    best = found.best_estimator_.named_steps["clf"]
    assert type(best) is type(found.best_params_["clf"])
    for name, value in found.best_params_.items():
        if name != "clf":
            assert getattr(best, name[len("clf__"):]) == value
    np.testing.assert_array_equal(found.predict(X), grid.predict(X))
    # pickled and back, the fitted search predicts the same
    again = pickle.loads(pickle.dumps(found))
    assert again.best_params_.keys() == found.best_params_.keys()
    np.testing.assert_array_equal(again.predict(X), found.predict(X))


def test_a_name_in_two_branches_is_two_parameters():
    # "C" is a Real in one branch and a list of ints in the other; the second branch alone has
    # fit_intercept; the third is empty (the estimator as it is, as scikit-learn allows)
    space = [{"C": Real(0.01, 0.1)}, {"C": [5, 50], "fit_intercept": [False]}, {}]
    found = search(LogisticRegression(), space, n_iter=10)
    params = found.cv_results_["params"]
    for p in params:
        assert p == {} or set(p) == {"C"} and 0.01 <= p["C"] <= 0.1 or \
            p == {"C": p["C"], "fit_intercept": False} and p["C"] in (5, 50)
    assert any(p == {} for p in params) and any("fit_intercept" in p for p in params)
    assert_results_as_grid_search(found, LogisticRegression())
    # such a list with its own budget, then another space: searched one after the other
    found = search(LogisticRegression(), [(space, 3), {"tol": Real(1e-4, 1e-2)}], n_iter=2)
    params = found.cv_results_["params"]
    assert len(params) == 5 and all(set(p) == {"tol"} for p in params[3:])
    assert not any("tol" in p for p in params[:3])


def test_a_dict_with_conditions_on_estimator_choices():
    svc, logistic = SVC(), LogisticRegression()
    space = {"clf": [svc, logistic],
             "clf__kernel": Categorical(["rbf", "poly"], when={"clf": svc}),
             "clf__degree": Integer(2, 3, when={"clf__kernel": "poly"}),
             "clf__max_iter": Integer(50, 100, when=NotEquals("clf", svc)),
             "clf__C": Real(0.1, 10.0, log=True, when=In("clf", [svc, logistic]))}
    found = search(pipe(), space, n_iter=10)
    params = found.cv_results_["params"]
    for p in params:
        assert p["clf"] is svc or p["clf"] is logistic
        assert ("clf__kernel" in p) == (p["clf"] is svc)
        assert ("clf__degree" in p) == (p.get("clf__kernel") == "poly")
        assert ("clf__max_iter" in p) == (p["clf"] is logistic) and "clf__C" in p
    assert {id(p["clf"]) for p in params} == {id(svc), id(logistic)}
    assert_results_as_grid_search(found, pipe())
    # a clone (as nested cross-validation makes) keeps each condition on its own choice
    found = clone(MondrianSearchCV(pipe(), space, n_iter=4, cv=2, random_state=0)).fit(X, y)
    svc = found.search_spaces["clf"][0]
    assert svc is not space["clf"][0] and \
        found.search_spaces["clf__kernel"].when.value is svc
    assert all(("clf__kernel" in p) == (p["clf"] is svc) for p in found.cv_results_["params"])


def test_conditions_on_object_choices_become_index_conditions():
    a, b = LogisticRegression(C=1.0), LogisticRegression(C=2.0)
    coded = integration._Coded({"m": [a, b, a], "x": Real(0, 1, when=NotEquals("m", a)),
                                "y": Real(0, 1, when={"m": a}), "z": ["u", "v"]})
    space = coded.space
    assert space.dimensions["m"].choices == [0, 1, 2]  # objects, and a repeat: by index
    assert space.dimensions["z"].choices == ["u", "v"]  # distinct JSON values: themselves
    assert space.dimensions["x"].when == In("m", [1])
    assert space.dimensions["y"].when == In("m", [0, 2])
    assert coded.decode({"m": 2, "y": 0.5, "z": "v"}) == {"m": a, "y": 0.5, "z": "v"}


def test_a_space_keeps_its_conditions_and_forbidden_configurations():
    space = Space({"kernel": ["rbf", "poly"], "C": Real(0.1, 10.0, log=True),
                   "degree": Integer(2, 3, when={"kernel": "poly"})},
                  forbidden=[{"kernel": "rbf"}])
    found = search(SVC(), [space, {"kernel": ["linear"]}], n_iter=6)
    for p in found.cv_results_["params"]:
        assert p == {"kernel": "linear"} or set(p) == {"kernel", "C", "degree"} and \
            p["kernel"] == "poly"
    # named as the estimator names them, the conditions read the same parameters
    found = search(pipe(), {"clf__kernel": ["rbf", "poly"],
                            "clf__degree": Integer(2, 3, when={"clf__kernel": "poly"})}, n_iter=4)
    # the finite space enumerated: 3 configurations, not 4
    assert sorted(tuple(sorted(p.items())) for p in found.cv_results_["params"]) == [
        (("clf__degree", 2), ("clf__kernel", "poly")),
        (("clf__degree", 3), ("clf__kernel", "poly")), (("clf__kernel", "rbf"),)]


@pytest.mark.parametrize("space, error, match", [
    ([], ValueError, r"search_spaces is an empty list"),
    ({}, ValueError, r"search_spaces is an empty dict"),
    ([{"C": Real(0.1, 1.0)}, "C"], TypeError, r"search_spaces\[1\] must be a dict"),
    ([{"C": Real(0.1, 1.0)}, {"C": []}], ValueError,
     r"search_spaces\[1\]\['C'\] is an empty list of choices"),
    ([{"tol": [1e-4]}, {"C": Real(0.1, 1.0, when={"tol": 1e-4})}], ValueError,
     r"search_spaces\[1\]\['C'\]: the condition .* reads 'tol', which is not a parameter listed "
     r"before it"),
    ({"C": Real(0.1, 1.0, when={"tol": 1e-4}), "tol": [1e-4]}, ValueError,
     r"search_spaces\['C'\]: .* reads 'tol'"),
    ({"solver": ["lbfgs"], "C": Real(0.1, 1.0, when={"solver": "saga"})}, ValueError,
     r"search_spaces: the condition of 'C': .*'saga' is not one of \['lbfgs'\]"),
    ({"m": [SVC()], "C": Real(0.1, 1.0, when={"m": SVC()})}, ValueError,
     r"search_spaces\['C'\]: the condition .* compares 'm' with SVC\(\), which is not one of "
     r"its choices"),
    ({"m": [SVC(), None], "C": Real(0.1, 1.0, when=Less("m", 1))}, TypeError,
     r"search_spaces\['C'\]: .* compares 'm' by order"),
    ({"m": [SVC(), None], "n": [SVC(), None], "C": Real(0.1, 1.0, when=Relation("m", "==", "n"))},
     TypeError, r"search_spaces\['C'\]: .* compares 'm', whose choices are not all distinct JSON"),
    ([{1: Real(0.1, 1.0)}], TypeError, r"search_spaces\[0\]: parameter names must be strings"),
])
def test_bad_spaces_are_refused_naming_the_argument(space, error, match):
    with pytest.raises(error, match=match):
        MondrianSearchCV(LogisticRegression(), space, n_iter=2, cv=2).fit(X, y)
