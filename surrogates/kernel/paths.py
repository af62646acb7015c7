"""Lifetime paths (Balog et al., 2016): one sweep over all cut times up to ``max_lifetime``
across the ``M`` trees gives the validation error (and log marginal likelihood) for every
lifetime at which the model changes, by exact O(C^2) inverse updates per cut or by
warm-started SGD; :func:`forest_lifetime_path` is the per-tree ("forest") counterpart on the
same cuts."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from .._core._tree_kernels import LEFT, NNODES, TAU
from .._core.validation import (check_choice, check_int, check_positive, check_target,
                                check_X, seed_sequence)
from . import _kernels as core
from ._common import _check_dense, _check_lifetime, _check_seed, _core_rng, _resolve_delta2
from .features import _CellMap
from .ridge import MondrianKernelRidge


# --------------------------------------------------------------------------------------------
# lifetime paths
# --------------------------------------------------------------------------------------------


@dataclass
class LifetimePath:
    """Result of a lifetime sweep: one entry per lifetime at which the model changes.

    Curves are right-continuous step functions of the lifetime (plot with
    ``drawstyle="steps-post"``); entry 0 is the lifetime-0 model (one cell per tree).

    Attributes
    ----------
    lifetimes : ndarray
        Cut times (0 first).
    n_cells : ndarray
        Number of cells ``C`` (features) at each lifetime.
    n_features : ndarray
        The old name of ``n_cells`` (read-only).
    train_error, val_error, test_error : ndarray
        Relative errors ``100 |y_hat - y| / |y|`` in percent (uncentred targets); the test
        curve is NaN unless test rows were given.
    train_rmse, val_rmse, test_rmse : ndarray
    log_ml : ndarray
        Log marginal likelihood (exact path only, NaN otherwise) with the given prior variance.
    log_ml_profile : ndarray
        Log marginal likelihood with the prior variance at its maximum-likelihood value.
    runtime : ndarray
        Seconds since the sweep started (including growing the trees) when the entry was ready.
    tree_time : float
        Seconds spent growing the trees.
    best_index : int
        Entry with the smallest validation error (the smallest lifetime among ties).
    best_lifetime : float
    solver : str
    n_refresh : int
        Times the exact path rebuilt its inverse after the residual check failed.
    """

    lifetimes: np.ndarray
    n_cells: np.ndarray
    train_error: np.ndarray
    val_error: np.ndarray
    train_rmse: np.ndarray
    val_rmse: np.ndarray
    test_error: np.ndarray
    test_rmse: np.ndarray
    log_ml: np.ndarray
    log_ml_profile: np.ndarray
    runtime: np.ndarray
    tree_time: float
    solver: str
    n_refresh: int = 0
    _ctx: dict = field(default=None, repr=False)

    @property
    def n_features(self) -> np.ndarray:
        """The old name of :attr:`n_cells`."""
        return self.n_cells

    @property
    def best_index(self) -> int:
        return int(np.argmin(self.val_error))

    @property
    def best_lifetime(self) -> float:
        return float(self.lifetimes[self.best_index])

    @property
    def best_lifetime_ml(self) -> float:
        """Lifetime maximising the log marginal likelihood (exact path)."""
        return float(self.lifetimes[int(np.nanargmax(self.log_ml))])

    def refit_at(self, lifetime: float | None = None, solver: str | None = None) -> \
            MondrianKernelRidge:
        """A :class:`MondrianKernelRidge` on the training rows at ``lifetime`` (default: the
        best), using exactly the path's trees truncated there: the Mondrian process at a
        smaller lifetime is the same sample without the later cuts (Balog et al., 2016,
        Section 4.1), so nothing is resampled and the model has the features the path saw.
        The validation and unlabelled rows stay in the partition (transductive)."""
        ctx = self._ctx
        if ctx is None:
            raise ValueError("refit_at needs a kernel path (lifetime_path).")
        lam = self.best_lifetime if lifetime is None else float(lifetime)
        if not 0.0 <= lam <= ctx["map"].store.lifetime:
            raise ValueError(f"lifetime must be in [0, {ctx['map'].store.lifetime}], got {lam}.")
        if solver is None:
            solver = "auto" if self.solver == "exact" else "sgd"
        model = MondrianKernelRidge(n_trees=ctx["n_trees"], lifetime=lam,
                                    delta2=ctx["delta2"], solver=solver,
                                    prior_variance=ctx["prior_variance"],
                                    random_state=ctx["random_state"])
        model.n_features_in_ = ctx["n_features_in"]
        cmap = ctx["map"].truncate(lam)
        n = ctx["n_train"]
        model._fit_map(cmap, np.arange(n), ctx["y_train"],
                       seed_sequence(ctx["random_state"]).spawn(2)[1], delta2=ctx["delta2"])
        return model


def _path_inputs(X, y, X_val, y_val, X_test, y_test, X_unlabeled, n_trees, max_lifetime,
                 random_state):
    check_int(n_trees, "n_trees", 1)
    lam = _check_lifetime(max_lifetime, "max_lifetime")
    _check_seed(random_state)
    X = check_X(X, "X")
    yy = check_target(y, X.shape[0], "y")
    Xv = check_X(X_val, "X_val", X.shape[1])
    yv = check_target(y_val, Xv.shape[0], "y_val")
    parts = [X, Xv]
    if (X_test is None) != (y_test is None):
        raise ValueError("Give both X_test and y_test, or neither.")
    if X_test is not None:
        Xt = check_X(X_test, "X_test", X.shape[1])
        yt = check_target(y_test, Xt.shape[0], "y_test")
        parts.append(Xt)
    else:
        yt = np.empty(0)
    if X_unlabeled is not None:
        parts.append(check_X(X_unlabeled, "X_unlabeled", X.shape[1]))
    return X, yy, Xv, yv, yt, np.vstack(parts), lam


def _errors(sse, y):
    """Relative error (%) and RMSE curves from sums of squared errors (NaN without rows)."""
    sse = np.maximum(sse, 0.0)
    if y.shape[0] == 0:
        nan = np.full(sse.shape, np.nan)
        return nan, nan.copy()
    return 100.0 * np.sqrt(sse) / np.linalg.norm(y), np.sqrt(sse / y.shape[0])


def _sweep_setup(rows, yy, yv, yt, n_trees, lam, random_state):
    """Grow the trees to ``lam`` on all rows (training, validation, test, then unlabelled) and
    list the cuts in time order.  Returns the trees, the :data:`core.Sweep` over them (targets
    centred at the training mean ``yy.mean()``), the cut times and the start time."""
    t0 = time.perf_counter()
    tree_ss = seed_sequence(random_state).spawn(2)[0]
    cmap = _CellMap.grow(rows, n_trees, lam, tree_ss, route=False)
    s = cmap.store
    T = s.n_trees
    nn = s.meta[:, NNODES]
    cap = int(nn.max())  # the store's node capacity can be far larger (and never touched)
    used = np.arange(cap)[None, :] < nn[:, None]
    internal = used & (s.inode[:, :cap, LEFT] >= 0)
    ev_tree, ev_node = np.nonzero(internal)
    tau = s.fnode[ev_tree, ev_node, TAU]
    o = np.lexsort((ev_node, ev_tree, tau))
    ev_tree, ev_node, tau = ev_tree[o], ev_node[o], tau[o]
    order = np.empty((T, s.n_points), np.int64)
    start = np.zeros((T, cap), np.int64)
    core.dfs_ranges(s.inode, s.meta, s.pnext, order, start)
    F = np.repeat(np.arange(T, dtype=np.int64)[None, :], s.n_points, axis=0)
    N, Nv, Nt = yy.shape[0], yv.shape[0], yt.shape[0]
    yc = np.zeros(s.n_points)
    yc[:N + Nv + Nt] = np.concatenate([yy, yv, yt]) - yy.mean()
    sweep = core.Sweep(ev_tree.astype(np.int64), ev_node.astype(np.int64), s.inode, s.stats,
                       order, start, F, yc, N, Nv, Nt)
    return cmap, sweep, tau, t0


def lifetime_path(X, y, X_val, y_val, *, max_lifetime: float, n_trees: int = 50,
                  delta2: float | None = None, alpha: float | None = None,
                  solver: str = "exact", lifetimes=None, X_test=None, y_test=None,
                  X_unlabeled=None,
                  max_features: int | None = None, sgd_epochs: int = 1, eta0: float = 0.01,
                  power_t: float = 0.25, empty_cell_weight: str = "inherit",
                  prior_variance: float = 1.0, random_state=None) -> LifetimePath:
    """Validation error of Mondrian kernel ridge regression for every lifetime in
    ``[0, max_lifetime]`` from one sweep over the cuts of ``n_trees`` Mondrian trees.

    The trees are grown once up to ``max_lifetime`` on the training, validation and unlabelled
    rows together, as the authors' reference code does (labels never shape the partition, so
    the training rows' cells keep their distribution); the cuts of all trees are then
    processed in time order (Balog et al., 2016, Section 4.1).

    Parameters
    ----------
    X, y : training rows and targets.
    X_val, y_val : validation rows and targets.
    max_lifetime : float
        Terminal lifetime ``Lambda``.
    n_trees : int, default=50
    delta2, alpha : float or None
        Sum-form ridge constant, or the mean form ``alpha = delta2 / N`` of scikit-learn's
        SGD (see :class:`MondrianKernelRidge`); default ``delta2 = 1e-4``.
    solver : {"exact", "sgd"}, default="exact"
        ``"exact"``: the forward path of Balog et al. (2016), Section 4.2.1 — per cut, delete
        the parent's row and column of ``A = Phi^T Phi + delta2 I`` from its Cholesky factor
        and append the two children (O(C^2)), giving the exact ridge solution, errors and log
        marginal likelihood at every cut; the residual ``|A w - b|/|b|`` is checked every 64
        cuts and the factor rebuilt above 1e-8.  ``"sgd"``: Balog et al. (2016), Section
        4.2.2 — on a cut both children inherit the parent's weight, then ``sgd_epochs`` epochs
        of SGD (scikit-learn's update, ``alpha = delta2 / N``, ``eta0 / t^power_t`` restarted
        at every evaluation, as the authors' reference code does).
    lifetimes : array-like or None, default=None
        ``None``: record (and for SGD, train) after every cut, as the paper and the authors'
        reference code do.  An increasing array: record only at these lifetimes (each sees all
        cuts up to it); the SGD variant then trains only there, which is much cheaper (the
        paper allows it, Balog et al., 2016, Section 4.2.2).
    X_test, y_test : array-like or None
        Optional test rows: they join the partition (as in the authors' reference code) and
        get their own curve.
    X_unlabeled : array-like or None
        More rows for the partition without a curve; unlabelled.
    max_features : int or None
        Stop when this many cells exist: a feature budget instead of a terminal lifetime
        (which need not be fixed in advance, Balog et al., 2016, Section 4).
    sgd_epochs : int, default=1
        Epochs per evaluation (SGD).
    eta0, power_t : float, default=0.01, 0.25
    empty_cell_weight : {"inherit", "zero"}, default="inherit"
        SGD only: a child cell without training rows keeps the parent's weight (the paper's
        warm start, Section 4.2.2, and the authors' reference code; only weight decay then
        moves it) or starts at 0 (the weight exact ridge gives it).  The two differ only in
        the predictions for validation and test rows in such cells.
    prior_variance : float, default=1.0
        Weight prior variance for ``log_ml`` (``log_ml_profile`` maximises over it).
    random_state : seed for the trees (same seed and rows give the same trees as
        :func:`forest_lifetime_path`).

    Returns
    -------
    LifetimePath
    """
    X, yy, Xv, yv, yt, rows, lam = _path_inputs(X, y, X_val, y_val, X_test, y_test,
                                                X_unlabeled, n_trees, max_lifetime,
                                                random_state)
    check_choice(solver, "solver", {"exact", "sgd"})
    check_choice(empty_cell_weight, "empty_cell_weight", {"inherit", "zero"})
    check_int(sgd_epochs, "sgd_epochs", 1)
    check_positive(eta0, "eta0")
    check_positive(prior_variance, "prior_variance")
    if max_features is not None:
        check_int(max_features, "max_features", n_trees)
    grid = None
    if lifetimes is not None:
        grid = np.asarray(lifetimes, dtype=np.float64).ravel()
        if grid.size == 0 or not np.all(np.isfinite(grid)) or np.any(np.diff(grid) <= 0) \
                or grid[0] < 0 or grid[-1] > lam:
            raise ValueError("lifetimes must be a non-empty increasing array in "
                             "[0, max_lifetime].")
    N = X.shape[0]
    d2 = _resolve_delta2(delta2, alpha, N)
    cmap, sweep, tau, t0 = _sweep_setup(rows, yy, yv, yt, n_trees, lam, random_state)
    tree_time = time.perf_counter() - t0
    T = cmap.store.n_trees
    n_ev = sweep.ev_tree.shape[0]
    if max_features is not None:
        n_ev = min(n_ev, max(0, max_features - T) // 1)
    yty = float(sweep.y[:N] @ sweep.y[:N])
    n_rec = n_ev + 1
    rec = core.PathRecord(n_cells=np.empty(n_rec, np.int64), quad=np.full(n_rec, np.nan),
                          logdet=np.full(n_rec, np.nan), train_sse=np.empty(n_rec),
                          val_sse=np.empty(n_rec), test_sse=np.zeros(n_rec))
    runtime = np.empty(n_rec)
    n_refresh = 0
    if solver == "exact":
        n_refresh = _exact_sweep(sweep, n_ev, d2, yty, rec, runtime, t0)
        keep = np.arange(n_rec)
    else:
        if grid is None:
            keep = np.arange(n_rec)  # record k has seen cuts 0..k-1
        else:
            keep = np.searchsorted(tau[:n_ev], grid, side="right")
        rng = _core_rng(seed_sequence(random_state).spawn(3)[2])
        _sgd_sweep(sweep, n_ev, keep, d2 / N, float(eta0), float(power_t), int(sgd_epochs),
                   empty_cell_weight == "inherit", rng, rec, runtime, t0)
    if grid is not None:
        if solver == "exact":
            keep = np.searchsorted(tau[:n_ev], grid, side="right")
        rec_lam_k = grid
    else:
        rec_lam_k = np.concatenate([[0.0], tau[:n_ev]])[keep]
    tr_e, tr_r = _errors(rec.train_sse[keep], yy)
    va_e, va_r = _errors(rec.val_sse[keep], yv)
    te_e, te_r = _errors(rec.test_sse[keep], yt)
    Ck = rec.n_cells[keep]
    q = rec.quad[keep]
    ldk = rec.logdet[keep] + (N - Ck) * math.log(d2)  # log det(K + d2 I)
    log_ml = -0.5 * q / prior_variance - 0.5 * ldk - 0.5 * N * math.log(2 * math.pi
                                                                         * prior_variance)
    s2 = q / N
    log_ml_profile = -0.5 * N * (1.0 + np.log(2 * math.pi * s2)) - 0.5 * ldk
    ctx = dict(map=cmap, n_trees=T, delta2=d2, prior_variance=prior_variance,
               random_state=random_state, n_features_in=X.shape[1], n_train=N, y_train=yy)
    return LifetimePath(lifetimes=rec_lam_k.copy(), n_cells=Ck.copy(), train_error=tr_e,
                        val_error=va_e, train_rmse=tr_r, val_rmse=va_r, test_error=te_e,
                        test_rmse=te_r, log_ml=log_ml,
                        log_ml_profile=log_ml_profile, runtime=runtime[keep].copy(),
                        tree_time=tree_time, solver=solver, n_refresh=n_refresh, _ctx=ctx)


# The exact path checks the residual |A w - b| / |b| every _CHECK_EVERY cuts, an O(N M) pass,
# and rebuilds the factor in O(C^3) when it exceeds _RESIDUAL_TOL: rare enough to leave the
# path at O(C^2) per cut, tight enough to keep eight digits of the solution.
_CHECK_EVERY = 64
_RESIDUAL_TOL = 1e-8
# cuts per compiled call (their validation and test errors are computed together)
_CHUNK = 16


def _exact_sweep(sweep, n_ev, delta2, yty, rec, runtime, t0) -> int:
    """Fill ``rec`` (entry 0: lifetime 0; entry ``k``: after cut ``k - 1``) with the exact
    ridge path over the first ``n_ev`` cuts; returns how often the factor was rebuilt."""
    N, Nv, Nt = sweep.n_train, sweep.n_val, sweep.n_test
    yc = sweep.y
    T = sweep.F.shape[1]
    Cmax = T + 2 * n_ev  # feature ids ever used
    Cact = T + n_ev + 1  # features alive at once, plus one
    _check_dense(Cact, "The exact path", n_matrices=2)
    R = np.zeros((Cact, Cact))
    pos = np.full(Cmax, -1, np.int64)
    pos[:T] = np.arange(T)
    posf = np.empty(Cact, np.int64)
    posf[:T] = np.arange(T)
    # co-occurrence counts of the current cells by slot: at lifetime 0 every tree's one
    # cell holds every training row
    G = np.zeros((Cact, Cact))
    G[:T, :T] = N
    slot = np.full(Cmax, -1, np.int64)
    slot[:T] = np.arange(T)
    # at lifetime 0 every tree is one cell holding every row: A = (N/M) 1 1^T + delta2 I
    # (centred targets: b = 0, so beta = what = 0); its factor in closed form
    L0 = np.linalg.cholesky(np.full((T, T), N / T) + delta2 * np.eye(T))
    R[:T, :T] = L0.T
    counters = np.zeros(5, np.int64)
    counters[[core.N_CELLS, core.NEXT_ID, core.NEXT_SLOT]] = T
    model = core.ExactModel(R=R, pos=pos, posf=posf, slot=slot, G=G, b=np.zeros(Cact),
                            beta=np.zeros(Cact), what=np.zeros(Cact), acol=np.zeros(Cact),
                            acol2=np.zeros(Cact), counters=counters)
    snaps = core.ChunkSnapshots(what=np.empty((_CHUNK, Cact)),
                                posf=np.empty((_CHUNK, Cact), np.int64),
                                n_cells=np.empty(_CHUNK, np.int64),
                                cut=np.empty((_CHUNK, 3), np.int64), W=np.empty((Cmax, _CHUNK)))
    rec.n_cells[0] = T
    rec.quad[0] = yty / delta2
    rec.logdet[0] = float(2.0 * np.log(np.diag(L0)).sum())
    rec.train_sse[0] = yty
    rec.val_sse[0] = float(yc[N:N + Nv] @ yc[N:N + Nv])
    rec.test_sse[0] = float(yc[N + Nv:N + Nv + Nt] @ yc[N + Nv:N + Nv + Nt])
    runtime[0] = time.perf_counter() - t0
    after_cut = core.PathRecord(*(a[1:] for a in rec))
    for k0 in range(0, n_ev, _CHUNK):
        k1 = min(n_ev, k0 + _CHUNK)
        core.exact_path_chunk(k0, k1, sweep, model, snaps, after_cut, delta2, yty,
                              _CHECK_EVERY, _RESIDUAL_TOL)
        runtime[1 + k0:1 + k1] = time.perf_counter() - t0
    return int(counters[core.N_REFRESH])


def _sgd_sweep(sweep, n_ev, stops, alpha, eta0, power_t, epochs, inherit, rng, rec, runtime,
               t0) -> None:
    """Fill the entries ``stops`` of ``rec`` (entry ``k``: after the cuts ``0..k-1``) with
    the warm-started SGD path: split the cells up to each stop, then train ``epochs`` epochs."""
    N, Nv, Nt = sweep.n_train, sweep.n_val, sweep.n_test
    T = sweep.F.shape[1]
    Cmax = T + 2 * n_ev
    w = np.zeros(Cmax)
    cnt = np.zeros(Cmax, np.int64)
    ssum = np.zeros(Cmax)
    train_rows = np.arange(N, dtype=np.int64)
    parts = [(train_rows, rec.train_sse), (np.arange(N, N + Nv, dtype=np.int64), rec.val_sse),
             (np.arange(N + Nv, N + Nv + Nt, dtype=np.int64), rec.test_sse)]
    nxt = T
    done = 0
    for stop in stops:
        nxt = core.split_cells(done, stop, sweep, w, cnt, ssum, nxt, inherit)
        done = stop
        core.sgd_epochs(sweep.F, train_rows, sweep.y, w, alpha, eta0, power_t, epochs, 1.0, rng,
                        True)
        for rows, sse in parts:
            pred = np.empty(rows.shape[0])
            core.predict_rows(sweep.F, rows, w, 0.0, pred)
            sse[stop] = float(((pred - sweep.y[rows]) ** 2).sum())
        rec.n_cells[stop] = T + stop
        runtime[stop] = time.perf_counter() - t0


def forest_lifetime_path(X, y, X_val, y_val, *, max_lifetime: float, n_trees: int = 50,
                         gamma2: float = 1e-4, X_test=None, y_test=None,
                         X_unlabeled=None, random_state=None) -> LifetimePath:
    """The per-tree ridge "Mondrian forest" of Balog et al. (2016), Section 6, over all
    lifetimes, by the forest path of Balog & Teh (2015), Section 4.1.

    Leaf value ``sum(y - mean) / (n + gamma2)``, prediction ``mean(y) +`` the average of the
    trees' leaf values; each cut updates only the rows of the split cell, so the whole path
    costs about as much as one fit at ``max_lifetime``.  With the same rows and
    ``random_state`` the trees are those of :func:`lifetime_path`, as in the comparison of
    Balog et al. (2016), Section 8.3 (Fig. 9).
    """
    X, yy, Xv, yv, yt, rows, lam = _path_inputs(X, y, X_val, y_val, X_test, y_test,
                                                X_unlabeled, n_trees, max_lifetime,
                                                random_state)
    gamma2 = check_positive(gamma2, "gamma2")
    N, Nv, Nt = X.shape[0], Xv.shape[0], yt.shape[0]
    cmap, sweep, tau, t0 = _sweep_setup(rows, yy, yv, yt, n_trees, lam, random_state)
    tree_time = time.perf_counter() - t0
    s = cmap.store
    T = s.n_trees
    n_ev = sweep.ev_tree.shape[0]
    Cmax = T + 2 * n_ev
    yc = sweep.y
    mu = np.zeros(Cmax)
    cnt = np.zeros(Cmax, np.int64)
    ssum = np.zeros(Cmax)
    mu[:T] = yc[:N].sum() / (N + gamma2)
    pred = np.full(s.n_points, mu[0])
    r = pred - yc
    sse = np.array([r[:N] @ r[:N], r[N:N + Nv] @ r[N:N + Nv],
                    r[N + Nv:N + Nv + Nt] @ r[N + Nv:N + Nv + Nt]])
    out = np.empty((n_ev + 1, 3))
    out[0] = sse
    core.forest_path_chunk(0, n_ev, sweep, gamma2, pred, mu, cnt, ssum, T, sse, out[1:])
    runtime = np.full(n_ev + 1, time.perf_counter() - t0)
    tr_e, tr_r = _errors(out[:, 0], yy)
    va_e, va_r = _errors(out[:, 1], yv)
    te_e, te_r = _errors(out[:, 2], yt)
    nanv = np.full(n_ev + 1, np.nan)
    return LifetimePath(lifetimes=np.concatenate([[0.0], tau]),
                        n_cells=T + np.arange(n_ev + 1), train_error=tr_e, val_error=va_e,
                        train_rmse=tr_r, val_rmse=va_r, test_error=te_e, test_rmse=te_r,
                        log_ml=nanv,
                        log_ml_profile=nanv.copy(), runtime=runtime, tree_time=tree_time,
                        solver="forest", _ctx=None)
