"""Partial dependence (mfbo.results.dependence) of the right shape."""

import numpy as np

import mfbo
from mfbo import Integer, Real, Space
from mfbo.results.dependence import partial_dependence
from mfbo.results.surface import fit_forest, mean_function


def test_partial_dependence_of_a_separable_function():
    space = Space({"a": (0.0, 1.0), "b": Real(1e-3, 1.0, log=True), "c": Integer(1, 4)})
    f = lambda U: 3.0 * U[:, 0] - 2.0 * U[:, 1] + U[:, 2] ** 2  # noqa: E731
    pd = partial_dependence(f, space, "a", n_points=11, n_samples=64)
    assert np.allclose(np.diff(pd.mean), 3.0 * np.diff(pd.unit[0]))
    pd = partial_dependence(f, space, "b", n_points=4, n_samples=64)
    assert np.allclose(pd.values[0], [1e-3, 1e-2, 1e-1, 1.0])  # even in log10(b)
    assert np.all(np.diff(pd.mean) < 0)
    pd = partial_dependence(f, space, "c", n_points=40, n_samples=64)
    assert pd.values[0] == [1, 2, 3, 4] and np.all(np.diff(pd.mean) > 0)
    pd2 = partial_dependence(f, space, ("a", "b"), n_points=5, n_samples=64)
    assert pd2.mean.shape == (5, 5)
    assert np.allclose(pd2.mean - pd2.mean[:1, :1], 3.0 * (pd2.unit[0][:, None] - pd2.unit[0][0])
                       - 2.0 * (pd2.unit[1][None, :] - pd2.unit[1][0]))


def test_partial_dependence_of_a_fitted_forest_is_monotone_the_right_way():
    space = Space({"up": (0.0, 1.0), "down": (0.0, 1.0), "unused": (0.0, 1.0)})
    opt = mfbo.Optimizer(space, surrogate="random", random_state=0)
    for _ in range(150):
        t = opt.ask()
        opt.tell(t, 5.0 * t.params["up"] - 3.0 * t.params["down"])
    f = mean_function(fit_forest(opt.result(), random_state=0))
    up = partial_dependence(f, space, "up", n_points=10).mean
    down = partial_dependence(f, space, "down", n_points=10).mean
    flat = partial_dependence(f, space, "unused", n_points=10).mean
    assert np.corrcoef(np.arange(10), up)[0, 1] > 0.95 and up[-1] - up[0] > 3.5
    assert np.corrcoef(np.arange(10), down)[0, 1] < -0.95 and down[0] - down[-1] > 2.0
    assert np.ptp(flat) < 0.25 * np.ptp(down)
