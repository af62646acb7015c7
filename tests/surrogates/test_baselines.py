"""Baselines of the Mondrian kernel: exact Laplace KRR, random Fourier features, random binning,
the width search; kernel limits against the closed form, bad input, scikit-learn checks."""

import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.spatial.distance import cdist

from surrogates import (LaplaceKernelRidge, RandomBinningFeatures, RandomFourierFeatures,
                        laplace_kernel, select_width)


def _data(n=100, d=2, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.random((n, d))
    return X, np.sin(5 * X[:, 0]) + X[:, 1] + 0.05 * rng.standard_normal(n)


def test_laplace_kernel_closed_form_and_per_dimension_lifetimes():
    X, _ = _data(20, 3)
    np.testing.assert_allclose(laplace_kernel(X, lifetime=2.0),
                               np.exp(-2.0 * np.abs(X[:, None] - X[None]).sum(-1)))
    lam = np.array([1.0, 0.0, 3.0])
    np.testing.assert_allclose(laplace_kernel(X, X[:4], lifetime=lam),
                               np.exp(-(np.abs(X[:, None] - X[None, :4]) * lam).sum(-1)))


@pytest.mark.parametrize("cls,kw", [(RandomFourierFeatures, "n_components"),
                                    (RandomBinningFeatures, "n_grids")])
def test_random_features_converge_to_the_laplace_kernel(cls, kw):
    X, _ = _data(30, 2)
    K = laplace_kernel(X, lifetime=3.0)
    errs = []
    for R in (100, 4000):
        f = cls(**{kw: R}, lifetime=3.0, random_state=0).fit(X)
        errs.append(np.abs(f.kernel(X) - K).max())
    # RFF: mean of cosines (sd <= 1/sqrt(2R)); RB: mean of indicators (sd <= 0.5/sqrt(R))
    assert errs[1] < 4 / np.sqrt(4000)
    assert errs[0] > 2 * errs[1]


def test_random_binning_is_sparse_with_at_most_P_nonzeros_and_unseen_bins_dropped():
    X, _ = _data(200, 2)
    rb = RandomBinningFeatures(n_grids=25, lifetime=4.0, random_state=0).fit(X)
    Z = rb.transform(X)
    assert sp.isspmatrix_csr(Z) and Z.shape == (200, rb.n_bins_)
    assert np.all(np.diff(Z.indptr) == 25)
    np.testing.assert_allclose(Z.data, 25 ** -0.5)
    Zf = rb.transform(np.array([[50.0, -50.0]]))  # far away: no fitted bin
    assert Zf.nnz == 0
    # one bin per grid for a fitted row
    grid_of = np.searchsorted(rb.bin_offsets_, Z.indices, side="right") - 1
    assert np.all(np.sort(grid_of.reshape(200, 25), axis=1) == np.arange(25))


def test_rff_shape_and_scale():
    X, _ = _data(10, 3)
    Z = RandomFourierFeatures(n_components=7, lifetime=1.0, random_state=0).fit_transform(X)
    assert Z.shape == (10, 14)
    np.testing.assert_allclose((Z * Z).sum(axis=1), 1.0)


def test_laplace_krr_equals_the_closed_form_and_gp_std():
    X, y = _data(60, 2)
    m = LaplaceKernelRidge(lifetime=2.0, delta2=1e-2, prior_variance=0.5).fit(X, y)
    K = np.exp(-2.0 * cdist(X, X, "cityblock"))
    Xq = np.array([[0.5, 0.5], [2.0, 2.0], [30.0, 30.0]])
    Kq = np.exp(-2.0 * cdist(Xq, X, "cityblock"))
    A = K + 1e-2 * np.eye(60)
    mean = y.mean() + Kq @ np.linalg.solve(A, y - y.mean())
    var = 0.5 * (1 + 1e-2 - np.einsum("ij,ji->i", Kq, np.linalg.solve(A, Kq.T)))
    mu, sd = m.predict(Xq, return_std=True)
    np.testing.assert_allclose(mu, mean, rtol=1e-10)
    np.testing.assert_allclose(sd, np.sqrt(var), rtol=1e-8)
    assert sd[0] < sd[1] < sd[2]
    np.testing.assert_allclose(sd[2], np.sqrt(0.5 * 1.01))
    yc = y - y.mean()
    ref = -0.5 * yc @ np.linalg.solve(0.5 * A, yc) - 0.5 * np.linalg.slogdet(0.5 * A)[1] \
        - 30 * np.log(2 * np.pi)
    np.testing.assert_allclose(m.log_marginal_likelihood_, ref, rtol=1e-10)
    m2 = pickle.loads(pickle.dumps(m))
    np.testing.assert_array_equal(m2.predict(Xq), m.predict(Xq))


def test_select_width_follows_the_reference_rule():
    # a convex error curve in log2(lifetime) with its minimum at lifetime 2^-3
    lams, errs, times = select_width(lambda lam: (np.log2(lam) + 3.0) ** 2 + 1.0, 12)
    np.testing.assert_allclose(np.log2(lams[:5]), [0, -1, -2, -3, -4])  # expand downwards
    assert errs.min() == 1.0 and len(lams) == 13 and np.all(np.diff(times) >= 0)
    # bisection after the bracket: every later point lies inside [-4, -2]
    assert np.all((np.log2(lams[5:]) >= -4) & (np.log2(lams[5:]) <= -2))
    # while the best is bad (> max_error) and not at the low end, alternate down and up
    lams, _, _ = select_width(lambda lam: 50.0 - 0.1 * np.log2(lam), 4)
    np.testing.assert_allclose(np.log2(lams), [0, -1, 1, -2, 2])


def test_bad_input():
    X, y = _data(20, 2)
    with pytest.raises(ValueError, match="lifetime"):
        RandomFourierFeatures(lifetime=0.0).fit(X)
    with pytest.raises(TypeError, match="n_grids"):
        RandomBinningFeatures(n_grids=1.5).fit(X)
    with pytest.raises(ValueError, match="lifetime"):
        LaplaceKernelRidge(lifetime=[1.0, 2.0, 3.0]).fit(X, y)
    with pytest.raises(ValueError, match="features"):
        RandomBinningFeatures(random_state=0).fit(X).transform(np.ones((2, 3)))
    bad = X.copy()
    bad[0, 0] = np.inf
    with pytest.raises(ValueError, match="X"):
        LaplaceKernelRidge().fit(bad, y)



def test_smac_forest_per_tree_predictions_use_each_trees_leaves():
    from surrogates.baselines.smac_forest import SMACRandomForestRegressor
    rng = np.random.default_rng(0)
    X = rng.random((80, 3))
    y = np.sin(6 * X[:, 0]) + X[:, 1]
    for log_y in (False, True):
        m = SMACRandomForestRegressor(log_y=log_y, random_state=1).fit(X, y)
        Q = rng.random((50, 3))
        P, V = m.predict_per_tree(Q)
        ref = np.column_stack([v[t.apply(Q)] for t, v in zip(m.estimators_, m._leaf_values)])
        np.testing.assert_array_equal(P, ref)
        assert not V.any()
        if not log_y:  # plain leaves: the trees' own mean predictions
            np.testing.assert_allclose(P, np.column_stack([t.predict(Q) for t in m.estimators_]))
