"""The Mondrian grid (Balog & Teh, 2015: Section 5 of Balog's Oxford project report *The
Mondrian Process in Machine Learning*, supervised by Teh, and Figs. 4-5 of their poster
*Efficient Laplace kernel approximation with a Mondrian process*).

``M`` independent grids, each made of ``D`` independent 1-D Mondrian processes (one per input
dimension, with its own lifetime ``lambda_d``); a point's features are the indicators of its
grid cells scaled by ``M^-1/2``, so that ``phi(x)' phi(x')`` is an unbiased estimate of the
anisotropic Laplace kernel ``exp(-sum_d lambda_d |x_d - x'_d|)``.  A Bayesian linear
regression (ridge) on these features is kept up to date through O(C^2) inverse updates while
single lifetimes move up (cells split) or down (cells merge), which makes the greedy
lifetime-configuration search of the report (Section 5.2, poster Fig. 5) cheap.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, RegressorMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from . import _kernels as core
from .._core.scaling import unscale
from .._core.validation import check_choice, check_int, check_positive, check_target, check_X, \
    feature_names, seed_sequence, set_feature_names
from ..metrics import rmse
from ._state import _GridState, _serial_blas

__all__ = ["GridExploration", "MondrianGrid"]


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
        """Dimensions whose best lifetime is at least ``eps`` (the feature selection of Balog
        & Teh, 2015, Section 5.2)."""
        return np.flatnonzero(self.best_lifetimes >= eps)


class MondrianGrid(RegressorMixin, TransformerMixin, BaseEstimator):
    """Mondrian grid features with Bayesian linear regression and per-dimension lifetimes.

    Each of ``n_grids`` grids cuts every input axis by an independent 1-D Mondrian (Poisson)
    process whose lifetime ``lambda_d`` belongs to the dimension; the features of a point are
    the indicators of its cells, scaled by ``n_grids^-1/2`` (Balog & Teh, 2015, Section 5),
    so the implied kernel tends to ``exp(-sum_d lambda_d |x_d - x'_d|)`` as ``n_grids``
    grows.  On them sits ridge regression / Bayesian linear regression with prior
    ``w ~ N(0, s I)`` and noise variance ``s * delta2`` (as for the Mondrian kernel, Balog et
    al., 2016, Section 4.2.1), on targets centred at their training mean.

    Lifetimes can be moved one dimension at a time after fitting (:meth:`increase`,
    :meth:`decrease`, :meth:`set_lifetimes`): raising ``lambda_d`` adds cuts (cells split),
    lowering it removes exactly the cuts added last, and the model follows through O(C^2)
    inverse updates instead of an O(C^3) refit (Balog & Teh, 2015, Section 5.1).
    :meth:`explore` is the greedy lifetime-configuration search of the report (Section 5.2;
    poster Fig. 5).

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
        Ridge constant in sum form: ``w = (Phi'Phi + delta2 I)^-1 Phi'y``; the
        noise-to-prior variance ratio.  The default is the poster's ``delta = 0.1``.
    prior_var : float or "ml", default=1.0
        Prior variance ``s`` of the weights (1 as in Balog et al., 2016, Section 4.2.1); it
        scales the predictive variance and the marginal likelihood but not the mean.  ``"ml"``
        uses its closed-form maximum-marginal-likelihood value for the current configuration.
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
        Log marginal likelihood of the centred training targets, with the
        ``-(N - C)/2 log delta2`` term kept (it depends on the lifetimes through ``C``).
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
    The report partitions the training and validation rows together and builds ``A`` from
    both, while it solves with the training targets only; here ``A = Phi_tr' Phi_tr +
    delta2 I`` comes from the training rows, the ridge problem whose solution is used.  Cells
    with validation rows but no training rows then carry weight 0, so they are simply not
    columns; predictions are the same.  Which points define the partition therefore does not
    matter: the cuts are a function of the seed and the training range alone, so the
    inductive and the transductive (train + validation) partitions agree on every shared
    point.

    Targets of any finite magnitude are fitted: beyond about 2.6e120 the model holds them
    divided by a power of two (exactly; the same model) and maps its results back.  A number
    ``prior_var`` is in the targets' units squared, so with such targets the log marginal
    likelihood may be below float64's range (-inf); ``"ml"`` follows the targets' scale.
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
        st = self._st()
        return unscale(st.w.copy(), st.y_exp)

    @property
    def intercept_(self) -> float:
        st = self._st()
        return unscale(st.y_mean, st.y_exp)

    def _stored_prior_var(self, st) -> tuple[float, bool]:
        """The prior variance in use and whether it is in the units of the stored targets
        squared (the ``"ml"`` value, which follows the targets) rather than the targets'."""
        if isinstance(self.prior_var, str):
            return st.ml_prior_var(), True
        return float(self.prior_var), False

    @property
    def prior_var_(self) -> float:
        st = self._st()
        s, stored = self._stored_prior_var(st)
        return unscale(s, 2 * st.y_exp) if stored else s

    @property
    def log_marginal_likelihood_(self) -> float:
        st = self._st()
        return st.log_ml(*self._stored_prior_var(st))

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
        the row has no training cell (their weights keep the prior)."""
        st, pos = self._positions(X)
        s, stored = self._stored_prior_var(st)
        mean, var = st.predict_positions(pos, s, return_std)
        # the mean, and the variance of an "ml" prior, are in the units of the stored targets
        mean = unscale(mean, st.y_exp)
        if return_std:
            return mean, unscale(np.sqrt(var), st.y_exp if stored else 0)
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
        distinct training coordinates of dimension ``d``, over all grids (the events of Balog
        & Teh, 2015, Section 5.1): the lifetimes at which the partition of the training rows
        can change.  Configurations with ``k`` of them active have ``lifetimes_[d]`` in
        ``[times[k-1], times[k])``."""
        st = self._st()
        d = self._check_dim(d)
        t = st.ev_t[d]
        return t[np.isfinite(t)].copy()

    # -- greedy search (Balog & Teh, 2015, Section 5.2; poster Fig. 5) ----------------------
    @_serial_blas
    def explore(self, X_val=None, y_val=None, *, criterion: str | None = None,
                max_steps: int = 100, patience: int = 10, allow_decrease: bool = False,
                max_cells: int | None = None) -> GridExploration:
        """Greedy lifetime-configuration search from the current lifetimes.

        At each step every dimension's next effective cut (and with ``allow_decrease`` also
        the removal of its latest one, the report's Fig. 5.6 variant) is tried with
        incremental updates; the move with the best criterion is kept.  Ties are broken at
        random, with a generator seeded by ``random_state``.  The report gives no stopping
        rule; here the search stops after ``max_steps`` steps, after ``patience`` steps
        without a new best, or when no move is left, and the model is left at the best
        configuration seen.

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
            pv, stored = self._stored_prior_var(s)
            lml = s.log_ml(pv, stored)
            k = s.y_exp
            if loc is not None:
                mean, _ = s.predict_positions(s.query(loc), pv, False)
                vr = rmse(y_val, unscale(mean, k))
            else:
                vr = np.nan
            tr = unscale(float(np.sqrt(s.rss / s.N)), k)
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
        """Dimensions whose current lifetime is at least ``eps`` (Balog & Teh, 2015, Section
        5.2)."""
        return np.flatnonzero(self.lifetimes_ >= eps)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = ["float64"]
        return tags
