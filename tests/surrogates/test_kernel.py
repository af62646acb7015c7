"""Mondrian kernel: features, kernel limit, extension, ridge / BLR, online, lifetime paths, bad
input, pickling, scikit-learn checks."""

import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.stats import multivariate_normal

from surrogates import (MondrianKernel, MondrianKernelRidge, forest_lifetime_path,
                        laplace_kernel, lifetime_path, relative_error)
from surrogates._core.tree import check_invariants


def _data(n=120, d=2, seed=0, noise=0.05):
    rng = np.random.default_rng(seed)
    X = rng.random((n, d))
    y = np.sin(6 * X[:, 0]) + X[:, -1] ** 2 + noise * rng.standard_normal(n)
    return X, y


def _closed_form(Phi, y, delta2):
    """Ridge on centred targets: weights and log N(y - mean; 0, Phi Phi^T + delta2 I)."""
    yc = y - y.mean()
    Phi = Phi.toarray() if sp.issparse(Phi) else Phi
    w = np.linalg.solve(Phi.T @ Phi + delta2 * np.eye(Phi.shape[1]), Phi.T @ yc)
    cov = Phi @ Phi.T + delta2 * np.eye(len(y))
    return w, multivariate_normal(np.zeros(len(y)), cov).logpdf(yc)


def _cells(model, X):
    """Dense expected features over the model's cells (no fresh columns)."""
    F, val = model._map.route(X)
    M = F.shape[1]
    Phi = np.zeros((X.shape[0], model.n_cells_))
    np.add.at(Phi, (np.repeat(np.arange(X.shape[0]), M), F.ravel()), val.ravel())
    return Phi


# --------------------------------------------------------------------------------------------
# features and the kernel limit
# --------------------------------------------------------------------------------------------

def test_exactly_M_nonzeros_of_value_M_to_minus_half():
    X, _ = _data(200, 3)
    mk = MondrianKernel(n_trees=17, lifetime=4.0, random_state=0).fit(X)
    Z = mk.transform(X)
    assert sp.isspmatrix_csr(Z) and Z.shape == (200, mk.n_features_out_)
    assert mk.n_features_out_ == 17 + mk.n_cells_ == len(mk.get_feature_names_out())
    assert np.all(np.diff(Z.indptr) == 17)
    np.testing.assert_allclose(Z.data, 17 ** -0.5)
    # one column per tree in every row, never a fresh column for a fitted row
    tree = mk.tree_of_feature_[Z.indices].reshape(200, 17)
    assert np.all(np.sort(tree, axis=1) == np.arange(17))
    assert Z.indices.min() >= 17
    np.testing.assert_allclose(Z.multiply(Z).sum(axis=1), 1.0)


def test_new_rows_sample_mode_exactly_M_nonzeros_and_fresh_columns():
    X, _ = _data(100, 2)
    Xn = np.random.default_rng(1).uniform(-2, 3, (300, 2))
    mk = MondrianKernel(n_trees=10, lifetime=3.0, extension="sample", random_state=0).fit(X)
    Z = mk.transform(Xn)
    assert np.all(np.diff(Z.indptr) == 10)
    np.testing.assert_allclose(Z.data, 10 ** -0.5)
    tree = mk.tree_of_feature_[Z.indices].reshape(300, 10)
    assert np.all(np.sort(tree, axis=1) == np.arange(10))
    assert (Z.indices < 10).any()  # far rows are split off into the fresh cells
    # deterministic per row index
    assert (mk.transform(Xn) != Z).nnz == 0
    # expected mode: M stored entries, value p_join M^-1/2 (1 inside the extents)
    mk.set_params(extension="expected")
    Ze = mk.transform(Xn)
    assert np.all(np.diff(Ze.indptr) == 10)
    assert np.all(Ze.data <= 10 ** -0.5 + 1e-15) and Ze.data.min() < 1e-3
    np.testing.assert_allclose(mk.transform(X).data, 10 ** -0.5)


def test_kernel_converges_to_laplace_at_rate_M_to_minus_half():
    rng = np.random.default_rng(0)
    X = rng.random((30, 2))
    K = laplace_kernel(X, lifetime=3.0)
    errs = []
    for M in (100, 3000):
        mk = MondrianKernel(n_trees=M, lifetime=3.0, random_state=1).fit(X)
        Km = mk.kernel(X)
        np.testing.assert_allclose(np.diag(Km), 1.0)
        errs.append(np.abs(Km - K).max())
    # pointwise sd is sqrt(k(1-k)/M) <= 0.5/sqrt(M): max over 435 pairs within ~4 sd
    assert errs[1] < 4 * 0.5 / np.sqrt(3000)
    assert errs[0] > 2 * errs[1]  # 30x more trees: about 5.5x smaller error


def test_out_of_sample_kernel_is_unbiased_for_laplace_in_both_modes():
    rng = np.random.default_rng(2)
    X = rng.random((40, 2))
    Xn = np.array([[0.5, 0.5], [1.3, 0.2], [-0.4, 1.5], [3.0, 3.0]])  # inside, near, far
    K = laplace_kernel(Xn, X, lifetime=2.0)
    M = 4000
    for ext in ("expected", "sample"):
        mk = MondrianKernel(n_trees=M, lifetime=2.0, extension=ext, random_state=3).fit(X)
        Km = mk.kernel(Xn, X)
        assert np.abs(Km - K).max() < 4 * 0.5 / np.sqrt(M), ext


def test_cell_count_matches_expectation_on_a_box():
    # E #cells = prod_d (1 + lambda a_d) for a Mondrian on a box (Balog et al., 2016,
    # Section 2.1); many rows on a grid make the data-restricted partition close to the box's
    g = np.linspace(0, 1, 60)
    X = np.array(np.meshgrid(g, g)).reshape(2, -1).T
    mk = MondrianKernel(n_trees=400, lifetime=2.0, random_state=0).fit(X)
    assert abs(mk.n_cells_ / 400 - 9.0) < 0.45


def test_partial_fit_extends_partitions_like_a_refit():
    X, _ = _data(150, 2)
    mk = MondrianKernel(n_trees=8, lifetime=5.0, random_state=0).fit(X[:100])
    old = mk.transform(X[:100]).toarray()
    C0 = mk.n_cells_
    for i in range(100, 150):
        mk.partial_fit(X[i:i + 1])
    check_invariants(mk._map.store)
    assert C0 < mk.n_cells_ <= C0 + 8 * 50
    new = mk.transform(X[:100]).toarray()
    np.testing.assert_array_equal(new[:, :old.shape[1]], old)  # old rows keep their cells
    Z = mk.transform(X)
    assert np.all(np.diff(Z.indptr) == 8) and Z.indices.min() >= 8
    # the kernel of the grown partition still approximates the Laplace kernel
    big = MondrianKernel(n_trees=2000, lifetime=2.0, random_state=1).fit(X[:20])
    big.partial_fit(X[20:40])
    assert np.abs(big.kernel(X[:40]) - laplace_kernel(X[:40], lifetime=2.0)).max() < 0.05


# --------------------------------------------------------------------------------------------
# ridge regression and Bayesian linear regression
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("solver", ["primal", "dual"])
def test_ridge_equals_closed_form_and_log_ml_equals_dense(solver):
    X, y = _data(90, 2)
    m = MondrianKernelRidge(n_trees=6, lifetime=4.0, delta2=1e-3, solver=solver,
                            random_state=0).fit(X, y)
    assert m.solver_ == solver
    Phi = _cells(m, X)
    w, logml = _closed_form(Phi, y, 1e-3)
    np.testing.assert_allclose(m.coef_, w, rtol=1e-7, atol=1e-9)
    Xq = np.random.default_rng(1).random((20, 2))
    np.testing.assert_allclose(m.predict(Xq), y.mean() + _cells(m, Xq) @ w, rtol=1e-9)
    np.testing.assert_allclose(m.log_marginal_likelihood_, logml, rtol=1e-9)
    # the transformer with the same seed gives the same trees (columns shifted by M)
    mk = MondrianKernel(n_trees=6, lifetime=4.0, random_state=0).fit(X)
    np.testing.assert_allclose(mk.transform(X).toarray()[:, 6:], Phi)


def test_primal_and_dual_agree_including_std_away_from_data():
    X, y = _data(80, 2)
    Xq = np.array([[0.5, 0.5], [0.9, 0.1], [1.5, 0.5], [4.0, 4.0], [40.0, -40.0]])
    out = {}
    for solver in ("primal", "dual"):
        m = MondrianKernelRidge(n_trees=10, lifetime=3.0, delta2=1e-2, solver=solver,
                                prior_variance=0.5, random_state=0).fit(X, y)
        out[solver] = m.predict(Xq, return_std=True)
    np.testing.assert_allclose(out["primal"][0], out["dual"][0], rtol=1e-9)
    np.testing.assert_allclose(out["primal"][1], out["dual"][1], rtol=1e-6)


def test_blr_std_grows_away_from_data_towards_the_prior():
    X, y = _data(200, 1, noise=0.1)
    keep = X[:, 0] < 0.6
    X, y = X[keep], y[keep]
    m = MondrianKernelRidge(n_trees=30, lifetime=8.0, delta2=0.01, random_state=0).fit(X, y)
    Xq = np.array([[0.3], [0.7], [1.0], [2.0], [100.0]])
    mean, std = m.predict(Xq, return_std=True)
    assert np.all(np.diff(std) > 0)
    np.testing.assert_allclose(std[-1], np.sqrt(1.0 * (1 + 0.01)), rtol=1e-9)  # prior
    np.testing.assert_allclose(mean[-1], y.mean())
    assert std[0] < 0.2
    # prior_variance='auto' rescales to the data: far-away std about the target scale
    ma = m.set_params(prior_variance="auto").fit(X, y)
    assert 0.2 < ma.predict([[100.0]], return_std=True)[1][0] < 5 * y.std()


def test_expected_prediction_averages_the_sampled_extension():
    X, y = _data(60, 2)
    m = MondrianKernelRidge(n_trees=5, lifetime=3.0, delta2=1e-2, random_state=0).fit(X, y)
    xq = np.array([[1.4, 0.3]])
    feat, val = m._map.route(xq)
    p = val[0] * np.sqrt(5)
    assert np.all(p < 1) and np.all(p > 0)
    # Monte Carlo over the extension: tree t joins its cell with probability p_t
    rng = np.random.default_rng(0)
    J = rng.random((200000, 5)) < p
    preds = y.mean() + (J * m.coef_[feat[0]]).sum(axis=1) / np.sqrt(5)
    mean, std = m.predict(xq, return_std=True)
    np.testing.assert_allclose(mean[0], preds.mean(), atol=4 * preds.std() / np.sqrt(2e5))
    assert std[0] ** 2 >= preds.var()  # mixture variance includes the extension spread


@pytest.mark.parametrize("solver", ["primal", "dual"])
def test_online_partial_fit_equals_batch_solve_on_the_same_trees(solver):
    X, y = _data(140, 2)
    m = MondrianKernelRidge(n_trees=6, lifetime=5.0, delta2=1e-4, solver=solver,
                            random_state=0).fit(X[:60], y[:60])
    for i in range(60, 100):
        m.partial_fit(X[i:i + 1], y[i:i + 1])
    m.partial_fit(X[100:], y[100:])  # a mini-batch
    Phi = _cells(m, X)
    w, logml = _closed_form(Phi, y, 1e-4)
    Xq = np.random.default_rng(3).random((30, 2))
    np.testing.assert_allclose(m.predict(Xq), y.mean() + _cells(m, Xq) @ w, rtol=1e-7,
                               atol=1e-8)
    np.testing.assert_allclose(m.log_marginal_likelihood_, logml, rtol=1e-8)
    assert m.intercept_ == pytest.approx(y.mean())


def test_sgd_solver_and_its_online_steps():
    X, y = _data(300, 2)
    ex = MondrianKernelRidge(n_trees=20, lifetime=3.0, delta2=1.0, random_state=0).fit(X, y)
    sg = MondrianKernelRidge(n_trees=20, lifetime=3.0, delta2=1.0, solver="sgd", eta0=0.5,
                             sgd_epochs=100, random_state=0).fit(X, y)
    Xq = np.random.default_rng(4).random((50, 2))
    assert np.abs(sg.predict(Xq) - ex.predict(Xq)).max() < 0.05
    sg.partial_fit(X[:10], y[:10])
    assert sg.coef_.shape == (sg.n_cells_,)
    with pytest.raises(ValueError, match="return_std"):
        sg.predict(Xq, return_std=True)


def test_delta2_and_alpha_forms():
    X, y = _data(50, 2)
    a = MondrianKernelRidge(n_trees=4, lifetime=2.0, delta2=0.5, random_state=0).fit(X, y)
    b = MondrianKernelRidge(n_trees=4, lifetime=2.0, alpha=0.01, random_state=0).fit(X, y)
    assert b.delta2_ == pytest.approx(0.5)
    np.testing.assert_allclose(a.predict(X), b.predict(X))
    with pytest.raises(ValueError, match="delta2"):
        MondrianKernelRidge(delta2=1.0, alpha=1.0).fit(X, y)


# --------------------------------------------------------------------------------------------
# lifetime paths
# --------------------------------------------------------------------------------------------

def _split(n=260, seed=0):
    X, y = _data(n, 2, seed=seed)
    return X[:150], y[:150], X[150:200], y[150:200], X[200:]


def test_exact_path_equals_independent_fits_at_every_lifetime():
    X, y, Xv, yv, Xt = _split()
    yt = _data(260, 2, seed=0)[1][200:]
    p = lifetime_path(X, y, Xv, yv, max_lifetime=12.0, n_trees=8, delta2=1e-4,
                      X_test=Xt[:40], y_test=yt[:40], X_unlabeled=Xt[40:], random_state=0)
    n = len(p.lifetimes)
    assert p.lifetimes[0] == 0 and np.all(np.diff(p.lifetimes) > 0)
    np.testing.assert_array_equal(p.n_cells, 8 + np.arange(n))
    assert p.n_refresh == 0
    assert n > 3 * 16  # several chunks of cuts (errors are computed per chunk)
    for k in [*range(0, n, 3), n - 1]:  # all through the chunks of cuts
        m = p.refit_at(p.lifetimes[k])
        assert m.n_cells_ == p.n_cells[k]
        np.testing.assert_allclose(relative_error(yv, m.predict(Xv)), p.val_error[k],
                                   rtol=1e-9)
        np.testing.assert_allclose(relative_error(y, m.predict(X)), p.train_error[k],
                                   rtol=1e-7)
        np.testing.assert_allclose(relative_error(yt[:40], m.predict(Xt[:40])),
                                   p.test_error[k], rtol=1e-9)
        np.testing.assert_allclose(m.log_marginal_likelihood_, p.log_ml[k], rtol=1e-9)
    # the best lifetime and the train curve behave
    assert p.val_error[p.best_index] == p.val_error.min()
    assert p.train_error[-1] < p.train_error[0]


def test_exact_path_log_ml_equals_dense_gaussian():
    X, y, Xv, yv, _ = _split(230)
    p = lifetime_path(X, y, Xv, yv, max_lifetime=6.0, n_trees=4, delta2=1e-2,
                      prior_variance=0.7, random_state=1)
    for k in [0, len(p.lifetimes) // 2, len(p.lifetimes) - 1]:
        m = p.refit_at(p.lifetimes[k])
        Phi = _cells(m, X)
        yc = y - y.mean()
        cov = 0.7 * (Phi @ Phi.T + 1e-2 * np.eye(len(y)))
        ref = multivariate_normal(np.zeros(len(y)), cov).logpdf(yc)
        np.testing.assert_allclose(p.log_ml[k], ref, rtol=1e-9)
        s2 = yc @ np.linalg.solve(Phi @ Phi.T + 1e-2 * np.eye(len(y)), yc) / len(y)
        ref_p = multivariate_normal(np.zeros(len(y)), s2 * (cov / 0.7)).logpdf(yc)
        np.testing.assert_allclose(p.log_ml_profile[k], ref_p, rtol=1e-9)


def test_path_with_a_lifetime_grid_and_max_features():
    X, y, Xv, yv, _ = _split()
    full = lifetime_path(X, y, Xv, yv, max_lifetime=10.0, n_trees=5, random_state=0)
    grid = np.geomspace(0.1, 10.0, 7)
    p = lifetime_path(X, y, Xv, yv, max_lifetime=10.0, n_trees=5, lifetimes=grid,
                      random_state=0)
    idx = np.searchsorted(full.lifetimes, grid, side="right") - 1
    np.testing.assert_allclose(p.val_error, full.val_error[idx])
    np.testing.assert_array_equal(p.lifetimes, grid)
    q = lifetime_path(X, y, Xv, yv, max_lifetime=10.0, n_trees=5, max_features=40,
                      random_state=0)
    assert q.n_cells[-1] == 40
    np.testing.assert_allclose(q.val_error, full.val_error[:len(q.val_error)])


def test_path_n_features_is_the_old_read_only_name_of_n_cells():
    X, y, Xv, yv, _ = _split()
    p = lifetime_path(X, y, Xv, yv, max_lifetime=3.0, n_trees=3, random_state=0)
    assert p.n_features is p.n_cells
    with pytest.raises(AttributeError):
        p.n_features = p.n_cells


def test_sgd_path_is_close_to_the_exact_path():
    X, y, Xv, yv, _ = _split(400, seed=3)
    X, y, Xv, yv = X, y, Xv, yv
    grid = np.geomspace(0.5, 8.0, 5)
    ex = lifetime_path(X, y, Xv, yv, max_lifetime=8.0, n_trees=10, delta2=1.0,
                       lifetimes=grid, random_state=0)
    sg = lifetime_path(X, y, Xv, yv, max_lifetime=8.0, n_trees=10, delta2=1.0,
                       lifetimes=grid, solver="sgd", sgd_epochs=60, eta0=0.5,
                       empty_cell_weight="zero", random_state=0)
    np.testing.assert_allclose(sg.val_error, ex.val_error, rtol=0.1)
    assert np.all(np.isnan(sg.log_ml))
    # one epoch per cut (the paper's setting) runs and improves on the constant model
    pc = lifetime_path(X, y, Xv, yv, max_lifetime=4.0, n_trees=5, alpha=1e-4, solver="sgd",
                       random_state=0)
    assert len(pc.lifetimes) == len(pc.val_error) and pc.val_error.min() < pc.val_error[0]
    assert np.all(np.diff(pc.runtime) >= 0)


def test_forest_path_with_one_tree_equals_the_kernel_path():
    # M = 1: A is diagonal, the kernel's ridge is the tree's per-leaf ridge ([R] App. B)
    X, y, Xv, yv, Xt = _split()
    k = lifetime_path(X, y, Xv, yv, max_lifetime=10.0, n_trees=1, delta2=0.3, random_state=0)
    f = forest_lifetime_path(X, y, Xv, yv, max_lifetime=10.0, n_trees=1, gamma2=0.3,
                             random_state=0)
    np.testing.assert_allclose(f.lifetimes, k.lifetimes)
    np.testing.assert_allclose(f.val_error, k.val_error, rtol=1e-9)
    np.testing.assert_allclose(f.train_error, k.train_error, rtol=1e-7)
    assert np.all(np.isnan(f.test_error))
    yt = _data(260, 2, seed=0)[1][200:]
    ft = forest_lifetime_path(X, y, Xv, yv, X_test=Xt, y_test=yt, max_lifetime=10.0, n_trees=1,
                              gamma2=0.3, random_state=0)
    kt = lifetime_path(X, y, Xv, yv, X_test=Xt, y_test=yt, max_lifetime=10.0, n_trees=1,
                       delta2=0.3, random_state=0)
    np.testing.assert_allclose(ft.test_error, kt.test_error, rtol=1e-9)


# --------------------------------------------------------------------------------------------
# bad input, pickling, scikit-learn conventions
# --------------------------------------------------------------------------------------------

def test_bad_input_names_the_argument_and_leaves_state_untouched():
    X, y = _data(40, 2)
    m = MondrianKernelRidge(n_trees=3, lifetime=2.0, random_state=0).fit(X, y)
    before = m.predict(X)
    n_cells = m.n_cells_
    bad = X[:2].copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="X"):
        m.partial_fit(bad, y[:2])
    with pytest.raises(ValueError, match="y"):
        m.partial_fit(X[:2], [1.0, np.inf])
    with pytest.raises(ValueError, match="features"):
        m.partial_fit(np.ones((2, 3)), y[:2])
    assert m.n_cells_ == n_cells and m._map.store.n_points == 40
    np.testing.assert_array_equal(m.predict(X), before)
    for params, name in [({"n_trees": 0}, "n_trees"), ({"lifetime": -1.0}, "lifetime"),
                         ({"lifetime": np.inf}, "lifetime"), ({"solver": "qr"}, "solver"),
                         ({"delta2": 0.0}, "delta2"), ({"prior_variance": "x"}, "prior"),
                         ({"sgd_epochs": 0}, "sgd_epochs"), ({"random_state": -1}, "random")]:
        with pytest.raises((ValueError, TypeError), match=name):
            MondrianKernelRidge(**params).fit(X, y)
    with pytest.raises(TypeError, match="n_trees"):
        MondrianKernel(n_trees=2.5).fit(X)
    with pytest.raises(ValueError, match="extension"):
        MondrianKernel(extension="both").fit(X)
    with pytest.raises(ValueError, match="X_val"):
        lifetime_path(X, y, np.ones((3, 5)), np.ones(3), max_lifetime=1.0)
    with pytest.raises(ValueError, match="max_lifetime"):
        lifetime_path(X, y, X, y, max_lifetime=0.0)
    with pytest.raises(ValueError, match="lifetimes"):
        lifetime_path(X, y, X, y, max_lifetime=1.0, lifetimes=[0.5, 0.2])
    with pytest.raises(ValueError, match="solver"):
        lifetime_path(X, y, X, y, max_lifetime=1.0, solver="cg")


@pytest.mark.parametrize("make,param,value", [
    (lambda: MondrianKernel(n_trees=3, lifetime=2.0, random_state=0), "n_trees", 6),
    (lambda: MondrianKernel(n_trees=3, lifetime=2.0, random_state=0), "lifetime", 4.0),
    (lambda: MondrianKernelRidge(n_trees=3, lifetime=2.0, random_state=0), "n_trees", 6),
    (lambda: MondrianKernelRidge(n_trees=3, lifetime=2.0, random_state=0), "lifetime", 4.0),
    (lambda: MondrianKernelRidge(n_trees=3, lifetime=2.0, random_state=0), "delta2", 0.1),
    (lambda: MondrianKernelRidge(n_trees=3, lifetime=2.0, random_state=0), "solver", "sgd"),
    (lambda: MondrianKernelRidge(n_trees=3, lifetime=2.0, random_state=0), "random_state", 5)])
def test_parameter_applied_by_fit_and_changed_since_is_refused_by_partial_fit(make, param,
                                                                             value):
    X, y = _data(40, 2)
    m = make().fit(X, y)
    n_cells = m.n_cells_
    m.set_params(**{param: value})
    with pytest.raises(ValueError, match=f"{param} was changed .* since the last fit"):
        m.partial_fit(X[:2] + 0.5, y[:2])
    assert m.n_cells_ == n_cells and m._map.store.n_points == 40
    m.fit(X, y).partial_fit(X[:2] + 0.5, y[:2])  # fit applies it
    assert m._map.store.n_points == 42


def test_pickle_round_trip_and_reproducibility():
    X, y = _data(80, 2)
    m = MondrianKernelRidge(n_trees=5, lifetime=3.0, random_state=7).fit(X, y)
    m.partial_fit(X[:5] + 0.01, y[:5])
    m2 = pickle.loads(pickle.dumps(m))
    Xq = np.random.default_rng(0).uniform(-1, 2, (25, 2))
    for a, b in zip(m.predict(Xq, return_std=True), m2.predict(Xq, return_std=True)):
        np.testing.assert_array_equal(a, b)
    m2.partial_fit(X[5:8] + 0.02, y[5:8])
    m.partial_fit(X[5:8] + 0.02, y[5:8])
    np.testing.assert_array_equal(m.predict(Xq), m2.predict(Xq))
    again = MondrianKernelRidge(n_trees=5, lifetime=3.0, random_state=7).fit(X, y)
    again.partial_fit(X[:5] + 0.01, y[:5])
    again.partial_fit(X[5:8] + 0.02, y[5:8])
    np.testing.assert_array_equal(again.predict(Xq), m.predict(Xq))
    mk = MondrianKernel(n_trees=5, lifetime=3.0, extension="sample", random_state=1).fit(X)
    mk2 = pickle.loads(pickle.dumps(mk))
    assert (mk.transform(Xq) != mk2.transform(Xq)).nnz == 0
