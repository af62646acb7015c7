"""BARTRegressor: the PG, CGM and GrowPrune chains against exactly enumerated posteriors over
trees, the prior, the conjugate leaf and noise updates, and the estimator's contract
(reproducibility, pickling, bad input, scikit-learn's checks)."""

import pickle
from functools import lru_cache

import numpy as np
import pytest
from scipy import stats

from surrogates import BARTRegressor
from surrogates._core._rng_kernels import seed_states
from surrogates.bayes_trees import _bart_kernels as core

SAMPLERS = {"pg": core.SAMPLER_PG, "cgm": core.SAMPLER_CGM,
            "growprune": core.SAMPLER_GROWPRUNE}


# --------------------------------------------------------------------------------------------
# exact enumeration of the posterior over trees on tiny data
# --------------------------------------------------------------------------------------------

def enumerate_posterior(X, y, sigma2, tau, alpha, beta):
    """Posterior over the number of leaves and posterior mean of the regression function at
    the training points, for one tree with leaf values N(0, tau) integrated out and noise
    variance sigma2, by summing over every tree.  A split's location is continuous, but the
    tree's likelihood and the prior of everything below it depend only on which gap between
    consecutive data values it falls in, whose prior probability is the gap's share of the
    node's data range."""
    N, D = X.shape

    def log_ml(idx):
        n, s = len(idx), y[list(idx)].sum()
        return -0.5 * np.log1p(n * tau / sigma2) + 0.5 * s * s * tau / (sigma2 *
                                                                         (sigma2 + n * tau))

    def post_mean(idx):
        n, s = len(idx), y[list(idx)].sum()
        return 0.0 if tau == 0 else (s / sigma2) / (n / sigma2 + 1 / tau)

    @lru_cache(None)
    def Z(idx, depth):
        # (weight of each number of leaves, weight times the leaf mean of each point)
        rows = list(idx)
        poly, E = np.zeros(N + 1), np.zeros(N)
        p = alpha * (1 + depth) ** -beta
        dims = [d for d in range(D) if np.ptp(X[rows, d]) > 0]
        w = ((1 - p) if dims else 1.0) * np.exp(log_ml(idx))
        poly[1] += w
        E[rows] += w * post_mean(idx)
        for d in dims:
            u = np.unique(X[rows, d])
            for g in range(len(u) - 1):
                wg = p / len(dims) * (u[g + 1] - u[g]) / (u[-1] - u[0])
                left = tuple(i for i in idx if X[i, d] <= u[g])
                right = tuple(i for i in idx if X[i, d] > u[g])
                pl, El = Z(left, depth + 1)
                pr, Er = Z(right, depth + 1)
                poly += wg * np.convolve(pl, pr)[:N + 1]
                E[list(left)] += wg * El[list(left)] * pr.sum()
                E[list(right)] += wg * pl.sum() * Er[list(right)]
        return poly, E

    poly, E = Z(tuple(range(N)), 0)
    return poly / poly.sum(), E / poly.sum()


def run_single_tree_chain(X, y, kind, sigma2, tau, alpha, beta, n_sweeps, seed, every=1):
    """Leaf-count frequencies and mean fit of a one-tree chain with sigma^2 fixed."""
    state = seed_states(np.random.SeedSequence(seed), 1)
    chain = core.Chain(X, y, 1, kind, tau, alpha, beta, 3.0, 1.0, sigma2, 10, 5000, state,
                       update_sigma2=False)
    trace = [np.empty(n_sweeps) for _ in range(4)]
    chain.run(200, *[np.empty(200) for _ in range(4)], 0)
    fit = np.zeros(len(y))
    for start in range(0, n_sweeps, every):
        chain.run(every, *trace, start)
        fit += chain.F[0]
    leaves = trace[2].astype(int)
    return np.bincount(leaves, minlength=len(y) + 1) / n_sweeps, fit / (n_sweeps // every)


def _tiny(dim):
    if dim == 1:
        return np.array([[0.0], [0.1], [0.35], [0.4], [0.9]]), np.array([-1.0, -0.9, 1.0,
                                                                            1.2, 0.1])
    X = np.random.default_rng(1).random((5, 2))
    return X, np.array([-1.0, 0.5, 1.0, -0.3, 0.8])


@pytest.mark.parametrize("dim", [1, 2])
@pytest.mark.parametrize("sampler", ["pg", "cgm", "growprune"])
def test_long_single_tree_chain_matches_enumerated_posterior(sampler, dim):
    # M = 1, sigma^2 fixed: the chain's stationary law is the posterior over one tree; the
    # local samplers mix slowly between trees with different root splits, hence longer runs
    X, y = _tiny(dim)
    sigma2, tau, alpha, beta = 0.3, 0.5, 0.95, 0.5
    exact_leaves, exact_fit = enumerate_posterior(X, y, sigma2, tau, alpha, beta)
    n, every = (20_000, 1) if sampler == "pg" else (300_000, 10)
    leaves, fit = run_single_tree_chain(X, y, SAMPLERS[sampler], sigma2, tau, alpha, beta, n,
                                        seed=0, every=every)
    assert 0.5 * np.abs(leaves - exact_leaves).sum() < 0.03
    np.testing.assert_allclose(fit, exact_fit, atol=0.03)


@pytest.mark.parametrize("sampler", ["pg", "cgm", "growprune"])
def test_chain_without_likelihood_samples_the_enumerated_prior(sampler):
    # tau = 0 makes every marginal likelihood equal: the chain must sample the tree prior,
    # including its dependence on the data through the valid splits
    X = np.array([[0.0], [0.2], [0.25], [0.6], [0.7], [1.0]])
    y = np.zeros(6)
    exact, _ = enumerate_posterior(X, y, 1.0, 0.0, 0.95, 0.5)
    n = 20_000 if sampler == "pg" else 100_000
    leaves, _ = run_single_tree_chain(X, y, SAMPLERS[sampler], 1.0, 0.0, 0.95, 0.5, n,
                                      seed=3, every=n)
    assert 0.5 * np.abs(leaves - exact).sum() < 0.02


def _prior_leaf_distribution(alpha, beta, max_leaves, max_depth=40):
    """Number of leaves of a tree whose nodes at depth d split with probability
    alpha (1 + d)^-beta, independently (no data constraint): generating-function recursion
    G_d(z) = (1 - p_d) z + p_d G_{d+1}(z)^2 from the deepest level up."""
    G = np.zeros(max_leaves + 1)
    G[1] = 1.0
    for d in range(max_depth, -1, -1):
        p = alpha * (1 + d) ** -beta
        new = np.convolve(G, G)[:max_leaves + 1] * p
        new[1] += 1 - p
        G = new
    return G


def test_prior_draws_without_data_follow_the_closed_form_prior():
    # many distinct inputs: the valid-split constraint almost never binds, so PG with no
    # likelihood samples the Chipman et al. prior in closed form (default alpha, beta)
    X = np.random.default_rng(0).random((3000, 1))
    exact = _prior_leaf_distribution(0.95, 2.0, 12)
    state = seed_states(np.random.SeedSequence(5), 1)
    M, sweeps = 50, 100
    chain = core.Chain(X, np.zeros(3000), M, core.SAMPLER_PG, 0.0, 0.95, 2.0, 3.0, 1.0, 1.0,
                       10, 5000, state, update_sigma2=False)
    counts = np.zeros(13)
    trace = [np.empty(1) for _ in range(4)]
    for _ in range(sweeps):
        chain.run(1, *trace, 0)
        counts += np.bincount(np.minimum(chain.n_leaves(), 12), minlength=13)
    freq = counts / counts.sum()
    assert abs(freq[1] - exact[1]) < 0.02 and abs(freq[2] - exact[2]) < 0.02
    assert 0.5 * np.abs(freq[:12] - exact[:12]).sum() < 0.03


# --------------------------------------------------------------------------------------------
# conjugate updates with the trees fixed
# --------------------------------------------------------------------------------------------

def _chain_with_trees(seed=0, n=60, M=3):
    rng = np.random.default_rng(seed)
    X = rng.random((n, 2))
    y = np.sin(4 * X[:, 0]) + 0.2 * rng.standard_normal(n)
    state = seed_states(np.random.SeedSequence(seed), 1)
    chain = core.Chain(X, y, M, core.SAMPLER_PG, 0.04, 0.95, 0.5, 3.0, 0.02, 0.05, 10, 5000,
                       state)
    chain.run(20, *[np.empty(20) for _ in range(4)], 0)
    return chain


def test_leaf_update_is_the_gaussian_conditional():
    chain = _chain_with_trees()
    left, feat, thr, parent, depth, start, end, n, mu, perm = chain.trees
    m = 0
    R = np.random.default_rng(1).standard_normal(chain.y.shape[0])
    sigma2, tau = 0.3, 0.7
    leaves = [j for j in range(n[m]) if left[m, j] < 0]
    assert len(leaves) >= 2
    draws = np.empty((20_000, len(leaves)))
    for r in range(draws.shape[0]):
        core.sample_leaves(m, R, sigma2, tau, chain.state, left, start, end, n, mu, perm,
                           chain.F)
        draws[r] = mu[m, leaves]
    for c, j in enumerate(leaves):
        idx = perm[m, start[m, j]:end[m, j]]
        prec = len(idx) / sigma2 + 1 / tau
        mean, sd = R[idx].sum() / sigma2 / prec, prec ** -0.5
        assert abs(draws[:, c].mean() - mean) < 4 * sd / np.sqrt(draws.shape[0])
        assert abs(draws[:, c].std() / sd - 1) < 0.03
        np.testing.assert_array_equal(chain.F[m, idx], mu[m, j])  # the fit follows


def test_noise_update_is_the_inverse_gamma_conditional():
    chain = _chain_with_trees()
    y, F = chain.y, chain.F.sum(axis=0)
    nu, lam = 3.0, 0.02
    draws = np.array([core.sample_sigma2(y, F, nu, lam, chain.state) for _ in range(20_000)])
    sse = float(((y - F) ** 2).sum())
    a, b = 0.5 * (nu + len(y)), 0.5 * (nu * lam + sse)
    assert stats.kstest(draws, stats.invgamma(a, scale=b).cdf).pvalue > 1e-3
    assert abs(draws.mean() / (b / (a - 1)) - 1) < 0.01


def test_gamma_and_normal_generators():
    state = seed_states(np.random.SeedSequence(9), 1)
    for shape in (0.3, 1.0, 7.5):
        g = np.array([core.standard_gamma(state, shape) for _ in range(20_000)])
        assert stats.kstest(g, stats.gamma(shape).cdf).pvalue > 1e-3
    z = np.array([core.standard_normal(state) for _ in range(20_000)])
    assert stats.kstest(z, stats.norm.cdf).pvalue > 1e-3


# --------------------------------------------------------------------------------------------
# the estimator
# --------------------------------------------------------------------------------------------

def _data(n=150, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.random((n, 3))
    y = 10 * np.sin(np.pi * X[:, 0] * X[:, 1]) + 5 * X[:, 2] + 0.5 * rng.standard_normal(n)
    return X, y


SMALL = dict(n_trees=20, n_burn=50, n_samples=100)


@pytest.mark.parametrize("sampler", ["pg", "cgm", "growprune"])
def test_fits_and_reports_traces(sampler):
    X, y = _data()
    Xt, yt = _data(500, seed=1)
    m = BARTRegressor(sampler=sampler, random_state=0, **SMALL).fit(X, y)
    rmse = np.sqrt(np.mean((m.predict(Xt) - yt) ** 2))
    assert rmse < 0.5 * yt.std()
    assert m.loglik_trace_.shape == m.n_leaves_trace_.shape == m.sigma2_trace_.shape == (150,)
    assert m.sigma2_samples_.shape == (100,) and np.all(m.sigma2_samples_ > 0)
    np.testing.assert_array_equal(m.sigma2_samples_, m.sigma2_trace_[50:])
    assert np.all(m.n_leaves_trace_ >= 1) and 0 < m.accept_trace_.mean() <= 1
    f = m.predict_samples(Xt[:7])
    assert f.shape == (100, 7)
    mean, std = m.predict(Xt[:7], return_std=True)
    np.testing.assert_allclose(mean, f.mean(axis=0))
    assert np.all(std > np.sqrt(m.sigma2_samples_.mean()) - 1e-12)
    lo, hi = m.predict_interval(Xt, coverage=0.9)
    assert np.all(lo < hi) and 0.75 < np.mean((yt >= lo) & (yt <= hi)) <= 1.0


def test_thinning_and_burn_in_lengths():
    X, y = _data(60)
    m = BARTRegressor(n_trees=5, n_burn=7, n_samples=9, thin=3, random_state=0).fit(X, y)
    assert m.loglik_trace_.shape == (7 + 27,)
    np.testing.assert_array_equal(m.sigma2_samples_, m.sigma2_trace_[7 + 2::3])


def test_reproducible_and_pickles():
    X, y = _data(80)
    a = BARTRegressor(random_state=3, **SMALL).fit(X, y)
    b = BARTRegressor(random_state=3, **SMALL).fit(X, y)
    c = BARTRegressor(random_state=4, **SMALL).fit(X, y)
    np.testing.assert_array_equal(a.predict(X), b.predict(X))
    assert not np.array_equal(a.predict(X), c.predict(X))
    d = pickle.loads(pickle.dumps(a))
    np.testing.assert_array_equal(a.predict_samples(X), d.predict_samples(X))


def test_pickled_model_predicts_identically_in_a_fresh_process(tmp_path, python_run):
    X, y = _data(50)
    m = BARTRegressor(random_state=0, **SMALL).fit(X, y)
    path = tmp_path / "bart.pkl"
    path.write_bytes(pickle.dumps((m, X)))
    np.save(tmp_path / "expected.npy", m.predict(X))
    r = python_run(f"""
        import pickle, numpy as np
        m, X = pickle.loads(open({str(path)!r}, "rb").read())
        assert np.array_equal(m.predict(X), np.load({str(tmp_path / 'expected.npy')!r}))
        """, 300)
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("param, value, error, name", [
    ("n_trees", 0, ValueError, "n_trees"), ("sampler", "mh", ValueError, "sampler"),
    ("n_particles", 1, ValueError, "n_particles"), ("alpha_s", 1.0, ValueError, "alpha_s"),
    ("beta_s", -1, ValueError, "beta_s"), ("k", 0, ValueError, "k"),
    ("nu", -2, ValueError, "nu"), ("q", 1.5, ValueError, "q"),
    ("sigma_hat", "mad", ValueError, "sigma_hat"), ("n_burn", -1, ValueError, "n_burn"),
    ("n_samples", 0, ValueError, "n_samples"), ("thin", 1.5, TypeError, "thin"),
    ("random_state", "a", TypeError, "random_state")])
def test_bad_parameters_name_the_argument_and_leave_the_model_alone(param, value, error,
                                                                    name):
    X, y = _data(40)
    m = BARTRegressor(random_state=0, **SMALL).fit(X, y)
    before = m.predict(X)
    m.set_params(**{param: value})
    with pytest.raises(error, match=name):
        m.fit(X, y)
    np.testing.assert_array_equal(m.predict(X), before)


def test_bad_data_names_the_argument_and_leaves_the_model_alone():
    X, y = _data(40)
    m = BARTRegressor(random_state=0, **SMALL).fit(X, y)
    before = m.predict(X)
    Xn = X.copy()
    Xn[3, 1] = np.nan
    yn = y.copy()
    yn[0] = np.inf
    for args, name in (((Xn, y), "X"), ((X, yn), "y"), ((X, y[:-1]), "y")):
        with pytest.raises(ValueError, match=name):
            m.fit(*args)
    with pytest.raises(ValueError, match="features"):
        m.predict(X[:, :2])
    np.testing.assert_array_equal(m.predict(X), before)
    assert m.n_features_in_ == 3


def test_constant_and_tiny_targets():
    X, _ = _data(10)
    m = BARTRegressor(random_state=0, **SMALL).fit(X, np.full(10, 7.0))
    np.testing.assert_allclose(m.predict(X), 7.0, atol=0.3)
    m.fit(X[:1], [2.0])
    np.testing.assert_allclose(m.predict(X), 2.0, atol=0.3)
