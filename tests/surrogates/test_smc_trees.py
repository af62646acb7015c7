"""Top-down SMC for Bayesian decision trees (Lakshminarayanan 2016, chapter 3): the filter
against exact enumeration of the posterior on tiny data, the sequential prior against its
closed form, weight and resampling invariants, and the estimator's contract."""

import math
import pickle
from functools import lru_cache

import numpy as np
import pytest
from scipy.special import gammaln
from sklearn.base import clone

from surrogates import SMCDecisionTreeClassifier, SMCDecisionTreeRegressor
from surrogates.bayes_trees import _smc_kernels as core
from surrogates.bayes_trees._prior_kernels import split_probability
from surrogates.bayes_trees.smc import run_filter
from surrogates._core._rng_kernels import seed_states

ALPHA_S, BETA_S, ALPHA = 0.95, 0.5, 5.0
# the tiny data's model: a prior favouring small trees and a sharper leaf likelihood, so that
# posterior and prior differ clearly (see test_enumeration_is_sharp_enough_to_fail)
TINY = dict(alpha=1.0, alpha_s=0.9, beta_s=2.0)
CONFIGS = [(p, e) for p in ("prior", "empirical", "optimal") for e in ("node", "layer")]


# -- exact enumeration ----------------------------------------------------------------------
def _log_lik(counts, alpha):
    K = len(counts)
    return float(gammaln(alpha) - K * gammaln(alpha / K) + sum(gammaln(c + alpha / K)
                 for c in counts) - gammaln(sum(counts) + alpha))


class Exact:
    """The posterior over trees by enumeration: the likelihood depends on a split location
    only through the interval between adjacent distinct values it falls in, so every tree of
    the prior (3.4) is one of finitely many discrete trees, each with the prior mass of its
    intervals (their length over the node's extent)."""

    def __init__(self, X, y, K, Xq, lik=True, alpha=TINY["alpha"], alpha_s=TINY["alpha_s"],
                 beta_s=TINY["beta_s"], leaf=None):
        self.X, self.y, self.K, self.Xq, self.lik = X, y, K, Xq, lik
        self.alpha, self.alpha_s, self.beta_s = alpha, alpha_s, beta_s
        self.leaf = leaf or self.dirichlet_leaf

    def dirichlet_leaf(self, pts):
        """Likelihood (3.2) and predictive probabilities of a leaf holding ``pts``."""
        counts = np.bincount(self.y[pts], minlength=self.K)
        pred = (counts + self.alpha / self.K) / (counts.sum() + self.alpha)
        return math.exp(_log_lik(counts, self.alpha)), pred

    @lru_cache(maxsize=None)
    def node(self, S, depth):
        """``(masses, A)`` of the subtrees at a node holding points ``S``: ``masses[(leaves,
        height)]`` sums prior x likelihood over subtrees of that shape; ``A[q]`` sums prior x
        likelihood x predictive probabilities of query ``q``."""
        pts = list(S)
        ll, pred = self.leaf(pts)
        ll = ll if self.lik else 1.0
        V = [d for d in range(self.X.shape[1]) if np.ptp(self.X[pts, d]) > 0]
        p = split_probability(depth, self.alpha_s, self.beta_s) if V else 0.0
        masses = {(1, 0): (1 - p) * ll}
        A = np.tile((1 - p) * ll * pred, (len(self.Xq), 1))
        for d in V:
            vals = np.unique(self.X[pts, d])
            ext = vals[-1] - vals[0]
            for v0, v1 in zip(vals[:-1], vals[1:]):
                f = p / len(V) * (v1 - v0) / ext
                L = frozenset(i for i in pts if self.X[i, d] <= v0)
                mL, AL = self.node(L, depth + 1)
                mR, AR = self.node(S - L, depth + 1)
                zL, zR = sum(mL.values()), sum(mR.values())
                for (l1, h1), w1 in mL.items():
                    for (l2, h2), w2 in mR.items():
                        key = (l1 + l2, 1 + max(h1, h2))
                        masses[key] = masses.get(key, 0.0) + f * w1 * w2
                # a query goes left when x <= xi, xi uniform on (v0, v1)
                go_left = np.clip((v1 - self.Xq[:, d]) / (v1 - v0), 0.0, 1.0)[:, None]
                A += f * (go_left * AL * zR + (1 - go_left) * zL * AR)
        return masses, A

    def posterior(self):
        masses, A = self.node(frozenset(range(len(self.y))), 0)
        Z = sum(masses.values())
        return {k: v / Z for k, v in masses.items()}, A / Z, Z


def _tiny():
    """16 points on 8 distinct inputs (two per input, a 4 x 2 grid) with pure labels, and
    queries inside and outside the data's range."""
    X = np.array([[a, b] for a in (0.0, 1.0, 2.5, 3.0) for b in (0.0, 1.0) for _ in range(2)])
    y = np.where(X[:, 1] == 0, X[:, 0] >= 2.5, X[:, 0] >= 1).astype(np.int64)
    Xq = np.array([[-1.0, 0.5], [0.5, 0.2], [1.7, 0.9], [2.8, 0.0], [4.0, 2.0]])
    return X, y, Xq


def _smc_posterior(X, y, proposal, expansion, n_particles, n_runs, lik_scale=1.0, seed=0):
    """Leaves/height posterior and the predictive at the queries, averaged over runs."""
    from surrogates.bayes_trees.smc import _flatten

    states = seed_states(np.random.SeedSequence(seed), n_runs)
    post, results = {}, []
    for r in range(n_runs):
        res = run_filter(X, y, 2, n_particles, proposal, expansion, TINY["alpha"],
                         TINY["alpha_s"], TINY["beta_s"], 0.1, 5000, states[r:r + 1], lik_scale)
        results.append(res)
        leaves, height = res.shapes()
        for key, w in zip(zip(leaves.tolist(), height.tolist()), res.weights):
            post[key] = post.get(key, 0.0) + w / n_runs
    trees = _flatten(results, TINY["alpha"])
    return post, trees, results


def _marginals(post):
    leaves, height = {}, {}
    for (l, h), w in post.items():
        leaves[l] = leaves.get(l, 0.0) + w
        height[h] = height.get(h, 0.0) + w
    return leaves, height


@pytest.mark.parametrize("proposal,expansion", CONFIGS)
def test_posterior_matches_exact_enumeration(proposal, expansion):
    X, y, Xq = _tiny()
    exact_post, exact_pred, _ = Exact(X, y, 2, Xq).posterior()
    post, trees, _ = _smc_posterior(X, y, proposal, expansion, 2000, 10)
    pred = np.empty((len(Xq), 2))
    core.predict_proba_trees(Xq, *trees, pred)
    np.testing.assert_allclose(pred, exact_pred, atol=0.01)
    for smc, exact in zip(_marginals(post), _marginals(exact_post)):
        for k in set(smc) | set(exact):
            assert abs(smc.get(k, 0.0) - exact.get(k, 0.0)) < 0.02, (k, smc, exact)


def test_enumeration_is_sharp_enough_to_fail():
    """The comparison above distinguishes posterior from prior and other hyperparameters."""
    X, y, Xq = _tiny()
    post, pred, _ = Exact(X, y, 2, Xq).posterior()
    prior, prior_pred, _ = Exact(X, y, 2, Xq, lik=False).posterior()
    post_leaves, prior_leaves = _marginals(post)[0], _marginals(prior)[0]
    gap = max(abs(post_leaves.get(k, 0) - prior_leaves.get(k, 0)) for k in range(1, 8))
    assert gap > 0.1
    assert np.abs(pred - prior_pred).max() > 0.1


@pytest.mark.parametrize("proposal", ["prior", "empirical", "optimal"])
def test_data_dependent_prior_matches_enumeration(proposal):
    """With the likelihood switched off the filter samples the prior (3.4), including its
    data dependence: nodes with identical inputs stop."""
    X, y, Xq = _tiny()
    exact_post, _, _ = Exact(X, y, 2, Xq, lik=False).posterior()
    post, _, results = _smc_posterior(X, y, proposal, "node", 4000, 3, lik_scale=0.0)
    if proposal != "empirical":  # (its weights correct its split locations to the prior's)
        for r in results:
            np.testing.assert_allclose(r.weights, 1.0 / 4000)
            assert r.n_resamples == 0 and abs(r.log_evidence) < 1e-9
    for smc, exact in zip(_marginals(post), _marginals(exact_post)):
        for k in set(smc) | set(exact):
            assert abs(smc.get(k, 0.0) - exact.get(k, 0.0)) < 0.02, (k, smc, exact)


@pytest.mark.parametrize("proposal", ["prior", "optimal"])
def test_marginal_likelihood_estimate_is_unbiased(proposal):
    """SMC's estimate W / C of p(Y | X) is unbiased for any number of particles (Del Moral
    2004), resampling included: its mean over many small filters matches the enumeration."""
    X, y, Xq = _tiny()
    _, _, Z = Exact(X, y, 2, Xq).posterior()
    n_runs = 3000
    states = seed_states(np.random.SeedSequence(11), n_runs)
    ratio = np.empty(n_runs)
    resamples = 0
    for r in range(n_runs):
        res = run_filter(X, y, 2, 5, proposal, "node", TINY["alpha"], TINY["alpha_s"],
                         TINY["beta_s"], 0.5, 5000, states[r:r + 1])
        ratio[r] = math.exp(res.log_evidence) / Z
        resamples += res.n_resamples
    if proposal == "prior":
        assert resamples > n_runs // 2  # the check covers resampling steps
    se = ratio.std() / math.sqrt(n_runs)
    assert abs(ratio.mean() - 1.0) < 4 * se + 1e-3, (ratio.mean(), se)


# -- the sequential prior against its closed form -------------------------------------------
def _closed_form_prior(max_depth=60, max_leaves=400):
    """Distribution of the number of leaves and of the height of a tree whose nodes never run
    out of data, by recursion on the split probability (3.3) from the deepest level up."""
    G = np.zeros(max_leaves + 1)
    G[1] = 1.0
    H = np.ones(max_depth + 1)
    for d in range(max_depth, -1, -1):
        p = split_probability(d, ALPHA_S, BETA_S)
        G_new = np.zeros_like(G)
        G_new[1] = 1 - p
        G_new += p * np.convolve(G, G)[:max_leaves + 1]
        H = np.concatenate([[1 - p], (1 - p) + p * H[:-1] ** 2])  # P(height <= m)
        G = G_new
    return G, np.diff(np.concatenate([[0.0], H]))


def test_closed_form_prior_has_the_thesis_moments():
    """Section 3.4.1: alpha_s = 0.95, beta_s = 0.5 give mean depth 5.1 and about 18.5 nodes."""
    leaves, height = _closed_form_prior()
    assert abs(leaves.sum() - 1) < 1e-9 and abs(height.sum() - 1) < 1e-9
    assert abs(np.arange(len(height)) @ height - 5.1) < 0.01
    assert abs((2 * np.arange(len(leaves)) - 1) @ leaves - 18.5) < 0.3


@pytest.mark.parametrize("proposal,expansion", [("prior", "node"), ("prior", "layer"),
                                                ("optimal", "node")])
def test_sequential_prior_reproduces_closed_form(proposal, expansion):
    """Sampled without likelihood on many distinct inputs (nodes practically never run out
    of data), the number of leaves and the height follow the closed form."""
    leaves_p, height_p = _closed_form_prior()
    rng = np.random.default_rng(0)
    N, C = 3000, 3000 if proposal == "prior" else 1000
    X = rng.uniform(size=(N, 2))
    y = np.zeros(N, np.int64)
    res = run_filter(X, y, 1, C, proposal, expansion, ALPHA, ALPHA_S, BETA_S, 0.1, 5000,
                     seed_states(np.random.SeedSequence(1), 1), 0.0)
    leaves, height = res.shapes()
    for sample, probs, top in ((leaves, leaves_p, 15), (height, height_p, 10)):
        for k in range(1, top):
            freq = np.mean(sample == k)
            sd = math.sqrt(probs[k] * (1 - probs[k]) / C)
            assert abs(freq - probs[k]) < 4.5 * sd + 0.005, (k, freq, probs[k])


# -- weights, ESS and resampling ------------------------------------------------------------
def test_multinomial_resampling_is_unbiased():
    w = np.array([0.5, 0.25, 0.15, 0.07, 0.03])
    state = seed_states(np.random.SeedSequence(2), 1)
    n = 20000
    counts = np.zeros(5)
    for _ in range(n):
        a = core.multinomial_resample(w, state, 0)
        assert np.all(np.diff(a) >= 0) and a.min() >= 0 and a.max() < 5
        counts += np.bincount(a, minlength=5)
    mean = counts / (n * 5)
    sd = np.sqrt(w * (1 - w) / (n * 5))
    assert np.all(np.abs(mean - w) < 4 * sd)


def test_weights_and_ess_invariants():
    X, y, _ = _tiny()
    for threshold, resampled in ((0.0, False), (1.0, True)):
        res = run_filter(X, y, 2, 50, "prior", "node", ALPHA, ALPHA_S, BETA_S, threshold,
                         5000, seed_states(np.random.SeedSequence(5), 1))
        assert abs(res.weights.sum() - 1) < 1e-12 and np.all(res.weights >= 0)
        assert all(1 - 1e-9 <= e <= 50 + 1e-9 for e in res.ess)
        assert len(res.ess) == res.n_stages
        assert (res.n_resamples == res.n_stages) if resampled else res.n_resamples == 0
        # every particle is a complete tree: no eligible node left; children follow parents
        for c in range(50):
            n = res.n_nodes[c]
            f = res.feat[c, :n]
            assert np.all(f >= core.LEAF)
            internal = np.flatnonzero(f >= 0)
            assert np.all(res.left[c, internal] > internal)
            assert np.all(res.stats[c, res.left[c, internal]].sum(1)
                          + res.stats[c, res.left[c, internal] + 1].sum(1)
                          == res.stats[c, internal].sum(1))
            leaf_counts = res.stats[c, :n][f == core.LEAF]
            assert np.all(leaf_counts.sum(1) >= 1) and leaf_counts.sum() == len(y)


def test_max_stages_truncates_to_leaves():
    X, y, _ = _tiny()
    m = SMCDecisionTreeClassifier(n_particles=20, n_islands=1, max_stages=1,
                                  random_state=0).fit(X, y)
    assert m.n_stages_.tolist() == [1]
    np.testing.assert_allclose(m.predict_proba(X).sum(1), 1.0)


# -- the estimator (scikit-learn's estimator checks: test_sklearn_compat.py) ---------------
def _blobs():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 4))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] > 0, "yes", "no")
    return X, y


@pytest.mark.parametrize("proposal,expansion", CONFIGS)
def test_learns_a_simple_boundary(proposal, expansion):
    X, y = _blobs()
    m = SMCDecisionTreeClassifier(n_particles=30, n_islands=2, proposal=proposal,
                                  expansion=expansion, random_state=1).fit(X[:200], y[:200])
    assert m.score(X[200:], y[200:]) > 0.8
    proba = m.predict_proba(X[200:])
    assert proba.shape == (100, 2) and np.allclose(proba.sum(1), 1) and proba.min() > 0
    assert np.all(np.isfinite(m.log_evidence_)) and m.log_evidence_.shape == (2,)


def test_reproducible_and_pickle_round_trip():
    X, y = _blobs()
    m = SMCDecisionTreeClassifier(n_particles=20, random_state=7).fit(X, y)
    again = clone(m).fit(X, y)
    np.testing.assert_array_equal(m.predict_proba(X), again.predict_proba(X))
    other = clone(m).set_params(random_state=8).fit(X, y)
    assert not np.array_equal(m.predict_proba(X), other.predict_proba(X))
    copy = pickle.loads(pickle.dumps(m))
    np.testing.assert_array_equal(copy.predict_proba(X), m.predict_proba(X))
    np.testing.assert_array_equal(copy.log_evidence_, m.log_evidence_)


@pytest.mark.parametrize("param,value,exc", [
    ("n_particles", 0, ValueError), ("n_particles", 2.5, TypeError),
    ("n_islands", 0, ValueError), ("proposal", "best", ValueError),
    ("expansion", "leaf", ValueError), ("alpha", 0.0, ValueError),
    ("alpha", -1, ValueError), ("alpha_split", 1.0, ValueError),
    ("alpha_split", 0.0, ValueError), ("beta_split", -0.1, ValueError),
    ("beta_split", np.inf, ValueError), ("ess_threshold", 1.5, ValueError),
    ("ess_threshold", "half", TypeError), ("max_stages", 0, ValueError),
    ("random_state", -1, ValueError), ("random_state", "seed", TypeError)])
def test_bad_parameter_names_itself_and_changes_nothing(param, value, exc):
    X, y = _blobs()
    m = SMCDecisionTreeClassifier(n_particles=5, n_islands=1, random_state=0).fit(X, y)
    before = m.predict_proba(X)
    state = dict(m.__dict__)
    m.set_params(**{param: value})
    with pytest.raises(exc, match=param):
        m.fit(X[:50], y[:50])
    for k, v in state.items():
        if k != param:
            assert m.__dict__[k] is v
    np.testing.assert_array_equal(m.predict_proba(X), before)


def test_bad_data_is_refused_naming_the_argument():
    X, y = _blobs()
    m = SMCDecisionTreeClassifier(n_particles=5, n_islands=1, random_state=0)
    for bad in (np.nan, np.inf):
        Xb = X.copy()
        Xb[3, 1] = bad
        with pytest.raises(ValueError, match="X"):
            m.fit(Xb, y)
    with pytest.raises(ValueError, match="y"):
        m.fit(X, y[:-1])
    with pytest.raises(ValueError, match="y"):
        m.fit(X, np.linspace(0, 1, len(y)))  # a continuous target
    with pytest.raises(ValueError, match="X"):
        m.fit(X[:, 0], y)
    assert not hasattr(m, "classes_")
    m.fit(X, y)
    before = m.predict_proba(X)
    with pytest.raises(ValueError, match="features"):
        m.predict(X[:, :3])
    with pytest.raises(ValueError, match="X"):
        m.predict_proba(np.full((2, 4), np.nan))
    np.testing.assert_array_equal(m.predict_proba(X), before)


def test_optimal_needs_fewer_particles_for_the_same_evidence():
    """Section 3.4.1.1: the optimal proposal's evidence estimate is far less variable."""
    X, y = _blobs()
    ev = {}
    for proposal in ("prior", "optimal"):
        m = SMCDecisionTreeClassifier(n_particles=10, n_islands=8, proposal=proposal,
                                      random_state=0).fit(X, y)
        ev[proposal] = m.log_evidence_
    assert ev["optimal"].std() < ev["prior"].std()
    assert ev["optimal"].mean() > ev["prior"].mean()


# -- the MCMC baseline (Chipman et al. 1998) ------------------------------------------------
def test_mcmc_baseline_matches_exact_enumeration():
    from surrogates.bayes_trees.mcmc_classifier import MCMCDecisionTreeClassifier

    X, y, Xq = _tiny()
    exact_post, exact_pred, _ = Exact(X, y, 2, Xq).posterior()
    m = MCMCDecisionTreeClassifier(n_iterations=100_000, alpha=TINY["alpha"],
                                   alpha_split=TINY["alpha_s"], beta_split=TINY["beta_s"],
                                   random_state=0).fit(X, y)
    assert 0.05 < m.acceptance_rate_ < 0.95
    np.testing.assert_allclose(m.predict_proba(Xq), exact_pred, atol=0.01)
    feat, roots, weights = m._trees[0], m._trees[4], m._trees[5]
    leaves = np.array([np.sum(f < 0) for f in np.split(feat, roots[1:])])
    exact_leaves = _marginals(exact_post)[0]
    for k in range(1, 8):
        assert abs(weights @ (leaves == k) - exact_leaves.get(k, 0.0)) < 0.02


def test_mcmc_baseline_learns_and_is_reproducible():
    from surrogates.bayes_trees.mcmc_classifier import MCMCDecisionTreeClassifier

    X, y = _blobs()
    m = MCMCDecisionTreeClassifier(n_iterations=300, random_state=3).fit(X[:200], y[:200])
    assert m.score(X[200:], y[200:]) > 0.8
    assert np.isfinite(m.log_posterior_).all() and len(m.log_posterior_) == 301
    again = MCMCDecisionTreeClassifier(n_iterations=300, random_state=3).fit(X[:200], y[:200])
    np.testing.assert_array_equal(m.predict_proba(X), again.predict_proba(X))


# -- regression: normal-inverse-gamma leaves ------------------------------------------------
def test_regression_posterior_matches_exact_enumeration():
    """The regression filter against enumeration, with each leaf's marginal likelihood taken
    from scipy's multivariate t (the normal-inverse-gamma marginal of the leaf's targets),
    an independent route to the closed form in the kernel."""
    from scipy.stats import multivariate_t

    from surrogates.bayes_trees.smc import _flatten

    X, _, Xq = _tiny()
    z = np.where(X[:, 0] >= 2.5, 1.5, -0.5) + np.where(X[:, 1] > 0, 0.7, 0.0) \
        + 0.1 * np.sin(7 * np.arange(len(X)))
    kappa, mu0, nu, lam = 0.5, 0.1, 3.0, 0.3

    def normal_leaf(pts):
        n = len(pts)
        shape = lam * (np.eye(n) + np.ones((n, n)) / kappa)
        ll = math.exp(multivariate_t(loc=np.full(n, mu0), shape=shape, df=nu).logpdf(z[pts]))
        return ll, np.array([(kappa * mu0 + z[pts].sum()) / (kappa + n)])

    exact_post, exact_pred, _ = Exact(X, z, 1, Xq, leaf=normal_leaf).posterior()
    states = seed_states(np.random.SeedSequence(4), 10)
    for proposal in ("prior", "optimal"):
        results = [run_filter(X, z, 1, 2000, proposal, "node", 1.0, TINY["alpha_s"],
                              TINY["beta_s"], 0.1, 5000, states[r:r + 1],
                              normal_prior=(kappa, mu0, nu, lam)) for r in range(10)]
        trees = _flatten(results, 1.0, (kappa, mu0, nu, lam))
        pred = np.empty((len(Xq), 2))
        core.predict_proba_trees(Xq, *trees, pred)
        np.testing.assert_allclose(pred[:, 0], exact_pred[:, 0], atol=0.02)
        leaves = {}
        for r in results:
            for k, w in zip(r.shapes()[0].tolist(), r.weights):
                leaves[k] = leaves.get(k, 0.0) + w / 10
        exact_leaves = _marginals(exact_post)[0]
        for k in range(1, 9):
            assert abs(leaves.get(k, 0.0) - exact_leaves.get(k, 0.0)) < 0.02, k


def test_regressor_fits_a_step_and_reports_uncertainty():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(400, 3))
    y = 10 + 3 * (X[:, 0] > 0.2) - 2 * (X[:, 1] < -0.5) + 0.3 * rng.standard_normal(400)
    m = SMCDecisionTreeRegressor(n_particles=30, random_state=0).fit(X[:300], y[:300])
    assert m.score(X[300:], y[300:]) > 0.9
    mean, std = m.predict(X[300:], return_std=True)
    np.testing.assert_array_equal(mean, m.predict(X[300:]))
    assert np.all(std > 0.15) and np.median(std) < 0.6  # about the noise level, 0.3
    copy = pickle.loads(pickle.dumps(m))
    np.testing.assert_array_equal(copy.predict(X), m.predict(X))
    for param, value in (("kappa", 0.0), ("nu", -1.0), ("sigma_quantile", 1.0)):
        with pytest.raises(ValueError, match=param):
            clone(m).set_params(**{param: value}).fit(X, y)
    with pytest.raises(ValueError, match="y"):
        clone(m).fit(X, np.where(np.arange(400) == 3, np.nan, y))


def test_mcmc_local_updates_track_the_full_posterior():
    """Each step rescores only the changed subtree; the running log posterior must equal
    the whole tree's, recomputed from scratch, at the end."""
    from surrogates.bayes_trees import mcmc_classifier as mc

    X, y = _blobs()
    codes = (y == "yes").astype(np.int64)
    m = mc.MCMCDecisionTreeClassifier(n_iterations=400, random_state=5).fit(X, codes)
    feat, thr, left, value, roots, _ = m._trees
    last = slice(roots[-1], len(feat))
    f, t, lft = feat[last], thr[last], left[last] - roots[-1]
    n = len(f)
    right = np.where(f >= 0, lft + 1, -1)
    depth = np.zeros(n, np.int64)
    for j in range(n):
        if f[j] >= 0:
            depth[lft[j]] = depth[lft[j] + 1] = depth[j] + 1
    lo, hi = np.empty((n, 4)), np.empty((n, 4))
    counts, npts = np.zeros((n, 2), np.int64), np.zeros(n, np.int64)
    mc._stats(X, codes, f, t, lft, right, n, lo, hi, counts, npts)
    tables = core.lgamma_tables(len(y), 2, 5.0)
    full = mc._log_posterior(f, depth, lft, right, n, lo, hi, counts, npts, 0.95, 0.5, 1.0,
                             *tables)
    assert m.acceptance_rate_ > 0.05
    assert abs(full - m.log_posterior_[-1]) < 1e-6 * abs(full)
