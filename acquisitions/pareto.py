"""Several losses at once: Pareto dominance, the hypervolume of a front, the hypervolume a
new point would add, Chebyshev scalarisation, and the probability that constraints are met.

Every loss is minimised: a point ``a`` dominates ``b`` when ``a <= b`` in every loss and
``a < b`` in one.  The hypervolume of a set of points is the volume of the region they
dominate inside the box bounded above by a reference point.
"""

from __future__ import annotations

import bisect

import numpy as np

__all__ = ["non_dominated", "hypervolume", "hypervolume_improvement", "HypervolumeImprovement",
           "chebyshev", "log_probability_feasible"]


def non_dominated(Y: np.ndarray) -> np.ndarray:
    """A boolean mask of the rows of ``Y`` (n points × k losses) that no other row
    dominates (of equal rows, each is kept)."""
    Y = np.asarray(Y, dtype=float)
    n = Y.shape[0]
    keep = np.ones(n, dtype=bool)
    for i in range(n):
        if not keep[i]:
            continue
        dominated_by_i = np.all(Y[i] <= Y, axis=1) & np.any(Y[i] < Y, axis=1)
        keep &= ~dominated_by_i
    return keep


def _hv2(P: np.ndarray, ref: np.ndarray) -> float:
    """Exact 2-loss hypervolume of points already inside the reference box."""
    P = P[np.argsort(P[:, 0], kind="stable")]
    area, level = 0.0, ref[1]
    for x, y in P:
        if y < level:
            area += (ref[0] - x) * (level - y)
            level = y
    return float(area)


def hypervolume(Y: np.ndarray, ref) -> float:
    """The exact hypervolume dominated by the rows of ``Y`` (n × k losses) inside the box
    below ``ref`` (k values); points not strictly below ``ref`` in every loss add nothing.
    Two losses: a sweep, O(n log n); more: slicing along the last loss (exact, for the
    fronts of hundreds of points of a study)."""
    Y = np.asarray(Y, dtype=float).reshape(-1, np.size(ref))
    ref = np.asarray(ref, dtype=float)
    P = Y[np.all(Y < ref, axis=1)]
    if P.shape[0] == 0:
        return 0.0
    P = P[non_dominated(P)]
    k = P.shape[1]
    if k == 1:
        return float(ref[0] - P[:, 0].min())
    if k == 2:
        return _hv2(P, ref)
    # slices between consecutive values of the last loss: the points below a slice's
    # lower end dominate the whole slice with their first k - 1 losses
    order = np.argsort(P[:, -1], kind="stable")
    P = P[order]
    levels = np.append(P[:, -1], ref[-1])
    volume = 0.0
    for i in range(P.shape[0]):
        depth = levels[i + 1] - levels[i]
        if depth > 0:
            volume += depth * hypervolume(P[:i + 1, :-1], ref[:-1])
    return float(volume)


def hypervolume_improvement(front: np.ndarray, ref, P: np.ndarray) -> np.ndarray:
    """The hypervolume each row of ``P`` (n × k losses) would add to ``front`` (the
    losses of the points so far) below ``ref``.  Two and three losses: exact and vectorised
    over ``P`` (O(n × front)); more: exact, one point at a time."""
    return HypervolumeImprovement(front, ref)(P)


class HypervolumeImprovement:
    """:func:`hypervolume_improvement` over one ``front`` and ``ref`` as a function of the
    new points ``P``: the front is sorted and reduced to its non-dominated points once."""

    def __init__(self, front: np.ndarray, ref):
        ref = np.asarray(ref, dtype=float)
        F = np.asarray(front, dtype=float).reshape(-1, ref.size)
        F = F[np.all(F < ref, axis=1)]
        if F.shape[0]:
            F = F[non_dominated(F)]
        self.ref, self.front = ref, F
        if ref.size == 3:
            self.boxes = _open_boxes_3d(F, ref)
            return
        if ref.size != 2:
            self.base = hypervolume(F, ref)
            return
        # the region below ref not dominated by the front is bounded above by a staircase:
        # g(x) = min(ref_1, min{f_1 : f_0 <= x}); the point p adds the integral over x in
        # [p_0, ref_0] of max(0, g(x) - p_1)
        F = F[np.argsort(F[:, 0], kind="stable")]
        self.xs = np.append(F[:, 0], ref[0])  # breakpoints of the staircase
        # g on [xs[j-1], xs[j])
        self.heights = np.minimum.accumulate(np.append(ref[1], F[:, 1]))
        # segment j covers [lo[j], xs[j]) with height heights[j]
        self.lo = np.append(-np.inf, self.xs[:-1])

    def __call__(self, P: np.ndarray) -> np.ndarray:
        P = np.atleast_2d(np.asarray(P, dtype=float))
        if self.ref.size == 3:
            return _boxes_improvement(self.boxes, P)
        if self.ref.size != 2:
            return np.array([hypervolume(np.vstack([self.front, p]), self.ref) - self.base
                             for p in P])
        left = np.maximum(self.lo[None, :], P[:, :1])
        width = np.clip(self.xs[None, :] - left, 0.0, None)
        height = np.clip(self.heights[None, :] - P[:, 1:2], 0.0, None)
        return (width * height).sum(axis=1)


def _open_boxes_3d(F: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """Disjoint boxes whose union is the region below ``ref`` (3 losses) that no row of ``F``
    (points strictly inside ``ref``) dominates: rows ``(x_lo, x_hi, y_hi, z_lo, z_hi)``,
    each box ``[x_lo, x_hi) x (-inf, y_hi) x [z_lo, z_hi)`` (lower ends may be ``-inf``);
    at most ``2 len(F) + 1`` of them.

    A sweep up the third loss: the points below the current level, seen in their first two
    losses, bound a staircase of strips ``[xs[i], xs[i + 1]) x (-inf, ys[i])``; a new point
    ``(x, y)`` lowers the strips it covers to ``y`` from ``x`` on, which closes their parts
    right of ``x`` (boxes up to this level) and opens one strip at this level."""
    rx, ry, rz = (float(v) for v in ref)
    xs, ys, z0 = [-np.inf], [ry], [-np.inf]  # the open strips, by their left ends
    boxes = []
    order = np.lexsort((F[:, 1], F[:, 0], F[:, 2])) if F.shape[0] else []
    for x, y, z in F[order].tolist() if F.shape[0] else []:
        i = bisect.bisect_right(xs, x) - 1  # the strip holding x: xs[i] <= x
        if ys[i] <= y:  # the staircase already covers the point (in its first two losses)
            continue
        j = i + 1
        while j < len(xs) and ys[j] >= y:  # the strips the point covers entirely
            j += 1
        for s in range(i, j):  # each covered part, from its first level up to this one
            if z > z0[s]:
                boxes.append((max(xs[s], x), xs[s + 1] if s + 1 < len(xs) else rx, ys[s],
                              z0[s], z))
        keep = i + (xs[i] < x)  # strip i goes on left of x (its bounds the same)
        xs[keep:j] = [x]
        ys[keep:j] = [y]
        z0[keep:j] = [z]
    for s in range(len(xs)):
        if rz > z0[s]:
            boxes.append((xs[s], xs[s + 1] if s + 1 < len(xs) else rx, ys[s], z0[s], rz))
    B = np.array(boxes, dtype=float).reshape(-1, 5)
    return B[(B[:, 1] > B[:, 0]) & (B[:, 4] > B[:, 3])]


#: points per block of the box sums (a block's temporaries hold this many floats per box)
_BOX_BLOCK = 4096


def _boxes_improvement(B: np.ndarray, P: np.ndarray) -> np.ndarray:
    """The volume of the part of the boxes ``B`` (:func:`_open_boxes_3d`) that each row of
    ``P`` (n × 3) dominates: ``sum_b |[p, inf) ∩ b|``."""
    out = np.zeros(P.shape[0])
    if B.shape[0] == 0:
        return out
    x_lo, x_hi, y_hi, z_lo, z_hi = (c[None, :] for c in B.T)
    for a in range(0, P.shape[0], _BOX_BLOCK):
        Q = P[a:a + _BOX_BLOCK]
        w = np.maximum(x_lo, Q[:, 0:1])
        np.subtract(x_hi, w, out=w)
        np.maximum(w, 0.0, out=w)
        h = np.subtract(y_hi, Q[:, 1:2])
        np.maximum(h, 0.0, out=h)
        w *= h
        np.maximum(z_lo, Q[:, 2:3], out=h)
        np.subtract(z_hi, h, out=h)
        np.maximum(h, 0.0, out=h)
        w *= h
        out[a:a + _BOX_BLOCK] = w.sum(axis=1)
    return out


def chebyshev(Z: np.ndarray, weights, rho: float = 0.05) -> np.ndarray:
    """ParEGO's augmented Chebyshev scalarisation of normalised losses ``Z`` (n × k):
    ``max_j w_j z_j + rho * sum_j w_j z_j`` (smaller is better); every Pareto-optimal point
    minimises it for some weights."""
    Z = np.asarray(Z, dtype=float)
    w = np.asarray(weights, dtype=float)
    WZ = Z * w
    return WZ.max(axis=1) + rho * WZ.sum(axis=1)


def log_probability_feasible(mean: np.ndarray, std: np.ndarray,
                             threshold=0.0) -> np.ndarray:
    """``log P(c <= threshold)`` per point under independent normal predictions of the
    constraints (``mean``, ``std``: n × m), summed over the constraints; a zero std gives
    0 (met) or ``-inf`` (violated)."""
    from scipy.special import log_ndtr

    mean = np.asarray(mean, dtype=float)
    std = np.asarray(std, dtype=float)
    gap = np.asarray(threshold, dtype=float) - mean
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(std > 0, gap / np.where(std > 0, std, 1.0),
                     np.where(gap >= 0, np.inf, -np.inf))
    return log_ndtr(z).reshape(mean.shape[0], -1).sum(axis=1)
