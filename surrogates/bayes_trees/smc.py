"""Top-down particle filtering for Bayesian decision trees (Lakshminarayanan, Roy & Teh 2013;
Lakshminarayanan 2016, chapter 3), for classification and, with normal leaves, regression.

The model is Chipman, George & McCulloch's (1998) decision tree: a node at depth ``d``
whose inputs are not all identical splits with probability ``alpha_s (1 + d)^-beta_s``, along a
dimension drawn uniformly from those where its inputs vary, at a location drawn uniformly over
their range (3.3)-(3.4); the labels of a leaf are Dirichlet-multinomial (3.2) (normal with a
normal-inverse-gamma prior for regression, see :class:`SMCDecisionTreeRegressor`).  The posterior
over trees is approximated by sequential Monte Carlo that grows the trees top down
(Algorithm 3.1).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.exceptions import NotFittedError
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import column_or_1d

from . import _smc_kernels as core
from .._core._rng_kernels import seed_states
from .._core.scaling import target_exponent
from .._core.validation import (check_choice, check_int, check_positive, check_target,
                                check_X, feature_names, seed_sequence, set_feature_names)

PROPOSALS = {"prior": core.PROPOSAL_PRIOR, "empirical": core.PROPOSAL_EMPIRICAL,
             "optimal": core.PROPOSAL_OPTIMAL}
EXPANSIONS = ("node", "layer")

# per-node fields of the particle arrays, with their fill values
_NODE_FIELDS = (("start", np.int64, 0), ("end", np.int64, 0), ("depth", np.int64, 0),
                ("feat", np.int64, core.UNEXPANDED), ("thr", np.float64, 0.0),
                ("left", np.int64, -1), ("loglik", np.float64, 0.0))


@dataclass
class FilterResult:
    """The weighted particles at the end of one run of Algorithm 3.1 (one island).

    Attributes
    ----------
    n_nodes : ndarray of shape (C,)
        Nodes of each particle; its fields below are its first ``n_nodes[c]`` columns.
    feat, thr, left, depth, stats
        Split dimension (``LEAF``/``UNEXPANDED`` for leaves), split location, index of the
        left child (the right one follows it), depth, and the sufficient statistics of the
        node's training labels (class counts; ``(n, sum y, sum y^2)`` for regression).
    weights : ndarray of shape (C,)
        Normalised particle weights.
    log_evidence : float
        The filter's estimate of ``log p(Y | X)``, ``log(W / C)`` (Algorithm 3.1, line 18).
    n_stages, n_resamples : int
        Stages run and resampling steps taken.
    ess : list of float
        Effective sample size after each stage, before any resampling.
    """

    n_nodes: np.ndarray
    feat: np.ndarray
    thr: np.ndarray
    left: np.ndarray
    depth: np.ndarray
    stats: np.ndarray
    weights: np.ndarray
    log_evidence: float
    n_stages: int
    n_resamples: int
    ess: list = field(default_factory=list)

    def shapes(self) -> tuple[np.ndarray, np.ndarray]:
        """Number of leaves and maximum leaf depth of every particle."""
        C = self.n_nodes.shape[0]
        leaves = np.empty(C, np.int64)
        deepest = np.empty(C, np.int64)
        for c in range(C):
            leaves[c], deepest[c] = core.tree_shape(self.feat[c], self.depth[c],
                                                    self.n_nodes[c])
        return leaves, deepest


def run_filter(X: np.ndarray, y: np.ndarray, n_classes: int, n_particles: int,
               proposal: str = "prior", expansion: str = "node", alpha: float = 5.0,
               alpha_split: float = 0.95, beta_split: float = 0.5,
               ess_threshold: float = 0.1, max_stages: int = 5000, state=None,
               lik_scale: float = 1.0, normal_prior=None) -> FilterResult:
    """Algorithm 3.1 of Lakshminarayanan (2016) on checked data: one particle filter.

    Parameters
    ----------
    X : ndarray of shape (N, D), float64
    y : ndarray of shape (N,)
        Labels in ``0..n_classes - 1``; real targets when ``normal_prior`` is given.
    state : ndarray of shape (1, 4), uint64
        The xoshiro256** stream (see ``surrogates._core._rng_kernels``), advanced in place.
    lik_scale : float, default=1.0
        Exponent of the likelihood in the targets; 0 makes every target the prior (the
        filter then samples the sequential prior of Section 3.2.3, for tests).
    normal_prior : tuple of 4 floats or None, default=None
        ``(kappa, mu0, nu, lambda)``: regression with normal-inverse-gamma leaves (see
        :func:`~surrogates.bayes_trees._smc_kernels.node_loglik`); ``alpha`` and ``n_classes``
        are then unused.
    Other parameters as for :class:`SMCDecisionTreeClassifier`.
    """
    N, D = X.shape
    C = n_particles
    code = PROPOSALS[proposal]
    layerwise = expansion == "layer"
    if normal_prior is None:
        task = core.TASK_CLASSIFICATION
        y_code = np.ascontiguousarray(y, dtype=np.int64)
        y_val = np.zeros(1)
        lg_class, lg_total, const = core.lgamma_tables(N, n_classes, alpha)
        params = np.array([const])
        root_stats = np.bincount(y_code, minlength=n_classes).astype(np.float64)
    else:
        task = core.TASK_REGRESSION
        y_code = np.zeros(1, np.int64)
        y_val = np.ascontiguousarray(y, dtype=np.float64)
        lg_class = lg_total = np.zeros(1)
        params = np.array(normal_prior, dtype=np.float64)
        root_stats = np.array([N, y_val.sum(), y_val @ y_val])
    M = 16
    a = {name: np.full((C, M), fill, dtype) for name, dtype, fill in _NODE_FIELDS}
    stats = np.zeros((C, M, root_stats.shape[0]))
    stats[:, 0] = root_stats
    a["end"][:, 0] = N
    root_ll = core.node_loglik(stats[0, 0], task, lg_class, lg_total, params)
    a["loglik"][:, 0] = root_ll
    idx = np.tile(np.arange(N, dtype=np.int32), (C, 1))
    n_nodes = np.ones(C, np.int64)
    head = np.zeros(C, np.int64)
    # log of the unnormalised weights; w_(0) = p(Y | T_(0)) (Algorithm 3.1, line 4)
    logw = np.full(C, lik_scale * root_ll)
    vals = np.empty(N)
    order = np.empty(N, np.int64)
    terms = np.empty(D * N if code == core.PROPOSAL_OPTIMAL else 1)
    term_dim = np.empty(terms.shape[0], np.int64)
    term_pos = np.empty(terms.shape[0])
    threshold = ess_threshold * C
    ess_history = []
    n_resamples = 0
    stage = 0
    active = C
    while active and stage < max_stages:
        # room for the children of every node a stage may expand
        need = int((n_nodes + 2 * (n_nodes - head if layerwise else 1)).max())
        if need > M:
            M_new = max(2 * M, need)
            for name, dtype, fill in _NODE_FIELDS:
                grown = np.full((C, M_new), fill, dtype)
                grown[:, :M] = a[name]
                a[name] = grown
            grown = np.zeros((C, M_new, stats.shape[2]))
            grown[:, :M] = stats
            stats = grown
            M = M_new
        active = core.expand_stage(
            X, task, y_code, y_val, idx, n_nodes, head, a["start"], a["end"], a["depth"],
            a["feat"], a["thr"], a["left"], stats, a["loglik"], logw, alpha_split,
            beta_split, code, layerwise, lik_scale, lg_class, lg_total, params, state, 0,
            vals, order, terms, term_dim, term_pos)
        stage += 1
        top = logw.max()
        w = np.exp(logw - top)
        total = w.sum()
        w /= total
        ess = 1.0 / np.dot(w, w)
        ess_history.append(float(ess))
        if ess < threshold:
            anc = core.multinomial_resample(w, state, 0)
            # every particle gets the average weight W / C (Algorithm 3.1, line 15)
            logw = np.full(C, top + np.log(total) - np.log(C))
            idx = idx[anc]
            n_nodes = n_nodes[anc]
            head = head[anc]
            stats = stats[anc]
            for name in a:
                a[name] = a[name][anc]
            n_resamples += 1
    top = logw.max()
    w = np.exp(logw - top)
    total = w.sum()
    return FilterResult(n_nodes, a["feat"], a["thr"], a["left"], a["depth"], stats,
                        w / total, float(top + np.log(total) - np.log(C)), stage, n_resamples,
                        ess_history)


def leaf_values(stats: np.ndarray, alpha: float = 5.0, normal_prior=None) -> np.ndarray:
    """Per-node predictive summaries from sufficient statistics ``stats`` (nodes x S).

    Classification: the Dirichlet-multinomial posterior predictive ``(c_k + alpha / K) / (n +
    alpha)`` of (3.2).  Regression: the first two moments ``(E[y], E[y^2])`` of the
    normal-inverse-gamma posterior predictive (a Student t with ``nu + n`` degrees of
    freedom), so that particle averages give the mixture's mean and variance.
    """
    if normal_prior is None:
        K = stats.shape[1]
        return (stats + alpha / K) / (stats.sum(axis=1, keepdims=True) + alpha)
    kappa, mu0, nu, lam = normal_prior
    n = stats[:, 0]
    mean_y = np.divide(stats[:, 1], n, out=np.zeros_like(n), where=n > 0)
    ss = np.maximum(stats[:, 2] - n * mean_y ** 2, 0.0)
    kn, nn = kappa + n, nu + n
    mean = (kappa * mu0 + n * mean_y) / kn
    scale2 = (nu * lam + ss + n * kappa / kn * (mean_y - mu0) ** 2) / nn * (1 + 1 / kn)
    var = scale2 * nn / (nn - 2)
    return np.column_stack([mean, var + mean ** 2])


def _flatten(results, alpha, normal_prior=None):
    """One weighted set of flat trees from the islands' particles: identical trees (the
    copies resampling makes) are merged, their weights summed; each island weighs ``1 / I``
    (Section 3.4.1.3 averages the islands' predictions)."""
    trees = {}
    I = len(results)
    for r in results:
        for c in range(r.n_nodes.shape[0]):
            n = int(r.n_nodes[c])
            key = r.feat[c, :n].tobytes() + r.thr[c, :n].tobytes()
            if key in trees:
                trees[key][0] += r.weights[c] / I
            else:
                trees[key] = [r.weights[c] / I, r, c]
    feat, thr, left, value, roots, weights = [], [], [], [], [], []
    offset = 0
    for w, r, c in trees.values():
        n = int(r.n_nodes[c])
        f = r.feat[c, :n]
        feat.append(f)
        thr.append(r.thr[c, :n])
        left.append(np.where(f >= 0, r.left[c, :n] + offset, -1))
        value.append(leaf_values(r.stats[c, :n], alpha, normal_prior))
        roots.append(offset)
        weights.append(w)
        offset += n
    return (np.concatenate(feat), np.concatenate(thr), np.concatenate(left),
            np.ascontiguousarray(np.concatenate(value)), np.array(roots, np.int64),
            np.array(weights))


def _real(value, name: str, low: float, high: float, closed: bool) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a real number, got {value!r}.")
    v = float(value)
    ok = (low <= v <= high) if closed else (low < v < high)
    if not ok or np.isnan(v) or np.isinf(v):
        if high == np.inf:
            span = f"a finite number {'>=' if closed else '>'} {low}"
        else:
            span = f"in [{low}, {high}]" if closed else f"in ({low}, {high})"
        raise ValueError(f"{name} must be {span}, got {value!r}.")
    return v


class _BaseSMCTree(BaseEstimator):
    """What the classifier and the regressor share: parameter checks, the islands, the flat
    trees and their prediction.  Subclasses encode the target and say how leaves predict."""

    def _check_params(self) -> dict:
        return dict(n_particles=check_int(self.n_particles, "n_particles", 1),
                    n_islands=check_int(self.n_islands, "n_islands", 1),
                    proposal=check_choice(self.proposal, "proposal", set(PROPOSALS)),
                    expansion=check_choice(self.expansion, "expansion", set(EXPANSIONS)),
                    alpha_split=_real(self.alpha_split, "alpha_split", 0.0, 1.0, False),
                    beta_split=_real(self.beta_split, "beta_split", 0.0, np.inf, True),
                    ess_threshold=_real(self.ess_threshold, "ess_threshold", 0.0, 1.0, True),
                    max_stages=check_int(self.max_stages, "max_stages", 1))

    def _fit(self, X, y, encode):
        """Check everything, run the islands, and only then change the estimator:
        ``encode(y, n_samples, params)`` returns ``(targets, n_classes, leaf options, fitted
        attributes)``."""
        params = self._check_params()
        names = feature_names(X)
        X = check_X(X, "X", estimator=self)
        if y is None:
            raise ValueError("This estimator requires y to be passed, but the target y is None.")
        targets, n_classes, leaf, attributes = encode(y, X.shape[0], params)
        seeds = seed_sequence(self.random_state)
        X = np.ascontiguousarray(X)
        states = seed_states(seeds, params["n_islands"])
        results = [run_filter(X, targets, n_classes, params["n_particles"], params["proposal"],
                              params["expansion"], leaf.get("alpha", 1.0),
                              params["alpha_split"], params["beta_split"],
                              params["ess_threshold"], params["max_stages"],
                              states[i:i + 1], normal_prior=leaf.get("normal_prior"))
                   for i in range(params["n_islands"])]
        trees = _flatten(results, leaf.get("alpha", 1.0), leaf.get("normal_prior"))
        # everything validated and computed: only now is the estimator changed
        for k, v in attributes.items():
            setattr(self, k, v)
        self.n_features_in_ = X.shape[1]
        set_feature_names(self, names)
        self._trees = trees
        self.log_evidence_ = np.array([r.log_evidence for r in results])
        self.n_stages_ = np.array([r.n_stages for r in results])
        self.n_resamples_ = np.array([r.n_resamples for r in results])
        self.n_trees_ = int(trees[4].shape[0])
        return self

    def _check_fitted(self):
        if "_trees" not in self.__dict__:
            raise NotFittedError(f"This {type(self).__name__} instance is not fitted yet. Call "
                                 f"'fit' with appropriate arguments before using this "
                                 f"estimator.")

    def _average(self, X) -> np.ndarray:
        """The particle- and island-weighted average of the leaves' predictive summaries."""
        self._check_fitted()
        X = np.ascontiguousarray(check_X(X, "X", self.n_features_in_, estimator=self))
        out = np.empty((X.shape[0], self._trees[3].shape[1]))
        core.predict_proba_trees(X, *self._trees, out)
        return out


class SMCDecisionTreeClassifier(ClassifierMixin, _BaseSMCTree):
    """Bayesian decision tree classifier fitted by top-down sequential Monte Carlo
    (Lakshminarayanan, Roy & Teh 2013; Lakshminarayanan 2016, chapter 3).

    ``n_islands`` independent particle filters of ``n_particles`` particles each grow trees
    top down from the prior of Chipman, George & McCulloch (1998), resampling when the
    effective sample size falls below ``ess_threshold * n_particles``; ``predict_proba``
    averages the leaves' Dirichlet-multinomial predictive distributions over the weighted
    particles of each island, and the islands equally.

    Parameters
    ----------
    n_particles : int, default=100
        Particles per island, ``C / I`` in the thesis's notation; Section 3.4.1.3 found
        performance dropping sharply below 100.
    n_islands : int, default=5
        Independent filters averaged, ``I`` (Section 3.4.2 fixes ``I = 5``; with ``C / I >=
        100``, Section 3.4.1.3 found ``I`` in [5, 100] better than 1).
    proposal : {"prior", "empirical", "optimal"}, default="prior"
        How a node is stopped or split (Section 3.3): from the prior; from the prior with the
        split location uniform between a uniformly chosen pair of adjacent distinct values;
        or from the one-step optimal kernel (Section 3.3.1).  "prior" gave the better
        accuracy for the time in Section 3.4.1.1; "optimal" wins with many irrelevant
        features (Section 3.4.1.2).
    expansion : {"node", "layer"}, default="node"
        Expand the oldest eligible node per stage, or all eligible nodes of its depth
        (Section 3.3); node-wise was better in Section 3.4.1.1.
    alpha : float, default=5.0
        Concentration of the symmetric Dirichlet prior on leaf label probabilities, each class
        ``alpha / K`` (3.2); 5.0 as in Section 3.4.1.
    alpha_split : float, default=0.95
        ``alpha_s`` of the split probability (3.3), in (0, 1); Section 3.4.1.
    beta_split : float, default=0.5
        ``beta_s`` of the split probability (3.3), >= 0; Section 3.4.1.
    ess_threshold : float, default=0.1
        Resample when the effective sample size is below this fraction of ``n_particles``
        (``C / 10`` in Section 3.4.1); 0 never resamples, 1 whenever the weights differ.
    max_stages : int, default=5000
        Stages at most (Section 3.4.1; never reached there).  Nodes still eligible then are
        leaves.
    random_state : None, int, SeedSequence, RandomState or Generator, default=None
        Seeds one random stream per island; an int makes ``fit`` reproducible.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features,)
        Only when fitted on a data frame with string column names.
    log_evidence_ : ndarray of shape (n_islands,)
        Each island's estimate of the log marginal likelihood ``log p(Y | X)``.
    n_stages_, n_resamples_ : ndarray of shape (n_islands,)
        Stages run and resampling steps taken by each island.
    n_trees_ : int
        Distinct trees kept for prediction (identical particles are merged).
    """

    def __init__(self, n_particles=100, n_islands=5, proposal="prior", expansion="node",
                 alpha=5.0, alpha_split=0.95, beta_split=0.5, ess_threshold=0.1,
                 max_stages=5000, random_state=None):
        self.n_particles = n_particles
        self.n_islands = n_islands
        self.proposal = proposal
        self.expansion = expansion
        self.alpha = alpha
        self.alpha_split = alpha_split
        self.beta_split = beta_split
        self.ess_threshold = ess_threshold
        self.max_stages = max_stages
        self.random_state = random_state

    def _check_params(self) -> dict:
        return dict(super()._check_params(), alpha=check_positive(self.alpha, "alpha"))

    def fit(self, X, y):
        """Run ``n_islands`` particle filters on ``(X, y)``; classes are taken from ``y``."""
        return self._fit(X, y, self._encode)

    @staticmethod
    def _encode(y, n_samples, params):
        y = column_or_1d(y, warn=True)
        check_classification_targets(y)
        if y.shape[0] != n_samples:
            raise ValueError(f"Input y has {y.shape[0]} samples, but X has {n_samples}.")
        classes, codes = np.unique(y, return_inverse=True)
        return codes, len(classes), {"alpha": params["alpha"]}, {"classes_": classes}

    def predict_proba(self, X) -> np.ndarray:
        """Posterior predictive class probabilities, shape ``(n_samples, n_classes)``: the
        particle-weighted average of the leaves' Dirichlet-multinomial predictive
        distributions ``(c_k + alpha / K) / (n + alpha)``, islands weighted equally."""
        return self._average(X)

    def predict_log_proba(self, X) -> np.ndarray:
        return np.log(self.predict_proba(X))

    def predict(self, X) -> np.ndarray:
        """The class of highest posterior predictive probability (the first on ties)."""
        proba = self.predict_proba(X)
        return self.classes_[np.argmax(proba, axis=1)]


class SMCDecisionTreeRegressor(RegressorMixin, _BaseSMCTree):
    """Bayesian regression tree fitted by top-down sequential Monte Carlo: the filter of
    :class:`SMCDecisionTreeClassifier` with normal leaves.

    Chapter 3 of Lakshminarayanan (2016) treats classification and notes that regression is
    a straightforward extension (Section 3.2.1).  Here each leaf has its own mean and
    variance under a conjugate normal-inverse-gamma prior, Chipman, George & McCulloch's
    (1998) "mean-variance shift" model: ``y ~ N(mu_j, sigma_j^2)``, ``mu_j ~ N(mu0,
    sigma_j^2 / kappa)``, ``sigma_j^2 ~ IG(nu / 2, nu lambda / 2)``, independently per leaf,
    so that the likelihood factorises over leaves as (3.1) requires.  The targets are
    standardised; ``mu0`` is their mean and ``lambda`` puts ``sigma_quantile`` of the prior
    mass of ``sigma_j^2`` below their variance (the calibration of Chipman, George &
    McCulloch 2010, Section 2.2.4).

    Parameters
    ----------
    n_particles : int, default=100
        Particles per island, ``C / I`` in the thesis's notation; Section 3.4.1.3 found
        performance dropping sharply below 100.
    n_islands : int, default=5
        Independent filters averaged, ``I`` (Section 3.4.2 fixes ``I = 5``).
    proposal : {"prior", "empirical", "optimal"}, default="prior"
        As for :class:`SMCDecisionTreeClassifier` (Section 3.3).
    expansion : {"node", "layer"}, default="node"
        As for :class:`SMCDecisionTreeClassifier` (Section 3.3).
    kappa : float, default=1/3
        Prior precision of a leaf mean relative to its noise: the leaf mean's prior standard
        deviation is ``sqrt(1 / kappa)`` leaf noise standard deviations.  1/3 keeps the
        prior weak (worth a third of one observation) around the overall mean; the thesis
        gives no value for regression.
    nu : float, default=3.0
        Degrees of freedom of the leaf variances' inverse-gamma prior (``nu = 3`` of Chipman,
        George & McCulloch 2010, quoted in Lakshminarayanan 2016, Section 4.2.4).
    sigma_quantile : float, default=0.9
        Prior probability that a leaf's noise variance is below the targets' variance, in
        (0, 1) (``q = 0.9``, same source).
    alpha_split : float, default=0.95
        ``alpha_s`` of the split probability (3.3), in (0, 1); Section 3.4.1.
    beta_split : float, default=0.5
        ``beta_s`` of the split probability (3.3), >= 0; Section 3.4.1.
    ess_threshold : float, default=0.1
        Resample when the effective sample size is below this fraction of ``n_particles``
        (``C / 10`` in Section 3.4.1).
    max_stages : int, default=5000
        Stages at most (Section 3.4.1).  Nodes still eligible then are leaves.
    random_state : None, int, SeedSequence, RandomState or Generator, default=None
        Seeds one random stream per island; an int makes ``fit`` reproducible.

    Attributes
    ----------
    y_mean_, y_scale_ : float
        The standardisation of the targets (computed without overflow for targets of any
        finite magnitude).
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features,)
        Only when fitted on a data frame with string column names.
    log_evidence_ : ndarray of shape (n_islands,)
        Each island's estimate of the log marginal likelihood of the standardised targets.
    n_stages_, n_resamples_ : ndarray of shape (n_islands,)
    n_trees_ : int
    """

    def __init__(self, n_particles=100, n_islands=5, proposal="prior", expansion="node",
                 kappa=1 / 3, nu=3.0, sigma_quantile=0.9, alpha_split=0.95, beta_split=0.5,
                 ess_threshold=0.1, max_stages=5000, random_state=None):
        self.n_particles = n_particles
        self.n_islands = n_islands
        self.proposal = proposal
        self.expansion = expansion
        self.kappa = kappa
        self.nu = nu
        self.sigma_quantile = sigma_quantile
        self.alpha_split = alpha_split
        self.beta_split = beta_split
        self.ess_threshold = ess_threshold
        self.max_stages = max_stages
        self.random_state = random_state

    def _check_params(self) -> dict:
        return dict(super()._check_params(), kappa=check_positive(self.kappa, "kappa"),
                    nu=check_positive(self.nu, "nu"),
                    sigma_quantile=_real(self.sigma_quantile, "sigma_quantile", 0.0, 1.0,
                                         False))

    def fit(self, X, y):
        """Run ``n_islands`` particle filters on ``(X, y)``."""
        return self._fit(X, y, self._encode)

    @staticmethod
    def _encode(y, n_samples, params):
        from scipy.stats import chi2

        y = check_target(y, n_samples)
        # targets beyond Y_LIMIT are standardised divided by 2^k (exactly): their sum and
        # squares would overflow, the standardised targets are the same
        k = target_exponent(y)
        if k:
            y = np.ldexp(y, -k)
        mean = float(y.mean())
        scale = float(y.std())
        if not scale > 0 or not np.isfinite(scale):
            scale = 1.0
        z = (y - mean) / scale
        # P(sigma^2 < 1) = sigma_quantile for sigma^2 = nu lambda / chi2_nu
        lam = chi2.ppf(1.0 - params["sigma_quantile"], params["nu"]) / params["nu"]
        prior = (params["kappa"], 0.0, params["nu"], float(lam))
        return z, 1, {"normal_prior": prior}, {"y_mean_": math.ldexp(mean, k),
                                               "y_scale_": math.ldexp(scale, k), "_y_exp": k}

    def predict(self, X, return_std: bool = False):
        """Posterior predictive mean (and standard deviation with ``return_std``): the
        particle-weighted mixture of the leaves' Student-t predictive distributions."""
        moments = self._average(X)
        k = self.__dict__.get("_y_exp", 0)
        if k:
            return self._unstandardise_huge(moments, k, return_std)
        mean = moments[:, 0] * self.y_scale_ + self.y_mean_
        if not return_std:
            return mean
        var = np.maximum(moments[:, 1] - moments[:, 0] ** 2, 0.0)
        return mean, np.sqrt(var) * self.y_scale_

    def _unstandardise_huge(self, moments, k, return_std):
        """``predict`` for targets standardised divided by ``2^k``: mapped back in those units
        (a mean far from ``y_mean_`` in units of ``y_scale_`` may overflow on the way), then
        multiplied by ``2^k``.  A standard deviation beyond float64 is inf."""
        mean = moments[:, 0] * math.ldexp(self.y_scale_, -k) + math.ldexp(self.y_mean_, -k)
        with np.errstate(over="ignore"):
            mean = np.ldexp(mean, k)
            if not return_std:
                return mean
            var = np.maximum(moments[:, 1] - moments[:, 0] ** 2, 0.0)
            return mean, np.ldexp(np.sqrt(var) * math.ldexp(self.y_scale_, -k), k)
