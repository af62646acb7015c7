"""The state of a set of Mondrian grids under a changing lifetime configuration: cells, the
features of the training points, and the ridge solution kept up to date by O(C^2) inverse
updates as single lifetimes move up (cells split) or down (cells merge)."""

import copy
import functools
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from scipy.linalg import lapack

from . import _kernels as core
from .._core.scaling import target_exponent

_NO_EVENT = -1      # activate/deactivate: nothing left to add/remove in this dimension
_OVER_BUDGET = -2   # activate: the split would exceed max_cells
# ``solve`` rebuilds A^-1 from scratch when the residual |A w - b| / |b| of the updated inverse
# exceeds this: a rebuild costs O(C^3), and this tolerance still leaves eight correct digits.
_RESIDUAL_TOL = 1e-8
_BLAS = None


def _serial_blas(method):
    """Run ``method`` with single-threaded BLAS.  The grid's matrix products are small and
    come many at a time, and threaded BLAS spends more time synchronising than computing on
    them (measured: surrogates/README.md, section 'Implementation choices measured during
    development')."""

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


def _gap_events(seed, n_grids, d, u, W):
    """First-cut time of every gap between the sorted distinct coordinates ``u`` of dimension
    ``d`` in each grid, ``(n_grids, len(u))`` (column 0 unused), and the gaps as events in time
    order: ``(times, grids, gaps)``."""
    nd = u.shape[0]
    t1 = np.empty((n_grids, nd))
    core.gap_first_cuts(seed, n_grids, d, u, W, t1)
    tt = t1[:, 1:].ravel()
    mm = np.repeat(np.arange(n_grids), nd - 1)
    gg = np.tile(np.arange(1, nd), n_grids)
    o = np.argsort(tt, kind="stable")
    return t1, (tt[o], mm[o], gg[o])


@dataclass(eq=False, repr=False)
class _GridState:
    """Everything a fitted grid holds: the realisation (gap first-cut times and the per-
    dimension event lists), the current partition of the training rows, and the ridge model on
    it (``A^-1`` with swap-with-last positions, ``b = Phi' y``, ``log det A``).

    Feature *ids* are stable names of cells (``leaf[n, m]`` is the id of row ``n``'s cell in
    grid ``m``); ``f_pos[id]`` is the cell's row/column in ``Ainv``; ``pos_id`` the inverse map.
    Cells are keyed by their "left-boundary" interval ids: in grid ``m`` and dimension ``d`` a
    row's id is the largest active gap index at or left of its rank (the report's cells are
    found through neighbour pointers instead, Balog & Teh (2015), Section 5.1; a key on the
    stable left-boundary ids makes finding the cells a merge joins one dictionary look-up).

    Per-grid arrays of dimension ``d`` (``t1``, ``lb``) are stored flat: gap or rank ``i`` of
    grid ``m`` is at ``lb_off[d] + m * nd[d] + i``.
    """

    # -- the data and the realisation of the grids: set by build, shared by copies ------------
    seed: np.uint64         # key of the counter-based random stream of all grids
    M: int                  # number of grids
    D: int                  # number of input dimensions
    N: int                  # number of training rows
    delta2: float           # ridge constant, sum form
    y_mean: float           # training mean of the targets (divided by 2^y_exp)
    y_c: np.ndarray         # (N,) centred training targets (divided by 2^y_exp)
    rank: np.ndarray        # (N, D) rank of each coordinate among its dimension's distinct values
    nd: np.ndarray          # (D,) number of distinct coordinates per dimension
    u_off: np.ndarray       # (D + 1,) where each dimension's distinct values start in u_flat
    u_flat: np.ndarray      # the sorted distinct coordinates of all dimensions, concatenated
    u0: np.ndarray          # (D,) smallest training coordinate
    W: np.ndarray           # (D,) width of the training range (1 for a constant column)
    lb_off: np.ndarray      # (D,) where dimension d's per-grid arrays start
    order: np.ndarray       # (D, N) the rows sorted by rank, per dimension
    rstart: list            # per dimension, where each rank starts in ``order[d]``
    t1: np.ndarray          # first-cut time of every gap (flat per-grid layout)
    ev_t: list              # per dimension, the gap events in time order: times,
    ev_m: list              # ... their grids,
    ev_g: list              # ... and their gaps
    model: bool             # keep the ridge model (False: the partition only)
    # the targets are held divided by 2^y_exp (exactly; 0 unless beyond Y_LIMIT): the model's
    # sums of squares would overflow; means, weights and residuals are in those units
    y_exp: int = 0

    # -- the partition at ``lams``: set by _partition, changed by activate and deactivate ---
    lams: np.ndarray = field(init=False)     # (D,) current lifetimes
    lb: np.ndarray = field(init=False)       # interval id of every rank (flat per-grid layout)
    n_act: np.ndarray = field(init=False)    # (D,) number of active events per dimension
    leaf: np.ndarray = field(init=False)     # (N, M) feature id of each row's cell
    f_grid: np.ndarray = field(init=False)   # grid of each feature id
    f_key: np.ndarray = field(init=False)    # (ids, D) interval ids of each feature's cell
    f_pos: np.ndarray = field(init=False)    # position of each feature id in the model, or -1
    pos_id: np.ndarray = field(init=False)   # feature id at each position
    n_ids: int = field(init=False)           # feature ids used so far
    C: int = field(init=False)               # number of cells (positions in use)
    slots: np.ndarray = field(init=False)    # hash table (grid, key) -> feature id
    _table_dirty: bool = field(init=False)   # ``slots`` must be rebuilt

    # -- the ridge model on it: set by refactor, updated by _replace and solve -------------
    b: np.ndarray = field(init=False)           # Phi' y by position
    Ainv: np.ndarray = field(init=False)        # (A^-1 by position, in a larger buffer)
    logdet: float = field(init=False)           # log det A
    w: np.ndarray = field(init=False)           # (C,) A^-1 b
    train_pred: np.ndarray = field(init=False)  # (N,) Phi w
    rss: float = field(init=False)              # |y_c - Phi w|^2
    wsq: float = field(init=False)              # |w|^2

    # -- construction ---------------------------------------------------------------------
    @classmethod
    def build(cls, X, y, lams, n_grids, seed, delta2, model=True):
        """Realise ``n_grids`` grids on the training rows ``X`` (targets ``y``, or None for a
        partition-only state), partition them at ``lams`` and fit the model."""
        N, D = X.shape
        M = int(n_grids)
        seed = np.uint64(seed)
        uniq = []
        rank = np.empty((N, D), np.int64)
        for d in range(D):
            # equal coordinates have no gap between them: no cut can separate them
            u, inv = np.unique(X[:, d], return_inverse=True)
            uniq.append(u)
            rank[:, d] = inv.ravel()
        nd = np.array([u.shape[0] for u in uniq], np.int64)
        u_off = np.r_[0, np.cumsum(nd)].astype(np.int64)
        W = np.array([u[-1] - u[0] for u in uniq])
        W[~(W > 0)] = 1.0  # a constant column: any positive block width will do
        lb_off = (M * u_off[:D]).astype(np.int64)
        order = np.argsort(rank, axis=0, kind="stable").T.copy()
        t1 = np.empty(M * u_off[D])
        events = []
        for d in range(D):
            t1_d, ev = _gap_events(seed, M, d, uniq[d], W[d])
            t1[lb_off[d]:lb_off[d] + M * nd[d]] = t1_d.ravel()
            events.append(ev)
        y_exp = target_exponent(y) if y is not None else 0
        if y_exp:
            y = np.ldexp(y, -y_exp)
        y_mean = float(y.mean()) if y is not None else 0.0
        st = cls(seed=seed, M=M, D=D, N=N, delta2=float(delta2), y_mean=y_mean,
                 y_c=(y - y_mean) if y is not None else np.zeros(N), rank=rank, nd=nd,
                 u_off=u_off, u_flat=np.concatenate(uniq), u0=np.array([u[0] for u in uniq]),
                 W=W, lb_off=lb_off, order=order,
                 rstart=[np.searchsorted(rank[order[d], d], np.arange(nd[d] + 1))
                         for d in range(D)],
                 t1=t1, ev_t=[e[0] for e in events], ev_m=[e[1] for e in events],
                 ev_g=[e[2] for e in events], model=bool(model), y_exp=y_exp)
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
        """Set the partition fields at ``lams`` from scratch (the model is then stale)."""
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
        self._table_dirty = True

    def refactor(self):
        """``A^-1``, ``b`` and ``log det A`` from scratch: O(N M + C^3)."""
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
        """A copy whose partition and model can move independently.  The data and the
        realisation are shared (never mutated), and so is the hash table (rebuilt, never
        mutated, when the copy changes)."""
        new = copy.copy(self)
        for name in ("lams", "n_act", "lb", "leaf", "f_grid", "f_key", "f_pos", "pos_id", "b",
                     "w", "train_pred"):
            setattr(new, name, getattr(self, name).copy())
        if self.model:
            C = self.C
            new.Ainv = np.empty((C + 8, C + 8))
            new.Ainv[:C, :C] = self.Ainv[:C, :C]
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

    # -- model updates (Balog & Teh, 2015, Section 5.1: delete + append, in block form) -----
    def _replace(self, m, removed, added):
        """Delete the cells ``removed`` (feature ids) and append ``added`` = ``[(id, rows)]``,
        all of grid ``m``, updating ``A^-1``, ``b`` and ``log det A``.

        The report's per-feature updates (Balog & Teh, 2015, Lemmas 4.3 and 4.4) in block
        form: with the ``K`` deleted positions moved to the end, ``E - F H^-1 F'`` removes
        them (``det`` times ``det H``); appending columns ``B`` with corner ``Dg`` uses the
        Schur complement ``S = Dg - B' A^-1 B`` (``det`` times ``det S``).  One BLAS-3 pass
        per block instead of one rank-1 pass per feature; same result up to rounding.
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
    def _around_gap(self, d, m, g, boundary):
        """The rank ranges ``[J, g)`` left of gap ``g`` of grid ``m`` and ``[g, nxt)`` right of
        it, where the ranks right of ``g`` currently carry the interval id ``boundary``, and
        the training rows in them grouped by cell: ``(base, J, nxt, left, right)`` with
        ``base`` the offset of the grid's interval ids in ``lb``."""
        nd = self.nd[d]
        base = self.lb_off[d] + m * nd
        J = int(self.lb[base + g - 1])
        seg = self.lb[base + g:base + nd]
        stop = np.flatnonzero(seg != boundary)
        nxt = g + (int(stop[0]) if stop.shape[0] else nd - g)
        order, rs = self.order[d], self.rstart[d]
        left = order[rs[J]:rs[g]]
        right = order[rs[g]:rs[nxt]]
        return base, J, nxt, _groups(left, self.leaf[left, m]), _groups(right, self.leaf[right, m])

    def activate(self, d, max_cells=None):
        """Add the next cut of dimension ``d`` (Balog & Teh, 2015, Section 5.1, "Increasing a
        lifetime"): every cell of its grid with rows on both sides of the gap splits.  Returns
        the number of cells split, or ``_NO_EVENT`` / ``_OVER_BUDGET`` (then nothing
        changed)."""
        e = self.n_act[d]
        if e >= self.ev_t[d].shape[0] or not np.isfinite(self.ev_t[d][e]):
            return _NO_EVENT
        m = int(self.ev_m[d][e])
        g = int(self.ev_g[d][e])
        J = int(self.lb[self.lb_off[d] + m * self.nd[d] + g - 1])
        base, J, nxt, gl, gr = self._around_gap(d, m, g, J)
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
        base, J, nxt, gl, gr = self._around_gap(d, m, g, g)
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
        """Remove the latest cut of dimension ``d`` (Balog & Teh, 2015, Section 5.1,
        "Decreasing a lifetime"): pairs of cells it separated merge (two deletes + one
        append).  Returns the number of merges or
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
        cell are passed over: they leave the model as it is, and a search that spent steps on
        them would stall (the report does not say how to treat them).  Either way
        ``lambda_d`` lands on the smallest lifetime giving the new partition -- the birth time
        of its latest effective cut, 0 if none -- so an increase and a decrease undo each
        other exactly.
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
        """``w = A^-1 b``, training predictions, and the residual check of the updated
        inverse (see ``_RESIDUAL_TOL``)."""
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
        ``y ~ N(0, s (Phi Phi' + delta2 I))`` gives ``s = (rss / delta2 + |w|^2) / N`` (in
        the units of the stored targets squared)."""
        return max((self.rss / self.delta2 + self.wsq) / self.N, 1e-12)

    def log_ml(self, prior_var, stored=False):
        """Log marginal likelihood of the centred targets (Balog et al., 2016, Section 4.2.1,
        with a prior variance ``s``), keeping the ``-(N - C)/2 log delta2`` term that the paper
        folds into a constant: it depends on the lifetimes through ``C``.

        ``prior_var`` is in the units of the targets squared, or with ``stored`` in those of
        the stored targets (divided by ``4^y_exp``); the density is that of the targets
        themselves either way (-inf where it is below float64's range)."""
        s, N, C, k = prior_var, self.N, self.C, self.y_exp
        if not k:
            return float(-(self.rss / self.delta2 + self.wsq) / (2.0 * s) - 0.5 * N * np.log(s)
                         - 0.5 * self.logdet - 0.5 * (N - C) * np.log(self.delta2)
                         - 0.5 * N * np.log(2.0 * np.pi))
        rest = (-0.5 * self.logdet - 0.5 * (N - C) * np.log(self.delta2)
                - 0.5 * N * np.log(2.0 * np.pi))
        quad = (self.rss / self.delta2 + self.wsq) / (2.0 * s)
        if stored:  # the density of the targets is 2^-kN that of the stored ones
            return float(-quad - 0.5 * N * np.log(s) + rest - N * k * np.log(2.0))
        with np.errstate(over="ignore"):  # the targets' quadratic form: 4^k the stored one's
            quad = np.ldexp(quad, 2 * k)
        return float(-quad - 0.5 * N * np.log(s) + rest)
