"""Slices of tied losses, the plateaus of a space without a continuous coordinate: two
observations of one loss make the slice of the values they share a plateau, unless an
observation of another loss lies in it.  They are made as observations arrive
(:func:`plateau_slices`, :class:`Slices`), and points are tested against all of them at once
through tables of bits per coordinate (:class:`SliceIndex`, :func:`in_slices`)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .categories import branch_codes

__all__ = ["SliceIndex", "Slices", "in_slices", "plateau_slices"]


def plateau_slices(X: np.ndarray, y: np.ndarray, levels, reach: float | None = None,
                   earlier: tuple | None = None) -> Sequence:
    """In a space without a continuous coordinate, the slices that pairs of observations
    ``X`` (unit cube) of one loss ``y`` make plateaus: for each such pair, ``(low, high,
    loss)``, per coordinate the range of level indices (:func:`~mfbo.proposal.steps.
    categories.branch_codes`', -1 for an inactive one) the slice allows, and the pair's loss:
    the pair's common level where the two agree, any level where they differ, unless an
    observation of another loss lies in the slice.  With a ``reach`` (>= 0), an ordered
    coordinate (an integer's or an ordinal's, both active) where the two differ allows only
    the levels between theirs widened by ``reach`` times their distance on either side, so two
    equal losses at tree depths 19 and 20 leave depth 14 open.  None in a space with a
    continuous coordinate (its boxes are :func:`plateau_boxes`'); the slices come as
    :class:`Slices` (an empty list where there are none to make).

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
    slices = Slices.stack(slices, levels.size)
    if m and slices:  # the earlier slices that no later observation of another loss lies in
        unmade = np.zeros(len(slices), dtype=bool)
        for row, loss in zip(L[m:], y[m:]):
            unmade |= (slices.losses != loss) & np.all((slices.low <= row)
                                                       & (row <= slices.high), axis=1)
        slices = slices.without(unmade)
    made = set(slices.made)  # the ranges kept, with those made below
    ordered = levels > 0
    lows, highs, losses = [slices.low], [slices.high], [slices.losses]
    for loss in np.unique(y[m:]):
        rows = np.flatnonzero(y == loss)
        if rows.size < 2:
            continue
        a, b = np.triu_indices(rows.size, 1)  # every pair of them with a later observation
        new = rows[b] >= m
        low, high = _pair_ranges(L[rows[a[new]]], L[rows[b[new]]], ordered, reach,
                                 float(np.abs(levels).max()))
        fresh, keys, seen = [], [], set()  # each slice once, in the order of its first pair
        for i, key in enumerate(_keys(low, high)):
            if key not in made and key not in seen:
                seen.add(key)
                fresh.append(i)
                keys.append(key)
        low, high = low[fresh], high[fresh]
        others = L[y != loss]
        # the slices no observation of another loss lies in, a block of slices at a time
        step = max(1, 4_000_000 // max(1, others.size))
        for i in range(0, low.shape[0], step):
            lw, hg = low[i:i + step], high[i:i + step]
            held = np.all((others[None] >= lw[:, None]) & (others[None] <= hg[:, None]),
                          axis=2).any(axis=1)
            made.update(k for k, h in zip(keys[i:i + step], held) if not h)
            lows.append(lw[~held])
            highs.append(hg[~held])
            losses.append(np.full(int((~held).sum()), float(loss)))
    low, high = np.concatenate(lows), np.concatenate(highs)
    fresh = low.shape[0] - len(slices)
    ids = np.concatenate([slices.ids, slices.issued + np.arange(fresh)])
    return Slices(low, high, np.concatenate(losses), ids, made, slices.lineage,
                  slices.issued + fresh)


class Slices(Sequence):
    """Slices (:func:`plateau_slices`): a sequence of ``(low, high, loss)`` kept stacked,
    ``low`` and ``high`` (one row per slice) and ``losses``.  Each slice has an id, issued in
    the order the slices were made; slices made from more observations of the same ones keep
    the ids and the ``lineage`` of those made before, so that their :class:`SliceIndex` is
    updated rather than made again.  ``made``: the slices' ranges as bytes, so that none is
    made twice."""

    def __init__(self, low: np.ndarray, high: np.ndarray, losses: np.ndarray,
                 ids: np.ndarray | None = None, made: set | None = None, lineage=None,
                 issued: int | None = None):
        self.low, self.high, self.losses = low, high, losses
        self.ids = np.arange(losses.shape[0]) if ids is None else ids
        #: the number of ids issued in the lineage (the next slice's id; none is issued twice)
        self.issued = issued if issued is not None else (
            int(self.ids.max()) + 1 if self.ids.size else 0)
        self.made = made if made is not None else set(_keys(low, high))
        self.lineage = lineage if lineage is not None else object()

    @classmethod
    def stack(cls, slices, size: int) -> "Slices":
        """``slices`` (``(low, high, loss)`` over ``size`` coordinates each), stacked."""
        if isinstance(slices, Slices):
            return slices
        low = np.array([s[0] for s in slices], dtype=float).reshape(len(slices), size)
        high = np.array([s[1] for s in slices], dtype=float).reshape(len(slices), size)
        return cls(low, high, np.array([s[2] for s in slices], dtype=float))

    def __len__(self) -> int:
        return self.losses.shape[0]

    def __getitem__(self, i):
        if isinstance(i, slice):
            return Slices(self.low[i], self.high[i], self.losses[i], self.ids[i])
        return self.low[i], self.high[i], float(self.losses[i])

    def without(self, dropped: np.ndarray) -> "Slices":
        """These slices but those ``dropped`` (a boolean per slice), of the same lineage."""
        dropped = np.asarray(dropped, dtype=bool)
        made = self.made
        if dropped.any():
            made = made - set(_keys(self.low[dropped], self.high[dropped]))
        keep = ~dropped
        return Slices(self.low[keep], self.high[keep], self.losses[keep], self.ids[keep],
                      made, self.lineage, self.issued)


def _keys(low: np.ndarray, high: np.ndarray):
    """Each slice's ranges (rows of ``low`` and ``high``) as bytes: the key by which a slice
    is made once."""
    return ((u.tobytes(), v.tobytes()) for u, v in zip(low, high))


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


def in_slices(U: np.ndarray, slices: Sequence, levels,
              index: SliceIndex | None = None) -> np.ndarray:
    """Whether each unit row of ``U`` lies in one of ``slices`` (:func:`plateau_slices`): its
    level in every coordinate within the slice's range.  ``index``: the
    :class:`SliceIndex` of these slices and levels, made once for many calls."""
    U = np.atleast_2d(U)
    if not len(slices):
        return np.zeros(U.shape[0], dtype=bool)
    levels = np.asarray(levels)
    if index is None:
        index = SliceIndex(Slices.stack(slices, levels.size), levels)
    return index.holds(branch_codes(U, levels, np.arange(levels.size)).astype(np.int64))


#: a coordinate of at most this many levels gets a table of the slices each level is in
_TABLE_LEVELS = 1024
#: words of 64 slices tested at a time, at least, and words times rows at a time, at most
#: (unless that is fewer than the least)
_WORDS, _CELLS = 4, 1 << 16
#: an index of more blocks than this, or with more slices gone than kept, is made afresh
_MAX_BLOCKS = 8


class SliceIndex:
    """Slices (:class:`Slices`) arranged to test many points at once: in blocks of slices,
    the largest first within a block, and per coordinate of at most 1,024 levels a table
    with, for each level (-1, inactive, first), a bit per slice whose range holds it, so that
    a point is tested against a block's slices with one look-up per coordinate.

    :meth:`updated` gives the index of later slices of the same lineage: the slices gone
    are masked out, and the new ones make a new block."""

    def __init__(self, slices: Slices, levels, _blocks: list | None = None):
        self.levels = np.asarray(levels)
        self.lineage = slices.lineage
        self.issued = slices.issued
        self.blocks = _blocks if _blocks is not None else [
            _Block.make(slices.low, slices.high, slices.ids, self.levels)]

    def updated(self, slices: Slices) -> SliceIndex:
        """The index of ``slices``: this one's blocks with the slices no longer in
        ``slices`` masked out and a block of the new ones (made afresh if ``slices`` are of
        another lineage, or if the blocks grow too many or hold more gone than kept)."""
        if slices.lineage is not self.lineage or len(self.blocks) >= _MAX_BLOCKS:
            return SliceIndex(slices, self.levels)
        blocks = [block.keeping(slices.ids) for block in self.blocks]
        kept = sum(block.kept for block in blocks)
        if 2 * kept < sum(block.ids.size for block in blocks):
            return SliceIndex(slices, self.levels)
        new = slices.ids >= self.issued
        if new.any():
            blocks.append(_Block.make(slices.low[new], slices.high[new], slices.ids[new],
                                      self.levels))
        return SliceIndex(slices, self.levels, blocks)

    def holds(self, L: np.ndarray) -> np.ndarray:
        """Whether each row of level indices ``L`` (one column per coordinate) lies in one
        of the slices."""
        out = np.zeros(L.shape[0], dtype=bool)
        for block in self.blocks:
            block.mark(L, out)
        return out


class _Block:
    """Slices of a :class:`SliceIndex`, the largest first: their ids, ranges and tables,
    and a bit per slice still kept."""

    def __init__(self, ids, low, high, tables, alive):
        self.ids, self.low, self.high, self.tables, self.alive = ids, low, high, tables, alive
        self.kept = int(np.unpackbits(alive.view(np.uint8)).sum())

    @classmethod
    def make(cls, low, high, ids, levels) -> _Block:
        k = np.abs(levels).astype(float)
        size = np.log(np.maximum(np.minimum(high, k - 1) - np.maximum(low, 0) + 1, 1)).sum(
            axis=1)
        order = np.argsort(-size, kind="stable")
        low, high = low[order], high[order]
        tables = []
        for j, k in enumerate(np.abs(levels)):
            if k > _TABLE_LEVELS:
                tables.append(None)
                continue
            v = np.arange(-1, int(k))[:, None]
            tables.append(_packed((low[:, j] <= v) & (high[:, j] >= v)))
        return cls(ids[order], low, high, tables, _packed(np.ones((1, low.shape[0]), bool))[0])

    def keeping(self, ids: np.ndarray) -> _Block:
        """This block with only the slices whose ids are among ``ids`` kept."""
        alive = self.alive & _packed(np.isin(self.ids, ids)[None])[0]
        return _Block(self.ids, self.low, self.high, self.tables, alive)

    def mark(self, L: np.ndarray, out: np.ndarray) -> None:
        """Sets ``out`` for the rows of ``L`` in one of these slices: some words of slices at
        a time (at least four, more for fewer rows), the largest first, each time for the
        rows not yet found in one (most rows of a space the slices cover are found in the
        first words)."""
        w = 0
        while w < self.alive.size:
            rows = np.flatnonzero(~out)
            if rows.size == 0:
                return
            k = max(_WORDS, _CELLS // rows.size)  # words this time
            Lr = L[rows]
            held = self.alive[w:w + k]  # per row, the slices holding it so far
            for j, table in enumerate(self.tables):
                if table is not None:
                    bits = table[Lr[:, j] + 1, w:w + k]
                else:  # a coordinate of too many levels for a table: compared
                    part = slice(64 * w, 64 * (w + k))
                    bits = _packed((Lr[:, j, None] >= self.low[part, j])
                                   & (Lr[:, j, None] <= self.high[part, j]))
                held = held & bits
            w += k
            out[rows] = held.any(axis=1)


def _packed(bits: np.ndarray) -> np.ndarray:
    """Boolean rows packed into 64-bit words (zeros after the last)."""
    packed = np.packbits(bits, axis=1)
    pad = -packed.shape[1] % 8
    if pad:
        packed = np.pad(packed, ((0, 0), (0, pad)))
    return np.ascontiguousarray(packed).view(np.uint64)
