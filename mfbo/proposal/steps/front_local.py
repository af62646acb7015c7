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
"""

from __future__ import annotations

import numpy as np

from acquisitions import snap
from acquisitions.pareto import chebyshev

from .base import Context, Point
from .local import same_branch
from .local_models import isotropic_step, linear_step, ordinal_as_continuous, quadratic_step

__all__ = ["scalarised_losses", "front_local_step"]


def scalarised_losses(L: np.ndarray, weights) -> np.ndarray:
    """The augmented Chebyshev scalarisation with ``weights`` of losses ``L`` (n × k), each
    objective normalised by its range in ``L`` (a range of zero by 1)."""
    L = np.asarray(L, dtype=float)
    lo, span = L.min(axis=0), np.ptp(L, axis=0)
    return chebyshev((L - lo) / np.where(span > 0, span, 1.0), weights)


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
