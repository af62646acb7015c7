"""A local step for one objective with constraints: the least loss that local quadratics of the
loss and of each constraint predict feasible, around the best feasible trial.

A forest's probability of feasibility is a mean over blocks, so it is blurred across a
constraint's boundary, and its mean loss is flat inside a block: where the optimum lies on a
boundary (a constraint active there, as it is in most engineering designs and in many tuning
problems with a budget), the acquisition approaches it in ever smaller steps and stops short.
A quadratic fitted to a constraint's *values* around the incumbent places the boundary
between the observations on either side of it, and a quadratic of the loss says which way
the loss falls along it; the minimiser of the one subject to the others is a trust-region
step of sequential quadratic programming, from the observations alone.
"""

from __future__ import annotations

import numpy as np

from acquisitions import snap

from .base import Context, Point
from .front_local import centred_quadratics, improving_point
from .local_models import score_transform

__all__ = ["constrained_local_step"]


def _targets(V: np.ndarray, near: np.ndarray) -> np.ndarray:
    """The local models' targets of the rows ``near`` of ``V`` (the loss, then the
    constraints' values): the loss transformed as the local steps transform it, each
    constraint divided by its largest absolute value there (the sign, which says whether it
    is met, kept)."""
    rows = V[near]
    scale = np.abs(rows[:, 1:]).max(axis=0)
    return np.column_stack([score_transform(rows[:, 0]),
                            rows[:, 1:] / np.where(scale > 0, scale, 1.0)])


def constrained_local_step(ctx: Context, plane: bool = False) -> Point | None:
    """The point where a local quadratic of the loss is least among those where local
    quadratics of every constraint are at most 0, around the best feasible trial (this
    module's description), or ``None``.

    The quadratics (:func:`~.front_local.centred_quadratics`) are fitted to the complete
    trials only (a failed trial has no outcomes of its own) and searched as the dominating
    step searches (:func:`~.front_local.improving_point`, random points from the proposal's
    stream ``"constrained local"``): the step must be predicted feasible and below the
    centre's predicted loss.  ``plane``: where there are too few trials for quadratics
    (``4 p`` of ``p`` coefficients), planes, which need ``4 (1 + c)`` for ``c`` continuous
    coordinates: a step of sequential linear programming.
    ``None``: with a candidate set or a trial pending, before a feasible trial, where the
    models cannot be fitted, where no point of the trust box is predicted feasible and
    better, or where the step was already asked."""
    study = ctx.study
    if ctx.candidates is not None or study.pending:
        return None
    o = study.objectives
    rows = study.complete_rows
    Y = study.obs.Y[rows][:, :1 + o.m]
    X = study.obs.X[rows]
    feasible = np.all(Y[:, 1:] <= 0, axis=1)
    if not feasible.any():
        return None
    best = np.flatnonzero(feasible)[int(np.argmin(Y[feasible, 0]))]
    fit = centred_quadratics(ctx.space, X, Y, int(best), _targets)
    if fit is None and plane:
        fit = centred_quadratics(ctx.space, X, Y, int(best), _targets, "plane")
    if fit is None:
        return None
    at_centre = float(fit.predict(np.zeros((1, fit.cont.size)))[0, 0])

    def score(Z):
        Q = fit.predict(Z)
        met = np.all(Q[:, 1:] <= 0, axis=1)
        return np.where(met, Q[:, 0] - at_centre, np.inf)

    u = improving_point(ctx.stream("constrained local"), fit, score)
    if u is None:
        return None
    u = snap(u, ctx.space.levels)
    return (u, None) if ctx.is_new(u) else None
