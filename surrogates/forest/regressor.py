"""Mondrian forest regression (Lakshminarayanan, Roy & Teh, 2016; Lakshminarayanan, 2016, PhD
thesis, chapter 6)."""

from __future__ import annotations

import math
import weakref

import numba
import numpy as np

from ._base import BaseMondrianForest, check_fitted
from ._regression_kernels import (MODE_BP_E, MODE_BP_F, MODE_BP_R, MODE_EMPIRICAL, N_BP,
                                  NODE_BLOCK, bp_tree_range, forest_moments_range,
                                  heuristic_hyperparameters,
                                  predict_forest_moments, predict_forest_moments_serial,
                                  predict_regression, predict_regression_serial)
from ._noise import bp_buffer, marginal_likelihood_hyperparameters, run_bp
from .._core.scaling import Y_LIMIT, target_exponent, unscale
from .._core.compile_ahead import array, start as start_compiling_ahead
from .._core.estimator import RegressorMixin
from .._core._tree_kernels import (ROOT, TASK_REGRESSION, X_LIMIT, box_floor_bits,
                                   extend_tree_range, restat_tree_range)
from .._core.tree import TargetsTooLarge, _SmallBatchKernel
from .._core.validation import check_choice, check_positive, check_target


#: batches of at least SERIAL_BELOW points are predicted on the thread pool, batches below
#: PARALLEL_FROM on one thread (below a few hundred points the pool costs more than it saves:
#: surrogates/README.md, section 'Implementation choices measured during development'); in between,
#: whichever kernel has recently been faster per point (the other is re-timed now and then, see
#: ``_SmallBatchKernel``).  Every batch is predicted node by node (each tree's nodes visited once
#: with all the queries of a block that reach them; the same numbers, bit for bit, as walking each
#: query down each tree).  On the thread pool a batch is cut into one block per thread, of at most
#: NODE_BLOCK queries.
SERIAL_BELOW = 2048
PARALLEL_FROM = 256

#: a batch whose coordinates sit on the floor (the smallest training value of their dimension:
#: the inactive coordinates of a conditional space) at least this often has its box distances
#: summed over the off-floor dimensions only (``forest_moments_range``; the same numbers)
FLOOR_SHARE = 0.25
_NO_BITS = (np.empty(0, np.uint64), np.empty((0, 0), np.uint64))

#: ``noise_var`` value that asks for the marginal-likelihood choice
NOISE_ML = "ml"


def _later_signatures() -> dict:
    """The argument types with which a regressor calls the kernels it needs after its first
    fit (the store's arrays are C-contiguous: int64 nodes, float64 boxes and statistics)."""
    i8, f8 = numba.types.int64, numba.types.float64
    I2, I3 = array(i8, 2), array(i8, 3)
    F1, F2, F3, F4 = (array(f8, d) for d in (1, 2, 3, 4))
    return {
        bp_tree_range: (i8, i8, I3, F3, F3, I2, F3, f8, f8, f8, f8, F1),
        forest_moments_range: (i8, i8, F2, I3, F3, F4, F3, F3, I2, i8, f8, f8, f8, F1, F1, i8,
                               array(numba.types.uint64, 1), array(numba.types.uint64, 2)),
        extend_tree_range: (i8, i8, i8, i8, F2, F1, I3, F3, F4, F3, I2, I2,
                            array(numba.types.uint64, 2), f8, f8, i8),
        restat_tree_range: (i8, i8, F1, I3, I2, F3, I2)}


def _check_noise_var(value):
    """``noise_var`` validated: None, ``"ml"`` or a positive finite number."""
    if value is None:
        return None
    if isinstance(value, str):
        if value != NOISE_ML:
            raise ValueError(f"noise_var must be a positive number, 'ml' or None, got "
                             f"{value!r}.")
        return value
    return check_positive(value, "noise_var")


#: each tree store's node bits, ``store -> (points, nbits)``, kept while its trees are unchanged
#: (the boxes only change where points are added); outside the forest, so that predicting leaves
#: the estimator's attributes as they were, and never pickled
_NODE_BITS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def floor_bits(store, Xs) -> tuple[np.ndarray, np.ndarray]:
    """``(xbits, nbits)`` for ``forest_moments_range``: bit ``d`` of ``xbits[i]`` where query
    ``i`` is off the floor in dimension ``d``, and of ``nbits[t, j]`` where node ``j``'s box
    leaves the floor out; empty arrays (every dimension summed) where that would not save
    work: more than 64 dimensions, or fewer than ``FLOOR_SHARE`` of the coordinates on the
    floor."""
    D = Xs.shape[1]
    if D > 64 or Xs.shape[0] == 0:
        return _NO_BITS
    floor = store.box[0, store.meta[0, ROOT], 0]
    off = Xs != floor
    if off.mean() > 1.0 - FLOOR_SHARE:
        return _NO_BITS
    packed = np.zeros((Xs.shape[0], 8), np.uint8)  # bit d of a row's 64: dimension d
    packed[:, :(D + 7) // 8] = np.packbits(off, axis=1, bitorder="little")
    xbits = packed.view("<u8").ravel().astype(np.uint64, copy=False)
    entry = _NODE_BITS.get(store)  # one read: another thread may replace it
    if entry is None or entry[0] != store.n_points:
        nbits = np.empty(store.inode.shape[:2], np.uint64)
        box_floor_bits(store.box, store.meta, np.ascontiguousarray(floor), nbits)
        entry = (store.n_points, nbits)
        _NODE_BITS[store] = entry
    return xbits, entry[1]


class _PredictBatchKernel(_SmallBatchKernel):
    """Serial or threaded forest-moments kernel for mid-sized prediction batches."""

    _warm = [False, False]


class MondrianForestRegressor(RegressorMixin, BaseMondrianForest):
    """Online Mondrian forest regressor with predictive uncertainty.

    Each tree is a Mondrian process partition grown only inside the bounding boxes of the
    data; a prediction averages analytically over all the ways a query could branch off the
    tree along its path (Lakshminarayanan, Roy & Teh, 2016, Section 3.3), so the predictive
    distribution is a mixture of Gaussians that reverts to the prior (mean ``mean(y)``, std
    about ``std(y)``) far from the data.

    Parameters
    ----------
    n_estimators : int, default=10
        Number of trees (10 in the flight-delay and Bayesian optimization experiments of
        Lakshminarayanan, Roy & Teh, 2016, Sections 5.2-5.3).
    lifetime : float, default=inf
        Mondrian lifetime (budget). The papers use ``inf`` and control depth by pausing.
    min_samples_split : int, default=10
        A block with fewer points is a paused leaf; it is re-sampled as soon as it reaches this
        many points with a non-degenerate box, in batch and online growth alike. The paper uses
        10 for regression and 2 for Bayesian optimization (Sections 3.2 and 5.3). Blocks whose
        points all coincide are always paused.
    posterior : {"empirical", "bp"}, default="empirical"
        ``"empirical"``: each node is summarised by the empirical mean and variance of its
        labels (the paper's fast approximation, supplement C; O(depth) online updates).
        ``"bp"``: exact Gaussian belief propagation under the hierarchical Gaussian prior with
        the closed-form hyper-parameter heuristic (Sections 3.1-3.2); the trees are never
        re-grown, messages are recomputed lazily before the next prediction after the data
        changed.  The posterior can be switched with ``set_params`` after fitting; the trees
        are shared.
    branch_off : {"E", "R", "F"} or None, default=None
        Moments of a branch-off mixture component in BP mode, which the papers describe only
        in words: ``"E"`` the exact posterior of a node inserted at the expected cut time (the
        only choice that reverts to the prior far from the data), ``"R"`` the authors'
        reference code's choice (the node's posterior plus the prior variance of the edge to
        the expected cut time, which tends to the noise variance far from the data), ``"F"``
        empirical node moments.  ``None`` means ``"E"`` for ``posterior="bp"`` and ``"F"`` for
        ``"empirical"`` (the only option there).
    K_cap : float, default=2000
        Noise heuristic: ``sigma_y^2 = gamma1 / K`` with ``K = min(K_cap, 2N)`` (2000 in the
        paper, supplement B; 500 in the authors' reference code).
    gamma2_factor : float, default=1
        ``gamma2 = D / (gamma2_factor * log2 N)``; BP only. Not the paper's 20 (Section 3.2)
        nor the authors' reference code's 2: with 20 the deep edges keep so much prior variance
        that branch-off components are nearly uninformative.  Factor 1 was chosen by RMSE
        and calibration on Friedman-1 and cpu_act.  Measured accuracy: surrogates/README.md,
        section 'Regression forest: the gamma2_factor default'.
    noise_var : float, "ml" or None, default=None
        Known observation-noise variance of the targets; replaces the ``K`` heuristic (with
        ``gamma1 = 2 (Var(y) - noise_var)``).  ``"ml"``: the variance that maximises the
        trees' summed log marginal likelihood of the training targets under the hierarchical
        Gaussian model (empirical Bayes, by belief propagation whatever the ``posterior``;
        searched over ``1e-4 .. 0.99 Var(y)`` after the data change).  The
        heuristic assumes nearly noise-free targets (noise std about ``std(y) / 32``); on
        noisy targets it is over-confident; ``"ml"`` is not, but it also counts as noise the
        variation that the label-independent cuts leave within leaves, so it can overestimate
        the noise and give under-confident intervals.  Measured on the flight delays:
        surrogates/README.md, section 'Regression forest: noise_var="ml" on the flight delays'.
    feature_bounds : array-like of shape (n_features, 2) or None, default=None
        Known ``(low, high)`` range of each feature, used to scale inputs to ``[0, 1]``.
        ``None``: the range of the data of the first ``fit``/``partial_fit`` (never re-scaled).
    feature_weights : {"mutual_info", "f_score"}, array-like of shape (n_features,) or None, \
            default=None
        Relevance weights that stretch each scaled feature to ``[0, w_d]`` (max weight 1), so
        that cuts and branch-off distances favour relevant features. Mondrian splits ignore the
        labels, so irrelevant features cost accuracy (Lakshminarayanan, Roy & Teh, 2016,
        Section 5.4); the authors' reference code's remedy multiplies each feature by its
        univariate F score (``"f_score"``); ``"mutual_info"`` uses scikit-learn's k-NN
        mutual-information estimate instead, which also sees non-monotone effects. Computed once
        from the first fit's data (at most 5,000 rows) and kept, like the scaling. ``None`` (the
        papers' setting) weighs all equally.
    random_state : int, SeedSequence, RandomState, Generator or None, default=None
        Seeds the trees' independent random streams.

    Attributes
    ----------
    n_features_in_ : int
    n_samples_seen_ : int
    feature_lower_, feature_scale_ : ndarray of shape (n_features,)
        The affine map ``(x - feature_lower_) / feature_scale_`` into the trees' space.
    feature_weights_ : ndarray of shape (n_features,)
        The weights in use (all ones by default).
    hyperparameters_ : dict
        ``mu_H``, ``gamma1``, ``gamma2``, ``noise_var`` in use (from the data seen so far).
    feature_names_in_ : ndarray of shape (n_features,)
        Column names of the data frame the forest was fitted on (only when it had string
        column names).  Later data frames must have the same columns in the same order
        (``ValueError`` otherwise); arrays are taken by position, with a warning.

    Notes
    -----
    ``n_estimators``, ``lifetime``, ``min_samples_split``, ``feature_bounds``,
    ``feature_weights`` and ``random_state`` shape the trees and the feature scaling: they are
    applied by ``fit`` (and by a first ``partial_fit``).  After ``set_params`` changes one of
    them, predictions still use the fitted forest, as in scikit-learn, and ``partial_fit``
    raises ``ValueError`` until ``fit`` is called.  ``posterior``, ``branch_off``, ``K_cap``,
    ``gamma2_factor`` and ``noise_var`` act at prediction time and may be changed at any time.

    Targets beyond about 2.6e120 in magnitude are divided internally by a power of two (exact)
    and predictions mapped back (variances beyond float64, of targets beyond about 1e154, are
    inf; standard deviations stay finite).  A feature whose range overflows float64 is taken
    divided by a power of two, ``feature_lower_`` and ``feature_scale_`` then describing the
    divided feature.  Inputs more than about 1e154 feature ranges outside the fitted range are
    refused by ``partial_fit`` and treated as that far away by predictions.

    Like every constant-leaf tree model it cannot extrapolate beyond ``[min y, max y]``, and
    label-independent splits make it sensitive to irrelevant features (Lakshminarayanan, Roy &
    Teh, 2016, Section 5.4).
    Numba uses all cores; set ``NUMBA_NUM_THREADS`` to limit it.
    """

    _task = TASK_REGRESSION

    def __init__(self, n_estimators=10, lifetime=np.inf, min_samples_split=10,
                 posterior="empirical", branch_off=None, K_cap=2000.0, gamma2_factor=1.0,
                 noise_var=None, feature_bounds=None, feature_weights=None, random_state=None):
        self.n_estimators = n_estimators
        self.lifetime = lifetime
        self.min_samples_split = min_samples_split
        self.posterior = posterior
        self.branch_off = branch_off
        self.K_cap = K_cap
        self.gamma2_factor = gamma2_factor
        self.noise_var = noise_var
        self.feature_bounds = feature_bounds
        self.feature_weights = feature_weights
        self.random_state = random_state

    # -- hooks ------------------------------------------------------------------------------
    def _n_stats(self):
        return 3

    def _check_params(self):
        super()._check_params()
        self._mode()
        check_positive(self.K_cap, "K_cap", allow_inf=True)
        check_positive(self.gamma2_factor, "gamma2_factor")
        _check_noise_var(self.noise_var)

    def _encode_target(self, y, n_samples, first):
        if not first and isinstance(y, np.ndarray) and y.dtype == np.float64 and y.ndim == 1 \
                and y.shape[0] == n_samples:
            return y  # online fast path: finiteness is checked by the store before any change
        return check_target(y, n_samples, "y")

    def _relevance(self, X, y, kind):
        from sklearn.feature_selection import f_regression, mutual_info_regression

        if kind == "f_score":
            return f_regression(X, y)[0]
        return mutual_info_regression(X, y, random_state=0)

    def compile_kernels_ahead(self):
        """Start compiling the kernels that predictions and online updates need, in a second
        process, where numba has not cached them yet (a fresh install; see
        :mod:`surrogates._core.compile_ahead`).  ``fit`` starts this itself; a caller that
        knows a fit will come can start it earlier, so that the compilation overlaps its own
        work.  Returns ``self``; changes nothing else."""
        start_compiling_ahead(*self._kernels_needed_later())  # (checks the posterior first)
        return self

    def _kernels_needed_later(self):
        # (the short re-count kernel, needed after refits of the targets, is compiled here
        # while waiting for the second process)
        sigs = _later_signatures()
        kernels = [forest_moments_range, extend_tree_range]
        if self._mode() != MODE_EMPIRICAL:
            kernels.insert(0, bp_tree_range)
        return [(k, sigs[k]) for k in kernels], [(restat_tree_range, sigs[restat_tree_range])]

    def _after_update(self):
        self._bp_key = None
        self._ml_key = None

    # -- target scaling (only targets beyond Y_LIMIT are rescaled, see _core.scaling) -----------
    def _fit_targets(self, y):
        k = target_exponent(y)
        self._y_exp = k
        return np.ldexp(y, -k) if k else y

    def _extend_store(self, X, y):
        k = self.__dict__.get("_y_exp", 0)
        s = self._store
        try:
            s.extend(X, y, self.feature_lower_, self.feature_scale_, X_LIMIT,
                     math.ldexp(1.0, -k), Y_LIMIT)
        except TargetsTooLarge:
            # targets far larger than any before (everything else was valid and nothing was
            # changed): divide all stored targets by a further power of two, exactly, recompute
            # the node statistics (the partitions do not depend on the targets), then insert
            k_new = max(k, target_exponent(y))
            s.set_targets(np.ldexp(s.y[:s.n_points], k - k_new))
            self._y_exp = k_new
            s.extend(X, y, self.feature_lower_, self.feature_scale_, X_LIMIT,
                     math.ldexp(1.0, -k_new), Y_LIMIT)

    def _unscale(self, values, power=1):
        """Targets' ``values`` (``power=2``: their squares) back in the user's units; a
        variance of targets beyond about 1e154 is inf there."""
        return unscale(values, power * self.__dict__.get("_y_exp", 0))

    def _mode(self) -> int:
        check_choice(self.posterior, "posterior", {"empirical", "bp"})
        if self.posterior == "empirical":
            if self.branch_off not in (None, "F"):
                raise ValueError(f"branch_off={self.branch_off!r} needs posterior='bp'; the "
                                 f"empirical posterior only has branch-off option 'F'.")
            return MODE_EMPIRICAL
        b = "E" if self.branch_off is None else self.branch_off
        check_choice(b, "branch_off", {"E", "R", "F"})
        return {"E": MODE_BP_E, "R": MODE_BP_R, "F": MODE_BP_F}[b]

    def __getstate__(self):
        state = super().__getstate__()
        state.pop("_bp", None)  # derived from the trees; recomputed on demand
        state["_bp_key"] = None
        state["_ml_key"] = None
        return state

    def refit_targets(self, y):
        """Replace the targets of all samples seen so far, keeping the trees' partitions.

        A Mondrian partition of regression data never depends on the targets (only on the
        inputs and the trees' random streams), so this gives exactly the forest that
        ``fit``/``partial_fit`` calls with the same inputs, order and ``random_state`` would
        have grown on the new targets.  Only the node statistics are recomputed:
        O(n_samples * depth) per tree, no tree is re-grown.  Used for output transforms that
        change with the data (e.g. log-scaled losses in Bayesian optimization).  Feature weights
        computed from the targets of the first fit (``feature_weights="mutual_info"``) are kept.

        Parameters
        ----------
        y : array-like of shape (n_samples_seen_,)
            The new targets, in the order the samples were given.
        """
        check_fitted(self)
        n = self._store.n_points
        yy = np.asarray(y) if not isinstance(y, (str, bytes)) else y
        if getattr(yy, "ndim", 0) == 1 and yy.shape[0] != n:
            raise ValueError(f"Input y has {yy.shape[0]} targets, but the forest has seen {n} "
                             f"samples.")
        yy = check_target(y, n, "y")
        k = target_exponent(yy)
        self._store.set_targets(np.ldexp(yy, -k) if k else yy)
        self._y_exp = k
        self._after_update()
        return self

    # -- hyper-parameters and messages ------------------------------------------------------
    def _hyper(self):
        """The hyper-parameters in the stored (possibly rescaled) target units."""
        s = self._store
        r = s.meta[0, ROOT]
        n, mean, m2 = s.stats[0, r]
        # prediction-time parameters may have been changed by set_params since the last fit
        check_positive(self.K_cap, "K_cap", allow_inf=True)
        check_positive(self.gamma2_factor, "gamma2_factor")
        noise_var = _check_noise_var(self.noise_var)
        if noise_var == NOISE_ML:
            # (K_cap plays no part once the noise variance is given, so changing it does not
            # repeat the search)
            key = (s.n_points, n, mean, m2, self.gamma2_factor)
            if getattr(self, "_ml_key", None) != key:
                # the search runs in the messages' own array (one copy at millions of nodes),
                # whose contents it leaves stale
                self._bp = bp_buffer(s, getattr(self, "_bp", None))
                self._bp_key = None
                self._ml_hyper = marginal_likelihood_hyperparameters(
                    s, self._bp, n, mean, m2 / n, s.n_features, self.K_cap, self.gamma2_factor)
                self._ml_key = key
            return self._ml_hyper
        if noise_var is not None:
            k = self.__dict__.get("_y_exp", 0)
            if k:
                noise_var = math.ldexp(noise_var, -2 * k)
        return heuristic_hyperparameters(n, mean, m2 / n, s.n_features, self.K_cap,
                                         self.gamma2_factor, noise_var)

    def log_marginal_likelihood(self) -> np.ndarray:
        """Log marginal likelihood of the training targets under each tree's hierarchical
        Gaussian model with the current hyper-parameters (a by-product of exact BP)."""
        check_fitted(self)
        if self._mode() == MODE_EMPIRICAL:
            raise ValueError("log_marginal_likelihood needs posterior='bp'.")
        self._prepare()
        k = self.__dict__.get("_y_exp", 0)
        # the density of targets divided by 2^k is 2^(k n) times that of the targets
        return self._log_ml - k * self._store.n_points * math.log(2.0)

    @property
    def hyperparameters_(self) -> dict:
        check_fitted(self)
        mu, g1, g2, s2 = self._hyper()
        return {"mu_H": self._unscale(mu), "gamma1": self._unscale(g1, 2), "gamma2": g2,
                "noise_var": self._unscale(s2, 2)}

    def _prepare(self):
        mode = self._mode()
        hyper = self._hyper()
        s = self._store
        if mode != MODE_EMPIRICAL:
            key = (s.n_points, hyper, s.inode.shape[1])
            if getattr(self, "_bp_key", None) != key or getattr(self, "_bp", None) is None:
                bp = bp_buffer(s, getattr(self, "_bp", None))
                mu, g1, g2, s2 = hyper
                logml = np.empty(s.n_trees)
                run_bp(s, bp, mu, g1, g2, s2, logml)
                self._bp = bp
                self._log_ml = logml
                self._bp_key = key
            bp = self._bp
        else:
            bp = np.zeros((1, 1, N_BP))
        return mode, hyper, bp

    def _run(self, Xs, y=None):
        mode, (mu, g1, g2, s2), bp = self._prepare()
        s = self._store
        n = Xs.shape[0]
        mean = np.empty((n, s.n_trees))
        var = np.empty((n, s.n_trees))
        logpdf = np.empty(n if y is not None else 0)
        yq = y if y is not None else np.empty(0)
        kernel = predict_regression if n >= SERIAL_BELOW else predict_regression_serial
        kernel(Xs, yq, y is not None, s.inode, s.fnode, s.box, s.stats, bp, s.meta, mode, s2, g1,
               g2, mean, var, logpdf)
        return mean, var, logpdf

    # -- prediction -------------------------------------------------------------------------
    def predict_per_tree(self, X):
        """Each tree's predictive mean and variance, two arrays ``(n_samples, n_estimators)``."""
        mean, var, _ = self._run(self._checked_query(X))
        return self._unscale(mean), self._unscale(var, 2)

    def predict(self, X, return_std: bool = False):
        """Predictive mean, and with ``return_std`` the predictive standard deviation.

        The forest predictive is the equal-weight mixture of the trees' mixtures; its moments
        are ``E = mean_t E_t`` and ``Var = mean_t (Var_t + (E_t - E)^2)``.
        """
        Xs = self._checked_query(X)
        mode, (mu, g1, g2, s2), bp = self._prepare()
        s = self._store
        n = Xs.shape[0]
        mean = np.empty(n)
        var = np.empty(n)
        args = (Xs, s.inode, s.fnode, s.box, s.stats, bp, s.meta, mode, s2, g1, g2, mean, var)
        bits = floor_bits(s, Xs)
        if n < PARALLEL_FROM:
            predict_forest_moments_serial(*args, NODE_BLOCK, *bits)
        else:
            block = min(NODE_BLOCK, -(-n // numba.get_num_threads()))  # a block per thread
            if n >= SERIAL_BELOW:
                predict_forest_moments(*args, block, *bits)
            else:  # mid-sized batches (acquisition local search): whichever has been faster
                _PredictBatchKernel.run(s, "_predict_batches", predict_forest_moments_serial,
                                        predict_forest_moments, n, *args, block, *bits)
        if not return_std:
            return self._unscale(mean)
        return self._unscale(mean), self._unscale(np.sqrt(var))

    def predictive_log_pdf(self, X, y) -> np.ndarray:
        """Log density of each ``y[i]`` under the full predictive mixture at ``X[i]``: finite
        wherever float64 can hold it, ``-inf`` for a target so far from the prediction (about
        1e154 predictive standard deviations) that its log density is below ``-1.8e308``."""
        Xs = self._checked_query(X)
        yy = check_target(y, Xs.shape[0], "y")
        k = self.__dict__.get("_y_exp", 0)
        if not k:
            return self._run(Xs, yy)[2]
        return self._run(Xs, np.ldexp(yy, -k))[2] - k * math.log(2.0)

    def nlpd(self, X, y) -> float:
        """Mean negative log predictive density of ``y`` given ``X`` (mixture density); inf
        when a log density is -inf."""
        lp = self.predictive_log_pdf(X, y)
        with np.errstate(over="ignore"):
            mean = lp.mean()
        if mean == -np.inf and np.isfinite(lp).all():
            # log densities near -1.8e308 overflow the plain sum, not their mean
            mean = np.sum(lp / lp.shape[0])
        return float(-mean)

    def predict_interval(self, X, coverage: float = 0.9):
        """Central Gaussian (moment-matched) prediction interval, ``(lower, upper)``.

        As in the calibration study of Lakshminarayanan, Roy & Teh (2016), Section 5.2 and
        Table 2: ``mean -/+ z * std`` with ``z`` the
        ``(1 + coverage) / 2`` standard-normal quantile.
        """
        if not (0.0 < float(coverage) < 1.0):
            raise ValueError(f"coverage must be in (0, 1), got {coverage}.")
        mean, std = self.predict(X, return_std=True)
        from scipy.special import ndtri

        z = ndtri(0.5 + 0.5 * float(coverage))
        return mean - z * std, mean + z * std
