"""The Mondrian kernel (Balog, Lakshminarayanan, Ghahramani, Roy & Teh, UAI 2016).

* :class:`MondrianKernel` — scikit-learn transformer: ``M`` Mondrian partitions sampled up to a
  lifetime ``lambda``; ``transform`` gives the sparse random features whose inner products
  approximate the Laplace kernel ``exp(-lambda |x - x'|_1)``.
* :class:`MondrianKernelRidge` — ridge regression on those features (sum-form ``delta2``), and
  its Bayesian reading (Bayesian linear regression) with ``predict(X, return_std=True)`` and
  the log marginal likelihood; exact (primal or dual) or SGD solvers; ``partial_fit`` online.
* :func:`lifetime_path` — one sweep over all cut times up to ``max_lifetime`` across the ``M``
  trees: validation error (and log marginal likelihood) for every lifetime at which the model
  changes, by exact O(C^2) inverse updates per cut or by warm-started SGD.
  :func:`forest_lifetime_path` is the per-tree ("forest") counterpart on the same cuts.

Spec: ``mondrian_kernel.md``; section numbers below refer to it.
"""

from __future__ import annotations

import copy
import math
import numbers
import time
from dataclasses import dataclass, field

import numpy as np
import scipy.linalg
import scipy.sparse as sp
from sklearn.base import BaseEstimator, RegressorMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from . import _kernel_core as core
from ._tree import LEFT, NNODES, TASK_STRUCTURE, TAU, TreeStore
from ._validation import (check_choice, check_int, check_positive, check_target,
                          check_unchanged, check_X, feature_names, set_feature_names,
                          seed_sequence)

__all__ = ["MondrianKernel", "MondrianKernelRidge", "LifetimePath", "lifetime_path",
           "forest_lifetime_path", "relative_error", "rmse", "lifetime_from_lengthscale"]

_DEFAULT_DELTA2 = 1e-4  # [P] §8 / Rahimi & Recht, sum form
_MAX_DENSE_BYTES = 4e9  # refuse dense C x C (or N x N) matrices above this


# --------------------------------------------------------------------------------------------
# small public helpers
# --------------------------------------------------------------------------------------------


def relative_error(y_true, y_pred) -> float:
    """[P]'s "test set error": ``100 * |y_pred - y_true|_2 / |y_true|_2`` in percent."""
    y_true = np.asarray(y_true, dtype=np.float64)
    y_pred = np.asarray(y_pred, dtype=np.float64)
    return float(100.0 * np.linalg.norm(y_pred - y_true) / np.linalg.norm(y_true))


def rmse(y_true, y_pred) -> float:
    """Root mean squared error."""
    d = np.asarray(y_pred, dtype=np.float64) - np.asarray(y_true, dtype=np.float64)
    return float(np.sqrt(np.mean(d * d)))


def lifetime_from_lengthscale(lengthscale: float) -> float:
    """Lifetime ``lambda = 1 / sigma`` of ``exp(-|x - x'|_1 / sigma)`` (spec A17)."""
    return 1.0 / check_positive(lengthscale, "lengthscale")


def _resolve_delta2(delta2, alpha, n_samples: int) -> float:
    """Sum-form ridge constant from ``delta2`` (sum form) or ``alpha`` (mean form, spec A2)."""
    if delta2 is not None and alpha is not None:
        raise ValueError("Give either delta2 (sum form) or alpha (mean form, delta2 = "
                         "n_samples * alpha), not both.")
    if alpha is not None:
        return check_positive(alpha, "alpha") * n_samples
    if delta2 is None:
        return _DEFAULT_DELTA2
    return check_positive(delta2, "delta2")


def _check_seed(random_state) -> None:
    if isinstance(random_state, (bool, np.bool_)) or not (
            random_state is None or isinstance(random_state, (numbers.Integral,
                                                              np.random.SeedSequence,
                                                              np.random.RandomState,
                                                              np.random.Generator))):
        seed_sequence(random_state)  # raises the TypeError naming random_state
    if isinstance(random_state, numbers.Integral):
        seed_sequence(random_state)  # rejects negative seeds


def _check_lifetime(value, name="lifetime") -> float:
    return check_positive(value, name)


def _check_dense(n: int, what: str, n_matrices: int = 1) -> None:
    nbytes = 8.0 * n * n * n_matrices
    if nbytes > _MAX_DENSE_BYTES:
        kind = (f"a dense {n} x {n} matrix" if n_matrices == 1
                else f"{n_matrices} dense {n} x {n} matrices")
        raise ValueError(f"{what} would need {kind} ({nbytes / 1e9:.1f} GB); lower the "
                         f"lifetime or n_trees, set max_features, or use solver='sgd'.")


# --------------------------------------------------------------------------------------------
# the cells of stored trees at a lifetime
# --------------------------------------------------------------------------------------------


class _CellMap:
    """Mondrian trees in a :class:`TreeStore` (grown to ``store.lifetime``) truncated at
    ``lifetime <= store.lifetime``, with global cell ids.

    ``F[n, t]`` is the cell of store row ``n`` in tree ``t``; ``tree_of[c]`` the tree of cell
    ``c``.  Store rows keep their order: whoever builds the map knows which rows are labelled.
    """

    def __init__(self, store: TreeStore, lifetime: float, route: bool = True):
        self.store = store
        self.lifetime = float(lifetime)
        if not route:  # a bare holder of the trees (the sweeps number cells themselves)
            return
        T, cap = store.n_trees, store.inode.shape[1]
        self.feat_of_node = np.empty((T, cap), np.int64)
        self.tree_of = np.empty(max(16, int(store.meta[:, NNODES].sum())), np.int64)
        self.n_cells = core.number_cells(store.inode, store.fnode, store.meta, self.lifetime,
                                         self.feat_of_node, self.tree_of)
        n = store.n_points
        self.F = np.empty((n, T), np.int64)
        if n:
            p = np.empty((n, T))
            core.route_expected(store.X[:n], store.inode, store.fnode, store.box, store.meta,
                                self.lifetime, self.feat_of_node, self.F, p)

    @classmethod
    def grow(cls, X: np.ndarray, n_trees: int, lifetime: float, ss: np.random.SeedSequence,
             route: bool = True) -> "_CellMap":
        store = TreeStore(n_trees, X.shape[1], 1, lifetime, 1, TASK_STRUCTURE, ss,
                          capacity=max(16, X.shape[0]))
        store.fit(X, np.zeros(X.shape[0]))
        return cls(store, lifetime, route)

    @property
    def n_trees(self) -> int:
        return self.store.n_trees

    def truncate(self, lifetime: float) -> "_CellMap":
        """The same trees at a (smaller) lifetime, on a private copy of the store."""
        if lifetime > self.store.lifetime:
            raise ValueError(f"lifetime {lifetime} exceeds the lifetime the trees were grown to "
                             f"({self.store.lifetime}).")
        return _CellMap(copy.deepcopy(self.store), lifetime)

    def route(self, Xq: np.ndarray, mode: str = "expected", seed: int = 0):
        """Cell ids ``(n, T)`` and feature values ``(n, T)`` (``p_join * M^-1/2``) for
        ``mode="expected"``; for ``"sample"`` the values are all ``M^-1/2`` and a row split off
        in tree ``t`` gets id ``t - M`` (its fresh cell)."""
        s = self.store
        n, T = Xq.shape[0], s.n_trees
        feat = np.empty((n, T), np.int64)
        if mode == "expected":
            p = np.empty((n, T))
            core.route_expected(Xq, s.inode, s.fnode, s.box, s.meta, self.lifetime,
                                self.feat_of_node, feat, p)
            return feat, p / math.sqrt(T)
        core.route_sampled(Xq, s.inode, s.fnode, s.box, s.meta, self.lifetime,
                           self.feat_of_node, np.uint64(seed), -T, feat)
        return feat, np.full((n, T), 1.0 / math.sqrt(T))

    def extend(self, Xnew: np.ndarray) -> None:
        """Insert rows online (conditional Mondrian, spec §1.5b): at most one new cell per tree
        and row; old rows keep their cells.  Raises before any change on non-finite input."""
        s = self.store
        n_old = s.n_points
        b = Xnew.shape[0]
        T = s.n_trees
        s.extend(Xnew, np.zeros(b), np.zeros(s.n_features), np.ones(s.n_features))
        if s.inode.shape[1] > self.feat_of_node.shape[1]:
            self.feat_of_node = np.empty((T, s.inode.shape[1]), np.int64)
        F = np.empty((n_old + b, T), np.int64)
        F[:n_old] = self.F
        need = self.n_cells + T * b
        if need > self.tree_of.shape[0]:
            tree_of = np.empty(max(need, 2 * self.tree_of.shape[0]), np.int64)
            tree_of[: self.n_cells] = self.tree_of[: self.n_cells]
            self.tree_of = tree_of
        nxt = self.n_cells
        for t in range(T):
            nxt = core.relabel_tree(s.inode, s.fnode, s.meta, s.pnext, t, self.lifetime, F, n_old,
                                    n_old + b, self.feat_of_node, self.tree_of, nxt)
        self.F = F
        self.n_cells = nxt


def _csr(feat: np.ndarray, val: np.ndarray, n_cols: int, shift: int) -> sp.csr_matrix:
    n, T = feat.shape
    idx = feat + shift  # fresh cells (id t - M) land on column t
    m = sp.csr_matrix((val.ravel(), idx.ravel(), np.arange(0, n * T + 1, T)), shape=(n, n_cols))
    m.sort_indices()
    return m


# --------------------------------------------------------------------------------------------
# MondrianKernel: the feature map
# --------------------------------------------------------------------------------------------


class MondrianKernel(TransformerMixin, BaseEstimator):
    """Mondrian kernel random features (spec §1.6): a Laplace-kernel approximation of order M.

    ``fit`` samples ``n_trees`` independent Mondrian partitions up to ``lifetime`` (restricted
    to the data, which is exact by projectivity); ``transform`` maps each row to the cells it
    falls in, one per tree, with value ``M^-1/2``, so that
    ``transform(X) @ transform(Y).T`` estimates ``exp(-lifetime * |x - y|_1)`` without bias.

    Column layout: columns ``0..M-1`` are the *fresh* cells of the trees (cells that a new
    point is split off into by the conditional Mondrian; no fitted row is in them), columns
    ``M..M+C-1`` the ``C`` cells of the fitted rows.  ``partial_fit`` appends new cells at the
    end, so earlier columns keep their meaning.

    Parameters
    ----------
    n_trees : int, default=50
        Number of Mondrian samples ``M`` (= non-zeros per row).
    lifetime : float, default=1.0
        Lifetime ``lambda`` = inverse L1 length-scale of the approximated Laplace kernel.  It is
        scale dependent: a few times ``1 / median |x - x'|_1`` is a natural start (spec §3).
    extension : {"expected", "sample"}, default="expected"
        How rows outside the fitted cells' extents are treated (spec §1.7).  ``"expected"``:
        each row keeps exactly ``M`` stored entries, at the cell it is routed to, with value
        ``p_join * M^-1/2`` where ``p_join`` is the probability that an extension of the tree
        does not split it off (1 for rows inside the extents, in particular all fitted rows).
        Unbiased for the kernel between a new and a fitted row; deterministic.  ``"sample"``:
        that split-off is sampled (a fixed stream per row index), so every row has exactly
        ``M`` non-zeros of value ``M^-1/2``; a row split off in tree ``t`` lands in column
        ``t`` (tree ``t``'s fresh cell).  Two new rows split off in the same tree share that
        column, which overstates their mutual kernel; use ``"expected"`` for kernel values
        between new rows.  For the transductive mode of [code]/[R], fit on all rows.
    random_state : int, SeedSequence, RandomState, Generator or None, default=None
        Seeds the trees' independent streams (and the ``"sample"`` extension).

    Attributes
    ----------
    n_features_in_ : int
    n_cells_ : int
        ``C``, the number of cells (non-empty leaves) over all trees.
    n_features_out_ : int
        ``M + C``, the width of ``transform``'s output.
    tree_of_feature_ : ndarray of shape (n_features_out_,)
        Tree of each output column.
    """

    #: parameters applied by ``fit``; ``partial_fit`` refuses to go on after they changed
    _STRUCTURE = ("n_trees", "lifetime", "random_state")

    def __init__(self, n_trees=50, lifetime=1.0, extension="expected", random_state=None):
        self.n_trees = n_trees
        self.lifetime = lifetime
        self.extension = extension
        self.random_state = random_state

    def _check_params(self):
        check_int(self.n_trees, "n_trees", 1)
        _check_lifetime(self.lifetime)
        check_choice(self.extension, "extension", {"expected", "sample"})
        _check_seed(self.random_state)

    def fit(self, X, y=None):
        """Sample the ``n_trees`` Mondrian partitions of the rows of ``X`` up to ``lifetime``."""
        self._check_params()
        names = feature_names(X)
        X = check_X(X, "X", estimator=self)
        ss = seed_sequence(self.random_state)
        tree_ss, sample_ss = ss.spawn(2)
        self._map = _CellMap.grow(X, self.n_trees, self.lifetime, tree_ss)
        self._sample_seed = int(sample_ss.generate_state(1, np.uint64)[0])
        self.n_features_in_ = X.shape[1]
        set_feature_names(self, names)
        self._fit_params = {k: getattr(self, k) for k in self._STRUCTURE}
        return self

    def partial_fit(self, X, y=None):
        """Extend the partitions by new rows (conditional Mondrian, same distribution as a
        refit); each row adds at most one new cell (column) per tree."""
        if not hasattr(self, "_map"):
            return self.fit(X)
        self._check_params()
        check_unchanged(self, self.__dict__.get("_fit_params"))
        X = check_X(X, "X", self.n_features_in_, estimator=self, check_finite=False)
        self._map.extend(X)
        return self

    @property
    def n_cells_(self) -> int:
        check_is_fitted(self, "_map")
        return self._map.n_cells

    @property
    def n_features_out_(self) -> int:
        return self.n_trees_ + self.n_cells_

    @property
    def n_trees_(self) -> int:
        check_is_fitted(self, "_map")
        return self._map.n_trees

    @property
    def tree_of_feature_(self) -> np.ndarray:
        m = self._map
        return np.concatenate([np.arange(m.n_trees), m.tree_of[: m.n_cells]])

    def transform(self, X) -> sp.csr_matrix:
        """Sparse CSR features, shape ``(n_samples, n_features_out_)``, ``M`` entries per row."""
        check_is_fitted(self, "_map")
        check_choice(self.extension, "extension", {"expected", "sample"})
        X = check_X(X, "X", self.n_features_in_, estimator=self)
        feat, val = self._map.route(X, self.extension, self._sample_seed)
        T = self._map.n_trees
        return _csr(feat, val, T + self._map.n_cells, T)

    def kernel(self, X, Y=None) -> np.ndarray:
        """The approximate Gram matrix ``k_M(X, Y) = transform(X) @ transform(Y).T`` (dense)."""
        ZX = self.transform(X)
        ZY = ZX if Y is None else self.transform(Y)
        return (ZX @ ZY.T).toarray()

    def get_feature_names_out(self, input_features=None) -> np.ndarray:
        check_is_fitted(self, "_map")
        m = self._map
        fresh = [f"mondrian_t{t}_fresh" for t in range(m.n_trees)]
        cells = [f"mondrian_t{t}_c{c}" for c, t in enumerate(m.tree_of[: m.n_cells])]
        return np.asarray(fresh + cells, dtype=object)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = []
        tags.input_tags.sparse = False
        return tags


# --------------------------------------------------------------------------------------------
# MondrianKernelRidge: ridge / Bayesian linear regression on the features
# --------------------------------------------------------------------------------------------


class MondrianKernelRidge(RegressorMixin, BaseEstimator):
    """Ridge regression on Mondrian kernel features, read as Bayesian linear regression.

    Model (spec §1.8): ``y - mean(y) = Phi w + noise``, ``w ~ N(0, prior_variance I)``, noise
    variance ``prior_variance * delta2``; the posterior mean is the ridge solution
    ``w = (Phi^T Phi + delta2 I)^-1 Phi^T (y - mean(y))`` (sum form).  Predictions for new
    points integrate over the conditional-Mondrian extension of the trees (spec §1.7 mode 3): in
    tree ``t`` the point joins its routed cell with probability ``p_t`` and otherwise lands in a
    fresh cell, whose weight has the prior ``N(0, prior_variance)``; so the predictive standard
    deviation grows away from the data towards ``sqrt(prior_variance * (1 + delta2))``.

    Parameters
    ----------
    n_trees : int, default=50
        Number of Mondrian samples ``M``.
    lifetime : float, default=1.0
        Lifetime (inverse L1 length-scale) of the approximated Laplace kernel.
    delta2 : float or None, default=None
        Ridge constant in sum form, ``min |y - Phi w|^2 + delta2 |w|^2``; ``None`` means
        ``1e-4`` ([P]) unless ``alpha`` is given.
    alpha : float or None, default=None
        Mean-form constant (scikit-learn's SGD ``alpha``): ``delta2 = n_samples * alpha`` at
        ``fit`` (spec A2).  Give at most one of ``delta2`` and ``alpha``.
    solver : {"auto", "primal", "dual", "sgd"}, default="auto"
        ``"primal"``: explicit ``(Phi^T Phi + delta2 I)^-1`` (``C x C``); ``"dual"``: explicit
        ``(Phi Phi^T + delta2 I)^-1`` (``N x N``); ``"auto"`` picks the smaller.  Both are exact,
        give ``return_std`` and the marginal likelihood, and are updated exactly by
        ``partial_fit`` (recursive least squares, O(C^2) resp. O(N^2) per row, spec §1.13).
        ``"sgd"``: scikit-learn's SGD update (squared loss, L2 ``alpha = delta2 / N``,
        ``invscaling`` rate) for ``sgd_epochs`` epochs, O(M) per step; no ``return_std``.
    prior_variance : float or "auto", default=1.0
        Prior variance of each weight ([P] §4.2.1 uses 1).  ``"auto"`` uses its maximum
        marginal-likelihood value ``y^T (Phi Phi^T + delta2 I)^-1 y / N`` (exact solvers).
    sgd_epochs : int, default=10
        Epochs of ``fit`` with ``solver="sgd"`` ([P] §8.2 retrains baselines with 10).
    eta0, power_t : float, default=0.01, 0.25
        SGD learning rate ``eta0 / t^power_t`` (old scikit-learn defaults used by [code]).
    random_state : int, SeedSequence, RandomState, Generator or None, default=None

    Attributes
    ----------
    n_features_in_ : int
    n_cells_ : int
        Number of cells (features) ``C``.
    coef_ : ndarray of shape (n_cells_,)
        Weights ``w`` (posterior mean).
    intercept_ : float
        The target mean.
    solver_ : str
        The solver in use.
    delta2_ : float
        The sum-form ridge constant in use.
    log_marginal_likelihood_ : float
        ``log p(y | X, lifetime)`` with the ``-(N - C)/2 log delta2`` term kept (spec A4).
    """

    #: parameters applied by ``fit``; ``partial_fit`` refuses to go on after they changed
    _STRUCTURE = ("n_trees", "lifetime", "delta2", "alpha", "solver", "random_state")

    def __init__(self, n_trees=50, lifetime=1.0, delta2=None, alpha=None, solver="auto",
                 prior_variance=1.0, sgd_epochs=10, eta0=0.01, power_t=0.25, random_state=None):
        self.n_trees = n_trees
        self.lifetime = lifetime
        self.delta2 = delta2
        self.alpha = alpha
        self.solver = solver
        self.prior_variance = prior_variance
        self.sgd_epochs = sgd_epochs
        self.eta0 = eta0
        self.power_t = power_t
        self.random_state = random_state

    # -- parameters ---------------------------------------------------------------------------
    def _check_params(self):
        check_int(self.n_trees, "n_trees", 1)
        _check_lifetime(self.lifetime)
        check_choice(self.solver, "solver", {"auto", "primal", "dual", "sgd"})
        if not (isinstance(self.prior_variance, str) and self.prior_variance == "auto"):
            if isinstance(self.prior_variance, str):
                raise ValueError(f"prior_variance must be a positive number or 'auto', got "
                                 f"{self.prior_variance!r}.")
            check_positive(self.prior_variance, "prior_variance")
        check_int(self.sgd_epochs, "sgd_epochs", 1)
        check_positive(self.eta0, "eta0")
        if isinstance(self.power_t, bool) or not isinstance(self.power_t, numbers.Real) \
                or not 0 <= self.power_t < 10:
            raise ValueError(f"power_t must be a number in [0, 10), got {self.power_t!r}.")
        _resolve_delta2(self.delta2, self.alpha, 1)
        _check_seed(self.random_state)

    # -- fitting ------------------------------------------------------------------------------
    def fit(self, X, y, X_unlabeled=None):
        """Sample the trees and solve for the weights.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        X_unlabeled : array-like of shape (n_unlabeled, n_features) or None, default=None
            Rows that shape the partition without a label (transductive mode of [code] and
            [R], spec A10), e.g. the validation and test inputs.
        """
        self._check_params()
        names = feature_names(X)
        X = check_X(X, "X", estimator=self)
        yy = check_target(y, X.shape[0], "y")
        rows = X
        if X_unlabeled is not None:
            Xu = check_X(X_unlabeled, "X_unlabeled", X.shape[1], estimator=self, names=names)
            rows = np.vstack([X, Xu])
        ss = seed_sequence(self.random_state)
        tree_ss, sgd_ss = ss.spawn(2)
        cmap = _CellMap.grow(rows, self.n_trees, self.lifetime, tree_ss)
        self.n_features_in_ = X.shape[1]
        set_feature_names(self, names)
        self._fit_map(cmap, np.arange(X.shape[0]), yy, sgd_ss)
        return self

    def _fit_map(self, cmap: _CellMap, rows_lab: np.ndarray, y: np.ndarray, sgd_ss,
                 delta2: float | None = None) -> None:
        """Solve on given cells; ``rows_lab`` are the labelled store rows, ``y`` their targets."""
        N = rows_lab.shape[0]
        C = cmap.n_cells
        if self.solver == "primal" or (self.solver == "auto" and C <= N):
            _check_dense(C, "solver='primal'")  # before any state changes
        elif self.solver != "sgd":
            _check_dense(N, "solver='dual'")
        self._map = cmap
        self._rows = np.asarray(rows_lab, np.int64).copy()
        self._y = np.asarray(y, np.float64).copy()
        self.delta2_ = delta2 if delta2 is not None else _resolve_delta2(self.delta2,
                                                                          self.alpha, N)
        C = cmap.n_cells
        solver = self.solver
        if solver == "auto":
            solver = "primal" if C <= N else "dual"
        self.solver_ = solver
        self.intercept_ = float(self._y.mean())
        T = cmap.n_trees
        Flab = cmap.F[self._rows]
        d2 = self.delta2_
        if solver == "primal":
            _check_dense(C, "solver='primal'")
            A = np.zeros((C, C))
            core.gram_primal(Flab, np.ones(N), C, A)
            A[np.diag_indices(C)] += d2
            self._R = scipy.linalg.cholesky(A, lower=False)
            self._s = np.bincount(Flab.ravel(), weights=np.repeat(self._y, T),
                                  minlength=C) / math.sqrt(T)
            self._nvec = np.bincount(Flab.ravel(), minlength=C) / math.sqrt(T)
        elif solver == "dual":
            _check_dense(N, "solver='dual'")
            K = np.empty((N, N))
            core.shared_cells(Flab, Flab, K)
            K[np.diag_indices(N)] += d2
            self._R = scipy.linalg.cholesky(K, lower=False)
        else:
            self._w = np.zeros(C)
            self._alpha_sgd = d2 / N
            self._rng = _core_rng(sgd_ss)
            yc = np.zeros(cmap.F.shape[0])
            yc[self._rows] = self._y - self.intercept_
            self._t = core.sgd_epochs(cmap.F, self._rows, yc, self._w, self._alpha_sgd,
                                      float(self.eta0), float(self.power_t),
                                      int(self.sgd_epochs), 1.0, self._rng, True)
        self._stale = True
        self._solve()
        self._fit_params = {k: getattr(self, k) for k in self._STRUCTURE}

    def partial_fit(self, X, y):
        """Add rows online: extend the trees (at most one new cell per tree and row), then
        update the exact solution by recursive least squares (the result equals a batch solve
        on the same trees), or take one SGD pass over the new rows (``solver="sgd"``, rate
        schedule continued, target mean frozen at the first fit)."""
        if not hasattr(self, "_map"):
            return self.fit(X, y)
        self._check_params()
        check_unchanged(self, self.__dict__.get("_fit_params"))
        X = check_X(X, "X", self.n_features_in_, estimator=self, check_finite=False)
        yy = check_target(y, X.shape[0], "y")
        cmap = self._map
        n_old = cmap.store.n_points
        C_old = cmap.n_cells
        if self.solver_ == "primal":  # refuse before any state changes
            _check_dense(C_old + cmap.n_trees * X.shape[0], "solver='primal'")
        elif self.solver_ == "dual":
            _check_dense(self._rows.shape[0] + X.shape[0], "solver='dual'")
        cmap.extend(X)  # validates finiteness before touching anything
        new_rows = np.arange(n_old, n_old + X.shape[0])
        C = cmap.n_cells
        T = cmap.n_trees
        d2 = self.delta2_
        scale = 1.0 / math.sqrt(T)
        if self.solver_ == "primal":
            _check_dense(C, "solver='primal'")
            R = np.zeros((C, C))
            R[:C_old, :C_old] = self._R
            R[np.arange(C_old, C), np.arange(C_old, C)] = math.sqrt(d2)  # empty new cells
            x = np.zeros(C)
            for r in new_rows:  # A += phi phi^T, one stable rank-one update per row
                x[:] = 0.0
                x[cmap.F[r]] = scale
                core.chol_update(R, C, x)
            self._R = R
            s = np.zeros(C)
            s[:C_old] = self._s
            nv = np.zeros(C)
            nv[:C_old] = self._nvec
            np.add.at(s, cmap.F[new_rows].ravel(), np.repeat(yy, T) * scale)
            np.add.at(nv, cmap.F[new_rows].ravel(), scale)
            self._s, self._nvec = s, nv
        elif self.solver_ == "dual":
            N = self._rows.shape[0]
            n_new = len(new_rows)
            _check_dense(N + n_new, "solver='dual'")
            R = np.zeros((N + n_new, N + n_new))
            R[:N, :N] = self._R
            Flab = np.vstack([cmap.F[self._rows], cmap.F[new_rows]])
            for i, r in enumerate(new_rows):  # border the factor of K + delta2 I
                krow = np.empty((1, N + i))
                core.shared_cells(cmap.F[r][None, :], Flab[: N + i], krow)
                core.chol_append(R, N + i, krow[0], 1.0 + d2, d2)
            self._R = R
        else:
            w = np.zeros(C)
            w[:C_old] = self._w
            self._w = w
            yc = np.zeros(cmap.F.shape[0])
            yc[new_rows] = yy - self.intercept_
            self._t = core.sgd_epochs(cmap.F, new_rows, yc, self._w, self._alpha_sgd,
                                      float(self.eta0), float(self.power_t), 1, self._t,
                                      self._rng, False)
        self._rows = np.concatenate([self._rows, new_rows])
        self._y = np.concatenate([self._y, yy])
        if self.solver_ != "sgd":
            self.intercept_ = float(self._y.mean())
        self._stale = True
        self._solve()
        return self

    # -- the solution -------------------------------------------------------------------------
    def _solve(self):
        if not self._stale:
            return
        cmap = self._map
        T = cmap.n_trees
        yc = self._y - self.intercept_
        self._cache = {}  # the explicit inverse for predictive variances, made on demand
        if self.solver_ == "primal":
            b = self._s - self.intercept_ * self._nvec
            beta = scipy.linalg.solve_triangular(self._R, b, trans="T")
            self._coef = scipy.linalg.solve_triangular(self._R, beta)
            self._quad = (float(yc @ yc) - float(beta @ beta)) / self.delta2_
        elif self.solver_ == "dual":
            beta = scipy.linalg.solve_triangular(self._R, yc, trans="T")
            alpha = scipy.linalg.solve_triangular(self._R, beta)
            Flab = cmap.F[self._rows]
            self._coef = np.bincount(Flab.ravel(), weights=np.repeat(alpha, T),
                                     minlength=cmap.n_cells) / math.sqrt(T)
            self._quad = float(beta @ beta)
        else:
            self._coef = self._w.copy()
            self._quad = np.nan
        if self.solver_ != "sgd":
            self._logdet = 2.0 * float(np.log(np.diag(self._R)).sum())
        self._stale = False

    @property
    def coef_(self) -> np.ndarray:
        check_is_fitted(self, "_map")
        self._solve()
        return self._coef

    @property
    def n_cells_(self) -> int:
        check_is_fitted(self, "_map")
        return self._map.n_cells

    def _prior_var(self) -> float:
        if isinstance(self.prior_variance, str):
            return self._quad / self._y.shape[0]
        return float(self.prior_variance)

    @property
    def log_marginal_likelihood_(self) -> float:
        check_is_fitted(self, "_map")
        if self.solver_ == "sgd":
            raise AttributeError("log_marginal_likelihood_ needs an exact solver "
                                 "('primal', 'dual' or 'auto'), not 'sgd'.")
        self._solve()
        N = self._y.shape[0]
        s2 = self._prior_var()
        logdet = self._logdet
        if self.solver_ == "primal":  # det(K + d2 I) = det(A) d2^(N - C)
            logdet += (N - self._map.n_cells) * math.log(self.delta2_)
        return float(-0.5 * self._quad / s2 - 0.5 * logdet - 0.5 * N * math.log(2 * math.pi * s2))

    # -- prediction ---------------------------------------------------------------------------
    def _query(self, X):
        check_is_fitted(self, "_map")
        X = check_X(X, "X", self.n_features_in_, estimator=self)
        return self._map.route(X, "expected")

    def predict(self, X, return_std: bool = False):
        """Predictive mean (the ridge prediction averaged over tree extensions), and with
        ``return_std`` the standard deviation of the Bayesian predictive (exact solvers)."""
        feat, val = self._query(X)
        self._solve()
        w = self._coef
        mean = self.intercept_ + (val * w[feat]).sum(axis=1)
        if not return_std:
            return mean
        if self.solver_ == "sgd":
            raise ValueError("return_std=True needs an exact solver ('primal', 'dual' or "
                             "'auto'), not 'sgd'.")
        T = self._map.n_trees
        p = val * math.sqrt(T)  # p_join per tree
        d2 = self.delta2_
        diag, quad = self._inverse_terms(feat, val)
        # E over the extension of phi^T A^-1 phi: joined cells (correlated), plus fresh cells
        # with the prior's inverse 1/delta2 (spec §1.7 mode 3 with the fresh-cell weights)
        e_quad = quad + ((p - p * p) * diag).sum(axis=1) / T + (1.0 - p).sum(axis=1) / (T * d2)
        var_ext = (p * (1.0 - p) * w[feat] ** 2).sum(axis=1) / T
        var = self._prior_var() * d2 * (1.0 + e_quad) + var_ext
        return mean, np.sqrt(var)

    def _inverse_terms(self, feat, val):
        """``A^-1[c, c]`` at each routed cell, and ``v^T A^-1 v`` for the value rows ``v``."""
        n, T = feat.shape
        quad = np.empty(n)
        if self.solver_ == "primal":
            Ainv = self._cache.get("Ainv")
            if Ainv is None:  # explicit inverse once per data change: O(C^3)
                C = self._R.shape[0]
                Ainv = self._cache["Ainv"] = scipy.linalg.cho_solve((self._R, False), np.eye(C))
            core.quad_forms(feat, val, Ainv, quad)
            return Ainv[feat, feat], quad
        # dual, by Woodbury: A^-1 = (I - Phi^T (K + delta2 I)^-1 Phi) / delta2
        d2 = self.delta2_
        Flab = self._map.F[self._rows]
        Kw = _weighted_shared(feat, val, Flab)  # rows of Phi_q Phi_lab^T
        Z = scipy.linalg.solve_triangular(self._R, Kw.T, trans="T")
        quad = ((val * val).sum(axis=1) - (Z * Z).sum(axis=0)) / d2
        # per routed cell c: (1 - |R^-T z_c|^2 / M) / delta2, z_c the indicator of c's rows
        cells = np.unique(feat)
        tr = self._map.tree_of[cells]
        Zc = (Flab[:, tr] == cells[None, :]).astype(np.float64)
        Zc = scipy.linalg.solve_triangular(self._R, Zc, trans="T")
        diag_c = (1.0 - (Zc * Zc).sum(axis=0) / T) / d2
        diag = diag_c[np.searchsorted(cells, feat)]
        return diag, quad

    # -- misc ---------------------------------------------------------------------------------
    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = False
        # the paper's SGD settings (eta0 = 0.01, 10 epochs) underfit small problems
        tags.regressor_tags.poor_score = self.solver == "sgd"
        return tags


def _weighted_shared(feat, val, Flab):
    """``out[i, n] = sum_t val[i, t] [Flab[n, t] == feat[i, t]] / sqrt(M)``."""
    n, T = feat.shape
    out = np.zeros((n, Flab.shape[0]))
    for t in range(T):
        eq = Flab[None, :, t] == feat[:, t, None]
        out += eq * val[:, t, None]
    return out / math.sqrt(T)


def _core_rng(ss: np.random.SeedSequence) -> np.ndarray:
    from ._rng import seed_states
    return seed_states(ss, 1)


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
