"""The Mondrian grid (Balog's Oxford report §5; poster Fig. 4-5; spec §1.16-1.18).

``M`` independent grids, each made of ``D`` independent 1-D Mondrian processes (one per input
dimension, with its own lifetime ``lambda_d``); a point's features are the indicators of its
grid cells scaled by ``M^-1/2``, so that ``phi(x)' phi(x')`` is an unbiased estimate of the
anisotropic Laplace kernel ``exp(-sum_d lambda_d |x_d - x'_d|)``.  A Bayesian linear
regression (ridge) on these features is kept up to date through O(C^2) inverse updates while
single lifetimes move up (cells split) or down (cells merge), which makes the greedy
lifetime-configuration search of the report (§5.2, poster Fig. 5) cheap.
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from scipy.linalg import lapack
from sklearn.base import BaseEstimator, RegressorMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from . import _grid_core as core
from ._validation import check_choice, check_int, check_positive, check_target, check_X, \
    feature_names, seed_sequence, set_feature_names

__all__ = ["GridExploration", "MondrianGrid"]

_NO_EVENT = -1      # activate/deactivate: nothing left to add/remove in this dimension
_OVER_BUDGET = -2   # activate: the split would exceed max_cells
_RESIDUAL_TOL = 1e-8  # spec §3 tip 3: refresh A^-1 when |A w - b| / |b| exceeds this
_BLAS = None


def _serial_blas(method):
    """Run ``method`` with single-threaded BLAS.  The grid's products are small and come
    many at a time; on the 2-core development machine with other work running, threaded
    OpenBLAS made a refit at C = 1279 cells take 4.3 s instead of 0.28 s, and the split/merge
    updates 4-5x slower."""

    @functools.wraps(method)
    def wrapper(*args, **kwargs):
        global _BLAS
        if _BLAS is None:
            from threadpoolctl import ThreadpoolController
            _BLAS = ThreadpoolController()
        with _BLAS.limit(limits=1, user_api="blas"):
            return method(*args, **kwargs)

    return wrapper


def _groups(points: np.ndarray, labels: np.ndarray):
    """``{label: points with that label}``, points kept in their given order."""
    if points.shape[0] == 0:
        return {}
    order = np.argsort(labels, kind="stable")
    lab = labels[order]
    pts = points[order]
    starts = np.flatnonzero(np.r_[True, lab[1:] != lab[:-1]])
    ends = np.r_[starts[1:], lab.shape[0]]
    return {int(lab[s]): pts[s:e] for s, e in zip(starts, ends)}


class _GridState:
    """Everything a fitted grid holds: the realisation (gap first-cut times and the per-
    dimension event lists), the current partition of the training rows, and the ridge model on
    it (``A^-1`` with swap-with-last positions, ``b = Phi' y``, ``log det A``).

    Feature *ids* are stable names of cells (``leaf[n, m]`` is the id of row ``n``'s cell in
    grid ``m``); ``f_pos[id]`` is the cell's row/column in ``Ainv``; ``pos_id`` the inverse map.
    Cells are keyed by their "left-boundary" interval ids (spec §1.16): in grid ``m`` and
    dimension ``d`` a row's id is the largest active gap index at or left of its rank.
    """

    # -- construction ---------------------------------------------------------------------
    @classmethod
    def build(cls, X, y, lams, n_grids, seed, delta2, model=True):
        st = cls()
        N, D = X.shape
        st.seed = np.uint64(seed)
        st.M = int(n_grids)
        st.D = D
        st.N = N
        st.delta2 = float(delta2)
        st.model = bool(model)
        st.y_mean = float(y.mean()) if y is not None else 0.0
        st.y_c = (y - st.y_mean) if y is not None else np.zeros(N)
        uniq = []
        st.rank = np.empty((N, D), np.int64)
        for d in range(D):
            u, inv = np.unique(X[:, d], return_inverse=True)  # A20: no gap between equal values
            uniq.append(u)
            st.rank[:, d] = inv.ravel()
        st.nd = np.array([u.shape[0] for u in uniq], np.int64)
        st.u_off = np.r_[0, np.cumsum(st.nd)].astype(np.int64)
        st.u_flat = np.concatenate(uniq)
        st.u0 = np.array([u[0] for u in uniq])
        W = np.array([u[-1] - u[0] for u in uniq])
        W[~(W > 0)] = 1.0  # a constant column: any positive block width will do
        st.W = W
        st.lb_off = (st.M * st.u_off[:D]).astype(np.int64)
        # points sorted by rank, and where each rank starts in that order
        st.order = np.argsort(st.rank, axis=0, kind="stable").T.copy()      # (D, N)
        st.rstart = [np.searchsorted(st.rank[st.order[d], d], np.arange(st.nd[d] + 1))
                     for d in range(D)]
        # first-cut time of every gap, and the events of each dimension in time order
        st.t1 = np.empty(st.M * st.u_off[D])
        st.ev_t, st.ev_m, st.ev_g = [], [], []
        for d in range(D):
            nd = st.nd[d]
            t1 = np.empty((st.M, nd))
            core.gap_first_cuts(st.seed, st.M, d, uniq[d], st.W[d], t1)
            st.t1[st.lb_off[d]:st.lb_off[d] + st.M * nd] = t1.ravel()
            tt = t1[:, 1:].ravel()
            mm = np.repeat(np.arange(st.M), nd - 1)
            gg = np.tile(np.arange(1, nd), st.M)
            o = np.argsort(tt, kind="stable")
            st.ev_t.append(tt[o])
            st.ev_m.append(mm[o])
            st.ev_g.append(gg[o])
        st._partition(lams)
        st.refactor()
        return st

    def _t1(self, d, m):
        nd = self.nd[d]
        base = self.lb_off[d] + m * nd
        return self.t1[base:base + nd]

    def _partition_arrays(self, lams):
        """``(lb, n_act, per-grid (keys, inverse))`` of the partition at ``lams``."""
        M, D = self.M, self.D
        lb = np.zeros(M * self.u_off[D], np.int64)
        n_act = np.empty(D, np.int64)
        for d in range(D):
            nd = self.nd[d]
            t1 = self.t1[self.lb_off[d]:self.lb_off[d] + M * nd].reshape(M, nd)
            with np.errstate(invalid="ignore"):
                active = t1 <= lams[d]
            active[:, 0] = False
            ids = np.maximum.accumulate(np.where(active, np.arange(nd), 0), axis=1)
            lb[self.lb_off[d]:self.lb_off[d] + M * nd] = ids.ravel()
            n_act[d] = np.searchsorted(self.ev_t[d], lams[d], side="right")
        cells = []
        for m in range(M):
            keys = np.empty((self.N, D), np.int64)
            for d in range(D):
                base = self.lb_off[d] + m * self.nd[d]
                keys[:, d] = lb[base + self.rank[:, d]]
            k, inv = np.unique(keys, axis=0, return_inverse=True)
            cells.append((k, inv.ravel()))
        return lb, n_act, cells

    def count_cells(self, lams) -> int:
        return sum(k.shape[0] for k, _ in self._partition_arrays(lams)[2])

    def _partition(self, lams):
        lb, n_act, cells = self._partition_arrays(lams)
        C = sum(k.shape[0] for k, _ in cells)
        cap = C + 16
        self.lams = np.array(lams, dtype=np.float64)
        self.lb = lb
        self.n_act = n_act
        self.leaf = np.empty((self.N, self.M), np.int64)
        self.f_grid = np.empty(cap, np.int64)
        self.f_key = np.empty((cap, self.D), np.int64)
        self.f_pos = np.full(cap, -1, np.int64)
        off = 0
        for m, (k, inv) in enumerate(cells):
            c = k.shape[0]
            self.f_grid[off:off + c] = m
            self.f_key[off:off + c] = k
            self.leaf[:, m] = inv + off
            off += c
        self.n_ids = C
        self.f_pos[:C] = np.arange(C)
        self.pos_id = np.arange(cap, dtype=np.int64)
        self.C = C
        self.b = np.zeros(cap)
        self._table_dirty = True

    def refactor(self):
        """``A^-1``, ``b`` and ``log det A`` from scratch: O(N M + C^3) (spec §1.8)."""
        C = self.C
        self.b = np.zeros(max(self.pos_id.shape[0], C))
        self.b[:C] = self.phi_t(self.y_c)
        if not self.model:
            self.Ainv = np.zeros((0, 0))
            self.logdet = 0.0
            self.w = np.zeros(C)
            self.train_pred = np.zeros(self.N)
            self.rss = float(self.y_c @ self.y_c)
            self.wsq = 0.0
            return
        Phi = self.train_features()
        A = (Phi.T @ Phi).toarray()
        A[np.diag_indices(C)] += self.delta2
        L, info = lapack.dpotrf(A, lower=1, clean=0, overwrite_a=1)
        if info != 0:
            raise np.linalg.LinAlgError(f"Cholesky of A failed (info={info}).")
        self.logdet = float(2.0 * np.log(np.diag(L)).sum())
        Ainv, info = lapack.dpotri(L, lower=1, overwrite_c=1)
        if info != 0:
            raise np.linalg.LinAlgError(f"Inverse of A failed (info={info}).")
        Ainv = np.tril(Ainv) + np.tril(Ainv, -1).T
        cap = max(self.pos_id.shape[0], C)
        self.Ainv = np.zeros((cap, cap))
        self.Ainv[:C, :C] = Ainv
        self.solve(_retry=False)

    def train_features(self):
        N, M = self.N, self.M
        return sp.csr_matrix((np.full(N * M, M ** -0.5), self.f_pos[self.leaf].ravel(),
                              np.arange(0, N * M + 1, M)), shape=(N, self.C))

    def phi_t(self, v):
        """``Phi' v`` over the current columns, O(N M)."""
        pos = self.f_pos[self.leaf]
        return np.bincount(pos.ravel(), weights=np.repeat(v, self.M),
                           minlength=self.C) * self.M ** -0.5

    def copy(self):
        new = _GridState.__new__(_GridState)
        new.__dict__.update(self.__dict__)  # the realisation and data are shared, never mutated
        for name in ("lams", "n_act", "lb", "leaf", "f_grid", "f_key", "f_pos", "pos_id", "b",
                     "w", "train_pred"):
            setattr(new, name, getattr(self, name).copy())
        if self.model:
            C = self.C
            new.Ainv = np.empty((C + 8, C + 8))
            new.Ainv[:C, :C] = self.Ainv[:C, :C]
        if not self._table_dirty:
            new.slots = self.slots  # rebuilt (not mutated) when the copy changes
        return new

    # -- capacity ---------------------------------------------------------------------------
    def _reserve(self, n_new_ids, C_max):
        if self.n_ids + n_new_ids > self.f_grid.shape[0]:
            cap = max(self.n_ids + n_new_ids, int(1.5 * self.f_grid.shape[0]) + 16)
            for name in ("f_grid", "f_pos"):
                old = getattr(self, name)
                new = np.full(cap, -1, np.int64)
                new[:old.shape[0]] = old
                setattr(self, name, new)
            key = np.empty((cap, self.D), np.int64)
            key[:self.f_key.shape[0]] = self.f_key
            self.f_key = key
        if C_max > self.pos_id.shape[0]:
            cap = max(C_max, int(1.25 * self.pos_id.shape[0]) + 16)
            pid = np.empty(cap, np.int64)
            pid[:self.C] = self.pos_id[:self.C]
            self.pos_id = pid
            b = np.zeros(cap)
            b[:self.C] = self.b[:self.C]
            self.b = b
        if self.model and C_max > self.Ainv.shape[0]:
            cap = max(C_max, int(1.25 * self.Ainv.shape[0]) + 16)
            A = np.empty((cap, cap))
            A[:self.C, :self.C] = self.Ainv[:self.C, :self.C]
            self.Ainv = A

    # -- model updates (spec §1.9 ON_SPLIT / §1.17: delete + append, in block form) ----------
    def _replace(self, m, removed, added):
        """Delete the cells ``removed`` (feature ids) and append ``added`` = ``[(id, rows)]``,
        all of grid ``m``, updating ``A^-1``, ``b`` and ``log det A``.

        The report's per-feature updates ([R] Lemma 4.3 and 4.4, spec §1.8) in block form: with
        the ``K`` deleted positions moved to the end, ``E - F H^-1 F'`` removes them
        (``det`` times ``det H``); appending columns ``B`` with corner ``Dg`` uses the Schur
        complement ``S = Dg - B' A^-1 B`` (``det`` times ``det S``).  One BLAS-3 pass per
        block instead of one rank-1 pass per feature; same result up to rounding.
        """
        M = self.M
        K = len(removed)
        C = self.C
        self._reserve(0, C - K + len(added) + 1)
        if K:
            pos = self.f_pos[np.asarray(removed, np.int64)]
            n = C - K
            outside = np.sort(pos[pos < n])
            free = np.setdiff1d(np.arange(n, C), pos)
            if self.model and outside.shape[0]:
                core.swap_positions(self.Ainv, C, outside, free)
            for p, q in zip(outside, free):  # bookkeeping of the same swaps
                fp, fq = self.pos_id[p], self.pos_id[q]
                self.pos_id[p], self.pos_id[q] = fq, fp
                self.f_pos[fq], self.f_pos[fp] = p, q
                self.b[p], self.b[q] = self.b[q], self.b[p]
            if self.model:
                F = self.Ainv[:n, n:C]
                H = self.Ainv[n:C, n:C].copy()
                G = np.linalg.solve(H, F.T)
                self.Ainv[:n, :n] -= F @ G
                self.logdet += np.linalg.slogdet(H)[1]
            self.f_pos[np.asarray(removed, np.int64)] = -1
            self.C = C = n
        if not added:
            return
        L = len(added)
        sizes = np.array([pts.shape[0] for _, pts in added])
        rows = np.concatenate([pts for _, pts in added])
        col_of_row = np.repeat(np.arange(L), sizes)
        for j, (fid, pts) in enumerate(added):
            self.pos_id[C + j] = fid
            self.f_pos[fid] = C + j
            self.b[C + j] = self.y_c[pts].sum() * M ** -0.5
        if self.model:
            B = np.zeros((C, L))
            if M > 1:
                others = np.delete(self.leaf[rows], m, axis=1)
                np.add.at(B, (self.f_pos[others].ravel(),
                              np.repeat(col_of_row, M - 1)), 1.0 / M)
            # cells of one grid are disjoint: the new block of A is diagonal
            Dg = sizes / M + self.delta2
            Ai = self.Ainv[:C, :C]
            U = Ai @ B
            S = -(B.T @ U)
            S[np.diag_indices(L)] += Dg
            Sinv = np.linalg.inv(S)
            Sinv = 0.5 * (Sinv + Sinv.T)
            US = U @ Sinv
            Ai += US @ U.T
            self.Ainv[:C, C:C + L] = -US
            self.Ainv[C:C + L, :C] = -US.T
            self.Ainv[C:C + L, C:C + L] = Sinv
            self.logdet += np.linalg.slogdet(S)[1]
        self.C = C + L

    def _new_id(self, m, key):
        fid = self.n_ids
        self.f_grid[fid] = m
        self.f_key[fid] = key
        self.f_pos[fid] = -1
        self.n_ids += 1
        return fid

    # -- events -----------------------------------------------------------------------------
    def _interval(self, d, m, g, boundary):
        """Rank range ``[J, g)`` left of gap ``g`` and ``[g, nxt)`` right of it, where the
        ranks right of ``g`` currently carry the interval id ``boundary``."""
        nd = self.nd[d]
        base = self.lb_off[d] + m * nd
        J = int(self.lb[base + g - 1])
        seg = self.lb[base + g:base + nd]
        stop = np.flatnonzero(seg != boundary)
        nxt = g + (int(stop[0]) if stop.shape[0] else nd - g)
        return base, J, nxt

    def activate(self, d, max_cells=None):
        """Add the next cut of dimension ``d`` (spec §1.17 "increase"): every cell of its grid
        with rows on both sides of the gap splits.  Returns the number of cells split, or
        ``_NO_EVENT`` / ``_OVER_BUDGET`` (then nothing changed)."""
        e = self.n_act[d]
        if e >= self.ev_t[d].shape[0] or not np.isfinite(self.ev_t[d][e]):
            return _NO_EVENT
        m = int(self.ev_m[d][e])
        g = int(self.ev_g[d][e])
        J = int(self.lb[self.lb_off[d] + m * self.nd[d] + g - 1])
        base, J, nxt = self._interval(d, m, g, J)
        order, rs = self.order[d], self.rstart[d]
        left = order[rs[J]:rs[g]]
        right = order[rs[g]:rs[nxt]]
        gl = _groups(left, self.leaf[left, m])
        gr = _groups(right, self.leaf[right, m])
        common = [c for c in gr if c in gl]
        if max_cells is not None and self.C + len(common) > max_cells:
            return _OVER_BUDGET
        self.lb[base + g:base + nxt] = g
        self.n_act[d] = e + 1
        self._reserve(len(common), self.C + len(common) + 1)
        for c in gr:
            if c not in gl:  # the whole cell is right of the cut: only its name changes
                self.f_key[c, d] = g
        added = []
        for c in common:
            key = self.f_key[c].copy()
            key[d] = g
            c1 = self._new_id(m, key)
            added.append((c, gl[c]))            # the left part keeps the id
            added.append((c1, gr[c]))
        # every new column is computed from the other grids' cells only, so the order of
        # the relabelling below does not matter
        self._replace(m, common, added)
        for j in range(1, len(added), 2):
            self.leaf[added[j][1], m] = added[j][0]
        if common or gr:
            self._table_dirty = True
        return len(common)

    def _latest(self, d):
        """Groups of the training rows left and right of the latest active cut of ``d``, and
        the left-right pairs of cells it separates (same ids in every other dimension)."""
        e = self.n_act[d] - 1
        m = int(self.ev_m[d][e])
        g = int(self.ev_g[d][e])
        base, J, nxt = self._interval(d, m, g, g)
        order, rs = self.order[d], self.rstart[d]
        left = order[rs[J]:rs[g]]
        right = order[rs[g]:rs[nxt]]
        gl = _groups(left, self.leaf[left, m])
        gr = _groups(right, self.leaf[right, m])
        others = [k for k in range(self.D) if k != d]
        partner = {tuple(self.f_key[c, others]): c for c in gl}
        pairs = [(partner.get(tuple(self.f_key[cr, others])), cr) for cr in gr]
        return e, m, g, base, J, nxt, gl, gr, pairs

    def merges_if_removed(self, d) -> int:
        """Number of cell pairs that removing the latest cut of ``d`` would merge (no change);
        -1 if ``d`` has no active cut."""
        if self.n_act[d] == 0:
            return _NO_EVENT
        return sum(cl is not None for cl, _ in self._latest(d)[-1])

    def deactivate(self, d):
        """Remove the latest cut of dimension ``d`` (spec §1.17 "decrease"): pairs of cells it
        separated merge (two deletes + one append).  Returns the number of merges or
        ``_NO_EVENT``."""
        if self.n_act[d] == 0:
            return _NO_EVENT
        e, m, g, base, J, nxt, gl, gr, pairs = self._latest(d)
        self.lb[base + g:base + nxt] = J
        self.n_act[d] = e
        removed, added = [], []
        for cl, cr in pairs:
            self.f_key[cr, d] = J
            if cl is None:
                continue
            removed += [cl, cr]
            added.append((cl, np.concatenate([gl[cl], gr[cr]])))
            self.leaf[gr[cr], m] = cl
        self._replace(m, removed, added)
        if gr:
            self._table_dirty = True
        return len(added)

    def step(self, d, direction, max_cells=None) -> bool:
        """Move ``lambda_d`` to the next cut that changes the partition of the training rows
        (``direction=+1``), or remove the latest such cut (``-1``); cuts that split or merge no
        cell are passed over (spec §1.18 "no-op cuts", A13).  Either way ``lambda_d`` lands on
        the smallest lifetime giving the new partition -- the birth time of its latest
        effective cut, 0 if none -- so an increase and a decrease undo each other exactly.
        Returns False, with nothing changed, when there is no such cut (or it would exceed
        ``max_cells``)."""
        passed = 0
        while True:
            k = self.activate(d, max_cells) if direction > 0 else self.deactivate(d)
            if k < 0:
                for _ in range(passed):  # undo the no-op events (cheap, no model change)
                    self.deactivate(d) if direction > 0 else self.activate(d)
                return False
            passed += 1
            if k > 0:
                break
        if direction < 0:  # also drop the no-op cuts that an increase would pass over
            while self.merges_if_removed(d) == 0:
                self.deactivate(d)
        e = self.n_act[d]
        self.lams[d] = self.ev_t[d][e - 1] if e > 0 else 0.0
        return True

    def set_lifetimes(self, lams, incremental):
        target = [int(np.searchsorted(self.ev_t[d], lams[d], side="right"))
                  for d in range(self.D)]
        n_events = sum(abs(t - int(a)) for t, a in zip(target, self.n_act))
        if incremental is None:
            incremental = n_events <= max(16, self.C // 4)
        if incremental:
            for d in range(self.D):
                while self.n_act[d] < target[d]:
                    self.activate(d)
                while self.n_act[d] > target[d]:
                    self.deactivate(d)
            self.lams = np.array(lams, dtype=np.float64)
            self.solve()
        else:
            self._partition(lams)
            self.refactor()

    # -- solution and evaluation ---------------------------------------------------------------
    def solve(self, _retry=True):
        """``w = A^-1 b``, training predictions, and the residual check of spec §3 tip 3."""
        C = self.C
        if not self.model:
            return
        w = self.Ainv[:C, :C] @ self.b[:C]
        pos = self.f_pos[self.leaf]
        f = w[pos].sum(axis=1) * self.M ** -0.5
        if _retry:
            res = self.phi_t(f) + self.delta2 * w - self.b[:C]
            scale = max(np.linalg.norm(self.b[:C]), self.delta2 * np.linalg.norm(w), 1e-300)
            if not np.linalg.norm(res) <= _RESIDUAL_TOL * scale:
                self.refactor()
                return
        self.w = w
        self.train_pred = f
        r = self.y_c - f
        self.rss = float(r @ r)
        self.wsq = float(w @ w)

    def ensure_table(self):
        if self._table_dirty:
            size = 1 << int(max(4, np.ceil(np.log2(2 * self.C + 2))))
            self.slots = core.build_table(self.f_grid, self.f_key, self.pos_id, self.C, size)
            self._table_dirty = False

    def locate(self, X):
        n = X.shape[0]
        rl = np.empty((n, self.D), np.int64)
        rr = np.empty((n, self.D), np.int64)
        tl = np.empty((n, self.M, self.D))
        tr = np.empty((n, self.M, self.D))
        core.locate(X, self.seed, self.M, self.u_flat, self.u_off, self.u0, self.W, rl, rr,
                    tl, tr)
        return rl, rr, tl, tr

    def query(self, loc):
        """Positions ``(n, M)`` of the cells of located rows (-1: no training cell)."""
        self.ensure_table()
        rl = loc[0]
        out = np.empty((rl.shape[0], self.M), np.int64)
        core.query_positions(rl, loc[1], loc[2], loc[3], self.lams, self.lb, self.lb_off,
                             self.nd, self.slots, self.f_grid, self.f_key, self.f_pos, out)
        return out

    def positions(self, X):
        """Positions ``(n, M)`` of the cells of the rows of ``X`` at the current lifetimes."""
        self.ensure_table()
        out = np.empty((X.shape[0], self.M), np.int64)
        core.positions_at(X, self.seed, self.lams, self.u_flat, self.u_off, self.u0, self.W,
                          self.t1, self.lb, self.lb_off, self.nd, self.slots, self.f_grid,
                          self.f_key, self.f_pos, out)
        return out

    def predict_positions(self, pos, prior_var, want_var):
        n = pos.shape[0]
        mean = np.empty(n)
        var = np.empty(n if want_var else 0)
        core.predictive(pos, self.w, self.Ainv, self.y_mean, self.delta2, prior_var, want_var,
                        mean, var)
        return mean, var

    def ml_prior_var(self):
        """Maximum-marginal-likelihood prior variance ``s`` for the fixed ratio ``delta2``:
        ``y ~ N(0, s (Phi Phi' + delta2 I))`` gives ``s = (rss / delta2 + |w|^2) / N``."""
        return max((self.rss / self.delta2 + self.wsq) / self.N, 1e-12)

    def log_ml(self, prior_var):
        """Log marginal likelihood of the centred targets (spec §1.8, with A4's
        ``-(N - C)/2 log delta2`` kept and a prior variance ``s``)."""
        s, N, C = prior_var, self.N, self.C
        return float(-(self.rss / self.delta2 + self.wsq) / (2.0 * s) - 0.5 * N * np.log(s)
                     - 0.5 * self.logdet - 0.5 * (N - C) * np.log(self.delta2)
                     - 0.5 * N * np.log(2.0 * np.pi))


@dataclass
class GridExploration:
    """The path of a greedy lifetime-configuration search (:meth:`MondrianGrid.explore`).

    Row ``k`` of every array describes the configuration after step ``k`` (row 0: the start).

    Attributes
    ----------
    lifetimes : ndarray of shape (n_steps + 1, n_features)
    moved : ndarray of shape (n_steps + 1,)
        Dimension whose lifetime changed at each step (-1 for the start).
    direction : ndarray of shape (n_steps + 1,)
        +1 for an increase, -1 for a decrease, 0 for the start.
    val_rmse, train_rmse, log_ml : ndarray of shape (n_steps + 1,)
        Validation RMSE (NaN without validation data), training RMSE and log marginal
        likelihood of the model at each configuration.
    n_cells : ndarray of shape (n_steps + 1,)
        Number of non-empty cells (features).
    seconds : ndarray of shape (n_steps + 1,)
        Wall-clock time since the search started.
    criterion : str
        ``"val_rmse"`` (minimised) or ``"log_ml"`` (maximised).
    best_step : int
        Step with the best criterion; the model is left at that configuration.
    """

    lifetimes: np.ndarray
    moved: np.ndarray
    direction: np.ndarray
    val_rmse: np.ndarray
    train_rmse: np.ndarray
    log_ml: np.ndarray
    n_cells: np.ndarray
    seconds: np.ndarray
    criterion: str
    best_step: int
    n_candidates: int = field(default=0)

    @property
    def best_lifetimes(self) -> np.ndarray:
        return self.lifetimes[self.best_step].copy()

    @property
    def scores(self) -> np.ndarray:
        return self.val_rmse if self.criterion == "val_rmse" else self.log_ml

    def relevant_dims(self, eps: float = 1e-12) -> np.ndarray:
        """Dimensions whose best lifetime is at least ``eps`` (report §5.2 feature selection)."""
        return np.flatnonzero(self.best_lifetimes >= eps)


class MondrianGrid(RegressorMixin, TransformerMixin, BaseEstimator):
    """Mondrian grid features with Bayesian linear regression and per-dimension lifetimes.

    Each of ``n_grids`` grids cuts every input axis by an independent 1-D Mondrian (Poisson)
    process whose lifetime ``lambda_d`` belongs to the dimension; the features of a point are
    the indicators of its cells, scaled by ``n_grids^-1/2`` (spec §1.16), so the implied
    kernel tends to ``exp(-sum_d lambda_d |x_d - x'_d|)`` as ``n_grids`` grows.  On them sits
    ridge regression / Bayesian linear regression with prior ``w ~ N(0, s I)`` and noise
    variance ``s * delta2`` (spec §1.8), on targets centred at their training mean.

    Lifetimes can be moved one dimension at a time after fitting (:meth:`increase`,
    :meth:`decrease`, :meth:`set_lifetimes`): raising ``lambda_d`` adds cuts (cells split),
    lowering it removes exactly the cuts added last, and the model follows through O(C^2)
    inverse updates instead of an O(C^3) refit (spec §1.17).  :meth:`explore` is the greedy
    lifetime-configuration search of the report (§5.2; poster Fig. 5).

    Parameters
    ----------
    n_grids : int, default=10
        Number ``M`` of independent grids.  The poster's Fig. 5 uses 1; more grids give a
        smoother kernel estimate (error ``O(M^-1/2)``) at ``M`` times the features.
    lifetimes : float or array-like of shape (n_features,), default=1.0
        Initial lifetime (inverse L1 length-scale, in units of ``X``) of each dimension; a
        scalar applies to all.  0 means the dimension is never cut (the report's start
        configuration for the search, Ex. 5.2).
    delta2 : float, default=0.01
        Ridge constant in sum form (spec A2): ``w = (Phi'Phi + delta2 I)^-1 Phi'y``; the
        noise-to-prior variance ratio.  The default is the poster's ``delta = 0.1``.
    prior_var : float or "ml", default=1.0
        Prior variance ``s`` of the weights (the spec's ``sigma_w^2 = 1``); it scales the
        predictive variance and the marginal likelihood but not the mean.  ``"ml"`` uses its
        closed-form maximum-marginal-likelihood value for the current configuration.
    max_cells : int, default=5000
        Largest number of non-empty cells (features) allowed; the dense ``C x C`` inverse
        takes ``8 C^2`` bytes (200 MB at 5000).  Fitting or moving past it raises
        ``ValueError``; :meth:`explore` treats such moves as unavailable.
    random_state : int, SeedSequence, RandomState, Generator or None, default=None
        Seeds the grids.  The realisation of each grid's cuts is a function of the seed only
        (given the training range), and ties in :meth:`explore` are broken with it.

    Attributes
    ----------
    n_features_in_ : int
    lifetimes_ : ndarray of shape (n_features_in_,)
        Current lifetimes.
    n_cells_ : int
        Number of non-empty cells, i.e. of columns of :meth:`transform`.
    coef_ : ndarray of shape (n_cells_,)
        Posterior mean weights ``w`` (columns in the order of :meth:`transform`).
    intercept_ : float
        Training mean of the targets.
    log_marginal_likelihood_ : float
        Log marginal likelihood of the centred training targets (spec §1.8, A4).
    prior_var_ : float
        Prior variance in use.
    exploration_ : GridExploration
        Set by :meth:`explore`.

    Notes
    -----
    Points outside the training range, or between training coordinates, are placed in the
    same realisation of the Mondrian processes (sampled lazily and deterministically), so
    ``transform`` is exact for any input: a row gets a feature in grid ``m`` iff no cut
    separates it from some training row's cell; otherwise its weight keeps the prior.
    Cells with validation rows but no training rows would carry weight 0 (spec A12), so they
    are simply not columns; predictions are the same.  Which points define the partition
    (spec A10) therefore does not matter: the cuts are a function of the seed and the
    training range alone, so the inductive and the transductive (train + validation)
    partitions agree on every shared point.
    """

    def __init__(self, n_grids=10, lifetimes=1.0, delta2=0.01, prior_var=1.0, max_cells=5000,
                 random_state=None):
        self.n_grids = n_grids
        self.lifetimes = lifetimes
        self.delta2 = delta2
        self.prior_var = prior_var
        self.max_cells = max_cells
        self.random_state = random_state

    # -- validation -------------------------------------------------------------------------
    def _check_params(self):
        check_int(self.n_grids, "n_grids", 1)
        check_positive(self.delta2, "delta2")
        if isinstance(self.prior_var, str):
            check_choice(self.prior_var, "prior_var", {"ml"})
        else:
            check_positive(self.prior_var, "prior_var")
        check_int(self.max_cells, "max_cells", 1)
        rs = self.random_state
        if not isinstance(rs, (np.random.RandomState, np.random.Generator)):
            seed_sequence(rs)  # TypeError/ValueError naming random_state; does not advance

    @staticmethod
    def _check_lifetimes(value, n_features, name="lifetimes"):
        if isinstance(value, (str, bytes)) or value is None:
            raise TypeError(f"{name} must be a non-negative number or an array of "
                            f"{n_features}, got {value!r}.")
        try:
            lam = np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError):
            raise TypeError(f"{name} must be a non-negative number or an array of "
                            f"{n_features}, got {value!r}.") from None
        if lam.ndim == 0:
            lam = np.full(n_features, float(lam))
        if lam.shape != (n_features,):
            raise ValueError(f"{name} must be a scalar or have shape ({n_features},), one "
                             f"lifetime per feature; got shape {lam.shape}.")
        if not np.isfinite(lam).all() or np.any(lam < 0):
            raise ValueError(f"{name} must be finite and non-negative, got {lam}.")
        return lam

    def _check_dim(self, d):
        check_int(d, "d", 0, self.n_features_in_ - 1)
        return int(d)

    # -- fitting ----------------------------------------------------------------------------
    @_serial_blas
    def fit(self, X, y):
        """Sample the grids, partition ``X`` at ``lifetimes`` and fit the ridge model.

        Cost: O(N D log N) for the realisation, O(N M D log N) for the cells and O(C^3) for
        the inverse.
        """
        self._check_params()
        names = feature_names(X)
        X = check_X(X, "X", estimator=self)
        y = check_target(y, X.shape[0], "y")
        lam = self._check_lifetimes(self.lifetimes, X.shape[1])
        ss = seed_sequence(self.random_state)
        words = ss.generate_state(2, dtype=np.uint64)
        st = _GridState.build(X, y, lam, self.n_grids, words[0], self.delta2, model=False)
        C = st.C
        if C > self.max_cells:
            raise ValueError(f"lifetimes={self.lifetimes!r} give {C} non-empty cells, more than "
                             f"max_cells={self.max_cells}; lower the lifetimes or raise "
                             f"max_cells.")
        st.model = True
        st.refactor()
        st.ensure_table()
        self._state = st
        self._tie_seed = int(words[1])
        self.n_features_in_ = X.shape[1]
        set_feature_names(self, names)
        return self

    # -- fitted quantities ------------------------------------------------------------------
    def _st(self) -> _GridState:
        check_is_fitted(self, "_state")
        return self._state

    @property
    def lifetimes_(self) -> np.ndarray:
        return self._st().lams.copy()

    @property
    def n_cells_(self) -> int:
        return int(self._st().C)

    @property
    def coef_(self) -> np.ndarray:
        return self._st().w.copy()

    @property
    def intercept_(self) -> float:
        return self._st().y_mean

    @property
    def prior_var_(self) -> float:
        st = self._st()
        return st.ml_prior_var() if isinstance(self.prior_var, str) else float(self.prior_var)

    @property
    def log_marginal_likelihood_(self) -> float:
        st = self._st()
        return st.log_ml(self.prior_var_)

    # -- features and prediction ------------------------------------------------------------
    def _positions(self, X):
        st = self._st()
        X = check_X(X, "X", self.n_features_in_, estimator=self)
        return st, st.positions(X)

    def transform(self, X):
        """Grid-cell features: a CSR matrix ``(n_samples, n_cells_)`` with one entry
        ``n_grids^-1/2`` per grid in which the row shares a cell with training rows (exactly
        ``n_grids`` entries for the training rows)."""
        st, pos = self._positions(X)
        n, M = pos.shape
        keep = pos >= 0
        counts = keep.sum(axis=1)
        indptr = np.r_[0, np.cumsum(counts)]
        return sp.csr_matrix((np.full(indptr[-1], M ** -0.5), pos[keep], indptr),
                             shape=(n, st.C))

    def fit_transform(self, X, y=None, **fit_params):
        return self.fit(X, y).transform(X)

    def kernel(self, X, Y=None) -> np.ndarray:
        """The implied kernel ``phi(X) phi(Y)'`` (fraction of grids whose training cell
        contains both points), an estimate of ``exp(-sum_d lifetimes_d |x_d - y_d|)``."""
        FX = self.transform(X)
        FY = FX if Y is None else self.transform(Y)
        return (FX @ FY.T).toarray()

    def predict(self, X, return_std: bool = False):
        """Predictive mean, and with ``return_std`` the standard deviation of a new target
        ``y*``: ``s (delta2 (1 + phi' A^-1 phi) + u / M)`` where ``u`` counts the grids in which
        the row has no training cell (spec §1.8)."""
        st, pos = self._positions(X)
        mean, var = st.predict_positions(pos, self.prior_var_, return_std)
        if return_std:
            return mean, np.sqrt(var)
        return mean

    def log_marginal_likelihood(self) -> float:
        """Same as :attr:`log_marginal_likelihood_`."""
        return self.log_marginal_likelihood_

    # -- lifetime moves ---------------------------------------------------------------------
    @_serial_blas
    def increase(self, d: int) -> bool:
        """Raise ``lifetimes_[d]`` to the birth time of the next cut (in any grid) that splits
        a cell of training rows, and update the model incrementally.  Returns False, with
        nothing changed, if no cut is left or ``max_cells`` would be exceeded."""
        st = self._st()
        d = self._check_dim(d)
        moved = st.step(d, +1, self.max_cells)
        if moved:
            st.solve()
            st.ensure_table()
        return moved

    @_serial_blas
    def decrease(self, d: int) -> bool:
        """Remove the latest cut of dimension ``d`` that separates training rows (cells merge;
        the cuts removed are exactly those added last) and lower ``lifetimes_[d]`` to the
        birth time of the latest remaining one (0 if none): the smallest lifetime with this
        partition, where :meth:`increase` would also land, so the two undo each other.
        Returns False if ``d`` has no such cut."""
        st = self._st()
        d = self._check_dim(d)
        moved = st.step(d, -1)
        if moved:
            st.solve()
            st.ensure_table()
        return moved

    @_serial_blas
    def set_lifetimes(self, lifetimes, incremental: bool | None = None):
        """Move to another lifetime configuration without resampling the grids.

        ``incremental=True`` adds/removes cuts one by one with O(C^2) updates each,
        ``False`` rebuilds the model at the new configuration in O(C^3), ``None`` picks the
        first when few cuts change.  Both give the same model up to rounding.
        """
        st = self._st()
        lam = self._check_lifetimes(lifetimes, self.n_features_in_)
        if incremental is not None and not isinstance(incremental, (bool, np.bool_)):
            raise TypeError(f"incremental must be None or a bool, got {incremental!r}.")
        C = st.count_cells(lam)
        if C > self.max_cells:
            raise ValueError(f"lifetimes give {C} non-empty cells, more than max_cells="
                             f"{self.max_cells}.")
        st.set_lifetimes(lam, incremental)
        st.ensure_table()
        return self

    def cuts(self, d: int, grid: int = 0, lifetime: float | None = None):
        """The cuts of grid ``grid`` in dimension ``d`` inside the training range, born at or
        before ``lifetime`` (default ``lifetimes_[d]``): ``(positions, birth_times)`` sorted
        by position.  Their number is Poisson(lifetime x range width)."""
        st = self._st()
        d = self._check_dim(d)
        grid = check_int(grid, "grid", 0, st.M - 1)
        lam = st.lams[d] if lifetime is None else float(lifetime)
        if not lam >= 0:
            raise ValueError(f"lifetime must be non-negative, got {lifetime}.")
        lo = st.u0[d]
        pos, tim = core.block_cuts(st.seed, grid, d, lo, lo + st.W[d], lam)
        o = np.argsort(pos, kind="stable")
        return pos[o], tim[o]

    def cut_times(self, d: int) -> np.ndarray:
        """Birth times, in increasing order, of the first cut of every gap between consecutive
        distinct training coordinates of dimension ``d``, over all grids (spec §1.17's events):
        the lifetimes at which the partition of the training rows can change.  Configurations
        with ``k`` of them active have ``lifetimes_[d]`` in ``[times[k-1], times[k])``."""
        st = self._st()
        d = self._check_dim(d)
        t = st.ev_t[d]
        return t[np.isfinite(t)].copy()

    # -- greedy search (report §5.2, poster Fig. 5; spec §1.18) ------------------------------
    @_serial_blas
    def explore(self, X_val=None, y_val=None, *, criterion: str | None = None,
                max_steps: int = 100, patience: int = 10, allow_decrease: bool = False,
                max_cells: int | None = None) -> GridExploration:
        """Greedy lifetime-configuration search from the current lifetimes.

        At each step every dimension's next effective cut (and with ``allow_decrease`` also
        the removal of its latest one, the report's Fig. 5.6 variant) is tried with
        incremental updates; the move with the best criterion is kept.  Ties are broken at
        random (A13).  The search stops after ``max_steps`` steps, after ``patience`` steps
        without a new best, or when no move is left, and the model is left at the best
        configuration seen (spec §1.18).

        Parameters
        ----------
        X_val, y_val : array-like, optional
            Validation data for ``criterion="val_rmse"``.
        criterion : {"val_rmse", "log_ml"} or None, default=None
            Validation RMSE (the report's choice; needs validation data) or the log marginal
            likelihood of the training data.  ``None``: ``"val_rmse"`` when validation data
            are given, else ``"log_ml"``.
        max_steps : int, default=100
        patience : int, default=10
        allow_decrease : bool, default=False
            Also consider lowering each lifetime (2 D candidates per step).
        max_cells : int or None, default=None
            Feature budget for the search (default: the estimator's ``max_cells``).

        Returns
        -------
        GridExploration
            Also stored as ``exploration_``.
        """
        st = self._st()
        if criterion is None:
            criterion = "val_rmse" if X_val is not None else "log_ml"
        check_choice(criterion, "criterion", {"val_rmse", "log_ml"})
        max_steps = check_int(max_steps, "max_steps", 0)
        patience = check_int(patience, "patience", 1)
        if not isinstance(allow_decrease, (bool, np.bool_)):
            raise TypeError(f"allow_decrease must be a bool, got {allow_decrease!r}.")
        budget = self.max_cells if max_cells is None else check_int(max_cells, "max_cells", 1)
        budget = min(budget, self.max_cells)
        loc = None
        if X_val is not None or y_val is not None:
            if X_val is None or y_val is None:
                raise ValueError("X_val and y_val must be given together.")
            X_val = check_X(X_val, "X_val", self.n_features_in_, estimator=self)
            y_val = check_target(y_val, X_val.shape[0], "y_val")
            loc = st.locate(X_val)
        elif criterion == "val_rmse":
            raise ValueError("criterion='val_rmse' needs X_val and y_val.")
        sign = 1.0 if criterion == "val_rmse" else -1.0  # minimise sign * value

        def evaluate(s):
            pv = s.ml_prior_var() if isinstance(self.prior_var, str) else float(self.prior_var)
            lml = s.log_ml(pv)
            if loc is not None:
                mean, _ = s.predict_positions(s.query(loc), pv, False)
                vr = float(np.sqrt(np.mean((mean - y_val) ** 2)))
            else:
                vr = np.nan
            tr = float(np.sqrt(s.rss / s.N))
            return (vr if criterion == "val_rmse" else lml), vr, tr, lml

        rng = np.random.default_rng(self._tie_seed)
        t0 = time.perf_counter()
        score, vr, tr, lml = evaluate(st)
        rows = [(st.lams.copy(), -1, 0, vr, tr, lml, st.C, 0.0)]
        best_score, best_step, since = score, 0, 0
        dead = np.zeros((self.n_features_in_, 2), bool)  # up-only: exhausted dims stay so
        n_cand = 0
        moves = [+1, -1] if allow_decrease else [+1]
        for step in range(1, max_steps + 1):
            cands = []
            for d in range(self.n_features_in_):
                for j, direction in enumerate(moves):
                    if dead[d, j]:
                        continue
                    trial = st.copy()
                    if not trial.step(d, direction, budget if direction > 0 else None):
                        if not allow_decrease:
                            dead[d, j] = True  # cells only get finer: no later cut splits
                        continue
                    trial.solve()
                    n_cand += 1
                    cands.append((sign * evaluate(trial)[0], d, direction))
                    del trial
            if not cands:
                break
            vals = np.array([c[0] for c in cands])
            ties = np.flatnonzero(vals <= vals.min() + 1e-12 * max(1.0, abs(vals.min())))
            _, d, direction = cands[int(ties[rng.integers(ties.shape[0])])]
            st.step(d, direction, None)
            st.solve()
            score, vr, tr, lml = evaluate(st)
            rows.append((st.lams.copy(), d, direction, vr, tr, lml, st.C,
                         time.perf_counter() - t0))
            if sign * score < sign * best_score - 1e-12 * max(1.0, abs(best_score)):
                best_score, best_step, since = score, step, 0
            else:
                since += 1
                if since >= patience:
                    break
        best_lams = rows[best_step][0]
        if not np.array_equal(best_lams, st.lams):
            st.set_lifetimes(best_lams, None)
        st.ensure_table()
        res = GridExploration(
            lifetimes=np.array([r[0] for r in rows]), moved=np.array([r[1] for r in rows]),
            direction=np.array([r[2] for r in rows]), val_rmse=np.array([r[3] for r in rows]),
            train_rmse=np.array([r[4] for r in rows]), log_ml=np.array([r[5] for r in rows]),
            n_cells=np.array([r[6] for r in rows]), seconds=np.array([r[7] for r in rows]),
            criterion=criterion, best_step=best_step, n_candidates=n_cand)
        self.exploration_ = res
        return res

    def relevant_dims(self, eps: float = 1e-12) -> np.ndarray:
        """Dimensions whose current lifetime is at least ``eps`` (report §5.2)."""
        return np.flatnonzero(self.lifetimes_ >= eps)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = ["float64"]
        return tags
