"""Bayesian additive regression trees (Chipman, George & McCulloch 2010) with the particle
Gibbs, Chipman-George-McCulloch and grow/prune tree samplers (Lakshminarayanan, Roy & Teh
2015; Lakshminarayanan 2016, chapter 4)."""

from __future__ import annotations

import math
import time

import numpy as np
from scipy.special import gammaincinv, ndtri
from sklearn.base import BaseEstimator, RegressorMixin

from .._core._rng_kernels import seed_states
from .._core.scaling import target_exponent
from .._core.validation import (check_choice, check_int, check_positive, check_target,
                                check_X, feature_names, seed_sequence, set_feature_names)
from . import _bart_kernels as core

_SAMPLERS = {"pg": core.SAMPLER_PG, "cgm": core.SAMPLER_CGM,
             "growprune": core.SAMPLER_GROWPRUNE}


def _check_unit_open(value, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a real number, got {value!r}.")
    value = float(value)
    if not 0.0 < value < 1.0:
        raise ValueError(f"{name} must be in (0, 1), got {value}.")
    return value


def _check_nonnegative(value, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a real number, got {value!r}.")
    value = float(value)
    if not (0.0 <= value < math.inf):
        raise ValueError(f"{name} must be a finite number >= 0, got {value}.")
    return value


class BARTRegressor(RegressorMixin, BaseEstimator):
    """Bayesian additive regression trees fitted by Bayesian backfitting MCMC.

    The model is ``y = sum_m g(x; T_m, mu_m) + e``, ``e ~ N(0, sigma^2)``, with the
    Chipman, George & McCulloch tree prior (a node at depth ``d`` splits with probability
    ``alpha_s (1 + d)^-beta_s``; the split dimension is uniform over the dimensions where the
    node's data varies, the location uniform over the range of the node's data along it),
    leaf values ``N(0, sigma_mu^2)`` and ``sigma^2 ~ nu lambda / chi^2_nu``
    (Lakshminarayanan 2016, section 4.2).  Each sweep draws ``sigma^2``, then for every tree
    in turn a new structure given the others' residual, with its leaf values integrated out,
    and then its leaf values (algorithm 4.1).

    Parameters
    ----------
    n_trees : int, default=200
        Number of trees ``M`` (Chipman et al. 2010's default, used in the thesis).
    sampler : {"pg", "cgm", "growprune"}, default="pg"
        How a tree is redrawn given its residual.  ``"pg"``: particle Gibbs, a conditional
        SMC that grows ``n_particles`` trees top-down from the prior, one particle clamped to
        the current tree (Lakshminarayanan, Roy & Teh 2015, algorithm 2).  ``"cgm"``: one
        Metropolis-Hastings move of Chipman, George & McCulloch (1998): grow, prune, change,
        swap with probabilities 0.25, 0.25, 0.4, 0.1.  ``"growprune"``: one grow or prune move
        with probability 1/2 each (Pratola et al. 2013).
    n_particles : int, default=10
        Particles ``C`` of the conditional SMC (the thesis' C = 10, section 4.4); ``"pg"``
        only, at least 2.
    alpha_s, beta_s : float, default=0.95, 2.0
        Tree prior (Chipman et al. 2010's defaults, used in the thesis).
    k : float, default=2.0
        Leaf prior: the targets are mapped affinely onto ``[-0.5, 0.5]`` and the leaf values
        are ``N(0, (0.5 / (k sqrt(M)))^2)``, so that the sum of ``M`` leaves lies in that range
        with probability about 95 % at ``k = 2`` (Chipman et al. 2010, section 2.2.2).
    nu, q : float, default=3.0, 0.9
        Noise prior ``sigma^2 ~ nu lambda / chi^2_nu`` with ``lambda`` such that
        ``P(sigma <= sigma_hat) = q`` (Chipman et al. 2010, section 2.2.4; defaults there and
        in the thesis).
    sigma_hat : {"ols", "std"} or float, default="ols"
        The rough noise estimate that places the noise prior: ``"ols"`` the residual standard
        deviation of a least-squares linear fit (Chipman et al. 2010's default; the sample
        standard deviation when there are no more points than features plus one),
        ``"std"`` the sample standard deviation of ``y`` (the thesis names both), or a
        number in the units of ``y``.
    n_burn, n_samples, thin : int, default=100, 1000, 1
        Sweeps discarded as burn-in, posterior draws kept, and sweeps per kept draw after
        burn-in (Chipman et al. 2010's BayesTree package: 100 and 1,000).  A fit runs
        ``n_burn + n_samples * thin`` sweeps.
    max_stages : int, default=5000
        Limit on the number of SMC stages (the thesis' 5,000, never reached).
    random_state : int, SeedSequence, RandomState, Generator or None, default=None
        Seeds the chain; a fit is reproducible from it.

    Attributes
    ----------
    n_features_in_ : int
    sigma2_samples_ : ndarray of shape (n_samples,)
        Kept posterior draws of the noise variance ``sigma^2`` (units of ``y`` squared).
    loglik_trace_, sigma2_trace_, n_leaves_trace_, accept_trace_ : ndarray of shape (n_sweeps,)
        For every sweep including burn-in: the Gaussian log-likelihood of the training data
        given all trees and ``sigma^2`` (units of ``y``), ``sigma^2``, the mean number of
        leaves per tree, and the fraction of tree updates that changed the tree (MH: accepted
        moves; PG: the draw was not the clamped particle).
    sweep_seconds_, sweep_cpu_seconds_ : float
        Mean wall time and mean CPU time of this process per sweep (the kernels run on one
        thread, so the CPU time is the wall time the sweep would take on an idle core).
    y_offset_, y_scale_ : float
        Targets are modelled as ``(y - y_offset_) / y_scale_``, on ``[-0.5, 0.5]``
        (``y_scale_`` is inf when the range of ``y`` exceeds float64; the map is then
        applied to ``y`` divided by a power of two, exactly).
    sigma_mu_, lambda_ : float
        Leaf prior standard deviation and noise prior scale, on that scale.
    feature_names_in_ : ndarray of shape (n_features,)
        Column names of a fitted data frame (only when it had string column names).

    Notes
    -----
    Targets of any finite magnitude are fitted: beyond about 2.6e120 the chain runs on them
    divided by a power of two (exactly; the same chain) and the predictions are mapped back.
    Quantities in units of ``y`` squared (``sigma2_samples_``, ``sigma2_trace_``) are then
    inf where they exceed float64 (targets beyond about 1e154).

    ``predict(X, return_std=True)`` gives the posterior predictive of a new *observation*:
    mean over the kept draws of the sum of trees, and the square root of the draws' variance
    plus the mean noise variance; :meth:`predict_samples` gives the draws of the regression
    function itself.  Like every constant-leaf tree model it is constant outside the range of
    the training inputs.
    """

    def __init__(self, n_trees=200, sampler="pg", n_particles=10, alpha_s=0.95, beta_s=2.0,
                 k=2.0, nu=3.0, q=0.9, sigma_hat="ols", n_burn=100, n_samples=1000, thin=1,
                 max_stages=5000, random_state=None):
        self.n_trees = n_trees
        self.sampler = sampler
        self.n_particles = n_particles
        self.alpha_s = alpha_s
        self.beta_s = beta_s
        self.k = k
        self.nu = nu
        self.q = q
        self.sigma_hat = sigma_hat
        self.n_burn = n_burn
        self.n_samples = n_samples
        self.thin = thin
        self.max_stages = max_stages
        self.random_state = random_state

    # -- checks ------------------------------------------------------------------------------
    def _checked_params(self) -> dict:
        p = {"n_trees": check_int(self.n_trees, "n_trees", 1),
             "sampler": check_choice(self.sampler, "sampler", _SAMPLERS),
             "n_particles": check_int(self.n_particles, "n_particles", 2),
             "alpha_s": _check_unit_open(self.alpha_s, "alpha_s"),
             "beta_s": _check_nonnegative(self.beta_s, "beta_s"),
             "k": check_positive(self.k, "k"),
             "nu": check_positive(self.nu, "nu"),
             "q": _check_unit_open(self.q, "q"),
             "n_burn": check_int(self.n_burn, "n_burn", 0),
             "n_samples": check_int(self.n_samples, "n_samples", 1),
             "thin": check_int(self.thin, "thin", 1),
             "max_stages": check_int(self.max_stages, "max_stages", 1)}
        if isinstance(self.sigma_hat, str):
            p["sigma_hat"] = check_choice(self.sigma_hat, "sigma_hat", ("ols", "std"))
        else:
            p["sigma_hat"] = check_positive(self.sigma_hat, "sigma_hat")
        p["seed"] = seed_sequence(self.random_state)
        return p

    # -- fitting -----------------------------------------------------------------------------
    def fit(self, X, y):
        """Run the chain on ``(X, y)`` and keep ``n_samples`` posterior draws."""
        p = self._checked_params()
        names = feature_names(X)
        X = check_X(X, "X", estimator=self)
        y = check_target(y, X.shape[0], "y")
        N, D = X.shape
        # targets beyond Y_LIMIT are mapped onto [-0.5, 0.5] from y / 2^k (exactly): their
        # range, squares and sums of squares may overflow, the mapped targets are the same
        k = target_exponent(y)
        if k:
            y = np.ldexp(y, -k)
        lo, hi = float(y.min()), float(y.max())
        scale = hi - lo if hi > lo else 1.0
        offset = 0.5 * (lo + hi)
        ys = (y - offset) / scale
        s_hat = self._sigma_hat(p["sigma_hat"], X, ys, scale, k)
        nu, q, M = p["nu"], p["q"], p["n_trees"]
        # P(sigma^2 <= s_hat^2) = q for sigma^2 = nu lam / chi^2_nu
        lam = s_hat ** 2 * 2.0 * gammaincinv(0.5 * nu, 1.0 - q) / nu  # chi^2_nu quantile
        sigma_mu = 0.5 / (p["k"] * math.sqrt(M))
        state = seed_states(p["seed"], 1)
        chain = core.Chain(X, ys, M, _SAMPLERS[p["sampler"]], sigma_mu ** 2, p["alpha_s"],
                           p["beta_s"], nu, lam, s_hat ** 2, p["n_particles"],
                           p["max_stages"], state)
        n_burn, S, thin = p["n_burn"], p["n_samples"], p["thin"]
        total = n_burn + S * thin
        traces = [np.empty(total) for _ in range(4)]
        o_left = np.empty(max(16, 4 * M * S), np.int64)
        o_feat = np.empty_like(o_left)
        o_thr = np.empty(o_left.shape[0])
        o_mu = np.empty(o_left.shape[0])
        offsets = np.empty(S * M, np.int64)
        sigma2 = np.empty(S)
        pos = 0
        t0 = time.perf_counter()
        c0 = time.process_time()
        if n_burn:
            chain.run(n_burn, *traces, 0)
        done = n_burn
        for s in range(S):
            chain.run(thin, *traces, done)
            done += thin
            need = pos + int(chain.trees[7].sum())
            if need > o_left.shape[0]:
                size = max(need, 2 * o_left.shape[0])
                o_left, o_feat, o_thr, o_mu = (np.resize(a, size) for a in
                                               (o_left, o_feat, o_thr, o_mu))
            pos = chain.pack(o_left, o_feat, o_thr, o_mu, offsets, pos, s * M)
            sigma2[s] = chain.sigma2
        elapsed = time.perf_counter() - t0
        cpu = time.process_time() - c0
        # a valid fit: only now is the estimator changed
        set_feature_names(self, names)
        self.n_features_in_ = D
        self.sigma_mu_, self.lambda_ = sigma_mu, lam
        self._draws = (o_left[:pos].copy(), o_feat[:pos].copy(), o_thr[:pos].copy(),
                       o_mu[:pos].copy(), offsets, S, M)
        loglik, s2_trace, leaves, accept = traces
        if k:
            self._unscale_huge(k, N, offset, scale, sigma2, loglik, s2_trace)
        else:
            self.__dict__.pop("_huge", None)
            self.y_offset_, self.y_scale_ = offset, scale
            self.sigma2_samples_ = sigma2 * scale ** 2
            self.loglik_trace_ = loglik - N * math.log(scale)
            self.sigma2_trace_ = s2_trace * scale ** 2
        self.n_leaves_trace_ = leaves
        self.accept_trace_ = accept
        self.sweep_seconds_ = elapsed / max(total, 1)
        self.sweep_cpu_seconds_ = cpu / max(total, 1)
        return self

    def _unscale_huge(self, k, N, offset, scale, sigma2, loglik, s2_trace):
        """The fitted attributes of targets mapped from ``y / 2^k``, in the targets' units:
        variances (units of ``y`` squared) beyond float64 are inf, and so is ``y_scale_`` when
        the range of ``y`` is.  The map and noise draws in the units of ``y / 2^k`` are kept
        for prediction."""
        sigma2 = sigma2 * scale ** 2
        self._huge = (k, offset, scale, sigma2)
        with np.errstate(over="ignore"):
            self.y_offset_ = float(np.ldexp(offset, k))
            self.y_scale_ = float(np.ldexp(scale, k))
            self.sigma2_samples_ = np.ldexp(sigma2, 2 * k)
            self.sigma2_trace_ = np.ldexp(s2_trace * scale ** 2, 2 * k)
        # the density of N targets y is 2^-kN that of y / 2^k
        self.loglik_trace_ = loglik - N * (math.log(scale) + k * math.log(2.0))

    @staticmethod
    def _sigma_hat(how, X, ys, scale, k=0) -> float:
        if not isinstance(how, str):
            s = (math.ldexp(how, -k) if k else how) / scale
        else:
            N, D = X.shape
            if how == "ols" and N > D + 1:
                A = np.column_stack([np.ones(N), X])
                coef, *_ = np.linalg.lstsq(A, ys, rcond=None)
                resid = ys - A @ coef
                s = math.sqrt(float(resid @ resid) / (N - D - 1))
            else:
                s = float(np.std(ys, ddof=1)) if N > 1 else 0.0
        # constant targets or an exact linear fit leave no noise estimate: fall back to a
        # quarter of the (scaled) target range, so that the prior stays proper
        return s if s > 0 and math.isfinite(s) else 0.25

    # -- prediction --------------------------------------------------------------------------
    def _check_fitted(self):
        if not hasattr(self, "_draws"):
            from sklearn.exceptions import NotFittedError

            raise NotFittedError(f"This {type(self).__name__} instance is not fitted yet. Call "
                                 f"'fit' with appropriate arguments before using this "
                                 f"estimator.")

    def _samples(self, X):
        """Posterior draws of the regression function at ``X`` and the noise variance draws,
        in the units of ``y / 2^k``, and ``k`` (0 unless the targets exceeded Y_LIMIT)."""
        self._check_fitted()
        X = check_X(X, "X", self.n_features_in_, self)
        o_left, o_feat, o_thr, o_mu, offsets, S, M = self._draws
        k, offset, scale, sigma2 = self.__dict__.get("_huge") or (
            0, self.y_offset_, self.y_scale_, self.sigma2_samples_)
        out = np.empty((S, X.shape[0]))
        core.predict_draws(X, o_left, o_feat, o_thr, o_mu, offsets, S, M, out)
        out *= scale
        out += offset
        return out, sigma2, k

    def predict_samples(self, X) -> np.ndarray:
        """Posterior draws of the regression function at ``X``, shape
        ``(n_samples, n_points)`` (the noise not included; inf for a draw beyond float64)."""
        f, _, k = self._samples(X)
        if not k:
            return f
        with np.errstate(over="ignore"):
            return np.ldexp(f, k)

    def predict(self, X, return_std: bool = False):
        """Posterior predictive mean, and with ``return_std`` the predictive standard deviation
        of a new observation (function uncertainty and noise)."""
        f, sigma2, k = self._samples(X)
        mean = f.mean(axis=0)
        if k:  # the moments of the draws in the units of y / 2^k, mapped back
            with np.errstate(over="ignore"):
                if not return_std:
                    return np.ldexp(mean, k)
                return np.ldexp(mean, k), np.ldexp(np.sqrt(f.var(axis=0) + sigma2.mean()), k)
        if not return_std:
            return mean
        return mean, np.sqrt(f.var(axis=0) + sigma2.mean())

    def predict_interval(self, X, coverage: float = 0.9):
        """Central interval of the posterior predictive of a new observation, ``(lower,
        upper)``: quantiles of the mixture over the kept draws of ``N(f_s(x), sigma_s^2)``."""
        if not (0.0 < float(coverage) < 1.0):
            raise ValueError(f"coverage must be in (0, 1), got {coverage}.")
        f, sigma2, k = self._samples(X)
        lower, upper = mixture_interval(f, np.sqrt(sigma2), float(coverage))
        if not k:
            return lower, upper
        with np.errstate(over="ignore"):
            return np.ldexp(lower, k), np.ldexp(upper, k)


def mixture_interval(f: np.ndarray, sigma: np.ndarray, coverage: float):
    """Central ``coverage`` interval of the equal-weight mixture of ``N(f[s, i], sigma[s]^2)``
    over draws ``s``, for every point ``i`` (bisection on the mixture CDF)."""
    from scipy.special import ndtr

    sd = np.asarray(sigma, dtype=float)[:, None]
    z = ndtri(0.5 + 0.5 * coverage)
    out = []
    for level in (0.5 - 0.5 * coverage, 0.5 + 0.5 * coverage):
        a = f.min(axis=0) - z * sd.max() - 1e-12
        b = f.max(axis=0) + z * sd.max() + 1e-12
        for _ in range(60):
            mid = 0.5 * (a + b)
            below = ndtr((mid[None, :] - f) / sd).mean(axis=0) < level
            a = np.where(below, mid, a)
            b = np.where(below, b, mid)
        out.append(0.5 * (a + b))
    return out[0], out[1]
