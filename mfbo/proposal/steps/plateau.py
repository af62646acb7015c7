"""Plateaus: a random proposal after a run of losses that repeat ones already seen, and the
boxes that observations of one loss bracket, where no proposal need go."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..._core.arguments import check_int, check_nonnegative
from .base import Context, Point, Step
from .categories import branch_codes

__all__ = ["PlateauEscape", "plateau_boxes", "in_plateaus", "plateau_slices", "in_slices",
           "slice_index"]


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
    differ in the others make a plateau of the whole slice they share (:func:`plateau_slices`:
    every point with their common values, whatever its others), unless an observation of
    another loss lies in it.  Nearest neighbours' ``leaf_size`` and ``algorithm`` change no
    loss: after two equal losses at one ``n_neighbors``, ``weights`` and ``p`` no proposal
    goes there again.  Spaces with a continuous coordinate are the same either way.

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


def plateau_slices(X: np.ndarray, y: np.ndarray, levels, reach: float | None = None,
                   earlier: tuple | None = None) -> list:
    """In a space without a continuous coordinate, the slices that pairs of observations
    ``X`` (unit cube) of one loss ``y`` make plateaus: for each such pair, ``(low, high,
    loss)``, per coordinate the range of level indices (:func:`~mfbo.proposal.steps.
    categories.branch_codes`', -1 for an inactive one) the slice allows, and the pair's loss:
    the pair's common level where the two agree, any level where they differ, unless an
    observation of another loss lies in the slice.  With a ``reach`` (>= 0), an ordered
    coordinate (an integer's or an ordinal's, both active) where the two differ allows only
    the levels between theirs widened by ``reach`` times their distance on either side, so two
    equal losses at tree depths 19 and 20 leave depth 14 open.  None in a space with a
    continuous coordinate (its boxes are :func:`plateau_boxes`').

    ``earlier=(m, slices)``: the slices of the first ``m`` observations (this function's, with
    the same ``reach``), so that only the pairs with a later observation are made and only the
    later observations are checked against the earlier slices: the same slices (in another
    order) at a cost that grows with the new observations, not with all pairs."""
    levels = np.asarray(levels)
    if np.any(levels == 0) or len(y) < 2:
        return []
    L = branch_codes(X, levels, np.arange(levels.size))  # (every coordinate is discrete)
    y = np.asarray(y, dtype=float)
    m, slices = earlier if earlier is not None else (0, [])
    if m and slices:  # the earlier slices that no later observation of another loss lies in
        low, high = (np.array([s[i] for s in slices], dtype=float) for i in (0, 1))
        losses = np.array([s[2] for s in slices])
        unmade = np.zeros(len(slices), dtype=bool)
        for row, loss in zip(L[m:], y[m:]):
            unmade |= (losses != loss) & np.all((low <= row) & (row <= high), axis=1)
        slices = [s for s, gone in zip(slices, unmade) if not gone]
    seen = {(lw.tobytes(), hg.tobytes()) for lw, hg, _ in slices}
    ordered = levels > 0
    for loss in np.unique(y[m:]):
        rows = np.flatnonzero(y == loss)
        if rows.size < 2:
            continue
        a, b = np.triu_indices(rows.size, 1)  # every pair of them with a later observation
        new = rows[b] >= m
        low, high = _pair_ranges(L[rows[a[new]]], L[rows[b[new]]], ordered, reach,
                                 float(np.abs(levels).max()))
        fresh = []  # each slice once, in the order of its first pair
        for i in range(low.shape[0]):
            key = (low[i].tobytes(), high[i].tobytes())
            if key not in seen:
                seen.add(key)
                fresh.append(i)
        low, high = low[fresh], high[fresh]
        others = L[y != loss]
        # the slices no observation of another loss lies in, a block of slices at a time
        step = max(1, 4_000_000 // max(1, others.size))
        for i in range(0, low.shape[0], step):
            lw, hg = low[i:i + step], high[i:i + step]
            held = np.all((others[None] >= lw[:, None]) & (others[None] <= hg[:, None]),
                          axis=2).any(axis=1)
            slices.extend((u, v, float(loss)) for u, v in zip(lw[~held], hg[~held]))
    return slices


def _pair_ranges(la, lb, ordered, reach, top):
    """The ranges of level indices (``low``, ``high``, one row per pair) of the slices the
    pairs of level rows ``la``, ``lb`` share (:func:`plateau_slices`)."""
    agreed = la == lb
    low = np.where(agreed, la, -1.0)
    high = np.where(agreed, la, top)
    if reach is not None:
        between = ordered & ~agreed & (la >= 0) & (lb >= 0)
        lo, hi = np.minimum(la, lb), np.maximum(la, lb)
        wide = np.floor(reach * (hi - lo) + 1e-9)
        low = np.where(between, np.maximum(lo - wide, 0), low)
        high = np.where(between, hi + wide, high)
    return low, high


def in_slices(U: np.ndarray, slices: list, levels, index: tuple | None = None) -> np.ndarray:
    """Whether each unit row of ``U`` lies in one of ``slices`` (:func:`plateau_slices`): its
    level in every coordinate within the slice's range.  ``index``: :func:`slice_index` of
    these slices and levels, made once for many calls."""
    U = np.atleast_2d(U)
    out = np.zeros(U.shape[0], dtype=bool)
    if not slices:
        return out
    levels = np.asarray(levels)
    low, high, tables = index if index is not None else slice_index(slices, levels)
    L = branch_codes(U, levels, np.arange(levels.size)).astype(np.int64)
    words = -(-len(slices) // 64)
    # the slices a few words at a time, the largest first, each time for the rows not yet
    # found in one: most rows of a space the slices cover are found in the first words
    for w in range(0, words, _WORDS):
        rows = np.flatnonzero(~out)
        if rows.size == 0:
            break
        Lr = L[rows]
        held = None  # per row, a bit per slice of these words: those holding it so far
        for j, table in enumerate(tables):
            if table is not None:
                bits = table[Lr[:, j] + 1, w:w + _WORDS]
            else:  # a coordinate of too many levels for a table: compared
                lw, hg = low[64 * w:64 * (w + _WORDS), j], high[64 * w:64 * (w + _WORDS), j]
                bits = _packed((Lr[:, j, None] >= lw) & (Lr[:, j, None] <= hg))
            held = bits if held is None else held & bits
        out[rows] = held.any(axis=1)
    return out


#: a coordinate of at most this many levels gets a table of the slices each level is in
_TABLE_LEVELS = 1024
#: words of 64 slices :func:`in_slices` tests at a time
_WORDS = 4


def slice_index(slices: list, levels) -> tuple:
    """``(low, high, tables)``: the slices' ranges stacked (one row per slice, the largest
    slices first), and per coordinate of at most 1,024 levels a table with, for each level
    (-1, inactive, first), a bit per slice (in that order) whose range holds it (None for a
    coordinate of more levels), so that :func:`in_slices` tests a point against every slice
    with one look-up per coordinate."""
    levels = np.asarray(levels)
    low = np.array([lw for lw, _, _ in slices], dtype=float).reshape(len(slices), levels.size)
    high = np.array([hg for _, hg, _ in slices], dtype=float).reshape(len(slices), levels.size)
    k = np.abs(levels).astype(float)
    size = np.log(np.maximum(np.minimum(high, k - 1) - np.maximum(low, 0) + 1, 1)).sum(axis=1)
    order = np.argsort(-size, kind="stable")
    low, high = low[order], high[order]
    tables = []
    for j, k in enumerate(np.abs(levels)):
        if k > _TABLE_LEVELS:
            tables.append(None)
            continue
        v = np.arange(-1, int(k))[:, None]
        tables.append(_packed((low[:, j] <= v) & (high[:, j] >= v)))
    return low, high, tables


def _packed(bits: np.ndarray) -> np.ndarray:
    """Boolean rows packed into 64-bit words (zeros after the last)."""
    packed = np.packbits(bits, axis=1)
    pad = -packed.shape[1] % 8
    if pad:
        packed = np.pad(packed, ((0, 0), (0, pad)))
    return np.ascontiguousarray(packed).view(np.uint64)
