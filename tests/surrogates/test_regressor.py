"""MondrianForestRegressor: exact BP, branch-off predictive, limits, pickling, bad input."""

import copy
import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from surrogates import MondrianForestRegressor
from surrogates.forest._regression_kernels import (MODE_BP_E, POST_M, POST_V, _branch_moments,
                                                   truncated_exp_mean)
from surrogates._core._tree_kernels import LEFT, PARENT, RIGHT, TAU, preorder


def _data(n=200, d=2, seed=0, noise=0.1):
    rng = np.random.default_rng(seed)
    X = rng.random((n, d))
    y = np.sin(5 * X[:, 0]) + X[:, 1] ** 2 + noise * rng.standard_normal(n)
    return X, y


# --------------------------------------------------------------------------------------------
# exact Gaussian belief propagation against dense Gaussian conditioning
# --------------------------------------------------------------------------------------------

def _V(tau, g1, g2):
    return g1 if np.isinf(tau) else g1 / (1 + np.exp(-g2 * tau))


def _ancestors(store, t, j):
    out = [j]
    while store.inode[t, out[-1], PARENT] >= 0:
        out.append(store.inode[t, out[-1], PARENT])
    return out  # j, parent, ..., root


def _lca_tau(store, t, a, b):
    anc_a = _ancestors(store, t, a)
    anc_b = set(_ancestors(store, t, b))
    for k in anc_a:
        if k in anc_b:
            return store.fnode[t, k, TAU]
    raise AssertionError("no common ancestor")


def _dense_posterior(store, t, hyper, extra_cov=None):
    """Posterior of all node means (and optional extra variables) by dense conditioning."""
    mu, g1, g2, s2 = hyper
    nodes = list(preorder(store.inode, store.meta, t))
    V0 = _V(0.0, g1, g2)
    K = np.array([[_V(_lca_tau(store, t, a, b), g1, g2) - V0 for b in nodes] for a in nodes])
    leaves = [j for j in nodes if store.inode[t, j, LEFT] < 0]
    pts, col = [], []
    for j in leaves:
        for p in store.leaf_points(t, j):
            pts.append(p)
            col.append(nodes.index(j))
    y = store.y[pts]
    Kyy = K[np.ix_(col, col)] + s2 * np.eye(len(col))
    Kmy = K[:, col]
    if extra_cov is not None:  # rows for extra latent variables: (cov with nodes, own var)
        rows, own = extra_cov(nodes, K)
        Kmy = np.vstack([Kmy, rows[:, col]])
        prior_var = np.concatenate([np.diag(K), own])
    else:
        prior_var = np.diag(K)
    A = np.linalg.solve(Kyy, Kmy.T).T
    mean = mu + A @ (y - mu)
    var = prior_var - np.einsum("ij,ij->i", A, Kmy)
    return nodes, mean, var


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_bp_equals_dense_gaussian_conditioning(seed):
    X, y = _data(14, 2, seed=seed, noise=0.3)
    m = MondrianForestRegressor(n_estimators=3, min_samples_split=2, posterior="bp",
                                gamma2_factor=2.0, random_state=seed).fit(X, y)
    mode, hyper, bp = m._prepare()
    for t in range(3):
        nodes, mean, var = _dense_posterior(m._store, t, hyper)
        np.testing.assert_allclose(bp[t, nodes, POST_M], mean, rtol=0, atol=1e-10)
        np.testing.assert_allclose(bp[t, nodes, POST_V], var, rtol=0, atol=1e-10)


def test_log_marginal_likelihood_equals_dense_gaussian():
    from scipy.stats import multivariate_normal
    X, y = _data(14, 2, seed=5, noise=0.3)
    m = MondrianForestRegressor(n_estimators=3, min_samples_split=3, posterior="bp",
                                gamma2_factor=2.0, random_state=1).fit(X, y)
    mode, hyper, bp = m._prepare()
    mu, g1, g2, s2 = hyper
    s = m._store
    lml = m.log_marginal_likelihood()
    for t in range(3):
        leaf_of = m.apply(X)[:, t]
        V0 = _V(0.0, g1, g2)
        K = np.array([[_V(_lca_tau(s, t, a, b), g1, g2) - V0 for b in leaf_of] for a in leaf_of])
        dense = multivariate_normal(np.full(14, mu), K + s2 * np.eye(14)).logpdf(y)
        assert abs(lml[t] - dense) < 1e-9


def test_bp_messages_serial_and_threaded_are_identical():
    """Small forests pass their BP messages on one thread, large ones on the thread pool: the
    same messages and log marginal likelihoods, bit for bit."""
    from surrogates.forest._regression_kernels import N_BP, bp_messages, bp_messages_serial

    X, y = _data(300, 3, seed=2, noise=0.3)
    m = MondrianForestRegressor(n_estimators=6, min_samples_split=2, posterior="bp",
                                random_state=3).fit(X, y)
    mu, g1, g2, s2 = m._prepare()[1]
    s = m._store
    out = []
    for kernel in (bp_messages_serial, bp_messages):
        bp = np.zeros((s.n_trees, s.inode.shape[1], N_BP))
        logml = np.empty(s.n_trees)
        kernel(s.inode, s.fnode, s.stats, s.meta, bp, mu, g1, g2, s2, logml)
        out.append((bp, logml))
    nn = s.meta[:, 1].max()
    np.testing.assert_array_equal(out[0][0][:, :nn], out[1][0][:, :nn])
    np.testing.assert_array_equal(out[0][1], out[1][1])
    assert np.all(np.isfinite(out[0][1]))


def test_branch_off_E_equals_dense_conditioning_on_an_inserted_node():
    """Option (E): a node inserted above j at the expected cut time, a new leaf below it."""
    X, y = _data(12, 2, seed=4, noise=0.3)
    m = MondrianForestRegressor(n_estimators=1, min_samples_split=2, posterior="bp",
                                gamma2_factor=2.0, random_state=0).fit(X, y)
    mode, hyper, bp = m._prepare()
    mu, g1, g2, s2 = hyper
    s = m._store
    V0 = _V(0.0, g1, g2)
    for j in preorder(s.inode, s.meta, 0):
        par = s.inode[0, j, PARENT]
        tp = s.fnode[0, par, TAU] if par >= 0 else 0.0
        tau = s.fnode[0, j, TAU]
        eta, delta = 0.7, tau - tp
        tbar = tp + truncated_exp_mean(eta, delta)
        below = set()
        stack = [j]
        while stack:
            k = stack.pop()
            below.add(k)
            if s.inode[0, k, LEFT] >= 0:
                stack += [s.inode[0, k, LEFT], s.inode[0, k, RIGHT]]

        def extra(nodes, K):
            row_h = np.array([(_V(tbar, g1, g2) - V0) if b in below else
                              (_V(_lca_tau(s, 0, par, b), g1, g2) - V0 if par >= 0 else 0.0)
                              for b in nodes])
            var_h = _V(tbar, g1, g2) - V0
            # the new leaf's mean: mu_h plus the edge (tbar, inf)
            return np.vstack([row_h, row_h]), np.array([var_h, var_h + g1 - _V(tbar, g1, g2)])

        nodes, mean, var = _dense_posterior(s, 0, hyper, extra)
        m_k, v_k = _branch_moments(MODE_BP_E, 0, j, tp, tau, eta, delta, s.stats, bp, s2, g1, g2)
        assert abs(m_k - mean[-1]) < 1e-10
        assert abs(v_k - (var[-1] + s2)) < 1e-10


# --------------------------------------------------------------------------------------------
# closed forms against Monte Carlo
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("eta,delta", [(2.0, np.inf), (2.0, 0.3), (5.0, 0.01), (0.5, 4.0)])
def test_truncated_exponential_mean_vs_monte_carlo(eta, delta):
    rng = np.random.default_rng(0)
    e = rng.exponential(1 / eta, 4_000_000)
    e = e[e < delta]
    se = e.std() / np.sqrt(len(e))
    assert abs(truncated_exp_mean(eta, delta) - e.mean()) < 5 * se + 1e-12


def test_truncated_exponential_mean_small_rate_branch_is_continuous():
    # below eta*delta = 1e-6 a series replaces the cancelling closed form; both sides agree
    for delta in (1e-7, 2e-7, 1e-3):
        exact = delta * (0.5 - 5.0 * delta / 12.0)
        assert truncated_exp_mean(5.0, delta) == pytest.approx(exact, rel=1e-9)
    assert truncated_exp_mean(1.0, 1.0000001e-6) == pytest.approx(truncated_exp_mean(1.0, 0.9999999e-6), rel=1e-6)


def test_branch_off_mixture_mean_vs_sampled_extensions():
    """The analytic average over where a query cuts into the tree equals the average over
    Mondrian extensions sampled by the online update."""
    X, y = _data(25, 2, seed=7, noise=1.0)
    m = MondrianForestRegressor(n_estimators=1, min_samples_split=3, random_state=0).fit(X, y)
    s = m._store
    n_nodes = s.meta[0, 1]
    for xq in ([0.5, 1.4], [-0.6, 0.2], [0.3, 0.4]):
        xq = np.array([xq])
        predicted = m.predict(xq)[0]
        draws = np.empty(3000)
        for r in range(len(draws)):
            c = copy.deepcopy(s)
            c.rng[0] = np.random.SeedSequence(r).generate_state(4, np.uint64)
            c.extend(xq, np.zeros(1), m.feature_lower_, m.feature_scale_)
            p = s.n_points
            par = c.inode[0, :c.meta[0, 1], PARENT]
            new_leaf = [k for k in range(n_nodes, c.meta[0, 1]) if c.inode[0, k, 4] == p]
            if new_leaf and par[new_leaf[0]] >= n_nodes:  # a new parent h cut x off from j
                h = par[new_leaf[0]]
                j = c.inode[0, h, LEFT] if c.inode[0, h, RIGHT] == new_leaf[0] else c.inode[0, h, RIGHT]
            else:  # no cut: x joined the leaf it is routed to
                j = s.apply(m._scale(xq))[0, 0]
            draws[r] = s.stats[0, j, 1]
        se = draws.std() / np.sqrt(len(draws))
        assert abs(draws.mean() - predicted) < 4 * se + 1e-9, (xq, draws.mean(), predicted, se)


@pytest.mark.parametrize("posterior,branch_off", [("empirical", None), ("bp", "E"), ("bp", "R"),
                                                  ("bp", "F")])
def test_mixture_is_a_density_with_the_reported_moments(posterior, branch_off):
    """Mixture weights sum to one and the forest moment formulas are the mixture's moments:
    integrate the predictive density numerically."""
    X, y = _data(150, 2, seed=1, noise=0.2)
    m = MondrianForestRegressor(n_estimators=5, min_samples_split=4, posterior=posterior,
                                branch_off=branch_off, K_cap=50, random_state=0).fit(X, y)
    queries = np.array([[0.3, 0.3], [1.3, 0.5], [-2.0, 3.0], X[0]])
    mean, std = m.predict(queries, return_std=True)
    for q, mu, sd in zip(queries, mean, std):
        grid = np.linspace(mu - 12 * sd - 3, mu + 12 * sd + 3, 60001)
        dens = np.exp(m.predictive_log_pdf(np.repeat(q[None], len(grid), 0), grid))
        mass = np.trapezoid(dens, grid)
        m1 = np.trapezoid(grid * dens, grid)
        m2 = np.trapezoid((grid - m1) ** 2 * dens, grid)
        assert abs(mass - 1) < 1e-4
        assert abs(m1 - mu) < 1e-4 * (1 + abs(mu))
        assert abs(np.sqrt(m2) - sd) < 1e-3 * sd


# --------------------------------------------------------------------------------------------
# limits, consistency, persistence
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("posterior", ["empirical", "bp"])
def test_far_from_data_reverts_to_the_prior(posterior):
    X, y = _data(400, 3, seed=2, noise=0.5)
    m = MondrianForestRegressor(posterior=posterior, random_state=0).fit(X, y)
    far = np.array([[1e3, -5e3, 3e3], [1e4, 1e4, 1e4]])
    mean, std = m.predict(far, return_std=True)
    np.testing.assert_allclose(mean, y.mean(), rtol=1e-4, atol=1e-9)
    np.testing.assert_allclose(m.predict(far[1:] * 1e3), y.mean(), rtol=1e-6)
    np.testing.assert_allclose(std, y.std(), rtol=2e-3)
    near_mean, near_std = m.predict(X[:50], return_std=True)
    assert np.all(near_std < std[0])  # uncertainty grows away from the data


def test_std_grows_with_distance_from_the_data():
    X, y = _data(300, 2, seed=3)
    m = MondrianForestRegressor(min_samples_split=2, random_state=0).fit(X[:, :1], y)
    d = np.array([0.0, 0.05, 0.2, 0.5, 1.0, 3.0])
    _, std = m.predict((1.0 + d)[:, None], return_std=True)
    assert np.all(np.diff(std[:4]) > 0)  # grows leaving the data ...
    _, inside = m.predict(X[:, :1], return_std=True)
    assert np.all(std[2:] > inside.max())  # ... stays above any in-data value ...
    far = m.predict(np.array([[1e3]]), return_std=True)[1][0]
    assert far == pytest.approx(y.std(), rel=0.01)  # ... and tends to the prior's


def test_posterior_switch_without_refit_and_reproducibility():
    X, y = _data(300, 2)
    a = MondrianForestRegressor(random_state=5).fit(X, y)
    b = MondrianForestRegressor(random_state=5).fit(X, y)
    np.testing.assert_array_equal(a.predict(X), b.predict(X))
    e = a.predict(X[:20], return_std=True)
    a.set_params(posterior="bp")
    bp = a.predict(X[:20], return_std=True)
    a.set_params(posterior="empirical")
    np.testing.assert_array_equal(a.predict(X[:20], return_std=True)[1], e[1])
    assert not np.allclose(bp[1], e[1])
    c = MondrianForestRegressor(random_state=6).fit(X, y)
    assert not np.array_equal(a.predict(X), c.predict(X))


def test_nlpd_interval_and_score():
    X, y = _data(2000, 2, seed=9, noise=0.2)
    m = MondrianForestRegressor(random_state=0).fit(X[:1500], y[:1500])
    lo, hi = m.predict_interval(X[1500:], coverage=0.9)
    cover = np.mean((y[1500:] >= lo) & (y[1500:] <= hi))
    assert 0.75 < cover <= 1.0
    assert m.nlpd(X[1500:], y[1500:]) == pytest.approx(-m.predictive_log_pdf(X[1500:], y[1500:]).mean())
    assert m.score(X[1500:], y[1500:]) > 0.8


@pytest.mark.parametrize("posterior", ["empirical", "bp"])
def test_pickle_round_trip_in_a_fresh_process(tmp_path, posterior):
    X, y = _data(500, 3, seed=4)
    m = MondrianForestRegressor(posterior=posterior, min_samples_split=2, random_state=0)
    m.fit(X[:300], y[:300])
    for i in range(300, 320):
        m.partial_fit(X[i:i + 1], y[i:i + 1])
    path = tmp_path / "model.pkl"
    path.write_bytes(pickle.dumps(m))
    np.save(tmp_path / "X.npy", X)
    code = textwrap.dedent(f"""
        import pickle, numpy as np
        m = pickle.load(open(r"{path}", "rb"))
        X = np.load(r"{tmp_path / 'X.npy'}")
        mu, sd = m.predict(X, return_std=True)
        np.save(r"{tmp_path / 'pred.npy'}", np.stack([mu, sd]))
        m.partial_fit(X[320:330], np.ones(10))
        np.save(r"{tmp_path / 'pred2.npy'}", m.predict(X))
    """)
    subprocess.run([sys.executable, "-c", code], check=True)
    mu, sd = m.predict(X, return_std=True)
    np.testing.assert_array_equal(np.load(tmp_path / "pred.npy"), np.stack([mu, sd]))
    m.partial_fit(X[320:330], np.ones(10))  # the random streams travel with the model
    np.testing.assert_array_equal(np.load(tmp_path / "pred2.npy"), m.predict(X))


def test_pickles_hold_only_what_is_used_and_are_deterministic():
    """A pickle carries the used points and nodes, not the doubled capacity (nor uninitialised
    memory): two identically grown forests pickle to the same bytes, and the round trip keeps
    predicting and growing identically."""
    X, y = _data(700, 2, seed=5)

    def grow():
        m = MondrianForestRegressor(min_samples_split=2, random_state=3)
        m.partial_fit(X[:10], y[:10])
        for i in range(10, 600):
            m.partial_fit(X[i:i + 1], y[i:i + 1])
        return m

    a, b = grow(), grow()
    pa = pickle.dumps(a)
    assert pa == pickle.dumps(b)
    s = a._store
    allocated = sum(getattr(s, k).nbytes for k in ("X", "y", "pnext", "inode", "fnode", "box",
                                                   "stats"))
    assert len(pa) < 0.7 * allocated
    c = pickle.loads(pa)
    np.testing.assert_array_equal(c.predict(X, return_std=True)[1],
                                  a.predict(X, return_std=True)[1])
    for m in (a, c):
        m.partial_fit(X[600:], y[600:])
    np.testing.assert_array_equal(c.predict(X), a.predict(X))


def test_mid_sized_batches_give_the_same_prediction_on_either_kernel():
    X, y = _data(300, 3, seed=6)
    m = MondrianForestRegressor(min_samples_split=2, random_state=0).fit(X, y)
    Q = np.random.default_rng(0).random((700, 3))
    first = m.predict(Q, return_std=True)
    for _ in range(70):  # the chooser tries both kernels (and re-times the slower one)
        again = m.predict(Q, return_std=True)
        np.testing.assert_array_equal(again[0], first[0])
        np.testing.assert_array_equal(again[1], first[1])
    assert min(m._store._predict_batches.cost) > 0.0


def test_introspection():
    X, y = _data(300, 2)
    m = MondrianForestRegressor(n_estimators=4, min_samples_split=5, random_state=0).fit(X, y)
    leaves = m.apply(X)
    assert leaves.shape == (300, 4)
    s = m._store
    for t in range(4):
        assert np.all(s.inode[t, leaves[:, t], LEFT] == -1)
        assert len(np.unique(leaves[:, t])) == m.get_n_leaves()[t]
    assert np.all(m.get_depth() >= m.get_weighted_depth())
    assert np.all(m.get_weighted_depth() > 1)
    hp = m.hyperparameters_
    assert hp["mu_H"] == pytest.approx(y.mean())
    K = min(2000, 600)
    assert hp["gamma1"] * (0.5 + 1 / K) == pytest.approx(y.var())
    assert hp["noise_var"] == pytest.approx(hp["gamma1"] / K)


def test_feature_weights():
    rng = np.random.default_rng(0)
    X = rng.random((600, 4))
    y = np.sin(6 * X[:, 0]) + 0.05 * rng.standard_normal(600)
    m = MondrianForestRegressor(feature_weights="mutual_info", random_state=0).fit(X, y)
    assert m.feature_weights_[0] == 1.0 and np.all(m.feature_weights_[1:] < 0.2)
    f = MondrianForestRegressor(feature_weights=[1, 0, 0, 0], random_state=0).fit(X, y)
    # a zero weight is floored, not dropped: the feature's range shrinks to 1e-3
    np.testing.assert_allclose(f._scale(X).max(axis=0)[1:], 1e-3, rtol=1e-6)
    plain = MondrianForestRegressor(random_state=0).fit(X[:400], y[:400])
    assert f.score(X[400:], y[400:]) > plain.score(X[400:], y[400:])


# --------------------------------------------------------------------------------------------
# bad input: clear errors naming the argument, state untouched
# --------------------------------------------------------------------------------------------

def _snapshot(m):
    s = m._store
    return {k: getattr(s, k).copy() for k in ("inode", "fnode", "box", "stats", "pnext", "meta",
                                                "rng", "X", "y")} | {"n": s.n_points}


@pytest.mark.parametrize("X_bad,y_bad,match", [
    (np.array([[np.nan, 0.1]]), np.array([1.0]), "X"),
    (np.array([[np.inf, 0.1]]), np.array([1.0]), "X"),
    (np.array([[0.5, 0.1]]), np.array([np.nan]), "y"),
    (np.array([[0.5, 0.1], [0.2, 0.2]]), np.array([1.0, -np.inf]), "y"),
    (np.array([[0.5, 0.1, 0.3]]), np.array([1.0]), "features"),
    (np.array([[0.5, 0.1]]), np.array([1.0, 2.0]), "y"),
    (np.array([0.5, 0.1]), np.array([1.0]), "2D"),
    ([["a", "b"]], [1.0], "X"),
    (np.array([[0.5, 0.1]]), ["a"], "y"),
])
def test_bad_partial_fit_input_is_rejected_and_changes_nothing(X_bad, y_bad, match):
    X, y = _data(100, 2)
    m = MondrianForestRegressor(random_state=0).fit(X, y)
    before = _snapshot(m)
    pred = m.predict(X, return_std=True)
    with pytest.raises(ValueError, match=match):
        m.partial_fit(X_bad, y_bad)
    after = _snapshot(m)
    for k, v in before.items():
        np.testing.assert_array_equal(v, after[k], err_msg=k)
    np.testing.assert_array_equal(pred, m.predict(X, return_std=True))


@pytest.mark.parametrize("params,match", [
    ({"n_estimators": 0}, "n_estimators"),
    ({"n_estimators": 2.5}, "n_estimators"),
    ({"lifetime": -1.0}, "lifetime"),
    ({"lifetime": 0}, "lifetime"),
    ({"min_samples_split": 0}, "min_samples_split"),
    ({"posterior": "exact"}, "posterior"),
    ({"branch_off": "E"}, "branch_off"),
    ({"posterior": "bp", "branch_off": "Q"}, "branch_off"),
    ({"K_cap": -5}, "K_cap"),
    ({"gamma2_factor": 0}, "gamma2_factor"),
    ({"noise_var": -1.0}, "noise_var"),
    ({"noise_var": "max"}, "noise_var"),
    ({"feature_bounds": [(0, 1)]}, "feature_bounds"),
    ({"feature_bounds": [(0, 1), (2, 1)]}, "feature_bounds"),
    ({"feature_weights": "magic"}, "feature_weights"),
    ({"feature_weights": [1, -1]}, "feature_weights"),
    ({"random_state": "seed"}, "random_state"),
    ({"random_state": -3}, "random_state"),
])
def test_invalid_parameters_name_the_parameter(params, match):
    X, y = _data(50, 2)
    with pytest.raises((ValueError, TypeError), match=match):
        MondrianForestRegressor(**params).fit(X, y)


def test_bad_fit_and_predict_input():
    X, y = _data(50, 2)
    with pytest.raises(ValueError, match="X"):
        MondrianForestRegressor().fit(np.c_[X[:, :1], np.full(50, np.nan)], y)
    with pytest.raises(ValueError, match="y"):
        MondrianForestRegressor().fit(X, np.r_[y[:-1], np.inf])
    with pytest.raises(ValueError, match="y"):
        MondrianForestRegressor().fit(X, y[:10])
    m = MondrianForestRegressor(random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="features"):
        m.predict(X[:, :1])
    with pytest.raises(ValueError, match="X"):
        m.predict(np.array([[np.nan, 0.0]]))
    with pytest.raises(ValueError, match="coverage"):
        m.predict_interval(X, coverage=1.5)
    from sklearn.exceptions import NotFittedError
    with pytest.raises(NotFittedError):
        MondrianForestRegressor().predict(X)
    # a failed refit leaves the fitted model as it was
    pred = m.predict(X)
    with pytest.raises(ValueError):
        m.fit(X, np.full(50, np.nan))
    np.testing.assert_array_equal(pred, m.predict(X))


@pytest.mark.parametrize("posterior", ["empirical", "bp"])
def test_refit_targets_equals_growing_on_the_new_targets(posterior):
    from surrogates._core.tree import check_invariants

    rng = np.random.default_rng(1)
    X = rng.random((300, 3))
    y1, y2 = rng.normal(size=300), np.exp(rng.normal(size=300))

    def grow(y):
        f = MondrianForestRegressor(n_estimators=4, min_samples_split=2, posterior=posterior,
                                    random_state=3)
        f.fit(X[:20], y[:20])
        for i in range(20, 300, 7):
            f.partial_fit(X[i:i + 7], y[i:i + 7])
        return f

    a, b = grow(y1), grow(y2)
    a.refit_targets(list(y2))
    check_invariants(a._store)
    Q = rng.random((400, 3))
    for (ma, sa), (mb, sb) in [(a.predict(Q, return_std=True), b.predict(Q, return_std=True))]:
        np.testing.assert_allclose(ma, mb, rtol=0, atol=1e-10)
        np.testing.assert_allclose(sa, sb, rtol=0, atol=1e-10)
    # bad input names the argument and changes nothing
    before = a.predict(Q)
    with pytest.raises(ValueError, match="y has 5 targets"):
        a.refit_targets(y2[:5])
    bad = y2.copy()
    bad[3] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        a.refit_targets(bad)
    np.testing.assert_array_equal(a.predict(Q), before)
    with pytest.raises(Exception, match="not fitted"):
        MondrianForestRegressor().refit_targets([1.0])


@pytest.mark.parametrize("posterior", ["empirical", "bp"])
def test_fused_forest_moments_equal_the_per_tree_mixture(posterior):
    from surrogates import regressor

    rng = np.random.default_rng(4)
    X = rng.random((150, 3))
    y = 1000.0 + 50 * np.sin(6 * X).sum(axis=1)  # large offset: no cancellation allowed
    f = MondrianForestRegressor(n_estimators=6, min_samples_split=2, posterior=posterior,
                                random_state=0).fit(X, y)
    Q = np.vstack([rng.random((3000, 3)), rng.random((300, 3)) * 3 - 1])  # far points too
    mt, vt = f.predict_per_tree(Q)
    E = mt.mean(axis=1)
    V = (vt + (mt - E[:, None]) ** 2).mean(axis=1)
    m, s = f.predict(Q, return_std=True)  # >= SERIAL_BELOW: the threaded kernel
    np.testing.assert_allclose(m, E, rtol=0, atol=1e-9)
    np.testing.assert_allclose(s, np.sqrt(V), rtol=1e-9, atol=1e-9)
    m1, s1 = f.predict(Q[:regressor.SERIAL_BELOW - 1], return_std=True)  # one thread
    np.testing.assert_allclose(m1, m[:regressor.SERIAL_BELOW - 1], rtol=0, atol=1e-12)
    np.testing.assert_allclose(s1, s[:regressor.SERIAL_BELOW - 1], rtol=0, atol=1e-12)


@pytest.mark.parametrize("posterior,branch_off,lifetime,mss", [
    ("empirical", None, np.inf, 2), ("bp", "E", np.inf, 2), ("bp", "R", 2.0, 5),
    ("bp", "F", np.inf, 10), ("empirical", None, 0.5, 2)])
def test_node_batched_moments_equal_the_per_point_walk(posterior, branch_off, lifetime, mss):
    """Batches visit each node once with all the queries of a block that reach it; the numbers
    must be exactly those of walking each query down each tree (same operations, same order
    per query), for every posterior and branch-off mode, inside, outside and on the data, and
    whatever the batch size, block size and number of threads."""
    import numba

    from surrogates import regressor
    from surrogates._core._tree_kernels import ROOT

    rng = np.random.default_rng(11)
    X = rng.random((300, 4))
    y = 1000.0 + 50 * np.sin(6 * X).sum(axis=1)
    f = MondrianForestRegressor(n_estimators=5, min_samples_split=mss, posterior=posterior,
                                branch_off=branch_off, lifetime=lifetime,
                                random_state=3).fit(X, y)
    n = 2 * regressor.SERIAL_BELOW + 123
    Q = rng.uniform(-0.5, 1.5, (n, 4))
    Q[:300] = X  # on the training points
    Q[300:400] = X[:100] + 1e-9  # just next to them
    m, s = f.predict(Q, return_std=True)
    # each tree's walk (the per-tree predictions), summed about the root mean in tree order
    mt, vt = f.predict_per_tree(Q)
    c = f._store.stats[0, f._store.meta[0, ROOT], 1]
    sm, sv = np.zeros(n), np.zeros(n)
    for t in range(mt.shape[1]):
        dm = mt[:, t] - c
        sm += dm
        sv += vt[:, t] + dm * dm
    e = sm / mt.shape[1]
    np.testing.assert_array_equal(m, c + e)
    np.testing.assert_array_equal(s, np.sqrt(np.maximum(sv / mt.shape[1] - e * e, 0.0)))
    threads = numba.get_num_threads()
    try:
        for k in sorted({1, threads}):
            numba.set_num_threads(k)
            for size in (1, 7, regressor.PARALLEL_FROM - 1, regressor.PARALLEL_FROM + 1,
                         regressor.SERIAL_BELOW - 1, regressor.SERIAL_BELOW + 5):
                for lo in range(0, min(n, 3 * size), size):
                    m1, s1 = f.predict(Q[lo:lo + size], return_std=True)
                    np.testing.assert_array_equal(m1, m[lo:lo + size])
                    np.testing.assert_array_equal(s1, s[lo:lo + size])
    finally:
        numba.set_num_threads(threads)


# --------------------------------------------------------------------------------------------
# targets and inputs near the limits of float64
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("posterior", ["empirical", "bp"])
@pytest.mark.parametrize("kind", ["1e300", "+-1e308", "1e200 offset", "1e-300 tiny"])
def test_huge_targets_give_finite_predictions(posterior, kind):
    """Squared deviations of targets beyond ~1e154 overflow: such targets are rescaled inside
    and the predictions come back finite, in the targets' units."""
    X, y = _data(200, 2)
    Y = {"1e300": y / np.abs(y).max() * 1e300,
         "+-1e308": np.where(y > np.median(y), 1e308, -1e308),
         "1e200 offset": 1e200 + y * 1e186,
         "1e-300 tiny": y * 1e-300}[kind]
    m = MondrianForestRegressor(posterior=posterior, min_samples_split=2, random_state=0)
    m.fit(X[:150], Y[:150])
    m.partial_fit(X[150:], Y[150:])
    mean, std = m.predict(X, return_std=True)
    assert np.all(np.isfinite(mean)) and np.all(np.isfinite(std)) and np.all(std > 0)
    assert np.all(np.abs(mean) <= np.abs(Y).max())
    # the training points are fitted (min_samples_split=2: each point is nearly its own leaf);
    # compared in [0, 1] (halves first: Y's range may overflow)
    def unit(v):
        return (v / 2 - Y.min() / 2) / (Y.max() / 2 - Y.min() / 2)

    assert np.corrcoef(unit(mean), unit(Y))[0, 1] > 0.9
    assert np.all(np.isfinite(m.predictive_log_pdf(X, Y)))


@pytest.mark.parametrize("posterior", ["empirical", "bp"])
def test_huge_targets_are_rescaled_exactly(posterior):
    """Targets times 2^900 give exactly 2^900 times the predictions (division by a power of
    two is exact), and densities shifted by -900 log 2."""
    X, y = _data(300, 3, seed=2)
    Q = np.random.default_rng(0).uniform(-0.5, 1.5, (500, 3))
    kw = dict(posterior=posterior, min_samples_split=2, n_estimators=5, random_state=0)
    a = MondrianForestRegressor(**kw).fit(X[:200], y[:200])
    b = MondrianForestRegressor(**kw).fit(X[:200], np.ldexp(y[:200], 900))
    for i in range(200, 300, 10):
        a.partial_fit(X[i:i + 10], y[i:i + 10])
        b.partial_fit(X[i:i + 10], np.ldexp(y[i:i + 10], 900))
    (ma, sa), (mb, sb) = a.predict(Q, return_std=True), b.predict(Q, return_std=True)
    np.testing.assert_array_equal(np.ldexp(ma, 900), mb)
    np.testing.assert_array_equal(np.ldexp(sa, 900), sb)
    np.testing.assert_allclose(a.predictive_log_pdf(Q[:50], y[:50]) - 900 * np.log(2),
                               b.predictive_log_pdf(Q[:50], np.ldexp(y[:50], 900)),
                               rtol=1e-12)
    assert b.hyperparameters_["mu_H"] == np.ldexp(a.hyperparameters_["mu_H"], 900)
    if posterior == "bp":
        np.testing.assert_allclose(a.log_marginal_likelihood() - 300 * 900 * np.log(2),
                                   b.log_marginal_likelihood(), rtol=1e-12)


@pytest.mark.parametrize("posterior", ["empirical", "bp"])
def test_a_huge_target_arriving_online_rescales_the_stored_ones(posterior):
    from surrogates._core.tree import check_invariants

    X, y = _data(200, 2, seed=3)
    m = MondrianForestRegressor(posterior=posterior, min_samples_split=2, random_state=0)
    m.fit(X[:100], y[:100])
    for i in range(100, 200):
        m.partial_fit(X[i:i + 1], y[i:i + 1] * (1e300 if i == 150 else 1.0))
    check_invariants(m._store)
    mean, std = m.predict(X, return_std=True)
    assert np.all(np.isfinite(mean)) and np.all(np.isfinite(std))
    assert np.argmax(np.abs(mean)) == 150
    m.refit_targets(y)  # ordinary targets again: no rescaling left
    np.testing.assert_array_equal(m._store.y[:200], y)
    assert np.isfinite(m.predict(X, return_std=True)[1]).all()


@pytest.mark.parametrize("posterior", ["empirical", "bp"])
def test_a_feature_range_overflowing_float64_is_scaled_exactly(posterior):
    """A feature spanning +-1.5 * 2^1023 (its range overflows) is halved exactly: the trees
    and predictions are those of the same feature spanning +-1.5."""
    X, y = _data(300, 3, seed=5)
    X[:, 0] = 3 * X[:, 0] - 1.5
    big = X.copy()
    big[:, 0] = np.ldexp(X[:, 0], 1023)
    with np.errstate(over="ignore"):
        assert np.isinf(big[:, 0].max() - big[:, 0].min())
    Q = np.random.default_rng(1).uniform(-1.5, 1.5, (400, 3))
    Qbig = Q.copy()
    Qbig[:, 0] = np.ldexp(Q[:, 0], 1023)
    kw = dict(posterior=posterior, min_samples_split=2, n_estimators=5, random_state=0)
    a = MondrianForestRegressor(**kw).fit(X[:200], y[:200])
    b = MondrianForestRegressor(**kw).fit(big[:200], y[:200])
    for i in range(200, 300):
        a.partial_fit(X[i:i + 1], y[i:i + 1])
        b.partial_fit(big[i:i + 1], y[i:i + 1])
    for u, v in zip(a.predict(Q, return_std=True), b.predict(Qbig, return_std=True)):
        np.testing.assert_array_equal(u, v)
    # +-1e308 exactly, and bounds that wide: a model that follows the data, not a constant
    wide = X.copy()
    wide[:, 0] = X[:, 0] * 1e308
    for fb in (None, [(-1e308, 1e308), (0, 1), (0, 1)]):
        c = MondrianForestRegressor(feature_bounds=fb, **kw).fit(wide, y)
        mean, std = c.predict(wide, return_std=True)
        assert np.all(np.isfinite(mean)) and np.all(np.isfinite(std))
        assert np.corrcoef(mean, y)[0, 1] > 0.9


def test_points_too_far_outside_the_fitted_range_are_refused_and_queries_clipped():
    X, y = _data(100, 2)
    tiny = X * 1e-200
    m = MondrianForestRegressor(random_state=0).fit(tiny, y)
    before = _snapshot(m)
    with pytest.raises(ValueError, match="sample 1 lies too far outside the feature range"):
        m.partial_fit(np.array([[5e-201, 5e-201], [1e300, 0.0]]), np.array([1.0, 2.0]))
    after = _snapshot(m)
    for k, v in before.items():
        np.testing.assert_array_equal(v, after[k], err_msg=k)
    mean, std = m.predict(np.array([[1e300, 0.0], [-1e308, 1e308]]), return_std=True)
    assert np.all(np.isfinite(mean)) and np.all(np.isfinite(std))
    np.testing.assert_allclose(mean, y.mean(), rtol=0.2)  # the prior, far from the data
    bounded = MondrianForestRegressor(feature_bounds=[(0, 1e-200), (0, 1e-200)], random_state=0)
    with pytest.raises(ValueError, match="sample 3 lies too far outside feature_bounds"):
        bounded.fit(np.r_[tiny[:3], [[1e300, 0.0]], tiny[3:]], np.r_[y, 0.0])
    assert not hasattr(bounded, "n_features_in_")


# --------------------------------------------------------------------------------------------
# set_params after fitting: structure parameters need fit, prediction parameters act at once
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("param,value", [
    ("n_estimators", 20), ("lifetime", 5.0), ("min_samples_split", 3),
    ("feature_bounds", [(0, 1), (0, 1)]), ("feature_weights", [1.0, 0.5]),
    ("feature_weights", "f_score"), ("random_state", 7)])
def test_structure_parameter_changed_after_fit_is_refused_by_partial_fit(param, value):
    X, y = _data(200, 2)
    m = MondrianForestRegressor(random_state=0).fit(X[:150], y[:150])
    for i in range(150, 160):
        m.partial_fit(X[i:i + 1], y[i:i + 1])
    before = _snapshot(m)
    pred = m.predict(X, return_std=True)
    m.set_params(**{param: value})
    with pytest.raises(ValueError, match=f"{param} was changed from .* since the last fit"
                                         f"(.|\n)*Call fit"):
        m.partial_fit(X[160:161], y[160:161])
    after = _snapshot(m)
    for k, v in before.items():
        np.testing.assert_array_equal(v, after[k], err_msg=k)
    # predictions use the fitted forest (as scikit-learn estimators use fitted attributes)
    np.testing.assert_array_equal(pred, m.predict(X, return_std=True))
    assert m.predict_per_tree(X[:3])[0].shape == (3, 10)
    # fit applies the new value, after which partial_fit goes on
    m.fit(X[:150], y[:150]).partial_fit(X[150:160], y[150:160])
    assert m.n_samples_seen_ == 160
    if param == "n_estimators":
        assert m.predict_per_tree(X[:3])[0].shape == (3, 20)


def test_structure_parameter_set_back_or_to_an_equal_value_is_accepted():
    X, y = _data(100, 2)
    m = MondrianForestRegressor(feature_bounds=[(0, 1), (0, 1)], random_state=0).fit(X, y)
    m.set_params(n_estimators=20)
    with pytest.raises(ValueError, match="n_estimators"):
        m.partial_fit(X[:1], y[:1])
    m.set_params(n_estimators=10, feature_bounds=np.array([[0.0, 1.0], [0.0, 1.0]]))
    m.partial_fit(X[:1], y[:1])
    assert m.n_samples_seen_ == 101


def test_invalid_parameter_set_after_fit_is_refused_by_partial_fit_and_predict():
    X, y = _data(100, 2)
    m = MondrianForestRegressor(random_state=0).fit(X, y)
    for params, match in [({"min_samples_split": 0}, "min_samples_split must be >= 1"),
                          ({"n_estimators": 2.5}, "n_estimators must be an integer"),
                          ({"lifetime": -1.0}, "lifetime"),
                          ({"K_cap": -1}, "K_cap"), ({"posterior": "exact"}, "posterior")]:
        old = {k: m.get_params()[k] for k in params}
        m.set_params(**params)
        with pytest.raises((ValueError, TypeError), match=match):
            m.partial_fit(X[:1], y[:1])
        m.set_params(**old)
    assert m.n_samples_seen_ == 100
    for params, match in [({"K_cap": -1}, "K_cap"), ({"gamma2_factor": 0}, "gamma2_factor"),
                          ({"noise_var": -1.0}, "noise_var"), ({"noise_var": "ML"}, "noise_var"),
                          ({"posterior": "x"}, "posterior"),
                          ({"posterior": "bp", "branch_off": "Q"}, "branch_off")]:
        old = {k: m.get_params()[k] for k in params}
        m.set_params(**params)
        with pytest.raises(ValueError, match=match):
            m.predict(X, return_std=True)
        m.set_params(**old)


def test_prediction_parameters_can_be_changed_between_online_updates():
    X, y = _data(200, 2)
    m = MondrianForestRegressor(random_state=0).fit(X[:100], y[:100])
    first = m.predict(X, return_std=True)
    m.set_params(posterior="bp", branch_off="R", K_cap=500.0, gamma2_factor=2.0, noise_var=0.01)
    m.partial_fit(X[100:], y[100:])
    assert m.hyperparameters_["noise_var"] == 0.01
    assert not np.array_equal(first[1], m.predict(X, return_std=True)[1])
    ref = MondrianForestRegressor(posterior="bp", branch_off="R", K_cap=500.0,
                                  gamma2_factor=2.0, noise_var=0.01, random_state=0)
    ref.fit(X[:100], y[:100]).partial_fit(X[100:], y[100:])
    np.testing.assert_array_equal(ref.predict(X, return_std=True), m.predict(X, return_std=True))


# --------------------------------------------------------------------------------------------
# noise_var="ml": the noise variance of the marginal-likelihood maximum
# --------------------------------------------------------------------------------------------

def _log_ml_at(m, noise_var):
    return m.set_params(noise_var=noise_var).log_marginal_likelihood().sum()


def test_ml_noise_maximises_the_marginal_likelihood():
    X, y = _data(400, 2, noise=0.3)
    m = MondrianForestRegressor(posterior="bp", noise_var="ml", random_state=0).fit(X, y)
    chosen = m.hyperparameters_["noise_var"]
    best = _log_ml_at(m, "ml")
    for other in (chosen * 0.7, chosen / 0.7, None, 0.3 ** 2, 1e-3 * y.var()):
        assert best >= _log_ml_at(m, other) - 1e-9
    # gamma1 follows the chosen variance as for a given noise_var
    m.set_params(noise_var="ml")
    hp = m.hyperparameters_
    assert hp["gamma1"] == pytest.approx(2 * (y.var() - hp["noise_var"]))


def test_ml_noise_tracks_how_noisy_the_targets_are():
    rng = np.random.default_rng(1)
    X = rng.random((2000, 1))
    pure_noise = rng.normal(3.0, 2.0, 2000)
    m = MondrianForestRegressor(noise_var="ml", random_state=0).fit(X, pure_noise)
    assert m.hyperparameters_["noise_var"] > 0.9 * pure_noise.var()  # nothing to explain
    smooth = np.sin(6 * X[:, 0])  # noise-free and well resolved by 2,000 points in 1-D
    m.fit(X, smooth)
    assert m.hyperparameters_["noise_var"] < 0.01 * smooth.var()


def test_ml_noise_is_recomputed_after_an_update_and_survives_pickling():
    X, y = _data(600, 2, noise=0.5)
    m = MondrianForestRegressor(posterior="bp", noise_var="ml", random_state=0).fit(X[:300], y[:300])
    first = m.hyperparameters_["noise_var"]
    m.partial_fit(X[300:], y[300:])
    ref = MondrianForestRegressor(posterior="bp", noise_var="ml", random_state=0)
    ref.fit(X[:300], y[:300]).partial_fit(X[300:], y[300:])
    assert m.hyperparameters_["noise_var"] != first
    assert m.hyperparameters_ == ref.hyperparameters_
    clone = pickle.loads(pickle.dumps(m))
    np.testing.assert_array_equal(clone.predict(X, return_std=True), m.predict(X, return_std=True))
    # the empirical posterior uses the same variance in its predictive
    m.set_params(posterior="empirical")
    assert m.hyperparameters_["noise_var"] == ref.hyperparameters_["noise_var"]


def test_ml_noise_is_better_calibrated_than_the_heuristic_on_noisy_targets():
    X, y = _data(3000, 2, seed=0, noise=0.5)
    Xt, yt = _data(2000, 2, seed=1, noise=0.5)
    m = MondrianForestRegressor(posterior="bp", random_state=0).fit(X, y)
    heuristic = -m.predictive_log_pdf(Xt, yt).mean()
    ml = -m.set_params(noise_var="ml").predictive_log_pdf(Xt, yt).mean()
    assert ml < heuristic - 0.1


def test_ml_noise_search_leaves_no_stale_messages():
    X, y = _data(500, 2, noise=0.3)
    m = MondrianForestRegressor(posterior="bp", random_state=0).fit(X, y)
    before = m.predict(X[:50], return_std=True)  # messages of the heuristic in m._bp
    m.set_params(noise_var="ml")
    chosen = m.hyperparameters_["noise_var"]  # the search overwrites the message array
    got = m.predict(X[:50], return_std=True)
    ref = MondrianForestRegressor(posterior="bp", noise_var=chosen, random_state=0).fit(X, y)
    np.testing.assert_allclose(got, ref.predict(X[:50], return_std=True), rtol=1e-12)
    m.set_params(noise_var=None)
    np.testing.assert_allclose(m.predict(X[:50], return_std=True), before, rtol=1e-12)
    # a search between two predictions with the same parameters must not leave its messages
    m.set_params(noise_var="ml")
    m.partial_fit(X[:1], y[:1])  # new data: the next search runs again
    m.set_params(noise_var=None)
    again = m.predict(X[:50], return_std=True)
    m.set_params(noise_var="ml")
    m.hyperparameters_  # the search, in the message array
    m.set_params(noise_var=None)
    np.testing.assert_array_equal(m.predict(X[:50], return_std=True), again)
