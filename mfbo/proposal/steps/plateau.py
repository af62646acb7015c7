"""Plateaus: a random proposal after a run of losses that repeat ones already seen, and the
boxes that observations of one loss bracket, where no proposal need go."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..._core.arguments import check_int, check_nonnegative
from .base import Context, Point, Step

__all__ = ["PlateauEscape", "plateau_boxes", "in_plateaus"]


@dataclass(frozen=True)
class PlateauEscape(Step):
    """After every ``every`` consecutive evaluations since the initial design whose loss
    repeats, exactly, a loss already observed, the next proposal is uniformly random.

    On a plateau (a cross-validated accuracy, a tree depth that no longer matters) the
    forest's mean is flat and the acquisition can keep proposing points of the same plateau;
    exact repeats do not happen on a continuous loss, so there this changes nothing.  A failed
    trial counts as a repeat when the study records it as the worst loss so far
    (``on_failure="worst"``): a run of failures is a stall too.

    ``exclude=True``: besides, in a study of one objective, no step proposes a point inside a
    plateau already bracketed (:func:`plateau_boxes`: a box that observations of one loss
    span and no observation of another loss lies in): the acquisition scores it ``-inf`` and
    a step's point there is not new, so the evaluations that a plateau would repeat go
    elsewhere.

    ``slices=True`` (with ``exclude``): in a space without a continuous coordinate, where
    boxes cannot be spanned, two observations of one loss that agree in some coordinates and
    differ in the others make a plateau of the whole slice they share (every point with their
    common values, whatever its others; :func:`~mfbo.proposal.steps.slices.plateau_slices`),
    unless an observation of another loss lies in it.  Nearest neighbours' ``leaf_size`` and
    ``algorithm`` change no loss: after two equal losses at one ``n_neighbors``, ``weights``
    and ``p`` no proposal goes there again.  Spaces with a continuous coordinate are the same
    either way.

    ``reach`` (with ``slices``; ``None``: free): an integer coordinate where the two
    observations differ is not free but the range between their values widened by ``reach``
    times their distance on either side (categorical ones stay free): two equal losses at tree
    depths 19 and 20 say little of depth 14, two at leaf sizes 48 and 72 much of 30 and 90.
    """

    origin: ClassVar[str] = "plateau"

    every: int = 3
    exclude: bool = False
    slices: bool = False
    reach: float | None = None

    def __post_init__(self):
        check_int(self.every, "PlateauEscape(every=...)")
        for name in ("exclude", "slices"):
            if not isinstance(getattr(self, name), bool):
                raise TypeError(f"PlateauEscape({name}=...) must be True or False, got "
                                f"{getattr(self, name)!r}.")
        check_nonnegative(self.reach, "PlateauEscape(reach=...)", or_none=True)

    def propose(self, ctx: Context) -> Point | None:
        return ctx.random_point() if self.due(ctx.study, ctx.proposer.n_initial) else None

    def due(self, study, n_initial: int) -> bool:
        """Whether the observations since the initial design end in a run of ``k * every``
        (k >= 1) repeated losses, and no proposal has been made from these observations yet
        (in a batch, or with several workers asking before the next tell, one escape, not
        all)."""
        m = self.every
        y = study.obs.y
        # the cheap tests first: the latest loss must itself be a repeat
        if y.shape[0] - n_initial < m or study.n_asked_since_observed or \
                not np.any(y[:-1] == y[-1]):
            return False
        _, first, inverse = np.unique(y, return_index=True, return_inverse=True)
        repeat = (np.arange(y.shape[0]) > first[inverse.ravel()])[n_initial:]
        r = repeat.size if repeat.all() else int(np.argmin(repeat[::-1]))
        return r >= m and r % m == 0


def plateau_boxes(X: np.ndarray, y: np.ndarray, levels) -> list:
    """The plateaus that the observations ``X`` (unit cube) with losses ``y`` bracket: for
    each loss that two or more observations with the same discrete coordinates (``levels``
    not 0) returned, ``(discrete values, low, high)``, the bounding box of their continuous
    coordinates, unless an observation of another loss with those discrete coordinates lies
    in it (equal losses either side of a better one bracket a peak, not a plateau).  None in
    a space without a continuous coordinate (there an exact repeat is refused anyway)."""
    levels = np.asarray(levels)
    discrete, continuous = levels != 0, levels == 0
    if not continuous.any() or len(y) < 2:
        return []
    # one integer per distinct combination of discrete coordinates
    _, kind = np.unique(np.round(X[:, discrete], 9), axis=0, return_inverse=True)
    kind = kind.ravel()
    groups: dict = {}
    for i, (k, loss) in enumerate(zip(kind, y)):
        groups.setdefault((k, float(loss)), []).append(i)
    C, boxes = X[:, continuous], []
    for (k, loss), rows in groups.items():
        if len(rows) < 2:
            continue
        low, high = C[rows].min(axis=0), C[rows].max(axis=0)
        other = (kind == k) & (y != loss)
        if not np.any(other & np.all((C >= low) & (C <= high), axis=1)):
            boxes.append((X[rows[0], discrete], low, high))
    return boxes


def in_plateaus(U: np.ndarray, boxes: list, levels) -> np.ndarray:
    """Whether each row of ``U`` lies in one of ``boxes`` (:func:`plateau_boxes`): its
    discrete coordinates those of the box (to 1e-6), its continuous ones within the box's
    bounds."""
    U = np.atleast_2d(U)
    levels = np.asarray(levels)
    D, C = U[:, levels != 0], U[:, levels == 0]
    out = np.zeros(U.shape[0], dtype=bool)
    for values, low, high in boxes:
        out |= (np.all(np.abs(D - values) < 1e-6, axis=1) & np.all(C >= low, axis=1)
                & np.all(C <= high, axis=1))
    return out
