"""Local steps: the minimiser of a model fitted to the observations nearest the incumbent."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from acquisitions import snap

from ..._core.arguments import check_int
from .base import Context, Point, Step
from .categories import branch_codes
from .local_models import isotropic_step, linear_step, ordinal_as_continuous, quadratic_step

__all__ = ["LocalStep", "same_cell"]


@dataclass(frozen=True)
class LocalStep(Step):
    """Every ``every`` model-based proposals, the minimiser of a quadratic fitted to the
    observations nearest the best one (:func:`~.local_models.quadratic_step`), when there are
    enough of them and no trial is pending (sequential proposals in a continuous or mixed
    space only).  A minimiser already asked passes, marking the proposal converged (see
    :class:`~.parzen.ParzenStep`).

    Parameters
    ----------
    every : int, default=3
    linear : bool, default=False
        Where the quadratic gives none (too few observations, a degenerate fit), the step of a
        plane fitted the same way (:func:`~.local_models.linear_step`: to the corner of the
        trust box its slope descends to), once there are enough for that.
    integers : bool, default=False
        Let the quadratic move the integer coordinates of at least five levels too (snapped
        back to the levels) where there are enough observations for that larger quadratic.
    isotropic : {False, True, "if-integers", "if-curved"}, default=False
        Where the quadratic gives none, first an isotropic quadratic (one curvature for all
        coordinates; :func:`~.local_models.isotropic_step`) over the continuous coordinates and
        the integers of at least five levels.  ``"if-integers"``: only in a space with such an
        integer; ``"if-curved"``: there, and only where the fitted curvature is positive and
        it predicts its observations better than a plane (leave-one-out).
    cell : bool, default=False
        Fit the local models only to the observations with the best one's categorical
        (unordered) values, which the step keeps: a model of the loss over the other
        coordinates within that categorical cell, not one mixing other cells' losses.  The
        step passes where the cell has too few observations for any model.  The same
        proposals in a space without a categorical parameter.
    patience : int, default=0
        Pass once this many of the step's own proposals told since the best observation
        (none of which improved on it) have failed: a local model whose steps keep failing
        there is not a model of the loss, and the slot goes to the steps after it until a
        new best is found.  0: never.
    """

    origin: ClassVar[str] = "local"

    every: int = 3
    linear: bool = False
    integers: bool = False
    isotropic: bool | str = False
    cell: bool = False
    patience: int = 0

    def __post_init__(self):
        check_int(self.every, "LocalStep(every=...)")
        check_int(self.patience, "LocalStep(patience=...)", minimum=0)
        for name in ("linear", "integers", "cell"):
            if not isinstance(getattr(self, name), bool):
                raise TypeError(f"LocalStep({name}=...) must be a bool, got "
                                f"{getattr(self, name)!r}.")
        if not (isinstance(self.isotropic, bool)
                or self.isotropic in ("if-integers", "if-curved")):
            raise TypeError(f"LocalStep(isotropic=...) must be True, False, 'if-integers' or "
                            f"'if-curved', got {self.isotropic!r}.")

    def propose(self, ctx: Context) -> Point | None:
        study = ctx.study
        if ctx.candidates is not None or study.pending or not ctx.due(self.every):
            return None
        if self.patience and self.failures(study) >= self.patience:
            return None
        u = None
        levels = ctx.space.levels
        X, y = study.obs.X, study.obs.y
        if ctx.space.constrained:
            X, y, levels = same_branch(ctx.space, X, y)
        if self.cell:
            X, y = same_cell(X, y, levels)
        wider = ordinal_as_continuous(levels)  # integers of five levels or more freed
        has_ordinal = not np.array_equal(wider, levels)
        if self.integers and has_ordinal:
            u = quadratic_step(X, y, wider, ctx.rng)
        if u is None:
            u = quadratic_step(X, y, levels, ctx.rng)
        iso = self.isotropic
        if u is None and (iso is True or (iso and has_ordinal)):
            u = isotropic_step(X, y, wider, if_curved=iso == "if-curved")
        if u is None and self.linear:
            u = linear_step(X, y, levels)
        if u is None:
            return None
        u = snap(u, ctx.space.levels)
        if ctx.is_new(u):
            return u, None
        ctx.converged = True
        return None

    def failures(self, study) -> int:
        """How many of this step's proposals were told after the best observation."""
        y = study.obs.y
        if y.size == 0:
            return 0
        return sum(o == self.origin for o in study.obs_origins[int(np.argmin(y)) + 1:])


def same_cell(X: np.ndarray, y: np.ndarray, levels) -> tuple[np.ndarray, np.ndarray]:
    """``(X, y)`` of the observations whose categorical (unordered) coordinates equal the
    best observation's (all of them in a space without a categorical coordinate)."""
    levels = np.asarray(levels)
    cat = np.flatnonzero(levels < 0)
    if cat.size == 0 or y.size == 0:
        return X, y
    codes = branch_codes(X, levels, cat)
    same = (codes == codes[int(np.argmin(y))]).all(axis=1)
    return X[same], y[same]


def same_branch(space, X: np.ndarray, y: np.ndarray):
    """``(X, y, levels)`` of a local model in a conditional space: the observations whose
    active dimensions are those of the best one, and the space's levels with its inactive
    dimensions held fixed (one level), so that the model moves only what is active there."""
    active = space.active(X)
    best = int(np.argmin(y))
    same = (active == active[best]).all(axis=1)
    levels = np.where(active[best], space.levels, 1)
    return X[same], y[same], levels
