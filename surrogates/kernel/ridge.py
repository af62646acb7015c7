"""Ridge regression on Mondrian kernel features, and its reading as Bayesian linear regression
(Balog et al., 2016): exact (primal or dual) or SGD solvers, ``partial_fit`` online, predictive
std and the log marginal likelihood."""

from __future__ import annotations

import math
import numbers

import numpy as np
import scipy.linalg
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import check_is_fitted

from .._core.scaling import target_exponent, unscale
from .._core.validation import (check_choice, check_int, check_positive, check_target,
                                check_unchanged, check_X, feature_names, set_feature_names,
                                seed_sequence)
from . import _kernels as core
from ._common import _check_dense, _check_lifetime, _check_seed, _core_rng, _resolve_delta2
from .features import _CellMap


# --------------------------------------------------------------------------------------------
# MondrianKernelRidge: ridge / Bayesian linear regression on the features
# --------------------------------------------------------------------------------------------


class MondrianKernelRidge(RegressorMixin, BaseEstimator):
    """Ridge regression on Mondrian kernel features, read as Bayesian linear regression.

    Model (Balog et al., 2016, Section 4.2.1): ``y - mean(y) = Phi w + noise``,
    ``w ~ N(0, prior_variance I)``, noise variance ``prior_variance * delta2``; the posterior
    mean is the ridge solution ``w = (Phi^T Phi + delta2 I)^-1 Phi^T (y - mean(y))`` (sum
    form).  Predictions for new points integrate over the conditional-Mondrian extension of
    the trees (as :class:`MondrianKernel` with ``extension="expected"``): in tree ``t`` the
    point joins its routed cell with probability ``p_t`` and otherwise lands in a fresh cell,
    whose weight has the prior ``N(0, prior_variance)``; so the predictive standard deviation
    grows away from the data towards ``sqrt(prior_variance * (1 + delta2))``.

    Parameters
    ----------
    n_trees : int, default=50
        Number of Mondrian samples ``M``.
    lifetime : float, default=1.0
        Lifetime (inverse L1 length-scale) of the approximated Laplace kernel.
    delta2 : float or None, default=None
        Ridge constant in sum form, ``min |y - Phi w|^2 + delta2 |w|^2``; ``None`` means
        ``1e-4``, the value of Balog et al. (2016, Section 8), unless ``alpha`` is given.
    alpha : float or None, default=None
        Mean-form constant (scikit-learn's SGD ``alpha``): ``delta2 = n_samples * alpha`` at
        ``fit``.  Give at most one of ``delta2`` and ``alpha``.  Both forms are offered because
        the paper's ``1e-4`` is a sum-form constant, while the authors' reference code passes
        ``1e-4`` to scikit-learn's SGD as the mean-form ``alpha``, a ridge ``n_samples`` times
        stronger.
    solver : {"auto", "primal", "dual", "sgd"}, default="auto"
        ``"primal"``: explicit ``(Phi^T Phi + delta2 I)^-1`` (``C x C``); ``"dual"``: explicit
        ``(Phi Phi^T + delta2 I)^-1`` (``N x N``); ``"auto"`` picks the smaller.  Both are exact,
        give ``return_std`` and the marginal likelihood, and are updated exactly by
        ``partial_fit`` (recursive least squares, O(C^2) resp. O(N^2) per row; Balog et al.,
        2016, Section 5).
        ``"sgd"``: scikit-learn's SGD update (squared loss, L2 ``alpha = delta2 / N``,
        ``invscaling`` rate) for ``sgd_epochs`` epochs, O(M) per step; no ``return_std``.
    prior_variance : float or "auto", default=1.0
        Prior variance of each weight (Balog et al., 2016, Section 4.2.1, use 1).  ``"auto"``
        uses its maximum marginal-likelihood value ``y^T (Phi Phi^T + delta2 I)^-1 y / N``
        (exact solvers).
    sgd_epochs : int, default=10
        Epochs of ``fit`` with ``solver="sgd"`` (Balog et al., 2016, Section 8.2, retrain
        their baselines with 10).
    eta0, power_t : float, default=0.01, 0.25
        SGD learning rate ``eta0 / t^power_t`` (the scikit-learn defaults of the authors'
        reference code).
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
        ``log p(y | X, lifetime)`` with the ``-(N - C)/2 log delta2`` term kept: Balog et al.
        (2016, Section 4.2.1) fold it into a constant, but it depends on the lifetime through
        ``C``, so comparing lifetimes needs it.

    Notes
    -----
    Targets of any finite magnitude are fitted: beyond about 2.6e120 the model holds them
    divided by a power of two (exactly; the same solution) and maps its results back.  A number
    ``prior_variance`` is in the targets' units squared, so with such targets the log marginal
    likelihood may be below float64's range (-inf); ``"auto"`` follows the targets' scale.
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
            Rows that shape the partition without a label, e.g. the validation and test
            inputs, which the authors' reference code partitions together with the training
            rows.  Labels never shape the partition, so the training rows' cells keep their
            distribution.
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
        y = np.asarray(y, np.float64)
        # targets beyond Y_LIMIT are held divided by 2^k (exactly; see _core.scaling): their
        # sums of squares would overflow, the solution in those units does not
        k = self._y_exp = target_exponent(y)
        self._y = np.ldexp(y, -k) if k else y.copy()
        self.delta2_ = delta2 if delta2 is not None else _resolve_delta2(self.delta2,
                                                                          self.alpha, N)
        C = cmap.n_cells
        solver = self.solver
        if solver == "auto":
            solver = "primal" if C <= N else "dual"
        self.solver_ = solver
        self.intercept_ = unscale(float(self._y.mean()), k)
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
            yc[self._rows] = self._y - self._stored_intercept()
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
        yy = self._store_targets(yy)
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
            yc[new_rows] = yy - self._stored_intercept()
            self._t = core.sgd_epochs(cmap.F, new_rows, yc, self._w, self._alpha_sgd,
                                      float(self.eta0), float(self.power_t), 1, self._t,
                                      self._rng, False)
        self._rows = np.concatenate([self._rows, new_rows])
        self._y = np.concatenate([self._y, yy])
        if self.solver_ != "sgd":
            self.intercept_ = unscale(float(self._y.mean()), self.__dict__.get("_y_exp", 0))
        self._stale = True
        self._solve()
        return self

    # -- targets beyond Y_LIMIT, held divided by 2^_y_exp --------------------------------------
    def _stored_intercept(self) -> float:
        """``intercept_`` in the units of the stored targets."""
        k = self.__dict__.get("_y_exp", 0)
        return math.ldexp(self.intercept_, -k) if k else self.intercept_

    def _store_targets(self, yy):
        """New targets ``yy`` in the stored units.  Targets far larger than any before divide
        everything held in target units by a further power of two first (exactly; nothing
        else changes)."""
        k = self.__dict__.get("_y_exp", 0)
        k_new = max(k, target_exponent(yy))
        if k_new != k:
            shift = k - k_new
            self._y = np.ldexp(self._y, shift)
            if self.solver_ == "primal":
                self._s = np.ldexp(self._s, shift)
            elif self.solver_ == "sgd":
                self._w = np.ldexp(self._w, shift)
            self._y_exp = k_new
        return np.ldexp(yy, -k_new) if k_new else yy

    # -- the solution -------------------------------------------------------------------------
    def _solve(self):
        if not self._stale:
            return
        cmap = self._map
        T = cmap.n_trees
        ybar = self._stored_intercept()
        yc = self._y - ybar
        self._cache = {}  # the explicit inverse for predictive variances, made on demand
        if self.solver_ == "primal":
            b = self._s - ybar * self._nvec
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
        return unscale(self._coef, self.__dict__.get("_y_exp", 0))

    @property
    def n_cells_(self) -> int:
        check_is_fitted(self, "_map")
        return self._map.n_cells

    def _prior_var(self) -> float:
        """The prior variance: ``"auto"``'s in the units of the stored targets squared, a
        given one in the targets' units squared."""
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
        k = self.__dict__.get("_y_exp", 0)
        if not k:
            return float(-0.5 * self._quad / s2 - 0.5 * logdet
                         - 0.5 * N * math.log(2 * math.pi * s2))
        if isinstance(self.prior_variance, str):
            # s2 follows the stored targets; the density of the targets is 2^-kN theirs
            return float(-0.5 * self._quad / s2 - 0.5 * logdet
                         - 0.5 * N * math.log(2 * math.pi * s2) - N * k * math.log(2.0))
        # a given s2 is in the targets' units: their quadratic form is 4^k the stored one
        # (below float64's range, -inf, for targets far larger than sqrt(s2))
        return float(unscale(-0.5 * self._quad / s2, 2 * k) - 0.5 * logdet
                     - 0.5 * N * math.log(2 * math.pi * s2))

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
        k = self.__dict__.get("_y_exp", 0)
        mean = unscale(self._stored_intercept() + (val * w[feat]).sum(axis=1), k)
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
        # with the prior's inverse 1/delta2 (their weights keep the prior)
        e_quad = quad + ((p - p * p) * diag).sum(axis=1) / T + (1.0 - p).sum(axis=1) / (T * d2)
        var_ext = (p * (1.0 - p) * w[feat] ** 2).sum(axis=1) / T
        prior = self._prior_var() * d2 * (1.0 + e_quad)
        if k and not isinstance(self.prior_variance, str):
            # a given prior variance is in the targets' units squared, the spread of the
            # weights in those of the stored targets: added as standard deviations, so that
            # neither is lost to overflow or underflow
            return mean, np.hypot(np.sqrt(prior), unscale(np.sqrt(var_ext), k))
        var = prior + var_ext
        return mean, unscale(np.sqrt(var), k)

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
