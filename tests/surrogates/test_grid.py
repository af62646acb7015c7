"""Mondrian grid tests: the 1-D processes against their laws (Poisson counts, exponential
first cuts, join probabilities), nestedness in the lifetimes, incremental split/merge updates
against from-scratch fits, features and the implied kernel, the Bayesian predictive against a
dense Gaussian process, the greedy exploration on data with an irrelevant dimension, bad input,
pickling and scikit-learn's estimator checks."""

import pickle

import numpy as np
import pytest
from scipy import stats
from sklearn.exceptions import NotFittedError

from surrogates import MondrianGrid
from surrogates.grid import GridExploration
from surrogates.grid._state import _GridState


def _toy(seed, n, noise=0.1):
    """x in [0,1]^3; y depends on x0 and x1 only (x2 is irrelevant)."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, 3))
    y = np.sin(2 * np.pi * X[:, 0]) + np.cos(np.pi * X[:, 1]) + noise * rng.standard_normal(n)
    return X, y


def _state(X, lams, M, seed=0):
    """Partition-only state (no ridge model), for Monte Carlo over many grids."""
    return _GridState.build(np.asarray(X, float), np.zeros(len(X)), np.asarray(lams, float), M,
                            np.uint64(seed), 1.0, model=False)


def _laplace(A, B, lams):
    return np.exp(-(np.abs(A[:, None, :] - B[None, :, :]) * lams).sum(-1))


# -- the 1-D Mondrian processes --------------------------------------------------------------
def test_cut_counts_are_poisson_and_nested():
    X = np.array([[0.0], [0.5], [2.0]])  # training range of width 2
    M, lam = 600, 3.0
    g = MondrianGrid(n_grids=M, lifetimes=0.0, random_state=1).fit(X, [0.0, 1.0, 2.0])
    counts, first, positions = [], [], []
    for m in range(M):
        pos, t = g.cuts(0, m, lifetime=lam)
        assert np.all(np.diff(pos) > 0) and np.all(t <= lam)
        counts.append(pos.shape[0])
        positions.append(pos)
        if t.shape[0]:
            first.append(t.min())
        # nested: the cuts up to a smaller lifetime are exactly the early ones
        p1, t1 = g.cuts(0, m, lifetime=1.0)
        np.testing.assert_array_equal(p1, pos[t <= 1.0])
        np.testing.assert_array_equal(t1, t[t <= 1.0])
    counts = np.array(counts)
    rate = lam * 2.0  # Poisson(lifetime x width)
    assert abs(counts.mean() - rate) < 4 * np.sqrt(rate / M)
    assert abs(counts.var() - rate) < 0.25 * rate
    # chi-square against the Poisson pmf, tail pooled
    k = np.arange(13)
    obs = np.r_[np.bincount(np.minimum(counts, 12), minlength=13)]
    exp = M * np.r_[stats.poisson.pmf(k[:-1], rate), stats.poisson.sf(11, rate)]
    assert stats.chisquare(obs, exp).pvalue > 1e-3
    # locations uniform on the range; time of the first cut ~ Exp(width)
    assert stats.kstest(np.concatenate(positions), stats.uniform(0, 2).cdf).pvalue > 1e-3
    first = np.array(first)  # conditioned on a cut before `lam`: truncated exponential
    cdf = lambda t: stats.expon.cdf(t, scale=0.5) / stats.expon.cdf(lam, scale=0.5)  # noqa: E731
    assert stats.kstest(first, cdf).pvalue > 1e-3


def test_gap_first_cut_times_are_exponential_and_match_the_cuts():
    u = np.array([0.0, 0.1, 0.15, 0.6, 1.0])
    st = _state(u[:, None], [0.0], 3000, seed=4)
    gaps = np.diff(u)
    for i, gap in enumerate(gaps, start=1):
        times = np.array([st._t1(0, m)[i] for m in range(st.M)])
        assert stats.kstest(times * gap, "expon").pvalue > 1e-3
    # the gap times are the first cuts of the same realisation that `cuts` enumerates
    g = MondrianGrid(n_grids=3, lifetimes=0.0, random_state=7).fit(u[:, None], u)
    st = g._state
    for m in range(3):
        pos, t = g.cuts(0, m, lifetime=200.0)
        for i in range(1, u.shape[0]):
            inside = (pos >= u[i - 1]) & (pos < u[i])
            expect = t[inside].min() if inside.any() else np.inf
            got = st._t1(0, m)[i]
            assert got == expect or (got > 200 and expect == np.inf)


@pytest.mark.parametrize("x, neighbour", [
    (0.3, 0.0), (0.3, 0.5),      # between two training coordinates
    (-0.7, 0.0),                 # left of the range
    (3.9, 2.0), (7.0, 2.0),      # right of the range, across the doubling blocks [2,4), [4,8)
])
def test_unseen_coordinates_join_with_laplace_probability(x, neighbour):
    """P(no cut between x and its training neighbour) = exp(-lambda |x - neighbour|)."""
    X = np.array([[0.0], [0.5], [2.0]])
    lam = 1.5 if x < 5 else 0.9
    M = 4000
    st = _state(X, [lam], M, seed=11)
    pos = st.positions(np.array([[x]]))[0]
    train_pos = st.f_pos[st.leaf[int(np.flatnonzero(X[:, 0] == neighbour)[0])]]
    frac = np.mean(pos == train_pos)
    p = np.exp(-lam * abs(x - neighbour))
    assert abs(frac - p) < 4 * np.sqrt(p * (1 - p) / M) + 1e-3


def test_prediction_path_equals_the_cached_locations_of_the_search():
    """``predict`` decides each row in one pass at the current lifetimes; the search caches
    lifetime-free locations instead.  Both must put every row in the same cell."""
    X, y = _toy(12, 200)
    rng = np.random.default_rng(3)
    Q = np.r_[rng.uniform(-0.3, 1.3, size=(300, 3)), X[:20], [[0.5, 7.0, -4.0]]]
    g = MondrianGrid(n_grids=4, lifetimes=0.0, random_state=1).fit(X, y)
    st = g._state
    loc = st.locate(Q)
    for d in (0, 1, 0, 2, 1, 1, 0, 2, 2, 0):
        g.increase(d)
        np.testing.assert_array_equal(st.positions(Q), st.query(loc))
    assert np.any(st.positions(Q) < 0) and np.any(st.positions(Q) >= 0)


def test_implied_kernel_tends_to_the_product_of_laplace_kernels():
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(20, 2))
    Q = np.r_[rng.uniform(size=(5, 2)), rng.uniform(-0.5, 1.5, size=(5, 2))]
    lams = np.array([4.0, 0.5])
    exact = _laplace(X, X, lams)
    errs = {}
    for M in (100, 3200):
        st = _state(X, lams, M, seed=M)
        pos = st.f_pos[st.leaf]                                   # (N, M)
        K = (pos[:, None, :] == pos[None, :, :]).mean(-1)
        errs[M] = np.abs(K - exact)
        if M == 3200:
            qpos = st.positions(Q)
            Kq = (qpos[:, None, :] == pos[None, :, :]).mean(-1)
            assert np.abs(Kq - _laplace(Q, X, lams)).max() < 0.06
    assert errs[3200].max() < 0.06
    assert errs[3200].mean() < errs[100].mean() / 3  # O(M^-1/2): sqrt(32) ~ 5.7
    # the public kernel is phi phi' of the same features
    g = MondrianGrid(n_grids=8, lifetimes=lams, random_state=0).fit(X, X[:, 0])
    Kp = g.kernel(X)
    np.testing.assert_allclose(np.diag(Kp), 1.0)
    np.testing.assert_allclose(Kp, Kp.T)
    np.testing.assert_allclose(Kp * 8, np.round(Kp * 8), atol=1e-12)


# -- features and the Bayesian model ---------------------------------------------------------
def test_features_shape_sparsity_and_counts():
    X, y = _toy(0, 200)
    M = 4
    g = MondrianGrid(n_grids=M, lifetimes=[3.0, 2.0, 1.0], random_state=0).fit(X, y)
    F = g.transform(X)
    assert F.shape == (200, g.n_cells_) and F.format == "csr"
    assert np.all(np.diff(F.indptr) == M)
    np.testing.assert_allclose(F.data, M ** -0.5)
    counts = np.asarray(F.power(2).sum(axis=0)).ravel() * M
    assert np.all(counts >= 1) and counts.sum() == 200 * M        # every column non-empty
    per_grid = np.asarray((F != 0).sum(axis=1)).ravel()
    assert np.all(per_grid == M)
    far = g.transform(np.array([[50.0, 50.0, 50.0]]))
    assert far.nnz == 0 and far.shape == (1, g.n_cells_)
    # lifetime 0 everywhere: one cell per grid, prediction = training mean
    g0 = MondrianGrid(n_grids=M, lifetimes=0.0, random_state=0).fit(X, y)
    assert g0.n_cells_ == M
    np.testing.assert_allclose(g0.predict(X), y.mean() + g0.coef_.sum() * M ** -0.5)
    np.testing.assert_allclose(g0.coef_, g0.coef_[0])


@pytest.mark.parametrize("prior_var", [1.0, 2.5])
def test_predictive_and_evidence_equal_a_dense_gaussian_process(prior_var):
    X, y = _toy(1, 60)
    Q = np.r_[_toy(2, 10)[0], [[2.0, 0.5, 0.5], [0.3, -1.0, 0.2]]]
    g = MondrianGrid(n_grids=5, lifetimes=[4.0, 3.0, 1.0], delta2=0.05, prior_var=prior_var,
                     random_state=3).fit(X, y)
    F, Fq = g.transform(X), g.transform(Q)
    K = (F @ F.T).toarray() + 0.05 * np.eye(60)
    ks = (Fq @ F.T).toarray()
    yc = y - y.mean()
    mean = y.mean() + ks @ np.linalg.solve(K, yc)
    # prior variance of f(x*) is s * (sum over grids of 1/M) = s; noise variance s * delta2
    var = prior_var * (1.0 + 0.05 - np.einsum("ij,ji->i", ks, np.linalg.solve(K, ks.T)))
    m, s = g.predict(Q, return_std=True)
    np.testing.assert_allclose(m, mean, atol=1e-9)
    np.testing.assert_allclose(s, np.sqrt(var), atol=1e-9)
    lml = stats.multivariate_normal(np.zeros(60), prior_var * K).logpdf(yc)
    np.testing.assert_allclose(g.log_marginal_likelihood_, lml, rtol=1e-10)
    # far away the predictive is the prior
    mf, sf = g.predict(np.array([[1e6, -1e6, 1e6]]), return_std=True)
    np.testing.assert_allclose([mf[0], sf[0]], [y.mean(), np.sqrt(prior_var * 1.05)])


def test_ml_prior_variance_maximises_the_evidence():
    X, y = _toy(3, 80)
    y = 7.0 * y
    g = MondrianGrid(n_grids=3, lifetimes=[4.0, 3.0, 0.0], prior_var="ml", random_state=0)
    g.fit(X, y)
    s = g.prior_var_
    best = g.log_marginal_likelihood_
    for f in (0.8, 1.25):
        other = MondrianGrid(n_grids=3, lifetimes=[4.0, 3.0, 0.0], prior_var=s * f,
                             random_state=0).fit(X, y)
        assert other.log_marginal_likelihood_ < best
    assert s > 1.0  # the targets were scaled up


# -- incremental moves ------------------------------------------------------------------------
def _assert_same_model(g, ref, Q):
    assert g.n_cells_ == ref.n_cells_
    np.testing.assert_array_equal(g.lifetimes_, ref.lifetimes_)
    m1, s1 = g.predict(Q, return_std=True)
    m2, s2 = ref.predict(Q, return_std=True)
    np.testing.assert_allclose(m1, m2, atol=1e-8)
    np.testing.assert_allclose(s1, s2, atol=1e-8)
    np.testing.assert_allclose(g.log_marginal_likelihood_, ref.log_marginal_likelihood_,
                               rtol=1e-9)
    np.testing.assert_allclose(np.sort(g.coef_), np.sort(ref.coef_), atol=1e-8)


def test_incremental_updates_equal_a_fit_from_scratch():
    X, y = _toy(4, 300)
    Q = np.r_[X[:40], _toy(5, 40)[0], [[1.5, -0.2, 0.4]]]
    kw = dict(n_grids=4, delta2=0.02, random_state=9)
    g = MondrianGrid(lifetimes=[1.0, 0.5, 0.0], **kw).fit(X, y)
    rng = np.random.default_rng(0)
    for step in range(45):
        d = int(rng.integers(3))
        g.increase(d) if rng.random() < 0.7 else g.decrease(d)
        if step % 15 == 14:
            _assert_same_model(g, MondrianGrid(lifetimes=g.lifetimes_, **kw).fit(X, y), Q)
    st = g._state
    C = st.C
    Phi = st.train_features()
    A = (Phi.T @ Phi).toarray() + 0.02 * np.eye(C)
    np.testing.assert_allclose(st.Ainv[:C, :C] @ A, np.eye(C), atol=1e-8)
    np.testing.assert_allclose(st.logdet, np.linalg.slogdet(A)[1], rtol=1e-10)
    # set_lifetimes: one-by-one updates and a rebuild give the same model
    target = g.lifetimes_ + np.array([2.0, 0.0, 0.7])
    a = pickle.loads(pickle.dumps(g)).set_lifetimes(target, incremental=True)
    b = pickle.loads(pickle.dumps(g)).set_lifetimes(target, incremental=False)
    _assert_same_model(a, b, Q)
    _assert_same_model(a, MondrianGrid(lifetimes=target, **kw).fit(X, y), Q)


def test_raise_then_lower_returns_the_identical_grid():
    X, y = _toy(6, 150)
    Q = _toy(7, 30)[0]
    g = MondrianGrid(n_grids=3, lifetimes=0.0, random_state=2).fit(X, y)
    for d in (0, 0, 1, 1, 2):
        assert g.increase(d)
    st = g._state
    lams, lb, leafs = g.lifetimes_, st.lb.copy(), st.f_pos[st.leaf].copy()
    cuts = [g.cuts(d, m) for d in range(3) for m in range(3)]
    pred = g.predict(Q, return_std=True)
    moves = [0, 1, 0, 2, 1, 0, 0, 2, 1, 1, 0, 2]
    done = [d for d in moves if g.increase(d)]
    assert len(done) == len(moves) and np.all(g.lifetimes_ >= lams)
    for d in reversed(done):
        assert g.decrease(d)
    np.testing.assert_array_equal(g.lifetimes_, lams)
    np.testing.assert_array_equal(st.lb, lb)
    # the same partition of the training rows (cell names may differ)
    now = st.f_pos[st.leaf]
    for m in range(3):
        pairs = {(a, b) for a, b in zip(leafs[:, m], now[:, m])}
        assert len(pairs) == len(set(leafs[:, m])) == len(set(now[:, m]))
    for (p0, t0), (p1, t1) in zip(cuts, [g.cuts(d, m) for d in range(3) for m in range(3)]):
        np.testing.assert_array_equal(p0, p1)
        np.testing.assert_array_equal(t0, t1)
    np.testing.assert_allclose(g.predict(Q, return_std=True), pred, atol=1e-9)


def test_moves_skip_noop_cuts_and_stop_when_exhausted():
    X = np.array([[0.0], [0.4], [1.0]])
    g = MondrianGrid(n_grids=2, lifetimes=0.0, random_state=0).fit(X, [0.0, 1.0, 0.0])
    ups = 0
    while g.increase(0):
        ups += 1
    assert ups == 4 and g.n_cells_ == 6  # each of the 2 grids cuts both gaps
    assert not g.increase(0)
    downs = 0
    while g.decrease(0):
        downs += 1
    assert downs == 4 and g.n_cells_ == 2 and g.lifetimes_[0] == 0.0


# -- exploration ------------------------------------------------------------------------------
def test_exploration_raises_the_relevant_lifetimes_only():
    best = []
    for seed in range(6):
        X, y = _toy(100 + seed, 800)
        g = MondrianGrid(n_grids=2, lifetimes=0.0, random_state=seed).fit(X[:400], y[:400])
        res = g.explore(X[400:], y[400:], max_steps=60, patience=10)
        assert isinstance(res, GridExploration) and g.exploration_ is res
        assert np.all(np.diff(res.lifetimes, axis=0) >= 0)        # increases only
        assert np.all(res.direction[1:] == 1) and res.moved[0] == -1
        assert res.val_rmse[res.best_step] == res.val_rmse.min() <= res.val_rmse[0]
        np.testing.assert_array_equal(g.lifetimes_, res.best_lifetimes)
        # the model left behind is the fit at the best configuration
        ref = MondrianGrid(n_grids=2, lifetimes=res.best_lifetimes, random_state=seed)
        ref.fit(X[:400], y[:400])
        np.testing.assert_allclose(g.predict(X[400:]), ref.predict(X[400:]), atol=1e-8)
        best.append(res.best_lifetimes)
    best = np.array(best)
    assert np.mean(best[:, 2] == 0.0) >= 0.5                        # irrelevant dim kept at 0
    assert best[:, 2].mean() < 0.2 * best[:, :2].mean()
    assert np.all(best[:, :2].max(axis=1) > 1.0)


def test_exploration_by_marginal_likelihood_and_with_decreases():
    X, y = _toy(8, 300)
    g = MondrianGrid(n_grids=2, lifetimes=0.0, random_state=0).fit(X, y)
    res = g.explore(max_steps=25, patience=25)
    assert res.criterion == "log_ml" and np.all(np.isnan(res.val_rmse))
    assert res.log_ml[res.best_step] == res.log_ml.max() > res.log_ml[0]
    assert res.best_lifetimes[:2].max() > 0
    np.testing.assert_allclose(g.log_marginal_likelihood_, res.log_ml[res.best_step],
                               rtol=1e-9)
    g2 = MondrianGrid(n_grids=1, lifetimes=[6.0, 6.0, 6.0], random_state=0).fit(X[:150],
                                                                             y[:150])
    res2 = g2.explore(X[150:], y[150:], allow_decrease=True, max_steps=20, patience=5)
    assert np.any(res2.direction == -1)
    assert res2.val_rmse[res2.best_step] <= res2.val_rmse[0]


# -- validation, pickling, reproducibility ----------------------------------------------------
def test_bad_input_names_the_argument_and_leaves_the_model_unchanged():
    X, y = _toy(9, 50)
    with pytest.raises(NotFittedError):
        MondrianGrid().predict(X)
    bad = [(dict(n_grids=0), "n_grids"), (dict(n_grids=2.5), "n_grids"),
           (dict(delta2=0.0), "delta2"), (dict(prior_var="auto"), "prior_var"),
           (dict(prior_var=-1.0), "prior_var"), (dict(lifetimes=-1.0), "lifetimes"),
           (dict(lifetimes=[1.0, 2.0]), "lifetimes"), (dict(lifetimes="big"), "lifetimes"),
           (dict(lifetimes=np.inf), "lifetimes"), (dict(max_cells=0), "max_cells"),
           (dict(random_state=-3), "random_state"), (dict(random_state="x"), "random_state"),
           (dict(lifetimes=30.0, max_cells=100), "max_cells")]
    for params, name in bad:
        with pytest.raises((ValueError, TypeError), match=name):
            MondrianGrid(**params).fit(X, y)
    Xn = X.copy()
    Xn[3, 1] = np.nan
    with pytest.raises(ValueError, match="X"):
        MondrianGrid().fit(Xn, y)
    with pytest.raises(ValueError, match="y"):
        MondrianGrid().fit(X, np.r_[y[:-1], np.inf])
    g = MondrianGrid(n_grids=2, lifetimes=2.0, max_cells=60, random_state=0).fit(X, y)
    before = g.predict(X, return_std=True), g.lifetimes_, g.n_cells_
    calls = [(lambda: g.predict(X[:, :2]), ValueError, "features"),
             (lambda: g.predict(Xn), ValueError, "X"),
             (lambda: g.increase(3), ValueError, "d"), (lambda: g.decrease(-1), ValueError, "d"),
             (lambda: g.increase(1.0), TypeError, "d"),
             (lambda: g.set_lifetimes([1.0, -1.0, 1.0]), ValueError, "lifetimes"),
             (lambda: g.set_lifetimes([1.0, 1.0]), ValueError, "lifetimes"),
             (lambda: g.set_lifetimes(60.0), ValueError, "max_cells"),
             (lambda: g.set_lifetimes(1.0, incremental="yes"), TypeError, "incremental"),
             (lambda: g.explore(X, y, criterion="r2"), ValueError, "criterion"),
             (lambda: g.explore(X), ValueError, "X_val"),
             (lambda: g.explore(criterion="val_rmse"), ValueError, "X_val"),
             (lambda: g.explore(X[:, :2], y), ValueError, "X_val"),
             (lambda: g.explore(X, y[:-1]), ValueError, "y_val"),
             (lambda: g.explore(X, y, max_steps=-1), ValueError, "max_steps"),
             (lambda: g.explore(X, y, patience=0), ValueError, "patience"),
             (lambda: g.cuts(0, grid=2), ValueError, "grid"),
             (lambda: g.cuts(0, lifetime=-1.0), ValueError, "lifetime")]
    for call, exc, name in calls:
        with pytest.raises(exc, match=name):
            call()
    after = g.predict(X, return_std=True), g.lifetimes_, g.n_cells_
    np.testing.assert_array_equal(after[0][0], before[0][0])
    np.testing.assert_array_equal(after[0][1], before[0][1])
    np.testing.assert_array_equal(after[1], before[1])
    assert after[2] == before[2]


def test_pickle_round_trip_and_reproducibility():
    X, y = _toy(10, 120)
    Q = _toy(11, 20)[0]
    g = MondrianGrid(n_grids=3, lifetimes=[2.0, 1.0, 0.0], random_state=5).fit(X, y)
    h = pickle.loads(pickle.dumps(g))
    np.testing.assert_array_equal(h.predict(Q, return_std=True), g.predict(Q, return_std=True))
    np.testing.assert_array_equal(h.transform(Q).toarray(), g.transform(Q).toarray())
    for model in (g, h):  # the copy keeps moving exactly like the original
        model.increase(2)
        model.increase(0)
        model.decrease(1)
    np.testing.assert_array_equal(h.lifetimes_, g.lifetimes_)
    np.testing.assert_array_equal(h.predict(Q), g.predict(Q))
    same = MondrianGrid(n_grids=3, lifetimes=[2.0, 1.0, 0.0], random_state=5).fit(X, y)
    other = MondrianGrid(n_grids=3, lifetimes=[2.0, 1.0, 0.0], random_state=6).fit(X, y)
    fresh = MondrianGrid(n_grids=3, lifetimes=[2.0, 1.0, 0.0], random_state=5).fit(X, y)
    np.testing.assert_array_equal(same.predict(Q), fresh.predict(Q))
    assert not np.allclose(same.predict(Q), other.predict(Q))
