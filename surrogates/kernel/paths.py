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

from .._core.tree import LEFT, NNODES, TAU
from .._core.validation import (check_choice, check_int, check_positive, check_target,
                                check_X, seed_sequence)
from . import _core as core
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
    n_features : ndarray
        Number of cells ``C`` at each lifetime.
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
    n_features: np.ndarray
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
        best), using exactly the path's trees truncated there (no resampling, spec §3 tip 7).
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


def _sweep_setup(rows, n_trees, lam, random_state):
    """Grow the trees to ``lam`` on all rows and list the cuts in time order."""
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
    core.dfs_ranges(s.inode, s.meta, s.stats, s.pnext, order, start)
    F = np.repeat(np.arange(T, dtype=np.int64)[None, :], s.n_points, axis=0)
    return cmap, ev_tree.astype(np.int64), ev_node.astype(np.int64), tau, order, start, F, t0


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
    rows (transductive, spec A10); the cuts of all trees are then processed in time order.

    Parameters
    ----------
    X, y : training rows and targets.
    X_val, y_val : validation rows and targets.
    max_lifetime : float
        Terminal lifetime ``Lambda``.
    n_trees : int, default=50
    delta2, alpha : float or None
        Sum-form ridge constant, or the mean form ``alpha = delta2 / N`` (spec A2); default
        ``delta2 = 1e-4``.
    solver : {"exact", "sgd"}, default="exact"
        ``"exact"``: forward path of spec §1.9 — per cut, delete the parent's row/column of
        ``(Phi^T Phi + delta2 I)^-1`` and append the two children (O(C^2), one fused pass),
        giving the exact ridge solution, errors and log marginal likelihood at every cut; the
        residual ``|A w - b|/|b|`` is checked every 64 cuts and the inverse rebuilt above 1e-8.
        ``"sgd"``: [P] §4.2.2 — on a cut both children inherit the parent's weight, then
        ``sgd_epochs`` epochs of SGD (scikit-learn's update, ``alpha = delta2 / N``,
        ``eta0 / t^power_t`` restarted at every evaluation, as [code] does).
    lifetimes : array-like or None, default=None
        ``None``: record (and for SGD, train) after every cut, as [P]/[code].  An increasing
        array: record only at these lifetimes (each sees all cuts up to it); the SGD variant
        then trains only there, which is much cheaper ([P] §4.2.2, spec §3 tip 5).
    X_test, y_test : array-like or None
        Optional test rows: they join the partition (like [code]) and get their own curve.
    X_unlabeled : array-like or None
        More rows for the partition without a curve; unlabelled.
    max_features : int or None
        Stop when this many cells exist (spec §1.4 ``C_max``).
    sgd_epochs : int, default=1
        Epochs per evaluation (SGD).
    eta0, power_t : float, default=0.01, 0.25
    empty_cell_weight : {"inherit", "zero"}, default="inherit"
        SGD only (spec A19): a child cell without training rows keeps the parent's weight
        ([code]) or starts at 0 (what exact ridge gives it).
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
    N, Nv, Nt = X.shape[0], Xv.shape[0], yt.shape[0]
    d2 = _resolve_delta2(delta2, alpha, N)
    ybar = float(yy.mean())
    cmap, ev_tree, ev_node, tau, order, start, F, t0 = _sweep_setup(rows, n_trees, lam,
                                                                     random_state)
    tree_time = time.perf_counter() - t0
    s = cmap.store
    T = s.n_trees
    n_ev = ev_tree.shape[0]
    if max_features is not None:
        n_ev = min(n_ev, max(0, max_features - T) // 1)
    yc = np.zeros(s.n_points)
    yc[:N] = yy - ybar
    yc[N:N + Nv] = yv - ybar
    yc[N + Nv:N + Nv + Nt] = yt - ybar
    yty = float(yc[:N] @ yc[:N])
    n_rec = n_ev + 1
    rec_lam = np.concatenate([[0.0], tau[:n_ev]])
    out_C = np.empty(n_rec, np.int64)
    tr_sse = np.empty(n_rec)
    val_sse = np.empty(n_rec)
    te_sse = np.zeros(n_rec)
    quad = np.full(n_rec, np.nan)
    logdet = np.full(n_rec, np.nan)
    runtime = np.empty(n_rec)
    n_refresh = 0
    if solver == "exact":
        Cmax = T + 2 * n_ev
        Cact = T + n_ev + 1
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
        b = np.zeros(Cact)
        beta = np.zeros(Cact)
        what = np.zeros(Cact)
        # at lifetime 0 every tree is one cell holding every row: A = (N/M) 1 1^T + delta2 I
        # (centred targets: b = 0, so beta = what = 0); its factor in closed form
        L0 = np.linalg.cholesky(np.full((T, T), N / T) + d2 * np.eye(T))
        R[:T, :T] = L0.T
        ld = float(2.0 * np.log(np.diag(L0)).sum())
        state = np.array([T, ld, yty, 0.0, 0.0, T, T], np.float64)
        acol = np.zeros(Cact)
        acol2 = np.zeros(Cact)
        chunk = 16
        snap_what = np.empty((chunk, Cact))
        snap_posf = np.empty((chunk, Cact), np.int64)
        snap_C = np.empty(chunk, np.int64)
        snap_cut = np.empty((chunk, 3), np.int64)
        W = np.empty((Cmax, chunk))
        out_C[0] = T
        quad[0] = yty / d2
        logdet[0] = ld
        tr_sse[0] = yty
        val_sse[0] = float(yc[N:N + Nv] @ yc[N:N + Nv])
        te_sse[0] = float(yc[N + Nv:N + Nv + Nt] @ yc[N + Nv:N + Nv + Nt])
        runtime[0] = time.perf_counter() - t0
        for k0 in range(0, n_ev, chunk):
            k1 = min(n_ev, k0 + chunk)
            core.exact_path_chunk(k0, k1, ev_tree, ev_node, s.inode, s.stats, order, start, F,
                                  N, Nv, Nt, yc, d2, state, pos, posf, slot, G, b, beta,
                                  what, R, acol, acol2, snap_what, snap_posf, snap_C,
                                  snap_cut, W, out_C[1:], quad[1:], logdet[1:], val_sse[1:],
                                  te_sse[1:], tr_sse[1:], 64.0, 1e-8)
            runtime[1 + k0:1 + k1] = time.perf_counter() - t0
        n_refresh = int(state[3])
        keep = np.arange(n_rec)
    else:
        Cmax = T + 2 * n_ev
        w = np.zeros(Cmax)
        cnt = np.zeros(Cmax, np.int64)
        ssum = np.zeros(Cmax)
        alpha_sgd = d2 / N
        rng = _core_rng(seed_sequence(random_state).spawn(3)[2])
        train_rows = np.arange(N, dtype=np.int64)
        val_rows = np.arange(N, N + Nv, dtype=np.int64)
        te_rows = np.arange(N + Nv, N + Nv + Nt, dtype=np.int64)
        pred_tr = np.empty(N)
        pred_v = np.empty(Nv)
        pred_t = np.empty(Nt)
        if grid is None:
            stops = np.arange(n_rec)  # record k has seen cuts 0..k-1
        else:
            stops = np.searchsorted(tau[:n_ev], grid, side="right")
        nxt = T
        done = 0
        for k, stop in enumerate(stops):
            nxt = core.split_cells(done, stop, ev_tree, ev_node, s.inode, s.stats, order, start,
                                   F, N, yc, w, cnt, ssum, nxt, empty_cell_weight == "inherit")
            done = stop
            core.sgd_epochs(F, train_rows, yc, w, alpha_sgd, float(eta0), float(power_t),
                            int(sgd_epochs), 1.0, rng, True)
            core.predict_rows(F, train_rows, w, 0.0, pred_tr)
            core.predict_rows(F, val_rows, w, 0.0, pred_v)
            core.predict_rows(F, te_rows, w, 0.0, pred_t)
            tr_sse[stop] = float(((pred_tr - yc[:N]) ** 2).sum())
            val_sse[stop] = float(((pred_v - yc[N:N + Nv]) ** 2).sum())
            te_sse[stop] = float(((pred_t - yc[N + Nv:N + Nv + Nt]) ** 2).sum())
            out_C[stop] = T + stop
            runtime[stop] = time.perf_counter() - t0
        keep = stops
    if grid is not None:
        if solver == "exact":
            keep = np.searchsorted(tau[:n_ev], grid, side="right")
        rec_lam_k = grid
    else:
        rec_lam_k = rec_lam[keep]
    tr_e, tr_r = _errors(tr_sse[keep], yy)
    va_e, va_r = _errors(val_sse[keep], yv)
    te_e, te_r = _errors(te_sse[keep], yt)
    Ck = out_C[keep]
    q = quad[keep]
    ldk = logdet[keep] + (N - Ck) * math.log(d2)  # log det(K + d2 I)
    log_ml = -0.5 * q / prior_variance - 0.5 * ldk - 0.5 * N * math.log(2 * math.pi
                                                                         * prior_variance)
    s2 = q / N
    log_ml_profile = -0.5 * N * (1.0 + np.log(2 * math.pi * s2)) - 0.5 * ldk
    ctx = dict(map=cmap, n_trees=T, delta2=d2, prior_variance=prior_variance,
               random_state=random_state, n_features_in=X.shape[1], n_train=N, y_train=yy)
    return LifetimePath(lifetimes=rec_lam_k.copy(), n_features=Ck.copy(), train_error=tr_e,
                        val_error=va_e, train_rmse=tr_r, val_rmse=va_r, test_error=te_e,
                        test_rmse=te_r, log_ml=log_ml,
                        log_ml_profile=log_ml_profile, runtime=runtime[keep].copy(),
                        tree_time=tree_time, solver=solver, n_refresh=n_refresh, _ctx=ctx)


def forest_lifetime_path(X, y, X_val, y_val, *, max_lifetime: float, n_trees: int = 50,
                         gamma2: float = 1e-4, X_test=None, y_test=None,
                         X_unlabeled=None, random_state=None) -> LifetimePath:
    """The per-tree ridge "Mondrian forest" of spec §1.14 ([P] §6) over all lifetimes.

    Leaf value ``sum(y - mean) / (n + gamma2)``, prediction ``mean(y) +`` the average of the
    trees' leaf values; each cut updates only the rows of the split cell, so the whole path
    costs about as much as one fit at ``max_lifetime``.  With the same rows and
    ``random_state`` the trees are those of :func:`lifetime_path` ([P] Fig. 9).
    """
    X, yy, Xv, yv, yt, rows, lam = _path_inputs(X, y, X_val, y_val, X_test, y_test,
                                                X_unlabeled, n_trees, max_lifetime,
                                                random_state)
    gamma2 = check_positive(gamma2, "gamma2")
    N, Nv, Nt = X.shape[0], Xv.shape[0], yt.shape[0]
    ybar = float(yy.mean())
    cmap, ev_tree, ev_node, tau, order, start, F, t0 = _sweep_setup(rows, n_trees, lam,
                                                                     random_state)
    tree_time = time.perf_counter() - t0
    s = cmap.store
    T = s.n_trees
    n_ev = ev_tree.shape[0]
    Cmax = T + 2 * n_ev
    yc = np.zeros(s.n_points)
    yc[:N] = yy - ybar
    yc[N:N + Nv] = yv - ybar
    yc[N + Nv:N + Nv + Nt] = yt - ybar
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
    core.forest_path_chunk(0, n_ev, ev_tree, ev_node, s.inode, s.stats, order, start, F, N, Nv,
                           Nt, yc, gamma2, pred, mu, cnt, ssum, T, sse, out[1:])
    runtime = np.full(n_ev + 1, time.perf_counter() - t0)
    tr_e, tr_r = _errors(out[:, 0], yy)
    va_e, va_r = _errors(out[:, 1], yv)
    te_e, te_r = _errors(out[:, 2], yt)
    nanv = np.full(n_ev + 1, np.nan)
    return LifetimePath(lifetimes=np.concatenate([[0.0], tau]),
                        n_features=T + np.arange(n_ev + 1), train_error=tr_e, val_error=va_e,
                        train_rmse=tr_r, val_rmse=va_r, test_error=te_e, test_rmse=te_r,
                        log_ml=nanv,
                        log_ml_profile=nanv.copy(), runtime=runtime, tree_time=tree_time,
                        solver="forest", _ctx=None)
