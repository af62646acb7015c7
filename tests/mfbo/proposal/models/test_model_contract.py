"""One contract every built-in recipe's model keeps: what the proposer asks of a
:class:`~mfbo.proposal.models.Model`, checked on each of them the same way."""

import copy
import pickle

import numpy as np
import pytest

from mfbo.proposal import RECIPES

D = 3
LEVELS = np.array([0, 5, -3])  # a real, an integer of five levels, a categorical of three


def _data(n, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.random((n, D))
    X[:, 1] = (np.floor(X[:, 1] * 5) + 0.5) / 5
    X[:, 2] = (np.floor(X[:, 2] * 3) + 0.5) / 3
    y = (X[:, 0] - 0.3) ** 2 + X[:, 1] + 0.5 * (X[:, 2] > 0.5)
    return X, y


def _model(name, seed=0):
    model = RECIPES[name].build_model(D, np.random.SeedSequence(seed))
    model.set_levels(LEVELS)
    return model


def _tell(model, n):
    """Tell ``model`` the first ``n`` observations in three tells (a BART model refits on
    each)."""
    X, y = _data(n)
    told = 0
    for k in (n - 4, n - 1, n):
        model.observe(X[:k], y[:k], k - told)
        told = k
    return model


_TOLD = {}


def _told(name, n, seed=0):
    """A copy of the model of ``name`` told ``n`` observations (made once per test module)."""
    if (name, n, seed) not in _TOLD:
        _TOLD[name, n, seed] = _tell(_model(name, seed), n)
    return copy.deepcopy(_TOLD[name, n, seed])


NAMES = sorted(RECIPES)


@pytest.mark.parametrize("name", NAMES)
def test_a_model_predicts_finite_means_and_non_negative_spreads(name):
    model = _told(name, 12)
    U = np.random.default_rng(1).random((50, D))
    if not model.is_informative:
        return  # random search: never asked to predict
    assert model.ready
    m, s = model.predict(U)
    assert m.shape == s.shape == (50,)
    assert np.all(np.isfinite(m)) and np.all(np.isfinite(s)) and np.all(s >= 0)
    assert np.isfinite(model.incumbent(_data(12)[1]))


@pytest.mark.parametrize("name", NAMES)
def test_a_model_is_not_ready_without_observations(name):
    assert not _model(name).ready


@pytest.mark.parametrize("name", NAMES)
def test_the_same_seed_and_observations_give_the_same_predictions(name):
    a, b = _told(name, 12, seed=3), _tell(_model(name, seed=3), 12)
    if not a.is_informative:
        return
    U = np.random.default_rng(2).random((20, D))
    np.testing.assert_array_equal(a.predict(U)[0], b.predict(U)[0])
    np.testing.assert_array_equal(a.predict(U)[1], b.predict(U)[1])


@pytest.mark.parametrize("name", NAMES)
def test_a_pickled_model_predicts_and_learns_as_the_original(name):
    model = _told(name, 12)
    again = pickle.loads(pickle.dumps(model))
    if not model.is_informative:
        return
    X, y = _data(14)
    for m in (model, again):
        m.observe(X, y, 2)
    U = np.random.default_rng(4).random((20, D))
    for a, b in zip(model.predict(U), again.predict(U)):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("name", NAMES)
def test_lies_go_to_a_copy_and_leave_the_model_untouched(name):
    model = _told(name, 12)
    if not model.is_informative:
        return
    U = np.random.default_rng(5).random((20, D))
    before = [p.copy() for p in model.predict(U)]
    X, y = _data(12)
    lied = model.with_lies(X, y, U[:2], float(y.min()))
    lied.add_lies(U[2:3], float(y.min()))
    after = model.predict(U)
    for a, b in zip(before, after):
        np.testing.assert_array_equal(a, b)
    m, s = lied.predict(U)
    assert np.all(np.isfinite(m)) and np.all(s >= 0)


@pytest.mark.parametrize("name", NAMES)
def test_per_tree_predictions_where_a_model_offers_them(name):
    model = _told(name, 12)
    if not hasattr(model, "predict_per_tree"):
        return
    mean_t, var_t = model.predict_per_tree(np.random.default_rng(6).random((7, D)))
    assert mean_t.shape[0] == 7 and mean_t.ndim == 2 and np.all(np.isfinite(mean_t))
