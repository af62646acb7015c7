"""Local models around the incumbent: the steps a forest cannot take.

A forest's mean is flat inside a cell, so near the best observation it says nothing about
which way the loss falls.  On a smooth loss the acquisition then proposes points just beside
the incumbent, one axis at a time, and a curved valley is followed in ever smaller steps.
:func:`quadratic_step` fits a quadratic by least squares to the observations nearest the
incumbent (in the unit cube, continuous coordinates only) and returns the minimiser of that
quadratic within the box they span: a trust-region step, as in derivative-free optimisers.
Before there are enough observations for a quadratic, :func:`isotropic_step` fits one with a
single curvature shared by all coordinates (a bowl's overall shape, from about twice as many
observations as coordinates), and :func:`linear_step` a plane that it follows to the corner
of the box it descends to; beyond the observations the forest's mean is flat too, so a loss
lowest at a bound is followed there only by such a step.
"""

from __future__ import annotations

import numpy as np

from ..models.targets import LOG_SHIFT

__all__ = ["quadratic_step", "isotropic_step", "linear_step", "ordinal_as_continuous",
           "quadratic_size", "quadratic_features", "plane_features", "score_transform",
           "nearest", "ridge_solve", "trust_box", "FULL_QUADRATIC_MAX_DIMS",
           "MIN_ORDINAL_LEVELS"]

#: up to this many continuous dimensions the quadratic has all cross terms; beyond, only
#: squares (a full quadratic in 20 dimensions needs 231 observations)
FULL_QUADRATIC_MAX_DIMS = 5
#: an integer coordinate of at least this many levels can join the local quadratic
#: (:func:`ordinal_as_continuous`)
MIN_ORDINAL_LEVELS = 5
#: random points of the trust box at which a non-convex quadratic is minimised
_N_SEARCH = 2048


def ordinal_as_continuous(levels) -> np.ndarray:
    """``levels`` with every ordered coordinate of at least :data:`MIN_ORDINAL_LEVELS` levels
    marked continuous (0), so that :func:`quadratic_step` moves it too; the caller snaps
    the step back to the levels.  An integer that counts something (a thickness in
    sixteenths, a number of neighbours) often has a curved loss like a real, which the
    forest alone only follows level by level."""
    out = np.array(levels, dtype=np.int64, copy=True)
    out[out >= MIN_ORDINAL_LEVELS] = 0
    return out


def quadratic_size(c: int) -> tuple[bool, int]:
    """``(full, p)``: whether a quadratic in ``c`` coordinates has all cross terms (up to
    :data:`FULL_QUADRATIC_MAX_DIMS`; else the squares only), and its number of coefficients."""
    full = c <= FULL_QUADRATIC_MAX_DIMS
    return full, 1 + c + (c * (c + 1) // 2 if full else c)


def quadratic_features(Z: np.ndarray, full: bool) -> np.ndarray:
    """A quadratic's design matrix of the scaled coordinates ``Z``: a constant, the
    coordinates and, with ``full``, every product of two (squares included), else the squares
    only."""
    m, c = Z.shape
    cols = [np.ones((m, 1)), Z]
    if full:
        i, j = np.triu_indices(c)
        cols.append(Z[:, i] * Z[:, j])
    else:
        cols.append(Z * Z)
    return np.hstack(cols)


def score_transform(y: np.ndarray) -> np.ndarray:
    """``log(y - c)`` with ``c`` below the minimum by ``LOG_SHIFT`` of the spread to the
    median, so that a few bad losses do not bend the quadratic.  That is the forest's
    ``"log"`` shift (:func:`mfbo.proposal.models.log_shift`) while the median is above the minimum;
    when it is not (more than half the losses tied at the best) the spread is the range
    instead of the forest's thousandth of it, and when all losses are equal they are
    returned shifted to 0, untransformed."""
    lo = float(y.min())
    spread = float(np.median(y)) - lo
    if not np.isfinite(spread) or spread <= 0:
        spread = float(y.max() - lo)
    if not np.isfinite(spread) or spread <= 0:
        return y - lo
    return np.log(y - lo + LOG_SHIFT * spread)


def _local_fit(U: np.ndarray, y: np.ndarray, cont: np.ndarray, p: int, min_fraction: float,
               features):
    """Least squares of ``features(Z)`` (``p`` columns) on the ``2 p`` observations nearest
    the best one, in coordinates ``Z`` scaled so that their box is [-1, 1] around it:
    ``(center, radius, coef, lo, hi, Z, t)`` with ``[lo, hi]`` that box within the unit cube
    and ``Z``, ``t`` the scaled coordinates and transformed losses fitted, or ``None`` (no
    continuous coordinate, too few observations, all at the centre, or a degenerate fit)."""
    if cont.size == 0 or y.size == 0:
        return None
    m = 2 * p
    if y.size < m / min_fraction:
        return None
    b = int(np.argmin(y))
    center = U[b]
    near, radius = nearest(U, center, cont, m)
    if not radius > 0:
        return None
    Z = (U[near][:, cont] - center[cont]) / radius
    t = score_transform(y[near])
    coef = ridge_solve(features(Z), t, p)
    if coef is None:
        return None
    lo, hi = trust_box(center[cont], radius)
    return center, radius, coef, lo, hi, Z, t


def nearest(U: np.ndarray, center: np.ndarray, cont: np.ndarray, m: int):
    """``(rows, radius)``: the ``m`` rows of ``U`` nearest ``center`` in the largest distance
    over the coordinates ``cont`` (ties in order), and the largest of their distances."""
    dist = np.abs(U[:, cont] - center[cont]).max(axis=1)
    near = np.argsort(dist, kind="stable")[:m]
    return near, float(dist[near].max())


def ridge_solve(A: np.ndarray, T: np.ndarray, p: int) -> np.ndarray | None:
    """The least squares of ``T`` (a vector or one column per target) on the ``p`` columns of
    ``A``, with a little ridge on every coefficient but the constant (the first) to keep an
    ill-posed fit bounded; None where it is singular or not finite."""
    lam = 1e-6 * max(1.0, float(np.trace(A.T @ A)) / p)
    R = lam * np.eye(p)
    R[0, 0] = 0.0
    try:
        coef = np.linalg.solve(A.T @ A + R, A.T @ T)
    except np.linalg.LinAlgError:
        return None
    return coef if np.all(np.isfinite(coef)) else None


def trust_box(center: np.ndarray, radius: float) -> tuple[np.ndarray, np.ndarray]:
    """``(lo, hi)``: the box [-1, 1] of coordinates scaled by ``radius`` around ``center`` (its
    continuous coordinates), cut to the unit cube."""
    return (np.maximum(-1.0, -center / radius), np.minimum(1.0, (1.0 - center) / radius))


def plane_features(Z: np.ndarray) -> np.ndarray:
    """A plane's design matrix: a constant and the coordinates."""
    return np.hstack([np.ones((Z.shape[0], 1)), Z])


def _isotropic(Z: np.ndarray) -> np.ndarray:
    """An isotropic quadratic's design matrix: the plane's and the squared norm."""
    return np.hstack([plane_features(Z), (Z * Z).sum(axis=1, keepdims=True)])


def _loo_error(A: np.ndarray, t: np.ndarray) -> float:
    """Mean squared leave-one-out residual of the least squares of ``t`` on ``A`` (the
    hat-matrix shortcut; infinite where a point alone determines a coefficient)."""
    Q, _ = np.linalg.qr(A)
    h = (Q * Q).sum(axis=1)
    r = t - Q @ (Q.T @ t)
    if np.any(h > 1.0 - 1e-9):
        return np.inf
    return float(np.mean((r / (1.0 - h)) ** 2))


def _continuous(U, y, levels):
    """``U`` and ``y`` as float arrays, and the indices of the continuous coordinates."""
    U = np.asarray(U, dtype=float)
    y = np.asarray(y, dtype=float)
    return U, y, np.flatnonzero(np.asarray(levels) == 0)


def _moved(center: np.ndarray, cont: np.ndarray, radius: float, z: np.ndarray) -> np.ndarray:
    u = center.copy()
    u[cont] = np.clip(center[cont] + radius * z, 0.0, 1.0)
    return u


def quadratic_step(U: np.ndarray, y: np.ndarray, levels, rng: np.random.Generator,
                   min_fraction: float = 0.5):
    """The minimiser of a quadratic fitted around the best observation, or ``None``.

    ``U`` (n, D) are the observations in the unit cube, ``y`` their losses, ``levels`` the
    space's per-coordinate kinds (0 for continuous: only those move; the others keep the
    incumbent's values).  The quadratic is fitted to the ``2 p`` observations nearest the
    incumbent (``p`` its number of coefficients) and minimised within the box, centred on the
    incumbent, whose half-width is the distance to the farthest of them (and within the unit
    cube).  ``None`` when the ``2 p`` nearest would be more than ``min_fraction`` of the
    observations (by default: fewer than ``4 p`` observations, so that the quadratic is local
    and not a fit to the whole initial design), when there is no continuous coordinate, or
    when the fit is degenerate."""
    U, y, cont = _continuous(U, y, levels)
    c = cont.size
    full, p = quadratic_size(c)
    fit = _local_fit(U, y, cont, p, min_fraction, lambda Z: quadratic_features(Z, full))
    if fit is None:
        return None
    center, radius, coef, lo, hi, _, _ = fit
    # candidates: the clipped Newton point (if the quadratic is convex) and random points of
    # the trust box; the best by the fitted quadratic wins
    cands = [lo + (hi - lo) * rng.random((_N_SEARCH, c))]
    g = coef[1:1 + c]
    if full:
        H = np.zeros((c, c))
        i, j = np.triu_indices(c)
        H[i, j] = coef[1 + c:]
        H = H + H.T  # off-diagonal terms appear once, squares twice: H is the Hessian
    else:
        H = np.diag(2.0 * coef[1 + c:])
    try:
        if np.all(np.linalg.eigvalsh(H) > 0):
            cands.append(np.clip(np.linalg.solve(H, -g), lo, hi)[None, :])
    except np.linalg.LinAlgError:
        pass
    Zc = np.vstack(cands)
    q = quadratic_features(Zc, full) @ coef
    return _moved(center, cont, radius, Zc[int(np.argmin(q))])


def isotropic_step(U: np.ndarray, y: np.ndarray, levels, min_fraction: float = 1.0,
                   if_curved: bool = False):
    """The minimiser of an isotropic quadratic fitted around the best observation, or
    ``None``: a trust-region step for when there are too few observations for
    :func:`quadratic_step`.

    As :func:`quadratic_step`, with ``a + b.z + k |z|^2``, one curvature ``k`` shared by the
    ``c`` continuous coordinates (``p = c + 2`` coefficients), fitted to the ``2 p``
    observations nearest the incumbent.  By default those may be all of them: with so few
    coefficients the fit is a bowl's overall shape, whose slope and curvature point to the
    bowl's centre from ``2 (c + 2)`` observations on (a full quadratic in ten coordinates
    needs 66 coefficients, a diagonal one 21).  The quadratic is a sum of one-dimensional
    ones, so its minimiser in the trust box is exact coordinate by coordinate: the clipped
    vertex where the curvature is positive, else the better end of each range.
    ``if_curved``: ``None`` also unless the curvature is positive and the quadratic predicts
    the observations it was fitted to better than a plane, by leave-one-out error (a loss
    lowest at a corner of the box is left to :func:`linear_step`)."""
    U, y, cont = _continuous(U, y, levels)
    fit = _local_fit(U, y, cont, cont.size + 2, min_fraction, _isotropic)
    if fit is None:
        return None
    center, radius, coef, lo, hi, Z, t = fit
    if if_curved:
        bowl = _isotropic(Z)
        if not (coef[-1] > 0 and _loo_error(bowl, t) < _loo_error(bowl[:, :-1], t)):
            return None
    return _moved(center, cont, radius, _isotropic_minimiser(coef[1:-1], coef[-1], lo, hi))


def _isotropic_minimiser(b: np.ndarray, k: float, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """The minimiser of ``b.z + k |z|^2`` over the box ``[lo, hi]``: a sum of one-dimensional
    quadratics, each minimised on its own range (the clipped vertex when ``k > 0``, else the
    lower of the two ends; a coordinate with neither slope nor curvature stays at 0)."""
    if k > 0:
        return np.clip(-b / (2.0 * k), lo, hi)
    ends = np.stack([lo, hi])
    z = ends[np.argmin(b * ends + k * ends * ends, axis=0), np.arange(b.size)]
    return np.where((b == 0) & (k == 0), 0.0, z)


def linear_step(U: np.ndarray, y: np.ndarray, levels, min_fraction: float = 0.5):
    """The corner of the trust box where a plane fitted around the best observation is
    lowest, or ``None``: a trust-region gradient step, for when there are too few
    observations for :func:`quadratic_step`.

    As :func:`quadratic_step`, with a plane (``p = 1 + c`` coefficients for ``c``
    continuous coordinates) fitted to the ``2 p`` observations nearest the incumbent; each
    continuous coordinate goes to the side of the box its slope descends to (a flat one
    stays).  A loss lowest at a bound of its ranges (the smallest leaf size, no
    regularisation) is then followed to that bound, which a forest's flat mean cannot do."""
    U, y, cont = _continuous(U, y, levels)
    fit = _local_fit(U, y, cont, 1 + cont.size, min_fraction, plane_features)
    if fit is None:
        return None
    center, radius, coef, lo, hi, _, _ = fit
    g = coef[1:]
    return _moved(center, cont, radius, np.where(g > 0, lo, np.where(g < 0, hi, 0.0)))
