"""Acquisition functions for *minimisation*: every function returns a score to maximise.

They see a surrogate only through ``predict(X, return_std=True)`` (and, for Thompson sampling,
``predict_per_tree``); they know nothing of search spaces or of the optimizer.  Each function
takes the predictive mean and standard deviation of the loss at the candidates and returns one
score per candidate; :func:`make_acquisition` builds the object the maximisers call.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Callable

import numpy as np

_TINY = 1e-12

__all__ = ["ucb", "expected_improvement", "log_expected_improvement",
           "probability_of_improvement", "lognormal_expected_improvement", "Acquisition",
           "make_acquisition", "ACQUISITIONS"]


def ucb(mean, std, kappa: float = 1.0) -> np.ndarray:
    """Upper confidence bound of the negated loss: ``kappa * std - mean``.

    Maximising it minimises the loss's lower confidence bound ``mean - kappa * std``; it is
    the UCB rule of the Mondrian BO experiments (Lakshminarayanan et al., 2016), which
    maximise ``-f``, with kappa = 1.
    """
    return kappa * np.asarray(std) - np.asarray(mean)


def _z(mean, std, best, xi):
    s = np.maximum(np.asarray(std, dtype=float), _TINY)
    return (best - xi - np.asarray(mean, dtype=float)) / s, s


def expected_improvement(mean, std, best: float, xi: float = 0.0) -> np.ndarray:
    """``E[max(best - xi - Y, 0)]`` for ``Y ~ N(mean, std^2)``."""
    from scipy.special import ndtr  # scipy.special is slow to import: on use

    z, s = _z(mean, std, best, xi)
    return s * (z * ndtr(z) + np.exp(-0.5 * z * z) / np.sqrt(2.0 * np.pi))


def _log_h(z):
    """``log(z Phi(z) + phi(z))`` computed stably for all z (Ament et al. 2023, log-EI)."""
    from scipy.special import log_ndtr, ndtr

    z = np.asarray(z, dtype=float)
    out = np.empty_like(z)
    big = z > -5.0
    zb = z[big]
    out[big] = np.log(zb * ndtr(zb) + np.exp(-0.5 * zb * zb) / np.sqrt(2.0 * np.pi))
    zs = z[~big]
    # z Phi(z) + phi(z) = phi(z) (1 - |z| Phi(z)/phi(z)) = phi(z) (1 - |z| R(|z|)), with Mills'
    # ratio R; log1p of the (small, positive) bracket via the asymptotic-safe form below.
    # Phi(z)/phi(z) for z << 0 via exp(log_ndtr - log_phi).  Where z * z overflows (|z| beyond
    # about 1.3e154: a mean far above the best with a tiny spread) log_phi is -inf, and so is
    # the limit of log h, which the formula would give as inf - inf = NaN
    with np.errstate(over="ignore", invalid="ignore"):
        log_phi = -0.5 * zs * zs - 0.5 * np.log(2.0 * np.pi)
        ratio = np.exp(log_ndtr(zs) - log_phi)
        value = log_phi + np.log(np.maximum(1.0 + zs * ratio, 1e-300))
    out[~big] = np.where(np.isneginf(log_phi), -np.inf, value)
    return out


def log_expected_improvement(mean, std, best: float, xi: float = 0.0) -> np.ndarray:
    """``log EI``: same maximiser as EI, but keeps a useful ranking where EI underflows."""
    z, s = _z(mean, std, best, xi)
    return np.log(s) + _log_h(z)


def probability_of_improvement(mean, std, best: float, xi: float = 0.0) -> np.ndarray:
    """``P(Y < best - xi)``."""
    from scipy.special import ndtr

    z, _ = _z(mean, std, best, xi)
    return ndtr(z)


def lognormal_expected_improvement(mean, std, best: float) -> np.ndarray:
    """EI of ``exp(Y)`` for a surrogate fitted to log-scaled losses (SMAC's log-EI, xi = 0).

    With ``v = (best - mean)/std`` in log space:
    ``exp(best) Phi(v) - exp(mean + std^2/2) Phi(v - std)`` (Hutter et al. 2009).
    """
    from scipy.special import ndtr

    mean = np.asarray(mean, dtype=float)
    s = np.maximum(np.asarray(std, dtype=float), _TINY)
    v = (best - mean) / s
    return np.exp(best) * ndtr(v) - np.exp(mean + 0.5 * s * s) * ndtr(v - s)


@dataclass
class Acquisition:
    """A scoring rule bound to its parameters: ``score(mean, std, best) -> array``.

    ``needs_best`` is False for rules that ignore the incumbent (UCB).  ``thompson`` marks the
    per-tree posterior draw, which the maximisers handle by scoring one tree's prediction.
    """

    name: str
    score: Callable[..., np.ndarray]
    needs_best: bool = True
    thompson: bool = False

    def __call__(self, mean, std, best=None):
        return self.score(mean, std, best)


# each rule as ``rule(mean, std, best, kappa, xi)``: module-level functions, so that a bound
# acquisition pickles
def _ucb_rule(m, s, b, kappa, xi):
    return ucb(m, s, kappa)


def _ei_rule(m, s, b, kappa, xi):
    return expected_improvement(m, s, b, xi)


def _logei_rule(m, s, b, kappa, xi):
    return log_expected_improvement(m, s, b, xi)


def _pi_rule(m, s, b, kappa, xi):
    return probability_of_improvement(m, s, b, xi)


def _lognormal_ei_rule(m, s, b, kappa, xi):
    return lognormal_expected_improvement(m, s, b)


def _thompson_rule(m, s, b, kappa, xi):
    return -np.asarray(m)


#: name -> (rule, needs_best, thompson); ``"lcb"`` is another name of ``"ucb"`` (minimising
#: the loss's lower confidence bound is maximising the negated loss's upper one)
ACQUISITIONS = {
    "ucb": (_ucb_rule, False, False),
    "lcb": (_ucb_rule, False, False),
    "ei": (_ei_rule, True, False),
    "logei": (_logei_rule, True, False),
    "pi": (_pi_rule, True, False),
    "lognormal-ei": (_lognormal_ei_rule, True, False),
    "thompson": (_thompson_rule, False, True),
}


def make_acquisition(name: str = "ucb", kappa: float = 1.0, xi: float = 0.0) -> Acquisition:
    """Build an acquisition by name.

    ``"ucb"`` (or ``"lcb"``; ``kappa``), ``"ei"``, ``"logei"``, ``"pi"`` (``xi``),
    ``"lognormal-ei"`` (SMAC's EI on log-scaled losses), ``"thompson"`` (the negated mean of one
    randomly drawn tree, i.e. a draw from the forest's mixture over functions).
    """
    if not isinstance(name, str):
        raise TypeError(f"acquisition must be a string, got {type(name).__name__}.")
    key = name.lower()
    if key not in ACQUISITIONS:
        raise ValueError(f"acquisition must be one of {sorted(ACQUISITIONS)}, got {name!r}.")
    for arg, v in (("kappa", kappa), ("xi", xi)):
        if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
            raise TypeError(f"{arg} must be a number, got {v!r}.")
    if not np.isfinite(kappa) or kappa < 0:
        raise ValueError(f"kappa must be a finite non-negative number, got {kappa}.")
    if not np.isfinite(xi):
        raise ValueError(f"xi must be finite, got {xi}.")
    rule, needs_best, thompson = ACQUISITIONS[key]
    return Acquisition(key, partial(rule, kappa=kappa, xi=xi), needs_best, thompson)
