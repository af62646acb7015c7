"""A local step towards the front of several objectives: the minimiser of a local model of a
random scalarisation of the observed losses, around the observation that scalarisation ranks
first.

Near the front the objectives' forests predict the means of the observations their leaves
hold, never better than the best of them, so an acquisition over them sees no gain in moving
a point of the front a little.  A random augmented Chebyshev scalarisation (ParEGO's,
:func:`acquisitions.pareto.chebyshev`, weights uniform on the simplex) of the feasible
observations' losses, each normalised by its observed range, is one loss whose best
observation is on the front; the single-objective local models
(:mod:`~mfbo.proposal.steps.local_models`) fitted to it around that observation say where it
goes on falling: a quadratic, or where there are too few observations for one, the isotropic
quadratic where it is curved and else the plane.  Variables that every front point shares a
value of (a front's distance variables) are approached that way.

That step moves the point along the front as well, and a quadratic fitted to a Chebyshev
scalarisation cannot follow the scalarisation's kink where two objectives trade off, so
its steps land off the front about as often as on it.  :func:`dominating_step` instead
fits a quadratic to each objective around one front point and goes where all of them are
predicted to fall together: the point the models say dominates it by most.  Where the
objectives conflict (a position on the front) that keeps the point where it is; where they
agree (the distance from the front) it moves it onto the front.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Callable

import numpy as np

from acquisitions import snap
from acquisitions.pareto import chebyshev, non_dominated

from .base import Context, Point
from .local import same_branch
from .local_models import (isotropic_step, linear_step, nearest, ordinal_as_continuous,
                           plane_features, quadratic_features, quadratic_size, quadratic_step,
                           ridge_solve, trust_box)

__all__ = ["CENTRES", "FORMS", "FALLBACKS", "range_scaled", "scalarised_losses",
           "nearest_others", "front_gaps", "draw_centre", "front_local_step", "dominating_step",
           "midpoint_step", "mutation_step", "CentredFit", "centred_quadratics",
           "improving_point"]

#: random points of the trust box, and of each of the shrinking boxes after it, at which
#: :func:`dominating_step` compares the objectives' local quadratics
_N_DRAWS = 1024
_N_SHRINK = 4
#: how the dominating step draws its front point (:func:`dominating_step`)
CENTRES = ("uniform", "gaps")


def range_scaled(L: np.ndarray) -> np.ndarray:
    """Losses ``L`` (n × k), each objective less its least value and divided by its range in
    ``L`` (a range of zero by 1): every objective in [0, 1]."""
    L = np.asarray(L, dtype=float)
    lo, span = L.min(axis=0), np.ptp(L, axis=0)
    return (L - lo) / np.where(span > 0, span, 1.0)


def scalarised_losses(L: np.ndarray, weights) -> np.ndarray:
    """The augmented Chebyshev scalarisation with ``weights`` of losses ``L`` (n × k), each
    objective normalised by its range in ``L`` (:func:`range_scaled`)."""
    return chebyshev(range_scaled(L), weights)


def front_local_step(ctx: Context, k: int, integers: bool = False) -> Point | None:
    """The local models' step on a random scalarisation of the ``k`` objectives' losses of the
    feasible observations (this module's description; weights and the quadratic's random
    points from the proposal's stream ``"front local"``), or ``None``: with a candidate set or
    a trial pending, with fewer than two feasible observations, where no local model can be
    fitted, or where its step was already asked.  ``integers``: the integer coordinates of at
    least five levels move too (:func:`~.local_models.ordinal_as_continuous`, snapped back),
    where there are enough observations for that larger quadratic, and in the isotropic one."""
    study = ctx.study
    if ctx.candidates is not None or study.pending:
        return None
    Y = study.obs.Y
    feasible = np.all(Y[:, k:] <= 0, axis=1)
    if feasible.sum() < 2:
        return None
    rng = ctx.stream("front local")
    X = study.obs.X[feasible]
    y = scalarised_losses(Y[feasible, :k], rng.dirichlet(np.ones(k)))
    levels = ctx.space.levels
    if ctx.space.constrained:
        X, y, levels = same_branch(ctx.space, X, y)
    wider = ordinal_as_continuous(levels) if integers else levels
    u = None
    if integers and not np.array_equal(wider, levels):
        u = quadratic_step(X, y, wider, rng)
    if u is None:
        u = quadratic_step(X, y, levels, rng)
    if u is None:
        u = isotropic_step(X, y, wider, if_curved=True)
    if u is None:
        u = linear_step(X, y, levels)
    if u is None:
        return None
    u = snap(u, ctx.space.levels)
    return (u, None) if ctx.is_new(u) else None


def nearest_others(Z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(distance, row)``: each row's distance to its nearest other row of ``Z`` (at least
    two rows; 0 for a repeated row) and that row's index."""
    from scipy.spatial import cKDTree

    # (a k-d tree: a front of thousands of points needs no matrix of all pairs)
    distance, row = cKDTree(Z).query(Z, k=2)
    return distance[:, 1], row[:, 1]


def front_gaps(L: np.ndarray) -> np.ndarray:
    """Each row's distance to its nearest other row of ``L`` (losses, each column scaled to
    its range; 0 for a repeated row, and for a single row 1)."""
    if len(L) == 1:
        return np.ones(1)
    return nearest_others(range_scaled(L))[0]


def draw_centre(rng: np.random.Generator, front: np.ndarray, how: str = "uniform") -> int:
    """The row of the front's losses ``front`` a dominating step centres on: drawn uniformly,
    or with ``how="gaps"`` with a probability proportional to its :func:`front_gaps`
    (uniformly where every gap is 0)."""
    n = len(front)
    if how == "gaps":
        weights = front_gaps(front)
        if weights.sum() > 0:
            return int(rng.choice(n, p=weights / weights.sum()))
    return int(rng.choice(n))


def dominating_step(ctx: Context, k: int, centre: str = "uniform",
                    fallback: str | None = None) -> Point | None:
    """The point that local quadratics of the ``k`` objectives predict dominates a front
    point by most, or ``None``.

    The centre is a feasible observation on the front of the feasible ones, drawn (from the
    proposal's stream ``"dominating step"``) by :func:`draw_centre` (``centre``: its
    ``how``).  Each objective's loss, normalised by its observed range, gets a quadratic
    (all cross terms up to :data:`~.local_models.FULL_QUADRATIC_MAX_DIMS` continuous
    coordinates, else squares only) fitted by least squares to the ``2 p`` feasible
    observations nearest the centre (``p`` its number of coefficients), all with the same
    design.  The step is the point of
    the box those observations span around the centre (and within the unit cube) where the
    worst of the objectives' predicted changes from the centre is lowest (plus ParEGO's
    ``rho`` = 0.05 times their sum, which separates points that improve the worst alike):
    1,024 random points of the box, then four times 1,024 in a box of half the width around
    the best so far.  Where the objectives conflict along a coordinate (a front's position)
    moving it worsens one of them, so the step keeps it; where they agree (a front's
    distance) it moves all of them down together.  A quadratic of one scalarisation has the
    scalarisation's kink between the objectives, which it cannot fit; each objective alone
    is smooth there.  ``fallback``: where there are too few observations for the
    quadratics, quadratics without cross terms (``"squares"``, ``4 (1 + 2 c)`` observations
    for ``c`` continuous coordinates) or planes (``"plane"``, ``4 (1 + c)``: a step of
    common descent of the objectives' linear models).
    ``None``: with a candidate set or a trial pending, fewer than ``4 p`` feasible
    observations (of the fallback's ``p`` with one), no continuous coordinate, a degenerate
    fit, a step that no objective's model predicts better for all (the centre is on the
    models' front), or a step already asked."""
    study = ctx.study
    if ctx.candidates is not None or study.pending:
        return None
    feasible, L, front = _feasible_front(study.obs.Y, k)
    X = study.obs.X[feasible]
    if front.size == 0:
        return None
    rng = ctx.stream("dominating step")
    centre = int(front[draw_centre(rng, L[front], centre)])
    fit = centred_quadratics(ctx.space, X, L, centre, _scaled_rows)
    if fit is None and fallback is not None:
        fit = centred_quadratics(ctx.space, X, L, centre, _scaled_rows, fallback)
    if fit is None:
        return None
    at_centre = fit.predict(np.zeros((1, fit.cont.size)))

    def worst(Z):
        change = fit.predict(Z) - at_centre
        return change.max(axis=1) + 0.05 * change.sum(axis=1)

    u = improving_point(rng, fit, worst)
    if u is None:
        return None
    u = snap(u, ctx.space.levels)
    return (u, None) if ctx.is_new(u) else None


def _feasible_front(Y: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(feasible, L, front)``: the rows of the outcomes ``Y`` whose constraints (columns
    from ``k`` on) are met, their ``k`` losses, and the rows of ``L`` on its front."""
    feasible = np.flatnonzero(np.all(Y[:, k:] <= 0, axis=1))
    L = Y[feasible, :k]
    return feasible, L, np.flatnonzero(non_dominated(L))


def _scaled_rows(V: np.ndarray, near: np.ndarray) -> np.ndarray:
    """The rows ``near`` of the losses ``V``, each objective scaled to its range in ``V``."""
    return range_scaled(V)[near]


def midpoint_step(ctx: Context, k: int) -> Point | None:
    """The midpoint, in the unit cube, of the two front points farthest apart among
    neighbours on the front, or ``None``.

    The front is that of the feasible observations' ``k`` losses, each scaled to its observed
    range; neighbours are, with two objectives, front points adjacent in the first objective,
    with more, each front point and its nearest other.  Where the front's points share the
    values that put them on the front (a front's distance variables) and differ in where
    they lie along it, their midpoint shares those values and lies between them: the
    largest gap of the front is filled, as an evolutionary algorithm's recombination of
    neighbours does, where a forest's acquisition sees little to gain.  ``None``: with a
    candidate set or a trial pending, in a conditional space (two points of different
    branches have no midpoint), with fewer than two front points, or where the midpoint was
    already asked."""
    study = ctx.study
    if ctx.candidates is not None or study.pending or ctx.space.constrained:
        return None
    feasible, L, front = _feasible_front(study.obs.Y, k)
    if front.size < 2:
        return None
    Z = range_scaled(L[front])
    if k == 2:
        order = np.argsort(Z[:, 0], kind="stable")
        gaps = np.linalg.norm(np.diff(Z[order], axis=0), axis=1)
        i = int(np.argmax(gaps))
        a, b = order[i], order[i + 1]
    else:
        distance, nearest_other = nearest_others(Z)
        a = int(np.argmax(distance))
        b = int(nearest_other[a])
    X = study.obs.X[feasible[front]]
    u = snap((X[a] + X[b]) / 2.0, ctx.space.levels)
    return (u, None) if ctx.is_new(u) else None


def mutation_step(ctx: Context, k: int) -> Point | None:
    """A front point with one coordinate drawn afresh, or ``None``.

    The front point is drawn from the proposal's stream ``"mutation step"`` by
    :func:`draw_centre` (by its gap), the coordinate uniformly, and its new value uniformly
    in the unit interval (snapped to a discrete coordinate's levels).  The front's points
    share the values that put them on the front (a front's distance variables); a point
    that keeps all but one of them and moves along the front lands on it, as an evolutionary
    algorithm's mutation of one gene does.  Where the front is a single point at the end of
    the true front (every other trade-off dominated by it), neither the models' steps nor the
    acquisition see a gain anywhere, and no midpoint exists; one coordinate moved is how the
    front's other points are reached.  ``None``: with a candidate set or a trial pending, in a
    conditional space (a coordinate may be inactive), before a feasible observation, or
    where the point was already asked."""
    study = ctx.study
    if ctx.candidates is not None or study.pending or ctx.space.constrained:
        return None
    feasible, L, front = _feasible_front(study.obs.Y, k)
    if front.size == 0:
        return None
    rng = ctx.stream("mutation step")
    centre = int(feasible[front[draw_centre(rng, L[front], "gaps")]])
    u = study.obs.X[centre].copy()
    u[int(rng.integers(u.size))] = rng.random()
    u = snap(u, ctx.space.levels)
    return (u, None) if ctx.is_new(u) else None


@dataclass(frozen=True)
class CentredFit:
    """Local models of several targets fitted around one observation
    (:func:`centred_quadratics`): ``x`` the centre (unit cube), ``cont`` the coordinates they
    move, ``radius`` the scale of the coordinates ``Z = (u[cont] - x[cont]) / radius``,
    ``design`` the models' design matrix of ``Z``, ``coef`` one column of coefficients per
    target, ``lo``, ``hi`` the trust box in ``Z`` (within the unit cube)."""

    x: np.ndarray
    cont: np.ndarray
    radius: float
    design: Callable[[np.ndarray], np.ndarray]
    coef: np.ndarray
    lo: np.ndarray
    hi: np.ndarray

    def predict(self, Z: np.ndarray) -> np.ndarray:
        """Each model's value at the scaled coordinates ``Z`` (one column per target)."""
        return self.design(Z) @ self.coef


#: the local models :func:`centred_quadratics` fits: a quadratic (all cross terms up to
#: :data:`~.local_models.FULL_QUADRATIC_MAX_DIMS` continuous coordinates, else squares only),
#: a quadratic without cross terms, or a plane
FORMS = ("quadratic", "squares", "plane")
#: the simpler of them, which :func:`dominating_step` can fall back to
FALLBACKS = FORMS[1:]


def centred_quadratics(space, X: np.ndarray, V: np.ndarray, centre: int, targets,
                       form: str = "quadratic") -> CentredFit | None:
    """Quadratics of the targets ``targets(V', near)`` (a matrix, one column per target, of
    the rows ``near`` of ``V'``) fitted by least squares around observation ``centre`` of
    ``X`` (unit cube; ``V`` its values, one row per observation), or ``None``.

    The models are of the continuous coordinates, among the observations that share the
    centre's values of the others (its integers and categories) and, in a conditional space,
    its branch (``V'`` are their rows of ``V``): of ``form`` (one of :data:`FORMS`: a
    quadratic, with all cross terms up to :data:`~.local_models.FULL_QUADRATIC_MAX_DIMS`
    continuous coordinates, else squares only; a quadratic without cross terms; a plane), of
    ``p`` coefficients fitted to the ``2 p`` of them nearest the centre, with the box they span
    around it (and within the unit cube) as the trust box.  ``None``: no continuous
    coordinate, fewer than ``4 p`` such observations, all of them at the centre, or a
    degenerate fit."""
    levels = space.levels
    if space.constrained:  # (same_branch keeps the centre's branch; the rows' indices)
        order = np.where(np.arange(len(X)) == centre, -1.0, np.arange(len(X), dtype=float))
        X, kept, levels = same_branch(space, X, order)
        rows = np.where(kept < 0, centre, kept).astype(np.int64)
        V, centre = V[rows], int(np.flatnonzero(kept < 0)[0])
    levels = np.asarray(levels)
    fixed = levels != 0
    same = np.all(X[:, fixed] == X[centre, fixed], axis=1)
    X, V, centre = X[same], V[same], int(same[:centre].sum())
    cont = np.flatnonzero(~fixed)
    c = cont.size
    if form not in FORMS:
        raise ValueError(f"form must be one of {list(FORMS)}, got {form!r}.")
    if form == "plane":
        design, p = plane_features, 1 + c
    else:
        full, p = quadratic_size(c) if form == "quadratic" else (False, 1 + 2 * c)
        design = partial(quadratic_features, full=full)
    if c == 0 or len(X) < 4 * p:
        return None
    near, radius = nearest(X, X[centre], cont, 2 * p)
    if not radius > 0:
        return None
    T = targets(V, near)
    Z = (X[near][:, cont] - X[centre, cont]) / radius
    coef = ridge_solve(design(Z), T, p)
    if coef is None:
        return None
    lo, hi = trust_box(X[centre, cont], radius)
    return CentredFit(X[centre], cont, radius, design, coef, lo, hi)


def improving_point(rng: np.random.Generator, fit: CentredFit, score) -> np.ndarray | None:
    """The point of ``fit``'s trust box (unit cube) where ``score`` (of scaled coordinates,
    one value per row; the centre scores 0) is least, or ``None`` where no point found scores
    below 0: 1,024 random points of the box, then four times 1,024 in a box of half the
    width around the best so far."""
    c = fit.cont.size
    best_z, best = np.zeros(c), 0.0
    width = fit.hi - fit.lo
    for _ in range(1 + _N_SHRINK):
        lo_z = np.maximum(fit.lo, best_z - width / 2)
        hi_z = np.minimum(fit.hi, best_z + width / 2)
        Z = lo_z + (hi_z - lo_z) * rng.random((_N_DRAWS, c))
        values = score(Z)
        i = int(np.argmin(values))
        if values[i] < best:
            best_z, best = Z[i], float(values[i])
        width = width / 2
    if not best < 0:
        return None
    u = fit.x.copy()
    u[fit.cont] = np.clip(fit.x[fit.cont] + fit.radius * best_z, 0.0, 1.0)
    return u
