"""The "bart" named surrogate: BART with particle Gibbs behind the optimizer."""

import numpy as np
import pytest

import mfbo
from mfbo import Optimizer
from mfbo.proposal.models import BARTModel
from tests.support import SPACE, quad


def test_minimize_with_bart_finds_the_quadratic_minimum():
    r = mfbo.minimize(quad, SPACE, n_calls=30, surrogate="bart", random_state=0,
                      progress_bar=False, n_initial=10)
    assert r.best_value < 0.05
    again = mfbo.minimize(quad, SPACE, n_calls=12, surrogate="bart", random_state=0,
                          progress_bar=False, n_initial=10)
    np.testing.assert_array_equal(
        [t.value for t in again.trials],
        [t.value for t in mfbo.minimize(quad, SPACE, n_calls=12, surrogate="bart",
                                        random_state=0, progress_bar=False,
                                        n_initial=10).trials])


def test_bart_model_predicts_function_uncertainty():
    rng = np.random.default_rng(0)
    X = rng.random((40, 2))
    y = (X[:, 0] - 0.3) ** 2 + X[:, 1]
    model = BARTModel(2, 0, n_trees=20)
    assert not model.ready
    model.observe(X, y, 40)
    mean, std = model.predict(X)
    assert model.ready and mean.shape == std.shape == (40,)
    assert np.sqrt(np.mean((mean - y) ** 2)) < 0.1 * y.std() + 0.05
    noisy = BARTModel(2, 0, n_trees=20, noise_in_std=True)
    noisy.observe(X, y, 40)
    assert np.all(noisy.predict(X)[1] > std.min())


def test_bad_bart_options_fail_when_the_optimizer_is_built():
    with pytest.raises(ValueError, match="n_trees"):
        Optimizer(SPACE, surrogate="bart", surrogate_options={"n_trees": 0})
    with pytest.raises(TypeError, match="bogus"):
        Optimizer(SPACE, surrogate="bart", surrogate_options={"bogus": 1})
