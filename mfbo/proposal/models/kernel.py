"""The Mondrian kernel as a surrogate: Bayesian linear regression on Mondrian random features,
an approximation of a Gaussian process with the Laplace kernel (Balog et al., 2016)."""

from __future__ import annotations

import numbers

import numpy as np

from ..._core.arguments import check_int
from .base import Model
from .targets import log_shift, safe_exponent

__all__ = ["MondrianKernelModel"]

#: the lifetimes (inverse L1 length-scales in the unit cube) the marginal likelihood chooses from
LIFETIMES = (1.0, 2.0, 4.0, 8.0, 16.0, 32.0)
#: the noise-to-signal variance ratios it chooses from
NOISE_RATIOS = (1e-4, 1e-2, 1e-1)


def _check_grid(values, name: str) -> tuple:
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        raise TypeError(f"{name} must be a sequence of positive numbers, got {values!r}.")
    values = tuple(values)
    if not values or not all(isinstance(v, numbers.Real) and not isinstance(v, bool)
                             and np.isfinite(v) and v > 0 for v in values):
        raise ValueError(f"{name} must be a non-empty sequence of positive finite numbers, "
                         f"got {values!r}.")
    return tuple(float(v) for v in values)


class MondrianKernelModel(Model):
    """A Gaussian process with the Laplace kernel ``exp(-lifetime |x - x'|_1)``, approximated by
    the Mondrian kernel: ``n_trees`` Mondrian partitions of the unit cube cut to ``lifetime``,
    one feature per cell, and Bayesian linear regression on them
    (:class:`surrogates.kernel.MondrianKernelRidge`, exact dual solver).  Its predictions are
    smooth where a forest's are flat steps, and its spread grows away from the data, so it
    resolves a front or a basin from few observations.

    After each observation the model is fitted afresh to the transformed, standardised
    losses; the lifetime and the noise ratio are those of the largest log marginal likelihood
    over ``lifetimes`` x ``noise_ratios``, chosen anew at every ``refresh``-th observation
    (and at every one of the first 20), and kept in between.  The trees are grown from the
    model's seed at every fit, so the model is a function of its observations.

    Parameters
    ----------
    n_dims : int
    random_state : int, SeedSequence, Generator or None
    n_trees : int, default=50
        Mondrian samples (the kernel's Monte Carlo size).
    lifetimes : sequence of float, default=(1, 2, 4, 8, 16, 32)
    noise_ratios : sequence of float, default=(1e-4, 1e-2, 1e-1)
        Noise variance over the prior's (the ridge's ``delta2``).
    refresh : int, default=5
    y_transform : {"log", "raw"}, default="log"
        ``"log"``: ``log(y - c)`` as the Mondrian forest's ``"log"`` transform with its robust
        shift (:func:`~mfbo.proposal.models.log_shift`); ``"raw"``: the values themselves (a
        constraint's, whose sign matters).
    n_draws : int, default=16
        Draws of :meth:`predict_per_tree`.
    """

    def __init__(self, n_dims: int, random_state, n_trees: int = 50,
                 lifetimes=LIFETIMES, noise_ratios=NOISE_RATIOS, refresh: int = 5,
                 y_transform: str = "log", n_draws: int = 16):
        self.n_trees, self.refresh = check_int(n_trees, "n_trees"), check_int(refresh, "refresh")
        self.n_draws = check_int(n_draws, "n_draws")
        if y_transform not in ("log", "raw"):
            raise ValueError(f"y_transform must be 'log' or 'raw', got {y_transform!r}.")
        self.lifetimes = _check_grid(lifetimes, "lifetimes")
        self.noise_ratios = _check_grid(noise_ratios, "noise_ratios")
        self.y_transform = y_transform
        self.n_dims = int(n_dims)
        self._seed = int(np.random.default_rng(random_state).integers(2 ** 31 - 1))
        self._estimator = None
        #: the (lifetime, noise ratio) of the last fit
        self.chosen: tuple[float, float] | None = None
        self._shift = (0.0, 0)  # the log transform's c, and the exponent the losses are scaled by
        self._standard = (0.0, 1.0)  # the transformed losses' centre and spread
        self._draws = None

    # -- the output transform -------------------------------------------------------------------
    def _transform(self, values) -> np.ndarray:
        v = np.asarray(values, dtype=float)
        if self.y_transform == "raw":
            return v
        c, k = self._shift
        v = np.ldexp(v, -k)
        return np.log(np.maximum(v - c, np.finfo(float).tiny))

    def to_model_scale(self, values) -> np.ndarray:
        return self._transform(values)

    def incumbent(self, y) -> float:
        return float(np.min(self._transform(y)))

    # -- fitting ----------------------------------------------------------------------------------
    def observe(self, X, y, n_new):
        if n_new == 0 and self._estimator is not None:
            return
        from surrogates.kernel import MondrianKernelRidge

        X = np.asarray(X, dtype=float)
        y = np.asarray(y, dtype=float)
        if self.y_transform == "log":
            k = safe_exponent(y)
            scaled = np.ldexp(y, -k)
            self._shift = (float(scaled.min()) - log_shift(scaled, robust=True), k)
        t = self._transform(y)
        centre, spread = float(t.mean()), float(t.std())
        spread = spread if spread > 0 else 1.0
        z = (t - centre) / spread
        n = y.shape[0]
        if n < 3 or float(np.ptp(z)) == 0.0:
            grid = [(4.0, 1e-2)]
        elif self.chosen is not None and n >= 20 and n % self.refresh:
            grid = [self.chosen]
        else:
            grid = [(lam, d2) for lam in self.lifetimes for d2 in self.noise_ratios]
        best, best_ml = None, -np.inf
        for lam, d2 in grid:
            est = MondrianKernelRidge(n_trees=self.n_trees, lifetime=lam, delta2=d2,
                                      solver="dual", prior_variance="auto",
                                      random_state=self._seed).fit(X, z)
            ml = est.log_marginal_likelihood_ if len(grid) > 1 else 0.0
            if best is None or ml > best_ml:
                best, best_ml = est, ml
        self._estimator = best
        self.chosen = (float(best.lifetime), float(best.delta2))
        self._standard = (centre, spread)

    def on_targets_changed(self) -> None:
        self._estimator = None  # (every fit is afresh: nothing kept to undo)

    @property
    def ready(self) -> bool:
        return self._estimator is not None

    # -- predictions ------------------------------------------------------------------------------
    def predict(self, X):
        centre, spread = self._standard
        mean, std = self._estimator.predict(np.asarray(X, dtype=float), return_std=True)
        return mean * spread + centre, std * spread

    def predict_per_tree(self, X):
        """``n_draws`` draws of the predictive distribution at each point, at the normal
        quantiles ``(i + 1/2) / n_draws`` in an order fixed by the seed (the same draw at
        every point), each with the variance left over, so that the draws' mixture has the
        predictive mean and variance: ``(means, variances)``, each ``n x n_draws``."""
        mean, std = self.predict(X)
        if self._draws is None:
            from scipy.stats import norm

            q = norm.ppf((np.arange(self.n_draws) + 0.5) / self.n_draws)
            q = np.random.default_rng(self._seed).permutation(q)
            self._draws = (q, max(1.0 - float(np.mean(q ** 2)), 0.0))
        q, rest = self._draws
        means = mean[:, None] + std[:, None] * q[None, :]
        return means, np.repeat((rest * std ** 2)[:, None], self.n_draws, axis=1)
